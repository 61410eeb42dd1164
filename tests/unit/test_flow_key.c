/*
 * Unit tests for the key of flows without stamps (frame/flow_key.c,
 * xp_key_choose): the fewest fields in the order DSCP, source port,
 * destination port, source address that give every picked flow keys of
 * its own; one flow needs none; the keys are the combinations the fields
 * take together (not their product); a random field and one with more
 * than 64 values stay out; two flows that cannot be told apart (the same
 * headers, or only a VLAN ID between them) refused with one line naming
 * both and the fields; the 64-combination bound; the IPv6 source folded as
 * the server folds it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "frame/flow_key.h"

static struct xp_key_plan plan;
static char err[512];

/* IPv4/UDP 198.18.1.2:sport -> 198.18.2.2:5201, DSCP dscp. */
static void flow(struct xp_flow_pat *fp, uint8_t dscp, uint16_t sport)
{
	struct xp_flow_hdr h = { .dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
				 .l4_proto = IPPROTO_UDP, .sport = sport, .dport = 5201, .dscp = dscp };
	assert_int_equal(xp_addr_parse("198.18.1.2", &h.src), 0);
	assert_int_equal(xp_addr_parse("198.18.2.2", &h.dst), 0);
	xp_flow_pat_init(fp, &h);
}

static struct xp_pattern incr(uint8_t width, xp_u128 start, uint32_t count)
{
	return (struct xp_pattern){ .kind = XP_PAT_INCREMENT, .width = width, .value = start, .step = 1, .count = count };
}

static int choose(struct xp_flow_pat *fp, const bool *pick, unsigned n)
{
	const struct xp_flow_pat *fps[8];
	static const char *const names[8] = { "a", "b", "c", "d", "e", "f", "g", "h" };
	for (unsigned i = 0; i < n; i++)
		fps[i] = &fp[i];
	err[0] = '\0';
	return xp_key_choose(fps, pick, names, n, &plan, err, sizeof(err));
}

/* The plan's key of flow f with the given dscp/sport, or -1. */
static int find(unsigned f, uint8_t dscp, uint16_t sport)
{
	for (unsigned i = 0; i < plan.n; i++)
		if (plan.flow[i] == f && plan.key[i].dscp == dscp && plan.key[i].sport == sport)
			return (int)i;
	return -1;
}

static void test_dscp_first(void **s)
{
	(void)s;
	struct xp_flow_pat fp[3];
	const bool pick[3] = { true, true, false };
	flow(&fp[0], 0, 20000);
	flow(&fp[1], 46, 20001);
	flow(&fp[2], 46, 20001); /* stamped: not picked, may share everything */
	assert_int_equal(choose(fp, pick, 3), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_DSCP); /* one field, the first that tells them apart */
	assert_int_equal(plan.n, 2);
	assert_true(find(0, 0, 0) >= 0);
	assert_true(find(1, 46, 0) >= 0);
}

static void test_sport_when_dscp_same(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	flow(&fp[0], 10, 20000);
	flow(&fp[1], 10, 20001);
	assert_int_equal(choose(fp, pick, 2), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_SPORT);
	assert_true(find(0, 0, 20000) >= 0 && find(1, 0, 20001) >= 0);
}

/* One flow needs no field: every frame of the test without a stamp is its. */
static void test_one_flow(void **s)
{
	(void)s;
	struct xp_flow_pat fp[1];
	const bool pick[1] = { true };
	flow(&fp[0], 0, 1);
	fp[0].f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 16, .min = 1, .max = 9999,
						    .seed = 3, .count = 5000 };
	assert_int_equal(choose(fp, pick, 1), 0);
	assert_int_equal(plan.mask, XP_KEY_ON);
	assert_int_equal(plan.n, 1);
	const bool none[1] = { false };
	assert_int_equal(choose(fp, none, 1), 0);
	assert_int_equal(plan.mask, 0);
	assert_int_equal(plan.n, 0);
}

/* DSCP 0..3 (increment) and sport 100, 101 (values) together: their
 * combinations over the frames, lcm 4: (0,100) (1,101) (2,100) (3,101),
 * not the product of 8; a second flow with DSCP 0..3 and sport 102 needs
 * both fields (DSCP alone meets, sport alone would do too but DSCP comes
 * first only as a lone field: sport is the one field that works). */
static void test_combinations(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	flow(&fp[0], 0, 100);
	fp[0].f[XP_FF_DSCP] = incr(6, 0, 4);
	fp[0].f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_VALUES, .width = 16, .nvalues = 2,
						    .values = { 100, 101 } };
	flow(&fp[1], 0, 102);
	fp[1].f[XP_FF_DSCP] = incr(6, 0, 4);
	assert_int_equal(choose(fp, pick, 2), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_SPORT);
	assert_int_equal(plan.n, 3); /* 100, 101 and 102 */
	/* Now both flows share sport 100 at some frames, and DSCP 0..3: only
	 * the pair of fields tells them apart, by their combinations. */
	fp[1].f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_VALUES, .width = 16, .nvalues = 2,
						    .values = { 101, 100 } };
	assert_int_equal(choose(fp, pick, 2), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_DSCP | XP_KEY_SPORT);
	assert_int_equal(plan.n, 8);
	assert_true(find(0, 0, 100) >= 0 && find(0, 1, 101) >= 0 && find(0, 2, 100) >= 0 && find(0, 3, 101) >= 0);
	assert_true(find(1, 0, 101) >= 0 && find(1, 1, 100) >= 0);
	assert_int_equal(find(0, 1, 100), -1);
}

/* Random fields stay out, whatever else: here sport is random in both
 * flows, and the destination port tells them apart. */
static void test_random_out(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	flow(&fp[0], 0, 1);
	flow(&fp[1], 0, 2);
	for (int i = 0; i < 2; i++)
		fp[i].f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 16, .min = 1, .max = 2,
							    .seed = 5, .count = 4 };
	fp[1].base.dport = 5202;
	fp[1].f[XP_FF_DPORT] = xp_pattern_fixed(16, 5202);
	assert_int_equal(choose(fp, pick, 2), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_DPORT);
}

/* The same headers: refused, one line naming both flows and the fields. */
static void test_same_refused(void **s)
{
	(void)s;
	struct xp_flow_pat fp[3];
	const bool pick[3] = { true, true, true };
	flow(&fp[0], 46, 20000);
	flow(&fp[1], 0, 20000);
	flow(&fp[2], 46, 20000);
	assert_int_equal(choose(fp, pick, 3), -1);
	assert_non_null(strstr(err, "flows \"a\" and \"c\" have the same dscp, sport, dport and src "
				    "(46, 20000, 5201, 198.18.1.2)"));
	assert_non_null(strstr(err, "give them stamps"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(plan.mask, 0);
}

/* Told apart only by a VLAN ID: not read (veth takes the outer tag), refused. */
static void test_vid_only_refused(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	for (int i = 0; i < 2; i++) {
		flow(&fp[i], 0, 7);
		fp[i].base.nvlan = 1;
		fp[i].base.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = (uint16_t)(100 * (i + 1)) };
		xp_flow_pat_init(&fp[i], &fp[i].base);
	}
	assert_int_equal(choose(fp, pick, 2), -1);
	assert_non_null(strstr(err, "flows \"a\" and \"b\" have the same dscp, sport, dport and src"));
}

/* Every field random or with more than 64 values: no field at all. */
static void test_no_field_refused(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	flow(&fp[0], 0, 1);
	flow(&fp[1], 1, 2);
	for (int i = 0; i < 2; i++) {
		fp[i].f[XP_FF_DSCP] = incr(6, 0, 64);   /* 64: still a candidate on its own */
		fp[i].f[XP_FF_SPORT] = incr(16, 1, 65); /* 65 values: out */
		fp[i].f[XP_FF_DPORT] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 16, .min = 1,
							    .max = 9, .seed = 1, .count = 1 };
		fp[i].f[XP_FF_SRC] = incr(32, 0xc6120102u, 100);
	}
	assert_int_equal(choose(fp, pick, 2), -1);
	assert_non_null(strstr(err, "flows \"a\" and \"b\" have the same dscp"));
	fp[0].f[XP_FF_DSCP] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 6, .min = 0, .max = 63,
						   .seed = 1, .count = 10 };
	assert_int_equal(choose(fp, pick, 2), -1);
	assert_non_null(strstr(err, "cannot be told apart without stamps"));
	assert_non_null(strstr(err, "\"a\" and \"b\""));
}

/* The 64-combination bound. Flow a: DSCP 0..7 with sport 0..8 together
 * (lcm 72: every pair); flow b: (DSCP 0, sport 9) and (8, 0). Each field
 * alone meets a's, dport and src are the same: only the pair tells them
 * apart, and a takes 72 pairs: refused, naming a. With a's sport 0..7
 * (lcm 8, the pairs (i, i)) the pair fits: 8 + 2 keys. */
static void test_bound(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	flow(&fp[0], 0, 0);
	flow(&fp[1], 0, 0);
	fp[0].f[XP_FF_DSCP] = incr(6, 0, 8);
	fp[0].f[XP_FF_SPORT] = incr(16, 0, 9);
	fp[1].f[XP_FF_DSCP] = (struct xp_pattern){ .kind = XP_PAT_VALUES, .width = 6, .nvalues = 2, .values = { 0, 8 } };
	fp[1].f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_VALUES, .width = 16, .nvalues = 2,
						    .values = { 9, 0 } };
	assert_int_equal(choose(fp, pick, 2), -1);
	assert_non_null(strstr(err, "at most 64 combinations"));
	assert_non_null(strstr(err, "flow \"a\" takes more"));
	fp[0].f[XP_FF_SPORT] = incr(16, 0, 8);
	assert_int_equal(choose(fp, pick, 2), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_DSCP | XP_KEY_SPORT);
	assert_int_equal(plan.n, 10);
	assert_true(find(1, 0, 9) >= 0 && find(1, 8, 0) >= 0 && find(0, 7, 7) >= 0);
}

/* IPv6 sources told apart by the fold the server computes (the XOR of the
 * address's four 32-bit words as they are on the wire). */
static void test_src6(void **s)
{
	(void)s;
	struct xp_flow_pat fp[2];
	const bool pick[2] = { true, true };
	const char *src[2] = { "2001:2::1", "2001:2::2" };
	for (int i = 0; i < 2; i++) {
		struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP, .sport = 1, .dport = 2 };
		assert_int_equal(xp_addr_parse(src[i], &h.src), 0);
		assert_int_equal(xp_addr_parse("2001:2::9", &h.dst), 0);
		xp_flow_pat_init(&fp[i], &h);
	}
	assert_int_equal(choose(fp, pick, 2), 0);
	assert_int_equal(plan.mask, XP_KEY_ON | XP_KEY_SRC);
	for (unsigned i = 0; i < 2; i++) {
		struct in6_addr a;
		uint32_t w[4];
		assert_int_equal(inet_pton(AF_INET6, src[plan.flow[i]], &a), 1);
		memcpy(w, &a, 16);
		assert_int_equal(plan.key[i].src, w[0] ^ w[1] ^ w[2] ^ w[3]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dscp_first),
		cmocka_unit_test(test_sport_when_dscp_same),
		cmocka_unit_test(test_one_flow),
		cmocka_unit_test(test_combinations),
		cmocka_unit_test(test_random_out),
		cmocka_unit_test(test_same_refused),
		cmocka_unit_test(test_vid_only_refused),
		cmocka_unit_test(test_no_field_refused),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_src6),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
