/* Reports: JSON encoding of periods and summaries, -J document, --json-stream lines, text summary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "meas/latency.h"
#include "proto/messages.h"

static double jd(struct json_object *o, const char *path)
{
	/* path like "sent.packets_per_second" */
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	struct json_object *cur = o;
	for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, ".")) {
		struct json_object *next;
		assert_true(json_object_object_get_ex(cur, tok, &next));
		cur = next;
	}
	return json_object_get_double(cur);
}

/* One second of 1,000,000 64-byte frames sent, 999,000 received. */
static struct xp_period period(void)
{
	struct xp_period p = { .t0 = 1.0, .t1 = 2.0, .tx_pkts = 1000000, .tx_bytes = 60000000 };
	p.rx.pkts = 999000;
	p.rx.bytes = 59940000;
	p.rx.data_pkts = 999000;
	p.rx.data_bytes = 999000 * 6;
	p.rx.ipv4_pkts = 999000;
	return p;
}

static void test_period_json(void **state)
{
	struct xp_period p = period();
	struct json_object *o = xp_period_json(&p);
	assert_true(jd(o, "seconds") == 1.0);
	assert_true(jd(o, "sent.packets") == 1000000);
	assert_true(jd(o, "sent.packets_per_second") == 1e6);
	/* L1: (60 + 24) bytes * 8 per frame; L2: (60 + 4) * 8 */
	assert_true(jd(o, "sent.bits_per_second_l1") == 672e6);
	assert_true(jd(o, "sent.bits_per_second_l2") == 512e6);
	assert_true(jd(o, "received.packets") == 999000);
	assert_true(jd(o, "received.bits_per_second_l1") == 999000.0 * 672);
	assert_true(jd(o, "received.counters.data_bytes") == 5994000);
	assert_true(jd(o, "received.counters.ipv4_pkts") == 999000);
	assert_true(jd(o, "lost_packets") == 1000);
	assert_true(jd(o, "loss_percent") == 0.1);
	json_object_put(o);
}

static void test_zero_length_period_is_null_not_nan(void **state)
{
	struct xp_period p = { .t0 = 1, .t1 = 1, .tx_pkts = 5 };
	struct json_object *o = xp_period_json(&p);
	const char *s = json_object_to_json_string(o);
	assert_null(strstr(s, "nan"));
	assert_null(strstr(s, "inf"));
	struct json_object *v;
	assert_true(json_object_object_get_ex(o, "sent", &v));
	assert_true(json_object_object_get_ex(v, "packets_per_second", &v));
	assert_null(v); /* present, as JSON null */
	json_object_put(o);
}

static void test_summary_json(void **state)
{
	struct xp_summary s = { .total = period(), .client_cpu_pct = 99.5, .server_cpu_pct = 1.5,
				.interrupted = true, .error = "the server closed the control connection" };
	struct json_object *o = xp_summary_json(&s);
	assert_true(jd(o, "sum.sent.packets") == 1000000);
	assert_true(jd(o, "cpu_utilization_percent.client_percent") == 99.5);
	assert_true(jd(o, "cpu_utilization_percent.server_percent") == 1.5);
	struct json_object *v;
	assert_true(json_object_object_get_ex(o, "interrupted", &v) && json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(o, "error", &v));
	assert_string_equal(json_object_get_string(v), "the server closed the control connection");
	json_object_put(o);
}

static struct xp_report_info info(void)
{
	struct xp_report_info i = { .engine = "xsk", .engine_mode = "copy", .server_xdp_mode = "native",
				    .test = "stream", .proto = "tcp", .family = 4, .frame_size = 64, .queues = 2,
				    .port_lo = 63000, .port_hi = 63015, .cport_lo = 10000, .cport_hi = 59999,
				    .duration = 10, .interval = 1, .target_pps = 0 };
	strcpy(i.client, "198.18.1.2");
	strcpy(i.server, "198.19.1.2");
	strcpy(i.dev, "xpc0");
	strcpy(i.server_dev, "xps0");
	return i;
}

/* Run a whole report into a memory buffer. */
static char *render(enum xp_report_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	struct xp_report_info i = info();
	struct xp_period p = period();
	struct xp_summary s = { .total = period(), .client_cpu_pct = 50, .server_cpu_pct = -1 };
	xp_report_init(&r, fmt, f);
	xp_report_start(&r, &i);
	xp_report_interval(&r, &p);
	xp_report_interval(&r, &p);
	xp_report_end(&r, &s);
	xp_report_free(&r);
	fclose(f);
	return buf;
}

static void test_json_document(void **state)
{
	char *s = render(XP_REPORT_JSON);
	struct json_object *o = json_tokener_parse(s);
	assert_non_null(o);
	struct json_object *start, *iv, *end, *v;
	assert_true(json_object_object_get_ex(o, "start", &start));
	assert_true(json_object_object_get_ex(start, "engine", &v));
	assert_string_equal(json_object_get_string(v), "xsk");
	assert_true(json_object_object_get_ex(start, "frame_size", &v));
	assert_int_equal(json_object_get_int(v), 64);
	assert_true(json_object_object_get_ex(o, "intervals", &iv));
	assert_int_equal(json_object_array_length(iv), 2);
	assert_true(json_object_object_get_ex(o, "end", &end));
	assert_true(jd(end, "sum.lost_packets") == 1000);
	/* server CPU unknown: not reported rather than a made-up number */
	assert_true(json_object_object_get_ex(end, "cpu_utilization_percent", &v));
	assert_false(json_object_object_get_ex(v, "server_percent", NULL));
	json_object_put(o);
	free(s);
}

static void test_json_stream(void **state)
{
	char *s = render(XP_REPORT_JSON_STREAM);
	const char *want[] = { "start", "interval", "interval", "end" };
	int n = 0;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n"), n++) {
		assert_true(n < 4);
		struct json_object *o = json_tokener_parse(line), *ev, *data;
		assert_non_null(o);
		assert_true(json_object_object_get_ex(o, "event", &ev));
		assert_string_equal(json_object_get_string(ev), want[n]);
		assert_true(json_object_object_get_ex(o, "data", &data));
		assert_true(json_object_is_type(data, json_type_object));
		json_object_put(o);
	}
	assert_int_equal(n, 4);
	free(s);
}

/* The memory sink (a suite's trial): nothing printed, the intervals and the error kept. */
static void test_memory_sink(void **state)
{
	struct xp_report r;
	struct xp_report_info i = info();
	struct xp_period p = period();
	struct xp_summary s = { .total = period(), .client_cpu_pct = 50, .server_cpu_pct = -1 };
	xp_report_init(&r, XP_REPORT_MEMORY, NULL); /* no stream: any print would crash */
	xp_report_start(&r, &i);
	xp_report_interval(&r, &p);
	p.tx_pkts = 7;
	xp_report_interval(&r, &p);
	xp_report_error(&r, "the server went away");
	xp_report_end(&r, &s);
	xp_report_free(&r);
	assert_true(r.started && r.ended);
	assert_int_equal(r.mem.intervals, 2);
	assert_int_equal(r.mem.last.tx_pkts, 7);
	assert_string_equal(r.mem.error, "the server went away");
	/* Before anything: no error. */
	xp_report_init(&r, XP_REPORT_MEMORY, NULL);
	assert_string_equal(r.mem.error, "");
	xp_report_free(&r);
}

static void test_text_summary(void **state)
{
	char *s = render(XP_REPORT_TEXT);
	assert_non_null(strstr(s, "Client 198.18.1.2 -> server 198.19.1.2"));
	assert_non_null(strstr(s, "1.00 Mpps"));
	assert_non_null(strstr(s, "672.00 Mbit/s"));
	assert_non_null(strstr(s, "Lost              1000 frames  (0.1000 %)"));
	assert_non_null(strstr(s, "CPU       client 50.0 %"));
	assert_null(strstr(s, "server 0.0 %")); /* unknown server CPU is not printed */
	free(s);
}

/* Every field non-zero and different from every other (a field dropped,
 * swapped or left out of the JSON shows), one above 2^32 (a truncation shows). */
static struct xp_counters counters_fixture(void)
{
	struct xp_counters c = { .pkts = 1001, .bytes = 1002, .tcp_syn = 1003, .tcp_synack = 1004, .tcp_fin = 1005,
				 .tcp_rst = 1006, .tcp_ack_only = 1007, .data_pkts = 1008, .data_bytes = 1009,
				 .udp_pkts = 1010, .ipv4_pkts = 1011, .ipv6_pkts = (1ULL << 40) + 12,
				 .conn_established = 1013, .cookie_invalid = 1014, .synack_sent = 1015,
				 .fin_answered = 1016, .rst_sent = 1017, .noreply_addr = 1018, .noreply_shape = 1019,
				 .noreply_csum = 1020, .noreply_room = 1021, .noreply_other = 1022,
				 .keepalives = 1023, .keepalive_unchecked = 1024 };
	return c;
}

static void test_counters_roundtrip(void **state)
{
	struct xp_counters a = counters_fixture(), b;
	/* The fixture names every field: 24 of them, none left 0. */
	assert_int_equal(sizeof(a) / sizeof(__u64), 24);
	const __u64 *f = (const __u64 *)&a;
	for (size_t k = 0; k < sizeof(a) / sizeof(__u64); k++)
		assert_true(f[k] != 0);
	struct json_object *o = xp_counters_to_json(&a), *v;
	/* Each field under its own name with its own value. */
	const char *names[] = { "pkts", "bytes", "tcp_syn", "tcp_synack", "tcp_fin", "tcp_rst", "tcp_ack_only",
				"data_pkts", "data_bytes", "udp_pkts", "ipv4_pkts", "ipv6_pkts", "conn_established",
				"cookie_invalid", "synack_sent", "fin_answered", "rst_sent", "noreply_addr",
				"noreply_shape", "noreply_csum", "noreply_room", "noreply_other", "keepalives",
				"keepalive_unchecked" };
	assert_int_equal(json_object_object_length(o), 24);
	for (size_t k = 0; k < 24; k++) {
		assert_true(json_object_object_get_ex(o, names[k], &v));
		assert_true((__u64)json_object_get_uint64(v) == (k == 11 ? (1ULL << 40) + 12 : 1001 + k));
	}
	memset(&b, 0xee, sizeof(b));
	xp_counters_from_json(o, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	json_object_put(o);
}

/* A later reading minus an earlier one, field by field, each difference
 * worked out by hand. */
static void test_counters_sub(void **state)
{
	struct xp_counters later = counters_fixture(), d;
	struct xp_counters earlier = { .pkts = 1, .bytes = 2, .tcp_syn = 3, .tcp_synack = 4, .tcp_fin = 5, .tcp_rst = 6,
				       .tcp_ack_only = 7, .data_pkts = 8, .data_bytes = 9, .udp_pkts = 10,
				       .ipv4_pkts = 11, .ipv6_pkts = 12, .conn_established = 13, .cookie_invalid = 14,
				       .synack_sent = 15, .fin_answered = 16, .rst_sent = 17, .noreply_addr = 18,
				       .noreply_shape = 19, .noreply_csum = 20, .noreply_room = 21,
				       .noreply_other = 22, .keepalives = 23, .keepalive_unchecked = 24 };
	xp_counters_sub(&later, &earlier, &d);
	assert_true(d.pkts == 1000 && d.bytes == 1000 && d.tcp_syn == 1000 && d.tcp_synack == 1000);
	assert_true(d.tcp_fin == 1000 && d.tcp_rst == 1000 && d.tcp_ack_only == 1000 && d.data_pkts == 1000);
	assert_true(d.data_bytes == 1000 && d.udp_pkts == 1000 && d.ipv4_pkts == 1000);
	assert_true(d.ipv6_pkts == 1ULL << 40);
	assert_true(d.conn_established == 1000 && d.cookie_invalid == 1000 && d.synack_sent == 1000);
	assert_true(d.fin_answered == 1000 && d.rst_sent == 1000 && d.noreply_addr == 1000);
	assert_true(d.noreply_shape == 1000 && d.noreply_csum == 1000 && d.noreply_room == 1000);
	assert_true(d.noreply_other == 1000 && d.keepalives == 1000 && d.keepalive_unchecked == 1000);
}

static void test_test_spec_roundtrip(void **state)
{
	struct xp_test t = { .version = 1, .kind = XP_TEST_CONNECT, .engine = "socket", .family = 10,
			     .udp = false, .pass = true, .port_lo = 63000, .port_hi = 63010, .duration = 5,
			     .frame_size = 0 };
	struct xp_test u;
	char err[128];
	struct json_object *o = xp_test_to_json(&t);
	assert_int_equal(xp_test_from_json(o, &u, err, sizeof(err)), 0);
	assert_int_equal(u.kind, XP_TEST_CONNECT);
	assert_string_equal(u.engine, "socket");
	assert_true(u.pass);
	assert_int_equal(u.port_lo, 63000);
	assert_int_equal(u.port_hi, 63010);
	/* a wrong version is refused with a message */
	json_object_object_add(o, "version", json_object_new_int(99));
	assert_int_equal(xp_test_from_json(o, &u, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "version"));
	json_object_put(o);
}

/*
 * Stamps: 1000 frames stamped into send intervals 4-5, 990 of them arrived
 * (dup 2, reordered 3, late 1 of an earlier interval); 500 took 250 ticks
 * (1000 ns), 490 took 1000 ticks (4000 ns); two streams with RFC 3550
 * jitter 150 and 200 ns (mean 175).
 */
static void meas_fixture(struct xp_meas_figs *m)
{
	memset(m, 0, sizeof(*m));
	m->valid = true;
	m->first = 4, m->last = 5;
	m->sent = 1000;
	xp_lat_init(&m->lat);
	m->lat.recv = 990, m->lat.dup = 2, m->lat.reordered = 3, m->lat.late = 1;
	m->lat.n = 990, m->lat.sum = 500 * 250 + 490 * 1000, m->lat.min = 250, m->lat.max = 1000;
	m->lat.b[xp_lat_bucket(250)] = 500;
	m->lat.b[xp_lat_bucket(1000)] = 490;
	m->lost = 10;
	m->oneway = true;
	m->streams = 2, m->jitter_mean_ns = 175, m->jitter_max_ns = 200;
	m->have_streams = true, m->reorder_max = 7, m->too_old = 4;
}

static struct xp_period meas_period(void)
{
	struct xp_period p = period();
	p.figures = XP_FIGS_FRAMES;
	meas_fixture(&p.meas);
	return p;
}

static double jget(struct json_object *o, const char *a, const char *b)
{
	struct json_object *x, *y;
	assert_true(json_object_object_get_ex(o, a, &x));
	if (!b)
		return json_object_get_double(x);
	assert_true(json_object_object_get_ex(x, b, &y));
	return json_object_get_double(y);
}

static void test_measurement_json(void **state)
{
	struct xp_period p = meas_period();
	struct json_object *o = xp_period_json(&p), *m, *v;
	/* with stamps the loss is the stamps': 1000 stamped - 990 arrived, not sent - XDP-counted */
	assert_true(jd(o, "lost_packets") == 10);
	assert_true(jd(o, "loss_percent") == 1.0);
	assert_true(json_object_object_get_ex(o, "measurement", &m));
	assert_true(jget(m, "sent", NULL) == 1000);
	assert_true(jget(m, "received", NULL) == 990);
	assert_true(jget(m, "lost", NULL) == 10);
	assert_true(jget(m, "loss_percent", NULL) == 1.0);
	assert_true(jget(m, "duplicates", NULL) == 2);
	assert_true(jget(m, "reordered", NULL) == 3);
	assert_true(jget(m, "late", NULL) == 1);
	assert_true(jget(m, "reorder_extent_max", NULL) == 7);
	assert_true(jget(m, "too_old", NULL) == 4);
	assert_true(json_object_object_get_ex(m, "send_intervals", &v));
	assert_int_equal(json_object_get_int(json_object_array_get_idx(v, 0)), 4);
	assert_int_equal(json_object_get_int(json_object_array_get_idx(v, 1)), 5);
	/* latency: min 250 ticks, max 1000; p50 = the 495th frame, bucket [248, 252): 252 ticks = 1008 ns;
	 * p90 and up: bucket [992, 1008) clamped to max 1000 ticks = 4000 ns; mean 615000/990 ticks */
	assert_true(jget(m, "latency", "min_ns") == 1000);
	assert_true(jget(m, "latency", "max_ns") == 4000);
	assert_true(jget(m, "latency", "p50_ns") == 1008);
	assert_true(jget(m, "latency", "p90_ns") == 4000);
	assert_true(jget(m, "latency", "p99_99_ns") == 4000);
	assert_true(fabs(jget(m, "latency", "mean_ns") - 615000.0 * 4 / 990) < 1e-6);
	assert_true(jget(m, "latency", "tick_ns") == 4);
	assert_true(json_object_object_get_ex(m, "latency", &v) && json_object_object_get_ex(v, "buckets", &v));
	assert_int_equal(json_object_array_length(v), 2);
	assert_true(jget(m, "jitter", "mean_ns") == 175);
	assert_true(jget(m, "jitter", "max_ns") == 200);
	assert_true(jget(m, "jitter", "streams") == 2);
	json_object_put(o);

	/* different clocks: the counts stay, the times are withheld with the reason */
	p.meas.oneway = false;
	p.meas.lat_why = "not measured one way (different clocks; use the round-trip mode)";
	o = xp_period_json(&p);
	assert_true(json_object_object_get_ex(o, "measurement", &m));
	assert_true(json_object_object_get_ex(m, "latency", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(m, "latency_withheld", &v));
	assert_non_null(strstr(json_object_get_string(v), "different clocks"));
	assert_true(jget(m, "duplicates", NULL) == 2);
	json_object_put(o);
	/* clocks that disagree (frames before their send time): withheld too */
	p.meas.oneway = true;
	p.meas.lat.clock_neg = 6;
	o = xp_period_json(&p);
	assert_true(json_object_object_get_ex(o, "measurement", &m));
	assert_true(json_object_object_get_ex(m, "latency_withheld", &v));
	assert_non_null(strstr(json_object_get_string(v), "6 frames arrived before"));
	json_object_put(o);
}

/* The whole report with stamps, in the three formats (round trip: --rtt's). */
static bool render_rtt;
static char *render_meas(enum xp_report_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	struct xp_report_info i = info();
	i.figures = XP_FIGS_FRAMES;
	i.stamps = true, i.oneway = true, i.grace = 1.0, i.setup_s = 0.012;
	i.stamp_place = "first 8 payload bytes", i.stamp_clock = "CLOCK_MONOTONIC";
	i.stamp_t0 = 123456789, i.stamp_ival = 250000000;
	i.rx_clock = "CLOCK_MONOTONIC (bpf_ktime_get_ns)";
	struct xp_period p = meas_period();
	struct xp_summary *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->total = meas_period();
	s->client_cpu_pct = 50, s->server_cpu_pct = -1;
	i.rtt = p.meas.rtt = s->total.meas.rtt = render_rtt;
	xp_report_init(&r, fmt, f);
	xp_report_start(&r, &i);
	xp_report_interval(&r, &p);
	xp_report_end(&r, s);
	xp_report_free(&r);
	fclose(f);
	free(s);
	return buf;
}

static void test_measurement_text(void **state)
{
	char *s = render_meas(XP_REPORT_TEXT);
	assert_non_null(strstr(s, "Stamps in every frame (first 8 payload bytes: stream, sequence number, send time), "
				  "CLOCK_MONOTONIC; one-way latency"));
	assert_non_null(strstr(s, "each line is printed 1 s after its interval ends"));
	assert_non_null(strstr(s, "Arrivals timed by the server's CLOCK_MONOTONIC (bpf_ktime_get_ns)"));
	assert_non_null(strstr(s, "Send intervals start 12 ms before the lines"));
	assert_non_null(strstr(s, "      stamped 1000 lost 10 (1.000%) dup 2 reord 3 late 1; latency min 1.00us mean "
				  "2.48us p50 1.01us p90 4.00us p99 4.00us p99.9 4.00us p99.99 4.00us max 4.00us; "
				  "jitter 175ns (max 200ns, 2 streams) (send intervals 4-5)"));
	assert_non_null(strstr(s, "Lost                10 frames  (1.0000 %)  (by stamps)"));
	assert_non_null(strstr(s, "Stamped           1000 frames in send intervals 4-5"));
	assert_non_null(strstr(s, "Dup                  2  reordered 3 (RFC 4737; extent up to 7 sequence numbers)  late 1"));
	assert_non_null(strstr(s, "4 frames came more than 1024 sequence numbers behind"));
	assert_non_null(strstr(s, "Latency   one way, 990 frames timed"));
	assert_non_null(strstr(s, "p50 1.01us p90 4.00us p99 4.00us p99.9 4.00us p99.99 4.00us"));
	assert_non_null(strstr(s, "Jitter    RFC 3550 interarrival: 175ns (mean of 2 streams), max 200ns"));
	/* the summary's own line carries no interval stamp line */
	assert_int_equal((int)(strstr(strstr(s, "      stamped") + 1, "      stamped") == NULL), 1);
	free(s);
}

static void test_measurement_json_formats(void **state)
{
	char *s = render_meas(XP_REPORT_JSON);
	struct json_object *o = json_tokener_parse(s), *st, *iv;
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "start", &st) && json_object_object_get_ex(st, "stamps", &st));
	assert_true(jget(st, "t0_ticks", NULL) == 123456789);
	assert_true(jget(st, "interval_ticks", NULL) == 250000000);
	assert_true(jget(st, "line_lag_seconds", NULL) == 1.0);
	assert_true(jget(st, "server_memory_bytes", "stream_state") == 208.0 * 256 * 64);
	assert_true(jget(st, "server_memory_bytes", "interval_bins_per_cpu") == 3664.0 * 4 * 64);
	struct json_object *rc;
	assert_true(json_object_object_get_ex(st, "rx_clock", &rc));
	assert_string_equal(json_object_get_string(rc), "CLOCK_MONOTONIC (bpf_ktime_get_ns)");
	assert_true(json_object_object_get_ex(o, "intervals", &iv));
	assert_true(jd(json_object_array_get_idx(iv, 0), "measurement.lost") == 10);
	assert_true(jd(o, "end.sum.measurement.latency.p50_ns") == 1008);
	assert_true(jd(o, "end.sum.measurement.reorder_extent_max") == 7);
	json_object_put(o);
	free(s);
	s = render_meas(XP_REPORT_JSON_STREAM);
	int n = 0;
	char *save = NULL; /* jd() uses strtok */
	for (char *line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save), n++) {
		struct json_object *e = json_tokener_parse(line);
		assert_non_null(e);
		if (n == 1)
			assert_true(jd(e, "data.measurement.latency.p90_ns") == 4000);
		if (n == 2)
			assert_true(jd(e, "data.sum.measurement.jitter.mean_ns") == 175);
		json_object_put(e);
	}
	assert_int_equal(n, 3);
	free(s);
}

/* --rtt: the same figures, said to be round trips timed on this host. */
static void test_round_trip_report(void **state)
{
	render_rtt = true;
	char *s = render_meas(XP_REPORT_TEXT);
	assert_non_null(strstr(s, "CLOCK_MONOTONIC; round-trip latency (the server sends each stamped frame back; "
				  "this host times it)"));
	assert_non_null(strstr(s, "Returns timed by this host's CLOCK_MONOTONIC"));
	assert_null(strstr(s, "Arrivals timed by the server's"));
	assert_non_null(strstr(s, "Latency   round trip, 990 frames timed"));
	assert_null(strstr(s, "one way"));
	free(s);
	s = render_meas(XP_REPORT_JSON);
	struct json_object *o = json_tokener_parse(s), *st, *v;
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "start", &st) && json_object_object_get_ex(st, "stamps", &st));
	assert_true(json_object_object_get_ex(st, "round_trip", &v) && json_object_get_boolean(v));
	assert_true(json_object_object_get_ex(st, "oneway", &v) && !json_object_get_boolean(v));
	assert_true(jd(o, "end.sum.measurement.round_trip") == 1);
	assert_true(jd(o, "end.sum.measurement.latency.p50_ns") == 1008);
	json_object_put(o);
	free(s);
	s = render_meas(XP_REPORT_JSON_STREAM);
	assert_non_null(strstr(s, "\"round_trip\":true"));
	free(s);
	render_rtt = false;
}

/* Frames without a stamp: the header says so, and no zeros stand in for latency. */
static void test_no_stamp_header(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	struct xp_report_info i = info();
	snprintf(i.stamp_note, sizeof(i.stamp_note), "no stamp: loss by count only, no latency (80-byte frames have "
		 "no room for one; -l 86 or more do)");
	struct xp_period p = period();
	xp_report_init(&r, XP_REPORT_TEXT, f);
	xp_report_start(&r, &i);
	xp_report_interval(&r, &p);
	xp_report_free(&r);
	fclose(f);
	assert_non_null(strstr(buf, "Stamps: no stamp: loss by count only, no latency"));
	assert_null(strstr(buf, "latency min"));
	assert_null(strstr(buf, "stamped"));
	free(buf);
}

/* An interval without stamps has no loss figure (its sent - received counts frames in flight at its ends on
 * one side only): "-" in the text line, null in JSON; the whole test keeps sent - received. */
static void test_interval_without_stamps_has_no_loss(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	struct xp_report_info i = info();
	snprintf(i.stamp_note, sizeof(i.stamp_note), "off (--no-stamps): loss by count only");
	struct xp_period p = period();
	p.interval = true;
	p.tx_pkts = 998000; /* fewer sent than received: the -2000 a count-only line would show */
	struct xp_summary s = { .total = period(), .client_cpu_pct = 50, .server_cpu_pct = -1 };
	xp_report_init(&r, XP_REPORT_TEXT, f);
	xp_report_start(&r, &i);
	xp_report_interval(&r, &p);
	xp_report_end(&r, &s);
	xp_report_free(&r);
	fclose(f);
	assert_null(strstr(buf, "-2000"));
	assert_non_null(strstr(buf, "  1.00-2.00   s"));
	char *line = strstr(buf, "  1.00-2.00   s");
	char *eol = strchr(line, '\n');
	assert_non_null(eol);
	*eol = '\0';
	/* the line ends in the two empty loss columns */
	assert_non_null(strstr(line, " -        -"));
	*eol = '\n';
	assert_non_null(strstr(buf, "Lost              1000 frames  (0.1000 %)"));
	free(buf);

	struct json_object *o = xp_period_json(&p), *v;
	assert_true(json_object_object_get_ex(o, "lost_packets", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(o, "loss_percent", &v));
	assert_null(v);
	json_object_put(o);
	/* the same period with stamps: the stamps' loss */
	p.meas.valid = true;
	p.meas.sent = 1000;
	p.meas.lost = 7;
	o = xp_period_json(&p);
	assert_true(jd(o, "lost_packets") == 7);
	assert_true(jd(o, "loss_percent") == 0.7);
	json_object_put(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_period_json),
		cmocka_unit_test(test_interval_without_stamps_has_no_loss),
		cmocka_unit_test(test_zero_length_period_is_null_not_nan),
		cmocka_unit_test(test_summary_json),
		cmocka_unit_test(test_json_document),
		cmocka_unit_test(test_json_stream),
		cmocka_unit_test(test_memory_sink),
		cmocka_unit_test(test_text_summary),
		cmocka_unit_test(test_counters_roundtrip),
		cmocka_unit_test(test_counters_sub),
		cmocka_unit_test(test_test_spec_roundtrip),
		cmocka_unit_test(test_measurement_json),
		cmocka_unit_test(test_measurement_text),
		cmocka_unit_test(test_measurement_json_formats),
		cmocka_unit_test(test_round_trip_report),
		cmocka_unit_test(test_no_stamp_header),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
