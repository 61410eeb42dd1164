// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/generator.bpf.c, the XDP live-frames generator, and the live
 * engine (user/engine/live.c). Needs root.
 *
 * Frame tests: the generator is configured and loaded by xp_gen_load, the
 * engine's own loader, then run with plain BPF_PROG_RUN (no live frames),
 * which hands back each output frame. For every frame the test builds the
 * expected one independently (template, ports of xp_flow_ports, the TCP
 * sequence number, the stamp of bpf/lib/stamp.h with its send time read back
 * and checked against the clock read around the run, the IPv4 header
 * checksum (when the stamp uses the ID) and the L4 checksum summed from
 * scratch) and compares every byte; it also verifies the IPv4 header and L4
 * checksums of the output as a receiver would, with user/net/csum.h and with
 * a plain RFC 1071 sum written in the test. The send-interval bins are
 * checked after every frame against the intervals of the frames' own stamps. The input frame is garbage, not the template: live mode recycles
 * buffers with whatever they last held, so the program must rewrite all.
 *
 * The process is pinned to one CPU: the generator's state is per CPU.
 *
 * Live tests run in a child in a private, unnamed network namespace
 * (unshare) with a veth pair whose receiving end has GRO on; the namespace
 * and its links vanish with the child whatever happens. They are skipped
 * when the kernel refuses live frames.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "net/csum.h"
#include "engine/engine.h"
#include "net/frame.h"
#include "bpf/generator.h"
#include "loader/generator_prog.h"
#include "bpf/generator.skel.h"
#include "util/time.h"
#include "engine/tuples.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/ref_sum.h" /* RFC 1071 written out */

extern const struct xp_engine_ops xp_engine_live;

#define NFRAMES 40

/* ---------------------------------------------------------------------- */
/* Configurations                                                         */
/* ---------------------------------------------------------------------- */

static struct xp_engine_cfg make_cfg(int family, uint8_t proto, size_t size, uint16_t vlan,
				     uint16_t slo, uint16_t shi, uint16_t dlo, uint16_t dhi)
{
	struct xp_engine_cfg c;
	struct frame_spec *s = &c.frames.tmpl;

	memset(&c, 0, sizeof(c));
	c.sport_lo = slo;
	c.sport_hi = shi;
	c.dport_lo = dlo;
	c.dport_hi = dhi;
	c.frames.queues = 1;
	memcpy(s->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	s->vlan_id = vlan;
	s->src.family = s->dst.family = family;
	if (family == AF_INET) {
		inet_pton(AF_INET, "198.18.1.2", &s->src.v4);
		inet_pton(AF_INET, "198.19.1.2", &s->dst.v4);
	} else {
		inet_pton(AF_INET6, "2001:2:0:1::2", &s->src.v6);
		inet_pton(AF_INET6, "2001:2:0:2::2", &s->dst.v6);
	}
	s->l4_proto = proto;
	s->sport = slo;
	s->dport = dlo;
	s->tcp_flags = 0x18;
	s->seq = 0xfffffff0u; /* wraps within a few frames */
	s->ack = 1;
	s->frame_size = size;
	s->payload_fill = 0xa5;
	return c;
}

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

struct gen {
	struct generator_bpf *skel;
	struct xp_engine_cfg cfg;
	uint8_t tmpl[XP_GEN_MAX_LEN];
	struct frame_layout lay;
	unsigned nthreads, tid;
};

static void gen_run_same_call(struct gen *g, const uint8_t *in, uint32_t in_len, uint8_t *out);

static void gen_load(struct gen *g, const struct xp_engine_cfg *cfg, unsigned nthreads, unsigned tid)
{
	char err[256];
	int ncpus = libbpf_num_possible_cpus();
	unsigned *cpu_tid;

	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	g->nthreads = nthreads;
	g->tid = tid;
	if (xp_gen_load(cfg, nthreads, &g->skel, g->tmpl, &g->lay, err, sizeof(err)))
		fail_msg("xp_gen_load: %s", err);
	/* Every CPU runs "thread" tid: the test is pinned anyway. */
	cpu_tid = calloc((size_t)ncpus, sizeof(*cpu_tid));
	assert_non_null(cpu_tid);
	for (int c = 0; c < ncpus; c++)
		cpu_tid[c] = tid;
	assert_int_equal(xp_gen_init_state(g->skel, cpu_tid, (unsigned)ncpus), 0);
	free(cpu_tid);
}

/* One plain BPF_PROG_RUN of in (in_len bytes); the output frame (always
 * the template's length) into out. Each run is a call of its own, as the
 * live engine's are: its frame reads the clock for the stamp. */
static void gen_run_len(struct gen *g, const uint8_t *in, uint32_t in_len, uint8_t *out)
{
	xp_gen_new_call(g->skel, g->tid);
	gen_run_same_call(g, in, in_len, out);
}

/* The same without a new call: the frame belongs to the previous call's
 * current batch (see XP_GEN_BATCH). */
static void gen_run_same_call(struct gen *g, const uint8_t *in, uint32_t in_len, uint8_t *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = in,
		.data_size_in = in_len,
		.data_out = out,
		.data_size_out = XP_GEN_MAX_LEN,
		.repeat = 1);
	int r = bpf_prog_test_run_opts(bpf_program__fd(g->skel->progs.xdp_generator), &o);

	if (r)
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	assert_int_equal(o.retval, XDP_TX);
	assert_int_equal(o.data_size_out, g->lay.len);
}

static void gen_run(struct gen *g, const uint8_t *in, uint8_t *out)
{
	gen_run_len(g, in, g->lay.len, out);
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, (uint32_t)v); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

static size_t check_off(const struct frame_layout *l)
{
	return l->l4_off + (l->l4_proto == IPPROTO_TCP ? 16 : 6);
}

/* The L4 checksum of frame f summed from scratch (field zeroed first). */
static uint16_t l4_csum(const struct gen *g, uint8_t *f)
{
	const struct frame_spec *s = &g->cfg.frames.tmpl;
	size_t l4len = g->lay.payload_off - g->lay.l4_off + g->lay.payload_len;

	memset(f + check_off(&g->lay), 0, 2);
	if (s->src.family == AF_INET)
		return csum_l4_v4(&s->src.v4, &s->dst.v4, s->l4_proto, f + g->lay.l4_off, l4len);
	return csum_l4_v6(&s->src.v6, &s->dst.v6, s->l4_proto, f + g->lay.l4_off, l4len);
}

/* A receiver's checks: IPv4 header checksum and L4 checksum both verify,
 * by csum.h and by the test's own RFC 1071 sum (ref_sum). */
static void verify_checksums(const struct gen *g, const uint8_t *f)
{
	const struct frame_spec *s = &g->cfg.frames.tmpl;
	size_t l4len = g->lay.payload_off - g->lay.l4_off + g->lay.payload_len;
	const uint8_t *ip = f + g->lay.l3_off;
	uint32_t sum;

	if (s->src.family == AF_INET) {
		assert_int_equal(csum_ipv4_hdr(ip, 20), 0);
		assert_int_equal(ref_sum(ip, 20, NULL, 0, 0), 0xffff);
		sum = csum_pseudo_v4(&s->src.v4, &s->dst.v4, s->l4_proto, (uint32_t)l4len, 0);
		/* pseudo-header: addresses, protocol, L4 length */
		assert_int_equal(ref_sum(ip + 12, 8, f + g->lay.l4_off, l4len, s->l4_proto + (uint32_t)l4len), 0xffff);
	} else {
		sum = csum_pseudo_v6(&s->src.v6, &s->dst.v6, s->l4_proto, (uint32_t)l4len, 0);
		assert_int_equal(ref_sum(ip + 8, 32, f + g->lay.l4_off, l4len, s->l4_proto + (uint32_t)l4len), 0xffff);
	}
	assert_int_equal(csum_fold(csum_partial(f + g->lay.l4_off, l4len, sum)), 0);
	if (s->l4_proto == IPPROTO_UDP) /* 0 would mean "no checksum" */
		assert_int_not_equal(*(const uint16_t *)(f + check_off(&g->lay)), 0);
}

/* Stamp ticks of a clock now (the generator's: MONOTONIC, or TAI). */
static uint64_t now_ticks(bool tai)
{
	struct timespec ts;

	clock_gettime(tai ? CLOCK_TAI : CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

/* The send-interval bookkeeping a run is checked against. */
struct bins_check {
	uint64_t t0, ival;
	bool have;        /* cur is set */
	uint64_t cur, n;  /* the current interval and its frames so far */
	unsigned intervals; /* distinct intervals seen */
};

/* After a frame of interval k: the bins hold exactly the frames counted. */
static void bins_frame(struct gen *g, struct bins_check *b, uint64_t k)
{
	__u64 got = 0;

	if (b->have && k != b->cur) {
		assert_true(k > b->cur); /* one CPU: the clock only moves forward */
		/* The finished interval keeps its count until its bin is reused;
		 * intervals without frames read 0. */
		if (k - b->cur < XP_IBINS) {
			assert_int_equal(xp_gen_sent_in(g->skel, b->cur, &got), 0);
			assert_int_equal(got, b->n);
		}
		for (uint64_t m = b->cur + 1; m < k; m++) {
			if (k - m >= XP_IBINS)
				continue;
			assert_int_equal(xp_gen_sent_in(g->skel, m, &got), 0);
			assert_int_equal(got, 0);
		}
		b->n = 0;
	}
	if (!b->have || k != b->cur)
		b->intervals++;
	b->have = true;
	b->cur = k;
	b->n++;
	assert_int_equal(xp_gen_sent_in(g->skel, k, &got), 0);
	assert_int_equal(got, b->n);
	/* XP_IBINS intervals back: that bin now holds k. */
	if (k >= XP_IBINS)
		assert_int_equal(xp_gen_sent_in(g->skel, k - XP_IBINS, &got), -ENOENT);
}

/*
 * Run n frames (frame number first..first+n-1 of this CPU) and check each
 * against the expectation: the template with the frame's ports, TCP seq and
 * stamp (stream_base + tid, seq j, the send time read back and checked
 * against the clock read around the run), checksums recomputed from scratch.
 * With b, the frame is also checked into its send interval. Returns the
 * last stamp time seen (full ticks).
 */
static uint64_t run_and_check(struct gen *g, unsigned first, unsigned n, uint64_t last_ts, struct bins_check *b)
{
	const struct frame_layout *l = &g->lay;
	const struct xp_stamp_cfg *sc = &g->cfg.frames.stamp;
	uint32_t nd = (uint32_t)g->cfg.dport_hi - g->cfg.dport_lo + 1;
	uint32_t ns = (uint32_t)g->cfg.sport_hi - g->cfg.sport_lo + 1;
	int place = g->skel->rodata->config.stamp;
	uint8_t in[XP_GEN_MAX_LEN], out[XP_GEN_MAX_LEN], want[XP_GEN_MAX_LEN];

	for (unsigned j = first; j < first + n; j++) {
		uint64_t i = (uint64_t)j * g->nthreads + g->tid; /* flow number */
		uint16_t sport, dport;

		/* Whatever a recycled buffer holds: here, bytes of nothing. */
		for (unsigned b = 0; b < l->len; b++)
			in[b] = (uint8_t)(j * 31 + b * 7);
		uint64_t before = now_ticks(sc->tai);
		gen_run(g, in, out);
		uint64_t after = now_ticks(sc->tai);
		verify_checksums(g, out);

		memcpy(want, g->tmpl, l->len);
		xp_flow_ports(&g->cfg, i, &sport, &dport);
		put16(want + l->l4_off, sport);
		put16(want + l->l4_off + 2, dport);
		if (l->l4_proto == IPPROTO_TCP)
			put32(want + l->l4_off + 4, g->cfg.frames.tmpl.seq + (uint32_t)(i / nd / ns) * l->payload_len);
		if (place != XP_STAMP_NONE) {
			uint8_t st[8], *ip = want + l->l3_off;
			uint32_t ts32;

			/* The send time is the one thing we cannot predict: read it
			 * from where the stamp puts it, check it lies in the run. */
			if (place == XP_STAMP_AT_PAYLOAD)
				ts32 = get32(out + l->payload_off + 4);
			else
				ts32 = get32(out + l->payload_off + 2);
			uint64_t ts = xp_stamp_ts_extend(before, ts32);
			assert_true(ts >= before && ts <= after);
			assert_true(ts >= last_ts);
			last_ts = ts;
			put64(st, xp_stamp_pack(sc->stream_base + g->tid, j, ts));
			assert_int_equal(st[0], sc->stream_base + g->tid);
			assert_int_equal((uint32_t)st[1] << 16 | st[2] << 8 | st[3], j & XP_STAMP_SEQ_MASK);
			if (place == XP_STAMP_AT_PAYLOAD) {
				memcpy(want + l->payload_off, st, 8);
			} else {
				/* two bytes in the IPv4 ID, six in the payload; the IPv4
				 * header checksum recomputed from scratch */
				memcpy(ip + 4, st, 2);
				memcpy(want + l->payload_off, st + 2, 6);
				memset(ip + 10, 0, 2);
				put16(ip + 10, (uint16_t)~ref_sum(ip, 20, NULL, 0, 0));
			}
			if (b)
				bins_frame(g, b, ts < b->t0 ? 0 : (ts - b->t0) / b->ival);
		}
		uint16_t c = l4_csum(g, want);
		if (c == 0 && l->l4_proto == IPPROTO_UDP)
			c = 0xffff;
		memcpy(want + check_off(l), &c, 2);
		if (memcmp(want, out, l->len)) {
			for (unsigned b = 0; b < l->len; b++)
				if (want[b] != out[b])
					fail_msg("frame %u: byte %u is 0x%02x, expected 0x%02x "
						 "(l3 at %u, l4 at %u, payload at %u)", j, b, out[b], want[b],
						 l->l3_off, l->l4_off, l->payload_off);
		}
	}
	return last_ts;
}

/* Stamp settings of a case: ival in ticks (0: stamps off). */
struct stamp_opts {
	uint64_t ival;
	uint32_t stream_base;
	bool tai;
};

/* 10-us intervals: the frames of a case spread over many of them. */
#define TINY_IVAL (10000u >> XP_STAMP_TICK_SHIFT)

static void gen_case_opts(int family, uint8_t proto, size_t size, uint16_t vlan, uint16_t slo, uint16_t shi,
			  uint16_t dlo, uint16_t dhi, unsigned nthreads, unsigned tid, int want_place,
			  const struct stamp_opts *so)
{
	struct xp_engine_cfg c = make_cfg(family, proto, size, vlan, slo, shi, dlo, dhi);
	struct bins_check b = { 0 };
	struct gen g;
	__u64 got;

	c.frames.stamp.ival = so->ival;
	c.frames.stamp.stream_base = so->stream_base;
	c.frames.stamp.tai = so->tai;
	gen_load(&g, &c, nthreads, tid);
	assert_int_equal(g.skel->rodata->config.stamp, want_place);
	assert_int_equal(g.lay.len, size - 4);
	/* t0 set after load, as the client does just before start: 30 us
	 * ahead, so that the first frames fall before it (interval 0). */
	b.t0 = now_ticks(so->tai) + (30000u >> XP_STAMP_TICK_SHIFT);
	b.ival = so->ival;
	xp_gen_set_meas(g.skel, b.t0, b.ival);
	/* Batches with pauses between them: state carries over between runs,
	 * and the pauses skip intervals. */
	uint64_t ts = 0;
	for (unsigned k = 0; k < 4; k++) {
		ts = run_and_check(&g, k * NFRAMES / 4, NFRAMES / 4, ts, want_place ? &b : NULL);
		usleep(50);
	}
	assert_int_equal(xp_gen_sent(g.skel), NFRAMES);
	if (want_place == XP_STAMP_AT_IPID) {
		/* Past frame 65535 the seq's top byte (in the IPv4 ID) is no
		 * longer 0: 65536 frames in one run (plain BPF_PROG_RUN runs the
		 * program `repeat` times), then the next frame checked. */
		uint8_t out[XP_GEN_MAX_LEN];
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = g.tmpl, .data_size_in = g.lay.len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1u << 16);

		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(g.skel->progs.xdp_generator), &o), 0);
		run_and_check(&g, NFRAMES + (1u << 16), 1, ts, NULL);
		assert_int_equal(out[g.lay.l3_off + 5], 1); /* ID low byte: seq bits 16-23 of frame 65575 */
	}
	if (want_place) {
		print_message("%u frames over %u send intervals of %llu ticks\n", NFRAMES, b.intervals,
			      (unsigned long long)b.ival);
		assert_true(b.intervals >= 4);
	} else {
		assert_int_equal(xp_gen_sent_in(g.skel, 0, &got), -EOPNOTSUPP);
	}
	generator_bpf__destroy(g.skel);
}

/* Stream ids from 3: the IPv4 ID (stream, seq bits 16-23) is not 0. */
static void gen_case(int family, uint8_t proto, size_t size, uint16_t vlan, uint16_t slo, uint16_t shi,
		     uint16_t dlo, uint16_t dhi, unsigned nthreads, unsigned tid, int want_place)
{
	struct stamp_opts so = { .ival = TINY_IVAL, .stream_base = 3 };

	gen_case_opts(family, proto, size, vlan, slo, shi, dlo, dhi, nthreads, tid, want_place, &so);
}

/* ---------------------------------------------------------------------- */
/* Frame tests                                                            */
/* ---------------------------------------------------------------------- */

/* 64-byte IPv4/TCP: 6 payload bytes, so the stamp's first two bytes go
 * into the IPv4 ID (header checksum fixed). Small ranges (4 x 3 flows) so
 * ports wrap and each flow's seq moves on by 6. */
static void test_v4_tcp_64_ipid_stamp(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_TCP, 64, 0, 10000, 10002, 63000, 63003, 1, 0, XP_STAMP_AT_IPID);
}

static void test_v4_udp_64_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_UDP, 64, 0, 10000, 10002, 63000, 63003, 1, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_v4_tcp_128_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_TCP, 128, 0, 10000, 59999, 63000, 63015, 1, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_v4_udp_128_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_UDP, 128, 0, 10000, 59999, 63000, 63015, 1, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_v6_udp_128_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET6, IPPROTO_UDP, 128, 0, 10000, 10004, 63000, 63002, 1, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_v6_tcp_128_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET6, IPPROTO_TCP, 128, 0, 10000, 10001, 63000, 63000, 1, 0, XP_STAMP_AT_PAYLOAD);
}

/* IPv6/TCP: 86 bytes is the smallest with 8 payload bytes; 78 has none
 * and IPv6 no ID field: no stamp, the frame is the template's. */
static void test_v6_tcp_86_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET6, IPPROTO_TCP, 86, 0, 10000, 10001, 63000, 63003, 1, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_v6_tcp_78_no_stamp(void **state)
{
	(void)state;
	gen_case(AF_INET6, IPPROTO_TCP, 78, 0, 10000, 10001, 63000, 63003, 1, 0, XP_STAMP_NONE);
}

static void test_vlan_v4_tcp_128_stamped(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_TCP, 128, 100, 10000, 10002, 63000, 63004, 1, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_vlan_v4_udp_64(void **state)
{
	(void)state;
	/* 64 - 4 - 14 - 4 - 20 - 8 = 14 payload bytes: room for the stamp. */
	gen_case(AF_INET, IPPROTO_UDP, 64, 4094, 1, 1, 7, 9, 1, 0, XP_STAMP_AT_PAYLOAD);
}

/* VLAN-tagged 64-byte IPv4/TCP: 2 payload bytes, too few even with the ID. */
static void test_vlan_v4_tcp_64_no_stamp(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_TCP, 64, 100, 10000, 10002, 63000, 63003, 1, 0, XP_STAMP_NONE);
}

/* Payload exactly one stamp long (IPv4/TCP: 54 + 8 + 4 = 66). */
static void test_v4_tcp_stamp_exact_fit(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_TCP, 66, 0, 10000, 10001, 63000, 63001, 1, 0, XP_STAMP_AT_PAYLOAD);
}

/* Second of three threads: flows 1, 4, 7...; a range of 2 dports and one
 * sport, so indexes wrap by more than one range per frame. Stream ids
 * start at 5: this thread stamps stream 6. */
static void test_thread_stride(void **state)
{
	struct stamp_opts so = { .ival = TINY_IVAL, .stream_base = 5 };

	(void)state;
	gen_case_opts(AF_INET, IPPROTO_TCP, 128, 0, 20000, 20000, 63000, 63001, 3, 1, XP_STAMP_AT_PAYLOAD, &so);
}

/* 1518-byte frames (the largest on a 1500 MTU) work the same way. */
static void test_v4_udp_1518(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_UDP, 1518, 0, 10000, 59999, 63000, 63015, 2, 0, XP_STAMP_AT_PAYLOAD);
}

static void test_v4_tcp_1518(void **state)
{
	(void)state;
	gen_case(AF_INET, IPPROTO_TCP, 1518, 0, 10000, 59999, 63000, 63015, 1, 0, XP_STAMP_AT_PAYLOAD);
}

/* CLOCK_TAI (--clock tai: hosts synchronised by PTP): the stamp's time is
 * checked against clock_gettime(CLOCK_TAI) around each run. */
static void test_v4_tcp_64_tai(void **state)
{
	struct stamp_opts so = { .ival = TINY_IVAL, .stream_base = 250, .tai = true };

	(void)state;
	gen_case_opts(AF_INET, IPPROTO_TCP, 64, 0, 10000, 10002, 63000, 63003, 1, 0, XP_STAMP_AT_IPID, &so);
}

/*
 * One clock read per kernel batch: the first frame of a call reads the
 * clock, the next XP_GEN_BATCH - 1 frames of the call carry the same send
 * time, frame XP_GEN_BATCH of the call reads it again. (Live mode sends a
 * batch's frames together after running the program on all of them.)
 */
static void test_batch_send_time(void **state)
{
	struct xp_engine_cfg c = make_cfg(AF_INET, IPPROTO_UDP, 128, 0, 10000, 10002, 63000, 63003);
	uint8_t out[XP_GEN_MAX_LEN];
	struct gen g;
	uint32_t first = 0;

	(void)state;
	c.frames.stamp.ival = TINY_IVAL;
	gen_load(&g, &c, 1, 0);
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned k = 0; k <= XP_GEN_BATCH; k++) {
			if (k == 0)
				gen_run(&g, g.tmpl, out); /* a new call */
			else
				gen_run_same_call(&g, g.tmpl, g.lay.len, out);
			uint32_t ts = get32(out + g.lay.payload_off + 4);
			if (k == 0)
				first = ts;
			else if (k < XP_GEN_BATCH)
				assert_int_equal(ts, first); /* same batch, same time */
			else
				assert_true((int32_t)(ts - first) > 0); /* the next batch reads the clock */
			usleep(k == 0 ? 20 : 0); /* 20 us: 5000 ticks the batch's frames must not show */
		}
	}
	generator_bpf__destroy(g.skel);
}

/* ival 0 (the test asked for no stamps, the bench's "stamps off"): the
 * frames are the template's with ports and seq only, no bins. */
static void test_stamps_off(void **state)
{
	struct stamp_opts so = { 0 };

	(void)state;
	gen_case_opts(AF_INET, IPPROTO_UDP, 128, 0, 10000, 10002, 63000, 63003, 1, 0, XP_STAMP_NONE, &so);
}

/* Frames the program cannot take: one line naming the way out. */
static void test_too_large_refused(void **state)
{
	struct xp_engine_cfg c = make_cfg(AF_INET, IPPROTO_TCP, XP_GEN_MAX_LEN + 4 + 1, 0, 1, 1, 2, 2);
	struct generator_bpf *skel = NULL;
	struct frame_layout lay;
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	char err[256] = "";

	(void)state;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "--engine xsk"));
	assert_null(strchr(err, '\n'));
	/* The largest that fits loads. */
	c = make_cfg(AF_INET, IPPROTO_TCP, XP_GEN_MAX_LEN + 4, 0, 1, 1, 2, 2);
	assert_int_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	generator_bpf__destroy(skel);
}

/* ---------------------------------------------------------------------- */
/* SYN mode (connection tests)                                            */
/* ---------------------------------------------------------------------- */

/* The XDP connection engine's SYN template (as the client's
 * build_syn_template), with nbind source addresses. */
static struct xp_engine_cfg make_syn_cfg(int family, uint16_t vlan, unsigned nbind, uint16_t slo, uint16_t shi,
					 uint16_t dlo, uint16_t dhi)
{
	struct xp_engine_cfg c = make_cfg(family, IPPROTO_TCP, 64, vlan, slo, shi, dlo, dhi);
	struct frame_spec *s = &c.frames.tmpl;

	c.kind = XP_TEST_CONNECT;
	s->tcp_flags = 0x02;
	s->ack = 0;
	s->seq = 0;
	s->tcp_syn_options = true;
	s->no_payload = true;
	s->window = 64240;
	s->frame_size = frame_min_size(s);
	c.nbind = nbind;
	for (unsigned i = 0; i < nbind; i++) {
		char a[64];

		c.bind[i].family = family;
		if (family == AF_INET) {
			snprintf(a, sizeof(a), "198.18.1.%u", 10 + i);
			inet_pton(AF_INET, a, &c.bind[i].v4);
		} else {
			snprintf(a, sizeof(a), "2001:2:0:1::%x", 0x10 + i);
			inet_pton(AF_INET6, a, &c.bind[i].v6);
		}
	}
	return c;
}

/* splitmix64's finaliser, written out again: the ISN both engines give k. */
static uint32_t want_isn(uint64_t seed, uint64_t k)
{
	uint64_t z = seed + (k + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

/* A receiver's checks on a SYN, with the addresses the frame carries. */
static void verify_syn_checksums(const struct gen *g, const uint8_t *f)
{
	const struct frame_layout *l = &g->lay;
	size_t l4len = (size_t)l->payload_off - l->l4_off;
	uint32_t sum;

	assert_int_equal(l->payload_len, 0);
	if (g->cfg.frames.tmpl.src.family == AF_INET) {
		struct in_addr sa, da;

		assert_int_equal(csum_ipv4_hdr(f + l->l3_off, 20), 0);
		memcpy(&sa, f + l->l3_off + 12, 4);
		memcpy(&da, f + l->l3_off + 16, 4);
		sum = csum_pseudo_v4(&sa, &da, IPPROTO_TCP, (uint32_t)l4len, 0);
	} else {
		struct in6_addr sa, da;

		memcpy(&sa, f + l->l3_off + 8, 16);
		memcpy(&da, f + l->l3_off + 24, 16);
		sum = csum_pseudo_v6(&sa, &da, IPPROTO_TCP, (uint32_t)l4len, 0);
	}
	assert_int_equal(csum_fold(csum_partial(f + l->l4_off, l4len, sum)), 0);
}

/*
 * n SYNs of thread tid of nthreads, run from garbage input like the stream
 * frames, each compared byte for byte with the SYN of its connection
 * k = j * nthreads + tid built independently: the template rewritten by
 * frame_set_saddr/ports/seq (user/net/frame.h) with the tuple of k
 * (t = k mod space, address t mod nbind, ports xp_flow_ports(t / nbind))
 * and ISN splitmix64(seed, k). The AF_XDP engine's rewrite
 * (xp_tuple_write) must give the same bytes: both engines agree.
 */
static void syn_case(int family, uint16_t vlan, unsigned nbind, uint16_t slo, uint16_t shi, uint16_t dlo,
		     uint16_t dhi, unsigned nthreads, unsigned tid, unsigned n)
{
	struct xp_engine_cfg c = make_syn_cfg(family, vlan, nbind, slo, shi, dlo, dhi);
	struct gen g;
	struct xp_tuples m;
	char err[256];
	uint8_t in[XP_GEN_MAX_LEN], out[XP_GEN_MAX_LEN], want[XP_GEN_MAX_LEN], x[XP_GEN_MAX_LEN];
	unsigned naddr = nbind ? nbind : 1;
	uint64_t space = (uint64_t)naddr * (shi - slo + 1u) * (dhi - dlo + 1u);

	gen_load(&g, &c, nthreads, tid);
	const struct frame_layout *l = &g.lay;
	uint64_t seed = g.skel->rodata->config.seed;
	assert_int_equal(g.skel->rodata->config.syn_mode, 1);
	assert_int_equal(g.skel->rodata->config.stamp, XP_STAMP_NONE);
	assert_int_equal(g.skel->rodata->config.conn_space, space);
	assert_int_equal(l->len, frame_min_size(&c.frames.tmpl) - 4);
	assert_int_equal(xp_tuples_init(&m, &g.cfg, seed, err, sizeof(err)), 0);

	for (unsigned j = 0; j < n; j++) {
		uint64_t k = (uint64_t)j * nthreads + tid, t = k % space;
		uint16_t sport, dport;

		/* The engine hands in one byte more than the SYN (see
		 * generator.bpf.c: the program trims it); shorter and exact inputs
		 * come out right too. */
		uint32_t in_len = l->len + (j % 3 == 0 ? 1 : j % 3 == 1 ? 0 : -10u);
		for (unsigned b = 0; b < in_len; b++)
			in[b] = (uint8_t)(j * 13 + b * 5 + 1);
		gen_run_len(&g, in, in_len, out);
		verify_syn_checksums(&g, out);

		memcpy(want, g.tmpl, l->len);
		xp_flow_ports(&g.cfg, t / naddr, &sport, &dport);
		frame_set_ports(want, l, sport, dport);
		if (nbind)
			assert_int_equal(frame_set_saddr(want, l, &g.cfg.bind[t % naddr]), 0);
		frame_set_seq(want, l, want_isn(seed, k));

		memcpy(x, g.tmpl, l->len);
		xp_tuple_write(&m, x, l, t, xp_tuple_isn(&m, k));
		assert_memory_equal(x, want, l->len);

		if (memcmp(want, out, l->len)) {
			for (unsigned b = 0; b < l->len; b++)
				if (want[b] != out[b])
					fail_msg("SYN %u (k %llu): byte %u is 0x%02x, expected 0x%02x (l3 at %u, l4 at %u)",
						 j, (unsigned long long)k, b, out[b], want[b], l->l3_off, l->l4_off);
		}
	}
	assert_int_equal(xp_gen_sent(g.skel), n);
	generator_bpf__destroy(g.skel);
}

/* 2 addresses x 3 sports x 4 dports = 24 tuples: 60 SYNs wrap twice and
 * more, each round with new ISNs. */
static void test_syn_v4_2bind(void **state)
{
	(void)state;
	syn_case(AF_INET, 0, 2, 10000, 10002, 63000, 63003, 1, 0, 60);
}

static void test_syn_v6_2bind(void **state)
{
	(void)state;
	syn_case(AF_INET6, 0, 2, 10000, 10002, 63000, 63003, 1, 0, 60);
}

/* Second of two threads (k = 1, 3, 5...), odd space, VLAN tag. */
static void test_syn_v4_2bind_thread_vlan(void **state)
{
	(void)state;
	syn_case(AF_INET, 100, 2, 20000, 20002, 63000, 63002, 2, 1, 60);
}

static void test_syn_v6_2bind_thread(void **state)
{
	(void)state;
	syn_case(AF_INET6, 0, 2, 20000, 20001, 63000, 63002, 2, 1, 40);
}

/* No --bind: the template's address, only ports and ISN change. One
 * address: always bind[0]. Wide ranges (the client's defaults). */
static void test_syn_v4_no_bind(void **state)
{
	(void)state;
	syn_case(AF_INET, 0, 0, 10000, 59999, 63000, 63015, 1, 0, 40);
}

static void test_syn_v6_one_bind(void **state)
{
	(void)state;
	syn_case(AF_INET6, 0, 1, 10000, 59999, 63000, 63015, 1, 0, 40);
}

/* Hold tests stay on AF_XDP; a non-TCP template is refused like there. */
static void test_syn_refusals(void **state)
{
	struct xp_engine_cfg c = make_syn_cfg(AF_INET, 0, 2, 1, 1, 2, 2);
	struct generator_bpf *skel = NULL;
	struct frame_layout lay;
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	char err[256] = "";

	(void)state;
	c.kind = XP_TEST_HOLD;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "--syn-engine xsk"));
	assert_null(strchr(err, '\n'));
	c.kind = XP_TEST_CONNECT;
	c.bind[1].family = AF_INET6;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	c = make_syn_cfg(AF_INET, 0, 0, 1, 1, 2, 2);
	c.frames.tmpl.l4_proto = IPPROTO_UDP;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
}

/* ---------------------------------------------------------------------- */
/* Live frames, in a private namespace                                    */
/* ---------------------------------------------------------------------- */

#define LIVE_A "xplv-ta"
#define LIVE_B "xplv-tb"

static int link_info(const char *ifname, uint64_t *rx, uint8_t *mac)
{
	struct ifaddrs *ifa, *i;
	int r = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET || strcmp(i->ifa_name, ifname))
			continue;
		if (rx && i->ifa_data)
			*rx = ((struct rtnl_link_stats *)i->ifa_data)->rx_packets;
		if (mac)
			memcpy(mac, ((struct sockaddr_ll *)i->ifa_addr)->sll_addr, 6);
		r = 0;
	}
	freeifaddrs(ifa);
	return r;
}

/* Wait (up to 1 s) until B's rx_packets reaches want; returns the count. */
static uint64_t rx_settle(uint64_t base, uint64_t want)
{
	uint64_t rx = 0;

	for (int k = 0; k < 100; k++) {
		if (link_info(LIVE_B, &rx, NULL))
			return 0;
		if ((uint32_t)(rx - base) >= want)
			break;
		usleep(10000);
	}
	return (uint32_t)(rx - base);
}

/* Exit codes of the child. SKIP only where the kernel lacks live frames
 * (EOPNOTSUPP/ENOTSUPP); missing privileges, tools or EINVAL fail. */
#define CHILD_OK   0
#define CHILD_SKIP 77

static int child_live(int engine)
{
	struct xp_engine_cfg c = make_cfg(AF_INET, IPPROTO_UDP, 128, 0, 10000, 10099, 63000, 63015);
	char err[256];
	uint64_t rx0;

	if (unshare(CLONE_NEWNET)) {
		printf("live: unshare(CLONE_NEWNET): %s (run as root)\n", strerror(errno));
		return 1;
	}
	/* No IPv6: its link-up chatter (DAD, router and MLD solicitations)
	 * would land in the peer's rx_packets beside our frames. */
	if (xp_netns("add", "--no-ipv6", "-") || xp_netns("pair", "-", LIVE_A, "-", LIVE_B) ||
	    xp_netns("gro", "-", LIVE_B)) {
		printf("live: cannot make a veth pair with GRO (ip, ethtool: run scripts/deps.sh)\n");
		return 1;
	}
	c.ifindex = (int)if_nametoindex(LIVE_A);
	snprintf(c.ifname, sizeof(c.ifname), LIVE_A);
	if (link_info(LIVE_B, &rx0, c.frames.tmpl.dst_mac) || link_info(LIVE_A, NULL, c.frames.tmpl.src_mac)) {
		printf("live: veth pair not found\n");
		return 1;
	}

	if (!engine) {
		/* One call of 10000 frames straight through the generator. */
		struct generator_bpf *skel;
		struct frame_layout lay;
		static uint8_t tmpl[XP_GEN_MAX_LEN];
		unsigned tid0[1] = { 0 };

		if (xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err))) {
			printf("live: %s\n", err);
			return 1;
		}
		xp_gen_init_state(skel, tid0, 1);
		struct xdp_md md = { .data_end = lay.len, .ingress_ifindex = (__u32)c.ifindex };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = tmpl, .data_size_in = lay.len, .ctx_in = &md,
			    .ctx_size_in = sizeof(md), .repeat = 10000, .batch_size = 64,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_generator), &o)) {
			int e = errno;
			printf("live: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: %s\n", strerror(e));
			if (e == EOPNOTSUPP || e == 524) {
				printf("live: kernel lacks BPF_F_TEST_XDP_LIVE_FRAMES\n");
				return CHILD_SKIP;
			}
			return 1;
		}
		uint64_t got = rx_settle(rx0, 10000), sent = xp_gen_sent(skel);
		generator_bpf__destroy(skel);
		printf("live: sent %llu, peer received %llu\n", (unsigned long long)sent,
		       (unsigned long long)got);
		return sent == 10000 && got == 10000 ? CHILD_OK : 1;
	}

	/* The engine: 20 kpps for 0.5 s; the peer gets exactly what it sent.
	 * Stamped, in 250-ms send intervals from t0 set after create (as the
	 * client does): the intervals' sent_in add up to what it sent. */
	struct xp_engine *e;
	struct xp_engine_stats st;
	c.pps = 20000;
	c.max_seconds = 5;
	c.frames.stamp.ival = 250000000ull >> XP_STAMP_TICK_SHIFT;
	if (xp_engine_live.create(&c, &e, err, sizeof(err))) {
		printf("live engine: %s\n", err);
		return 1;
	}
	uint64_t tk0 = now_ticks(false);
	xp_engine_live.set_t0(e, tk0);
	double t0 = xp_now();
	if (xp_engine_live.start(e, err, sizeof(err))) {
		printf("live engine: %s\n", err);
		xp_engine_live.destroy(e);
		return 1;
	}
	/* Until 7500 frames are out (a count, not a 0.5-s sleep whose yield
	 * depends on the load; 10 s is a hang deadline). */
	for (double end = t0 + 10; xp_now() < end; xp_sleep(0.005)) {
		xp_engine_live.read(e, &st);
		if (st.tx.pkts >= 7500)
			break;
	}
	xp_engine_live.stop(e);
	double secs = xp_now() - t0;
	uint64_t nival = ((now_ticks(false) - tk0) / c.frames.stamp.ival) + 1, in_ivals = 0;
	xp_engine_live.read(e, &st);
	for (uint64_t k = 0; k < nival; k++) {
		uint64_t n = 0;
		int r = xp_engine_live.sent_in(e, k, &n);
		printf("live engine: interval %llu sent_in %llu (%d)\n", (unsigned long long)k, (unsigned long long)n, r);
		if (r) {
			printf("live engine: sent_in(%llu): %s\n", (unsigned long long)k, strerror(-r));
			if (nival <= XP_IBINS)
				return 1;
		}
		in_ivals += n;
	}
	xp_engine_live.destroy(e);
	if (nival <= XP_IBINS && in_ivals != st.tx.pkts) {
		printf("live engine: the intervals hold %llu frames, it sent %llu\n", (unsigned long long)in_ivals,
		       (unsigned long long)st.tx.pkts);
		return 1;
	}
	uint64_t got = rx_settle(rx0, st.tx.pkts);
	printf("live engine: sent %llu in %.3f s at 20 kpps (mode %s), peer received %llu\n",
	       (unsigned long long)st.tx.pkts, secs, st.mode, (unsigned long long)got);
	if (got != st.tx.pkts || st.tx.errors || strcmp(st.mode, "live"))
		return 1;
	/* Never more than due over the engine's lifetime (plus the first
	 * 100 us slice, sent at once): a bound load cannot break. */
	return st.tx.pkts >= 7500 && st.tx.pkts <= 20000 * secs + 2 ? CHILD_OK : 1;
}

static void run_child(int engine)
{
	fflush(stdout);
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = child_live(engine);
		fflush(stdout);
		_exit(rc);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == CHILD_SKIP)
		skip();
	assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

static void test_live_10000_frames(void **state)
{
	(void)state;
	run_child(0);
}

static void test_live_engine_paced(void **state)
{
	(void)state;
	run_child(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_tcp_64_ipid_stamp),
		cmocka_unit_test(test_v4_udp_64_stamped),
		cmocka_unit_test(test_v4_tcp_128_stamped),
		cmocka_unit_test(test_v4_udp_128_stamped),
		cmocka_unit_test(test_v6_udp_128_stamped),
		cmocka_unit_test(test_v6_tcp_128_stamped),
		cmocka_unit_test(test_v6_tcp_86_stamped),
		cmocka_unit_test(test_v6_tcp_78_no_stamp),
		cmocka_unit_test(test_vlan_v4_tcp_128_stamped),
		cmocka_unit_test(test_vlan_v4_udp_64),
		cmocka_unit_test(test_vlan_v4_tcp_64_no_stamp),
		cmocka_unit_test(test_v4_tcp_stamp_exact_fit),
		cmocka_unit_test(test_thread_stride),
		cmocka_unit_test(test_v4_udp_1518),
		cmocka_unit_test(test_v4_tcp_1518),
		cmocka_unit_test(test_v4_tcp_64_tai),
		cmocka_unit_test(test_stamps_off),
		cmocka_unit_test(test_batch_send_time),
		cmocka_unit_test(test_too_large_refused),
		cmocka_unit_test(test_syn_v4_2bind),
		cmocka_unit_test(test_syn_v6_2bind),
		cmocka_unit_test(test_syn_v4_2bind_thread_vlan),
		cmocka_unit_test(test_syn_v6_2bind_thread),
		cmocka_unit_test(test_syn_v4_no_bind),
		cmocka_unit_test(test_syn_v6_one_bind),
		cmocka_unit_test(test_syn_refusals),
		cmocka_unit_test(test_live_10000_frames),
		cmocka_unit_test(test_live_engine_paced),
	};
	cpu_set_t set;

	if (geteuid() != 0) {
		fprintf(stderr, "test_gen: must run as root (loads BPF programs, makes a network namespace)\n");
		return 1;
	}
	/* The generator keeps its state per CPU: stay on one. */
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "test_gen: sched_setaffinity: %s\n", strerror(errno));
		return 1;
	}
	return cmocka_run_group_tests_name("gen", tests, NULL, NULL);
}
