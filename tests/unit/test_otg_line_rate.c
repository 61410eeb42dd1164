/*
 * Issue 27: a flow above its port's line rate is refused by the rate's JSON
 * path with HTTP 400 (user/otg/line_rate.c): against --line-rate (the
 * controller's line_bps), one flow alone and a port's flows summed, at
 * their rate on the wire; rates at or below it and a percentage of it are
 * taken; an interface without a real speed (lo) leaves the rate unchecked.
 * A fake agent (a listener on 127.0.0.1) answers the reachability check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "otg/line_rate.h"
#include "otg/otg.h"

#include "fake_agent.h"

/* p1 (this host, interface iface) -> p2 (the fake agent): one flow per rate given ({"choice":..} bodies). */
static struct json_object *cfg_of(const char *iface, const char *size, const char *r1, const char *r2)
{
	char buf[4096], flows[3000] = "";
	const char *rates[] = { r1, r2 };
	for (unsigned i = 0; i < 2 && rates[i]; i++)
		snprintf(flows + strlen(flows), sizeof(flows) - strlen(flows),
			 "%s{\"name\":\"f%u\",\"tx_rx\":{\"choice\":\"port\",\"port\":{\"tx_name\":\"p1\",\"rx_names\":[\"p2\"]}},"
			 "\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
			 "\"size\":%s,\"rate\":%s,\"duration\":{\"choice\":\"fixed_packets\",\"fixed_packets\":{\"packets\":1000}},"
			 "\"metrics\":{\"enable\":true}}",
			 i ? "," : "", i + 1, size, rates[i]);
	snprintf(buf, sizeof(buf),
		 "{\"ports\":[{\"name\":\"p1\",\"location\":\"127.0.0.1%s%s\"},{\"name\":\"p2\",\"location\":\"127.0.0.1:%u\"}],"
		 "\"flows\":[%s]}", iface ? ";" : "", iface ? iface : "", agent_port, flows);
	struct json_object *j = json_tokener_parse(buf);
	if (!j)
		fail_msg("bad test JSON: %s", buf);
	return j;
}

/* The controller with line_bps; the config's result: 0 taken, or the HTTP status with msg filled. */
static int try(double line_bps, struct json_object *cfg, char *msg, size_t len)
{
	struct xp_otg *c = xp_otg_new(&(struct xp_otg_opts){ .line_bps = line_bps });
	struct xp_otg_err err = { 0 };
	assert_non_null(c);
	int rc = xp_otg_set_config(c, cfg, NULL, &err);
	snprintf(msg, len, "%s", rc ? err.msg : "");
	if (rc)
		assert_string_equal(err.kind, "validation");
	xp_otg_free(c);
	json_object_put(cfg);
	return rc ? err.http : 0;
}

#define FIXED(n) "{\"choice\":\"fixed\",\"fixed\":" #n "}"

static void test_one_flow_above(void **state)
{
	char m[512];
	(void)state;
	/* 1000 Gbit/s of 64-byte frames on a 10G port: refused, the rate's member named. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(64), "{\"choice\":\"gbps\",\"gbps\":1000}", NULL), m, sizeof(m)),
			 400);
	assert_non_null(strstr(m, "flows[0].rate.gbps: "));
	assert_non_null(strstr(m, "above port p1's line rate of 10.00 Gbit/s (--line-rate)"));
	assert_null(strchr(m, '\n'));
	/* 15 Mpps of 64-byte frames is 10.08 Gbit/s on the wire (84 bytes a frame): above 10G. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(64), "{\"choice\":\"pps\",\"pps\":15000000}", NULL), m, sizeof(m)),
			 400);
	assert_non_null(strstr(m, "flows[0].rate.pps: 10.08 Gbit/s on the wire"));
	/* 14.88 Mpps is 64-byte line rate at 10G (9.9994 Gbit/s): taken. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(64), "{\"choice\":\"pps\",\"pps\":14880000}", NULL), m, sizeof(m)), 0);
	/* 9 Gbit/s of frames (L2) at 1518 bytes is 9.12 Gbit/s on the wire: taken; 9.9 is 10.03: refused. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(1518), "{\"choice\":\"mbps\",\"mbps\":9000}", NULL), m, sizeof(m)), 0);
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(1518), "{\"choice\":\"mbps\",\"mbps\":9900}", NULL), m, sizeof(m)),
			 400);
	assert_non_null(strstr(m, "flows[0].rate.mbps: "));
}

static void test_port_sum_above(void **state)
{
	char m[512];
	(void)state;
	/* 6 + 6 Gbit/s from p1 on a 10G port: the second flow is the one that takes it over. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(1518), "{\"choice\":\"gbps\",\"gbps\":6}", "{\"choice\":\"gbps\",\"gbps\":6}"),
			     m, sizeof(m)), 400);
	assert_non_null(strstr(m, "flows[1].rate.gbps: port p1's flows add up to "));
	/* 4 + 4: taken. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(1518), "{\"choice\":\"gbps\",\"gbps\":4}", "{\"choice\":\"gbps\",\"gbps\":4}"),
			     m, sizeof(m)), 0);
}

static void test_percentage_and_unknown(void **state)
{
	char m[512];
	(void)state;
	/* A percentage is of the line rate: 50 % taken with it, refused without it. */
	assert_int_equal(try(10e9, cfg_of(NULL, FIXED(64), "{\"choice\":\"percentage\",\"percentage\":50}", NULL), m, sizeof(m)),
			 0);
	assert_int_equal(try(0, cfg_of(NULL, FIXED(64), "{\"choice\":\"percentage\",\"percentage\":50}", NULL), m, sizeof(m)),
			 400);
	assert_non_null(strstr(m, "flows[0].rate.percentage: "));
	/* lo has no speed of its own (ethtool): without --line-rate nothing to refuse against. */
	char drv[32];
	assert_true(otg_iface_speed_bps("lo", drv, sizeof(drv)) == 0);
	assert_int_equal(try(0, cfg_of("lo", FIXED(64), "{\"choice\":\"gbps\",\"gbps\":1000}", NULL), m, sizeof(m)), 0);
	/* An interface that is not there has no speed either (the run says it is missing). */
	assert_true(otg_iface_speed_bps("xp-nosuch0", drv, sizeof(drv)) == 0);
	/* With --line-rate the named interface's speed is not asked: the link's rate is the user's. */
	assert_int_equal(try(1e9, cfg_of("lo", FIXED(64), "{\"choice\":\"gbps\",\"gbps\":2}", NULL), m, sizeof(m)), 400);
	assert_non_null(strstr(m, "flows[0].rate.gbps: "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_flow_above),
		cmocka_unit_test(test_port_sum_above),
		cmocka_unit_test(test_percentage_and_unknown),
	};
	return cmocka_run_group_tests(tests, agent_up, agent_down);
}
