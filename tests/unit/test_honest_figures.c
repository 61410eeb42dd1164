/*
 * Figures that say what they are (issue 14): received-only reports, a server
 * that went away, hold tests, the offered load against its target and who
 * held it back, byte units, socket counts that explain their difference,
 * -J errors, and the small helpers behind them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "net/netstat.h"
#include "report/report.h"

/* Run a report with one interval and a summary into a string (the caller frees it). */
static char *render(enum xp_report_format fmt, const struct xp_report_info *i, const struct xp_period *iv,
		    const struct xp_summary *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	xp_report_init(&r, fmt, f);
	xp_report_start(&r, i);
	xp_report_interval(&r, iv);
	xp_report_end(&r, s);
	xp_report_free(&r);
	fclose(f);
	return buf;
}

static struct xp_report_info info(enum xp_figures figs, const char *engine)
{
	struct xp_report_info i = { .engine = engine, .figures = figs, .engine_mode = "live", .server_xdp_mode = "native",
				    .test = "stream", .proto = "tcp", .family = 4, .frame_size = 64, .queues = 1,
				    .port_lo = 63000, .port_hi = 63015, .cport_lo = 10000, .cport_hi = 59999,
				    .duration = 1.5, .interval = 1 };
	strcpy(i.client, "198.18.1.2");
	strcpy(i.server, "198.19.1.2");
	strcpy(i.dev, "xpc0");
	strcpy(i.server_dev, "xps0");
	return i;
}

static struct json_object *get(struct json_object *o, const char *path)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok(buf, "."); t; t = strtok(NULL, ".")) {
		struct json_object *n;
		if (!json_object_object_get_ex(o, t, &n))
			return NULL;
		o = n;
	}
	return o;
}

/* --engine none: no "Sending N-byte frames", no loss, no sent count; the window is the samples'. */
static void test_received_only(void **state)
{
	struct xp_report_info i = info(XP_FIGS_RECEIVED, "none");
	i.frame_size = 0;
	struct xp_period p = { .t0 = 0, .t1 = 1, .figures = XP_FIGS_RECEIVED };
	p.rx.pkts = 138000;
	p.rx.bytes = 138000 * 60;
	struct xp_summary s = { .total = p, .client_cpu_pct = 1, .server_cpu_pct = -1 };
	char *t = render(XP_REPORT_TEXT, &i, &p, &s);
	assert_null(strstr(t, "Sending"));
	assert_null(strstr(t, "Lost"));
	assert_non_null(strstr(t, "sends nothing"));
	assert_non_null(strstr(t, "Received        138000 frames"));
	assert_non_null(strstr(t, "1.5 s"));
	free(t);
	char *j = render(XP_REPORT_JSON, &i, &p, &s);
	struct json_object *o = json_tokener_parse(j);
	assert_non_null(o);
	assert_null(get(o, "end.sum.sent"));
	assert_null(get(o, "end.sum.lost_packets"));
	assert_int_equal(json_object_get_int64(get(o, "end.sum.received.packets")), 138000);
	json_object_put(o);
	free(j);
}

/* The server went away: say so, and count no loss past its last sample. */
static void test_server_lost(void **state)
{
	struct xp_report_info i = info(XP_FIGS_FRAMES, "live");
	struct xp_period p = { .t0 = 0, .t1 = 3.02, .figures = XP_FIGS_FRAMES, .tx_pkts = 100000, .tx_bytes = 6000000 };
	p.rx.pkts = 100000;
	p.rx.bytes = 6000000;
	struct xp_summary s = { .total = p, .server_cpu_pct = -1, .server_lost = true, .server_lost_at = 3.02,
				.sent_after_lost = 46450, .error = "the server closed the control connection" };
	char *t = render(XP_REPORT_TEXT, &i, &p, &s);
	assert_non_null(strstr(t, "The server went away after 3.02 s"));
	assert_non_null(strstr(t, "46450 sent after it are not counted as lost"));
	assert_non_null(strstr(t, "Lost                 0 frames"));
	free(t);
	char *j = render(XP_REPORT_JSON, &i, &p, &s);
	struct json_object *o = json_tokener_parse(j);
	assert_true(json_object_get_double(get(o, "end.server_lost_at")) == 3.02);
	assert_int_equal(json_object_get_int64(get(o, "end.sent_after_server_lost")), 46450);
	assert_int_equal(json_object_get_int64(get(o, "end.sum.lost_packets")), 0);
	/* and the error where iperf3 puts it */
	assert_string_equal(json_object_get_string(get(o, "error")), "the server closed the control connection");
	json_object_put(o);
	free(j);
}

/* Hold: the time to open all N and how many lasted, not a rate over the whole run. */
static void test_hold(void **state)
{
	struct xp_report_info i = info(XP_FIGS_SOCKETS, "socket");
	i.test = "hold";
	i.parallel = 1000;
	struct xp_period p = { .t0 = 0, .t1 = 3.016, .figures = XP_FIGS_SOCKETS };
	p.sock.conn_ok = 1000;
	p.sock.open_now = 1000;
	p.sock.s_accepted = 1000;
	p.sock.s_open_now = 1000;
	struct xp_summary s = { .kind = XP_TEST_HOLD, .total = p, .server_cpu_pct = -1,
				.hold = { .wanted = 1000, .all_open_s = 0.5, .open_at_end = 990, .s_open_at_end = 991,
					  .server_view = true } };
	struct xp_period first = p;
	first.t1 = 1; /* all 1000 in the first second: 1000 c/s there is right */
	char *t = render(XP_REPORT_TEXT, &i, &first, &s);
	assert_non_null(strstr(t, "Opened       all 1000 in 0.500 s (2.00 kconnections/s while opening)"));
	assert_non_null(strstr(t, "Still open            990 at the end (client), 991 (server)"));
	assert_null(strstr(t, "331.")); /* no average over the run */
	free(t);
	char *j = render(XP_REPORT_JSON, &i, &p, &s);
	struct json_object *o = json_tokener_parse(j);
	assert_true(json_object_get_double(get(o, "end.hold.seconds_to_open_all")) == 0.5);
	assert_true(json_object_get_double(get(o, "end.hold.opening_connections_per_second")) == 2000);
	assert_int_equal(json_object_get_int64(get(o, "end.hold.open_at_end")), 990);
	assert_int_equal(json_object_get_int64(get(o, "end.hold.server_open_at_end")), 991);
	struct json_object *cps;
	assert_true(json_object_object_get_ex(get(o, "end.sum.sockets"), "connections_per_second", &cps));
	assert_null(cps);
	json_object_put(o);
	free(j);
	/* never all open at once: null, not a made-up time */
	s.hold.all_open_s = 0;
	struct json_object *h = xp_hold_json(&s.hold), *v;
	assert_true(json_object_object_get_ex(h, "seconds_to_open_all", &v));
	assert_null(v);
	json_object_put(h);
}

/* -x: the two sides' counts with the reason they differ; no "0 open at most". */
static void test_socket_counts_explained(void **state)
{
	struct xp_report_info i = info(XP_FIGS_SOCKETS, "socket");
	i.test = "connect";
	struct xp_period p = { .t0 = 0, .t1 = 2, .figures = XP_FIGS_SOCKETS };
	p.sock.conn_ok = 68840;
	p.sock.s_accepted = 68352;
	p.sock.s_listen_overflows = 488;
	struct xp_summary s = { .kind = XP_TEST_CONNECT, .total = p, .server_cpu_pct = -1 };
	char *t = render(XP_REPORT_TEXT, &i, &p, &s);
	assert_non_null(strstr(t, "established 68840 = accepted 68352 + 488 dropped by full accept queues"));
	assert_non_null(strstr(t, "+ 0 reset before the server completed them (EmbryonicRsts"));
	assert_non_null(strstr(t, "somaxconn"));
	assert_null(strstr(t, "open at most\n             ")); /* client side: not for -x */
	assert_non_null(strstr(t, "in flight at the end"));
	free(t);
	struct json_object *o = xp_sock_figs_json(&p.sock, 2);
	assert_int_equal(json_object_get_int64(get(o, "server_listen_overflows")), 488);
	json_object_put(o);
}

/* Who held the offered load back, from the engine's account. */
static void test_pace_judge(void **state)
{
	struct xp_pace_figs p = { .target_pps = 1.5e9, .reached_pps = 1.13e6 };
	/* busy all the time, little in softirq: the sender */
	struct xp_pace_stats st = { .known = true, .wall_s = 2, .wait_s = 0, .cpu_ticks = 100, .softirq_ticks = 10 };
	xp_pace_judge(&st, &p);
	assert_true(p.short_of_target);
	assert_string_equal(p.held_back_by, "sender");
	assert_non_null(strstr(p.why, "busy 100 %"));
	/* busy, most of the CPU in softirq: the path's work on the sender's CPU */
	st.softirq_ticks = 70;
	xp_pace_judge(&st, &p);
	assert_string_equal(p.held_back_by, "path");
	assert_non_null(strstr(p.why, "softirq"));
	/* the ring full or EAGAIN: backpressure from the path */
	st.pushback = 12;
	xp_pace_judge(&st, &p);
	assert_string_equal(p.held_back_by, "path");
	assert_non_null(strstr(p.why, "12 times"));
	/* softirq deferred to ksoftirqd shows as CPU wait too: still the path */
	st.pushback = 0;
	st.cpu_wait_s = 1;
	xp_pace_judge(&st, &p);
	assert_string_equal(p.held_back_by, "path");
	/* waiting for a CPU, little softirq: other processes */
	st.softirq_ticks = 10;
	xp_pace_judge(&st, &p);
	assert_string_equal(p.held_back_by, "sender");
	assert_non_null(strstr(p.why, "waited 50 %"));
	/* within the tolerance: reached */
	p = (struct xp_pace_figs){ .target_pps = 100000, .reached_pps = 98100 };
	xp_pace_judge(&st, &p);
	assert_false(p.short_of_target);
	p.reached_pps = 97900;
	xp_pace_judge(&st, &p);
	assert_true(p.short_of_target);
}

/* The warning is the summary's first line, and JSON carries the figures. */
static void test_pace_warning_first(void **state)
{
	struct xp_report_info i = info(XP_FIGS_FRAMES, "live");
	i.target_pps = 1.5e9;
	struct xp_period p = { .t0 = 0, .t1 = 2, .figures = XP_FIGS_FRAMES, .tx_pkts = 2260000, .tx_bytes = 2260000 * 60 };
	p.rx.pkts = p.tx_pkts;
	p.rx.bytes = p.tx_bytes;
	struct xp_summary s = { .total = p, .server_cpu_pct = -1, .pace = { .target_pps = 1.5e9, .reached_pps = 1.13e6 } };
	struct xp_pace_stats st = { .known = true, .wall_s = 2, .cpu_ticks = 100, .softirq_ticks = 5 };
	xp_pace_judge(&st, &s.pace);
	char *t = render(XP_REPORT_TEXT, &i, &p, &s);
	char *sep = strstr(t, "- - - -");
	assert_non_null(sep);
	char *next = strchr(sep, '\n') + 1;
	const char *want = "Warning: the offered load reached 1.13 Mpps, 0.1 % of the target 1.50 Gpps: "
			   "held back by the sender";
	if (strncmp(next, want, strlen(want)))
		fail_msg("the summary starts with '%.120s'", next);
	free(t);
	char *j = render(XP_REPORT_JSON, &i, &p, &s);
	struct json_object *o = json_tokener_parse(j);
	assert_true(json_object_get_boolean(get(o, "end.offered_load.short_of_target")));
	assert_string_equal(json_object_get_string(get(o, "end.offered_load.held_back_by")), "sender");
	assert_true(json_object_get_double(get(o, "end.offered_load.reached_packets_per_second")) == 1.13e6);
	json_object_put(o);
	free(j);
}

/* What a byte count includes is stated, in the start object. */
static void test_units_stated(void **state)
{
	struct xp_report_info i = info(XP_FIGS_FRAMES, "xsk");
	struct json_object *o = xp_report_info_json(&i);
	const char *b = json_object_get_string(get(o, "units.bytes"));
	assert_non_null(b);
	assert_non_null(strstr(b, "without the 4-byte FCS"));
	assert_non_null(get(o, "units.bits_per_second_l1"));
	json_object_put(o);
}

/* The midpoint of two readings keeps bytes a whole number of frames. */
static void test_midpoint(void **state)
{
	uint64_t p, b;
	xp_midpoint(1000, 60000, 1001, 60060, &p, &b); /* odd sum: averaging both would give 60030 */
	assert_int_equal(p, 1000);
	assert_int_equal(b, 60000);
	xp_midpoint(1000, 60000, 1010, 60600, &p, &b);
	assert_int_equal(p, 1005);
	assert_int_equal(b, 60300);
	xp_midpoint(7, 420, 7, 420, &p, &b);
	assert_int_equal(p, 7);
	assert_int_equal(b, 420);
	for (uint64_t k = 0; k < 1000; k++) {
		xp_midpoint(k * 3, k * 3 * 1514, k * 7 + 1, (k * 7 + 1) * 1514, &p, &b);
		assert_int_equal(b, p * 1514);
	}
}

/* /proc/net/netstat: names on one line, values on the next. */
static void test_netstat_parse(void **state)
{
	const char *text = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\n"
			   "TcpExt: 0 488 490\n"
			   "IpExt: InNoRoutes ListenOverflows\n"
			   "IpExt: 5 9\n";
	uint64_t v;
	assert_int_equal(xp_netstat_value(text, "TcpExt", "ListenOverflows", &v), 0);
	assert_int_equal(v, 488);
	assert_int_equal(xp_netstat_value(text, "TcpExt", "ListenDrops", &v), 0);
	assert_int_equal(v, 490);
	assert_int_equal(xp_netstat_value(text, "IpExt", "ListenOverflows", &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(xp_netstat_value(text, "TcpExt", "Nope", &v), -ENOENT);
	/* the client's RST overtaking its ACK: counted apart */
	struct xp_period p = { .t0 = 0, .t1 = 1, .figures = XP_FIGS_SOCKETS };
	p.sock.conn_ok = 173351;
	p.sock.s_accepted = 172242;
	p.sock.s_embryonic_rsts = 1109;
	struct json_object *o = xp_sock_figs_json(&p.sock, 1);
	assert_int_equal(json_object_get_int64(get(o, "server_embryonic_resets")), 1109);
	json_object_put(o);
	struct xp_tcpext t;
	assert_int_equal(xp_tcpext_read(&t), 0); /* this kernel has them */
}

/* -J: an error before anything ran is a JSON object on the report's stream. */
static void test_json_error(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	xp_report_init(&r, XP_REPORT_JSON, f);
	xp_report_error(&r, "no route to 198.18.200.1 (198.18.200.1) on this host");
	xp_report_free(&r);
	fclose(f);
	struct json_object *o = json_tokener_parse(buf);
	assert_non_null(o);
	assert_string_equal(json_object_get_string(get(o, "error")), "no route to 198.18.200.1 (198.18.200.1) on this host");
	json_object_put(o);
	free(buf);
	/* --json-stream: an "error" event */
	buf = NULL;
	f = open_memstream(&buf, &len);
	xp_report_init(&r, XP_REPORT_JSON_STREAM, f);
	xp_report_error(&r, "boom");
	fclose(f);
	o = json_tokener_parse(buf);
	assert_string_equal(json_object_get_string(get(o, "event")), "error");
	assert_string_equal(json_object_get_string(get(o, "data")), "boom");
	json_object_put(o);
	free(buf);
}

/* TCP stream frames: the header says what they are and what to use for a stateful firewall. */
static void test_tcp_frames_note(void **state)
{
	struct xp_report_info i = info(XP_FIGS_FRAMES, "live");
	struct xp_period p = { .t0 = 0, .t1 = 1, .figures = XP_FIGS_FRAMES, .tx_pkts = 1000, .tx_bytes = 60000 };
	p.rx.pkts = 10;
	p.rx.bytes = 600;
	struct xp_summary s = { .total = p, .server_cpu_pct = -1 };
	char *t = render(XP_REPORT_TEXT, &i, &p, &s);
	assert_non_null(strstr(t, "connections never opened"));
	assert_non_null(strstr(t, "use -u"));
	assert_non_null(strstr(t, "Most TCP frames were lost")); /* 99 % lost */
	free(t);
	i.proto = "udp";
	t = render(XP_REPORT_TEXT, &i, &p, &s);
	assert_null(strstr(t, "connections never opened"));
	assert_null(strstr(t, "Most TCP frames"));
	free(t);
}

/* --max-loss and --require-rate: the exit statuses, loss first. */
static void test_thresholds(void **state)
{
	static struct xp_spec o;
	xp_spec_default(&o);
	struct xp_summary s = { .total = { .t0 = 0, .t1 = 1, .figures = XP_FIGS_FRAMES, .tx_pkts = 1000, .tx_bytes = 60000 } };
	s.total.rx.pkts = 900;
	s.total.rx.bytes = 54000;
	char msg[256];
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), 0); /* nothing asked */
	o.max_loss = 10;
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), 0); /* 10 % is not more than 10 % */
	o.max_loss = 9.9;
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), XP_EXIT_LOSS);
	assert_non_null(strstr(msg, "lost 10.0000 % of the frames, more than --max-loss 9.9 %"));
	o.max_loss = -1;
	o.require_rate = true;
	s.pace = (struct xp_pace_figs){ .target_pps = 2000, .reached_pps = 1000, .short_of_target = true,
					.held_back_by = "sender", .why = "busy" };
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), XP_EXIT_SHORT);
	assert_non_null(strstr(msg, "50.0 % of the target"));
	o.max_loss = 5; /* both: loss first */
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), XP_EXIT_LOSS);
	/* handshakes: SYNs not completed */
	struct xp_period h = { .figures = XP_FIGS_HANDSHAKES, .hs = { .syn_sent = 200 } };
	h.rx.conn_established = 150;
	assert_true(xp_summary_loss_pct(&h) == 25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_received_only),
		cmocka_unit_test(test_server_lost),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_socket_counts_explained),
		cmocka_unit_test(test_pace_judge),
		cmocka_unit_test(test_pace_warning_first),
		cmocka_unit_test(test_units_stated),
		cmocka_unit_test(test_midpoint),
		cmocka_unit_test(test_netstat_parse),
		cmocka_unit_test(test_json_error),
		cmocka_unit_test(test_tcp_frames_note),
		cmocka_unit_test(test_thresholds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
