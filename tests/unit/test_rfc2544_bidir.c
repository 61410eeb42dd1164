/*
 * --bidir's throughput search, one per direction (user/rfc2544/search2.c),
 * driven by hand against simulated devices with a limit in one direction
 * only: each direction must end at its own limit (the limited one at the
 * device's, the other at the search's top or its sender's maximum), each
 * trial must offer each direction its own search's rate, and a loss in one
 * direction must not lower the other's bound.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "rfc2544/search.h"

enum dut_kind { DROPS, PUSHES_BACK };

struct dut {
	enum dut_kind kind;
	double capacity;   /* frames/s it forwards in this direction */
	double sender_max; /* the most this direction's sender offers */
};

/* One direction of a simulated 10-s trial at `rate` (2 % rate tolerance, as the client's). */
static struct xp_rfc_trial one_way(const struct dut *d, double rate)
{
	struct xp_rfc_trial t = { .target_pps = rate, .seconds = 10 };
	double offered = rate;
	if (offered > d->sender_max) {
		offered = d->sender_max;
		t.held_back_by = "sender";
	}
	if (d->kind == PUSHES_BACK && offered > d->capacity) {
		offered = d->capacity;
		t.held_back_by = "path";
	}
	t.offered_pps = offered;
	t.short_of_target = offered < rate * 0.98;
	t.sent = (uint64_t)(offered * t.seconds);
	t.received = t.sent;
	if (offered > d->capacity)
		t.received = t.sent - (uint64_t)ceil((offered - d->capacity) * t.seconds);
	return t;
}

/* A bidirectional trial at A->B rate ra and B->A rate rb. */
static struct xp_rfc_trial both(const struct dut *ab, const struct dut *ba, double ra, double rb)
{
	struct xp_rfc_trial t = one_way(ab, ra), r = one_way(ba, rb);
	t.rev = (struct xp_rfc_dir){ .on = true, .target_pps = rb, .sent = r.sent, .received = r.received,
				     .seconds = r.seconds, .offered_pps = r.offered_pps,
				     .short_of_target = r.short_of_target, .held_back_by = r.held_back_by };
	return t;
}

struct run {
	unsigned trials, differing;  /* trials; those whose two rates differed */
	double max_failed_ok[2];     /* the highest rate each direction was offered after the other failed */
};

static void drive(const struct dut *ab, const struct dut *ba, const double top[2], unsigned confirm,
		  struct xp_rfc_search2 *s, struct run *out)
{
	memset(out, 0, sizeof(*out));
	xp_rfc_search2_init(s, 0, top, 0.5, 0.1);
	xp_rfc_search2_confirm(s, confirm);
	double rate[2];
	while (xp_rfc_search2_next(s, rate)) {
		assert_true(rate[0] >= 1 && rate[1] >= 1);
		assert_true(rate[0] == floor(rate[0]) && rate[1] == floor(rate[1]));
		struct xp_rfc_trial t = both(ab, ba, rate[0], rate[1]);
		out->differing += rate[0] != rate[1];
		xp_rfc_search2_record(s, &t);
		assert_true(++out->trials < 80);
	}
}

static bool near(double got, double want, double pct)
{
	return fabs(got - want) <= want * pct / 100;
}

/* B->A drops above 100 kpps; A->B forwards anything up to the 1 Mpps top (a line rate both senders reach). */
static void test_limit_in_one_direction_only(void **state)
{
	struct dut open_ = { DROPS, 1e9, 2e6 }, lim = { DROPS, 100000, 2e6 };
	double top[2] = { 1e6, 1e6 };
	struct xp_rfc_search2 s;
	struct run r;
	drive(&open_, &lim, top, 0, &s, &r);
	/* B->A: its own limit, to the search's resolution; the device, not its sender. */
	assert_true(s.d[1].ndr_pps <= 100000 && near(s.d[1].ndr_pps, 100000, 0.5));
	assert_false(xp_rfc_search_sender_limited(&s.d[1], true));
	/* A->B: its own search passed at its top on the first trial and was never lowered by B->A's losses. */
	assert_true(s.d[0].ndr_pps == 1e6);
	assert_int_equal(s.d[0].trials, 1);
	assert_true(s.d[0].hi == 1e6);
	/* Every later trial offered A->B its NDR (held) and B->A its own search's rate: they differed. */
	assert_int_equal(s.held_trials[0], r.trials - 1);
	assert_int_equal(s.held_failed[0], 0);
	assert_true(r.differing == r.trials - 1 && r.trials > 5);
	/* The old combined-verdict search would have ended A->B's bound at B->A's limit: here the sum is 1.1 M. */
	assert_true(near(s.d[0].ndr_pps + s.d[1].ndr_pps, 1.1e6, 0.1));
}

/* The mirror image, and A->B's sender below the top: A->B ends at its sender's maximum, said as sender-limited. */
static void test_other_direction_at_its_sender_maximum(void **state)
{
	struct dut lim = { DROPS, 100000, 2e6 }, slow = { DROPS, 1e9, 700000 };
	double top[2] = { 1e6, 1e6 };
	struct xp_rfc_search2 s;
	struct run r;
	drive(&lim, &slow, top, 0, &s, &r);
	assert_true(s.d[0].ndr_pps <= 100000 && near(s.d[0].ndr_pps, 100000, 0.5));
	assert_false(xp_rfc_search_sender_limited(&s.d[0], false));
	/* B->A: as far as its sender goes (within 2 % + the resolution), and reported as the sender's limit. */
	assert_true(s.d[1].ndr_pps <= 700000 / 0.98 && s.d[1].ndr_pps >= 700000 * 0.99);
	assert_true(xp_rfc_search_sender_limited(&s.d[1], false));
	assert_true(s.d[1].sender_shorts > 0);
}

/* Calibrated tops that differ (each direction's own measured maximum): each search starts at its own. */
static void test_each_direction_its_own_top(void **state)
{
	struct dut a = { DROPS, 1e9, 2e6 }, b = { PUSHES_BACK, 250000, 2e6 };
	double top[2] = { 800000, 600000 };
	struct xp_rfc_search2 s;
	double rate[2];
	xp_rfc_search2_init(&s, 0, top, 0.5, 0.1);
	assert_true(xp_rfc_search2_next(&s, rate));
	assert_true(rate[0] == 800000 && rate[1] == 600000);
	struct run r;
	drive(&a, &b, top, 0, &s, &r);
	assert_true(s.d[0].ndr_pps == 800000);
	/* B->A pushed back (nothing lost, the sender slowed): found by the rate rule, not by loss. */
	assert_true(s.d[1].ndr_pps <= 250000 / 0.98 && s.d[1].ndr_pps >= 250000 * 0.99);
	assert_false(xp_rfc_search_sender_limited(&s.d[1], true)); /* the path pushed back, not the sender */
	assert_true(s.d[1].shorts > 0);
}

/* Both limited, at different rates: neither's loss moves the other's bound; each ends at its own limit. */
static void test_two_limits(void **state)
{
	struct dut a = { DROPS, 300000, 2e6 }, b = { DROPS, 120000, 2e6 };
	double top[2] = { 1e6, 1e6 };
	struct xp_rfc_search2 s;
	struct run r;
	drive(&a, &b, top, 0, &s, &r);
	assert_true(s.d[0].ndr_pps <= 300000 && near(s.d[0].ndr_pps, 300000, 0.5));
	assert_true(s.d[1].ndr_pps <= 120000 && near(s.d[1].ndr_pps, 120000, 0.5));
	assert_true(s.d[0].pdr_pps >= s.d[0].ndr_pps && s.d[1].pdr_pps >= s.d[1].ndr_pps);
}

/* --confirm-loss: a losing direction runs its rate again while the other goes on with its own search. */
static void test_confirm_per_direction(void **state)
{
	struct dut open_ = { DROPS, 1e9, 2e6 }, lim = { DROPS, 100000, 2e6 };
	double top[2] = { 1e6, 1e6 };
	struct xp_rfc_search2 s;
	double rate[2];
	xp_rfc_search2_init(&s, 0, top, 0.5, 0.1);
	xp_rfc_search2_confirm(&s, 1);
	assert_true(xp_rfc_search2_next(&s, rate));
	struct xp_rfc_trial t = both(&open_, &lim, rate[0], rate[1]);
	xp_rfc_search2_record(&s, &t); /* A->B passed at the top (done); B->A lost: it runs 1 Mpps again */
	assert_true(s.d[0].done);
	assert_true(xp_rfc_search2_repeating(&s, 1));
	assert_false(xp_rfc_search2_repeating(&s, 0));
	assert_true(xp_rfc_search2_next(&s, rate));
	assert_true(rate[0] == 1e6 && rate[1] == 1e6);
	struct run r;
	drive(&open_, &lim, top, 1, &s, &r);
	assert_true(near(s.d[1].ndr_pps, 100000, 0.5) && s.d[1].ndr_pps <= 100000);
	assert_true(s.d[1].repeats > 0);
	assert_true(s.d[0].ndr_pps == 1e6);
}

/* One direction did not run: both searches stop (the caller reports the error). */
static void test_error_ends_both(void **state)
{
	struct dut open_ = { DROPS, 1e9, 2e6 };
	double top[2] = { 1e6, 1e6 }, rate[2];
	struct xp_rfc_search2 s;
	xp_rfc_search2_init(&s, 0, top, 0.5, 0.1);
	struct xp_rfc_trial t = both(&open_, &open_, 1e6, 1e6);
	t.rev.error = 1;
	t.rev.sent = t.rev.received = 0;
	xp_rfc_search2_record(&s, &t);
	assert_false(xp_rfc_search2_next(&s, rate));
	/* The one-way view of each half. */
	t = both(&open_, &open_, 1e6, 5e5);
	struct xp_rfc_trial b = xp_rfc_trial_dir(&t, 1);
	assert_true(b.target_pps == 5e5 && b.sent == t.rev.sent && !b.rev.on);
	assert_false(xp_rfc_trial_dir(&t, 0).rev.on);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_limit_in_one_direction_only),
		cmocka_unit_test(test_other_direction_at_its_sender_maximum),
		cmocka_unit_test(test_each_direction_its_own_top),
		cmocka_unit_test(test_two_limits),
		cmocka_unit_test(test_confirm_per_direction),
		cmocka_unit_test(test_error_ends_both),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
