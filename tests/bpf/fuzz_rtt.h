/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tests/bpf/test_frame_fuzz.c's round-trip part: random and mutated frames
 * through the client's round-trip program (bpf/rtt.bpf.c), loaded twice
 * (an IPv4 test over TCP and UDP, an IPv6 test over TCP only), judged
 * against bpf/rtt.h's rule restated: a frame from the server's test
 * address and ports to ours, of the test's family and protocol, with a
 * stamp where lib/stamp.h puts one, is accounted and dropped; every other
 * frame passes untouched; every frame is counted once in rtt_stats.
 * Included once, by test_frame_fuzz.c, after fuzz_server.h (whose frame
 * classifier it reuses for the headers).
 */
#ifndef XDPPERF_TESTS_FUZZ_RTT_H
#define XDPPERF_TESTS_FUZZ_RTT_H

#include "bpf/lib/stamp.h"
#include "bpf/rtt.h"
#include "bpf/rtt.skel.h"
#include "loader/rtt_prog.h"
#include "meas/latency.h"

#define RTT_PORT_LO 63240
#define RTT_PORT_HI 63249

struct rtt_fz {
	struct rtt_prog *rp;
	int v6;
	uint32_t protos;
	uint64_t st[XP_RTT_NSTATS]; /* the model's */
};

static void rtt_fz_load(struct rtt_fz *z, int v6, uint32_t protos)
{
	struct rtt_prog_cfg c = { .port_lo = RTT_PORT_LO, .port_hi = RTT_PORT_HI, .protos = protos };
	char err[256];

	memset(z, 0, sizeof(*z));
	z->v6 = v6;
	z->protos = protos;
	assert_int_equal(xp_addr_parse(v6 ? SRV6[0] : SRV4[0], &c.server), 0);
	assert_int_equal(xp_addr_parse(v6 ? CLI6[0] : CLI4[0], &c.client), 0);
	if (rtt_prog_open(&c, &z->rp, err, sizeof(err)))
		fail_msg("rtt_prog_open: %s", err);
	struct xp_slot_meas m = { .t0 = fz_next() & 0xffffffffffull, .ival = 1u << 20, .flags = XP_MEAS_ONEWAY };
	assert_int_equal(rtt_prog_meas_start(z->rp, &m), 0);
}

/* The model's verdict: XDP_DROP for a reflected frame of the test with a
 * stamp (*stat XP_RTT_TIMED), else XDP_PASS (NOSTAMP: the test's but no
 * stamp; PASSED: anything else). */
static int rtt_fz_model(const struct rtt_fz *z, const uint8_t *f, size_t len, enum xp_rtt_stat *stat)
{
	struct sframe s = classify_server(f, len);
	uint8_t srv[16] = { 0 }, cli[16] = { 0 };

	*stat = XP_RTT_PASSED;
	if (s.cls == C_MALFORMED || s.cls == C_FRAG || !s.hlen || s.v6 != z->v6)
		return XDP_PASS; /* not TCP/UDP with whole headers, or another family */
	uint8_t proto = f[s.l3 + (s.v6 ? 6 : 9)];
	if (!(proto == IPPROTO_TCP && (z->protos & XP_PROTO_TCP)) &&
	    !(proto == IPPROTO_UDP && (z->protos & XP_PROTO_UDP)))
		return XDP_PASS;
	inet_pton(z->v6 ? AF_INET6 : AF_INET, z->v6 ? SRV6[0] : SRV4[0], srv);
	inet_pton(z->v6 ? AF_INET6 : AF_INET, z->v6 ? CLI6[0] : CLI4[0], cli);
	if (memcmp(s.saddr, srv, z->v6 ? 16 : 4) || memcmp(s.daddr, cli, z->v6 ? 16 : 4))
		return XDP_PASS;
	uint16_t sport = w_get16(f + s.l4);
	if (sport < RTT_PORT_LO || sport > RTT_PORT_HI)
		return XDP_PASS;
	size_t payload = s.l4len - s.hlen; /* (classify_server stops short of it at the control port) */
	if (!(payload >= 8 || (!s.v6 && payload >= 6))) {
		*stat = XP_RTT_NOSTAMP;
		return XDP_PASS;
	}
	*stat = XP_RTT_TIMED;
	return XDP_DROP;
}

static void rtt_fz_one(struct rtt_fz *z, const uint8_t *in, size_t len, struct figs *fg)
{
	uint8_t out[MAXF];
	size_t olen;
	enum xp_rtt_stat stat;
	int want = rtt_fz_model(z, in, len, &stat);
	int r = run_prog(bpf_program__fd(rtt_prog_skel(z->rp)->progs.xdp_rtt), in, len, out, &olen, lo_ifindex);

	cur_buf = in;
	cur_len = len;
	fg->frames++;
	FZ_CHECK(r == want, "round trip (%s): verdict %d, model %d", z->v6 ? "IPv6" : "IPv4", r, want);
	FZ_CHECK(olen == len && !memcmp(in, out, len), "round trip: frame changed");
	z->st[XP_RTT_SEEN]++;
	z->st[stat]++;
	if (stat != XP_RTT_PASSED)
		fg->test++;
	if (r == XDP_DROP)
		fg->dropped++;
	else
		fg->passed++;
}

static void rtt_fz_compare(struct rtt_fz *z)
{
	uint64_t got[XP_RTT_NSTATS];

	assert_int_equal(rtt_prog_read_stats(z->rp, got), 0);
	for (int k = 0; k < XP_RTT_NSTATS; k++)
		FZ_CHECK(got[k] == z->st[k], "round trip (%s): stat %d %llu, model %llu", z->v6 ? "IPv6" : "IPv4", k,
			 (unsigned long long)got[k], (unsigned long long)z->st[k]);
	/* Every timed frame is in its stream once, received or duplicate. */
	struct xp_stream_figs f[XP_STAMP_MAX_STREAMS];
	int n = rtt_prog_read_streams(z->rp, f, XP_STAMP_MAX_STREAMS);
	uint64_t in_streams = 0;
	FZ_CHECK(n >= 0, "round trip: streams unreadable");
	for (int k = 0; k < n; k++)
		in_streams += f[k].recv + f[k].dup;
	FZ_CHECK(in_streams == z->st[XP_RTT_TIMED], "round trip: %llu frames in streams, %llu timed",
		 (unsigned long long)in_streams, (unsigned long long)z->st[XP_RTT_TIMED]);
}

static void test_rtt(void **state)
{
	/* Frames as the server sends them back: from its addresses and test
	 * ports (and around them) to the client's, and the world's others. */
	struct fz_world wd = { .our_mac = CLI_MAC, .peer_mac = SRV_MAC, .our4 = CLI4, .n_our4 = 1,
			       .our6 = CLI6, .n_our6 = 1, .peer4 = SRV4, .n_peer4 = 1, .peer6 = SRV6,
			       .n_peer6 = 1, .dport_lo = CPORT_LO, .dport_hi = CPORT_HI,
			       .sport_lo = RTT_PORT_LO - 3, .sport_hi = RTT_PORT_HI + 3, .ctrl_port = CTRL_PORT };
	struct rtt_fz z4, z6;
	struct figs fg = { 0 };
	uint8_t buf[MAXF], opt[40];

	(void)state;
	fz_state = seed ^ 0x7777;
	rtt_fz_load(&z4, 0, XP_PROTO_TCP | XP_PROTO_UDP);
	rtt_fz_load(&z6, 1, XP_PROTO_TCP);
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len = fz_frame(&wd, buf, 2048, opt);

		if (fz_pct(40))
			len = fz_mutate(buf, len, 2048);
		rtt_fz_one(&z4, buf, len, &fg);
		rtt_fz_one(&z6, buf, len, &fg);
		if (cur_frame % 512 == 511) {
			rtt_fz_compare(&z4);
			rtt_fz_compare(&z6);
		}
	}
	rtt_fz_compare(&z4);
	rtt_fz_compare(&z6);
	report("round trip (IPv4 TCP+UDP and IPv6 TCP programs, each frame through both)", &fg);
	printf("figures: round trip: IPv4 program %llu timed, %llu without a stamp; IPv6 program %llu timed, %llu "
	       "without\n", (unsigned long long)z4.st[XP_RTT_TIMED], (unsigned long long)z4.st[XP_RTT_NOSTAMP],
	       (unsigned long long)z6.st[XP_RTT_TIMED], (unsigned long long)z6.st[XP_RTT_NOSTAMP]);
	/* The run reached every verdict it claims to check. */
	assert_true(z4.st[XP_RTT_TIMED] > 0 && z4.st[XP_RTT_NOSTAMP] > 0 && z6.st[XP_RTT_TIMED] > 0 &&
		    z6.st[XP_RTT_NOSTAMP] > 0);
	rtt_prog_close(z4.rp);
	rtt_prog_close(z6.rp);
}

#endif /* XDPPERF_TESTS_FUZZ_RTT_H */
