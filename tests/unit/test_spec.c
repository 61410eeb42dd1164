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
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
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

/* A spec with two flows: QinQ with patterns, and one of the client's own headers (auto) with a size pattern. */
static void two_flows(struct xp_spec *s)
{
	struct xp_flow_hdr h;

	xp_spec_default(s);
	snprintf(s->host, sizeof(s->host), "198.18.1.1");
	s->ntraffic = 2;
	s->traffic[1] = s->traffic[0];
	for (unsigned i = 0; i < 2; i++) {
		struct xp_stream *t = &s->traffic[i];
		memset(&h, 0, sizeof(h));
		h.l4_proto = IPPROTO_UDP;
		t->udp = true;
		t->has_hdr = true;
		t->rate = (struct xp_rate){ XP_RATE_PPS, 1000.0 * (i + 1) };
		snprintf(t->name, sizeof(t->name), "flow%u", i);
		if (i == 0) {
			h.nvlan = 2;
			h.vlan[0] = (struct xp_vlan_tag){ XP_TPID_8021AD, 3, 0, 10 };
			h.vlan[1] = (struct xp_vlan_tag){ XP_TPID_8021Q, 0, 1, 100 };
			assert_int_equal(xp_addr_parse("198.18.1.2", &h.src), 0);
			assert_int_equal(xp_addr_parse("198.18.1.1", &h.dst), 0);
			h.dscp = 46;
			h.ttl = 9;
			h.sport = 1000;
			h.dport = 2000;
			xp_flow_pat_init(&t->hdr, &h);
			t->hdr.f[XP_FF_VLAN1_VID] = (struct xp_pattern){ .kind = XP_PAT_INCREMENT, .width = 12,
									 .value = 100, .step = 2, .count = 50 };
			t->hdr.f[XP_FF_DST] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 32,
								   .min = 0xc6120100u, .max = 0xc61201ffu,
								   .seed = 7, .count = 1000 };
			t->hdr.f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_VALUES, .width = 16,
								     .nvalues = 3, .values = { 5, 6, 9 } };
			t->frame_size = 128;
			t->frame_size_set = true;
			t->frames = 5000;
		} else {
			t->hdr_auto = XP_HDR_AUTO_DST_MAC | XP_HDR_AUTO_SRC_MAC | XP_HDR_AUTO_SRC |
				      XP_HDR_AUTO_DST | XP_HDR_AUTO_SPORT | XP_HDR_AUTO_DPORT;
			xp_flow_pat_init(&t->hdr, &h);
			t->size_pat_set = true;
			t->size_pat = (struct xp_pattern){ .kind = XP_PAT_INCREMENT, .width = XP_SIZE_PAT_WIDTH,
							   .value = 64, .step = 64, .count = 23 };
			t->no_stamps = true;
		}
	}
	s->flow_top = 3;
}

static void test_flows_json(void **state)
{
	static struct xp_spec s, back;
	char err[256] = "", *a, *b;

	(void)state;
	two_flows(&s);
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);
	struct json_object *j = xp_spec_to_json(&s);
	struct json_object *j2 = json_tokener_parse(json_object_to_json_string(j));
	assert_int_equal(xp_spec_from_json(j2, &back, err, sizeof(err)), 0);
	json_object_put(j);
	json_object_put(j2);
	a = json_text(&s);
	b = json_text(&back);
	assert_string_equal(a, b);
	free(a);
	free(b);
	assert_int_equal(back.ntraffic, 2);
	assert_int_equal(back.flow_top, 3);
	assert_string_equal(back.traffic[1].name, "flow1");
	assert_true(back.traffic[0].has_hdr && back.traffic[1].has_hdr);
	assert_int_equal(back.traffic[1].hdr_auto, s.traffic[1].hdr_auto);
	assert_true(back.traffic[0].frames == 5000);
	assert_true(back.traffic[1].no_stamps && !back.traffic[0].no_stamps);
	/* Frame by frame, the headers read back give the same frames. */
	for (uint64_t n = 0; n < 3000; n += 7) {
		struct xp_flow_hdr h1, h2;
		xp_flow_pat_at(&s.traffic[0].hdr, n, &h1);
		xp_flow_pat_at(&back.traffic[0].hdr, n, &h2);
		assert_memory_equal(&h1, &h2, sizeof(h1));
		assert_true(xp_pattern_at(&back.traffic[1].size_pat, n) == xp_pattern_at(&s.traffic[1].size_pat, n));
	}
	/* Not a field of a flow: named. */
	j = json_tokener_parse("{\"traffic\": [{\"hdr\": {\"patterns\": {\"vid\": {}}}}]}");
	assert_int_equal(xp_spec_from_json(j, &back, err, sizeof(err)), -1);
	assert_string_equal(err, "spec: hdr \"patterns\": no field \"vid\"");
	json_object_put(j);
	j = json_tokener_parse("{\"traffic\": [{\"hdr\": {\"patterns\": {\"ttl\": {\"choice\": \"value\", "
			       "\"value\": 256}}}}]}");
	assert_int_equal(xp_spec_from_json(j, &back, err, sizeof(err)), -1);
	assert_string_equal(err, "spec: hdr \"patterns\".ttl.value: 256 is outside the field's 8 bits (0..255)");
	json_object_put(j);
}

static void test_flows_validate(void **state)
{
	static struct xp_spec s;

	(void)state;
	two_flows(&s);
	/* Each flow's fields, named by the flow and the field. */
	s.traffic[0].hdr.f[XP_FF_VLAN1_VID].count = 2000; /* 100 + 2k: even values only, 4095 never */
	char err[256];
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);
	s.traffic[0].hdr.f[XP_FF_VLAN1_VID].step = 1; /* 100 + k, 4000 values: reaches 4095 */
	s.traffic[0].hdr.f[XP_FF_VLAN1_VID].count = 4000;
	assert_string_equal(refused(&s), "flow \"flow0\" (flows[0]): vlan[1].id: a value above 4094 (reserved)");
	s.traffic[0].hdr.f[XP_FF_VLAN1_VID].count = 50;
	s.traffic[0].hdr.f[XP_FF_VLAN1_VID].step = 2;
	s.traffic[0].hdr.base.vlan[0].tpid = 0x9100;
	assert_string_equal(refused(&s), "flow \"flow0\" (flows[0]): VLAN tag 1: TPID 0x9100 is neither 0x8100 "
					 "(802.1Q) nor 0x88a8 (802.1ad)");
	s.traffic[0].hdr.base.vlan[0].tpid = XP_TPID_8021AD;
	s.traffic[0].hdr.f[XP_FF_DSCP].value = 64;
	assert_string_equal(refused(&s), "flow \"flow0\" (flows[0]): ipv4.priority.dscp.phb: value does not "
					 "fit the field");
	s.traffic[0].hdr.f[XP_FF_DSCP].value = 46;
	/* The family of the server. */
	snprintf(s.host, sizeof(s.host), "2001:2::1");
	assert_string_equal(refused(&s), "flow \"flow0\" (flows[0]): ipv4.dst is IPv4, the server -c 2001:2::1 is IPv6");
	snprintf(s.host, sizeof(s.host), "198.18.1.1");
	/* Sizes against the headers: two tags and IPv4/UDP need 54 bytes and the FCS. */
	s.traffic[1].size_pat.value = 40;
	assert_string_equal(refused(&s), "flow \"flow1\" (flows[1]): size: frame size 40 is outside 64..9018");
	s.traffic[1].size_pat.value = 64;
	s.traffic[1].size_pat.count = 200; /* 64 + 199 * 64 */
	assert_string_equal(refused(&s), "flow \"flow1\" (flows[1]): size: frame size 12800 is outside 64..9018");
	s.traffic[1].size_pat.count = 23;
	s.traffic[0].hdr.base.l4_proto = IPPROTO_TCP;
	s.traffic[0].udp = false;
	s.traffic[0].hdr.base.tcp_syn_options = true;
	s.traffic[0].frame_size = 64;
	assert_non_null(strstr(refused(&s), "flow \"flow0\" (flows[0]): size: frame size 64 is below the minimum"));
	s.traffic[0].frame_size = 128;
	s.traffic[0].udp = true;
	assert_string_equal(refused(&s), "flow \"flow0\" (flows[0]): the headers are TCP but the stream is UDP");
	s.traffic[0].udp = false;
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);
	/* Rates: all or none. */
	s.traffic[1].rate.unit = XP_RATE_NONE;
	assert_string_equal(refused(&s), "flows: 1 of 2 have a rate: give every flow a rate, or none");
	s.traffic[0].rate.unit = XP_RATE_NONE;
	assert_int_equal(xp_spec_validate(&s, err, sizeof(err)), 0);
	/* 256 flows at most. */
	s.ntraffic = XP_SPEC_MAX_STREAMS + 1;
	assert_string_equal(refused(&s), "traffic: 257 streams, a test has 1 to 256");
}

/* Flows from the command line: the shortcuts make traffic[0]'s headers, --flows the file's; each refusal one line. */
static void test_cli_flows(void **state)
{
	static struct xp_opts o;
	char err[256];
	struct xp_flow_hdr h;

	(void)state;
	assert_int_equal(parse("xdpperf -c 198.18.1.1 -u --vlan 10,100 --dscp 46 --ttl 9 "
			       "--dst 198.19.0.1-198.19.0.10", &o, err, sizeof(err)), 0);
	const struct xp_stream *t = &o.spec.traffic[0];
	assert_int_equal(o.spec.ntraffic, 1);
	assert_true(t->has_hdr);
	assert_int_equal(t->hdr_auto, XP_HDR_AUTO_DST_MAC | XP_HDR_AUTO_SRC_MAC | XP_HDR_AUTO_SRC |
					      XP_HDR_AUTO_SPORT | XP_HDR_AUTO_DPORT);
	assert_int_equal(t->hdr.base.nvlan, 2);
	assert_int_equal(t->hdr.base.vlan[0].tpid, XP_TPID_8021AD);
	assert_int_equal(t->hdr.base.vlan[0].vid, 10);
	assert_int_equal(t->hdr.base.vlan[1].tpid, XP_TPID_8021Q);
	assert_int_equal(t->hdr.base.vlan[1].vid, 100);
	assert_int_equal(t->hdr.base.l4_proto, IPPROTO_UDP);
	assert_int_equal(t->hdr.base.src.family, AF_INET); /* the route's source, of the server's family */
	for (unsigned n = 0; n < 25; n++) {
		xp_flow_pat_at(&t->hdr, n, &h);
		assert_int_equal(ntohl(h.dst.v4.s_addr), 0xc6130001u + n % 10);
		assert_int_equal(h.dscp, 46);
		assert_int_equal(h.ttl, 9);
	}
	assert_int_equal(xp_spec_validate(&o.spec, err, sizeof(err)), 0);
	assert_int_equal(o.spec.flow_top, XP_FLOW_TOP_DEFAULT);
	assert_int_equal(parse("xdpperf -c 198.18.1.1 --flows docs/examples/flows/qos_ef_be.json --flow-top 1",
			       &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.ntraffic, 2);
	assert_int_equal(o.spec.flow_top, 1);
	assert_string_equal(o.spec.traffic[1].name, "bulk-be");

	/* A rate in percent is a share of --line-rate, in L1 bits/s (OTG's percentage is of the port's line rate). */
	char pct_file[] = "/tmp/xp-test-pct-XXXXXX";
	int fd = mkstemp(pct_file);
	assert_true(fd >= 0);
	static const char pct_json[] = "{\"flows\":[{\"name\":\"ef\",\"packet\":[{\"choice\":\"ethernet\"},"
				       "{\"choice\":\"ipv4\"},{\"choice\":\"udp\"}],\"rate\":{\"choice\":\"percentage\","
				       "\"percentage\":10},\"metrics\":{\"enable\":true}}]}";
	assert_true(write(fd, pct_json, sizeof(pct_json) - 1) == (ssize_t)sizeof(pct_json) - 1);
	close(fd);
	char line[256];
	snprintf(line, sizeof(line), "xdpperf -c 198.18.1.1 --flows %s --line-rate 1G", pct_file);
	assert_int_equal(parse(line, &o, err, sizeof(err)), 0);
	assert_true(o.spec.line_bps == 1e9);
	assert_int_equal(o.spec.traffic[0].rate.unit, XP_RATE_BPS_L1);
	assert_true(o.spec.traffic[0].rate.value == 1e8);
	assert_true(o.spec.traffic[0].rate_pct == 10);
	snprintf(line, sizeof(line), "xdpperf -c 198.18.1.1 --flows %s", pct_file);
	assert_int_equal(parse(line, &o, err, sizeof(err)), 2);
	char want[512];
	snprintf(want, sizeof(want), "--flows %s: flows[0].rate.percentage: a share of the line rate: give --line-rate "
		 "RATE (the link's bit rate on the wire, e.g. 10G)", pct_file);
	assert_string_equal(err, want);
	unlink(pct_file);

	static const struct { const char *line, *msg; } bad[] = {
		{ "xdpperf -c 198.18.1.1 --line-rate 1G",
		  "--line-rate is the link's rate for a flow file's rates in percent (--flows FILE) or the RFC 2544 "
		  "suite's top (--rfc2544): give one of them" },
		{ "xdpperf -c 198.18.1.1 --flows docs/examples/flows/vlan_pair.json --line-rate 1G",
		  "--line-rate: no flow of docs/examples/flows/vlan_pair.json has its rate in percent, and without "
		  "--rfc2544 nothing else uses it: drop --line-rate" },
		{ "xdpperf -c 198.18.1.1 --vlan 4095", "--vlan 4095: VID 4095 is reserved (0..4094)" },
		{ "xdpperf -c 198.18.1.1 --vlan 10,4095", "--vlan 10,4095: VID 4095 is reserved (0..4094)" },
		{ "xdpperf -c 198.18.1.1 --vlan 1,2,3", "--vlan 1,2,3: one VID or two (QinQ: OUTER,INNER)" },
		{ "xdpperf -c 198.18.1.1 --vlan 10,x", "--vlan 10,x: a VID is 0..4094 (two for QinQ: OUTER,INNER)" },
		{ "xdpperf -c 198.18.1.1 --dscp 64", "--dscp 64: DSCP is 0..63" },
		{ "xdpperf -c 198.18.1.1 --ttl 0", "--ttl 0: the TTL (IPv6: hop limit) is 1..255" },
		{ "xdpperf -c 198.18.1.1 --dst 2001:2::1", "--dst 2001:2::1: IPv6, the server -c is IPv4" },
		{ "xdpperf -c 198.18.1.1 --src 198.18.1.9-198.18.1.2", "--src 198.18.1.9-198.18.1.2: the range must rise" },
		{ "xdpperf -c 198.18.1.1 --flow-top 5", "--flow-top sets the rows of the per-flow table: give --flows FILE" },
		{ "xdpperf -c 198.18.1.1 --flows docs/examples/flows/vlan_pair.json --ttl 5",
		  "--flows docs/examples/flows/vlan_pair.json: the file says the flows' headers: drop --ttl" },
		{ "xdpperf -c 198.18.1.1 --flows docs/examples/flows/vlan_pair.json -b 1G",
		  "--flows docs/examples/flows/vlan_pair.json: the file says each flow's size, rate, headers, ports and "
		  "stamps: drop -b" },
		{ "xdpperf -c 198.18.1.1 --flows docs/examples/flows/vlan_pair.json -u",
		  "--flows docs/examples/flows/vlan_pair.json: the file says each flow's size, rate, headers, ports and "
		  "stamps: drop -u" },
		{ "xdpperf -c 198.18.1.1 --flows docs/examples/flows/vlan_pair.json -p 7000",
		  "--flows docs/examples/flows/vlan_pair.json: the file says each flow's size, rate, headers, ports and "
		  "stamps: drop -p" },
		{ "xdpperf -c 2001:2::1 --flows docs/examples/flows/vlan_pair.json",
		  "flow \"cust-a\" (flows[0]): ipv4.src is IPv4, the server -c 2001:2::1 is IPv6" },
		{ "xdpperf -c 198.18.1.1 --engine socket --dscp 46",
		  "--dscp is for the frame engines (--engine live, xsk), not the socket engine (--engine socket): the "
		  "kernel writes its segments' headers (flows: --engine live or xsk)" },
		{ "xdpperf -c 198.18.1.1 -x --vlan 5",
		  "--vlan is for the frame engines (--engine live, xsk), not the socket engine (selected by -x): the "
		  "kernel writes its segments' headers (flows: --engine live or xsk)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		int r = parse(bad[i].line, &o, err, sizeof(err));
		if (r != 2 || strcmp(err, bad[i].msg))
			fail_msg("'%s': %d\n got  %s\n want %s", bad[i].line, r, err, bad[i].msg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_validate),
		cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_json_errors),
		cmocka_unit_test(test_from_command_line),
		cmocka_unit_test(test_flows_json),
		cmocka_unit_test(test_flows_validate),
		cmocka_unit_test(test_cli_flows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
