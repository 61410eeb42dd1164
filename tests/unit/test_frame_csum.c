/*
 * Unit tests for user/frame/csum.c: checksums against published values
 * (RFC 1071, RFC 1624, a textbook IPv4 header) and the tests' one RFC 1071
 * reference (ref_csum, tests/lib/ref_sum.h). The frames built with them
 * are checked in test_frame_build.c and test_frame_rewrite.c.
 */
#include "tests/unit/frame_fixture.h"

/* The bytes a checksum value (frame order) occupies in the frame, as a
 * big-endian number: makes comparisons with published values readable. */
static uint16_t as_be(uint16_t frame_order)
{
	return ntohs(frame_order);
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
