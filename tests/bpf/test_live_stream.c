// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/live.bpf.c, the XDP live-frames generator: its stream
 * frames. Needs root.
 *
 * The generator is configured and loaded by xp_gen_load, the engine's own
 * loader, then run with plain BPF_PROG_RUN (no live frames), which hands back
 * each output frame. For every frame the test builds the expected one
 * independently (template, ports of xp_flow_ports, the TCP sequence number,
 * the stamp of bpf/lib/stamp.h with its send time read back and checked
 * against the clock read around the run, the IPv4 header checksum (when the
 * stamp uses the ID) and the L4 checksum summed from scratch) and compares
 * every byte; it also verifies the IPv4 header and L4 checksums of the output
 * as a receiver would, with user/frame/csum.h and with a plain RFC 1071 sum
 * written in the test. The send-interval bins are checked after every frame
 * against the intervals of the frames' own stamps. The input frame is
 * garbage, not the template: live mode recycles buffers with whatever they
 * last held, so the program must rewrite all.
 *
 * The process is pinned to one CPU: the generator's state is per CPU.
 *
 * The SYNs of the connection engines are tested in test_live_syn.c, live
 * frames and the live engine in test_live_send.c; what they share is in
 * live_fixture.h.
 */
#include "tests/bpf/live_fixture.h"
#include "tests/lib/ref_sum.h" /* RFC 1071 written out */

#define NFRAMES 40

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

/* The test's tag key (lib/stamp.h), set after load as the live engine does
 * on the server's start reply. */
static const uint64_t GEN_KEY[2] = { 0x0f1e2d3c4b5a6978ull, 0x8877665544332211ull };

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
				/* The tag after it, where the payload has room. */
				if (xp_stamp_tagged(place, l->payload_len))
					put32(want + l->payload_off + 8,
					      xp_stamp_tag(GEN_KEY[0], GEN_KEY[1],
							   xp_stamp_pack(sc->stream_base + g->tid, j, ts)));
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
	xp_gen_set_key(g.skel, GEN_KEY);
	assert_int_equal(g.skel->rodata->config.stamp_tag,
			 xp_stamp_tagged((enum xp_stamp_place)want_place, g.lay.payload_len));
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

		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(g.skel->progs.xdp_live), &o), 0);
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
	live_bpf__destroy(g.skel);
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
	live_bpf__destroy(g.skel);
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
	struct xp_engine_cfg c = make_cfg(AF_INET, IPPROTO_TCP, XP_GEN_LIVE_MAX_LEN + 4 + 1, 0, 1, 1, 2, 2);
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	char err[256] = "";

	(void)state;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "--engine xsk"));
	assert_non_null(strstr(err, "at most -l 3412"));
	assert_null(strchr(err, '\n'));
	/* The largest the kernel takes as a live frame loads. */
	c = make_cfg(AF_INET, IPPROTO_TCP, XP_GEN_LIVE_MAX_LEN + 4, 0, 1, 1, 2, 2);
	assert_int_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	live_bpf__destroy(skel);
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
	};

	if (gen_test_init("test_live_stream", "loads BPF programs"))
		return 1;
	return cmocka_run_group_tests_name("gen", tests, NULL, NULL);
}
