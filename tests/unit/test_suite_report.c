/*
 * A suite's report into the sink (report/suite.c): progress lines on the log
 * in text and -J, each trial's record in -J's "trials" in order, the end as
 * the suite's text or one document {NAME, trials, result}; memory prints
 * nothing and keeps the count and the error.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

struct cap {
	char *out, *log;
	size_t nout, nlog;
	FILE *fo, *fl;
};

static void run_suite(enum xp_report_format fmt, struct cap *c, struct xp_report *r)
{
	c->fo = open_memstream(&c->out, &c->nout);
	c->fl = open_memstream(&c->log, &c->nlog);
	assert_non_null(c->fo);
	assert_non_null(c->fl);
	xp_report_init(r, fmt, fmt == XP_REPORT_MEMORY ? NULL : c->fo);
	r->log = c->fl;
	xp_report_suite_line(r, "Search (%s): %d trials\n", "rate", 2);
	for (int i = 1; i <= 2; i++) {
		struct json_object *t = json_object_new_object();
		json_object_object_add(t, "index", json_object_new_int(i));
		char line[32];
		snprintf(line, sizeof(line), "[%3d] trial\n", i);
		xp_report_suite_trial(r, line, t);
	}
	xp_report_suite_error(r, "--search rate: interrupted");
	struct json_object *set = json_object_new_object(), *res = json_object_new_object();
	json_object_object_add(set, "mode", json_object_new_string("rate"));
	json_object_object_add(res, "trials", json_object_new_int(2));
	xp_report_suite_end(r, "search", set, "Table\n  1 trial\n", res);
	fclose(c->fo);
	fclose(c->fl);
}

static void test_text(void **state)
{
	struct cap c = { 0 };
	struct xp_report r;

	(void)state;
	run_suite(XP_REPORT_TEXT, &c, &r);
	assert_string_equal(c.log, "Search (rate): 2 trials\n[  1] trial\n[  2] trial\nxdpperf: --search rate: interrupted\n");
	assert_string_equal(c.out, "Table\n  1 trial\n");
	assert_int_equal(r.mem.intervals, 2);
	xp_report_free(&r);
	free(c.out);
	free(c.log);
}

static void test_json(void **state)
{
	struct cap c = { 0 };
	struct xp_report r;

	(void)state;
	run_suite(XP_REPORT_JSON, &c, &r);
	/* The same progress on the log; stdout holds only the document. */
	assert_string_equal(c.log, "Search (rate): 2 trials\n[  1] trial\n[  2] trial\nxdpperf: --search rate: interrupted\n");
	struct json_object *d = json_tokener_parse(c.out), *v;
	assert_non_null(d);
	/* Its members in this order: the settings, the trials, the result. */
	struct json_object_iterator it = json_object_iter_begin(d), end = json_object_iter_end(d);
	const char *want[] = { "search", "trials", "result" };
	for (int i = 0; i < 3; i++, json_object_iter_next(&it)) {
		assert_false(json_object_iter_equal(&it, &end));
		assert_string_equal(json_object_iter_peek_name(&it), want[i]);
	}
	assert_true(json_object_iter_equal(&it, &end));
	assert_true(json_object_object_get_ex(d, "trials", &v));
	assert_int_equal(json_object_array_length(v), 2);
	assert_int_equal(json_object_get_int(json_object_object_get(json_object_array_get_idx(v, 1), "index")), 2);
	assert_true(json_object_object_get_ex(d, "search", &v));
	assert_string_equal(json_object_get_string(json_object_object_get(v, "mode")), "rate");
	assert_null(strstr(c.out, "Table"));
	json_object_put(d);
	xp_report_free(&r);
	free(c.out);
	free(c.log);
}

static void test_memory(void **state)
{
	struct cap c = { 0 };
	struct xp_report r;

	(void)state;
	run_suite(XP_REPORT_MEMORY, &c, &r);
	assert_int_equal(c.nout, 0);
	assert_int_equal(c.nlog, 0);
	assert_int_equal(r.mem.intervals, 2);
	assert_string_equal(r.mem.error, "--search rate: interrupted");
	xp_report_free(&r);
	free(c.out);
	free(c.log);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_memory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
