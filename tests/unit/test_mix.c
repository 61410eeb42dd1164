/*
 * Mixed frame sizes (user/frame/mix.c) and the options that take them: -l
 * and --sizes. The figures are checked against values worked out by hand
 * here: IMIX 7:4:1 of 64/570/1518 has mean (7*64 + 4*570 + 1518) / 12 =
 * 4246 / 12 = 353.833 bytes; at 1 Mframes/s that is 353.833 * 8 = 2.83067
 * Gbit/s at L2 and (353.833 + 20) * 8 = 2.99067 Gbit/s at L1.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"
#include "tests/unit/cli_parse.h"
#include "frame/mix.h"
#include "search/search.h"


static void test_imix(void **state)
{
	struct xp_mix m;
	char err[200], buf[160];
	static const unsigned want[12] = { 64, 570, 64, 64, 570, 64, 1518, 64, 570, 64, 570, 64 };
	unsigned count[3] = { 0 };

	(void)state;
	assert_int_equal(xp_mix_parse("imix", &m, err, sizeof(err)), 0);
	assert_true(m.imix);
	assert_int_equal(m.n, 3);
	assert_int_equal(m.plen, 12);
	for (unsigned k = 0; k < 12; k++) {
		assert_int_equal(m.size[m.pattern[k]], want[k]);
		count[m.pattern[k]]++;
	}
	assert_int_equal(count[0], 7);
	assert_int_equal(count[1], 4);
	assert_int_equal(count[2], 1);
	/* Spread: no two 570s and never the 1518 next to a 570 in a row of more than two 64s. */
	for (unsigned k = 0; k < 12; k++)
		assert_false(m.size[m.pattern[k]] != 64 && m.size[m.pattern[(k + 1) % 12]] != 64);
	assert_true(fabs(xp_mix_mean(&m) - 4246.0 / 12) < 1e-9);
	assert_true(fabs(xp_mix_mean(&m) - 353.8333) < 1e-3);
	assert_int_equal(xp_mix_min(&m), 64);
	assert_int_equal(xp_mix_max(&m), 1518);
	assert_string_equal(xp_mix_name(&m, buf, sizeof(buf)), "imix (64:7,570:4,1518:1)");
	/* Bytes without FCS: a pattern is 4246 - 12*4 = 4198; 13 frames add one 60. */
	assert_int_equal(xp_mix_bytes(&m, 12), 4198);
	assert_int_equal(xp_mix_bytes(&m, 13), 4198 + 60);
	assert_int_equal(xp_mix_bytes(&m, 0), 0);
	assert_int_equal(xp_mix_bytes(&m, 7), 60 + 566 + 60 + 60 + 566 + 60 + 1514);
	assert_int_equal(xp_mix_bytes(&m, 1200000), 100000ull * 4198);
}

static void test_bit_rates(void **state)
{
	struct xp_mix m;
	char err[200];

	(void)state;
	assert_int_equal(xp_mix_parse("imix", &m, err, sizeof(err)), 0);
	assert_true(fabs(xp_mix_l2_bps(&m, 1e6) - 2830666666.67) < 1);
	assert_true(fabs(xp_mix_l1_bps(&m, 1e6) - 2990666666.67) < 1);
	/* The RFC 2544 tables' functions with the mean give the same. */
	assert_true(fabs(xp_rfc_l1_bps(1e6, xp_mix_mean(&m)) - 2990666666.67) < 1);
	assert_true(fabs(xp_rfc_l2_bps(1e6, xp_mix_mean(&m)) - 2830666666.67) < 1);
	/* 10 Gbit/s line rate of IMIX: 1e10 / (373.833 * 8) = 3343736 frames/s. */
	assert_true(fabs(xp_rfc_line_pps(10e9, xp_mix_mean(&m)) - 3343736.07) < 1);
	/* -b in bits/s means frames of the mean size. */
	struct xp_rate r = { XP_RATE_BPS_L1, 2990666666.67 };
	assert_true(fabs(xp_rate_to_pps(&r, xp_mix_mean(&m)) - 1e6) < 1);
}

static void test_user_mix(void **state)
{
	struct xp_mix m;
	char err[200], buf[160];

	(void)state;
	/* Weights reduced by their gcd: 58:33:9 stays, 14:8:2 is IMIX. */
	assert_int_equal(xp_mix_parse("64:14,570:8,1518:2", &m, err, sizeof(err)), 0);
	assert_false(m.imix);
	assert_int_equal(m.plen, 12);
	assert_string_equal(xp_mix_spec(&m, buf, sizeof(buf)), "64:7,570:4,1518:1");
	assert_int_equal(xp_mix_parse("64:58,594:33,1518:9", &m, err, sizeof(err)), 0);
	assert_int_equal(m.plen, 100);
	unsigned c[3] = { 0 };
	for (unsigned k = 0; k < m.plen; k++)
		c[m.pattern[k]]++;
	assert_int_equal(c[0], 58);
	assert_int_equal(c[1], 33);
	assert_int_equal(c[2], 9);
	/* Any window of 12 frames holds the 1518s within one of their share (9 %: 0..2). */
	for (unsigned k = 0; k < m.plen; k++) {
		unsigned big = 0;
		for (unsigned j = 0; j < 12; j++)
			big += m.pattern[(k + j) % m.plen] == 2;
		assert_true(big <= 2);
	}
	assert_true(fabs(xp_mix_mean(&m) - (64 * 58 + 594 * 33 + 1518 * 9) / 100.0) < 1e-9);
	assert_int_equal(xp_mix_parse("1518:1,64:1", &m, err, sizeof(err)), 0);
	assert_int_equal(m.size[m.pattern[0]], 1518); /* the order given, on ties */
	assert_int_equal(m.size[m.pattern[1]], 64);
}

static void test_mix_errors(void **state)
{
	static const struct { const char *s, *word; } bad[] = {
		{ "64:7", "two sizes or more" },
		{ "64:7,", "SIZE:WEIGHT" },
		{ ",64:7,128:1", "SIZE:WEIGHT" },
		{ "64:7,,128:1", "SIZE:WEIGHT" },
		{ "64:0,128:1", "weight '0'" },
		{ "64:x,128:1", "weight 'x'" },
		{ "64:-1,128:1", "weight '-1'" },
		{ "64:1025,128:1", "1..1024" },
		{ "64:7,64:1", "given twice" },
		{ "63:1,128:1", "frame size" },
		{ "64:1,128", "'128' is not SIZE:WEIGHT" },
		{ "64:1:2,128:1", "is not SIZE:WEIGHT" },
		{ ":1,128:1", "is not SIZE:WEIGHT" },
		{ "64:200,128:57", "add up to 257" },
		{ "64:1,65:1,66:1,67:1,68:1,69:1,70:1,71:1,72:1", "at most 8 sizes" },
		{ "imax", "SIZE:WEIGHT" },
	};
	struct xp_mix m;
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (xp_mix_parse(bad[i].s, &m, err, sizeof(err)) != -1 || !strstr(err, bad[i].word))
			fail_msg("'%s': message '%s' (want '%s')", bad[i].s, err, bad[i].word);
		assert_null(strchr(err, '\n'));
	}
	assert_false(xp_mix_syntax("64"));
	assert_true(xp_mix_syntax("imix"));
	assert_true(xp_mix_syntax("64:1"));
}

static void test_options(void **state)
{
	static struct xp_opts o;
	char err[256];

	(void)state;
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -l imix", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.traffic[0].mix.n, 3);
	assert_int_equal(o.spec.traffic[0].frame_size, 1518); /* the template: the largest */
	assert_true(o.spec.traffic[0].frame_size_set);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -l 64:3,1518:1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.traffic[0].mix.n, 2);
	assert_int_equal(o.spec.traffic[0].mix.plen, 4);
	/* The last -l wins, a plain size clears the mix. */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -l imix -l 128", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.traffic[0].mix.n, 0);
	assert_int_equal(o.spec.traffic[0].frame_size, 128);

	assert_int_equal(parse("xdpperf -c 198.19.1.2 --rfc2544 --sizes imix", &o, err, sizeof(err)), 0);
	assert_int_equal(o.rfc.nsizes, 1);
	assert_int_equal(o.rfc.sizes[0], 0);
	assert_true(o.rfc.mix.imix);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --rfc2544 --sizes 64,imix,1518", &o, err, sizeof(err)), 0);
	assert_int_equal(o.rfc.nsizes, 3);
	assert_int_equal(o.rfc.sizes[0], 64);
	assert_int_equal(o.rfc.sizes[1], 0);
	assert_int_equal(o.rfc.sizes[2], 1518);
	assert_int_equal(o.rfc.mix.plen, 12);
	/* SIZE:WEIGHT pairs: the whole list is one mix. */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --rfc2544 --sizes 64:7,570:4,1518:1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.rfc.nsizes, 1);
	assert_int_equal(o.rfc.sizes[0], 0);
	assert_false(o.rfc.mix.imix);
	assert_int_equal(o.rfc.mix.n, 3);

	static const struct { const char *line, *word; } bad[] = {
		{ "xdpperf -c 198.19.1.2 -l 64:7", "two sizes or more" },
		{ "xdpperf -c 198.19.1.2 -l 64:0,128:1", "weight" },
		{ "xdpperf -c 198.19.1.2 --rfc2544 --sizes imix,imix", "imix given twice" },
		{ "xdpperf -c 198.19.1.2 --rfc2544 --sizes 64,64:7,128:1", "is not SIZE:WEIGHT" },
		{ "xdpperf -c 198.19.1.2 --rfc2544 --sizes 64:7,570:x", "weight 'x'" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int r = parse(bad[i].line, &o, err, sizeof(err));
		if (r != 2 || !strstr(err, bad[i].word))
			fail_msg("'%s': result %d, message '%s' (want 2 and '%s')", bad[i].line, r, err, bad[i].word);
		assert_null(strchr(err, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_imix),
		cmocka_unit_test(test_bit_rates),
		cmocka_unit_test(test_user_mix),
		cmocka_unit_test(test_mix_errors),
		cmocka_unit_test(test_options),
	};
	return cmocka_run_group_tests_name("mix", tests, NULL, NULL);
}
