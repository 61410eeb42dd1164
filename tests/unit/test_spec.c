/*
 * A test's specification (user/spec/spec.c): its defaults are the command
 * line's (a test built without argv is the test argv would give), its
 * validation names the setting and the reason, its JSON form reads back
 * into the same spec.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "cli/opts.h"
#include "tests/unit/cli_parse.h"
#include "proto/channel.h"
#include "spec/spec.h"

/* A spec's JSON text, for comparing two specs whole (padding aside). */
static char *json_text(const struct xp_spec *s)
{
	struct json_object *j = xp_spec_to_json(s);
	assert_non_null(j);
	char *t = strdup(json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN));
	json_object_put(j);
	return t;
}

static void test_defaults(void **state)
{
	static struct xp_spec s;
	static struct xp_opts o;
	char *a, *b;

	(void)state;
	xp_spec_default(&s);
	assert_int_equal(s.ntraffic, 1);
	assert_int_equal(s.traffic[0].frame_size, 64);
	assert_int_equal(s.traffic[0].port_lo, XP_DEFAULT_PORT_LO);
	assert_int_equal(s.traffic[0].port_hi, XP_DEFAULT_PORT_HI);
	assert_int_equal(s.traffic[0].cport_lo, XP_DEFAULT_CPORT_LO);
	assert_int_equal(s.traffic[0].cport_hi, XP_DEFAULT_CPORT_HI);
	assert_int_equal(s.traffic[0].rate.unit, XP_RATE_NONE);
	assert_false(s.traffic[0].udp);
	assert_int_equal(s.control_port, XP_CONTROL_PORT_DEFAULT);
	assert_int_equal(s.engine, XP_ENGINE_AUTO);
	assert_int_equal(s.kind, XP_TEST_STREAM);
	assert_true(s.duration == 10.0);
	assert_true(s.interval == 1.0);
	assert_true(s.max_loss < 0);
	assert_true(s.stall_pct == XP_STALL_DEFAULT_PCT);
	assert_int_equal(s.syn_retries, XP_DEFAULT_SYN_RETRIES);
	/* The command line starts from the same test (its table's defaults included). */
	xp_opts_default(&o);
	a = json_text(&s);
	b = json_text(&o.spec);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

/* validate's message for s, which must fail. */
static const char *refused(const struct xp_spec *s)
{
	static char err[256];
	err[0] = '\0';
	assert_int_equal(xp_spec_validate(s, err, sizeof(err)), -1);
	assert_true(err[0] != '\0');
	return err;
}

static void test_validate(void **state)
{
	static struct xp_spec s;
	char err[256];

	(void)state;
	xp_spec_default(&s);
	assert_string_equal(refused(&s), "host: no server address (-c ADDR)");
	snprintf(s.host, sizeof(s.host), "198.19.1.2");
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);

	/* The messages the command line gives for the same tests (tests/unit/test_cli.c checks them there). */
	s.family = AF_INET6;
	assert_string_equal(refused(&s), "198.19.1.2 is not an IPv6 address");
	s.family = 0;
	snprintf(s.host, sizeof(s.host), "198.19.1.300");
	assert_string_equal(refused(&s), "cannot resolve '198.19.1.300': not a valid IPv4 address (four numbers "
					 "0..255, like 198.19.1.2)");
	snprintf(s.host, sizeof(s.host), "198.19.1.2");
	s.traffic[0].port_lo = 5000;
	s.traffic[0].port_hi = 6000;
	assert_string_equal(refused(&s), "port range 5000:6000 includes the control port 5301");
	s.traffic[0].port_lo = XP_DEFAULT_PORT_LO;
	s.traffic[0].port_hi = XP_DEFAULT_PORT_HI;
	s.burst = 8;
	assert_string_equal(refused(&s), "--burst shapes a rate limit: give -b RATE too");
	s.engine = XP_ENGINE_XDP;
	assert_string_equal(refused(&s), "--burst shapes a rate limit: give --cps N too");
	s.cps = 1000;
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);
	s.burst = 0;
	s.cps = 0;
	s.require_rate = true;
	assert_string_equal(refused(&s), "--require-rate checks the offered load against a target: give --cps N too");
	s.require_rate = false;
	s.data_len = 100;
	s.peer_kernel = true;
	assert_string_equal(refused(&s), "--bytes needs the server's XDP program to answer, not --peer kernel");
	s.peer_kernel = false;
	s.kind = XP_TEST_CONNECT;
	s.parallel = 1ul << 30;
	assert_non_null(strstr(refused(&s), "-P 1073741824: the XDP connection engine keeps at most"));
	s.parallel = 1024;
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);
	/* The values themselves, named by their option. */
	s.duration = 0;
	assert_string_equal(refused(&s), "-t: the duration must be above 0 s");
	s.duration = 1;
	s.traffic[0].frame_size = 20;
	assert_string_equal(refused(&s), "-l: frame size 20 is outside 64..9018");
	s.traffic[0].frame_size = 64;
	s.traffic[0].cport_lo = 9;
	s.traffic[0].cport_hi = 8;
	assert_string_equal(refused(&s), "--cport: port range 9:8 is empty");
	s.traffic[0].cport_lo = 8;
	s.ntraffic = XP_SPEC_MAX_STREAMS + 1;
	assert_string_equal(refused(&s), "traffic: 257 streams, a test has 1 to 256");
}

static void test_json_round_trip(void **state)
{
	static struct xp_spec s, back;
	char err[256] = "", *a, *b;

	(void)state;
	xp_spec_default(&s);
	snprintf(s.host, sizeof(s.host), "2001:2::2");
	snprintf(s.dev, sizeof(s.dev), "veth-c");
	snprintf(s.auth_key, sizeof(s.auth_key), "/etc/xdpperf.key");
	snprintf(s.device_netns, sizeof(s.device_netns), "xp-router");
	s.control_port = 5400;
	s.family = AF_INET6;
	s.engine = XP_ENGINE_XDP;
	s.engine_set = true;
	s.xdp_mode = XP_XDP_SKB;
	s.queues = 2;
	s.first_queue = 1;
	s.burst = 16;
	s.kind = XP_TEST_HOLD;
	s.parallel = 5000;
	s.threads = 3;
	assert_int_equal(xp_addr_parse("2001:2::10", &s.bind[0]), 0);
	assert_int_equal(xp_addr_parse("2001:2::11", &s.bind[1]), 0);
	s.nbind = 2;
	s.duration = 2.5;
	s.interval = 0.5;
	s.clock_tai = s.clock_set = true;
	s.rtt = true;
	s.rx_ts = 2;
	s.rx_ts_set = true;
	s.max_loss = 0.25;
	s.stall_pct = 20;
	s.stall_set = true;
	s.require_rate = true;
	s.cps = 12345.5;
	s.syn_retries = 3;
	s.keepalive_s = 1.5;
	s.fin = true;
	s.data_len = 64;
	s.syn_engine = XP_ENGINE_XSK;
	s.first_tuple = 1ull << 40;
	s.pace_catchup_excess = 0.01;
	struct xp_stream *t = &s.traffic[0];
	assert_int_equal(xp_mix_parse("imix", &t->mix, err, sizeof(err)), 0);
	t->frame_size = 1518;
	t->frame_size_set = true;
	t->rate = (struct xp_rate){ XP_RATE_BPS_L1, 1e9 };
	t->udp = true;
	t->zero = true;
	t->port_lo = 7000;
	t->port_hi = 7003;
	t->port_set = true;
	t->cport_lo = 20000;
	t->cport_hi = 20100;
	t->dst_mac_set = true;
	memcpy(t->dst_mac, "\x02\x00\x5e\x10\x00\xfe", 6);

	struct json_object *j = xp_spec_to_json(&s);
	/* Through text, as it travels. */
	struct json_object *j2 = json_tokener_parse(json_object_to_json_string(j));
	assert_int_equal(xp_spec_from_json(j2, &back, err, sizeof(err)), 0);
	json_object_put(j);
	json_object_put(j2);
	a = json_text(&s);
	b = json_text(&back);
	assert_string_equal(a, b);
	free(a);
	free(b);
	/* The members that matter, compared as values too. */
	assert_string_equal(back.host, s.host);
	assert_int_equal(back.family, AF_INET6);
	assert_int_equal(back.kind, XP_TEST_HOLD);
	assert_int_equal(back.engine, XP_ENGINE_XDP);
	assert_int_equal(back.syn_engine, XP_ENGINE_XSK);
	assert_int_equal(back.nbind, 2);
	assert_memory_equal(&back.bind[1], &s.bind[1], sizeof(s.bind[1]));
	assert_true(back.first_tuple == s.first_tuple);
	assert_true(back.cps == s.cps);
	assert_true(back.traffic[0].mix.imix);
	assert_memory_equal(&back.traffic[0].mix, &t->mix, sizeof(t->mix));
	assert_memory_equal(back.traffic[0].dst_mac, t->dst_mac, 6);
	assert_int_equal(back.traffic[0].rate.unit, XP_RATE_BPS_L1);
	assert_true(back.traffic[0].rate.value == 1e9);
	assert_int_equal(back.traffic[0].port_hi, 7003);
}

static void test_json_errors(void **state)
{
	static struct xp_spec s;
	char err[256];

	(void)state;
	struct json_object *j = json_tokener_parse("{\"duration\": \"long\"}");
	assert_int_equal(xp_spec_from_json(j, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "spec: \"duration\" is not a double");
	json_object_put(j);
	j = json_tokener_parse("{\"engine\": \"warp\"}");
	assert_int_equal(xp_spec_from_json(j, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "spec: \"engine\": no engine \"warp\"");
	json_object_put(j);
	j = json_tokener_parse("{\"traffic\": [{\"port_lo\": 70000}]}");
	assert_int_equal(xp_spec_from_json(j, &s, err, sizeof(err)), -1);
	assert_string_equal(err, "spec: \"port_lo\" 70000 is outside 0..65535");
	json_object_put(j);
	/* Members left out keep their defaults. */
	j = json_tokener_parse("{\"host\": \"198.19.1.2\", \"kind\": \"connect\"}");
	assert_int_equal(xp_spec_from_json(j, &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, XP_TEST_CONNECT);
	assert_true(s.duration == 10.0);
	assert_int_equal(s.traffic[0].frame_size, 64);
	json_object_put(j);
}

/* The command line builds the spec: -x and -k are its kind, and its rules are the spec's, word for word. */
static void test_from_command_line(void **state)
{
	static struct xp_opts o;
	char err[256], serr[256];

	(void)state;
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -x", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.kind, XP_TEST_CONNECT);
	assert_int_equal(o.spec.engine, XP_ENGINE_SOCKET);
	assert_int_equal(xp_spec_validate(&o.spec, serr, sizeof(serr)), 0);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -k --engine xdp", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.kind, XP_TEST_HOLD);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -u -l 128 -b 1000pps -t 3", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.kind, XP_TEST_STREAM);
	assert_true(o.spec.traffic[0].udp);
	assert_int_equal(o.spec.traffic[0].frame_size, 128);
	assert_int_equal(o.spec.traffic[0].rate.unit, XP_RATE_PPS);
	assert_true(o.spec.duration == 3.0);
	assert_int_equal(xp_spec_validate(&o.spec, serr, sizeof(serr)), 0);

	/* The same refusal from argv and from the spec it would have made. */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --burst 8", &o, err, sizeof(err)), 2);
	assert_int_equal(xp_spec_validate(&o.spec, serr, sizeof(serr)), -1);
	assert_string_equal(err, serr);
	assert_string_equal(err, "--burst shapes a rate limit: give -b RATE too");
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -6", &o, err, sizeof(err)), 2);
	assert_string_equal(err, "198.19.1.2 is not an IPv6 address");
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -p 5000:6000", &o, err, sizeof(err)), 2);
	assert_string_equal(err, "port range 5000:6000 includes the control port 5301");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_from_command_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
