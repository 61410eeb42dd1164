/*
 * Unit tests for a flow's frames (issue 26): frame/flow_hdr.c's builder
 * with VLAN tags, DSCP, ECN, TTL and flow label, and frame/pattern.c,
 * frame/flow_pat.c's field patterns.
 *
 * Frames are parsed back with tests/lib/wire.h's parser (written from the
 * RFCs, sharing no code with user/frame) and their checksums verified with
 * its RFC 1071 reference. Increments are checked value by value against
 * the OTG definition (start + k * step, wrapping at the field's width);
 * the random pattern against its range and, by a chi-square test, its
 * uniformity.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "frame/flow_hdr.h"
#include "frame/flow_pat.h"
#include "frame/frame.h"
#include "frame/frame_stamp.h"
#include "frame/pattern.h"
#include "tests/lib/wire.h"

static void addr(const char *s, struct xp_addr *a)
{
	assert_int_equal(xp_addr_parse(s, a), 0);
}

/* A UDP/IPv4 flow 198.18.0.1:5000 -> 198.19.0.1:6000. */
static struct xp_flow_hdr base_v4(void)
{
	struct xp_flow_hdr h = {
		.dst_mac = { 0x02, 0, 0, 0, 0, 2 },
		.src_mac = { 0x02, 0, 0, 0, 0, 1 },
		.l4_proto = IPPROTO_UDP,
		.sport = 5000,
		.dport = 6000,
	};

	addr("198.18.0.1", &h.src);
	addr("198.19.0.1", &h.dst);
	return h;
}

static struct xp_flow_hdr base_v6(void)
{
	struct xp_flow_hdr h = base_v4();

	addr("2001:2::1", &h.src);
	addr("2001:2:0:1::1", &h.dst);
	return h;
}

/* Build h at size, parse it back, assert it well formed with valid checksums. */
static struct wp build_parse(const struct xp_flow_hdr *h, size_t size, uint8_t *buf, size_t cap)
{
	const char *err = NULL;
	size_t n = frame_build_hdr(h, size, false, 0xab, buf, cap, &err);
	struct wp w;

	if (!n)
		fail_msg("frame_build_hdr: %s", err);
	assert_int_equal(n, size - 4);
	w = w_parse(buf, n);
	assert_true(w.ok);
	assert_true(w.ip_csum_ok);
	assert_true(w.l4_csum_ok);
	assert_int_equal(w.tail, 0);
	return w;
}

/* ---- frames ---------------------------------------------------------- */

static void test_untagged_is_frame_build(void **state)
{
	/* No tags, DSCP/ECN/flow label 0: byte for byte what frame_build gives
	 * for the frame_spec with those fields (the engines' frames). */
	struct frame_spec s = {
		.src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 },
		.l4_proto = IPPROTO_TCP, .sport = 40000, .dport = 5001, .tcp_flags = 0x18,
		.seq = 0x11223344, .ack = 0x55667788, .frame_size = 128, .payload_fill = 0xab, .vlan_id = 7,
	};
	struct xp_flow_hdr h;
	uint8_t a[256], b[256];
	size_t na, nb;

	addr("10.0.0.1", &s.src);
	addr("10.0.0.2", &s.dst);
	frame_spec_hdr(&s, &h);
	assert_int_equal(h.nvlan, 1);
	assert_int_equal(h.vlan[0].tpid, XP_TPID_8021Q);
	na = frame_build(&s, a, sizeof(a), NULL);
	nb = frame_build_hdr(&h, 128, false, 0xab, b, sizeof(b), NULL);
	assert_int_equal(na, 124);
	assert_int_equal(nb, na);
	assert_memory_equal(a, b, na);
}

static void test_two_tags_v4(void **state)
{
	/* QinQ: an 802.1ad S-tag outside an 802.1Q C-tag, every TCI bit used. */
	struct xp_flow_hdr h = base_v4();
	uint8_t buf[256];
	struct wp w;

	h.nvlan = 2;
	h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021AD, .pcp = 5, .dei = 1, .vid = 100 };
	h.vlan[1] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .pcp = 3, .dei = 0, .vid = 4094 };
	h.dscp = 46;
	h.ecn = 1;
	h.ttl = 9;
	w = build_parse(&h, 128, buf, sizeof(buf));
	assert_int_equal(w.nvlan, 2);
	assert_int_equal(w.tpid[0], 0x88a8);
	assert_int_equal(w.tci[0], 5 << 13 | 1 << 12 | 100);
	assert_int_equal(w.tpid[1], 0x8100);
	assert_int_equal(w.tci[1], 3 << 13 | 4094);
	assert_int_equal(w.l3, 22);
	assert_int_equal(w.tos, 46 << 2 | 1);
	assert_int_equal(w.ttl, 9);
	assert_int_equal(w.proto, IPPROTO_UDP);
	assert_int_equal(w.sport, 5000);
	assert_int_equal(w.dport, 6000);
	assert_int_equal(w.payload, 128 - 4 - 22 - 20 - 8);
	assert_int_equal(w.frag, 0x4000); /* DF, as every frame_build frame */
}

static void test_one_tag_v6_tcp_syn(void **state)
{
	struct xp_flow_hdr h = base_v6();
	uint8_t buf[256];
	struct wp w;

	h.nvlan = 1;
	h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .pcp = 7, .vid = 200 };
	h.dscp = 10;
	h.ecn = 2;
	h.flow_label = 0xabcde;
	h.ttl = 255;
	h.l4_proto = IPPROTO_TCP;
	h.tcp_flags = 0x02;
	h.seq = 1000;
	h.tcp_syn_options = true;
	w = build_parse(&h, 102, buf, sizeof(buf));
	assert_true(w.v6);
	assert_int_equal(w.nvlan, 1);
	assert_int_equal(w.tci[0], 7 << 13 | 200);
	assert_int_equal(w.tos, 10 << 2 | 2);
	assert_int_equal(w.flow_label, 0xabcde);
	assert_int_equal(w.ttl, 255);
	assert_int_equal(w.flags, 0x02);
	assert_int_equal(w.seq, 1000);
	assert_int_equal(w.hlen, 40);
	assert_int_equal(w.payload, 102 - 4 - 18 - 40 - 40);
}

static void test_min_sizes(void **state)
{
	/* The smallest frame grows 4 bytes a tag: IPv6/TCP 78 -> 82 -> 86. */
	struct xp_flow_hdr h = base_v6();
	struct frame_layout lay;
	const char *err;

	h.l4_proto = IPPROTO_TCP;
	for (unsigned t = 0; t <= 2; t++) {
		h.nvlan = (uint8_t)t;
		h.vlan[0].tpid = h.vlan[1].tpid = XP_TPID_8021Q;
		assert_int_equal(xp_flow_hdr_len(&h), 14 + 4 * t + 40 + 20);
		assert_int_equal(frame_layout_hdr(&h, 78 + 4 * t, false, &lay, &err), 0);
		assert_int_equal(lay.payload_len, 0);
		assert_int_equal(frame_layout_hdr(&h, 77 + 4 * t, false, &lay, &err), -1);
		assert_non_null(strstr(err, "below the minimum"));
	}
}

static void test_refusals(void **state)
{
	struct {
		void (*set)(struct xp_flow_hdr *);
		const char *msg;
	} cases[] = {
		{ .msg = "VID 4095" },
		{ .msg = "DSCP 64" },
		{ .msg = "ECN 4" },
		{ .msg = "TPID 0x9100" },
		{ .msg = "3 VLAN tags" },
		{ .msg = "PCP 8" },
		{ .msg = "flow label needs IPv6" },
		{ .msg = "flow label 1048576" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xp_flow_hdr h = i == 7 ? base_v6() : base_v4();
		const char *err = NULL;
		uint8_t buf[128];

		h.nvlan = 1;
		h.vlan[0].tpid = XP_TPID_8021Q;
		switch (i) {
		case 0: h.vlan[0].vid = 4095; break;
		case 1: h.dscp = 64; break;
		case 2: h.ecn = 4; break;
		case 3: h.vlan[0].tpid = 0x9100; break;
		case 4: h.nvlan = 3; break;
		case 5: h.vlan[0].pcp = 8; break;
		case 6: h.flow_label = 1; break;
		case 7: h.flow_label = 0x100000; break;
		}
		assert_int_equal(frame_build_hdr(&h, 100, false, 0, buf, sizeof(buf), &err), 0);
		assert_non_null(err);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %u: \"%s\" lacks \"%s\"", i, err, cases[i].msg);
	}
}

static void test_patching_tagged(void **state)
{
	/* The per-frame rewrites (ports, source, seq, stamp) work on a
	 * two-tag frame through its layout, and give what a fresh build does. */
	struct xp_flow_hdr h = base_v4();
	struct frame_layout lay;
	struct xp_addr a2;
	uint8_t f[256], ref[256];
	uint64_t key[2] = { 0x1111, 0x2222 };
	struct wp w;

	h.nvlan = 2;
	h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021AD, .vid = 10 };
	h.vlan[1] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = 20 };
	h.l4_proto = IPPROTO_TCP;
	h.tcp_flags = 0x18;
	assert_int_equal(frame_layout_hdr(&h, 96, false, &lay, NULL), 0);
	assert_int_equal(lay.l3_off, 22);
	assert_int_equal(lay.payload_off % 2, 0);
	frame_build_hdr(&h, 96, false, 0, f, sizeof(f), NULL);
	frame_set_ports(f, &lay, 1234, 4321);
	addr("198.18.7.7", &a2);
	assert_int_equal(frame_set_saddr(f, &lay, &a2), 0);
	frame_set_seq(f, &lay, 777);
	h.sport = 1234;
	h.dport = 4321;
	h.src = a2;
	h.seq = 777;
	frame_build_hdr(&h, 96, false, 0, ref, sizeof(ref), NULL);
	assert_memory_equal(f, ref, lay.len);
	/* A stamp and its tag after the tags: checksums still right. */
	assert_int_equal(xp_stamp_place_of(0, lay.payload_len), XP_STAMP_AT_PAYLOAD);
	frame_put_stamp(f, &lay, XP_STAMP_AT_PAYLOAD, xp_stamp_pack(3, 99, 12345), key);
	w = w_parse(f, lay.len);
	assert_true(w.ok && w.ip_csum_ok && w.l4_csum_ok);
	assert_int_equal(f[lay.payload_off], 3);
	assert_int_equal(w_get32(f + lay.payload_off + 8), xp_stamp_tag(key[0], key[1], xp_stamp_pack(3, 99, 12345)));
}

/* ---- patterns -------------------------------------------------------- */

static void test_increment_exact(void **state)
{
	/* A 12-bit VID from 4090 by 3, 5 values: 4090, 4093, 0 (4096 wraps),
	 * 3, 6, then again. And a 32-bit address by 256 over 1000 values. */
	struct xp_pattern p = xp_pattern_fixed(12, 0);
	const unsigned want[] = { 4090, 4093, 0, 3, 6, 4090, 4093 };

	p.kind = XP_PAT_INCREMENT;
	p.value = 4090;
	p.step = 3;
	p.count = 5;
	assert_int_equal(xp_pattern_check(&p, NULL), 0);
	for (unsigned n = 0; n < 7; n++)
		assert_int_equal((unsigned)xp_pattern_at(&p, n), want[n]);
	assert_int_equal(xp_pattern_period(&p), 5);

	p = xp_pattern_fixed(32, 0xc6120000); /* 198.18.0.0 */
	p.kind = XP_PAT_INCREMENT;
	p.step = 256;
	p.count = 1000;
	for (uint64_t n = 0; n < 3000; n++)
		assert_true(xp_pattern_at(&p, n) == 0xc6120000u + (n % 1000) * 256);

	/* 128 bits: the top of the IPv6 space wraps to :: */
	p = xp_pattern_fixed(128, ~(xp_u128)0 - 1);
	p.kind = XP_PAT_INCREMENT;
	p.step = 1;
	p.count = 4;
	assert_true(xp_pattern_at(&p, 1) == ~(xp_u128)0);
	assert_true(xp_pattern_at(&p, 2) == 0);
	assert_true(xp_pattern_at(&p, 3) == 1);
	assert_true(xp_pattern_at(&p, 4) == ~(xp_u128)0 - 1);
}

static void test_decrement_values(void **state)
{
	struct xp_pattern p = xp_pattern_fixed(16, 10);
	const char *err;

	p.kind = XP_PAT_DECREMENT;
	p.step = 4;
	p.count = 4;
	assert_int_equal((unsigned)xp_pattern_at(&p, 0), 10);
	assert_int_equal((unsigned)xp_pattern_at(&p, 2), 2);
	assert_int_equal((unsigned)xp_pattern_at(&p, 3), 65534); /* 10 - 12 mod 2^16 */
	assert_int_equal((unsigned)xp_pattern_at(&p, 4), 10);

	p = xp_pattern_fixed(6, 0);
	p.kind = XP_PAT_VALUES;
	p.nvalues = 3;
	p.values[0] = 46;
	p.values[1] = 0;
	p.values[2] = 10;
	for (unsigned n = 0; n < 9; n++)
		assert_true(xp_pattern_at(&p, n) == p.values[n % 3]);
	p.values[2] = 64; /* does not fit 6 bits */
	assert_int_equal(xp_pattern_check(&p, &err), -1);
	assert_non_null(strstr(err, "does not fit"));
	p.nvalues = 0;
	assert_int_equal(xp_pattern_check(&p, &err), -1);
	p = xp_pattern_fixed(8, 1);
	p.kind = XP_PAT_INCREMENT;
	p.count = 0;
	assert_int_equal(xp_pattern_check(&p, &err), -1);
	p = xp_pattern_fixed(8, 1);
	p.kind = XP_PAT_RANDOM;
	p.count = 1;
	p.min = 9;
	p.max = 8;
	assert_int_equal(xp_pattern_check(&p, &err), -1);
	assert_non_null(strstr(err, "min is above max"));
}

/* Pearson's chi-square statistic of counts against a uniform expectation. */
static double chi_square(const uint64_t *bins, unsigned k, uint64_t n)
{
	double e = (double)n / k, x = 0;

	for (unsigned i = 0; i < k; i++)
		x += ((double)bins[i] - e) * ((double)bins[i] - e) / e;
	return x;
}

static void test_random_chi_square(void **state)
{
	/* A UDP port random in [10000, 10999] (OTG's min, max, seed, count):
	 * 200 000 frames into 20 bins of 50 values. With 19 degrees of freedom
	 * the statistic exceeds 43.82 by chance once in 1000; for 5 seeds. */
	enum { K = 20, N = 200000 };
	const double crit = 43.82;

	for (uint32_t seed = 1; seed <= 5; seed++) {
		struct xp_pattern p = xp_pattern_fixed(16, 0);
		uint64_t bins[K] = { 0 };
		xp_u128 lo = ~(xp_u128)0, hi = 0;
		double x;

		p.kind = XP_PAT_RANDOM;
		p.min = 10000;
		p.max = 10999;
		p.seed = seed;
		p.count = N;
		assert_int_equal(xp_pattern_check(&p, NULL), 0);
		for (uint64_t n = 0; n < N; n++) {
			xp_u128 v = xp_pattern_at(&p, n);

			assert_true(v >= 10000 && v <= 10999);
			lo = v < lo ? v : lo;
			hi = v > hi ? v : hi;
			bins[(unsigned)(v - 10000) / 50]++;
		}
		assert_true(lo == 10000 && hi == 10999); /* both ends are reached */
		x = chi_square(bins, K, N);
		print_message("seed %u: chi-square %.2f (19 df, p=0.001 at %.2f)\n", seed, x, crit);
		assert_true(x < crit);
	}
	/* The statistic does see a skew: the low half twice as likely. */
	{
		uint64_t bins[K];

		for (unsigned i = 0; i < K; i++)
			bins[i] = i < K / 2 ? 2 * N / (3 * K / 2) : N / (3 * K / 2);
		assert_true(chi_square(bins, K, N) > 10 * crit);
	}
}

static void test_random_repeat_seed(void **state)
{
	/* Deterministic for a seed, different for another; count repeats it;
	 * a full-width 128-bit range works. */
	struct xp_pattern p = xp_pattern_fixed(32, 0), q;
	unsigned same = 0;

	p.kind = XP_PAT_RANDOM;
	p.max = 0xffffffff;
	p.seed = 7;
	p.count = 100;
	q = p;
	q.seed = 8;
	for (uint64_t n = 0; n < 100; n++) {
		assert_true(xp_pattern_at(&p, n) == xp_pattern_at(&p, n + 100));
		same += xp_pattern_at(&p, n) == xp_pattern_at(&q, n);
	}
	assert_true(same < 3);
	p = xp_pattern_fixed(128, 0);
	p.kind = XP_PAT_RANDOM;
	p.max = ~(xp_u128)0;
	p.count = 1000;
	p.seed = 3;
	{
		unsigned top = 0;

		for (uint64_t n = 0; n < 1000; n++)
			top += (unsigned)(xp_pattern_at(&p, n) >> 127);
		assert_true(top > 400 && top < 600); /* the top bit is used */
	}
}

static void test_flow_pat_frames(void **state)
{
	/* A flow whose VID increments 100, 101, 102 and whose destination
	 * increments over 4 addresses, DSCP from a list: frame n's fields are
	 * those of the patterns at n, in the bytes. */
	struct xp_flow_hdr b = base_v4(), h;
	struct xp_flow_pat fp;
	const uint8_t dscp[] = { 46, 0 };
	uint8_t buf[256];
	const char *err;

	b.nvlan = 1;
	b.vlan[0].tpid = XP_TPID_8021Q;
	b.vlan[0].vid = 100;
	xp_flow_pat_init(&fp, &b);
	assert_int_equal(xp_flow_pat_check(&fp, NULL), 0);
	fp.f[XP_FF_VLAN0_VID].kind = XP_PAT_INCREMENT;
	fp.f[XP_FF_VLAN0_VID].step = 1;
	fp.f[XP_FF_VLAN0_VID].count = 3;
	fp.f[XP_FF_DST].kind = XP_PAT_INCREMENT;
	fp.f[XP_FF_DST].step = 1;
	fp.f[XP_FF_DST].count = 4;
	fp.f[XP_FF_DSCP].kind = XP_PAT_VALUES;
	fp.f[XP_FF_DSCP].nvalues = 2;
	fp.f[XP_FF_DSCP].values[0] = dscp[0];
	fp.f[XP_FF_DSCP].values[1] = dscp[1];
	assert_int_equal(xp_flow_pat_check(&fp, &err), 0);
	for (uint64_t n = 0; n < 24; n++) {
		struct wp w;

		xp_flow_pat_at(&fp, n, &h);
		w = build_parse(&h, 64, buf, sizeof(buf));
		assert_int_equal(w.tci[0] & 0xfff, 100 + n % 3);
		assert_int_equal(w.daddr[3], 1 + n % 4);
		assert_int_equal(w.daddr[2], 0);
		assert_int_equal(w.tos >> 2, dscp[n % 2]);
		assert_int_equal(w.sport, 5000);
	}
	/* 4094 + 1 is 4095: reserved, refused by the field's name. */
	fp.f[XP_FF_VLAN0_VID].value = 4093;
	assert_int_equal(xp_flow_pat_check(&fp, &err), -1);
	assert_non_null(strstr(err, "vlan[0].id"));
	fp.f[XP_FF_VLAN0_VID].value = 4092;
	assert_int_equal(xp_flow_pat_check(&fp, &err), 0);
	/* A tag the flow does not have cannot be patterned. */
	fp.f[XP_FF_VLAN1_VID].kind = XP_PAT_INCREMENT;
	fp.f[XP_FF_VLAN1_VID].count = 2;
	assert_int_equal(xp_flow_pat_check(&fp, &err), -1);
	assert_non_null(strstr(err, "vlan[1].id: the flow has no such header"));
	/* A pattern of the wrong width is refused. */
	xp_flow_pat_init(&fp, &b);
	fp.f[XP_FF_SRC].width = 128;
	assert_int_equal(xp_flow_pat_check(&fp, &err), -1);
	assert_non_null(strstr(err, "ipv4.src"));
}

static void test_flow_pat_random_v6(void **state)
{
	/* IPv6 flow label random (OTG gives flow_label the random feature):
	 * within range, in the frame. */
	struct xp_flow_hdr b = base_v6(), h;
	struct xp_flow_pat fp;
	uint8_t buf[256];

	xp_flow_pat_init(&fp, &b);
	fp.f[XP_FF_FLOW_LABEL].kind = XP_PAT_RANDOM;
	fp.f[XP_FF_FLOW_LABEL].min = 1000;
	fp.f[XP_FF_FLOW_LABEL].max = 1999;
	fp.f[XP_FF_FLOW_LABEL].seed = 1;
	fp.f[XP_FF_FLOW_LABEL].count = 500;
	assert_int_equal(xp_flow_pat_check(&fp, NULL), 0);
	for (uint64_t n = 0; n < 500; n++) {
		struct wp w;

		xp_flow_pat_at(&fp, n, &h);
		w = build_parse(&h, 80, buf, sizeof(buf));
		assert_true(w.flow_label >= 1000 && w.flow_label <= 1999);
		assert_int_equal(w.flow_label, (uint32_t)xp_pattern_at(&fp.f[XP_FF_FLOW_LABEL], n));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_untagged_is_frame_build),
		cmocka_unit_test(test_two_tags_v4),
		cmocka_unit_test(test_one_tag_v6_tcp_syn),
		cmocka_unit_test(test_min_sizes),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_patching_tagged),
		cmocka_unit_test(test_increment_exact),
		cmocka_unit_test(test_decrement_values),
		cmocka_unit_test(test_random_chi_square),
		cmocka_unit_test(test_random_repeat_seed),
		cmocka_unit_test(test_flow_pat_frames),
		cmocka_unit_test(test_flow_pat_random_v6),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
