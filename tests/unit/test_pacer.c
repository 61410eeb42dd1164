/*
 * The sending engines' pacer (user/engine/pacer.c), driven by a fake clock:
 * exact frame counts for a steady rate, bursts, stalls shorter and longer
 * than the catch-up cap, and the phase offsets of several threads. No real
 * time passes: every `now` is made up.
 *
 * Fake times are chosen half a step away from the instants where a unit
 * becomes due, so rounding in the double arithmetic cannot move a unit from
 * one step to the next and every count below is exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>

#include "engine/pacer.h"

#define T0 100.0 /* the fake CLOCK_MONOTONIC at the start */
#define US 1e-6

static void init(struct xp_pacer *p, double pps, unsigned burst, unsigned thread, unsigned nthreads)
{
	struct xp_pacer_cfg c = { .pps = pps, .burst = burst, .thread = thread, .nthreads = nthreads,
				  .unpaced = 16384 };
	xp_pacer_init(p, &c, T0);
}

/* Everything due at `now`, sent whole units at a time. Returns the frames. */
static uint64_t drain(struct xp_pacer *p, double now)
{
	uint64_t n = 0;
	uint32_t k;
	while ((k = xp_pacer_poll(p, now, NULL)) > 0) {
		assert_int_equal(k, p->unit); /* whole units only when nobody sends in pieces */
		xp_pacer_sent(p, k);
		n += k;
		assert_true(n <= 100000000); /* no endless grant */
	}
	return n;
}

static void assert_near(double got, double want)
{
	if (fabs(got - want) > 1e-9)
		fail_msg("%.12f, wanted %.12f", got, want);
}

/* Unit sizes and the catch-up cap. */
static void test_units(void **state)
{
	struct xp_pacer p;
	init(&p, 1e6, 0, 0, 1);
	assert_int_equal(p.unit, 100); /* 100 us of frames */
	assert_near(p.cap, 20000);     /* 20 ms of frames */
	init(&p, 17000, 0, 0, 1);
	assert_int_equal(p.unit, 2);   /* 1.7 frames round to 2 */
	init(&p, 5000, 0, 0, 1);
	assert_int_equal(p.unit, 1);   /* less than one frame per slice: one */
	init(&p, 10, 0, 0, 1);
	assert_int_equal(p.unit, 1);
	assert_near(p.cap, 2);         /* never less than two units */
	init(&p, 1e5, 1000, 0, 1);
	assert_int_equal(p.unit, 1000); /* --burst */
	assert_near(p.cap, 2000);
	init(&p, 1e3, 1000, 0, 1);
	assert_near(p.cap, 2000);       /* 20 ms would be 20 frames: two bursts instead */
}

/* 1 Mpps: a unit of 100 every 100 us, 1000 frames in every millisecond,
 * exactly 1 000 000 in the second; 1 kpps: one frame per millisecond. */
static void test_steady_rate(void **state)
{
	struct xp_pacer p;
	double wait = -1;
	init(&p, 1e6, 0, 0, 1);
	assert_int_equal(drain(&p, T0), 100); /* the first unit is due at once */
	assert_int_equal(xp_pacer_poll(&p, T0, &wait), 0);
	assert_near(wait, 100 * US);

	uint64_t total = 100, ms = 100;
	long last = 0; /* step of the last grant (the first: at step 0) */
	for (long i = 0; i < 1000000; i++) {
		double now = T0 + i * US + 0.5 * US;
		uint64_t n = drain(&p, now);
		if (n) {
			assert_int_equal(n, 100);
			if (i > 0)
				assert_int_equal(i - last, 100); /* evenly spaced: not a burst per second */
			last = i;
		}
		total += n;
		ms += n;
		if (i % 1000 == 999) { /* the last step of this millisecond */
			assert_int_equal(ms, 1000);
			ms = 0;
		}
	}
	assert_int_equal(total, 1000000); /* the unit due at 1 s itself is the next second's */
	assert_int_equal(p.sent, total);

	init(&p, 1000, 0, 0, 1);
	total = drain(&p, T0);
	for (long i = 0; i < 1000000; i++) {
		uint64_t n = drain(&p, T0 + i * US + 0.5 * US);
		assert_true(n == 0 || (n == 1 && i % 1000 == 0)); /* 1 frame per ms, on time */
		assert_true(i % 1000 || !i || n == 1);
		total += n;
	}
	assert_int_equal(total, 1000);
}

/* --burst 1000 at 100 kpps: 1000 frames every 10 ms. A unit may be sent in
 * pieces (ring batches): the rest is handed out whatever the time, and the
 * next unit is due a full period after the last one, not after the last piece. */
static void test_burst(void **state)
{
	struct xp_pacer p;
	double wait = -1;
	init(&p, 1e5, 1000, 0, 1);
	uint32_t left = 1000;
	for (int k = 0; k < 15; k++) {
		assert_int_equal(xp_pacer_poll(&p, T0 + k * US, NULL), left);
		xp_pacer_sent(&p, 64);
		left -= 64;
	}
	assert_int_equal(left, 40);
	assert_int_equal(xp_pacer_poll(&p, T0 + 20 * US, NULL), 40);
	xp_pacer_sent(&p, 40);
	assert_int_equal(xp_pacer_poll(&p, T0 + 20 * US, &wait), 0);
	assert_near(wait, 10e-3 - 20 * US);
	assert_int_equal(xp_pacer_poll(&p, T0 + 5e-3, &wait), 0);
	assert_near(wait, 5e-3);
	assert_int_equal(xp_pacer_poll(&p, T0 + 10e-3 - 0.5 * US, NULL), 0);
	assert_int_equal(xp_pacer_poll(&p, T0 + 10e-3 + 0.5 * US, NULL), 1000);
	xp_pacer_sent(&p, 1000);

	/* The rest of the second: 100 bursts in all, each exactly 10 ms after the last. */
	uint64_t total = 2000;
	long last = 10000;
	for (long i = 10001; i < 1000000; i++) {
		uint64_t n = drain(&p, T0 + i * US + 0.5 * US);
		if (n) {
			assert_int_equal(n, 1000);
			assert_int_equal(i - last, 10000);
			last = i;
		}
		total += n;
	}
	assert_int_equal(total, 100 * 1000);
}

/* Steady at 100 kpps (units of 10, cap 2000 = 20 ms) up to 100 ms, then no
 * call for `stall` seconds, then everything due at that instant. Returns
 * the frames sent at once after the stall; *total is the count at 1 s. */
static uint64_t run_stall(double stall, double *resume, uint64_t *total)
{
	struct xp_pacer p;
	init(&p, 1e5, 0, 0, 1);
	uint64_t n = drain(&p, T0);
	long i;
	for (i = 0; i < 100000; i++)
		n += drain(&p, T0 + i * US + 0.5 * US);
	assert_int_equal(n, 10000); /* 100 ms of frames (the unit due at 0 included) */
	*resume = 0.1 + stall + 0.5 * US;
	uint64_t burst = drain(&p, T0 + *resume);
	n += burst;
	/* After the catch-up the schedule goes on evenly, units 100 us apart. */
	double wait = -1;
	assert_int_equal(xp_pacer_poll(&p, T0 + *resume, &wait), 0);
	assert_true(wait > 0 && wait <= 100 * US + 1e-9);
	for (double x = *resume + wait + 0.5 * US; x < 1.0; x += US)
		n += drain(&p, T0 + x);
	*total = n;
	return burst;
}

/* A 10 ms stall is within the cap: made up at once (1000 frames, and the 10
 * due meanwhile), nothing lost over the second. */
static void test_stall_within_cap(void **state)
{
	double resume;
	uint64_t total;
	uint64_t burst = run_stall(10e-3, &resume, &total);
	assert_int_equal(burst, 1010);
	assert_int_equal(total, 100000); /* as without the stall */
}

/* A 50 ms stall: only the cap (20 ms, 2000 frames) is made up; the 3010
 * frames beyond it are forgiven, and the schedule restarts from there: the
 * next unit is due one period after the catch-up. */
static void test_stall_beyond_cap(void **state)
{
	double resume;
	uint64_t total;
	uint64_t burst = run_stall(50e-3, &resume, &total);
	assert_int_equal(burst, 2000);
	assert_int_equal(total, 100000 - 3010);

	/* The same, looking at the wait right after the catch-up. */
	struct xp_pacer p;
	double wait = -1;
	init(&p, 1e5, 0, 0, 1);
	assert_int_equal(drain(&p, T0), 10);
	assert_int_equal(drain(&p, T0 + 1.0), 2000); /* a second's stall: 20 ms made up */
	assert_int_equal(xp_pacer_poll(&p, T0 + 1.0, &wait), 0);
	assert_near(wait, 100 * US);
	assert_int_equal(drain(&p, T0 + 1.0 + 100 * US - 0.5 * US), 0);
	assert_int_equal(drain(&p, T0 + 1.0 + 100 * US + 0.5 * US), 10);
}

/* Smooth catch-up (cfg.catchup_excess, the RFC 2544 trials' 1 %): at 100
 * kpps a 20 ms stall (2000 frames behind) is made up 5 ms of frames (500)
 * at once, then at 1 % above the rate: 1 kpps more, so after another
 * second 1000 more of the 2000 are made up, never more than 1.01 x the
 * time's frames in any stretch; within the 20 ms cap nothing is forgiven,
 * and a sleep's jitter (0.5 ms late) is made up at once. */
static void test_smooth_catchup(void **state)
{
	struct xp_pacer p;
	struct xp_pacer_cfg c = { .pps = 1e5, .unpaced = 16384, .catchup_excess = 0.01 };
	xp_pacer_init(&p, &c, T0);
	assert_near(p.allow_max, 500);
	uint64_t n = drain(&p, T0);
	assert_int_equal(n, 10);
	/* 0.5 ms late: 5 units due, all at once (within the 5 ms bucket). */
	n += drain(&p, T0 + 500 * US + 0.5 * US);
	assert_int_equal(n, 60);
	/* Steady to 100 ms. */
	for (long i = 501; i < 100000; i++)
		n += drain(&p, T0 + i * US + 0.5 * US);
	assert_int_equal(n, 10000);
	/* A 20 ms stall: at most 500 frames at once, not 2000. */
	double t = 0.120 + 0.5 * US;
	uint64_t first = drain(&p, T0 + t);
	assert_true(first <= 500 && first >= 490);
	n += first;
	/* Then 1 s at 1 us steps: every 10 ms at most 1.01 x 1000 frames (+ one unit). */
	uint64_t win = 0;
	double w0 = t;
	for (double x = t + US; x < t + 1.0; x += US) {
		uint64_t k = drain(&p, T0 + x);
		n += k;
		win += k;
		if (x - w0 >= 10e-3) {
			assert_true(win <= 1010 + 10);
			win = 0;
			w0 = x;
		}
	}
	/* By 1.12 s: 112000 due; made up the first grant's 500 and 1 % of 1 s, 1000: 500 behind. */
	double behind = 112000.0 - (double)n;
	assert_true(behind > 400 && behind < 600);
	/* (The plain pacer makes the same stall up in one 2000-frame grant: test_stall_beyond_cap.) */
	c.pps = 200; /* at 200 fps the bucket is two units (5 ms would be one frame) */
	xp_pacer_init(&p, &c, T0);
	assert_near(p.allow_max, 2);
	c.pps = 1e5;
	c.coalesce = true; /* the live engine's one grant is bounded by the bucket too */
	xp_pacer_init(&p, &c, T0);
	assert_int_equal(xp_pacer_poll(&p, T0, NULL), 10);
	xp_pacer_sent(&p, 10);
	assert_int_equal(xp_pacer_poll(&p, T0 + 0.015, NULL), 500);
}

/* Four threads at 10 kpps each (one frame per 100 us): thread k's first frame
 * is due k/4 of a period (25 us) after thread 0's, so together they send
 * every 25 us in turn: 0, 1, 2, 3, 0, 1, ... */
static void test_thread_phases(void **state)
{
	struct xp_pacer p[4];
	double wait = -1;
	for (unsigned k = 0; k < 4; k++)
		init(&p[k], 1e4, 0, k, 4);
	assert_int_equal(drain(&p[0], T0), 1);
	for (unsigned k = 1; k < 4; k++) {
		assert_int_equal(xp_pacer_poll(&p[k], T0, &wait), 0);
		assert_near(wait, k * 25 * US);
	}
	unsigned next = 1, sends = 1;
	uint64_t count[4] = { 1, 0, 0, 0 };
	for (long i = 0; i < 10000; i++) {
		double now = T0 + i * US + 0.5 * US;
		for (unsigned k = 0; k < 4; k++) {
			uint64_t n = drain(&p[k], now);
			if (!n)
				continue;
			assert_int_equal(n, 1);
			assert_int_equal(k, next); /* in turn */
			assert_int_equal(i, (long)sends * 25); /* every 25 us */
			next = (next + 1) % 4;
			sends++;
			count[k]++;
		}
	}
	for (unsigned k = 0; k < 4; k++)
		assert_int_equal(count[k], 100); /* 10 ms at 10 kpps each */

	/* Bursts are offset by the same fraction of their period: 2 threads,
	 * 1000 frames every 10 ms each: thread 1's bursts 5 ms after thread 0's. */
	struct xp_pacer b[2];
	for (unsigned k = 0; k < 2; k++)
		init(&b[k], 1e5, 1000, k, 2);
	assert_int_equal(drain(&b[0], T0), 1000);
	assert_int_equal(xp_pacer_poll(&b[1], T0, &wait), 0);
	assert_near(wait, 5e-3);
	assert_int_equal(drain(&b[1], T0 + 5e-3 - 0.5 * US), 0);
	assert_int_equal(drain(&b[1], T0 + 5e-3 + 0.5 * US), 1000);
	assert_int_equal(drain(&b[0], T0 + 5e-3 + 0.5 * US), 0);
	assert_int_equal(drain(&b[0], T0 + 10e-3 + 0.5 * US), 1000);
}

static void init_coalesce(struct xp_pacer *p, double pps, unsigned burst)
{
	struct xp_pacer_cfg c = { .pps = pps, .burst = burst, .nthreads = 1, .unpaced = 16384, .coalesce = true };
	xp_pacer_init(p, &c, T0);
}

/* Catch-up in one grant (coalesce, the live engine): on schedule the grants
 * are the units as without it; after a 10 ms stall everything due (1010
 * frames, whole units) comes in one grant, after a 50 ms stall the cap. */
static void test_coalesce_stall(void **state)
{
	struct xp_pacer p;
	init_coalesce(&p, 1e5, 0);
	uint64_t n = 0;
	for (long i = 0; i < 100000; i++) {
		double now = T0 + i * US + 0.5 * US;
		uint32_t k;
		while ((k = xp_pacer_poll(&p, now, NULL)) > 0) {
			assert_int_equal(k, 10); /* on schedule: units of 10 */
			xp_pacer_sent(&p, k);
			n += k;
		}
	}
	assert_int_equal(n, 10000);
	assert_int_equal(p.catchups, 0);
	assert_int_equal(xp_pacer_poll(&p, T0 + 0.11 + 0.5 * US, NULL), 1010); /* 10 ms late: one grant */
	assert_int_equal(p.catchups, 1);
	xp_pacer_sent(&p, 400); /* sent in pieces: the rest is handed out whatever the time */
	assert_int_equal(xp_pacer_poll(&p, T0 + 0.11 + 0.5 * US, NULL), 610);
	xp_pacer_sent(&p, 610);
	assert_int_equal(xp_pacer_poll(&p, T0 + 0.11 + 0.5 * US, NULL), 0);
	assert_int_equal(xp_pacer_poll(&p, T0 + 0.16 + 0.5 * US, NULL), 2000); /* 50 ms: the cap */
	assert_int_equal(p.max_grant, 2000);

	/* With max_grant 512 a grant is at most 510 (whole units of 10), the rest in the next ones. */
	struct xp_pacer_cfg c = { .pps = 1e5, .nthreads = 1, .unpaced = 16384, .coalesce = true, .max_grant = 512 };
	xp_pacer_init(&p, &c, T0);
	assert_int_equal(xp_pacer_poll(&p, T0, NULL), 10);
	xp_pacer_sent(&p, 10);
	uint64_t got = 0;
	uint32_t k;
	while ((k = xp_pacer_poll(&p, T0 + 0.01 + 0.5 * US, NULL)) > 0) { /* 10 ms late: 1000 due */
		assert_true(k <= 510 && k % 10 == 0);
		xp_pacer_sent(&p, k);
		got += k;
	}
	assert_int_equal(got, 1000);
}

/*
 * The issue 11 failure, on a fake clock: every call costs 15 ms (BPF_PROG_RUN
 * waiting for the XDP dispatcher lock another process holds). One unit per
 * call sends 9 frames per 15 ms at 90 kpps (600 pps); catching up in one
 * grant keeps the rate within 2 % over the second.
 */
static uint64_t slow_calls(bool coalesce, double pps, double cost)
{
	struct xp_pacer p;
	struct xp_pacer_cfg c = { .pps = pps, .nthreads = 1, .unpaced = 16384, .coalesce = coalesce };
	xp_pacer_init(&p, &c, T0);
	uint64_t n = 0;
	double now = T0;
	while (now < T0 + 1.0) {
		double wait = 0;
		uint32_t k = xp_pacer_poll(&p, now, &wait);
		if (!k) {
			now += wait + 0.5 * US;
			continue;
		}
		now += cost; /* the call returns this much later, all k sent */
		xp_pacer_sent(&p, k);
		n += k;
	}
	return n;
}

static void test_coalesce_slow_calls(void **state)
{
	uint64_t one = slow_calls(false, 90e3, 15e-3), all = slow_calls(true, 90e3, 15e-3);
	assert_true(one < 1000);                    /* 9 frames per call, 67 calls */
	assert_true(all >= 0.98 * 90e3 && all <= 90e3 + 1800);
	/* Calls longer than the cap (20 ms of frames) fall short: 30 ms per call
	 * makes up 20 ms of every 30 (two thirds), as the cap says. */
	uint64_t over = slow_calls(true, 90e3, 30e-3);
	assert_true(over > 0.6 * 90e3 && over < 0.72 * 90e3);
}

/* No rate: the unpaced unit every time, whatever the clock says. */
static void test_unpaced(void **state)
{
	struct xp_pacer p;
	init(&p, 0, 0, 0, 1);
	for (int k = 0; k < 10; k++) {
		assert_int_equal(xp_pacer_poll(&p, T0, NULL), 16384);
		xp_pacer_sent(&p, 16384);
	}
	assert_int_equal(p.sent, 163840);
	assert_int_equal(xp_pacer_next(&p), 16384); /* never sleeps, never reads the clock */
	struct xp_pacer_cfg c = { .pps = -5 }; /* unpaced, no unit given: one frame */
	xp_pacer_init(&p, &c, T0);
	assert_int_equal(xp_pacer_poll(&p, T0, NULL), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_steady_rate),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_stall_within_cap),
		cmocka_unit_test(test_stall_beyond_cap),
		cmocka_unit_test(test_smooth_catchup),
		cmocka_unit_test(test_thread_phases),
		cmocka_unit_test(test_unpaced),
		cmocka_unit_test(test_coalesce_stall),
		cmocka_unit_test(test_coalesce_slow_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
