/*
 * The OTG controller's config (user/otg/config.c, ctl.c, metrics.c) and
 * port locations (user/otg/location.c): good configs taken and given back,
 * every bad one refused with its JSON path and the spec's HTTP status, a
 * start that cannot run leaving nothing running (its reason in the error),
 * metrics' shapes (models v1.61.0) before any traffic.
 * A fake agent (a TCP listener on 127.0.0.1) answers the config's check that
 * the receiving port's agent is there.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "otg/location.h"
#include "otg/otg.h"
#include "util/version.h"

#include "fake_agent.h"

/* A config with the hello-world flow from p1 (this host) to p2 (the fake agent), with extra text spliced in. */
static struct json_object *cfg_of(const char *ports_extra, const char *flow_extra, const char *top_extra)
{
	char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"ports\":[{\"name\":\"p1\",\"location\":\"127.0.0.1\"},{\"name\":\"p2\",\"location\":\"127.0.0.1:%u\"}%s],"
		 "\"flows\":[{\"name\":\"f1\",\"tx_rx\":{\"choice\":\"port\",\"port\":{\"tx_name\":\"p1\",\"rx_names\":[\"p2\"]}},"
		 "\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		 "\"rate\":{\"choice\":\"pps\",\"pps\":1000},\"duration\":{\"choice\":\"fixed_packets\","
		 "\"fixed_packets\":{\"packets\":1000}},\"metrics\":{\"enable\":true}%s}]%s}",
		 agent_port, ports_extra, flow_extra, top_extra);
	struct json_object *j = json_tokener_parse(buf);
	if (!j)
		fail_msg("bad test JSON: %s", buf);
	return j;
}

static void test_location(void **state)
{
	struct xp_otg_loc l;
	char err[200];
	(void)state;
	assert_int_equal(xp_otg_loc_parse("198.18.1.2", &l, err, sizeof(err)), 0);
	assert_string_equal(l.host, "198.18.1.2");
	assert_int_equal(l.port, 0);
	assert_string_equal(l.iface, "");
	assert_int_equal(xp_otg_loc_parse("198.18.1.2:5302;veth0", &l, err, sizeof(err)), 0);
	assert_string_equal(l.host, "198.18.1.2");
	assert_int_equal(l.port, 5302);
	assert_string_equal(l.iface, "veth0");
	assert_int_equal(xp_otg_loc_parse("[2001:2:0:1::2]:7000;eth1", &l, err, sizeof(err)), 0);
	assert_string_equal(l.host, "2001:2:0:1::2");
	assert_int_equal(l.port, 7000);
	assert_string_equal(l.iface, "eth1");
	assert_int_equal(xp_otg_loc_parse("2001:2:0:1::2", &l, err, sizeof(err)), 0);
	assert_string_equal(l.host, "2001:2:0:1::2");
	assert_int_equal(l.port, 0);
	assert_int_equal(xp_otg_loc_parse("agent-a;ens1", &l, err, sizeof(err)), 0);
	assert_string_equal(l.host, "agent-a");
	assert_string_equal(l.iface, "ens1");
	static const struct { const char *in, *why; } bad[] = {
		{ "", "empty" },
		{ "h:0", "not 1..65535" },
		{ "h:70000", "not 1..65535" },
		{ "h:x1", "not a number" },
		{ "h;", "nothing after ';'" },
		{ "h;averyveryverylongname", "longer than 15" },
		{ "[::1", "without ']'" },
		{ "[nothost]:1", "not an IPv6 address" },
		{ "[::1]x", "only ':CONTROL_PORT'" },
		{ "1:2:zz", "not an IPv6 address" },
		{ ":5301", "no host" },
		{ "a b", "space" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (xp_otg_loc_parse(bad[i].in, &l, err, sizeof(err)) != -1 || !strstr(err, bad[i].why))
			fail_msg("location \"%s\": got \"%s\", wanted \"%s\"", bad[i].in, err, bad[i].why);
	}
	assert_true(xp_otg_host_is_local("localhost"));
	assert_true(xp_otg_host_is_local("127.0.0.1"));
	assert_true(xp_otg_host_is_local("::1"));
	assert_false(xp_otg_host_is_local("198.51.100.77")); /* TEST-NET-2: on no interface here */
	assert_false(xp_otg_host_is_local("agent-a"));
}

static void test_good_config(void **state)
{
	(void)state;
	struct xp_otg *c = xp_otg_new(&(struct xp_otg_opts){ 0 });
	struct xp_otg_err err = { 0 };
	struct json_object *w = NULL, *cfg = cfg_of("", "", "");
	assert_non_null(c);
	if (xp_otg_set_config(c, cfg, &w, &err))
		fail_msg("config refused: %d %s", err.http, err.msg);
	assert_non_null(w);
	assert_int_equal(json_object_array_length(json_object_object_get(w, "warnings")), 0);
	json_object_put(w);
	struct json_object *back = xp_otg_get_config(c);
	assert_true(json_object_equal(back, cfg));
	json_object_put(back);
	json_object_put(cfg);

	/* Flow metrics before any start: every flow, stopped, nothing sent or received. */
	struct json_object *req = json_tokener_parse("{\"choice\":\"flow\",\"flow\":{\"flow_names\":[]}}");
	struct json_object *m = xp_otg_metrics(c, req, &err);
	assert_non_null(m);
	assert_string_equal(json_object_get_string(json_object_object_get(m, "choice")), "flow_metrics");
	struct json_object *fm = json_object_object_get(m, "flow_metrics");
	assert_int_equal(json_object_array_length(fm), 1);
	struct json_object *f = json_object_array_get_idx(fm, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(f, "name")), "f1");
	assert_string_equal(json_object_get_string(json_object_object_get(f, "port_tx")), "p1");
	assert_string_equal(json_object_get_string(json_object_object_get(f, "port_rx")), "p2");
	assert_string_equal(json_object_get_string(json_object_object_get(f, "transmit")), "stopped");
	assert_int_equal(json_object_get_uint64(json_object_object_get(f, "frames_tx")), 0);
	assert_int_equal(json_object_get_uint64(json_object_object_get(f, "frames_rx")), 0);
	json_object_put(m);
	json_object_put(req);

	/* Port metrics with two columns: the name and those two only. */
	req = json_tokener_parse("{\"choice\":\"port\",\"port\":{\"port_names\":[\"p2\"],"
				 "\"column_names\":[\"frames_rx\",\"transmit\"]}}");
	m = xp_otg_metrics(c, req, &err);
	assert_non_null(m);
	struct json_object *pm = json_object_object_get(m, "port_metrics");
	assert_int_equal(json_object_array_length(pm), 1);
	struct json_object *p = json_object_array_get_idx(pm, 0);
	assert_string_equal(json_object_get_string(json_object_object_get(p, "name")), "p2");
	assert_int_equal(json_object_object_length(p), 3);
	assert_non_null(json_object_object_get(p, "frames_rx"));
	json_object_put(m);
	json_object_put(req);

	struct json_object *v = xp_otg_version();
	assert_string_equal(json_object_get_string(json_object_object_get(v, "api_spec_version")), "1.61.0");
	assert_string_equal(json_object_get_string(json_object_object_get(v, "app_version")), xp_version());
	json_object_put(v);
	xp_otg_free(c);
}

static void refused(struct xp_otg *c, struct json_object *cfg, int http, const char *want)
{
	struct xp_otg_err err = { 0 };
	struct json_object *w = NULL;
	int rc = xp_otg_set_config(c, cfg, &w, &err);
	json_object_put(cfg);
	if (rc != -1 || err.http != http || !strstr(err.msg, want) || strchr(err.msg, '\n'))
		fail_msg("wanted %d \"%s\", got rc %d, %d \"%s\"", http, want, rc, err.http, err.msg);
	assert_string_equal(err.kind, http >= 500 ? "internal" : "validation");
	assert_null(w);
}

static void test_bad_configs(void **state)
{
	(void)state;
	struct xp_otg *c = xp_otg_new(&(struct xp_otg_opts){ 0 });
	char port9[64];
	refused(c, json_tokener_parse("[1]"), 400, "config: not a JSON object");
	refused(c, cfg_of("", "", ",\"lags\":[]"), 400, "lags: not supported");
	refused(c, cfg_of(",{\"name\":\"p3\",\"location\":\"x\",\"speed\":1}", "", ""), 400, "ports[2].speed: not supported");
	refused(c, cfg_of(",{\"name\":\"p1\",\"location\":\"x\"}", "", ""), 400, "ports[2].name: \"p1\" is ports[0]'s");
	refused(c, cfg_of(",{\"name\":\"p3\"}", "", ""), 400, "ports[2].location: missing");
	refused(c, cfg_of(",{\"name\":\"p3\",\"location\":\"h:99999\"}", "", ""), 400, "ports[2].location: the control port");
	refused(c, cfg_of("", ",\"bogus\":1", ""), 400, "flows[0].bogus: not supported");
	refused(c, cfg_of("", ",\"size\":{\"choice\":\"fixed\",\"fixed\":12}", ""), 400, "flows[0].size");
	/* The same flow again, sent from p9 that no port is. */
	snprintf(port9, sizeof(port9), "p9");
	struct json_object *two = cfg_of("", "", "");
	struct json_object *fl = json_object_object_get(two, "flows"), *dup = NULL;
	json_object_deep_copy(json_object_array_get_idx(fl, 0), &dup, NULL);
	json_object_object_add(dup, "name", json_object_new_string("f2"));
	json_object_object_add(json_object_object_get(json_object_object_get(dup, "tx_rx"), "port"), "tx_name",
			       json_object_new_string(port9));
	json_object_array_add(fl, dup);
	refused(c, two, 400, "flows[1].tx_rx.port.tx_name: no port p9");
	refused(c, json_tokener_parse("{\"ports\":[{\"name\":\"p1\",\"location\":\"127.0.0.1\"}],\"flows\":[{\"name\":\"f\","
				      "\"tx_rx\":{\"choice\":\"port\",\"port\":{\"tx_name\":\"p1\",\"rx_names\":[\"p1\"]}},"
				      "\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}]}]}"),
		400, "flows[0].tx_rx.port.rx_names[0]: p1 sends the flow");
	refused(c, cfg_of("", ",\"tx_rx\":{\"choice\":\"device\"}", ""), 400, "flows[0].tx_rx.choice: device");
	/* Two flows without stamps into one port cannot be counted apart. */
	struct json_object *nost = cfg_of("", "", "");
	fl = json_object_object_get(nost, "flows");
	json_object_object_add(json_object_array_get_idx(fl, 0), "metrics", json_object_new_object());
	dup = NULL;
	json_object_deep_copy(json_object_array_get_idx(fl, 0), &dup, NULL);
	json_object_object_add(dup, "name", json_object_new_string("f2"));
	json_object_array_add(fl, dup);
	refused(c, nost, 400, "flows[0].metrics.enable: p2 receives other flows too");
	/* A sending port elsewhere is sent by its agent (issue 27): one that does not answer is refused by its path. */
	char one_agent[1024];
	snprintf(one_agent, sizeof(one_agent), "{\"ports\":[{\"name\":\"a\",\"location\":\"127.0.0.1:1\"},{\"name\":\"b\","
		 "\"location\":\"127.0.0.1:%u\"}],\"flows\":[{\"name\":\"f\",\"tx_rx\":{\"port\":{\"tx_name\":"
		 "\"a\",\"rx_names\":[\"b\"]}},\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}]}]}",
		 agent_port);
	refused(c, json_tokener_parse(one_agent), 400, "ports[0].location: no agent at 127.0.0.1 port 1");
	/* Two sending ports of this host without a control port: the controller runs one test itself. */
	char two_ports[1024];
	snprintf(two_ports, sizeof(two_ports), "{\"ports\":[{\"name\":\"a\",\"location\":\"127.0.0.1\"},{\"name\":\"b\",\"location\":"
		 "\"localhost\"},{\"name\":\"r\",\"location\":\"127.0.0.1:%u\"}],\"flows\":[{\"name\":\"f\",\"tx_rx\":{\"port\":"
		 "{\"tx_name\":\"a\",\"rx_names\":[\"r\"]}},\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
		 "{\"choice\":\"udp\"}],\"metrics\":{\"enable\":true}},{\"name\":\"g\",\"tx_rx\":{\"port\":{\"tx_name\":\"b\","
		 "\"rx_names\":[\"r\"]}},\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		 "\"metrics\":{\"enable\":true}}]}", agent_port);
	refused(c, json_tokener_parse(two_ports), 400, "flows[1].tx_rx.port.tx_name: b is a second sending port of this host");
	/* An unreachable receiving agent (port 1 on loopback: nobody listens). */
	refused(c, json_tokener_parse("{\"ports\":[{\"name\":\"p1\",\"location\":\"127.0.0.1\"},{\"name\":\"p2\","
				      "\"location\":\"127.0.0.1:1\"}],\"flows\":[{\"name\":\"f\",\"tx_rx\":{\"port\":{\"tx_name\":"
				      "\"p1\",\"rx_names\":[\"p2\"]}},\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}]}]}"),
		400, "ports[1].location: no agent at 127.0.0.1 port 1");
	/* A receive-only port's interface would be ignored: refused. */
	struct json_object *ifc = cfg_of("", "", "");
	char loc[64];
	snprintf(loc, sizeof(loc), "127.0.0.1:%u;eth9", agent_port);
	json_object_object_add(json_object_array_get_idx(json_object_object_get(ifc, "ports"), 1), "location",
			       json_object_new_string(loc));
	refused(c, ifc, 400, "ports[1].location: ';eth9' names the interface a port sends on");
	/* Nothing was taken: the config is still empty. */
	struct json_object *back = xp_otg_get_config(c);
	assert_int_equal(json_object_object_length(back), 0);
	json_object_put(back);
	xp_otg_free(c);
}

static void state_refused(struct xp_otg *c, const char *body, int http, const char *want)
{
	struct xp_otg_err err = { 0 };
	struct json_object *j = json_tokener_parse(body);
	int rc = xp_otg_set_state(c, j, NULL, &err);
	json_object_put(j);
	if (rc != -1 || err.http != http || !strstr(err.msg, want))
		fail_msg("%s: wanted %d \"%s\", got rc %d, %d \"%s\"", body, http, want, rc, err.http, err.msg);
}

static void metrics_refused(struct xp_otg *c, const char *body, const char *want)
{
	struct xp_otg_err err = { 0 };
	struct json_object *j = json_tokener_parse(body);
	struct json_object *m = xp_otg_metrics(c, j, &err);
	json_object_put(j);
	if (m || err.http != 400 || !strstr(err.msg, want))
		fail_msg("%s: wanted 400 \"%s\", got %d \"%s\"", body, want, err.http, err.msg);
}

static void test_state_and_start(void **state)
{
	(void)state;
	struct xp_otg *c = xp_otg_new(&(struct xp_otg_opts){ 0 });
	static const char start[] = "{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\","
				    "\"flow_transmit\":{\"state\":\"start\"}}}";
	state_refused(c, start, 400, "no flows to start");
	struct json_object *cfg = cfg_of("", "", "");
	struct xp_otg_err err = { 0 };
	assert_int_equal(xp_otg_set_config(c, cfg, NULL, &err), 0);
	json_object_put(cfg);
	state_refused(c, "{\"choice\":\"port\"}", 400, "choice: port is not supported");
	state_refused(c, "{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\",\"flow_transmit\":"
		      "{\"state\":\"pause\"}}}", 400, "pause is not supported");
	state_refused(c, "{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\",\"flow_transmit\":"
		      "{\"state\":\"start\",\"flow_names\":[\"nope\"]}}}", 400, "flow_names[0]: no flow nope");
	metrics_refused(c, "{\"choice\":\"bgpv4\"}", "choice: bgpv4 metrics are not supported");
	metrics_refused(c, "{\"choice\":\"flow\",\"flow\":{\"flow_names\":[\"zz\"]}}", "flow.flow_names[0]: no flow zz");
	metrics_refused(c, "{\"choice\":\"flow\",\"flow\":{\"metric_names\":[\"tx_l1_rate_bps\"]}}",
			"flow.metric_names[0]: tx_l1_rate_bps is not given");
	/* A start that cannot run (the client sends nowhere over loopback): the client's reason, nothing runs. */
	struct json_object *j = json_tokener_parse(start);
	int rc = xp_otg_set_state(c, j, NULL, &err);
	json_object_put(j);
	if (rc != -1 || err.http != 400 || strncmp(err.msg, "start: p1: ", 11) || !strstr(err.msg, "local address"))
		fail_msg("start over loopback: rc %d, %d \"%s\"", rc, err.http, err.msg);
	assert_true(xp_otg_wait_stopped(c, 1));
	struct json_object *req = json_tokener_parse("{\"choice\":\"port\"}");
	struct json_object *m = xp_otg_metrics(c, req, &err);
	struct json_object *pm = json_object_object_get(m, "port_metrics");
	assert_int_equal(json_object_array_length(pm), 2);
	for (int i = 0; i < 2; i++)
		assert_string_equal(json_object_get_string(json_object_object_get(json_object_array_get_idx(pm, i),
										   "transmit")), "stopped");
	json_object_put(m);
	json_object_put(req);
	/* Nothing runs: a new config is taken. */
	cfg = cfg_of("", "", "");
	assert_int_equal(xp_otg_set_config(c, cfg, NULL, &err), 0);
	json_object_put(cfg);
	xp_otg_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_location),
		cmocka_unit_test(test_good_config),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_state_and_start),
	};
	return cmocka_run_group_tests(tests, agent_up, agent_down);
}
