/*
 * --bidir's control messages (proto/messages.h): the reverse request a
 * client sends ({"op":"reverse"}: the server's side then sends a trial back)
 * and the figures that come back. Both ends may be hostile: every field is
 * checked strictly, bad values are refused with a message naming the field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/channel.h"
#include "proto/messages.h"

static int dec_req(const char *line, struct xp_reverse_req *q, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	err[0] = '\0';
	int r = xp_reverse_req_from_json(o, q, err, errlen);
	json_object_put(o);
	return r;
}

static void test_request_roundtrip(void **state)
{
	(void)state;
	struct xp_reverse_req q = { .port = 5302, .engine = "xsk", .family = AF_INET6, .udp = true, .frame_size = 1518,
				    .pps = 100000.5, .burst = 0, .seconds = 2.5, .no_stamps = true };
	snprintf(q.mix, sizeof(q.mix), "64:7,570:4,1518:1");
	struct json_object *o = xp_reverse_req_to_json(&q);
	assert_string_equal(json_object_get_string(json_object_object_get(o, "op")), "reverse");
	struct xp_reverse_req d;
	char err[256] = "";
	assert_int_equal(xp_reverse_req_from_json(o, &d, err, sizeof(err)), 0);
	json_object_put(o);
	assert_int_equal(d.port, 5302);
	assert_string_equal(d.engine, "xsk");
	assert_int_equal(d.family, AF_INET6);
	assert_true(d.udp);
	assert_int_equal(d.frame_size, 1518);
	assert_string_equal(d.mix, "64:7,570:4,1518:1");
	assert_true(d.pps == 100000.5);
	assert_int_equal(d.burst, 0);
	assert_true(d.seconds == 2.5);
	assert_true(d.no_stamps);
	/* The defaults: live engine, TCP, IPv4, no mix, paced. */
	assert_int_equal(dec_req("{\"version\":1,\"port\":9,\"frame_size\":64,\"seconds\":1}", &d, err, sizeof(err)), 0);
	assert_string_equal(d.engine, "live");
	assert_false(d.udp);
	assert_int_equal(d.family, AF_INET);
	assert_string_equal(d.mix, "");
	assert_true(d.pps == 0 && d.burst == 0);
}

static void test_request_refused(void **state)
{
	(void)state;
	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "{\"version\":2,\"port\":9,\"frame_size\":64,\"seconds\":1}", "protocol version 2" },
		{ "{\"version\":1,\"frame_size\":64,\"seconds\":1}", "control port 'port'" },
		{ "{\"version\":1,\"port\":70000,\"frame_size\":64,\"seconds\":1}", "'port' is out of range" },
		{ "{\"version\":1,\"port\":\"5302\",\"frame_size\":64,\"seconds\":1}", "'port' must be an integer" },
		{ "{\"version\":1,\"port\":9.5,\"frame_size\":64,\"seconds\":1}", "'port' must be an integer" },
		{ "{\"version\":1,\"port\":9,\"engine\":\"socket\",\"frame_size\":64,\"seconds\":1}", "unknown engine" },
		{ "{\"version\":1,\"port\":9,\"engine\":\"xdp\",\"frame_size\":64,\"seconds\":1}", "unknown engine" },
		{ "{\"version\":1,\"port\":9,\"family\":5,\"frame_size\":64,\"seconds\":1}", "'family' must be 4 or 6" },
		{ "{\"version\":1,\"port\":9,\"proto\":\"sctp\",\"frame_size\":64,\"seconds\":1}", "unknown proto" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":63,\"seconds\":1}", "'frame_size' is out of range" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":9019,\"seconds\":1}", "'frame_size' is out of range" },
		{ "{\"version\":1,\"port\":9,\"seconds\":1}", "needs its 'frame_size'" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"mix\":\"64:1;reboot\",\"seconds\":1}", "not a frame mix" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"mix\":7,\"seconds\":1}", "'mix' must be a string" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"pps\":-1,\"seconds\":1}", "is not in 0.." },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"pps\":2e9,\"seconds\":1}", "is not in 0.." },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"pps\":\"fast\",\"seconds\":1}", "'pps' must be a number" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"burst\":2000000,\"seconds\":1}", "'burst' is out of range" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64}", "trial length 0 s" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"seconds\":-1}", "trial length -1 s" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"seconds\":1e6}", "is not in (0, 86400]" },
		{ "{\"version\":1,\"port\":9,\"frame_size\":64,\"seconds\":1,\"no_stamps\":\"yes\"}", "'no_stamps' must be true or false" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xp_reverse_req q;
		char err[256];
		assert_int_equal(dec_req(bad[i].line, &q, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].msg))
			fail_msg("%s: message '%s' lacks '%s'", bad[i].line, err, bad[i].msg);
		assert_null(strchr(err, '\n')); /* one line */
	}
	struct xp_reverse_req q;
	char err[256];
	assert_int_equal(xp_reverse_req_from_json(NULL, &q, err, sizeof(err)), -1);
	struct json_object *arr = json_object_new_array();
	assert_int_equal(xp_reverse_req_from_json(arr, &q, err, sizeof(err)), -1);
	json_object_put(arr);
}

static int dec_res(const char *line, struct xp_reverse_res *r, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	err[0] = '\0';
	int x = xp_reverse_res_from_json(o, r, err, errlen);
	json_object_put(o);
	return x;
}

static void test_result_roundtrip(void **state)
{
	(void)state;
	struct xp_reverse_res r = { .sent = 101340, .received = 101154, .seconds = 1.0012, .target_pps = 101159,
				    .offered_pps = 101136, .short_of_target = false, .kernel_sleeps = true,
				    .max_catchup = 12, .lat_known = true, .lat_min_us = 2.1, .lat_mean_us = 9.5,
				    .lat_max_us = 167.2, .lat_p50_us = 8.4, .lat_p99_us = 108.5, .lat_p999_us = 150,
				    .lat_timed = 101154 };
	snprintf(r.held_back_by, sizeof(r.held_back_by), "path");
	xp_lat_init(&r.lat_hist);
	r.lat_hist.n = 3;
	r.lat_hist.recv = 3;
	r.lat_hist.sum = 300;
	r.lat_hist.min = 50;
	r.lat_hist.max = 150;
	r.lat_hist.b[5] = 2;
	r.lat_hist.b[9] = 1;
	struct json_object *o = xp_reverse_res_to_json(&r);
	struct xp_reverse_res d;
	char err[256] = "";
	assert_int_equal(xp_reverse_res_from_json(o, &d, err, sizeof(err)), 0);
	json_object_put(o);
	assert_int_equal(d.rc, 0);
	assert_true(d.sent == 101340 && d.received == 101154);
	assert_true(d.seconds == 1.0012 && d.target_pps == 101159 && d.offered_pps == 101136);
	assert_string_equal(d.held_back_by, "path");
	assert_true(d.kernel_sleeps && !d.short_of_target && d.max_catchup == 12);
	assert_true(d.lat_known && d.lat_p50_us == 8.4 && d.lat_p999_us == 150 && d.lat_timed == 101154);
	assert_true(d.lat_hist.n == 3 && d.lat_hist.b[5] == 2 && d.lat_hist.b[9] == 1 && d.lat_hist.max == 150);
	/* A failed trial: its status and message only; a message with escapes is made printable. */
	assert_int_equal(dec_res("{\"rc\":1,\"error\":\"no route\\u001b[2J\"}", &d, err, sizeof(err)), 0);
	assert_int_equal(d.rc, 1);
	assert_string_equal(d.error, "no route?[2J");
	/* No latency: the reason comes along. */
	assert_int_equal(dec_res("{\"rc\":0,\"sent\":5,\"received\":5,\"latency_why\":\"no stamp\"}", &d, err, sizeof(err)), 0);
	assert_false(d.lat_known);
	assert_string_equal(d.lat_why, "no stamp");
}

static void test_result_refused(void **state)
{
	(void)state;
	static const struct {
		const char *line, *msg;
	} bad[] = {
		{ "{\"sent\":5}", "no 'rc'" },
		{ "{\"rc\":300}", "'rc' is out of range" },
		{ "{\"rc\":0,\"sent\":-5}", "'sent' is out of range" },
		{ "{\"rc\":0,\"sent\":1.5}", "'sent' must be an integer" },
		{ "{\"rc\":0,\"received\":\"all\"}", "'received' must be an integer" },
		{ "{\"rc\":0,\"offered_pps\":-3}", "'offered_pps' is negative" },
		{ "{\"rc\":0,\"held_back_by\":\"gremlins\"}", "unknown held_back_by" },
		{ "{\"rc\":0,\"short_of_target\":1}", "must be true or false" },
		{ "{\"rc\":0,\"latency\":[]}", "'latency' must be an object" },
		{ "{\"rc\":0,\"latency\":{\"p50_us\":-1}}", "'p50_us' is negative" },
		{ "{\"rc\":0,\"latency\":{\"p50_us\":1}}", "histogram is malformed" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct xp_reverse_res r;
		char err[256];
		assert_int_equal(dec_res(bad[i].line, &r, err, sizeof(err)), -1);
		if (!strstr(err, bad[i].msg))
			fail_msg("%s: message '%s' lacks '%s'", bad[i].line, err, bad[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_request_roundtrip),
		cmocka_unit_test(test_request_refused),
		cmocka_unit_test(test_result_roundtrip),
		cmocka_unit_test(test_result_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
