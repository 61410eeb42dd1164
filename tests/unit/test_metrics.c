/*
 * report/metrics*.c: the --metrics endpoint's figures and text. The
 * histogram's bounds are exact edges of the measurement core's buckets, so
 * a bound's cumulative count is the number of frames whose latency (in
 * 4-ns ticks) lies below it: checked for every frame of a spread of values.
 * Then the text (families, labels, escapes), the store (the last tests
 * kept, running ones first), the client's tap through a real report, and
 * the option's value.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/lib/latency.h"
#include "bpf/lib/stamp.h"
#include "report/metrics.h"
#include "report/report.h"

static char *format(const struct xp_metrics_test *t, unsigned n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(xp_metrics_format(t, n, f), 0);
	fclose(f);
	return buf;
}

/* The value of the sample line that starts with prefix (its whole name and labels), or NAN. */
static double sample(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, prefix, n) && p[n] == ' ')
			return strtod(p + n + 1, NULL);
	return NAN;
}

static void test_bounds_are_bucket_edges(void **state)
{
	assert_int_equal(XP_METRICS_LE, 105);
	assert_true(fabs(xp_metrics_le_s(0) - 256e-9) < 1e-15);             /* 64 ticks */
	assert_true(fabs(xp_metrics_le_s(4) - 512e-9) < 1e-15);             /* the next octave */
	assert_true(fabs(xp_metrics_le_s(XP_METRICS_LE - 1) - 4294967296.0 * 4e-9) < 1e-6); /* 2^32 ticks */
	for (unsigned i = 1; i < XP_METRICS_LE; i++)
		assert_true(xp_metrics_le_s(i) > xp_metrics_le_s(i - 1));
}

/* Every bound's cumulative count is the number of values (ticks) below it. */
static void test_cumulative_counts_exact(void **state)
{
	static struct xp_lat_hist h;
	static const uint32_t vals[] = { 0, 1, 63, 64, 65, 100, 111, 112, 113, 127, 128, 250, 1000, 4095, 4096,
					 123456, 1u << 20, (1u << 31) + 5, 0xffffffffu };
	struct xp_metrics_test t = { .seq = 1, .id = 1, .role = "server" };
	xp_lat_init(&h);
	for (unsigned k = 0; k < sizeof(vals) / sizeof(vals[0]); k++) {
		h.b[xp_lat_bucket(vals[k])] += k + 1; /* k + 1 frames of value k */
		h.n += k + 1;
		h.sum += (uint64_t)vals[k] * (k + 1);
	}
	xp_metrics_lat_add(&t, &h);
	uint64_t cum = 0, all = 0;
	for (unsigned k = 0; k < sizeof(vals) / sizeof(vals[0]); k++)
		all += k + 1;
	for (unsigned i = 0; i < XP_METRICS_LE; i++) {
		cum += t.lat_bucket[i];
		uint64_t want = 0;
		double edge_ticks = xp_metrics_le_s(i) / (XP_STAMP_TICK_NS * 1e-9);
		for (unsigned k = 0; k < sizeof(vals) / sizeof(vals[0]); k++)
			if ((double)vals[k] < edge_ticks - 0.5)
				want += k + 1;
		assert_int_equal(cum, want);
	}
	assert_int_equal(cum, all);
	assert_int_equal(t.lat_count, all);
	assert_true(fabs(t.lat_sum_s - (double)h.sum * 4e-9) < 1e-9 * t.lat_sum_s);
}

static void test_text(void **state)
{
	static struct xp_metrics_test t[3];
	static struct xp_lat_hist h;
	memset(t, 0, sizeof(t));
	/* a client stream test, running */
	t[0] = (struct xp_metrics_test){ .seq = 1, .id = 7, .role = "client", .engine = "live", .kind = "stream",
					 .peer = "198.18.1.1", .running = true, .start_time = 1000.5, .sends = true,
					 .tx_frames = 1000, .tx_bytes = 60000, .receives = true, .rx_frames = 990,
					 .rx_bytes = 59400, .loss_known = true, .lost = 10, .target_pps = 5000,
					 .offered_pps = 4999.5 };
	/* t[1] free: skipped */
	/* a server connection test with latency, ended; a peer that needs escapes */
	t[2] = (struct xp_metrics_test){ .seq = 2, .id = 3, .role = "server", .engine = "xdp", .kind = "connect",
					 .peer = "a\"b\\c\nd", .receives = true, .rx_frames = 40, .rx_bytes = 2400,
					 .conns = true, .conn_opened = 20, .conn_failed = 1, .offered_pps = -1 };
	xp_lat_init(&h);
	h.b[xp_lat_bucket(10)] = 3;    /* 40 ns: below the first bound */
	h.b[xp_lat_bucket(1000)] = 1;  /* 4 us */
	h.n = 4;
	h.sum = 1030;
	xp_metrics_lat_add(&t[2], &h);
	char *s = format(t, 3);
	const char *cl = "{test=\"7\",role=\"client\",engine=\"live\",kind=\"stream\",peer=\"198.18.1.1\"}";
	const char *sv = "{test=\"3\",role=\"server\",engine=\"xdp\",kind=\"connect\",peer=\"a\\\"b\\\\c\\nd\"}";
	char name[1024];
#define V(metric, labels) (snprintf(name, sizeof(name), "%s%s", metric, labels), sample(s, name))
	assert_true(V("xdpperf_test_running", cl) == 1);
	assert_true(V("xdpperf_test_running", sv) == 0);
	assert_true(V("xdpperf_test_start_time_seconds", cl) == 1000.5);
	assert_true(V("xdpperf_frames_sent_total", cl) == 1000);
	assert_true(isnan(V("xdpperf_frames_sent_total", sv))); /* the server sends nothing */
	assert_true(V("xdpperf_bytes_sent_total", cl) == 60000);
	assert_true(V("xdpperf_frames_received_total", cl) == 990);
	assert_true(V("xdpperf_frames_received_total", sv) == 40);
	assert_true(V("xdpperf_bytes_received_total", sv) == 2400);
	assert_true(V("xdpperf_frames_lost", cl) == 10);
	assert_true(V("xdpperf_connections_opened_total", sv) == 20);
	assert_true(V("xdpperf_connections_failed_total", sv) == 1);
	assert_true(V("xdpperf_connections_held", sv) == 0);
	assert_true(isnan(V("xdpperf_connections_opened_total", cl)));
	assert_true(V("xdpperf_offered_load_frames_per_second", cl) == 4999.5);
	assert_true(V("xdpperf_target_load_frames_per_second", cl) == 5000);
	assert_true(isnan(V("xdpperf_target_load_frames_per_second", sv)));
	assert_null(strstr(s, "xdpperf_latency_seconds_bucket{test=\"7\"")); /* no stamps: no histogram */
	/* cumulative: 3 below 256 ns, the fourth by 4.096 us (1000 ticks lie in [4000, 4096) ns) */
	const char *svl = "{test=\"3\",role=\"server\",engine=\"xdp\",kind=\"connect\",peer=\"a\\\"b\\\\c\\nd\",le=";
	char lab[512];
	snprintf(lab, sizeof(lab), "%s\"2.56e-07\"}", svl);
	assert_true(V("xdpperf_latency_seconds_bucket", lab) == 3);
	snprintf(lab, sizeof(lab), "%s\"3.584e-06\"}", svl);
	assert_true(V("xdpperf_latency_seconds_bucket", lab) == 3);
	snprintf(lab, sizeof(lab), "%s\"4.096e-06\"}", svl);
	assert_true(V("xdpperf_latency_seconds_bucket", lab) == 4);
	snprintf(lab, sizeof(lab), "%s\"+Inf\"}", svl);
	assert_true(V("xdpperf_latency_seconds_bucket", lab) == 4);
	assert_true(V("xdpperf_latency_seconds_count", sv) == 4);
	assert_true(fabs(V("xdpperf_latency_seconds_sum", sv) - 4120e-9) < 1e-15);
#undef V
	/* Each family once, HELP before TYPE before its samples. */
	const char *p = strstr(s, "# HELP xdpperf_frames_received_total ");
	assert_non_null(p);
	assert_null(strstr(p + 1, "# HELP xdpperf_frames_received_total "));
	assert_true(strstr(s, "# TYPE xdpperf_frames_received_total counter\n") > p);
	assert_non_null(strstr(s, "# TYPE xdpperf_latency_seconds histogram\n"));
	assert_non_null(strstr(s, "# TYPE xdpperf_frames_lost gauge\n"));
	free(s);
	/* No test yet: no sample at all. */
	memset(t, 0, sizeof(t));
	s = format(t, 3);
	assert_string_equal(s, "");
	free(s);
}

static void test_store_keeps_last_and_running(void **state)
{
	static struct xp_metrics_test snap[XP_METRICS_TESTS];
	struct xp_counters c = { .pkts = 5, .bytes = 300 };
	xp_metrics_reset();
	/* Test 1 stays running; 2..20 start and end. */
	xp_metrics_server_start(1, "live", "stream", "198.18.0.1");
	for (uint64_t id = 2; id <= 20; id++) {
		xp_metrics_server_start(id, "live", "stream", "198.18.0.1");
		xp_metrics_server_counts(id, &c, 0);
		xp_metrics_server_end(id);
	}
	xp_metrics_snapshot(snap);
	bool seen[21] = { false };
	for (int k = 0; k < XP_METRICS_TESTS; k++) {
		assert_true(snap[k].seq);
		assert_true(snap[k].id <= 20);
		seen[snap[k].id] = true;
		if (snap[k].id > 1) {
			assert_false(snap[k].running);
			assert_int_equal(snap[k].rx_frames, 5);
		}
	}
	assert_true(seen[1]); /* the running one is kept */
	for (uint64_t id = 6; id <= 20; id++)
		assert_true(seen[id]); /* and the last 15 ended ones */
	/* A sample of a test already dropped changes nothing. */
	xp_metrics_server_counts(2, &c, 0);
	xp_metrics_server_end(2);
	xp_metrics_reset();
}

/* The client's figures come from its report: intervals add up, the summary replaces them. */
static void test_client_tap(void **state)
{
	static struct xp_metrics_test snap[XP_METRICS_TESTS];
	static struct xp_summary s;
	struct xp_report r;
	struct xp_report_info info = { .engine = "xsk", .figures = XP_FIGS_FRAMES, .test = "stream",
				       .target_pps = 1000, .server = "198.18.1.1" };
	xp_metrics_reset();
	xp_metrics_client_tap();
	xp_report_init(&r, XP_REPORT_MEMORY, NULL);
	xp_report_start(&r, &info);
	struct xp_period p = { .t0 = 0, .t1 = 1, .interval = true, .figures = XP_FIGS_FRAMES, .tx_pkts = 1000,
			       .tx_bytes = 60000, .rx = { .pkts = 998, .bytes = 59880 } };
	xp_report_interval(&r, &p);
	p.t0 = 1;
	p.t1 = 2;
	p.tx_pkts = 900;
	p.rx.pkts = 900;
	xp_report_interval(&r, &p);
	xp_metrics_snapshot(snap);
	assert_true(snap[0].seq && snap[0].running);
	assert_string_equal(snap[0].role, "client");
	assert_string_equal(snap[0].peer, "198.18.1.1");
	assert_int_equal(snap[0].tx_frames, 1900);
	assert_int_equal(snap[0].rx_frames, 1898);
	assert_true(snap[0].offered_pps == 900);
	assert_true(snap[0].target_pps == 1000);
	s.total = (struct xp_period){ .t0 = 0, .t1 = 2, .figures = XP_FIGS_FRAMES, .tx_pkts = 1900,
				      .tx_bytes = 114000, .rx = { .pkts = 1897, .bytes = 1 } };
	s.pace.reached_pps = 950;
	xp_report_end(&r, &s);
	xp_metrics_snapshot(snap);
	assert_false(snap[0].running);
	assert_int_equal(snap[0].rx_frames, 1897); /* the summary's */
	assert_int_equal(snap[0].lost, 3);
	assert_true(snap[0].offered_pps == 950);
	xp_report_free(&r);
	xp_report_tap = NULL;
	xp_metrics_reset();
}

/* A test with flows: per-flow series labelled flow="NAME", from the intervals, then the summary's. */
static void test_client_flows(void **state)
{
	static struct xp_metrics_test snap[XP_METRICS_TESTS];
	static struct xp_summary s;
	static struct xp_flow_ival iv[3];
	static struct xp_flow_result fr[3];
	struct xp_report r;
	struct xp_report_info info = { .engine = "xsk", .figures = XP_FIGS_FRAMES, .test = "stream",
				       .server = "198.18.1.1" };
	xp_metrics_reset();
	xp_metrics_client_tap();
	xp_report_init(&r, XP_REPORT_MEMORY, NULL);
	xp_report_start(&r, &info);
	memset(iv, 0, sizeof(iv));
	strcpy(iv[0].name, "ef \"q\"");
	strcpy(iv[1].name, "ef \"q\""); /* the same name again: its label gets " #2" */
	for (unsigned i = 0; i < 3; i++) {
		iv[i].tx_frames = 100 * (i + 1), iv[i].tx_bytes = 6400 * (i + 1), iv[i].rx_known = true;
		iv[i].rx.recv = iv[i].rx.frames = 100 * (i + 1) - i, iv[i].rx.bytes = 6000 * (i + 1);
	}
	struct xp_period p = { .t0 = 0, .t1 = 1, .interval = true, .figures = XP_FIGS_FRAMES, .flows = iv,
			       .nflows = 3 };
	xp_report_interval(&r, &p);
	xp_report_interval(&r, &p);
	xp_metrics_snapshot(snap);
	assert_int_equal(snap[0].nflows, 3);
	assert_string_equal(snap[0].flows[2].name, "flow 3");
	assert_int_equal(snap[0].flows[2].tx_frames, 600);
	assert_int_equal(snap[0].flows[2].rx_frames, 596);
	assert_int_equal(snap[0].flows[2].lost, 4);
	char *txt = format(snap, XP_METRICS_TESTS);
	assert_non_null(strstr(txt, "# TYPE xdpperf_flow_frames_sent_total counter\n"));
	assert_non_null(strstr(txt, "xdpperf_flow_frames_sent_total{test=\"1\",role=\"client\",engine=\"xsk\","
				    "kind=\"stream\",peer=\"198.18.1.1\",flow=\"ef \\\"q\\\"\"} 200\n"));
	assert_non_null(strstr(txt, "flow=\"ef \\\"q\\\" #2\"} 400\n"));
	assert_non_null(strstr(txt, "xdpperf_flow_frames_lost{test=\"1\",role=\"client\",engine=\"xsk\","
				    "kind=\"stream\",peer=\"198.18.1.1\",flow=\"flow 3\"} 4\n"));
	free(txt);
	/* The end: the summary's figures replace the intervals' sums. */
	memset(fr, 0, sizeof(fr));
	for (unsigned i = 0; i < 3; i++) {
		fr[i].tx_frames = 1000, fr[i].rx_known = i != 1, fr[i].rx.recv = 990;
		snprintf(fr[i].name, sizeof(fr[i].name), "f%u", i);
	}
	s.total = (struct xp_period){ .t0 = 0, .t1 = 2, .figures = XP_FIGS_FRAMES };
	s.flows = fr;
	s.nflows = 3;
	xp_report_end(&r, &s);
	xp_metrics_snapshot(snap);
	assert_int_equal(snap[0].flows[0].lost, 10);
	assert_false(snap[0].flows[1].counted);
	txt = format(snap, XP_METRICS_TESTS);
	assert_non_null(strstr(txt, "flow=\"f2\"} 10\n"));
	assert_null(strstr(txt, "xdpperf_flow_frames_lost{test=\"1\",role=\"client\",engine=\"xsk\",kind=\"stream\","
				"peer=\"198.18.1.1\",flow=\"f1\"}")); /* not counted: no loss, not a 0 */
	free(txt);
	xp_report_free(&r);
	xp_report_tap = NULL;
	xp_metrics_reset();
}

static void test_parse(void **state)
{
	struct xp_addr a;
	unsigned short port;
	char err[256], s[64];
	assert_int_equal(xp_metrics_parse("9464", &a, &port, err, sizeof(err)), 0);
	assert_int_equal(port, 9464);
	assert_string_equal(xp_addr_str(&a, s, sizeof(s)), "127.0.0.1");
	assert_int_equal(xp_metrics_parse(":9100", &a, &port, err, sizeof(err)), 0);
	assert_string_equal(xp_addr_str(&a, s, sizeof(s)), "127.0.0.1");
	assert_int_equal(xp_metrics_parse("198.18.1.1:80", &a, &port, err, sizeof(err)), 0);
	assert_string_equal(xp_addr_str(&a, s, sizeof(s)), "198.18.1.1");
	assert_int_equal(port, 80);
	assert_int_equal(xp_metrics_parse("[::1]:9464", &a, &port, err, sizeof(err)), 0);
	assert_int_equal(a.family, AF_INET6);
	assert_int_equal(xp_metrics_parse("::1:9464", &a, &port, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "[ADDR]:PORT"));
	assert_int_equal(xp_metrics_parse("host:9464", &a, &port, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not an IPv4 or IPv6 address"));
	assert_int_equal(xp_metrics_parse("127.0.0.1:", &a, &port, err, sizeof(err)), -1);
	assert_int_equal(xp_metrics_parse("127.0.0.1:70000", &a, &port, err, sizeof(err)), -1);
	assert_int_equal(xp_metrics_parse("0", &a, &port, err, sizeof(err)), -1);
	assert_int_equal(xp_metrics_parse("[::1", &a, &port, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_are_bucket_edges),
		cmocka_unit_test(test_cumulative_counts_exact),
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_store_keeps_last_and_running),
		cmocka_unit_test(test_client_tap),
		cmocka_unit_test(test_client_flows),
		cmocka_unit_test(test_parse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
