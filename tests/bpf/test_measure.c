// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The server's receive-side measurement core (bpf/server_meas.h, issue 10)
 * through the real loader (server_prog_open, _slot_alloc, _meas_start,
 * _meas_close, _read_ibin, _read_streams): hand-built stamped frames run
 * through the loaded program with BPF_PROG_RUN, each sequence with its
 * exact expected counts, worked out by hand in the comments:
 * in-order, gaps (loss = next_exp - recv), duplicates, RFC 4737 reordering
 * (count and extent), the window's edges (too_old), wrap-around of seq24
 * and of ts32, late frames after a close, interval attribution by send
 * time, latency buckets against the kernel clock, clock_neg, RFC 3550
 * jitter, the stamp's places (64-byte IPv4/TCP with the IPv4 ID, IPv6,
 * UDP, no room) and a slot with ival 0 (nothing accounted).
 *
 * The frames come from tests/lib/wire.h (independent of the program's
 * parser); the stamp's byte layout is written out in tests/lib/stamped.c
 * from lib/stamp.h's description, not with its pack helper. Needs root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/measure.h"
#include "bpf/lib/latency.h"
#include "bpf/lib/stamp.h"
#include "bpf/server.skel.h"
#include "loader/server_prog.h"
#include "meas/latency.h"
#include "tests/lib/stamped.h"
#include "tests/lib/wire.h"

#define CTRL_PORT 5302
#define PORT_LO   63400
#define PORT_HI   63409
#define CLI4      "198.18.234.1"
#define SRV4      "198.18.234.2"
#define CLI6      "2001:2:0:234::1"
#define SRV6      "2001:2:0:234::2"
#define SEC_TICKS 250000000ull /* 1 s in 4-ns ticks */

/* ---- frames --------------------------------------------------------- */

struct sf {
	int v6, tcp;
	size_t payload;     /* L4 payload bytes */
	uint32_t stream, seq;
	uint64_t ts;        /* ticks; the low 32 bits go in */
};

/* The frame of f into buf (tests/lib/stamped.h): a stamp in the first 8
 * payload bytes, or (IPv4 with 6 or 7 payload bytes) bytes 0-1 in the IPv4
 * ID and 2-7 in the first 6 payload bytes; checksums recomputed. Its length. */
static size_t frame(const struct sf *f, uint8_t *buf, size_t cap)
{
	struct wf w = { .l4 = f->tcp ? IPPROTO_TCP : IPPROTO_UDP, .sport = 40000, .dport = PORT_LO,
			.flags = W_ACK | W_PSH, .seq = 1, .ack = 1, .payload = f->payload, .v6 = f->v6,
			.pad_to = 60 };
	uint8_t st[8];

	w.dmac[0] = 2; w.dmac[5] = 2;
	w.smac[0] = 2; w.smac[5] = 1;
	xt_addr(f->v6 ? CLI6 : CLI4, w.saddr);
	xt_addr(f->v6 ? SRV6 : SRV4, w.daddr);
	xt_stamp_bytes(f->stream, f->seq, f->ts, st);
	return xt_stamped_frame(&w, st, 0, buf, cap);
}

/* ---- the loader and the program -------------------------------------- */

struct env {
	struct server_prog *rp;
	struct server_bpf *s;
	int slot;
	uint64_t t0, ival;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct xp_addr cli, bind;
	char err[256];

	if (!e || server_prog_open(&e->rp, CTRL_PORT, false, err, sizeof(err))) {
		fprintf(stderr, "test_measure: %s\n", e ? err : "out of memory");
		return -1;
	}
	e->s = server_prog_skel(e->rp);
	if (xp_addr_parse(CLI4, &cli) || xp_addr_parse(CLI6, &bind))
		return -1;
	/* On lo, where BPF_PROG_RUN's frames arrive. */
	e->slot = server_prog_slot_alloc(e->rp, PORT_LO, PORT_HI, XP_PROTO_TCP | XP_PROTO_UDP, 0, XP_CLOSE_NONE,
					 (int)if_nametoindex("lo"), &cli, &bind, 1, err, sizeof(err));
	if (e->slot < 0) {
		fprintf(stderr, "test_measure: slot: %s\n", err);
		return -1;
	}
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	server_prog_close(e->rp);
	free(e);
	return 0;
}

static void start(struct env *e, uint64_t t0, uint64_t ival, uint32_t flags)
{
	struct xp_slot_meas m = { .t0 = t0, .ival = ival, .flags = flags };

	e->t0 = t0;
	e->ival = ival;
	assert_int_equal(server_prog_meas_start(e->rp, e->slot, &m), 0);
}

static int run(struct env *e, const struct sf *f)
{
	uint8_t buf[256];
	size_t len = frame(f, buf, sizeof(buf));
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len);

	if (bpf_prog_test_run_opts(bpf_program__fd(e->s->progs.xdp_server), &o))
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	return (int)o.retval;
}

/* A UDP/IPv4 frame of stream st, number seq, sent in interval i (a quarter
 * into it), unless ts says otherwise. */
static void udp(struct env *e, uint32_t st, uint32_t seq, uint64_t i)
{
	struct sf f = { .payload = 18, .stream = st, .seq = seq, .ts = e->t0 + i * e->ival + e->ival / 4 };

	assert_int_equal(run(e, &f), XDP_DROP);
}

static struct xp_lat_hist bin(struct env *e, uint64_t i)
{
	struct xp_lat_hist h;

	memset(&h, 0, sizeof(h));
	h.min = UINT64_MAX;
	assert_int_equal(server_prog_read_ibin(e->rp, e->slot, i, &h), 0);
	return h;
}

static struct xp_stream_figs stream(struct env *e, uint32_t st)
{
	struct xp_stream_figs f[XP_STAMP_MAX_STREAMS];
	int n = server_prog_read_streams(e->rp, e->slot, f, XP_STAMP_MAX_STREAMS);

	assert_true(n >= 0);
	for (int k = 0; k < n; k++)
		if (f[k].stream == st)
			return f[k];
	fail_msg("stream %u not seen", st);
	return f[0];
}

static struct xp_meas_stats mstats(struct env *e)
{
	struct xp_meas_stats m;

	assert_int_equal(server_prog_read_meas_stats(e->rp, e->slot, &m), 0);
	return m;
}

/* The whole of one interval's bin, field by field. */
static void expect_bin(struct env *e, uint64_t i, uint64_t recv, uint64_t dup, uint64_t reordered, uint64_t late)
{
	struct xp_lat_hist h = bin(e, i);

	if (h.recv != recv || h.dup != dup || h.reordered != reordered || h.late != late)
		fail_msg("interval %llu: recv %llu dup %llu reordered %llu late %llu, want %llu %llu %llu %llu",
			 (unsigned long long)i, (unsigned long long)h.recv, (unsigned long long)h.dup,
			 (unsigned long long)h.reordered, (unsigned long long)h.late, (unsigned long long)recv,
			 (unsigned long long)dup, (unsigned long long)reordered, (unsigned long long)late);
}

/* ---- sequences -------------------------------------------------------- */

/* 0..99 in order: 100 received, next_exp 100, nothing else. */
static void test_in_order(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	for (uint32_t k = 0; k < 100; k++)
		udp(e, 0, k, 0);
	struct xp_stream_figs f = stream(e, 0);
	assert_int_equal(f.recv, 100);
	assert_int_equal(f.next_exp, 100);
	assert_int_equal(f.dup + f.reordered + f.reorder_max + f.too_old, 0);
	expect_bin(e, 0, 100, 0, 0, 0);
	assert_int_equal(mstats(e).stamped, 100);
	/* No shared clock (no XP_MEAS_ONEWAY): nothing timed. */
	struct xp_lat_hist h = bin(e, 0);
	assert_int_equal(h.n + h.clock_neg, 0);
}

/*
 * 0..99 without 10..14 (a gap of 5), 20 sent three times (2 duplicates),
 * 31 before 30 (30 is reordered: below NextExp 32, extent 32 - 1 - 30 = 1):
 * recv 95, dup 2, reordered 1, extent 1, next_exp 100, so lost 5.
 */
static void test_gaps_duplicates_reordering(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	for (uint32_t k = 0; k < 100; k++) {
		if (k >= 10 && k < 15)
			continue;
		if (k == 30) {
			udp(e, 0, 31, 0);
			udp(e, 0, 30, 0);
			k++;
			continue;
		}
		udp(e, 0, k, 0);
		if (k == 20) {
			udp(e, 0, 20, 0);
			udp(e, 0, 20, 0);
		}
	}
	struct xp_stream_figs f = stream(e, 0);
	assert_int_equal(f.recv, 95);
	assert_int_equal(f.dup, 2);
	assert_int_equal(f.reordered, 1);
	assert_int_equal(f.reorder_max, 1);
	assert_int_equal(f.too_old, 0);
	assert_int_equal(f.next_exp - f.recv, 5);
	expect_bin(e, 0, 95, 2, 1, 0);
}

/*
 * Reordering extent and the window's edges. 0, then 2000 (a gap of 1999:
 * the window starts afresh), then:
 *   1000   NextExp 2001, 2001 - 1000 = 1001 <= 1024: reordered, extent 1000
 *   1000   again: duplicate
 *    977   2001 - 977 = 1024: the window's last number: reordered, extent 1023
 *    976   2001 - 976 = 1025: below the window: too_old (counted as received)
 *      0   too_old as well (not a duplicate: the window cannot tell)
 * recv 6 (0, 2000, 1000, 977, 976, 0), dup 1, reordered 2, too_old 2.
 */
static void test_window_edges(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	static const uint32_t seqs[] = { 0, 2000, 1000, 1000, 977, 976, 0 };
	for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
		udp(e, 5, seqs[k], 0);
	struct xp_stream_figs f = stream(e, 5);
	assert_int_equal(f.recv, 6);
	assert_int_equal(f.dup, 1);
	assert_int_equal(f.reordered, 2);
	assert_int_equal(f.reorder_max, 1023);
	assert_int_equal(f.too_old, 2);
	assert_int_equal(f.next_exp, 2001);
	expect_bin(e, 0, 6, 1, 2, 0);
}

/*
 * The window's bits are reused circularly: after 1000, 1010 (gap 1001..1009
 * forgotten) and 2030 (gap 1011..2029: positions 1011..1023 and 0..1005),
 * 2024 sits where 1000's bit was and must not look like a duplicate;
 * 1010's bit survives (2031 - 1010 = 1021, inside): a duplicate; 1008 was
 * never sent: reordered. recv 5, dup 1, reordered 2 (extents 6 and 1022).
 */
static void test_window_reuse(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	static const uint32_t seqs[] = { 1000, 1010, 2030, 2024, 1010, 1008 };
	for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++)
		udp(e, 1, seqs[k], 0);
	struct xp_stream_figs f = stream(e, 1);
	assert_int_equal(f.recv, 5);
	assert_int_equal(f.dup, 1);
	assert_int_equal(f.reordered, 2);
	assert_int_equal(f.reorder_max, 2030 - 1008);
	assert_int_equal(f.next_exp, 2031);
	assert_int_equal(f.next_exp - f.recv, 2031 - 5); /* what the sender's count settles */
}

/* seq24 wraps: 2^24 - 3 .. 2^24 + 1 are 16777213, 0xfffffe, 0xffffff, 0,
 * 1 on the wire: five in order, next_exp 2^24 + 2, no reordering; then
 * 0xffffff again is a duplicate, not a frame 16.7 M ahead. */
static void test_seq_wraps(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	for (uint32_t k = 0; k < 5; k++)
		udp(e, 2, (0xfffffdu + k) & 0xffffffu, 0);
	udp(e, 2, 0xffffff, 0);
	struct xp_stream_figs f = stream(e, 2);
	assert_int_equal(f.next_exp, (1ull << 24) + 2);
	assert_int_equal(f.recv, 5);
	assert_int_equal(f.dup, 1);
	assert_int_equal(f.reordered, 0);
	expect_bin(e, 0, 5, 1, 0, 0);
}

/* ts32 wraps: t0 just below a multiple of 2^32 ticks, intervals of 0x100
 * ticks; frames of intervals 1 and 2 carry ts32 values below t0's low
 * bits. The first frame is already past the wrap (extended from t0). */
static void test_ts_wraps(void **state)
{
	struct env *e = *state;

	start(e, 0x1ffffff00ull, 0x100, 0);
	udp(e, 3, 0, 1);  /* ts 0x200000040: low 32 bits 0x40 */
	udp(e, 3, 1, 0);  /* 0x1ffffff40 */
	udp(e, 3, 2, 2);  /* 0x200000140 */
	udp(e, 3, 3, 2);
	expect_bin(e, 0, 1, 0, 0, 0);
	expect_bin(e, 1, 1, 0, 0, 0);
	expect_bin(e, 2, 2, 0, 0, 0);
	/* A frame of a later stream whose first frame comes 8 s past t0 (as
	 * far as ts32 reaches either way of its reference). */
	start(e, 0x1ffffff00ull, SEC_TICKS, 0);
	udp(e, 4, 0, 8);
	struct xp_lat_hist h;
	memset(&h, 0, sizeof(h));
	assert_int_equal(server_prog_read_ibin(e->rp, e->slot, 0, &h), -ENOENT); /* 8 holds its place */
	assert_int_equal(server_prog_read_ibin(e->rp, e->slot, 8, &h), 0);
	assert_int_equal(h.recv, 1);
}

/* Frames are counted in the interval that sent them, whatever order they
 * arrive in: 2, 0, 3, 1, 0, 2 -> bins 0: 2, 1: 1, 2: 2, 3: 1. */
static void test_interval_attribution(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS / 10, 0);
	static const uint64_t iv[] = { 2, 0, 3, 1, 0, 2 };
	for (uint32_t k = 0; k < 6; k++)
		udp(e, 7, k, iv[k]);
	/* (In order in their stream: the send times alone say where.) */
	expect_bin(e, 0, 2, 0, 0, 0);
	expect_bin(e, 1, 1, 0, 0, 0);
	expect_bin(e, 2, 2, 0, 0, 0);
	expect_bin(e, 3, 1, 0, 0, 0);
	/* A frame of interval 4 takes 0's place in the ring: interval 0 can
	 * no longer be read whole. */
	udp(e, 7, 6, 4);
	struct xp_lat_hist h;
	memset(&h, 0, sizeof(h));
	assert_int_equal(server_prog_read_ibin(e->rp, e->slot, 0, &h), -ENOENT);
	expect_bin(e, 4, 1, 0, 0, 0);
}

/*
 * Late: after close(upto 2), a frame of interval 1 is not interval 1's; it
 * counts as late in the interval it arrives in. Without a shared clock
 * that is the oldest open one (2); with XP_MEAS_ONEWAY the receiver's clock
 * says: t0 = now - 2.5 s, so it arrives in interval 2 as well; t0 = now -
 * 3.5 s: in 3.
 */
static void test_late_after_close(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks() - 2 * SEC_TICKS - SEC_TICKS / 2, SEC_TICKS, 0);
	udp(e, 0, 0, 0);
	udp(e, 0, 2, 1);
	assert_int_equal(server_prog_meas_close(e->rp, e->slot, 2), 0);
	udp(e, 0, 1, 1);  /* late, and reordered in its stream */
	udp(e, 0, 3, 0);  /* late */
	udp(e, 0, 4, 2);  /* on time */
	expect_bin(e, 1, 1, 0, 0, 0);
	expect_bin(e, 2, 1, 0, 0, 2);
	/* Closing never reopens. */
	assert_int_equal(server_prog_meas_close(e->rp, e->slot, 1), 0);
	udp(e, 0, 5, 1);
	expect_bin(e, 2, 1, 0, 0, 3);

	start(e, xt_now_ticks() - 3 * SEC_TICKS - SEC_TICKS / 2, SEC_TICKS, XP_MEAS_ONEWAY);
	udp(e, 0, 0, 0);
	assert_int_equal(server_prog_meas_close(e->rp, e->slot, 2), 0);
	udp(e, 0, 1, 1);
	expect_bin(e, 3, 0, 0, 0, 1);
	expect_bin(e, 2, 0, 0, 0, 0);
	struct xp_stream_figs f = stream(e, 0);
	assert_int_equal(f.recv, 2); /* the stream still counts it */
}

/* ---- time ------------------------------------------------------------- */

/*
 * Latency against the kernel's clock: stamps ts = (a clock read just before
 * the run) - 1 ms. The program's rx is read after that and before the
 * read after the run, so every latency is in [1 ms, 1 ms + elapsed] and
 * every frame in the buckets between.
 */
static void test_latency_buckets(void **state)
{
	struct env *e = *state;
	const uint64_t off = 250000; /* 1 ms in ticks */
	uint64_t before, after;

	start(e, xt_now_ticks() - SEC_TICKS / 2, SEC_TICKS * 10, XP_MEAS_ONEWAY);
	before = xt_now_ticks();
	for (uint32_t k = 0; k < 50; k++) {
		struct sf f = { .payload = 18, .stream = 9, .seq = k, .ts = xt_now_ticks() - off };
		assert_int_equal(run(e, &f), XDP_DROP);
	}
	after = xt_now_ticks();
	struct xp_lat_hist h = bin(e, 0);
	assert_int_equal(h.recv, 50);
	assert_int_equal(h.n, 50);
	assert_int_equal(h.clock_neg, 0);
	assert_true(h.min >= off);
	assert_true(h.max <= off + (after - before));
	assert_true(h.sum >= 50 * off && h.sum <= 50 * (off + after - before));
	uint64_t in = 0;
	uint32_t lo = xp_lat_bucket((uint32_t)off), hi = xp_lat_bucket((uint32_t)(off + after - before));
	for (uint32_t b = 0; b < XP_LAT_BUCKETS; b++) {
		if (h.b[b] && (b < lo || b > hi))
			fail_msg("%u frames in bucket %u, outside %u..%u", h.b[b], b, lo, hi);
		in += h.b[b];
	}
	assert_int_equal(in, 50);
	/* The bucket width here (1/32 of the octave from 2^17 ticks) keeps a
	 * 1 ms latency within 1.6 % of its bucket's middle. */
	assert_true(xp_lat_bucket_lo(lo + 1) - xp_lat_bucket_lo(lo) <= off / 32 + 1);
	fprintf(stderr, "figures: latency 1 ms + run: min %.1f us max %.1f us, buckets %u..%u\n",
		h.min * 4 / 1e3, h.max * 4 / 1e3, lo, hi);
}

/* XP_MEAS_TAI: the receiver reads CLOCK_TAI. Stamps from CLOCK_TAI 1 ms
 * ago are 1 ms (+ the run) late; the same stamps judged by CLOCK_MONOTONIC
 * would be decades in the future (clock_neg), which is what a TAI sender
 * against a receiver left on MONOTONIC gives. */
static void test_tai_clock(void **state)
{
	struct env *e = *state;
	const uint64_t off = 250000;
	uint64_t before = xt_tai_ticks();

	start(e, before - SEC_TICKS / 2, SEC_TICKS * 10, XP_MEAS_ONEWAY | XP_MEAS_TAI);
	for (uint32_t k = 0; k < 10; k++) {
		struct sf f = { .payload = 18, .stream = 0, .seq = k, .ts = xt_tai_ticks() - off };
		assert_int_equal(run(e, &f), XDP_DROP);
	}
	uint64_t after = xt_tai_ticks();
	struct xp_lat_hist h = bin(e, 0);
	assert_int_equal(h.n, 10);
	assert_true(h.min >= off && h.max <= off + (after - before));

	start(e, xt_tai_ticks() - SEC_TICKS / 2, SEC_TICKS * 10, XP_MEAS_ONEWAY);
	struct sf f = { .payload = 18, .stream = 0, .seq = 0, .ts = xt_tai_ticks() - off };
	assert_int_equal(run(e, &f), XDP_DROP);
	h = bin(e, 0);
	assert_int_equal(h.recv, 1);
	assert_int_equal(h.n, 0);
	assert_int_equal(h.clock_neg, 1);
}

/* A send time after the receive time: the clocks disagree. Counted in
 * clock_neg, not timed; the frame still counts as received. */
static void test_clock_neg(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks() - SEC_TICKS / 2, SEC_TICKS * 10, XP_MEAS_ONEWAY);
	struct sf f = { .payload = 18, .stream = 0, .seq = 0, .ts = xt_now_ticks() + SEC_TICKS };
	assert_int_equal(run(e, &f), XDP_DROP);
	f.seq = 1;
	f.ts = xt_now_ticks() - 1000;
	assert_int_equal(run(e, &f), XDP_DROP);
	struct xp_lat_hist h = bin(e, 0);
	assert_int_equal(h.recv, 2);
	assert_int_equal(h.clock_neg, 1);
	assert_int_equal(h.n, 1);
	assert_true(h.min >= 1000 && h.min == h.max);
}

/*
 * RFC 3550 jitter: send times alternately 1 ms apart from a steady clock,
 * so the transit time changes by 1 ms (+ the few microseconds between
 * runs) every frame: |D| = 1 ms, and J after n frames is what J += (|D| -
 * J) / 16 gives from 0 (computed here in floating point): within 1 %.
 */
static void test_jitter(void **state)
{
	struct env *e = *state;
	const uint64_t ms = 250000;
	double j = 0;

	start(e, xt_now_ticks() - SEC_TICKS / 2, SEC_TICKS * 10, 0);
	for (uint32_t k = 0; k < 100; k++) {
		struct sf f = { .payload = 18, .stream = 11, .seq = k, .ts = xt_now_ticks() - (k & 1 ? ms : 0) };
		assert_int_equal(run(e, &f), XDP_DROP);
		if (k)
			j += (1e6 - j) / 16;
	}
	struct xp_stream_figs f = stream(e, 11);
	fprintf(stderr, "figures: jitter %.1f us, expected %.1f us\n", f.jitter_ns / 1e3, j / 1e3);
	assert_true(f.jitter_ns > j * 0.99 && f.jitter_ns < j * 1.01);
	/* In order, steady: no jitter beyond the runs' spacing. */
	start(e, xt_now_ticks() - SEC_TICKS / 2, SEC_TICKS * 10, 0);
	for (uint32_t k = 0; k < 20; k++)
		udp(e, 12, k, 0); /* one send time for all: transit grows by the spacing */
	f = stream(e, 12);
	assert_true(f.jitter_ns < 100e3);
}

/*
 * --rx-timestamp hw (XP_MEAS_HWTS | XP_MEAS_HWTS_ONLY) where no NIC time
 * comes: BPF_PROG_RUN runs the main program, which has none (only the
 * device-bound variant may ask the driver, and BPF_PROG_RUN cannot run
 * that one), the same answer as a driver that gives none for a frame.
 * Every frame is counted (sequence, loss, duplicates) and none is timed or
 * a jitter sample: no kernel time slips into a histogram the user asked to
 * be the NIC's. The same frames with XP_MEAS_HWTS alone (--rx-timestamp
 * auto) fall back to the kernel's clock: all timed.
 */
static void test_hwts_only_untimed(void **state)
{
	struct env *e = *state;
	const uint64_t ms = 250000;

	for (int only = 1; only >= 0; only--) {
		start(e, xt_now_ticks() - SEC_TICKS / 2, SEC_TICKS * 10,
		      XP_MEAS_ONEWAY | XP_MEAS_HWTS | (only ? XP_MEAS_HWTS_ONLY : 0));
		for (uint32_t k = 0; k < 30; k++) {
			if (k == 7)
				continue; /* one lost */
			struct sf f = { .payload = 18, .stream = 3, .seq = k, .ts = xt_now_ticks() - (k & 1 ? ms : 0) };
			assert_int_equal(run(e, &f), XDP_DROP);
		}
		struct sf d = { .payload = 18, .stream = 3, .seq = 29, .ts = xt_now_ticks() };
		assert_int_equal(run(e, &d), XDP_DROP); /* a duplicate */
		struct xp_lat_hist h = bin(e, 0);
		struct xp_stream_figs f = stream(e, 3);
		struct xp_meas_stats m = mstats(e);
		assert_int_equal(h.recv, 29);
		assert_int_equal(h.dup, 1);
		assert_int_equal(f.recv, 29);
		assert_int_equal(f.next_exp, 30);
		assert_int_equal(m.stamped, 30);
		assert_int_equal(m.hw_timed, 0);
		assert_int_equal(h.clock_neg, 0);
		if (only) {
			assert_int_equal(h.n, 0);
			assert_int_equal(f.jitter_ns, 0);
		} else {
			assert_int_equal(h.n, 29);
			assert_true(f.jitter_ns > 0);
		}
	}
}

/* ---- where the stamp is ----------------------------------------------- */

/* 64-byte IPv4/TCP (60 without FCS): 6 payload bytes, the stamp's first
 * two bytes (stream, seq's top byte) in the IPv4 ID. Stream 0xa5 and a seq
 * with a non-zero top byte prove both halves were read. 7 bytes as well;
 * 5 bytes has no room. */
static void test_ipv4_tcp_64(void **state)
{
	struct env *e = *state;
	uint8_t buf[256];

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	struct sf f = { .tcp = 1, .payload = 6, .stream = 0xa5, .seq = 0x123456, .ts = e->t0 + 10 };
	assert_int_equal(frame(&f, buf, sizeof(buf)), 60);
	assert_int_equal(run(e, &f), XDP_DROP);
	f.payload = 7;
	f.seq++;
	assert_int_equal(run(e, &f), XDP_DROP);
	f.payload = 5;
	f.seq++;
	assert_int_equal(run(e, &f), XDP_DROP);
	struct xp_stream_figs s = stream(e, 0xa5);
	assert_int_equal(s.next_exp, 0x123458);
	assert_int_equal(s.recv, 2);
	struct xp_meas_stats m = mstats(e);
	assert_int_equal(m.stamped, 2);
	assert_int_equal(m.nostamp, 1);
	assert_int_equal(m.hw_timed, 0);
	expect_bin(e, 0, 2, 0, 0, 0);
	/* The frames are still counted as before. */
	struct xp_counters c;
	assert_int_equal(server_prog_read(e->rp, e->slot, &c), 0);
	assert_int_equal(c.pkts, 3);
}

/* IPv6: UDP from the smallest frame up and TCP with 8 payload bytes carry
 * the stamp in the payload; IPv6/TCP with 6 has no room (no ID field). */
static void test_ipv6_and_udp(void **state)
{
	struct env *e = *state;

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	struct sf f = { .v6 = 1, .payload = 8, .stream = 200, .seq = 0, .ts = e->t0 + 10 };
	assert_int_equal(run(e, &f), XDP_DROP);
	f.tcp = 1;
	f.seq = 1;
	assert_int_equal(run(e, &f), XDP_DROP);
	f.payload = 6;
	f.seq = 2;
	assert_int_equal(run(e, &f), XDP_DROP);
	f = (struct sf){ .payload = 8, .stream = 201, .seq = 7, .ts = e->t0 + 10 }; /* IPv4 UDP, 8 bytes */
	assert_int_equal(run(e, &f), XDP_DROP);
	assert_int_equal(stream(e, 200).recv, 2);
	assert_int_equal(stream(e, 200).next_exp, 2);
	assert_int_equal(stream(e, 201).next_exp, 8);
	struct xp_meas_stats m = mstats(e);
	assert_int_equal(m.stamped, 3);
	assert_int_equal(m.nostamp, 1);
	struct xp_stream_figs all[XP_STAMP_MAX_STREAMS];
	assert_int_equal(server_prog_read_streams(e->rp, e->slot, all, XP_STAMP_MAX_STREAMS), 2);
	assert_int_equal(server_prog_read_streams(e->rp, e->slot, all, 1), 1);
}

/* ival 0: frames are counted as ever, nothing else. Also after a test that
 * measured: a new slot_alloc turns it off until meas_start. */
static void test_ival_zero(void **state)
{
	struct env *e = *state;
	struct xp_addr cli;
	char err[256];

	start(e, xt_now_ticks(), 0, XP_MEAS_ONEWAY);
	e->ival = SEC_TICKS; /* for udp()'s times only */
	for (uint32_t k = 0; k < 10; k++)
		udp(e, 0, k, 0);
	struct xp_meas_stats m = mstats(e);
	assert_int_equal(m.stamped + m.nostamp + m.hw_timed, 0);
	struct xp_stream_figs all[4];
	assert_int_equal(server_prog_read_streams(e->rp, e->slot, all, 4), 0);
	struct xp_lat_hist h = bin(e, 0);
	assert_int_equal(h.recv + h.dup + h.late + h.n, 0);
	assert_int_equal(server_prog_meas_close(e->rp, e->slot, 1), -ENOENT);
	struct xp_counters c;
	assert_int_equal(server_prog_read(e->rp, e->slot, &c), 0);
	assert_int_equal(c.pkts, 10);

	start(e, xt_now_ticks(), SEC_TICKS, 0);
	udp(e, 0, 0, 0);
	assert_int_equal(mstats(e).stamped, 1);
	server_prog_slot_free(e->rp, e->slot);
	assert_int_equal(xp_addr_parse(CLI4, &cli), 0);
	e->slot = server_prog_slot_alloc(e->rp, PORT_LO, PORT_HI, XP_PROTO_UDP, 0, XP_CLOSE_NONE,
					 (int)if_nametoindex("lo"), &cli, NULL, 0, err, sizeof(err));
	assert_true(e->slot >= 0);
	udp(e, 0, 1, 0);
	assert_int_equal(mstats(e).stamped, 1); /* the old count, not added to */
}

/* Bad arguments are refused, not crashed on. */
static void test_bad_arguments(void **state)
{
	struct env *e = *state;
	struct xp_slot_meas m = { .ival = 1 };
	struct xp_lat_hist h;

	assert_int_equal(server_prog_meas_start(e->rp, -1, &m), -EINVAL);
	assert_int_equal(server_prog_meas_start(e->rp, XP_MAX_SLOTS, &m), -EINVAL);
	assert_int_equal(server_prog_meas_start(e->rp, e->slot, NULL), -EINVAL);
	assert_int_equal(server_prog_meas_close(e->rp, XP_MAX_SLOTS, 1), -EINVAL);
	assert_int_equal(server_prog_read_ibin(e->rp, -1, 0, &h), -EINVAL);
	assert_int_equal(server_prog_read_streams(e->rp, 64, NULL, 0), -EINVAL);
	assert_int_equal(server_prog_read_streams(e->rp, e->slot, NULL, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_in_order),
		T(test_gaps_duplicates_reordering),
		T(test_window_edges),
		T(test_window_reuse),
		T(test_seq_wraps),
		T(test_ts_wraps),
		T(test_interval_attribution),
		T(test_late_after_close),
		T(test_latency_buckets),
		T(test_clock_neg),
		T(test_tai_clock),
		T(test_jitter),
		T(test_hwts_only_untimed),
		T(test_ipv4_tcp_64),
		T(test_ipv6_and_udp),
		T(test_ival_zero),
		T(test_bad_arguments),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
