/*
 * A test that stalls (meas/stall.h, issue 30): the rate of what it
 * completes falls to a fraction of its running peak. The issue's own case
 * (108 k, 100 k, 54 k, then 0 and 0 connections a second) is a stall at
 * 3-4 s; a ramp from zero, a short last interval, a frame test whose sending
 * stopped too, and a hold are not. The summary's first line says it, -J has
 * it, and --stall or --max-loss turn it into exit 3.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "report/report.h"
#include "meas/stall.h"

static void feed_each(struct xp_stall *s, const double *done, const double *sent, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		xp_stall_feed(s, i, i + 1, done[i], sent[i]);
}

static void test_the_issues_connection_stall(void **state)
{
	struct xp_stall s;
	const double done[] = { 108000, 100000, 54000, 0, 0 }, sent[] = { 108500, 100400, 56000, 1024, 0 };
	xp_stall_init(&s, 10, true);
	feed_each(&s, done, sent, 5);
	assert_true(s.stalled);
	assert_true(s.t0 == 3 && s.t1 == 4);
	assert_true(s.rate == 0 && s.before == 108000);
	assert_int_equal(s.intervals, 2);
	xp_stall_text(&s, "table full in the device (conntrack 1000 of 1000 entries at the peak, 312 dropped or not inserted)",
		      s.text, sizeof(s.text));
	assert_string_equal(s.text, "WARNING: stalled at 3.00-4.00 s: connections completed fell to 0.00 /s, below 10 % "
				    "of the running peak 108.00 k/s (2 intervals stalled); likely table full in the device "
				    "(conntrack 1000 of 1000 entries at the peak, 312 dropped or not inserted)");
}

static void test_no_stall(void **state)
{
	struct xp_stall s;
	/* A ramp from zero, a dip to half: not below 10 % of the peak. */
	const double done[] = { 0, 5000, 100000, 50000, 95000 };
	xp_stall_init(&s, 10, true);
	feed_each(&s, done, done, 5);
	assert_false(s.stalled);
	/* The last interval cut to 0.3 s with nothing in it: not judged. */
	xp_stall_feed(&s, 5, 5.3, 0, 0);
	assert_false(s.stalled);
	/* A higher threshold makes the dip to half one. */
	xp_stall_init(&s, 60, true);
	feed_each(&s, done, done, 5);
	assert_true(s.stalled && s.t0 == 3);
}

static void test_frames_stall_only_while_sending(void **state)
{
	struct xp_stall s;
	/* Received falls to 0 while 100 kpps still go out: a stall. */
	const double rx[] = { 100000, 100000, 0 }, tx[] = { 100000, 100000, 100000 };
	xp_stall_init(&s, 10, false);
	feed_each(&s, rx, tx, 3);
	assert_true(s.stalled && s.t0 == 2);
	/* Received falls because the sender stopped: no stall of the path. */
	const double tx2[] = { 100000, 100000, 0 };
	xp_stall_init(&s, 10, false);
	feed_each(&s, rx, tx2, 3);
	assert_false(s.stalled);
}

static void test_exit_status(void **state)
{
	static struct xp_spec o;
	struct xp_summary sum;
	char msg[256];
	xp_spec_default(&o);
	memset(&sum, 0, sizeof(sum));
	sum.total.figures = XP_FIGS_HANDSHAKES;
	sum.stall = (struct xp_stall){ .pct = 10, .conn = true, .stalled = true, .t0 = 3, .t1 = 4, .before = 108000 };
	/* Reported, but the status is the user's to ask for. */
	assert_int_equal(xp_summary_thresholds(&o, &sum, msg, sizeof(msg)), 0);
	o.max_loss = 1; /* 0 % of SYNs unanswered here: only the stall fails it */
	assert_int_equal(xp_summary_thresholds(&o, &sum, msg, sizeof(msg)), XP_EXIT_LOSS);
	assert_non_null(strstr(msg, "stalled at 3.00-4.00 s"));
	xp_spec_default(&o);
	o.stall_set = true;
	assert_int_equal(xp_summary_thresholds(&o, &sum, msg, sizeof(msg)), XP_EXIT_LOSS);
	assert_non_null(strstr(msg, "(--stall)"));
	sum.stall.stalled = false;
	assert_int_equal(xp_summary_thresholds(&o, &sum, msg, sizeof(msg)), 0);
}

/* The stall is the summary's first line, before the SYN warning, and in -J. */
static void test_first_line_and_json(void **state)
{
	struct xp_report_info i = { .engine = "xdp", .figures = XP_FIGS_HANDSHAKES, .engine_mode = "live",
				    .server_xdp_mode = "native", .test = "connect", .proto = "tcp", .family = 4,
				    .queues = 1, .port_lo = 63000, .port_hi = 63015, .duration = 5, .interval = 1 };
	struct xp_summary sum;
	memset(&sum, 0, sizeof(sum));
	sum.server_cpu_pct = -1;
	sum.total.figures = XP_FIGS_HANDSHAKES;
	sum.total.t1 = 5;
	sum.stall = (struct xp_stall){ .pct = 10, .conn = true, .stalled = true, .t0 = 3, .t1 = 4, .before = 108000,
				       .intervals = 2 };
	xp_stall_text(&sum.stall, NULL, sum.stall.text, sizeof(sum.stall.text));
	for (int fmt = XP_REPORT_TEXT; fmt <= XP_REPORT_JSON; fmt++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		struct xp_report r;
		xp_report_init(&r, (enum xp_report_format)fmt, f);
		xp_report_start(&r, &i);
		xp_report_end(&r, &sum);
		xp_report_free(&r);
		fclose(f);
		if (fmt == XP_REPORT_TEXT) {
			const char *sep = strstr(buf, "- - - - -");
			assert_non_null(sep);
			const char *nl = strchr(sep, '\n');
			assert_non_null(nl);
			assert_int_equal(strncmp(nl + 1, "WARNING: stalled at 3.00-4.00 s", 31), 0);
		} else {
			struct json_object *doc = json_tokener_parse(buf), *end, *st, *v;
			assert_non_null(doc);
			assert_true(json_object_object_get_ex(doc, "end", &end));
			assert_true(json_object_object_get_ex(end, "stall", &st));
			assert_true(json_object_object_get_ex(st, "from_seconds", &v));
			assert_true(json_object_get_double(v) == 3);
			assert_true(json_object_object_get_ex(st, "running_peak_per_second", &v));
			assert_true(json_object_get_double(v) == 108000);
			json_object_put(doc);
		}
		free(buf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_the_issues_connection_stall),
		cmocka_unit_test(test_no_stall),
		cmocka_unit_test(test_frames_stall_only_while_sending),
		cmocka_unit_test(test_exit_status),
		cmocka_unit_test(test_first_line_and_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
