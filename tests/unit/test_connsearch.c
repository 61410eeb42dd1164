/*
 * The connection searches' bookkeeping (user/connsearch/search.c) against
 * simulated devices: one with a connection-rate limit that drops the SYNs
 * above it, one whose table refuses new connections past a size, a sender
 * slower than the device, a teardown whose closes fail above a rate; and the
 * drained-table rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "connsearch/search.h"

/* One simulated 10-s rate trial against a limit of limit_cps (SYNs above it
 * dropped, so timed out); the sender reaches at most sender_max. */
static struct xp_cs_trial rate_trial(enum xp_cs_mode mode, double limit_cps, double sender_max, double cps)
{
	struct xp_cs_trial t = { .mode = mode, .target_cps = cps, .seconds = 10 };
	double offered = cps < sender_max ? cps : sender_max;
	t.offered_cps = offered;
	t.short_of_target = offered < cps * 0.98;
	t.held_back_by = t.short_of_target ? "sender" : NULL;
	t.started = (uint64_t)(offered * 10);
	uint64_t ok = offered <= limit_cps ? t.started : (uint64_t)(limit_cps * 10);
	t.established = ok;
	t.fail_timeout = t.started - ok;
	t.closed = ok;
	return t;
}

static double run_rate(enum xp_cs_mode mode, double limit, double sender_max, double max, double res, unsigned *n)
{
	struct xp_rfc_search s;
	xp_rfc_search_init(&s, 100, max, res, 0);
	double r;
	*n = 0;
	while ((r = xp_rfc_search_next(&s)) > 0 && *n < 64) {
		struct xp_cs_trial t = rate_trial(mode, limit, sender_max, floor(r));
		struct xp_rfc_trial rt = xp_cs_as_rfc(&t);
		xp_rfc_search_record(&s, &rt);
		(*n)++;
	}
	return s.ndr_pps;
}

/* A limit of 20000/s under a sender that reaches 1 M/s: found within the 1 % asked, from below. */
static void test_rate_search_finds_limit(void **state)
{
	unsigned n;
	double found = run_rate(XP_CS_RATE, 20000, 1e6, 1e6, 1, &n);
	assert_true(found <= 20000 && found >= 20000 * 0.99);
	assert_true(n > 3 && n < 30);
	/* The same for teardown. */
	found = run_rate(XP_CS_TEARDOWN, 7000, 1e6, 1e6, 1, &n);
	assert_true(found <= 7000 && found >= 7000 * 0.99);
}

/* A device above the sender: the top passes, one trial, the search says so. */
static void test_rate_search_device_above_sender(void **state)
{
	unsigned n;
	double found = run_rate(XP_CS_RATE, 5e6, 2e6, 2e6, 1, &n);
	assert_int_equal(n, 1);
	assert_true(found == 2e6);
}

/* Verdicts: a single failed connection fails a trial; a short trial without
 * failures is no verdict on its rate; capacity ignores the opening rate. */
static void test_judge(void **state)
{
	struct xp_cs_trial t = { .mode = XP_CS_RATE, .target_cps = 1000, .started = 10000, .established = 10000 };
	assert_int_equal(xp_cs_judge(&t), XP_RFC_PASS);
	t.established = 9999;
	assert_int_equal(xp_cs_judge(&t), XP_RFC_LOSS);
	assert_int_equal(xp_cs_failed(&t), 1);
	t.established = 10000;
	t.in_flight = 1; /* still waiting at the end: not a completed connection */
	assert_int_equal(xp_cs_judge(&t), XP_RFC_LOSS);
	t.in_flight = 0;
	t.short_of_target = true;
	assert_int_equal(xp_cs_judge(&t), XP_RFC_SHORT);
	t.mode = XP_CS_CAPACITY;
	t.want = 10000;
	t.held = 10000;
	assert_int_equal(xp_cs_judge(&t), XP_RFC_PASS);
	t.held = 9000;
	assert_int_equal(xp_cs_failed(&t), 1000);
	assert_int_equal(xp_cs_judge(&t), XP_RFC_LOSS);
	/* Teardown: established but the close failed counts as failed. */
	struct xp_cs_trial d = { .mode = XP_CS_TEARDOWN, .started = 500, .established = 500, .closed = 498,
				 .fin_timeout = 2 };
	assert_int_equal(xp_cs_ok(&d), 498);
	assert_int_equal(xp_cs_failed(&d), 2);
	d.closed = 600; /* duplicates never count above the handshakes */
	d.fin_timeout = 0;
	assert_int_equal(xp_cs_ok(&d), 500);
	assert_int_equal(xp_cs_judge(&d), XP_RFC_PASS);
	struct xp_cs_trial e = { .mode = XP_CS_RATE, .error = 1, .started = 5 };
	assert_int_equal(xp_cs_judge(&e), XP_RFC_ERROR);
	struct xp_rfc_trial rt = xp_cs_as_rfc(&t);
	assert_int_equal(rt.sent, 10000);
	assert_int_equal(rt.received, 9000);
}

/* A table of `cap` entries: a hold of want holds min(want, cap). */
static struct xp_cs_trial cap_trial(uint64_t cap, uint64_t want)
{
	struct xp_cs_trial t = { .mode = XP_CS_CAPACITY, .target_cps = 5000, .want = want, .started = want };
	t.held = want < cap ? want : cap;
	t.established = t.held;
	t.fail_timeout = want - t.held;
	return t;
}

static uint64_t run_cap(uint64_t cap, uint64_t max, double res, unsigned *n, bool *at_max)
{
	struct xp_cs_cap c;
	xp_cs_cap_init(&c, max, res);
	uint64_t want;
	*n = 0;
	while ((want = xp_cs_cap_next(&c)) > 0 && *n < 64) {
		struct xp_cs_trial t = cap_trial(cap, want);
		xp_cs_cap_record(&c, &t);
		(*n)++;
	}
	return xp_cs_cap_result(&c, at_max);
}

/* A table of 12345 under -P 50000: the first trial reaches 12345, the next
 * confirms it, one more just above fails: three trials, exact. */
static void test_capacity_search(void **state)
{
	unsigned n;
	bool at_max;
	assert_int_equal(run_cap(12345, 50000, 1, &n, &at_max), 12345);
	assert_false(at_max);
	assert_int_equal(n, 3);
	/* A bigger table than -P: one trial, a lower bound. */
	assert_int_equal(run_cap(100000, 50000, 1, &n, &at_max), 50000);
	assert_true(at_max);
	assert_int_equal(n, 1);
	/* A table of 1: even a hold of 2 fails. */
	assert_int_equal(run_cap(1, 50000, 1, &n, &at_max), 1);
	/* Table 0: nothing held, nothing found. */
	assert_int_equal(run_cap(0, 1000, 1, &n, &at_max), 0);
	assert_false(at_max);
}

/* A table that holds fewer when pushed hard (it drops more than its excess):
 * the hint fails, and the bisection still finds the size to the resolution. */
static void test_capacity_search_without_hint(void **state)
{
	struct xp_cs_cap c;
	xp_cs_cap_init(&c, 40000, 1);
	uint64_t want, cap = 20000;
	unsigned n = 0;
	while ((want = xp_cs_cap_next(&c)) > 0 && n < 64) {
		struct xp_cs_trial t = cap_trial(cap, want);
		if (want > cap)
			t.held = cap / 2; /* overloaded: the hint is wrong */
		t.fail_timeout = want - t.held;
		xp_cs_cap_record(&c, &t);
		n++;
	}
	uint64_t got = xp_cs_cap_result(&c, NULL);
	assert_true(got <= cap && got >= cap * 0.99);
	assert_true(n < 20);
}

static void test_drained_and_modes(void **state)
{
	assert_true(xp_cs_drained(100, 90));
	assert_true(xp_cs_drained(90 + XP_CS_DRAIN_SLACK, 90));
	assert_false(xp_cs_drained(91 + XP_CS_DRAIN_SLACK, 90));
	enum xp_cs_mode m;
	assert_int_equal(xp_cs_mode_parse("rate", &m), 0);
	assert_int_equal(m, XP_CS_RATE);
	assert_int_equal(xp_cs_mode_parse("capacity", &m), 0);
	assert_int_equal(m, XP_CS_CAPACITY);
	assert_int_equal(xp_cs_mode_parse("teardown", &m), 0);
	assert_int_equal(m, XP_CS_TEARDOWN);
	assert_int_equal(xp_cs_mode_parse("none", &m), -1);
	assert_int_equal(xp_cs_mode_parse("Rate", &m), -1);
	/* Capacity trials last long enough to open every connection, then 2 s. */
	assert_true(fabs(xp_cs_cap_seconds(50000, 10000, 3) - 7) < 1e-9);
	assert_true(fabs(xp_cs_cap_seconds(100, 10000, 3) - 3) < 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rate_search_finds_limit),
		cmocka_unit_test(test_rate_search_device_above_sender),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_capacity_search),
		cmocka_unit_test(test_capacity_search_without_hint),
		cmocka_unit_test(test_drained_and_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
