/*
 * --flows FILE (user/spec/otg_flows.c): the Open Traffic Generator's flows
 * read into the test's traffic. The example files of docs/examples/flows/
 * read field by field, the model's defaults, every refusal by its JSON
 * path, and the patterns through the spec's JSON form and back.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "spec/otg_flows.h"
#include "spec/spec.h"

static struct xp_spec S;

static int load(const char *file, double line_rate, char *err, size_t errlen)
{
	xp_spec_default(&S);
	snprintf(S.host, sizeof(S.host), "198.18.1.1");
	return xp_otg_flows_load(file, line_rate, &S, err, errlen);
}

/* Parse text as a flow file: 0, or -1 with the message in err. */
static int parse_text(const char *text, double line_rate, char *err, size_t errlen)
{
	struct json_object *j = json_tokener_parse(text);
	assert_non_null(j);
	xp_spec_default(&S);
	snprintf(S.host, sizeof(S.host), "198.18.1.1");
	int rc = xp_otg_flows_parse(j, "f.json", line_rate, &S, err, errlen);
	json_object_put(j);
	return rc;
}

static void valid(void)
{
	char err[256] = "";
	if (xp_spec_validate(&S, err, sizeof(err)))
		fail_msg("validate: %s", err);
}

static const unsigned ALL_AUTO = XP_HDR_AUTO_DST_MAC | XP_HDR_AUTO_SRC_MAC | XP_HDR_AUTO_SRC | XP_HDR_AUTO_DST;

static void test_vlan_pair(void **state)
{
	char err[256] = "";
	struct xp_flow_hdr h;

	(void)state;
	if (load("docs/examples/flows/vlan_pair.json", 0, err, sizeof(err)))
		fail_msg("%s", err);
	valid();
	assert_int_equal(S.ntraffic, 2);
	const struct xp_stream *a = &S.traffic[0], *b = &S.traffic[1];
	assert_string_equal(a->name, "cust-a");
	assert_string_equal(b->name, "svc-10-cust-b");
	assert_true(a->has_hdr && a->udp && !a->no_stamps);
	assert_int_equal(a->hdr_auto, ALL_AUTO | XP_HDR_AUTO_SPORT);
	assert_int_equal(a->hdr.base.nvlan, 1);
	assert_int_equal(a->hdr.base.vlan[0].tpid, XP_TPID_8021Q);
	assert_int_equal(a->hdr.base.vlan[0].vid, 100);
	assert_int_equal(a->hdr.base.vlan[0].pcp, 3);
	assert_int_equal(a->hdr.base.dport, 9000);
	assert_int_equal(a->hdr.base.src.family, AF_INET);
	assert_int_equal(a->hdr.base.ttl, 64); /* the model's default */
	assert_int_equal(a->frame_size, 128);
	assert_true(a->frames == 100000);
	assert_int_equal(a->rate.unit, XP_RATE_PPS);
	assert_true(a->rate.value == 10000);
	/* QinQ: the outer tag as given (802.1ad), the inner one's TPID the default 802.1Q, its VID 100..103. */
	assert_int_equal(b->hdr.base.nvlan, 2);
	assert_int_equal(b->hdr.base.vlan[0].tpid, XP_TPID_8021AD);
	assert_int_equal(b->hdr.base.vlan[1].tpid, XP_TPID_8021Q);
	for (unsigned n = 0; n < 9; n++) {
		xp_flow_pat_at(&b->hdr, n, &h);
		assert_int_equal(h.vlan[0].vid, 10);
		assert_int_equal(h.vlan[1].vid, 100 + n % 4);
	}
}

static void test_qos(void **state)
{
	char err[256] = "";
	struct xp_flow_hdr h;

	(void)state;
	if (load("docs/examples/flows/qos_ef_be.json", 0, err, sizeof(err)))
		fail_msg("%s", err);
	valid();
	assert_int_equal(S.ntraffic, 2);
	assert_int_equal(S.traffic[0].hdr.base.dscp, 46);
	assert_int_equal(S.traffic[1].hdr.base.dscp, 0);
	assert_int_equal(S.traffic[0].rate.unit, XP_RATE_BPS_L2);
	assert_true(S.traffic[0].rate.value == 10e6);
	assert_true(S.traffic[1].rate.value == 150e6);
	assert_true(S.traffic[0].frames == 0); /* continuous: for -t */
	assert_int_equal(S.traffic[0].hdr_auto, ALL_AUTO | XP_HDR_AUTO_DPORT);
	assert_int_equal(S.traffic[1].hdr_auto, ALL_AUTO | XP_HDR_AUTO_SPORT | XP_HDR_AUTO_DPORT);
	const struct xp_pattern *sp = &S.traffic[0].hdr.f[XP_FF_SPORT];
	assert_int_equal(sp->kind, XP_PAT_RANDOM);
	assert_int_equal(sp->seed, 5);
	assert_int_equal(sp->count, 64);
	for (unsigned n = 0; n < 200; n++) {
		xp_flow_pat_at(&S.traffic[0].hdr, n, &h);
		assert_in_range(h.sport, 16384, 32767);
		assert_int_equal(h.dscp, 46);
	}
}

static void test_route_spread(void **state)
{
	char err[256] = "";
	struct xp_flow_hdr h;

	(void)state;
	if (load("docs/examples/flows/route_spread.json", 0, err, sizeof(err)))
		fail_msg("%s", err);
	valid();
	const struct xp_stream *t = &S.traffic[0];
	assert_true(t->mix.imix);
	assert_true(t->frames == 1000000); /* 5 s at 200 000 pps */
	assert_int_equal(t->hdr.base.ttl, 32);
	assert_int_equal(t->hdr_auto, XP_HDR_AUTO_DST_MAC | XP_HDR_AUTO_SRC_MAC | XP_HDR_AUTO_SRC |
					      XP_HDR_AUTO_DPORT);
	/* 10 000 destinations in 198.19.0.0/16, repeating after 10 000 frames. */
	unsigned seen24[256] = { 0 };
	for (unsigned n = 0; n < 10000; n++) {
		xp_flow_pat_at(&t->hdr, n, &h);
		uint32_t d = ntohl(h.dst.v4.s_addr);
		assert_int_equal(d >> 16, 0xc613);
		seen24[(d >> 8) & 0xff]++;
		assert_int_equal(h.sport, 20000 + n % 1000);
		struct xp_flow_hdr h2;
		xp_flow_pat_at(&t->hdr, n + 10000, &h2);
		assert_memory_equal(&h.dst, &h2.dst, sizeof(h.dst));
	}
	unsigned routes = 0;
	for (unsigned i = 0; i < 256; i++)
		routes += seen24[i] > 0;
	assert_int_equal(routes, 256);
}

/* Every refusal names the JSON path of what is refused. */
static void test_refusals(void **state)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"gre\"}]}]}",
		  "--flows f.json: flows[0].packet[2].gre: header not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}]},"
		  "{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"mpls\",\"mpls\":{}}]}]}",
		  "--flows f.json: flows[1].packet[1].mpls: header not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ipv4\"}]}]}",
		  "--flows f.json: flows[0].packet[0].ipv4: the first header must be ethernet" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"}]}]}",
		  "--flows f.json: flows[0].packet: ends before a tcp or udp header (xdpperf sends TCP or UDP)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"vlan\"},{\"choice\":\"vlan\"},"
		  "{\"choice\":\"vlan\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}]}]}",
		  "--flows f.json: flows[0].packet[3].vlan: a third VLAN header is not supported (at most 2)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\",\"ethernet\":{\"pfc_queue\":{}}}]}]}",
		  "--flows f.json: flows[0].packet[0].ethernet.pfc_queue: not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\",\"ethernet\":{\"ether_type\":{\"choice\":\"value\","
		  "\"value\":2048}}}]}]}",
		  "--flows f.json: flows[0].packet[0].ethernet.ether_type: only \"auto\" is supported (the next "
		  "header's type)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"vlan\",\"vlan\":{\"tpid\":"
		  "{\"choice\":\"value\",\"value\":37120}}}]}]}",
		  "--flows f.json: flows[0].packet[1].vlan.tpid: only the value 33024 (0x8100, 802.1Q) or 34984 "
		  "(0x88a8, 802.1ad) is supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"vlan\",\"vlan\":{\"id\":"
		  "{\"choice\":\"random\"}}}]}]}",
		  "--flows f.json: flows[0].packet[1].vlan.id.choice: \"random\" is not a choice of this field" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"vlan\",\"vlan\":{\"id\":"
		  "{\"choice\":\"value\",\"value\":5000}}}]}]}",
		  "--flows f.json: flows[0].packet[1].vlan.id.value: 5000 is outside the field's 12 bits (0..4095)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"vlan\",\"vlan\":{\"id\":"
		  "{\"choice\":\"value\",\"value\":5,\"metric_tags\":[]}}}]}]}",
		  "--flows f.json: flows[0].packet[1].vlan.id.metric_tags: not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{\"options\":"
		  "[{\"choice\":\"router_alert\"}]}}]}]}",
		  "--flows f.json: flows[0].packet[1].ipv4.options: IPv4 options are not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{\"priority\":"
		  "{\"choice\":\"tos\"}}}]}]}",
		  "--flows f.json: flows[0].packet[1].ipv4.priority.choice: \"tos\" is not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{"
		  "\"total_length\":{\"choice\":\"value\",\"value\":100}}}]}]}",
		  "--flows f.json: flows[0].packet[1].ipv4.total_length: only \"auto\" is supported (computed)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{"
		  "\"dont_fragment\":{\"choice\":\"value\",\"value\":0}}}]}]}",
		  "--flows f.json: flows[0].packet[1].ipv4.dont_fragment: only the value 1 is supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{"
		  "\"src\":{\"choice\":\"value\",\"value\":\"2001:2::1\"}}}]}]}",
		  "--flows f.json: flows[0].packet[1].ipv4.src.value: \"2001:2::1\" is not an IPv4 address" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv6\",\"ipv6\":{"
		  "\"traffic_class\":{\"choice\":\"increment\"}}}]}]}",
		  "--flows f.json: flows[0].packet[1].ipv6.traffic_class: only \"value\" or \"values\" is supported "
		  "(the class is DSCP and ECN here)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"egress_packet\":[]}]}",
		  "--flows f.json: flows[0].egress_packet: not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"tcp\","
		  "\"tcp\":{\"seq_num\":{\"choice\":\"increment\"}}}]}]}",
		  "--flows f.json: flows[0].packet[2].tcp.seq_num: only \"value\" is supported (fixed per flow)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"rate\":{\"choice\":\"percentage\",\"percentage\":50}}]}",
		  "--flows f.json: flows[0].rate.percentage: a share of the line rate: give --line-rate RATE (the "
		  "link's bit rate on the wire, e.g. 10G)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"duration\":{\"choice\":\"burst\"}}]}",
		  "--flows f.json: flows[0].duration.choice: \"burst\" is not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"duration\":{\"choice\":\"continuous\",\"continuous\":{\"gap\":20}}}]}",
		  "--flows f.json: flows[0].duration.continuous.gap: only 12 bytes (the Ethernet minimum) is supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"metrics\":{\"latency\":{\"enable\":true}}}]}",
		  "--flows f.json: flows[0].metrics: loss, timestamps and latency need \"enable\": true (the stamp)" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"metrics\":{\"enable\":true,\"latency\":{\"enable\":true,\"mode\":\"cut_through\"}}}]}",
		  "--flows f.json: flows[0].metrics.latency.mode: \"cut_through\" is not supported" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],"
		  "\"size\":{\"choice\":\"weight_pairs\",\"weight_pairs\":{\"choice\":\"custom\",\"custom\":"
		  "[{\"size\":64,\"weight\":0.5}]}}}]}",
		  "--flows f.json: flows[0].size.weight_pairs.custom[0].weight: 0.5: whole numbers 1..1024 here" },
		{ "{\"flows\":[{\"name\":\"a\",\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
		  "{\"choice\":\"udp\"}]},{\"name\":\"a\",\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
		  "{\"choice\":\"udp\"}]}]}",
		  "--flows f.json: flows[1].name: \"a\" is flows[0]'s name too" },
		{ "{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{\"protocol\":"
		  "{\"choice\":\"value\",\"value\":6}}},{\"choice\":\"udp\"}]}]}",
		  "--flows f.json: flows[0].packet: the IP header's protocol 6 is not its udp header" },
		{ "{\"flows\":[],\"lags\":[]}", "--flows f.json: lags: not supported (only flows, ports and devices are read)" },
		{ "{\"ports\":[]}", "--flows f.json: flows: missing or empty (the flows to send)" },
		/* A key with a newline is quoted with it replaced: still one line. */
		{ "{\"a\\nb\":1}", "--flows f.json: a?b: not supported (only flows, ports and devices are read)" },
	};
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		if (parse_text(cases[i].text, 0, err, sizeof(err)) != -1)
			fail_msg("case %zu accepted", i);
		if (strcmp(err, cases[i].msg))
			fail_msg("case %zu:\n got  %s\n want %s", i, err, cases[i].msg);
		assert_null(strchr(err, '\n'));
	}
	/* A file json-c cannot read: one line, the file named. */
	err[0] = '\0';
	assert_int_equal(load("/nonexistent/flows.json", 0, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--flows /nonexistent/flows.json: "));
	assert_null(strchr(err, '\n'));
}

/* The model's defaults where the file says nothing, and a percentage with --line-rate. */
static void test_defaults_and_rates(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(parse_text("{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
				    "{\"choice\":\"tcp\"}]}]}", 0, err, sizeof(err)), 0);
	const struct xp_stream *t = &S.traffic[0];
	assert_int_equal(t->frame_size, 64);        /* Flow.Size.fixed */
	assert_int_equal(t->rate.unit, XP_RATE_PPS); /* Flow.Rate: 1000 pps */
	assert_true(t->rate.value == 1000);
	assert_true(t->frames == 0);                /* Flow.Duration: continuous */
	assert_true(t->no_stamps);                  /* Flow.Metrics.enable: false */
	assert_false(t->udp);
	assert_int_equal(t->hdr.base.l4_proto, IPPROTO_TCP);
	assert_int_equal(t->hdr.base.tcp_flags, 0x18); /* ACK|PSH unless ctl_* say */
	valid();
	/* The protocol's "auto" (and the value that names the L4 header) are taken. */
	assert_int_equal(parse_text("{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\","
				    "\"ipv4\":{\"protocol\":{\"choice\":\"auto\"}}},{\"choice\":\"udp\"}]},"
				    "{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\",\"ipv4\":{\"protocol\":"
				    "{\"choice\":\"value\",\"value\":17}}},{\"choice\":\"udp\"}]}]}", 0, err, sizeof(err)), 0);
	valid();
	assert_int_equal(parse_text("{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv6\"},"
				    "{\"choice\":\"udp\"}],\"rate\":{\"choice\":\"percentage\",\"percentage\":25},"
				    "\"size\":{\"choice\":\"increment\",\"increment\":{\"start\":100,\"end\":1500,"
				    "\"step\":100}},\"duration\":{\"choice\":\"fixed_packets\"}}]}",
				    10e9, err, sizeof(err)), 0);
	t = &S.traffic[0];
	assert_int_equal(t->rate.unit, XP_RATE_BPS_L1);
	assert_true(t->rate.value == 2.5e9);
	assert_true(t->rate_pct == 25);
	assert_true(t->size_pat_set);
	assert_int_equal(t->size_pat.count, 15);
	assert_true(xp_pattern_at(&t->size_pat, 14) == 1500);
	assert_true(t->frames == 1); /* Flow.FixedPackets.packets */
	assert_int_equal(t->hdr.base.src.family, AF_INET6);
	/* An IPv6 flow to an IPv4 server: the spec's rule refuses it. */
	char e2[256];
	assert_int_equal(xp_spec_validate(&S, e2, sizeof(e2)), -1);
	assert_string_equal(e2, "flows[0]: ipv6.src is IPv6, the server -c 198.18.1.1 is IPv4");
}

/* 10 % of a 1 Gbit/s line is 100 Mbit/s in L1 bits: 64-byte frames take 84 bytes of line time (preamble and gap
 * with them), so 148 809.5 frames/s; the share survives the spec's JSON form. */
static void test_percentage(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(parse_text("{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
				    "{\"choice\":\"udp\"}],\"rate\":{\"choice\":\"percentage\",\"percentage\":10},"
				    "\"size\":{\"choice\":\"fixed\",\"fixed\":64}}]}", 1e9, err, sizeof(err)), 0);
	const struct xp_stream *t = &S.traffic[0];
	assert_int_equal(t->rate.unit, XP_RATE_BPS_L1);
	assert_true(t->rate.value == 1e8);
	assert_true(t->rate_pct == 10);
	double pps = xp_rate_to_pps(&t->rate, t->frame_size);
	assert_true(fabs(pps - 1e8 / (84 * 8)) < 1e-6 && pps > 148809 && pps < 148810);
	S.line_bps = 1e9;
	struct json_object *j = xp_spec_to_json(&S);
	static struct xp_spec back;
	assert_int_equal(xp_spec_from_json(j, &back, err, sizeof(err)), 0);
	json_object_put(j);
	assert_true(back.line_bps == 1e9);
	assert_true(back.traffic[0].rate_pct == 10);
	assert_true(back.traffic[0].rate.value == 1e8);
	S.line_bps = 0;
	/* 0 % sends nothing: refused; above 100 %: the model's range. */
	assert_int_equal(parse_text("{\"flows\":[{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
				    "{\"choice\":\"udp\"}],\"rate\":{\"choice\":\"percentage\",\"percentage\":0}}]}",
				    1e9, err, sizeof(err)), -1);
	assert_string_equal(err, "--flows f.json: flows[0].rate.percentage: 0 % sends nothing");
}

static void test_too_many(void **state)
{
	char err[256] = "";
	size_t cap = 300 * 120 + 64, l;
	char *text = malloc(cap);

	(void)state;
	l = (size_t)snprintf(text, cap, "{\"flows\":[");
	for (unsigned i = 0; i < 257; i++)
		l += (size_t)snprintf(text + l, cap - l, "%s{\"packet\":[{\"choice\":\"ethernet\"},{\"choice\":\"ipv4\"},"
				      "{\"choice\":\"udp\"}]}", i ? "," : "");
	snprintf(text + l, cap - l, "]}");
	assert_int_equal(parse_text(text, 0, err, sizeof(err)), -1);
	assert_string_equal(err, "--flows f.json: flows: 257 flows, a test has at most 256");
	/* 256 are a test. */
	l = (size_t)snprintf(text, cap, "{\"flows\":[");
	for (unsigned i = 0; i < 256; i++)
		l += (size_t)snprintf(text + l, cap - l, "%s{\"name\":\"f%u\",\"packet\":[{\"choice\":\"ethernet\"},"
				      "{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}]}", i ? "," : "", i);
	snprintf(text + l, cap - l, "]}");
	assert_int_equal(parse_text(text, 0, err, sizeof(err)), 0);
	assert_int_equal(S.ntraffic, 256);
	valid();
	free(text);
}

/* The flows through the spec's JSON form and back: the same frames. */
static void test_round_trip(void **state)
{
	static struct xp_spec back;
	static const char *const files[] = { "docs/examples/flows/vlan_pair.json", "docs/examples/flows/qos_ef_be.json",
					     "docs/examples/flows/route_spread.json" };
	char err[256] = "";

	(void)state;
	for (unsigned f = 0; f < 3; f++) {
		if (load(files[f], 0, err, sizeof(err)))
			fail_msg("%s", err);
		struct json_object *j = xp_spec_to_json(&S);
		struct json_object *j2 = json_tokener_parse(json_object_to_json_string(j));
		if (xp_spec_from_json(j2, &back, err, sizeof(err)))
			fail_msg("%s: %s", files[f], err);
		json_object_put(j);
		json_object_put(j2);
		assert_int_equal(back.ntraffic, S.ntraffic);
		for (unsigned i = 0; i < S.ntraffic; i++) {
			assert_string_equal(back.traffic[i].name, S.traffic[i].name);
			assert_int_equal(back.traffic[i].hdr_auto, S.traffic[i].hdr_auto);
			for (uint64_t n = 0; n < 20000; n += 13) {
				struct xp_flow_hdr a, b;
				xp_flow_pat_at(&S.traffic[i].hdr, n, &a);
				xp_flow_pat_at(&back.traffic[i].hdr, n, &b);
				assert_memory_equal(&a, &b, sizeof(a));
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vlan_pair),
		cmocka_unit_test(test_qos),
		cmocka_unit_test(test_route_spread),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_defaults_and_rates),
		cmocka_unit_test(test_percentage),
		cmocka_unit_test(test_too_many),
		cmocka_unit_test(test_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
