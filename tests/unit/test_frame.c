/*
 * Unit tests for user/net/csum.c, user/net/frame.c and the size math in units.h.
 *
 * Checksums are checked against published values (RFC 1071, RFC 1624, a
 * textbook IPv4 header) and a naive reference; whole frames are compared byte
 * for byte with golden frames from tests/unit/gen_frames.py, an independent
 * Python implementation.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net/csum.h"
#include "net/frame.h"
#include "util/units.h"

/* ---- helpers ---------------------------------------------------------- */

static uint32_t rng_state = 12345;

/* Deterministic xorshift so failures reproduce. */
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}

/* Textbook big-endian RFC 1071 checksum, as a reference (host order). */
static uint16_t ref_csum(const uint8_t *p, size_t len)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/* The bytes a checksum value (frame order) occupies in the frame, as a
 * big-endian number: makes comparisons with published values readable. */
static uint16_t as_be(uint16_t frame_order)
{
	return ntohs(frame_order);
}

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	while (hex[0] && hex[1] && n < max) {
		unsigned v;

		assert_int_equal(sscanf(hex, "%2x", &v), 1);
		out[n++] = (uint8_t)v;
		hex += 2;
	}
	return n;
}

/* ---- checksums -------------------------------------------------------- */

static void test_csum_rfc1071_example(void **state)
{
	/* RFC 1071 section 3: these bytes sum to ddf2, checksum 220d. */
	static const uint8_t b[] = { 0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7 };
	uint32_t sum = csum_partial(b, sizeof(b), 0);

	assert_int_equal(as_be(csum_fold(sum)), 0x220d);
	assert_int_equal(as_be((uint16_t)~csum_fold(sum)), 0xddf2);
	/* Chaining pieces gives the same sum as one call. */
	sum = csum_partial(b, 2, 0);
	sum = csum_partial(b + 2, 4, sum);
	sum = csum_partial(b + 6, 2, sum);
	assert_int_equal(as_be(csum_fold(sum)), 0x220d);
}

static void test_csum_odd_length(void **state)
{
	/* 0001 + f200 (odd byte padded with zero) = f201 -> 0dfe */
	static const uint8_t b[] = { 0x00, 0x01, 0xf2 };

	assert_int_equal(as_be(csum_fold(csum_partial(b, 3, 0))), 0x0dfe);
	assert_int_equal(as_be(csum_fold(csum_partial(b, 0, 0))), 0xffff);
}

static void test_csum_ipv4_header_known(void **state)
{
	/* Well-known example header (192.168.0.1 -> 192.168.0.199, UDP,
	 * total length 115) whose checksum is b861. */
	uint8_t h[20] = { 0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
			  0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	uint16_t c = csum_ipv4_hdr(h, sizeof(h));

	assert_int_equal(as_be(c), 0xb861);
	memcpy(h + 10, &c, 2);
	assert_int_equal(h[10], 0xb8);
	assert_int_equal(h[11], 0x61);
	/* A header with a correct checksum verifies to 0. */
	assert_int_equal(csum_ipv4_hdr(h, sizeof(h)), 0);
}

static void test_csum_matches_reference(void **state)
{
	static uint8_t buf[70000];
	size_t len, i;

	/* Every length 0..300, plus big buffers so 32-bit carries happen. */
	for (len = 0; len <= 300; len++) {
		for (i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		assert_int_equal(as_be(csum_fold(csum_partial(buf, len, 0))),
				 ref_csum(buf, len));
	}
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(as_be(csum_fold(csum_partial(buf, sizeof(buf), 0))),
			 ref_csum(buf, sizeof(buf)));
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd();
	assert_int_equal(as_be(csum_fold(csum_partial(buf, sizeof(buf) - 1, 0))),
			 ref_csum(buf, sizeof(buf) - 1));
	/* Starting sum near the 32-bit limit must not lose the carry. */
	assert_int_equal(csum_fold(csum_partial(buf, 64, 0xffffffffu)),
			 csum_fold(csum_partial(buf, 64, 0xffff)));
}

static void test_csum_replace16_rfc1624(void **state)
{
	/* RFC 1624 section 4: HC dd2f, m 5555 -> m' 3285 gives 0000 with eqn 3
	 * (eqn 2 would wrongly give ffff). */
	assert_int_equal(csum_replace16(htons(0xdd2f), htons(0x5555), htons(0x3285)),
			 htons(0x0000));
	/* Replacing a word by itself changes nothing. */
	assert_int_equal(csum_replace16(htons(0x1234), htons(0xabcd), htons(0xabcd)),
			 htons(0x1234));
}

static void test_csum_replace16_vs_recompute(void **state)
{
	uint8_t buf[64];
	int iter;

	for (iter = 0; iter < 20000; iter++) {
		size_t w = (rnd() % 32) * 2, i;
		uint16_t check, old, nw;

		for (i = 0; i < sizeof(buf); i++)
			buf[i] = (uint8_t)rnd();
		if (iter % 7 == 0)	/* extreme words too */
			memset(buf + w, iter & 1 ? 0xff : 0x00, 2);
		check = csum_fold(csum_partial(buf, sizeof(buf), 0));
		memcpy(&old, buf + w, 2);
		nw = (uint16_t)rnd();
		if (iter % 11 == 0)
			nw = iter & 2 ? 0xffff : 0;
		memcpy(buf + w, &nw, 2);
		assert_int_equal(csum_replace16(check, old, nw),
				 csum_fold(csum_partial(buf, sizeof(buf), 0)));
	}
}

static void test_csum_l4_udp_zero_is_ffff(void **state)
{
	/* Craft an IPv4 UDP datagram whose sum is ffff: the computed checksum
	 * 0 must be sent as ffff. Pick the last payload word to force it. */
	struct in_addr s = { htonl(0x0a000001) }, d = { htonl(0x0a000002) };
	uint8_t udp[10] = { 0x9c, 0x40, 0x13, 0x89, 0x00, 0x0a, 0x00, 0x00, 0, 0 };
	uint16_t c = csum_l4_v4(&s, &d, IPPROTO_UDP, udp, sizeof(udp)), fix;

	/* Adding the checksum value as data makes the total sum ffff. */
	fix = c;
	memcpy(udp + 8, &fix, 2);
	assert_int_equal(csum_l4_v4(&s, &d, IPPROTO_UDP, udp, sizeof(udp)), 0xffff);
	/* TCP has no such rule: the same construction gives 0. */
	memset(udp + 8, 0, 2);
	fix = csum_l4_v4(&s, &d, IPPROTO_TCP, udp, sizeof(udp));
	memcpy(udp + 8, &fix, 2);
	assert_int_equal(csum_l4_v4(&s, &d, IPPROTO_TCP, udp, sizeof(udp)), 0);
}

/* ---- units ------------------------------------------------------------ */

static void test_l1_l2_bits(void **state)
{
	/* One 64-byte frame: 60 bytes as software sees it. */
	assert_int_equal(l1_bits(1, 60), 672);
	assert_int_equal(l2_bits(1, 60), 512);
	assert_int_equal(l1_bits(1, 1514), (1518 + 20) * 8);
	assert_int_equal(l2_bits(1, 1514), 1518 * 8);
	/* 14.88 Mpps of 64-byte frames is 10 Gbit/s of line time. */
	assert_int_equal(l1_bits(14880952, 14880952ull * 60), 9999999744ull);
	assert_int_equal(l1_bits(0, 0), 0);
	assert_int_equal(l2_bits(1000, 60000), 512000);
}

/* ---- golden frames ---------------------------------------------------- */

struct golden {
	const char *name;
	size_t len; /* bytes without FCS */
	const char *hex;
};

static const struct golden GOLDEN[] = {
/* Generated by tests/unit/gen_frames.py; do not edit by hand. */
	{ "v4_tcp_64", 60,
	  "02000000000202000000000108004500002e00004000400626c80a0000010a00"
	  "00029c40138911223344556677885018ffffd7a20000abababababab"
	},
	{ "v4_tcp_1518", 1514,
	  "0200000000020200000000010800450005dc000040004006211a0a0000010a00"
	  "00029c40138911223344556677885018ffff4d700000abababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababababababab"
	  "abababababababababab"
	},
	{ "v6_tcp_78", 74,
	  "02000000000202000000000186dd6000000000140640fd000000000000000000"
	  "000000000001fd0000000000000000000000000000029c401389112233445566"
	  "77885018fffff4a90000"
	},
	{ "v4_udp_64", 60,
	  "02000000000202000000000108004500002e00004000401126bd0a0000010a00"
	  "00029c401389001a32e5abababababababababababababababababab"
	},
	{ "v6_udp_66", 62,
	  "02000000000202000000000186dd6000000000081140fd000000000000000000"
	  "000000000001fd0000000000000000000000000000029c40138900085610"
	},
	{ "v6_udp_200", 196,
	  "02000000000202000000000186dd60000000008e1103fd000000000000000000"
	  "000000000001fd0000000000000000000000000000029c401389008eaf5e5a5a"
	  "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	  "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	  "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	  "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	  "5a5a5a5a"
	},
	{ "v4_tcp_vlan_64", 60,
	  "0200000000020200000000018100006408004500002a00004000400626cc0a00"
	  "00010a0000029c40138911223344556677885018ffff2efe0000abab"
	},
	{ "v6_udp_vlan_128", 124,
	  "02000000000202000000000181000ffe86dd6000000000421140fd0000000000"
	  "00000000000000000001fd0000000000000000000000000000029c4013890042"
	  "e329abababababababababababababababababababababababababababababab"
	  "abababababababababababababababababababababababababababab"
	},
	{ "v4_syn_opts", 74,
	  "02000000000202000000000108004500003c00004000400626ba0a0000010a00"
	  "00029c4013891122334400000000a002faf044dc0000020405b40402080a0000"
	  "00010000000001030307"
	},
	{ "v6_syn_opts_mss", 94,
	  "02000000000202000000000186dd6000000000280640fd000000000000000000"
	  "000000000001fd0000000000000000000000000000029c401389112233440000"
	  "0000a002faf041a20000020422ec0402080a000000010000000001030307"
	},
	{ "v4_ack_nopayload", 60,
	  "02000000000202000000000108004500002800004000400626ce0a0000010a00"
	  "00029c40138911223344556677885010ffffdab30000000000000000"
	},
	{ "v4_udp_nopayload", 60,
	  "02000000000202000000000108004500001c00004000401126cf0a0000010a00"
	  "00029c40138900083c12000000000000000000000000000000000000"
	},
};

/* The specs behind GOLDEN; mirrors CASES in gen_frames.py. Zero window/ttl
 * exercise the defaults (65535 / 64). */
struct gcase {
	const char *name;
	bool v6;
	uint8_t proto;
	size_t size;
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t window;
	uint8_t ttl;
	uint16_t vlan;
	uint8_t fill;
	bool syn_opts;
	uint16_t mss;
	bool no_payload;
};

#define DATA (TH_ACK | TH_PUSH)
static const struct gcase CASES[] = {
	{ "v4_tcp_64", false, IPPROTO_TCP, 64, DATA, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, false },
	{ "v4_tcp_1518", false, IPPROTO_TCP, 1518, DATA, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, false },
	{ "v6_tcp_78", true, IPPROTO_TCP, 78, DATA, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, false },
	{ "v4_udp_64", false, IPPROTO_UDP, 64, 0, 0, 0, 0, 0, 0, 0xab, false, 0, false },
	{ "v6_udp_66", true, IPPROTO_UDP, 66, 0, 0, 0, 0, 0, 0, 0xab, false, 0, false },
	{ "v6_udp_200", true, IPPROTO_UDP, 200, 0, 0, 0, 0, 3, 0, 0x5a, false, 0, false },
	{ "v4_tcp_vlan_64", false, IPPROTO_TCP, 64, DATA, 0x11223344, 0x55667788, 0, 0, 100, 0xab, false, 0, false },
	{ "v6_udp_vlan_128", true, IPPROTO_UDP, 128, 0, 0, 0, 0, 0, 4094, 0xab, false, 0, false },
	{ "v4_syn_opts", false, IPPROTO_TCP, 78, TH_SYN, 0x11223344, 0, 64240, 64, 0, 0xab, true, 0, false },
	{ "v6_syn_opts_mss", true, IPPROTO_TCP, 98, TH_SYN, 0x11223344, 0, 64240, 0, 0, 0xab, true, 8940, false },
	/* frame_size deliberately bogus: no_payload ignores it */
	{ "v4_ack_nopayload", false, IPPROTO_TCP, 1, TH_ACK, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, true },
	{ "v4_udp_nopayload", false, IPPROTO_UDP, 0, 0, 0, 0, 0, 0, 0, 0xab, false, 0, true },
};
#define NCASES (sizeof(CASES) / sizeof(CASES[0]))

static void make_spec(const struct gcase *c, struct frame_spec *s)
{
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 1 }, dmac[6] = { 2, 0, 0, 0, 0, 2 };

	memset(s, 0, sizeof(*s));
	memcpy(s->src_mac, smac, 6);
	memcpy(s->dst_mac, dmac, 6);
	assert_int_equal(xp_addr_parse(c->v6 ? "fd00::1" : "10.0.0.1", &s->src), 0);
	assert_int_equal(xp_addr_parse(c->v6 ? "fd00::2" : "10.0.0.2", &s->dst), 0);
	s->vlan_id = c->vlan;
	s->l4_proto = c->proto;
	s->sport = 40000;
	s->dport = 5001;
	s->tcp_flags = c->flags;
	s->seq = c->seq;
	s->ack = c->ack;
	s->window = c->window;
	s->ttl = c->ttl;
	s->tcp_syn_options = c->syn_opts;
	s->mss = c->mss;
	s->frame_size = c->size;
	s->payload_fill = c->fill;
	s->no_payload = c->no_payload;
}

static const struct golden *find_golden(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(GOLDEN) / sizeof(GOLDEN[0]); i++) {
		if (!strcmp(GOLDEN[i].name, name))
			return &GOLDEN[i];
	}
	fail_msg("no golden frame %s", name);
	return NULL;
}

static void test_golden_frames(void **state)
{
	static uint8_t buf[2048], want[2048];
	size_t i;

	assert_int_equal(NCASES, sizeof(GOLDEN) / sizeof(GOLDEN[0]));
	for (i = 0; i < NCASES; i++) {
		const struct gcase *c = &CASES[i];
		const struct golden *g = find_golden(c->name);
		struct frame_spec s;
		struct frame_layout lay;
		const char *err = NULL;
		size_t n, wn;

		make_spec(c, &s);
		/* Garbage in the buffer: padding must still come out zero and
		 * nothing past the frame may be touched. */
		memset(buf, 0xee, sizeof(buf));
		n = frame_build(&s, buf, sizeof(buf), &err);
		if (!n)
			fail_msg("%s: frame_build failed: %s", c->name, err);
		wn = unhex(g->hex, want, sizeof(want));
		assert_int_equal(wn, g->len);
		if (n != wn || memcmp(buf, want, n)) {
			size_t k;

			for (k = 0; k < n && k < wn && buf[k] == want[k]; k++)
				;
			fail_msg("%s: %zu bytes (want %zu), first difference at offset %zu",
				 c->name, n, wn, k);
		}
		assert_int_equal(buf[n], 0xee);
		if (!c->no_payload)
			assert_int_equal(n, c->size - 4);

		/* The layout agrees with the bytes. */
		assert_int_equal(frame_layout_of(&s, &lay, &err), 0);
		assert_int_equal(lay.len, n);
		assert_int_equal(lay.l3_off, c->vlan ? 18 : 14);
		assert_int_equal(lay.l4_off, lay.l3_off + (c->v6 ? 40 : 20));
		assert_int_equal(lay.l4_proto, c->proto);
		assert_true(lay.payload_off + lay.payload_len <= lay.len);
		if (lay.payload_len)
			assert_int_equal(buf[lay.payload_off], c->fill);
		assert_int_equal(buf[lay.l4_off] << 8 | buf[lay.l4_off + 1], 40000);
		/* min size is what gives an empty payload (or the 64 floor) */
		if (c->syn_opts)
			assert_int_equal(frame_min_size(&s), c->size);
	}
}

/* Independent checks of the checksums in a built frame, neither using
 * user/net/csum.c: here with ref_csum (the textbook sum above) over the IPv4
 * header and over pseudo-header + L4 bytes (both must come out 0), and
 * again at the end of the test by tests/unit/gen_frames.py --verify (Python,
 * its own RFC 1071 sum and header parsing), which gets every frame as hex. */
static FILE *py_frames;
static unsigned py_count;

static void verify_checksums(const uint8_t *f, const struct frame_layout *lay)
{
	const uint8_t *ip = f + lay->l3_off;
	size_t l4_len = (size_t)(lay->payload_off - lay->l4_off) + lay->payload_len;
	static uint8_t buf[40 + 9200];
	size_t ph;

	assert_true(l4_len <= 9200);
	if ((ip[0] >> 4) == 4) {
		assert_int_equal(ref_csum(ip, 20), 0);
		assert_int_equal(ip[2] << 8 | ip[3], 20 + l4_len);
		/* pseudo-header: source, destination, zero, protocol, L4 length */
		memcpy(buf, ip + 12, 8);
		buf[8] = 0;
		buf[9] = lay->l4_proto;
		buf[10] = (uint8_t)(l4_len >> 8);
		buf[11] = (uint8_t)l4_len;
		ph = 12;
	} else {
		assert_int_equal(ip[4] << 8 | ip[5], l4_len);
		memcpy(buf, ip + 8, 32);
		buf[32] = buf[33] = 0;
		buf[34] = (uint8_t)(l4_len >> 8);
		buf[35] = (uint8_t)l4_len;
		buf[36] = buf[37] = buf[38] = 0;
		buf[39] = lay->l4_proto;
		ph = 40;
	}
	memcpy(buf + ph, f + lay->l4_off, l4_len);
	assert_int_equal(ref_csum(buf, ph + l4_len), 0);

	if (!py_frames) {
		/* The tests run from the top of the tree (tests/run.sh). */
		py_frames = popen("python3 tests/unit/gen_frames.py --verify", "w");
		if (!py_frames)
			fail_msg("cannot run python3 tests/unit/gen_frames.py --verify (run from the tree's top)");
		py_count = 0;
	}
	for (size_t k = 0; k < lay->len; k++)
		fprintf(py_frames, "%02x", f[k]);
	fputc('\n', py_frames);
	py_count++;
}

/* End of a test that called verify_checksums: the Python check's verdict. */
static void py_verify_done(void)
{
	assert_non_null(py_frames);
	assert_true(py_count > 0);
	int st = pclose(py_frames);
	py_frames = NULL;
	if (st != 0)
		fail_msg("gen_frames.py --verify found bad checksums in the %u frames (status %d)", py_count, st);
}

static void test_set_ports_equals_fresh_build(void **state)
{
	static const uint16_t ports[][2] = {
		{ 1, 1 }, { 65535, 65535 }, { 63000, 5201 }, { 40001, 5001 },
		{ 12345, 54321 }, { 0x00ff, 0xff00 },
	};
	uint8_t a[2048], b[2048];
	size_t i, k;

	for (i = 0; i < NCASES; i++) {
		struct frame_spec s;
		struct frame_layout lay;
		size_t n;

		make_spec(&CASES[i], &s);
		n = frame_build(&s, a, sizeof(a), NULL);
		assert_true(n > 0);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		/* Successive rewrites of the same buffer, as the sender does. */
		for (k = 0; k < sizeof(ports) / sizeof(ports[0]); k++) {
			frame_set_ports(a, &lay, ports[k][0], ports[k][1]);
			s.sport = ports[k][0];
			s.dport = ports[k][1];
			assert_int_equal(frame_build(&s, b, sizeof(b), NULL), n);
			if (memcmp(a, b, n))
				fail_msg("%s: set_ports(%u, %u) differs from a fresh build",
					 CASES[i].name, ports[k][0], ports[k][1]);
			verify_checksums(a, &lay);
		}
	}
	py_verify_done();
}

/* The one case where incremental and full computation could disagree: a UDP
 * datagram whose checksum computes to 0 and is sent as ffff. Find a source
 * port that produces it and patch into and out of it. */
static void test_set_ports_udp_ffff(void **state)
{
	struct frame_spec s;
	struct frame_layout lay;
	uint8_t a[128], b[128];
	unsigned p, found = 0;
	size_t n, v;

	for (v = 0; v < 2; v++) {
		make_spec(&CASES[v ? 4 : 3], &s); /* v4_udp_64, v6_udp_66 */
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		for (p = 1; p <= 65535; p++) {
			s.sport = (uint16_t)p;
			n = frame_build(&s, b, sizeof(b), NULL);
			if (b[lay.l4_off + 6] == 0xff && b[lay.l4_off + 7] == 0xff)
				break;
		}
		assert_true(p <= 65535);
		found++;
		/* into the ffff case ... */
		s.sport = (uint16_t)(p == 1 ? 2 : 1);
		assert_int_equal(frame_build(&s, a, sizeof(a), NULL), n);
		frame_set_ports(a, &lay, (uint16_t)p, s.dport);
		assert_memory_equal(a, b, n);
		/* ... and out of it */
		frame_set_ports(a, &lay, s.sport, s.dport);
		assert_int_equal(frame_build(&s, b, sizeof(b), NULL), n);
		assert_memory_equal(a, b, n);
	}
	assert_int_equal(found, 2);
}

/* Source addresses to rewrite into frames, extremes included (all-zero and
 * all-ones words exercise the ones' complement corner cases). */
static const char *const V4_ADDRS[] = {
	"198.18.1.10", "0.0.0.0", "255.255.255.255", "10.0.0.1", "1.2.3.4", "198.18.1.25",
};
static const char *const V6_ADDRS[] = {
	"2001:2:0:1::10", "::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fd00::1",
	"2001:2:0:1::1f", "fe80::1:ffff:0:1",
};

static void test_set_saddr_equals_fresh_build(void **state)
{
	uint8_t a[2048], b[2048];
	size_t i, k;

	for (i = 0; i < NCASES; i++) {
		const char *const *addrs = CASES[i].v6 ? V6_ADDRS : V4_ADDRS;
		struct frame_spec s;
		struct frame_layout lay;
		size_t n;

		make_spec(&CASES[i], &s);
		n = frame_build(&s, a, sizeof(a), NULL);
		assert_true(n > 0);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		/* Successive rewrites of the same buffer, mixed with port and
		 * seq rewrites, as the connection sender does. */
		for (k = 0; k < 6; k++) {
			assert_int_equal(xp_addr_parse(addrs[k], &s.src), 0);
			assert_int_equal(frame_set_saddr(a, &lay, &s.src), 0);
			s.sport = (uint16_t)(10000 + 7 * k);
			frame_set_ports(a, &lay, s.sport, s.dport);
			if (CASES[i].proto == IPPROTO_TCP) {
				s.seq = rnd();
				frame_set_seq(a, &lay, s.seq);
			}
			assert_int_equal(frame_build(&s, b, sizeof(b), NULL), n);
			if (memcmp(a, b, n))
				fail_msg("%s: set_saddr(%s) differs from a fresh build",
					 CASES[i].name, addrs[k]);
			verify_checksums(a, &lay);
		}
	}
	py_verify_done();
}

static void test_set_saddr_wrong_family(void **state)
{
	struct frame_spec s;
	struct frame_layout lay;
	struct xp_addr other;
	uint8_t a[128], b[128];
	size_t n, v;

	for (v = 0; v < 2; v++) {
		make_spec(&CASES[v ? 2 : 0], &s); /* v4_tcp_64, v6_tcp_78 */
		n = frame_build(&s, a, sizeof(a), NULL);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		memcpy(b, a, n);
		assert_int_equal(xp_addr_parse(v ? "10.0.0.9" : "fd00::9", &other), 0);
		assert_int_equal(frame_set_saddr(a, &lay, &other), -1);
		other.family = 0;
		assert_int_equal(frame_set_saddr(a, &lay, &other), -1);
		assert_memory_equal(a, b, n);
	}
}

/* The UDP checksum that computes to 0 and is sent as ffff, reached through
 * an address rewrite: search the low 16 bits of the source address for it. */
static void test_set_saddr_udp_ffff(void **state)
{
	struct frame_spec s;
	struct frame_layout lay;
	struct xp_addr lo;
	uint8_t a[128], b[128];
	unsigned w;
	size_t n, v;

	for (v = 0; v < 2; v++) {
		uint8_t *last;

		make_spec(&CASES[v ? 4 : 3], &s); /* v4_udp_64, v6_udp_66 */
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		last = v ? &s.src.v6.s6_addr[14] : (uint8_t *)&s.src.v4 + 2;
		for (w = 0; w <= 65535; w++) {
			last[0] = (uint8_t)(w >> 8);
			last[1] = (uint8_t)w;
			n = frame_build(&s, b, sizeof(b), NULL);
			if (b[lay.l4_off + 6] == 0xff && b[lay.l4_off + 7] == 0xff)
				break;
		}
		assert_true(w <= 65535);
		lo = s.src;
		last = v ? &lo.v6.s6_addr[14] : (uint8_t *)&lo.v4 + 2;
		last[1] ^= 1; /* a neighbour address */
		/* into the ffff case ... */
		make_spec(&CASES[v ? 4 : 3], &s);
		s.src = lo;
		assert_int_equal(frame_build(&s, a, sizeof(a), NULL), n);
		last = v ? &s.src.v6.s6_addr[14] : (uint8_t *)&s.src.v4 + 2;
		last[1] ^= 1;
		assert_int_equal(frame_set_saddr(a, &lay, &s.src), 0);
		assert_memory_equal(a, b, n);
		/* ... and out of it */
		assert_int_equal(frame_set_saddr(a, &lay, &lo), 0);
		s.src = lo;
		assert_int_equal(frame_build(&s, b, sizeof(b), NULL), n);
		assert_memory_equal(a, b, n);
	}
}

static void test_set_seq_equals_fresh_build(void **state)
{
	static const uint32_t seqs[] = { 0, 0xffffffffu, 1, 0x80000000u, 0x0000ffffu, 0xffff0000u };
	uint8_t a[2048], b[2048];
	size_t i, k;

	for (i = 0; i < NCASES; i++) {
		struct frame_spec s;
		struct frame_layout lay;
		size_t n;

		make_spec(&CASES[i], &s);
		n = frame_build(&s, a, sizeof(a), NULL);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		for (k = 0; k < 6 + 200; k++) {
			uint32_t seq = k < 6 ? seqs[k] : rnd();

			frame_set_seq(a, &lay, seq);
			if (CASES[i].proto == IPPROTO_TCP) /* UDP: unchanged */
				s.seq = seq;
			assert_int_equal(frame_build(&s, b, sizeof(b), NULL), n);
			if (memcmp(a, b, n))
				fail_msg("%s: set_seq(%08x) differs from a fresh build",
					 CASES[i].name, seq);
		}
		verify_checksums(a, &lay);
	}
	py_verify_done();
}

static void test_frame_min_size(void **state)
{
	struct frame_spec s;

	make_spec(&CASES[0], &s); /* v4 tcp */
	assert_int_equal(frame_min_size(&s), 64);
	s.l4_proto = IPPROTO_UDP;
	assert_int_equal(frame_min_size(&s), 64);
	make_spec(&CASES[2], &s); /* v6 tcp */
	assert_int_equal(frame_min_size(&s), 78);
	s.vlan_id = 7;
	assert_int_equal(frame_min_size(&s), 82);
	s.tcp_syn_options = true;
	assert_int_equal(frame_min_size(&s), 102);
	make_spec(&CASES[4], &s); /* v6 udp */
	assert_int_equal(frame_min_size(&s), 66);
	s.src.family = 0;
	assert_int_equal(frame_min_size(&s), 0);
	make_spec(&CASES[0], &s);
	s.l4_proto = IPPROTO_ICMP;
	assert_int_equal(frame_min_size(&s), 0);

	/* Exactly the minimum builds, with an empty payload for IPv6. */
	{
		uint8_t buf[128];
		struct frame_layout lay;

		make_spec(&CASES[2], &s);
		s.frame_size = frame_min_size(&s);
		assert_int_equal(frame_build(&s, buf, sizeof(buf), NULL), 74);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		assert_int_equal(lay.payload_len, 0);
		assert_int_equal(lay.payload_off, 74);
	}
}

static void test_syn_option_defaults(void **state)
{
	struct frame_spec s;
	struct frame_layout lay;
	uint8_t buf[128];
	const uint8_t *tcp;

	/* IPv6 default MSS is 1440 (the golden case sets 8940 explicitly). */
	make_spec(&CASES[9], &s);
	s.mss = 0;
	assert_int_equal(frame_build(&s, buf, sizeof(buf), NULL), 94);
	assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
	tcp = buf + lay.l4_off;
	assert_int_equal(tcp[12] >> 4, 10); /* data offset: 40-byte header */
	assert_int_equal(tcp[20], 2);       /* MSS option */
	assert_int_equal(tcp[22] << 8 | tcp[23], 1440);
	assert_int_equal(tcp[39], FRAME_SYN_WSCALE);
	verify_checksums(buf, &lay);
	/* Options with payload after them: payload starts past the options. */
	s.frame_size = 200;
	assert_int_equal(frame_build(&s, buf, sizeof(buf), NULL), 0);
	{
		uint8_t big[256];

		assert_int_equal(frame_build(&s, big, sizeof(big), NULL), 196);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		assert_int_equal(lay.payload_off, 14 + 40 + 40);
		assert_int_equal(lay.payload_len, 196 - 94);
		assert_int_equal(big[lay.payload_off], 0xab);
		assert_int_equal(big[lay.payload_off - 1], FRAME_SYN_WSCALE);
		verify_checksums(big, &lay);
	}
	py_verify_done();
}

/* frame_build must fail with a message containing `word`, writing nothing. */
static void expect_reject(const struct frame_spec *s, size_t buflen, const char *word)
{
	uint8_t buf[2048];
	const char *err = NULL;

	memset(buf, 0xee, sizeof(buf));
	assert_int_equal(frame_build(s, buf, buflen, &err), 0);
	assert_non_null(err);
	if (!strstr(err, word))
		fail_msg("error '%s' does not mention '%s'", err, word);
	assert_null(strchr(err, '\n'));
	assert_int_equal(buf[0], 0xee);
	/* frame_layout_of applies the same checks (except the buffer) */
	if (buflen >= 2048) {
		struct frame_layout lay;

		err = NULL;
		assert_int_equal(frame_layout_of(s, &lay, &err), -1);
		assert_non_null(err);
	}
}

static void test_invalid_specs(void **state)
{
	struct frame_spec s;

	make_spec(&CASES[0], &s);
	s.frame_size = 63;
	expect_reject(&s, 2048, "minimum 64");
	s.frame_size = 0;
	expect_reject(&s, 2048, "below the minimum");

	make_spec(&CASES[2], &s); /* IPv6/TCP needs 78 */
	s.frame_size = 77;
	expect_reject(&s, 2048, "minimum 78");

	make_spec(&CASES[0], &s);
	s.frame_size = 1518;
	expect_reject(&s, 1513, "buffer");
	s.frame_size = 70000;
	expect_reject(&s, 2048, "too large");

	make_spec(&CASES[0], &s);
	assert_int_equal(xp_addr_parse("fd00::2", &s.dst), 0);
	expect_reject(&s, 2048, "families differ");
	s.src.family = s.dst.family = 0;
	expect_reject(&s, 2048, "IPv4 or IPv6");

	make_spec(&CASES[0], &s);
	s.l4_proto = IPPROTO_ICMP;
	expect_reject(&s, 2048, "TCP or UDP");

	make_spec(&CASES[3], &s);
	s.tcp_syn_options = true;
	expect_reject(&s, 2048, "UDP");

	make_spec(&CASES[0], &s);
	s.vlan_id = 4095;
	expect_reject(&s, 2048, "VLAN");

	/* NULL err is allowed */
	s.vlan_id = 0;
	s.frame_size = 10;
	assert_int_equal(frame_build(&s, (uint8_t[64]){ 0 }, 64, NULL), 0);
}

static void test_buffer_exact_fit(void **state)
{
	struct frame_spec s;
	uint8_t buf[1600];
	const char *err = NULL;

	make_spec(&CASES[1], &s); /* 1518 -> 1514 bytes */
	assert_int_equal(frame_build(&s, buf, 1514, &err), 1514);
	assert_int_equal(frame_build(&s, buf, 1513, &err), 0);
	/* jumbo */
	s.frame_size = 9018;
	{
		static uint8_t big[9100];
		struct frame_layout lay;

		assert_int_equal(frame_build(&s, big, sizeof(big), &err), 9014);
		assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
		verify_checksums(big, &lay);
	}
	py_verify_done();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_csum_rfc1071_example),
		cmocka_unit_test(test_csum_odd_length),
		cmocka_unit_test(test_csum_ipv4_header_known),
		cmocka_unit_test(test_csum_matches_reference),
		cmocka_unit_test(test_csum_replace16_rfc1624),
		cmocka_unit_test(test_csum_replace16_vs_recompute),
		cmocka_unit_test(test_csum_l4_udp_zero_is_ffff),
		cmocka_unit_test(test_l1_l2_bits),
		cmocka_unit_test(test_golden_frames),
		cmocka_unit_test(test_set_ports_equals_fresh_build),
		cmocka_unit_test(test_set_ports_udp_ffff),
		cmocka_unit_test(test_set_saddr_equals_fresh_build),
		cmocka_unit_test(test_set_saddr_wrong_family),
		cmocka_unit_test(test_set_saddr_udp_ffff),
		cmocka_unit_test(test_set_seq_equals_fresh_build),
		cmocka_unit_test(test_frame_min_size),
		cmocka_unit_test(test_syn_option_defaults),
		cmocka_unit_test(test_invalid_specs),
		cmocka_unit_test(test_buffer_exact_fit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
