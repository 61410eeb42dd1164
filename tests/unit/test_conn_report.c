/*
 * The XDP connection engine's window in the report (issue 12): -J carries
 * every window figure under its own name, and the text says how many failed
 * by which cause and, for -k, how many of -P were held and why not the rest.
 * Every figure of the fixture is distinct and non-zero, so a figure reported
 * under another's name, or not at all, shows.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"

static struct xp_report_info info(const char *test)
{
	struct xp_report_info i = { .engine = "xdp", .engine_mode = "live", .server_xdp_mode = "native",
				    .test = test, .proto = "tcp", .family = 4, .port_lo = 63000, .port_hi = 63015,
				    .cport_lo = 10000, .cport_hi = 59999, .duration = 10, .interval = 1,
				    .figures = XP_FIGS_HANDSHAKES, .client_xdp_mode = "native", .window = 5000,
				    .syn_retries = 6, .keepalive_s = 2 };
	strcpy(i.client, "198.18.1.2");
	strcpy(i.server, "198.19.1.2");
	strcpy(i.dev, "xpc0");
	strcpy(i.server_dev, "xps0");
	return i;
}

/* The server's keepalive_unchecked of the next period(): 0 unless a test sets it. */
static uint64_t ka_unchecked;

/* A hold of 5000: 4990 established and held, 3 timed out, 4 reset, 2 unreachable, 1 still waiting. */
static struct xp_period period(void)
{
	struct xp_period p = { .t0 = 0, .t1 = 10, .figures = XP_FIGS_HANDSHAKES, .tx_pkts = 5000 };
	struct xp_handshake_figs *h = &p.hs;
	h->syn_sent = 5000;
	h->synack_seen = 4991;
	h->acks_sent = 4990;
	h->rst_seen = 5;
	h->rst_closed = 4991;
	h->window = 5000;
	h->syn_retries = 6;
	h->syn_retx = 555;
	h->fin_retx = 7;
	h->keepalives = 24950;
	h->fail_timeout = 3;
	h->fail_reset = 4;
	h->fail_unreach = 2;
	h->fin_timeout = 8;
	h->synack_dup = 9;
	h->stale_rst = 11;
	h->in_flight = 1;
	h->send_errors = 12;
	p.rx.conn_established = 4990;
	p.rx.tcp_syn = 5555;
	p.rx.synack_sent = 5555;
	p.rx.keepalives = 24900;
	p.rx.keepalive_unchecked = ka_unchecked;
	return p;
}

static char *render(enum xp_report_format fmt, const char *test, uint64_t wanted, uint64_t held)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct xp_report r;
	struct xp_report_info i = info(test);
	struct xp_summary s = { .total = period(), .client_cpu_pct = 50, .server_cpu_pct = -1 };
	s.hold = (struct xp_hold_figs){ .wanted = wanted, .all_open_s = 0, .open_at_end = held };
	xp_report_init(&r, fmt, f);
	xp_report_start(&r, &i);
	xp_report_end(&r, &s);
	xp_report_free(&r);
	fclose(f);
	return buf;
}

static int64_t conn_field(struct json_object *doc, const char *name)
{
	struct json_object *v;
	assert_true(json_object_object_get_ex(doc, "end", &v));
	assert_true(json_object_object_get_ex(v, "sum", &v));
	assert_true(json_object_object_get_ex(v, "connections", &v));
	if (!json_object_object_get_ex(v, name, &v))
		fail_msg("-J has no end.sum.connections.%s", name);
	return json_object_get_int64(v);
}

static void test_window_json(void **state)
{
	(void)state;
	char *s = render(XP_REPORT_JSON, "hold", 5000, 4990);
	struct json_object *o = json_tokener_parse(s);
	assert_non_null(o);
	static const struct { const char *k; int64_t v; } want[] = {
		{ "window", 5000 }, { "syn_retries", 6 }, { "syn_retransmitted", 555 }, { "fin_retransmitted", 7 },
		{ "keepalives_sent", 24950 }, { "failed_timeout", 3 }, { "failed_reset", 4 },
		{ "failed_unreachable", 2 }, { "fin_timeout", 8 }, { "synack_duplicates", 9 },
		{ "stale_synack_reset", 11 }, { "in_flight_at_end", 1 }, { "keeper_send_errors", 12 },
		{ "held_reset_at_end", 4991 }, { "established", 4990 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (conn_field(o, want[i].k) != want[i].v)
			fail_msg("%s: %lld, want %lld", want[i].k, (long long)conn_field(o, want[i].k),
				 (long long)want[i].v);
	json_object_put(o);
	free(s);
}

static void test_hold_text_says_how_many_and_why(void **state)
{
	(void)state;
	char *s = render(XP_REPORT_TEXT, "hold", 5000, 4990);
	if (!strstr(s, "Window -P 5000 (connections held), SYNs sent again after 1 s, doubling, 6 times, keepalives "
		       "every 2 s; 48 bytes of state per connection"))
		fail_msg("no window line in:\n%s", s);
	if (!strstr(s, "Held         4990 of 5000 until the end; not held 10: 3 timed out after 6 retransmissions, 4 "
		       "reset, 2 ICMP unreachable, 1 still waiting for their SYN-ACK"))
		fail_msg("no held line in:\n%s", s);
	if (!strstr(s, "Failed                  9 connections: 3 timed out after 6 retransmissions, 4 reset, 2 ICMP "
		       "unreachable; 1 still waiting at the end"))
		fail_msg("no failed line in:\n%s", s);
	if (!strstr(s, "Retransmitted         555 SYNs  7 FINs (8 closes given up)  9 SYN-ACKs answered twice  11 late "
		       "SYN-ACKs reset"))
		fail_msg("no retransmission line in:\n%s", s);
	if (!strstr(s, "Keepalives          24950 sent"))
		fail_msg("no keepalive line in:\n%s", s);
	free(s);
	/* All held: says so, and no "not held". */
	s = render(XP_REPORT_TEXT, "hold", 5000, 5000);
	assert_non_null(strstr(s, "Held         all 5000 until the end"));
	assert_null(strstr(s, "not held"));
	free(s);
}

/*
 * Pure ACKs the server's keepalive search had no budget for (bpf/server.h
 * keepalive_unchecked): the text summary says so before the counts, with
 * the number, and so do -J (the count, and the same line in
 * end.keepalive_warning) and --json-stream's end event. None: no line.
 */
static void test_keepalive_unchecked_reported(void **state)
{
	(void)state;
	const char *line = "Warning: 777 pure ACKs not checked: the server's keepalive search budget was spent";
	ka_unchecked = 777;
	char *s = render(XP_REPORT_TEXT, "hold", 5000, 4990);
	const char *w = strstr(s, line), *counts = strstr(s, "Connections  ");
	if (!w || !counts || w > counts)
		fail_msg("no warning before the counts in:\n%s", s);
	if (!strstr(s, "         777 pure ACKs not checked (keepalive search budget spent)"))
		fail_msg("no unchecked count line in:\n%s", s);
	free(s);

	s = render(XP_REPORT_JSON, "hold", 5000, 4990);
	struct json_object *o = json_tokener_parse(s), *v;
	assert_non_null(o);
	assert_int_equal(conn_field(o, "server_keepalive_unchecked"), 777);
	assert_int_equal(conn_field(o, "server_keepalives"), 24900);
	assert_true(json_object_object_get_ex(o, "end", &v));
	assert_true(json_object_object_get_ex(v, "keepalive_warning", &v));
	assert_non_null(strstr(json_object_get_string(v), line));
	json_object_put(o);
	free(s);

	s = render(XP_REPORT_JSON_STREAM, "hold", 5000, 4990);
	const char *end = strstr(s, "{\"event\":\"end\"");
	assert_non_null(end);
	o = json_tokener_parse(end);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "data", &v));
	assert_true(json_object_object_get_ex(v, "keepalive_warning", NULL));
	assert_true(json_object_object_get_ex(v, "sum", &v));
	assert_true(json_object_object_get_ex(v, "connections", &v));
	assert_true(json_object_object_get_ex(v, "server_keepalive_unchecked", &v));
	assert_int_equal(json_object_get_int64(v), 777);
	json_object_put(o);
	free(s);

	ka_unchecked = 0;
	s = render(XP_REPORT_TEXT, "hold", 5000, 4990);
	assert_null(strstr(s, "not checked"));
	free(s);
	s = render(XP_REPORT_JSON, "hold", 5000, 4990);
	o = json_tokener_parse(s);
	assert_int_equal(conn_field(o, "server_keepalive_unchecked"), 0);
	assert_true(json_object_object_get_ex(o, "end", &v));
	assert_false(json_object_object_get_ex(v, "keepalive_warning", NULL));
	json_object_put(o);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_json),
		cmocka_unit_test(test_hold_text_says_how_many_and_why),
		cmocka_unit_test(test_keepalive_unchecked_reported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
