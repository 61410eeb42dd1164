// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mixed frame sizes in the XDP live-frames generator (bpf/live.bpf.c,
 * configured by xp_gen_load from a struct xp_mix of user/frame/mix.h). Needs
 * root.
 *
 * The generator is loaded by the engine's own loader and run with plain
 * BPF_PROG_RUN, handed the largest frame + 1 bytes of garbage each run as
 * the live engine hands them in. For every output frame the test checks:
 *  - its length is the pattern's next size (IMIX: 64 570 64 64 570 64 1518
 *    64 570 64 570 64, spread, not grouped), and over the runs the sizes
 *    come 7:4:1;
 *  - what a receiver reads from the frame's own headers: IPv4 total length
 *    / IPv6 payload length and UDP length agree with the frame's length, and
 *    the IPv4 header and L4 checksums verify by the test's own RFC 1071 sum
 *    (tests/lib/ref_sum.h) with the pseudo-header built from those lengths;
 *  - every byte against the frame built at that size by frame_build, with
 *    the frame's ports, TCP sequence number and stamp (stream, seq = frame
 *    number, a send time inside the run; at 64-byte IPv4/TCP in the IPv4
 *    ID) put in and the checksums summed from scratch;
 * and at the end pipes every frame into tests/unit/gen_frames.py --verify,
 * the Python checksum verifier written from the RFCs, and compares
 * xp_gen_sent_bytes with the bytes that came out.
 */
#include "tests/bpf/live_fixture.h"
#include "frame/mix.h"
#include "tests/lib/ref_sum.h"

/* The fixture's configuration (live_fixture.h) with a mix: ports
 * 10000-10001 x 5201-5203, a sequence number that wraps within a few frames,
 * and the largest size as the template's, as the client builds it. */
static struct xp_engine_cfg make_mix_cfg(int family, uint8_t proto, const char *mix)
{
	struct xp_engine_cfg c = make_cfg(family, proto, 0, 0, 10000, 10001, 5201, 5203);
	struct frame_spec *s = &c.frames.tmpl;
	char err[200];

	s->seq = 0xfffff000u; /* wraps within a few frames */
	if (xp_mix_parse(mix, &c.frames.mix, err, sizeof(err)))
		fail_msg("xp_mix_parse(%s): %s", mix, err);
	s->frame_size = xp_mix_max(&c.frames.mix); /* as the client builds it */
	c.frames.stamp.ival = 1000;
	c.frames.stamp.stream_base = 5;
	c.frames.stamp.key[0] = 0xa1b2c3d4e5f60718ull; /* xp_gen_load sets it */
	c.frames.stamp.key[1] = 0x1122334455667788ull;
	return c;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, (uint16_t)v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, (uint32_t)v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

/* A receiver's view: the lengths in the headers and both checksums, from
 * the frame alone (the pseudo-header's length is the one the header says). */
static void receiver_checks(const uint8_t *f, size_t len, int family, uint8_t proto, const struct frame_layout *l)
{
	const uint8_t *ip = f + l->l3_off, *l4 = f + l->l4_off;
	size_t l4len = len - l->l4_off;

	if (family == AF_INET) {
		assert_int_equal(get16(ip + 2), len - l->l3_off);
		assert_int_equal(ref_sum(ip, 20, NULL, 0, 0), 0xffff);
		assert_int_equal(ref_sum(ip + 12, 8, l4, l4len, proto + (uint32_t)l4len), 0xffff);
	} else {
		assert_int_equal(get16(ip + 4), l4len);
		assert_int_equal(ref_sum(ip + 8, 32, l4, l4len, proto + (uint32_t)l4len), 0xffff);
	}
	if (proto == IPPROTO_UDP) {
		assert_int_equal(get16(l4 + 4), l4len);
		assert_int_not_equal(get16(l4 + 6), 0);
	}
}

/* The L4 checksum of f (len bytes) summed from scratch. */
static void set_l4_csum(uint8_t *f, size_t len, const struct xp_engine_cfg *c, const struct frame_layout *l)
{
	const struct frame_spec *s = &c->frames.tmpl;
	size_t ck = l->l4_off + (l->l4_proto == IPPROTO_TCP ? 16 : 6), l4len = len - l->l4_off;
	uint16_t v;

	memset(f + ck, 0, 2);
	if (s->src.family == AF_INET)
		v = csum_l4_v4(&s->src.v4, &s->dst.v4, s->l4_proto, f + l->l4_off, l4len);
	else
		v = csum_l4_v6(&s->src.v6, &s->dst.v6, s->l4_proto, f + l->l4_off, l4len);
	if (v == 0 && l->l4_proto == IPPROTO_UDP)
		v = 0xffff;
	memcpy(f + ck, &v, 2);
}

/*
 * nframes frames of mix through the generator, each checked (see the top);
 * want_pattern, if given, the sizes of the first plen frames.
 */
static void mix_case(int family, uint8_t proto, const char *mix, unsigned nframes, const unsigned *want_pattern)
{
	struct xp_engine_cfg c = make_mix_cfg(family, proto, mix);
	const struct xp_mix *m = &c.frames.mix;
	static uint8_t tmpl[XP_GEN_MAX_LEN], in[XP_GEN_MAX_LEN], out[XP_GEN_MAX_LEN], want[XP_GEN_MAX_LEN];
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	unsigned count[XP_MIX_MAX_SIZES] = { 0 };
	uint64_t bytes = 0;
	char err[256];
	int ncpus = libbpf_num_possible_cpus();
	unsigned *cpu_tid = calloc((size_t)ncpus, sizeof(*cpu_tid));
	uint32_t nd = (uint32_t)c.dport_hi - c.dport_lo + 1, ns = (uint32_t)c.sport_hi - c.sport_lo + 1;

	assert_non_null(cpu_tid);
	if (xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)))
		fail_msg("xp_gen_load: %s", err);
	assert_int_equal(xp_gen_init_state(skel, cpu_tid, (unsigned)ncpus), 0);
	free(cpu_tid);
	assert_int_equal(skel->rodata->config.mix_plen, m->plen);
	xp_gen_set_meas(skel, now_ticks(false), 1000);

	FILE *py = popen("python3 tests/unit/gen_frames.py --verify", "w");
	if (!py)
		fail_msg("cannot run python3 tests/unit/gen_frames.py --verify (run from the tree's top)");
	for (unsigned j = 0; j < nframes; j++) {
		unsigned k = m->pattern[j % m->plen];
		size_t len = m->size[k] - 4;
		struct frame_spec s = c.frames.tmpl;
		struct frame_layout sl;
		uint16_t sport, dport;

		/* Whatever a recycled buffer holds, one byte longer than the largest (as live.c hands it in). */
		for (unsigned b = 0; b <= lay.len; b++)
			in[b] = (uint8_t)(j * 13 + b * 5);
		xp_gen_new_call(skel, 0);
		uint64_t before = now_ticks(false);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = lay.len + 1, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_live), &o))
			fail_msg("BPF_PROG_RUN: %s", strerror(errno));
		uint64_t after = now_ticks(false);
		assert_int_equal(o.retval, XDP_TX);
		if (o.data_size_out != len)
			fail_msg("frame %u: %u bytes, the pattern says %zu", j, o.data_size_out, len);
		if (want_pattern && j < m->plen)
			assert_int_equal(o.data_size_out + 4, want_pattern[j]);
		count[k]++;
		bytes += o.data_size_out;
		receiver_checks(out, len, family, proto, &lay);

		/* The expected frame: built at this size, then the per-frame fields. */
		s.frame_size = m->size[k];
		assert_int_equal(frame_layout_of(&s, &sl, NULL), 0);
		assert_int_equal(frame_build(&s, want, sizeof(want), NULL), len);
		uint64_t flow = j; /* one thread */
		xp_flow_ports(&c, flow, &sport, &dport);
		put16(want + sl.l4_off, sport);
		put16(want + sl.l4_off + 2, dport);
		if (proto == IPPROTO_TCP) /* the largest's payload per segment (live.h) */
			put32(want + sl.l4_off + 4, s.seq + (uint32_t)(flow / nd / ns) * lay.payload_len);
		int place = xp_stamp_place_of(family == AF_INET6, sl.payload_len);
		assert_int_not_equal(place, XP_STAMP_NONE);
		uint32_t ts32 = get32(out + sl.payload_off + (place == XP_STAMP_AT_PAYLOAD ? 4 : 2));
		uint64_t ts = xp_stamp_ts_extend(before, ts32);
		assert_true(ts >= before && ts <= after);
		uint8_t st[8];
		put64(st, xp_stamp_pack(c.frames.stamp.stream_base, j, ts));
		if (place == XP_STAMP_AT_PAYLOAD) {
			memcpy(want + sl.payload_off, st, 8);
			/* The tag where this size has room (the key: 0, 0 until the server gives one). */
			if (xp_stamp_tagged(place, sl.payload_len))
				put32(want + sl.payload_off + 8,
				      xp_stamp_tag(c.frames.stamp.key[0], c.frames.stamp.key[1],
						   xp_stamp_pack(c.frames.stamp.stream_base, j, ts)));
		} else {
			uint8_t *ip = want + sl.l3_off;
			memcpy(ip + 4, st, 2);
			memcpy(want + sl.payload_off, st + 2, 6);
			memset(ip + 10, 0, 2);
			put16(ip + 10, (uint16_t)~ref_sum(ip, 20, NULL, 0, 0));
		}
		set_l4_csum(want, len, &c, &sl);
		for (size_t b = 0; b < len; b++)
			if (want[b] != out[b])
				fail_msg("frame %u (%zu bytes): byte %zu is 0x%02x, expected 0x%02x", j, len, b, out[b],
					 want[b]);
		for (size_t b = 0; b < len; b++)
			fprintf(py, "%02x", out[b]);
		fputc('\n', py);
	}
	int st = pclose(py);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("gen_frames.py --verify found bad checksums in the %u frames (status %d)", nframes, st);
	/* The sizes came in the mix's proportions (whole patterns: exactly). */
	for (unsigned i = 0; i < m->n && nframes % m->plen == 0; i++)
		assert_int_equal(count[i], m->weight[i] * (nframes / m->plen));
	assert_int_equal(xp_gen_sent(skel), nframes);
	assert_int_equal(xp_gen_sent_bytes(skel, m), bytes);
	assert_int_equal(xp_mix_bytes(m, nframes), bytes);
	print_message("%s: %u frames, %llu bytes, every one checked\n", mix, nframes, (unsigned long long)bytes);
	live_bpf__destroy(skel);
}

/* IMIX, IPv4/UDP: the 12-frame pattern spread, 7:4:1 over 5 patterns. */
static void test_imix_v4_udp(void **state)
{
	static const unsigned want[12] = { 64, 570, 64, 64, 570, 64, 1518, 64, 570, 64, 570, 64 };

	(void)state;
	mix_case(AF_INET, IPPROTO_UDP, "imix", 60, want);
}

/* IPv4/TCP: the 64-byte frames carry their stamp in the IPv4 ID, the others in the payload. */
static void test_imix_v4_tcp(void **state)
{
	(void)state;
	mix_case(AF_INET, IPPROTO_TCP, "imix", 36, NULL);
}

static void test_mix_v6_udp(void **state)
{
	static const unsigned want[3] = { 78, 1280, 78 };

	(void)state;
	mix_case(AF_INET6, IPPROTO_UDP, "78:2,1280:1", 30, want);
}

/* A user mix across the generator's small-frame boundary (128 bytes), and
 * not a whole number of patterns. */
static void test_mix_v6_tcp_partial(void **state)
{
	(void)state;
	mix_case(AF_INET6, IPPROTO_TCP, "90:3,130:2,1518:1", 17, NULL);
}

/* What the generator cannot take: one line each, nothing loaded. */
static void test_mix_refused(void **state)
{
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	char err[256] = "";
	struct xp_engine_cfg c;

	(void)state;
	/* IPv6/TCP below 86 bytes has no room for the stamp. */
	c = make_mix_cfg(AF_INET6, IPPROTO_TCP, "78:1,1518:1");
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "78-byte frames of this mix carry no stamp"));
	assert_null(strchr(err, '\n'));
	/* The largest + 1 must fit a live frame. */
	c = make_mix_cfg(AF_INET, IPPROTO_UDP, "64:1,3412:1");
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "--engine xsk"));
	c = make_mix_cfg(AF_INET, IPPROTO_UDP, "64:1,3411:1");
	assert_int_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	live_bpf__destroy(skel);
	/* All templates must fit the generator's table. */
	c = make_mix_cfg(AF_INET, IPPROTO_UDP, "3000:1,3001:1,3002:1,3003:1,3004:1,3005:1");
	skel = NULL;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "fewer or smaller sizes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_imix_v4_udp),
		cmocka_unit_test(test_imix_v4_tcp),
		cmocka_unit_test(test_mix_v6_udp),
		cmocka_unit_test(test_mix_v6_tcp_partial),
		cmocka_unit_test(test_mix_refused),
	};

	if (gen_test_init("test_live_mix", "loads BPF programs"))
		return 1;
	return cmocka_run_group_tests_name("gen_mix", tests, NULL, NULL);
}
