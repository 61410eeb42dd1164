/*
 * --bidir's throughput search, one per direction (user/search/search2.c),
 * driven by hand against simulated devices with a limit in one direction
 * only: each direction must end at its own limit (the limited one at the
 * device's, the other at the search's top or its sender's maximum), each
 * trial must offer each direction its own search's rate, and a loss in one
 * direction must not lower the other's bound. Then the report of a made-up
 * bidirectional run: a row per direction with its own NDR and "limited
 * by", the combined row as their sum, -J, and --plot's latency
 * distribution with both directions.
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
#include <unistd.h>

#include "rfc2544/rfc2544.h"
#include "search/search.h"

#include "tests/unit/rfc2544_dut.h"

/* A bidirectional trial at A->B rate ra and B->A rate rb. */
static struct xp_rfc_trial both(const struct dut *ab, const struct dut *ba, double ra, double rb)
{
	struct xp_rfc_trial t = dut_trial(ab, ra), r = dut_trial(ba, rb);
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

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char buf[65536];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A made-up 64-byte bidirectional run: A->B passed at the line rate's top, B->A limited at 100 kpps. */
static void test_bidir_report_and_plots(void **state)
{
	static struct xp_spec spec; /* megabytes: not on the stack */
	struct xp_rfc_job o = { .spec = &spec };
	xp_spec_default(&spec);
	xp_rfc2544_cfg_default(&o.rfc);
	snprintf(spec.host, sizeof(spec.host), "198.19.1.2");
	o.rfc.trial_s = 1;
	o.rfc.line_bps = 200e6;
	static struct xp_rfc_trial_rec recs[2];
	struct xp_rfc_run r = { .o = &o, .nsizes = 1, .trials = recs, .ntrials = 2, .settle_s = 1, .bidir = true };
	struct xp_rfc_size *z = &r.sizes[0];
	z->len = 64;
	z->mean = 64;
	snprintf(z->label, sizeof(z->label), "64");
	z->max_pps = z->dir_max[0] = z->dir_max[1] = 297619;
	z->max_is_line = true;
	z->tp_run = true;
	z->tp_trials = 2;
	z->dir_ndr[0] = z->dir_pdr[0] = 297619;
	z->dir_ndr[1] = 99500;
	z->dir_pdr[1] = 100200;
	z->dir_trials[0] = 1;
	z->dir_trials[1] = 2;
	z->dir_held[0] = 1;
	z->dir_held_failed[0] = 1;
	z->ndr_pps = 99500;
	z->pdr_pps = 100200;
	for (int i = 0; i < 2; i++)
		recs[i] = (struct xp_rfc_trial_rec){ .len = 64, .z = z, .test = "throughput", .v = i ? XP_RFC_PASS : XP_RFC_LOSS,
			.t = { .target_pps = 297619, .seconds = 1, .sent = 297619, .received = 297619, .offered_pps = 297619,
			       .rev = { .on = true, .target_pps = i ? 99500 : 297619, .seconds = 1, .sent = i ? 99500 : 297619,
					.received = i ? 99500 : 100100, .offered_pps = i ? 99500 : 297619 } } };
	z->lat_run = true;
	z->lat_pps = 297619;
	z->lat_rev_pps = 99500;
	z->lat_n = z->lat_rev_n = 1;
	z->lat = (struct xp_rfc_latency){ .known = true, .min_us = 2, .mean_us = 10, .max_us = 100, .p50_us = 9,
					  .p99_us = 40, .p999_us = 80, .timed = 1000 };
	z->lat_rev = (struct xp_rfc_latency){ .known = true, .min_us = 3, .mean_us = 12, .max_us = 120, .p50_us = 11,
					      .p99_us = 50, .p999_us = 90, .timed = 500 };
	xp_lat_init(&z->lat_hist);
	xp_lat_init(&z->lat_rev_hist);
	z->lat_hist.n = 1000;
	z->lat_hist.b[40] = 1000;
	z->lat_rev_hist.n = 500;
	z->lat_rev_hist.b[44] = 300;
	z->lat_rev_hist.b[48] = 200;

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	xp_rfc_report_text(f, &r);
	fclose(f);
	assert_non_null(strstr(buf, "each searched to its own limit"));
	assert_non_null(strstr(buf, "\n    64  A->B         297619 "));
	assert_non_null(strstr(buf, "none below the line rate"));
	assert_non_null(strstr(buf, "\n    64  B->A          99500 "));
	assert_non_null(strstr(buf, "the device in this direction"));
	/* both: the sum of the two NDRs, which passed together in the second trial */
	assert_non_null(strstr(buf, "\n    64  both         397119 "));
	assert_non_null(strstr(buf, "the two NDRs summed; both passed at them in one trial"));
	assert_non_null(strstr(buf, "note: 64 B A->B held at its NDR in 1 trials"));
	/* the latency table: each direction at its own rate */
	assert_non_null(strstr(buf, "\n    64  A->B         297619       1         1000"));
	assert_non_null(strstr(buf, "\n    64  B->A          99500       1          500"));
	assert_null(strstr(buf, "at least"));
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	xp_rfc_report_json(f, &r);
	fclose(f);
	struct json_object *doc = json_tokener_parse(buf);
	assert_non_null(doc);
	assert_true(json_object_get_double(jget(doc, "sizes.0.throughput.combined_ndr_frames_per_second")) == 397119);
	assert_true(json_object_get_double(jget(doc, "sizes.0.throughput.ndr_frames_per_second")) == 99500);
	assert_true(json_object_get_double(jget(doc, "sizes.0.throughput.a_to_b.ndr_frames_per_second")) == 297619);
	assert_true(json_object_get_boolean(jget(doc, "sizes.0.throughput.a_to_b.passed_at_top")));
	assert_false(json_object_get_boolean(jget(doc, "sizes.0.throughput.b_to_a.passed_at_top")));
	assert_true(json_object_get_double(jget(doc, "sizes.0.throughput.b_to_a.pdr_frames_per_second")) == 100200);
	assert_int_equal(json_object_get_int(jget(doc, "sizes.0.throughput.a_to_b.held_failed")), 1);
	assert_true(json_object_get_boolean(jget(doc, "sizes.0.throughput.combined_ndrs_passed_together")));
	assert_true(json_object_get_double(jget(doc, "trials.1.b_to_a.target_frames_per_second")) == 99500);
	assert_true(json_object_get_double(jget(doc, "sizes.0.latency.b_to_a.rate_frames_per_second")) == 99500);
	json_object_put(doc);
	free(buf);

	/* --plot: the latency distribution has a block per direction, and the summary says bidirectional. */
	char dir[] = "/tmp/xp-test-bidir-plot.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char err[256] = "", path[600];
	assert_int_equal(xp_rfc_plot(&r, dir, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/latency_dist.dat", dir);
	char *d = slurp(path);
	assert_non_null(strstr(d, "\"64 bytes A->B at 297619 fps\""));
	assert_non_null(strstr(d, "\"64 bytes B->A at 99500 fps\""));
	snprintf(path, sizeof(path), "%s/summary.md", dir);
	d = slurp(path);
	assert_non_null(strstr(d, "# RFC 2544 benchmark, bidirectional"));
	assert_non_null(strstr(d, "Latency distribution at the throughput rate, bidirectional"));
	snprintf(path, sizeof(path), "%s/plots.gp", dir);
	assert_non_null(strstr(slurp(path), "set title 'Latency distribution at the throughput rate, A->B and B->A"));
	snprintf(path, sizeof(path), "%s/latency_dist.svg", dir);
	assert_int_equal(access(path, R_OK), 0);
	static const char *const files[] = { "throughput", "latency", "latency_dist", "loss" };
	for (unsigned i = 0; i < 4; i++) {
		for (int k = 0; k < 3; k++) {
			snprintf(path, sizeof(path), "%s/%s.%s", dir, files[i], k == 0 ? "svg" : k == 1 ? "png" : "dat");
			unlink(path);
		}
	}
	static const char *const more[] = { "plots.gp", "summary.md" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, more[i]);
		unlink(path);
	}
	assert_int_equal(rmdir(dir), 0);
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
		cmocka_unit_test(test_bidir_report_and_plots),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
