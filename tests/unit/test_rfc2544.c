/*
 * The RFC 2544 bookkeeping (user/search/search.c) against simulated
 * devices: one that drops above a capacity, one that pushes back (the veth
 * case: the sender slows, nothing is lost), one that loses a little above
 * its capacity (NDR below PDR), a sender slower than the device
 * (sender-limited), the frame loss rate steps and the back-to-back search
 * with RFC 9004's buffer times; and the latency report (report.c) of a
 * made-up run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "rfc2544/rfc2544.h"
#include "search/search.h"

#include "tests/unit/rfc2544_dut.h"

static unsigned run_search(const struct dut *d, double max, struct xp_rfc_search *s)
{
	xp_rfc_search_init(s, 0, max, 0.5, 0.1);
	double r;
	unsigned n = 0;
	while ((r = xp_rfc_search_next(s)) > 0) {
		struct xp_rfc_trial t = dut_trial(d, r);
		xp_rfc_search_record(s, &t);
		assert_true(++n < 50);
	}
	return n;
}

/*
 * --confirm-loss: a device that drops above 104 kpps, in a lab where the
 * first runs of the rates numbered in `noisy` (1-based, the search's n-th
 * rate) lose 7 frames whatever the rate (the router was not scheduled for
 * a moment); repeats are not noisy.
 */
static unsigned run_noisy(const struct dut *d, unsigned confirm, const unsigned *noisy, unsigned nnoisy,
			  struct xp_rfc_search *s, unsigned *repeats_seen)
{
	xp_rfc_search_init(s, 0, 1e6, 0.5, 0.1);
	xp_rfc_search_confirm(s, confirm);
	double r, last = 0;
	unsigned n = 0;
	*repeats_seen = 0;
	while ((r = xp_rfc_search_next(s)) > 0) {
		bool again = xp_rfc_search_repeating(s);
		if (again) {
			assert_true(r == last); /* a repeat runs the same rate */
			(*repeats_seen)++;
		}
		struct xp_rfc_trial t = dut_trial(d, r);
		n++;
		for (unsigned i = 0; i < nnoisy && !again; i++)
			if (noisy[i] == s->trials + 1 && t.received >= 7)
				t.received -= 7;
		xp_rfc_search_record(s, &t);
		last = r;
		assert_true(n < 80);
	}
	return n;
}

/* The search's 5th rate (1000, 500, 250, 125, then 62.5 kpps: the first
 * below the limit) loses 7 frames to noise. Without confirmation the
 * search never returns above 62.5 kpps: the NDR ends 40 % low. With one
 * confirmation that rate runs again, passes, and the NDR is within the
 * resolution of the limit. */
static void test_confirm_loss_survives_noise(void **state)
{
	struct dut d = { DROPS, 104000, 1e6 };
	struct xp_rfc_search s;
	unsigned seen;
	const unsigned noisy[] = { 5 };
	run_noisy(&d, 0, noisy, 1, &s, &seen);
	assert_int_equal(seen, 0);
	assert_int_equal(s.repeats, 0);
	assert_true(s.ndr_pps < 62500); /* the problem: one noisy trial, a low figure */

	unsigned n = run_noisy(&d, 1, noisy, 1, &s, &seen);
	assert_true(s.ndr_pps <= d.capacity);
	assert_true(s.ndr_pps >= d.capacity * (1 - s.res_pct / 100));
	assert_int_equal(s.passed_on_repeat, 1); /* the noisy rate, and only it */
	assert_int_equal(s.repeats, seen);
	assert_int_equal(n, s.trials + s.repeats); /* every run is either a rate or a repeat */
	assert_true(s.repeats >= 2); /* the rates above the limit were repeated too, and failed again */
}

/* A hard limit without noise: the same NDR and the same rates with or
 * without confirmation; every losing rate ran twice, none passed a repeat. */
static void test_confirm_loss_keeps_a_real_limit(void **state)
{
	struct dut d = { DROPS, 104000, 1e6 };
	struct xp_rfc_search a, b;
	unsigned seen;
	run_noisy(&d, 0, NULL, 0, &a, &seen);
	unsigned n = run_noisy(&d, 2, NULL, 0, &b, &seen);
	assert_true(a.ndr_pps == b.ndr_pps);
	assert_int_equal(a.trials, b.trials);
	assert_int_equal(b.passed_on_repeat, 0);
	/* rates that lost: the trials that set hi; each ran 1 + 2 times */
	unsigned lost = 0;
	struct xp_rfc_search c;
	xp_rfc_search_init(&c, 0, 1e6, 0.5, 0.1);
	double r;
	while ((r = xp_rfc_search_next(&c)) > 0) {
		struct xp_rfc_trial t = dut_trial(&d, r);
		lost += xp_rfc_judge(&t, 0) == XP_RFC_LOSS;
		xp_rfc_search_record(&c, &t);
	}
	assert_true(lost > 0);
	assert_int_equal(b.repeats, 2 * lost);
	assert_int_equal(n, b.trials + 2 * lost);
}

/* The run kept is the one with the least loss: a rate that lost 1 % and
 * then 0.05 % is within a 0.1 % tolerance (PDR), not an NDR. A run the
 * path held short runs again as well (a device that pushes back does so
 * every time; on a shared host others' packet work counts as the path's),
 * and of a short run and a loss the loss is kept. */
static void test_confirm_loss_keeps_the_least_loss(void **state)
{
	struct xp_rfc_search s;
	xp_rfc_search_init(&s, 0, 1e6, 0.5, 0.1);
	xp_rfc_search_confirm(&s, 1);
	struct xp_rfc_trial t = { .target_pps = 1e6, .seconds = 1, .sent = 1000000, .received = 990000, .offered_pps = 1e6 };
	assert_true(xp_rfc_search_next(&s) == 1e6);
	xp_rfc_search_record(&s, &t);
	assert_true(xp_rfc_search_repeating(&s));
	assert_true(xp_rfc_search_next(&s) == 1e6);
	assert_int_equal(s.trials, 0); /* no verdict on the rate yet */
	t.received = 999500;
	xp_rfc_search_record(&s, &t);
	assert_false(xp_rfc_search_repeating(&s));
	assert_int_equal(s.trials, 1);
	assert_true(s.pdr_pps == 1e6);
	assert_true(s.ndr_pps == 0);
	assert_true(s.hi == 1e6);
	/* 500 kpps, the path held it short twice: a failed rate (the first short run kept). */
	double r = xp_rfc_search_next(&s);
	assert_true(r == 5e5);
	struct xp_rfc_trial sh = { .target_pps = r, .seconds = 1, .sent = 400000, .received = 400000,
				   .offered_pps = 400000, .short_of_target = true, .held_back_by = "path" };
	xp_rfc_search_record(&s, &sh);
	assert_true(xp_rfc_search_repeating(&s));
	assert_int_equal(s.trials, 1);
	xp_rfc_search_record(&s, &sh);
	assert_false(xp_rfc_search_repeating(&s));
	assert_int_equal(s.repeats, 2);
	assert_true(s.hi == 5e5);
	assert_false(s.hi_by_sender);
	/* 250 kpps, the sender left it short: again; the repeat loses 2 %, which is kept (a verdict). */
	r = xp_rfc_search_next(&s);
	assert_true(r == 2.5e5);
	sh.target_pps = r;
	sh.held_back_by = "sender";
	xp_rfc_search_record(&s, &sh);
	assert_true(xp_rfc_search_repeating(&s));
	struct xp_rfc_trial lo = { .target_pps = r, .seconds = 1, .sent = 250000, .received = 245000, .offered_pps = r };
	xp_rfc_search_record(&s, &lo);
	assert_false(xp_rfc_search_repeating(&s));
	assert_int_equal(s.repeats, 3);
	assert_int_equal(s.passed_on_repeat, 0);
	assert_true(s.hi == 2.5e5);
	assert_false(s.hi_by_sender); /* the kept run is the loss, not the sender's short one */
	assert_true(s.pdr_pps == 1e6);
}

static void test_verdicts(void **state)
{
	struct xp_rfc_trial t = { .target_pps = 1000, .sent = 10000, .received = 10000, .offered_pps = 1000 };
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_PASS);
	t.received = 9999; /* one frame is a loss at zero tolerance */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_LOSS);
	assert_int_equal(xp_rfc_judge(&t, 0.01), XP_RFC_PASS); /* 0.01 % lost: within 0.01 % */
	assert_true(fabs(xp_rfc_loss_pct(&t) - 0.01) < 1e-9);
	t.received = 10000;
	t.short_of_target = true; /* no loss, but the load fell short: no verdict on the device */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_SHORT);
	t.received = 5000;
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_SHORT); /* short beats loss */
	t.error = 1;
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_ERROR);
	struct xp_rfc_trial none = { .target_pps = 1000 };
	assert_int_equal(xp_rfc_judge(&none, 0), XP_RFC_ERROR); /* nothing sent proves nothing */
	assert_string_equal(xp_rfc_verdict_name(XP_RFC_SHORT), "short");
}

/* A device that drops above 104 kpps, searched up to 1 Mpps: the NDR within
 * the resolution (0.5 % of the failing rate) below it. */
static void test_throughput_drops(void **state)
{
	struct dut d = { DROPS, 104000, 1e6 };
	struct xp_rfc_search s;
	unsigned n = run_search(&d, 1e6, &s);
	assert_true(n <= 2 + 12); /* log2(1e6 / 520) */
	assert_true(s.ndr_pps <= d.capacity);
	assert_true(s.ndr_pps >= d.capacity * (1 - s.res_pct / 100));
	assert_false(xp_rfc_search_sender_limited(&s, true));
	assert_true(s.pdr_pps >= s.ndr_pps);
}

/* A device that pushes back: no trial loses a frame, and still the search
 * finds its capacity, because short trials fail. */
static void test_throughput_pushback(void **state)
{
	struct dut d = { PUSHES_BACK, 104000, 1e6 };
	struct xp_rfc_search s;
	run_search(&d, 1e6, &s);
	assert_true(s.ndr_pps <= d.capacity / 0.98);
	assert_true(s.ndr_pps >= d.capacity * (1 - s.res_pct / 100));
	assert_true(s.shorts > 0);
	assert_false(xp_rfc_search_sender_limited(&s, true)); /* the path, not the sender */
}

/* Loses 0.05 % above 300 kpps: the NDR is below it, the PDR at 0.1 % above. */
static void test_ndr_and_pdr(void **state)
{
	struct dut d = { LOSES_LITTLE, 300000, 1e6 };
	struct xp_rfc_search s;
	run_search(&d, 1e6, &s);
	assert_true(s.ndr_pps <= 300000 && s.ndr_pps >= 300000 * (1 - s.res_pct / 100));
	assert_true(s.pdr_pps > s.ndr_pps); /* the trials above 300 kpps lost 0.05 % < 0.1 % */
}

/* The sender (500 kpps) is slower than the device (2 Mpps): the search ends
 * at the sender's maximum, sender-limited, unless the maximum is the line rate. */
static void test_sender_limited(void **state)
{
	struct dut d = { DROPS, 2e6, 500000 };
	struct xp_rfc_search s;
	unsigned n = run_search(&d, 500000, &s);
	assert_int_equal(n, 1); /* the maximum passed at once */
	assert_true(s.ndr_pps == 500000);
	assert_true(xp_rfc_search_sender_limited(&s, true));   /* the maximum was the sender's */
	assert_false(xp_rfc_search_sender_limited(&s, false)); /* the maximum was the line rate */
	/* Asked for more than it can (a line rate of 1 Mpps): short at every rate above 500 k. */
	run_search(&d, 1e6, &s);
	assert_true(s.ndr_pps >= 500000 * (1 - s.res_pct / 100) && s.ndr_pps <= 500000 / 0.98);
	assert_true(xp_rfc_search_sender_limited(&s, false)); /* the failure above it was the sender's */
}

static void test_frame_loss_rate(void **state)
{
	struct dut d = { DROPS, 550000, 2e6 };
	struct xp_rfc_flr f;
	xp_rfc_flr_init(&f, 1e6);
	double r, want[] = { 1e6, 9e5, 8e5, 7e5, 6e5, 5e5, 4e5 };
	unsigned n = 0;
	while ((r = xp_rfc_flr_next(&f)) > 0) {
		assert_true(n < 7);
		assert_true(fabs(r - want[n]) < 1e-6);
		struct xp_rfc_trial t = dut_trial(&d, r);
		xp_rfc_flr_record(&f, &t);
		n++;
	}
	assert_int_equal(n, 7); /* 500 k and 400 k lose nothing: two in a row */
	/* A device that never keeps up: 10 steps down to 10 %, then it stops. */
	struct dut slow = { DROPS, 1000, 2e6 };
	xp_rfc_flr_init(&f, 1e6);
	for (n = 0; (r = xp_rfc_flr_next(&f)) > 0; n++) {
		struct xp_rfc_trial t = dut_trial(&slow, r);
		xp_rfc_flr_record(&f, &t);
	}
	assert_int_equal(n, 10);
}

/* A device that buffers 5000 frames: bursts up to that lose nothing. */
static struct xp_rfc_trial burst_trial(uint64_t n, uint64_t buffer)
{
	struct xp_rfc_trial t = { .burst = (unsigned)n, .sent = n, .received = n > buffer ? buffer : n };
	return t;
}

static void test_back_to_back(void **state)
{
	struct xp_rfc_b2b b;
	xp_rfc_b2b_init(&b, 200000, 10);
	uint64_t n;
	unsigned trials = 0;
	while ((n = xp_rfc_b2b_next(&b)) > 0) {
		struct xp_rfc_trial t = burst_trial(n, 5000);
		xp_rfc_b2b_record(&b, &t);
		assert_true(++trials < 40);
	}
	uint64_t got = xp_rfc_b2b_result(&b);
	assert_true(got <= 5000 && got >= 5000 - 10);
	/* All of it buffered: one trial. */
	xp_rfc_b2b_init(&b, 1000, 10);
	struct xp_rfc_trial t = burst_trial(xp_rfc_b2b_next(&b), 5000);
	xp_rfc_b2b_record(&b, &t);
	assert_true(b.done);
	assert_int_equal(xp_rfc_b2b_result(&b), 1000);
	/* Even one frame lost: 0. */
	xp_rfc_b2b_init(&b, 1000, 1);
	while ((n = xp_rfc_b2b_next(&b)) > 0) {
		struct xp_rfc_trial z = { .burst = (unsigned)n, .sent = n, .received = 0 };
		xp_rfc_b2b_record(&b, &z);
	}
	assert_int_equal(xp_rfc_b2b_result(&b), 0);
}

static void test_buffer_times_and_units(void **state)
{
	/* 5000 frames at 1 Mpps: 5 ms implied; forwarding at half the rate meanwhile, 2.5 ms corrected. */
	assert_true(fabs(xp_rfc_implied_buffer_s(5000, 1e6) - 5e-3) < 1e-12);
	assert_true(fabs(xp_rfc_corrected_buffer_s(5000, 1e6, 5e5) - 2.5e-3) < 1e-12);
	assert_true(xp_rfc_corrected_buffer_s(5000, 1e6, 1e6) == 0);
	assert_true(xp_rfc_implied_buffer_s(-1, 1e6) == 0 && xp_rfc_implied_buffer_s(10, 0) == 0);
	/* 10 Gbit/s at 64 bytes: 14 880 952 frames/s; L1 of that is the line rate. */
	double pps = xp_rfc_line_pps(10e9, 64);
	assert_true(fabs(pps - 14880952.38) < 0.01);
	assert_true(fabs(xp_rfc_l1_bps(pps, 64) - 10e9) < 1);
	assert_true(fabs(xp_rfc_l2_bps(1000, 1518) - 12144000) < 1e-6);
}

/*
 * RFC 9004 section 5.4's formulas on a hand-computed case: 10GbE, 64-byte
 * frames, R = 10e9 / ((64 + 20) * 8) = 14 880 952.38 frames/s; trials of
 * 25 000, 26 000 and 27 000 frames give B = 26 000; implied = 26 000 * 672
 * / 10e9 = 1.7472 ms. Throughput T = 8 Gbit/s of L1 = 11 904 761.9 frames/s
 * = 0.8 R; corrected = 1.7472 ms - 1.7472 ms * 0.8 = 0.34944 ms.
 */
static void test_rfc9004_buffer_time_example(void **state)
{
	double r = xp_rfc_line_pps(10e9, 64), t = xp_rfc_line_pps(8e9, 64), b = (25000 + 26000 + 27000) / 3.0;
	assert_true(fabs(r - 14880952.380952) < 1e-3);
	assert_true(fabs(xp_rfc_implied_buffer_s(b, r) - 1.7472e-3) < 1e-12);
	assert_true(fabs(xp_rfc_corrected_buffer_s(b, r, t) - 0.34944e-3) < 1e-12);
	/* A throughput at R leaves nothing to buffer; above R (a bad R) it is 0, not negative. */
	assert_true(xp_rfc_corrected_buffer_s(b, r, r) == 0 && xp_rfc_corrected_buffer_s(b, r, 2 * r) == 0);
}

static struct json_object *jget(struct json_object *o, const char *path)
{
	char buf[128], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k && o; k = strtok_r(NULL, ".", &save)) {
		struct json_object *n = NULL;
		if (k[0] >= '0' && k[0] <= '9')
			n = json_object_array_get_idx(o, (size_t)atoi(k));
		else if (!json_object_object_get_ex(o, k, &n))
			n = NULL;
		o = n;
	}
	return o;
}

/*
 * The latency report of a made-up run: two latency trials at 100 000
 * frames/s with their figures; the size's figures are their means (as
 * run.c computes them). -J has every trial's figures and the size's, the
 * text table one row with the means; a size without one-way times says why.
 */
static void test_latency_report(void **state)
{
	static struct xp_spec spec; /* megabytes: not on the stack */
	struct xp_rfc_job o = { .spec = &spec };
	xp_spec_default(&spec);
	xp_rfc2544_cfg_default(&o.rfc);
	snprintf(spec.host, sizeof(spec.host), "198.19.1.2");
	o.rfc.trial_s = 2;
	static struct xp_rfc_trial_rec recs[2];
	struct xp_rfc_run r = { .o = &o, .nsizes = 2, .trials = recs, .ntrials = 2, .settle_s = 2 };
	for (int i = 0; i < 2; i++)
		recs[i] = (struct xp_rfc_trial_rec){ .len = 64, .test = "latency",
			.repeat_of = (unsigned)i, /* made up: the second "runs the first again" */
			.t = { .target_pps = 1e5, .seconds = 2, .sent = 200000, .received = 200000, .offered_pps = 1e5,
			       .max_catchup = 30 - 10 * i, .lat = { .known = true, .min_us = 2 + i, .mean_us = 10 + i, .max_us = 100 + 10 * i,
					.p50_us = 9 + i, .p99_us = 40 + 2 * i, .p999_us = 80 + 4 * i, .timed = 200000 } } };
	struct xp_rfc_size *z = &r.sizes[0];
	z->len = 64;
	z->lat_run = true;
	z->lat_pps = 1e5;
	z->lat_n = 2;
	z->lat = (struct xp_rfc_latency){ .known = true, .min_us = 2.5, .mean_us = 10.5, .max_us = 105, .p50_us = 9.5,
					  .p99_us = 41, .p999_us = 82, .timed = 400000 };
	xp_lat_init(&z->lat_hist);
	z->lat_hist.n = z->lat_hist.recv = 400000;
	z->lat_hist.b[40] = 400000;
	z->lat_hist.min = z->lat_hist.max = 40;
	z->lat_hist.sum = 40ull * 400000;
	r.sizes[1] = (struct xp_rfc_size){ .len = 128, .lat_run = true, .lat_pps = 5e4 };
	snprintf(r.sizes[1].lat_why, sizeof(r.sizes[1].lat_why), "the ends do not share a clock");

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xp_rfc_report_json(f, &r);
	fclose(f);
	struct json_object *doc = json_tokener_parse(buf);
	assert_non_null(doc);
	assert_true(json_object_get_boolean(jget(doc, "sizes.0.latency.measured")));
	assert_int_equal(json_object_get_int(jget(doc, "sizes.0.latency.trials")), 2);
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.latency.p99_us")) - 41) < 1e-9);
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.latency.p99_9_us")) - 82) < 1e-9);
	assert_int_equal(json_object_get_int64(jget(doc, "sizes.0.latency.frames_timed")), 400000);
	assert_int_equal(json_object_get_int64(jget(doc, "sizes.0.latency.all_frames.timed")), 400000);
	assert_true(fabs(json_object_get_double(jget(doc, "trials.1.latency.p50_us")) - 10) < 1e-9);
	assert_true(fabs(json_object_get_double(jget(doc, "trials.0.latency.max_us")) - 100) < 1e-9);
	assert_int_equal(json_object_get_int(jget(doc, "trials.0.largest_catchup_frames")), 30);
	assert_null(jget(doc, "trials.0.repeat_of"));
	assert_int_equal(json_object_get_int(jget(doc, "trials.1.repeat_of")), 1);
	assert_int_equal(json_object_get_int(jget(doc, "settings.confirm_loss")), 1);
	assert_false(json_object_get_boolean(jget(doc, "sizes.1.latency.measured")));
	assert_string_equal(json_object_get_string(jget(doc, "sizes.1.latency.why")), "the ends do not share a clock");
	json_object_put(doc);
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	xp_rfc_report_text(f, &r);
	fclose(f);
	assert_non_null(strstr(buf, "\nLatency (RFC 2544 26.2) at the throughput rate"));
	assert_non_null(strstr(buf, "\n    64         100000       2       400000       2.5      10.5     105.0       9.5"
				    "      41.0      82.0\n"));
	assert_non_null(strstr(buf, "\n   128          50000  not measured: the ends do not share a clock\n"));
	free(buf);
}

/*
 * A run whose 9018-byte trial could not run (issue 30): the first line of the
 * text says where it stopped and why, the finished 1518-byte row is still
 * there, and -J names the size that failed beside the error.
 */
static void test_stopped_run_keeps_finished_sizes(void **state)
{
	static struct xp_spec spec; /* megabytes: not on the stack */
	struct xp_rfc_job o = { .spec = &spec };
	xp_spec_default(&spec);
	xp_rfc2544_cfg_default(&o.rfc);
	snprintf(spec.host, sizeof(spec.host), "198.19.1.2");
	o.rfc.trial_s = 1;
	static struct xp_rfc_trial_rec recs[1];
	struct xp_rfc_run r = { .o = &o, .nsizes = 2, .trials = recs, .ntrials = 1, .settle_s = 1,
				.error = "9018-byte frames are too large for XDP live frames" };
	snprintf(r.failed_at, sizeof(r.failed_at), "9018");
	recs[0] = (struct xp_rfc_trial_rec){ .len = 1518, .test = "throughput",
		.t = { .target_pps = 8e5, .seconds = 1, .sent = 800000, .received = 800000, .offered_pps = 8e5 } };
	r.sizes[0] = (struct xp_rfc_size){ .len = 1518, .tp_run = true, .ndr_pps = 8e5, .pdr_pps = 8e5, .tp_trials = 1 };
	snprintf(r.sizes[0].label, sizeof(r.sizes[0].label), "1518");
	r.sizes[1] = (struct xp_rfc_size){ .len = 9018 };
	snprintf(r.sizes[1].label, sizeof(r.sizes[1].label), "9018");

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xp_rfc_report_text(f, &r);
	fclose(f);
	const char *first = "RFC 2544 stopped at 9018 B: 9018-byte frames are too large for XDP live frames; "
			    "the sizes before it are complete\n";
	assert_int_equal(strncmp(buf, first, strlen(first)), 0);
	assert_non_null(strstr(buf, "\n  1518         800000"));
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	xp_rfc_report_json(f, &r);
	fclose(f);
	struct json_object *doc = json_tokener_parse(buf);
	assert_non_null(doc);
	assert_string_equal(json_object_get_string(jget(doc, "failed_size")), "9018");
	assert_non_null(strstr(json_object_get_string(jget(doc, "error")), "too large"));
	assert_true(fabs(json_object_get_double(jget(doc, "sizes.0.throughput.ndr_frames_per_second")) - 8e5) < 1e-9);
	json_object_put(doc);
	free(buf);
}

/* The bidirectional pass rule: BOTH directions lost nothing (or within the
 * tolerance) AND both reached their rate; the worse verdict wins. */
static void test_bidir_pass_rule(void **state)
{
	struct xp_rfc_trial t = { .target_pps = 1000, .sent = 10000, .received = 10000, .offered_pps = 1000 };
	t.rev = (struct xp_rfc_dir){ .on = true, .sent = 10000, .received = 10000, .offered_pps = 1000, .seconds = 10 };
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_PASS);
	t.rev.received = 9999; /* one frame lost B->A: the trial fails, A->B alone passes */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_LOSS);
	assert_int_equal(xp_rfc_judge_dir(&t, false, 0), XP_RFC_PASS);
	assert_int_equal(xp_rfc_judge_dir(&t, true, 0), XP_RFC_LOSS);
	assert_true(fabs(xp_rfc_loss_pct(&t) - 0.01) < 1e-9); /* the worse direction's */
	assert_true(xp_rfc_dir_loss_pct(&t, false) == 0);
	assert_int_equal(xp_rfc_judge(&t, 0.01), XP_RFC_PASS); /* PDR: each within the tolerance */
	t.received = 9990; /* A->B 0.1 %: beyond 0.01 % though B->A is within it */
	assert_int_equal(xp_rfc_judge(&t, 0.01), XP_RFC_LOSS);
	t.received = 10000;
	t.rev.received = 10000;
	t.rev.short_of_target = true; /* B->A fell short, nothing lost anywhere: no verdict on the device */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_SHORT);
	t.received = 5000; /* A->B lost, B->A short: short beats loss across directions too */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_SHORT);
	t.rev.error = 1; /* B->A did not run: the trial did not */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_ERROR);
	t = (struct xp_rfc_trial){ .target_pps = 1000, .sent = 10000, .received = 10000, .offered_pps = 1000 };
	t.rev = (struct xp_rfc_dir){ .on = true }; /* B->A sent nothing: proves nothing */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_ERROR);
	t.rev.on = false; /* not bidirectional: the reverse fields do not count */
	assert_int_equal(xp_rfc_judge(&t, 0), XP_RFC_PASS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_bidir_pass_rule),
		cmocka_unit_test(test_throughput_drops),
		cmocka_unit_test(test_confirm_loss_survives_noise),
		cmocka_unit_test(test_confirm_loss_keeps_a_real_limit),
		cmocka_unit_test(test_confirm_loss_keeps_the_least_loss),
		cmocka_unit_test(test_throughput_pushback),
		cmocka_unit_test(test_ndr_and_pdr),
		cmocka_unit_test(test_sender_limited),
		cmocka_unit_test(test_frame_loss_rate),
		cmocka_unit_test(test_back_to_back),
		cmocka_unit_test(test_buffer_times_and_units),
		cmocka_unit_test(test_rfc9004_buffer_time_example),
		cmocka_unit_test(test_latency_report),
		cmocka_unit_test(test_stopped_run_keeps_finished_sizes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
