// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Round-trip mode (issue 10, hosts with different clocks) with BPF_PROG_RUN:
 *   - the server's program, in a slot with XP_SLOT_REFLECT, sends a stamped
 *     frame back: MACs, addresses and ports (and TCP seq/ack) swapped, TTL /
 *     hop limit reset, the stamp where it was, checksums valid by the
 *     independent RFC 1071 sums of tests/lib/wire.h; it is counted and
 *     accounted as in any slot, plus reflected; frames it must not echo
 *     (group addresses) and frames without a stamp are dropped;
 *   - the client's program (bpf/rtt.bpf.c, through loader/rtt_prog.c)
 *     accounts a reflected frame with a known send time (latency within the
 *     clock reads around the run) and drops it; a sequence reflected by the
 *     server and fed to it gives the exact loss / duplicate counts;
 *   - every frame that is not a reflection of the test passes untouched,
 *     byte for byte.
 * Frames come from tests/lib/wire.h, the stamp bytes are written out
 * (tests/lib/stamped.c) from lib/stamp.h's description. Needs root.
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
#include <sys/socket.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/measure.h"
#include "bpf/rtt.h"
#include "bpf/lib/latency.h"
#include "bpf/server.skel.h"
#include "bpf/rtt.skel.h"
#include "loader/server_prog.h"
#include "loader/rtt_prog.h"
#include "meas/latency.h"
#include "tests/lib/stamped.h"
#include "tests/lib/wire.h"

#define CTRL_PORT 5303
#define PORT_LO   63500
#define PORT_HI   63509
#define CPORT     40000
#define CLI4      "198.18.235.1"
#define SRV4      "198.18.235.2"
#define CLI6      "2001:2:0:235::1"
#define SRV6      "2001:2:0:235::2"
#define SEC_TICKS 250000000ull /* 1 s in 4-ns ticks */
#define MAXF      256

static const uint8_t CMAC[6] = { 2, 0, 0, 0, 0, 1 }, SMAC[6] = { 2, 0, 0, 0, 0, 2 };

/* ---- frames --------------------------------------------------------- */

struct sf {
	int v6, tcp;
	int reflected;      /* built as the server sends it back: server -> client */
	size_t payload;
	uint32_t stream, seq;
	uint64_t ts;        /* ticks; the low 32 bits go in */
	uint8_t ttl;        /* 0: wire.h's 64 */
	const char *saddr, *daddr; /* NULL: the test's */
	uint16_t sport, dport;     /* 0: the test's */
	const uint8_t *dmac;       /* NULL: the test's */
};

/* The frame of f (tests/lib/stamped.h): stamp at the payload (>= 8 bytes)
 * or IPv4 ID + 6 payload bytes (6-7 bytes, IPv4), none below; TTL as asked;
 * checksums redone. */
static size_t frame(const struct sf *f, uint8_t *buf, size_t cap)
{
	int back = f->reflected;
	struct wf w = { .l4 = f->tcp ? IPPROTO_TCP : IPPROTO_UDP, .flags = W_ACK | W_PSH, .seq = 1000, .ack = 7000,
			.payload = f->payload, .v6 = f->v6, .pad_to = 60 };
	uint8_t st[8];

	w.sport = f->sport ? f->sport : back ? PORT_LO : CPORT;
	w.dport = f->dport ? f->dport : back ? CPORT : PORT_LO;
	memcpy(w.dmac, f->dmac ? f->dmac : back ? CMAC : SMAC, 6);
	memcpy(w.smac, back ? SMAC : CMAC, 6);
	xt_addr(f->saddr ? f->saddr : f->v6 ? (back ? SRV6 : CLI6) : (back ? SRV4 : CLI4), w.saddr);
	xt_addr(f->daddr ? f->daddr : f->v6 ? (back ? CLI6 : SRV6) : (back ? CLI4 : SRV4), w.daddr);
	xt_stamp_bytes(f->stream, f->seq, f->ts, st);
	return xt_stamped_frame(&w, st, f->ttl, buf, cap);
}

/* ---- programs -------------------------------------------------------- */

struct env {
	struct server_prog *sp;
	struct server_bpf *s;
	int slot;
	struct rtt_prog *rp;
	uint64_t t0;
};

/* An empty sum of bins (what meas/latency.c's xp_lat_init will do). */
static void lat_empty(struct xp_lat_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static struct rtt_prog *rtt_open(int v6, uint32_t protos)
{
	struct rtt_prog_cfg c = { .port_lo = PORT_LO, .port_hi = PORT_HI, .protos = protos };
	struct rtt_prog *rp = NULL;
	char err[256];

	assert_int_equal(xp_addr_parse(v6 ? SRV6 : SRV4, &c.server), 0);
	assert_int_equal(xp_addr_parse(v6 ? CLI6 : CLI4, &c.client), 0);
	if (rtt_prog_open(&c, &rp, err, sizeof(err)))
		fail_msg("rtt_prog_open: %s", err);
	return rp;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	struct xp_addr cli, bind;
	char err[256];

	if (!e || server_prog_open(&e->sp, CTRL_PORT, false, err, sizeof(err))) {
		fprintf(stderr, "test_rtt: %s\n", e ? err : "out of memory");
		return -1;
	}
	e->s = server_prog_skel(e->sp);
	if (xp_addr_parse(CLI4, &cli) || xp_addr_parse(CLI6, &bind))
		return -1;
	/* On lo, where BPF_PROG_RUN's frames arrive. */
	e->slot = server_prog_slot_alloc(e->sp, PORT_LO, PORT_HI, XP_PROTO_TCP | XP_PROTO_UDP, XP_SLOT_REFLECT,
					 XP_CLOSE_NONE, (int)if_nametoindex("lo"), &cli, &bind, 1, err, sizeof(err));
	if (e->slot < 0) {
		fprintf(stderr, "test_rtt: slot: %s\n", err);
		return -1;
	}
	/* The server's side of a round-trip test: no shared clock. */
	e->t0 = xt_now_ticks() - SEC_TICKS;
	struct xp_slot_meas m = { .t0 = e->t0, .ival = SEC_TICKS, .flags = 0 };
	if (server_prog_meas_start(e->sp, e->slot, &m))
		return -1;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	rtt_prog_close(e->rp);
	server_prog_close(e->sp);
	free(e);
	return 0;
}

/* Run prog on in (len bytes); *out gets what it left of the frame. */
static int run_prog(int fd, const uint8_t *in, size_t len, uint8_t *out, size_t *out_len)
{
	uint8_t scratch[MAXF];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len,
		    .data_out = out ? out : scratch, .data_size_out = MAXF);

	if (bpf_prog_test_run_opts(fd, &o))
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	if (out_len)
		*out_len = o.data_size_out;
	return (int)o.retval;
}

static int server_fd(struct env *e) { return bpf_program__fd(e->s->progs.xdp_server); }
static int rtt_fd(struct rtt_prog *rp) { return bpf_program__fd(rtt_prog_skel(rp)->progs.xdp_rtt); }

static struct xp_meas_stats srv_mstats(struct env *e)
{
	struct xp_meas_stats m;

	assert_int_equal(server_prog_read_meas_stats(e->sp, e->slot, &m), 0);
	return m;
}

static struct xp_lat_hist rtt_bin(struct rtt_prog *rp, uint64_t i)
{
	struct xp_lat_hist h;

	lat_empty(&h);
	assert_int_equal(rtt_prog_read_ibin(rp, i, &h), 0);
	return h;
}

static void rtt_start(struct rtt_prog *rp, uint64_t t0)
{
	/* One clock (the client's), so the client program times one way: the
	 * round trip. */
	struct xp_slot_meas m = { .t0 = t0, .ival = SEC_TICKS, .flags = XP_MEAS_ONEWAY };

	assert_int_equal(rtt_prog_meas_start(rp, &m), 0);
}

/* RFC 1071 over the IPv4 header and over the L4 segment with its pseudo-
 * header: a valid checksum makes each sum 0xffff (folded and complemented:
 * 0). Computed here, not trusted from the program. */
static void expect_checksums(const uint8_t *f, size_t len)
{
	struct wp p = w_parse(f, len);

	assert_true(p.ok);
	if (!p.v6)
		assert_int_equal(w_fold(w_sum(f + p.l3, (size_t)p.ihl * 4, 0)), 0);
	assert_int_equal(w_fold(w_sum(f + p.l4, p.l4len, w_pseudo(p.v6, p.saddr, p.daddr, p.proto,
								   (uint32_t)p.l4len))), 0);
	assert_true(p.ip_csum_ok && p.l4_csum_ok);
}

/* out is in reflected: MACs, addresses, ports (TCP: seq/ack) swapped, TTL
 * or hop limit 64, everything else (IPv4 ID, flags, payload with the stamp,
 * length) as it was. */
static void expect_reflection(const uint8_t *in, size_t in_len, const uint8_t *out, size_t out_len)
{
	struct wp a = w_parse(in, in_len), b = w_parse(out, out_len);
	size_t alen = a.v6 ? 16 : 4;

	assert_true(a.ok && b.ok);
	assert_int_equal(out_len, in_len);
	assert_memory_equal(out, in + 6, 6);
	assert_memory_equal(out + 6, in, 6);
	assert_memory_equal(b.saddr, a.daddr, alen);
	assert_memory_equal(b.daddr, a.saddr, alen);
	assert_int_equal(b.sport, a.dport);
	assert_int_equal(b.dport, a.sport);
	assert_int_equal(b.ttl, 64);
	assert_int_equal(b.proto, a.proto);
	assert_int_equal(b.ip_id, a.ip_id);
	assert_int_equal(b.frag, a.frag);
	if (a.proto == IPPROTO_TCP) {
		assert_int_equal(b.seq, a.ack);
		assert_int_equal(b.ack, a.seq);
		assert_int_equal(b.flags, a.flags);
		assert_int_equal(b.window, a.window);
	}
	assert_int_equal(b.payload, a.payload);
	assert_memory_equal(out + b.l4 + b.hlen, in + a.l4 + a.hlen, a.payload);
	/* The Ethernet padding after the IP datagram stays as well. */
	assert_memory_equal(out + b.l4 + b.l4len, in + a.l4 + a.l4len,
			    in_len - (a.l4 + a.l4len));
	expect_checksums(out, out_len);
}

/* ---- the server reflects -------------------------------------------- */

/* UDP/IPv4 with an 18-byte payload (stamp in it), 3 hops down (TTL 61). */
static void test_reflect_udp4(void **state)
{
	struct env *e = *state;
	struct sf f = { .payload = 18, .stream = 3, .seq = 7, .ts = e->t0 + SEC_TICKS / 2, .ttl = 61 };
	uint8_t in[MAXF], out[MAXF];
	size_t len = frame(&f, in, sizeof(in)), olen;

	assert_int_equal(run_prog(server_fd(e), in, len, out, &olen), XDP_TX);
	expect_reflection(in, len, out, olen);
	/* Counted and accounted as in any slot, and reflected. */
	struct xp_counters c;
	assert_int_equal(server_prog_read(e->sp, e->slot, &c), 0);
	assert_int_equal(c.pkts, 1);
	assert_int_equal(c.udp_pkts, 1);
	struct xp_meas_stats m = srv_mstats(e);
	assert_int_equal(m.stamped, 1);
	assert_int_equal(m.reflected, 1);
	assert_int_equal(m.reflect_refused, 0);
	struct xp_lat_hist h;
	lat_empty(&h);
	assert_int_equal(server_prog_read_ibin(e->sp, e->slot, 0, &h), 0);
	assert_int_equal(h.recv, 1);
	assert_int_equal(h.n, 0); /* no shared clock at the server: not timed there */
}

/* The 64-byte IPv4/TCP frame: 6 payload bytes, the stamp's first two bytes
 * in the IPv4 ID, which the reflection keeps; seq/ack swapped. */
static void test_reflect_tcp4_64(void **state)
{
	struct env *e = *state;
	struct sf f = { .tcp = 1, .payload = 6, .stream = 0x41, .seq = 0x123456, .ts = e->t0 + 5, .ttl = 1 };
	uint8_t in[MAXF], out[MAXF];
	size_t len = frame(&f, in, sizeof(in)), olen;

	assert_int_equal(len, 60);
	assert_int_equal(run_prog(server_fd(e), in, len, out, &olen), XDP_TX);
	expect_reflection(in, len, out, olen);
	assert_int_equal(w_parse(out, olen).ip_id, 0x4112); /* stream, seq's top byte */
	assert_int_equal(srv_mstats(e).reflected, 1);
}

/* IPv6, from the client's --bind address: TCP and UDP, hop limit reset. */
static void test_reflect_v6(void **state)
{
	struct env *e = *state;
	uint8_t in[MAXF], out[MAXF];
	size_t len, olen;

	for (int tcp = 0; tcp <= 1; tcp++) {
		struct sf f = { .v6 = 1, .tcp = tcp, .payload = 8, .stream = 9, .seq = (uint32_t)tcp,
				.ts = e->t0 + 100, .ttl = 17 };
		len = frame(&f, in, sizeof(in));
		assert_int_equal(run_prog(server_fd(e), in, len, out, &olen), XDP_TX);
		expect_reflection(in, len, out, olen);
	}
	assert_int_equal(srv_mstats(e).reflected, 2);
}

/* What is not echoed: a frame to a broadcast MAC or to a multicast group
 * (refused, dropped), and one without a stamp (IPv6/TCP, 4 payload bytes:
 * counted, unstamped, dropped as in any slot). */
static void test_reflect_refused(void **state)
{
	struct env *e = *state;
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	uint8_t in[MAXF];
	struct sf f1 = { .payload = 18, .ts = e->t0, .dmac = bcast };
	struct sf f2 = { .payload = 18, .seq = 1, .ts = e->t0, .daddr = "239.1.2.3" };
	struct sf f3 = { .v6 = 1, .tcp = 1, .payload = 4, .ts = e->t0 };

	assert_int_equal(run_prog(server_fd(e), in, frame(&f1, in, sizeof(in)), NULL, NULL), XDP_DROP);
	assert_int_equal(run_prog(server_fd(e), in, frame(&f2, in, sizeof(in)), NULL, NULL), XDP_DROP);
	assert_int_equal(run_prog(server_fd(e), in, frame(&f3, in, sizeof(in)), NULL, NULL), XDP_DROP);
	struct xp_meas_stats m = srv_mstats(e);
	assert_int_equal(m.stamped, 2);
	assert_int_equal(m.reflect_refused, 2);
	assert_int_equal(m.reflected, 0);
	assert_int_equal(m.nostamp, 1);
	struct xp_counters c;
	assert_int_equal(server_prog_read(e->sp, e->slot, &c), 0);
	assert_int_equal(c.pkts, 3);
}

/* A slot without the flag does not reflect (the one-way default). */
static void test_no_flag_no_reflection(void **state)
{
	struct env *e = *state;
	struct xp_addr cli;
	char err[256];
	uint8_t in[MAXF];

	assert_int_equal(xp_addr_parse(CLI4, &cli), 0);
	int slot = server_prog_slot_alloc(e->sp, PORT_HI + 1, PORT_HI + 1, XP_PROTO_UDP, 0, XP_CLOSE_NONE,
					  (int)if_nametoindex("lo"), &cli, NULL, 0, err, sizeof(err));
	assert_true(slot >= 0);
	struct xp_slot_meas m = { .t0 = e->t0, .ival = SEC_TICKS };
	assert_int_equal(server_prog_meas_start(e->sp, slot, &m), 0);
	struct sf f = { .payload = 18, .ts = e->t0, .dport = PORT_HI + 1 };
	assert_int_equal(run_prog(server_fd(e), in, frame(&f, in, sizeof(in)), NULL, NULL), XDP_DROP);
	struct xp_meas_stats ms;
	assert_int_equal(server_prog_read_meas_stats(e->sp, slot, &ms), 0);
	assert_int_equal(ms.stamped, 1);
	assert_int_equal(ms.reflected + ms.reflect_refused, 0);
	server_prog_slot_free(e->sp, slot);
}

/* The loader takes reflection for stream tests only. */
static void test_reflect_flag_combinations(void **state)
{
	struct env *e = *state;
	struct xp_addr cli;
	char err[256] = "";

	assert_int_equal(xp_addr_parse(CLI4, &cli), 0);
	assert_int_equal(server_prog_slot_alloc(e->sp, 1000, 1001, XP_PROTO_TCP, XP_SLOT_REFLECT | XP_SLOT_RESPOND,
						XP_CLOSE_RST, (int)if_nametoindex("lo"), &cli, NULL, 0, err,
						sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "stream tests only"));
	assert_int_equal(server_prog_slot_alloc(e->sp, 1000, 1001, XP_PROTO_TCP, XP_SLOT_REFLECT | XP_SLOT_PASS,
						XP_CLOSE_NONE, (int)if_nametoindex("lo"), &cli, NULL, 0, err,
						sizeof(err)),
			 -EINVAL);
}

/* ---- the client times ------------------------------------------------ */

/* A reflected frame sent 1 ms ago: dropped, its latency the clock reads
 * around the run minus its send time, in its bucket, interval 0. */
static void test_rtt_known_ts(void **state)
{
	struct env *e = *state;
	uint8_t in[MAXF];
	uint64_t t0 = xt_now_ticks() - SEC_TICKS / 2;

	e->rp = rtt_open(0, XP_PROTO_TCP | XP_PROTO_UDP);
	rtt_start(e->rp, t0);
	uint64_t ts = xt_now_ticks() - 250000; /* 1 ms ago */
	struct sf f = { .reflected = 1, .payload = 18, .stream = 2, .seq = 0, .ts = ts };
	size_t len = frame(&f, in, sizeof(in));
	uint64_t before = xt_now_ticks();
	assert_int_equal(run_prog(rtt_fd(e->rp), in, len, NULL, NULL), XDP_DROP);
	uint64_t after = xt_now_ticks();

	struct xp_lat_hist h = rtt_bin(e->rp, 0);
	assert_int_equal(h.recv, 1);
	assert_int_equal(h.n, 1);
	assert_int_equal(h.clock_neg, 0);
	assert_true(h.min >= before - ts && h.min <= after - ts);
	assert_int_equal(h.min, h.max);
	assert_int_equal(h.sum, h.min);
	uint64_t nb = 0;
	for (unsigned k = 0; k < XP_LAT_BUCKETS; k++)
		nb += h.b[k];
	assert_int_equal(nb, 1);
	assert_int_equal(h.b[xp_lat_bucket((uint32_t)h.min)], 1);

	struct xp_stream_figs sf[4];
	assert_int_equal(rtt_prog_read_streams(e->rp, sf, 4), 1);
	assert_int_equal(sf[0].stream, 2);
	assert_int_equal(sf[0].recv, 1);
	uint64_t st[XP_RTT_NSTATS];
	assert_int_equal(rtt_prog_read_stats(e->rp, st), 0);
	assert_int_equal(st[XP_RTT_SEEN], 1);
	assert_int_equal(st[XP_RTT_TIMED], 1);
	assert_int_equal(st[XP_RTT_NOSTAMP] + st[XP_RTT_PASSED], 0);
	struct xp_meas_stats m;
	assert_int_equal(rtt_prog_read_meas_stats(e->rp, &m), 0);
	assert_int_equal(m.stamped, 1);
}

/*
 * The whole loop in BPF_PROG_RUN: client frames 0..9 of stream 1 without 4,
 * 6 twice, through the server (reflected) and then the client program: the
 * client counts recv 9, dup 1, next_exp 10 (loss 1 on the way there and
 * back), every one timed between its send and the client run's end; the
 * server saw the same (one way, untimed). For IPv4/UDP and IPv6/TCP.
 */
static void round_trip(struct env *e, int v6, int tcp)
{
	static const uint32_t seqs[] = { 0, 1, 2, 3, 5, 6, 6, 7, 8, 9 };
	uint8_t in[MAXF], out[MAXF];
	size_t olen;
	uint64_t first = xt_now_ticks();

	e->rp = rtt_open(v6, tcp ? XP_PROTO_TCP : XP_PROTO_UDP);
	rtt_start(e->rp, e->t0);
	for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]); k++) {
		struct sf f = { .v6 = v6, .tcp = tcp, .payload = 32, .stream = 1, .seq = seqs[k], .ts = xt_now_ticks() };
		size_t len = frame(&f, in, sizeof(in));
		assert_int_equal(run_prog(server_fd(e), in, len, out, &olen), XDP_TX);
		assert_int_equal(run_prog(rtt_fd(e->rp), out, olen, NULL, NULL), XDP_DROP);
	}
	uint64_t last = xt_now_ticks();
	struct xp_stream_figs sf[4];
	assert_int_equal(rtt_prog_read_streams(e->rp, sf, 4), 1);
	assert_int_equal(sf[0].recv, 9);
	assert_int_equal(sf[0].dup, 1);
	assert_int_equal(sf[0].next_exp, 10);
	struct xp_lat_hist h = rtt_bin(e->rp, 1); /* t0 is 1 s back: interval 1 */
	assert_int_equal(h.recv, 9);
	assert_int_equal(h.dup, 1);
	assert_int_equal(h.n, 9);
	assert_true(h.max <= last - first);
	assert_int_equal(srv_mstats(e).reflected, 10);
	struct xp_stream_figs ss[4];
	assert_int_equal(server_prog_read_streams(e->sp, e->slot, ss, 4), 1);
	assert_int_equal(ss[0].recv, 9);
	assert_int_equal(ss[0].dup, 1);
}

static void test_round_trip_udp4(void **state) { round_trip(*state, 0, 0); }
static void test_round_trip_tcp6(void **state) { round_trip(*state, 1, 1); }

/* Everything else passes untouched, byte for byte, and is not accounted. */
static void test_foreign_frames_pass(void **state)
{
	struct env *e = *state;
	uint8_t in[MAXF], out[MAXF];
	size_t len, olen;
	const struct sf foreign[] = {
		{ .reflected = 1, .payload = 18, .saddr = "198.18.235.9" },  /* another source */
		{ .reflected = 1, .payload = 18, .daddr = "198.18.235.7" },  /* to another host */
		{ .reflected = 1, .payload = 18, .sport = PORT_LO - 1 },     /* not a test port */
		{ .reflected = 1, .payload = 18, .sport = PORT_HI + 1 },
		{ .reflected = 1, .payload = 18, .sport = CTRL_PORT },       /* the control connection */
		{ .reflected = 1, .payload = 18, .tcp = 1 },                 /* TCP to a UDP test */
		{ .reflected = 1, .payload = 18, .v6 = 1 },                  /* IPv6 to an IPv4 test */
		{ .reflected = 0, .payload = 18 },                           /* our own frame, outbound */
	};

	e->rp = rtt_open(0, XP_PROTO_UDP);
	rtt_start(e->rp, e->t0);
	for (size_t k = 0; k < sizeof(foreign) / sizeof(foreign[0]); k++) {
		len = frame(&foreign[k], in, sizeof(in));
		assert_int_equal(run_prog(rtt_fd(e->rp), in, len, out, &olen), XDP_PASS);
		assert_int_equal(olen, len);
		assert_memory_equal(out, in, len);
	}
	/* ARP (not IP) and a cut-short frame. */
	uint8_t arp[60] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 2, 0x08, 0x06 };
	assert_int_equal(run_prog(rtt_fd(e->rp), arp, sizeof(arp), out, &olen), XDP_PASS);
	assert_memory_equal(out, arp, sizeof(arp));
	struct sf ok = { .reflected = 1, .payload = 18 };
	len = frame(&ok, in, sizeof(in));
	assert_int_equal(run_prog(rtt_fd(e->rp), in, 30, out, &olen), XDP_PASS);
	assert_memory_equal(out, in, 30);
	/* A frame of the test with no room for a stamp (UDP, 4 bytes) passes
	 * too: the server reflects only stamped frames. */
	struct sf nost = { .reflected = 1, .payload = 4 };
	len = frame(&nost, in, sizeof(in));
	assert_int_equal(run_prog(rtt_fd(e->rp), in, len, out, &olen), XDP_PASS);
	assert_memory_equal(out, in, len);

	uint64_t st[XP_RTT_NSTATS];
	assert_int_equal(rtt_prog_read_stats(e->rp, st), 0);
	assert_int_equal(st[XP_RTT_SEEN], 11);
	assert_int_equal(st[XP_RTT_PASSED], 10);
	assert_int_equal(st[XP_RTT_NOSTAMP], 1);
	assert_int_equal(st[XP_RTT_TIMED], 0);
	struct xp_lat_hist h = rtt_bin(e->rp, 0);
	assert_int_equal(h.recv + h.n, 0);
	assert_int_equal(rtt_prog_read_streams(e->rp, NULL, 0), 0);
}

/* Before the test starts (no t0 yet) a reflected frame is not timed: it
 * passes, counted as NOSTAMP. */
static void test_rtt_not_started(void **state)
{
	struct env *e = *state;
	uint8_t in[MAXF];
	struct sf f = { .reflected = 1, .payload = 18, .ts = e->t0 };

	e->rp = rtt_open(0, XP_PROTO_UDP);
	assert_int_equal(run_prog(rtt_fd(e->rp), in, frame(&f, in, sizeof(in)), NULL, NULL), XDP_PASS);
	uint64_t st[XP_RTT_NSTATS];
	assert_int_equal(rtt_prog_read_stats(e->rp, st), 0);
	assert_int_equal(st[XP_RTT_NOSTAMP], 1);
	assert_int_equal(rtt_prog_read_streams(e->rp, NULL, 0), 0);
}

/* The loader refuses what cannot be a round-trip test, with a message. */
static void test_rtt_bad_config(void **state)
{
	struct rtt_prog_cfg c = { .port_lo = PORT_LO, .port_hi = PORT_HI, .protos = XP_PROTO_UDP };
	struct rtt_prog *rp = NULL;
	char err[256] = "";

	(void)state;
	assert_int_equal(xp_addr_parse(SRV4, &c.server), 0);
	assert_int_equal(xp_addr_parse(CLI6, &c.client), 0);
	assert_int_equal(rtt_prog_open(&c, &rp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "one family"));
	assert_int_equal(xp_addr_parse(CLI4, &c.client), 0);
	c.port_lo = PORT_HI + 1;
	assert_int_equal(rtt_prog_open(&c, &rp, err, sizeof(err)), -EINVAL);
	c.port_lo = PORT_LO;
	c.protos = 0;
	assert_int_equal(rtt_prog_open(&c, &rp, err, sizeof(err)), -EINVAL);
	assert_null(rp);
	assert_int_equal(rtt_prog_meas_start(NULL, NULL), -EINVAL);
	assert_int_equal(rtt_prog_attach(NULL, 1, XP_XDP_AUTO, NULL, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_reflect_udp4),
		T(test_reflect_tcp4_64),
		T(test_reflect_v6),
		T(test_reflect_refused),
		T(test_no_flag_no_reflection),
		T(test_reflect_flag_combinations),
		T(test_rtt_known_ts),
		T(test_round_trip_udp4),
		T(test_round_trip_tcp6),
		T(test_foreign_frames_pass),
		T(test_rtt_not_started),
		T(test_rtt_bad_config),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
