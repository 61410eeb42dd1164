/*
 * --compare: the same test through the kernel's TCP stack (socket engine) and
 * then on the fast path, both measured by the server's XDP counters, and one
 * table with the ratio of each figure. A stream test runs on the AF_XDP
 * engine (xsk); a connection test (-x, -k) on the XDP connection engine.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "util/time.h"
#include "util/units.h"

struct figure {
	const char *name, *key, *unit;
	double (*get)(const struct xp_summary *s);
};

static double secs(const struct xp_summary *s)
{
	return s->total.t1 - s->total.t0 > 0 ? s->total.t1 - s->total.t0 : NAN;
}
static double rx_pps(const struct xp_summary *s) { return s->total.rx.pkts / secs(s); }
static double rx_l2(const struct xp_summary *s) { return l2_bits(s->total.rx.pkts, s->total.rx.bytes) / secs(s); }
static double rx_l1(const struct xp_summary *s) { return l1_bits(s->total.rx.pkts, s->total.rx.bytes) / secs(s); }
static double rx_payload(const struct xp_summary *s) { return s->total.rx.data_bytes * 8.0 / secs(s); }
static double cpu(const struct xp_summary *s) { return s->client_cpu_pct; }
static double per_core(const struct xp_summary *s)
{
	return s->client_cpu_pct > 0 ? rx_payload(s) / (s->client_cpu_pct / 100) : NAN;
}

/*
 * Connections completed, by one yardstick for both engines: the
 * handshake-completing ACKs the server's receive program counted (pure ACKs
 * to the test's ports, bpf/server.h tcp_ack_only). Neither engine writes that
 * counter: the socket engine's own figure is its connect() successes, the XDP
 * engine's the server's valid cookies, and a ratio of the two would mix
 * yardsticks. Each engine's own count is shown in a row of its own beside it.
 */
static double conns(const struct xp_summary *s)
{
	return s->total.client_only ? NAN : (double)s->total.rx.tcp_ack_only;
}
static double conns_own(const struct xp_summary *s)
{
	return s->total.figures == XP_FIGS_HANDSHAKES ? (double)xp_period_established(&s->total)
						       : (double)s->total.sock.conn_ok;
}
static double cps(const struct xp_summary *s) { return conns(s) / secs(s); }
static double syn_seen(const struct xp_summary *s) { return s->total.rx.tcp_syn / secs(s); }
static double cps_per_core(const struct xp_summary *s)
{
	return s->client_cpu_pct > 0 ? cps(s) / (s->client_cpu_pct / 100) : NAN;
}

static const struct figure conn_figures[] = {
	{ "Handshakes completed (server)", "connections", "", conns },
	{ "Completed (engine's own count)", "connections_engine_count", "", conns_own },
	{ "Connections/s (server)", "connections_per_second", "c/s", cps },
	{ "SYNs/s seen by the server (XDP)", "server_syn_per_second", "/s", syn_seen },
	{ "Client CPU (100 % = core)", "client_cpu_percent", "%", cpu },
	{ "Connections/s per client core", "connections_per_second_per_core", "c/s", cps_per_core },
};

/* Hold tests (-k): how fast each engine opened them all and how many lasted, not a rate over the run. */
static double held(const struct xp_summary *s) { return (double)s->hold.wanted; }
static double open_all_s(const struct xp_summary *s) { return s->hold.all_open_s > 0 ? s->hold.all_open_s : NAN; }
static double opening_cps(const struct xp_summary *s) { return held(s) / open_all_s(s); }
static double open_at_end(const struct xp_summary *s) { return (double)s->hold.open_at_end; }

static const struct figure hold_figures[] = {
	{ "Connections to hold (-P)", "connections", "", held },
	{ "Seconds to open all", "seconds_to_open_all", "s", open_all_s },
	{ "Connections/s while opening", "opening_connections_per_second", "c/s", opening_cps },
	{ "Still open at the end (client)", "open_at_end", "", open_at_end },
	{ "Client CPU (100 % = core)", "client_cpu_percent", "%", cpu },
};

static const struct figure figures[] = {
	{ "Received frames/s (XDP)", "received_packets_per_second", "pps", rx_pps },
	{ "Received L2 bit/s (XDP)", "received_bits_per_second_l2", "bit/s", rx_l2 },
	{ "Received L1 bit/s (XDP)", "received_bits_per_second_l1", "bit/s", rx_l1 },
	{ "Payload bit/s (XDP)", "payload_bits_per_second", "bit/s", rx_payload },
	{ "Client CPU (100 % = core)", "client_cpu_percent", "%", cpu },
	{ "Payload bit/s per client core", "payload_bits_per_second_per_core", "bit/s", per_core },
};
struct table {
	const struct figure *fig;
	size_t n;
	const char *fast; /* the fast engine's column name */
};

static struct json_object *table_json(const struct table *t, const struct xp_summary *a, const struct xp_summary *b)
{
	const struct figure *figures = t->fig;
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; i < t->n; i++) {
		struct json_object *row = json_object_new_object();
		double x = figures[i].get(a), y = figures[i].get(b), r = y / x;
		json_object_object_add(row, "socket", isfinite(x) ? json_object_new_double(x) : NULL);
		json_object_object_add(row, t->fast, isfinite(y) ? json_object_new_double(y) : NULL);
		json_object_object_add(row, "ratio", isfinite(r) ? json_object_new_double(r) : NULL);
		json_object_object_add(o, figures[i].key, row);
	}
	return o;
}

static void table_text(FILE *f, const struct table *t, const struct xp_summary *a, const struct xp_summary *b)
{
	char x[32], y[32], r[32];
	fprintf(f, "\n== Side by side: the same test through the kernel's TCP stack and on the fast path (%s)\n", t->fast);
	snprintf(r, sizeof(r), "%s/socket", t->fast);
	fprintf(f, "%-32s %18s %18s %10s\n", "Figure", "socket", t->fast, r);
	for (size_t i = 0; i < t->n; i++) {
		const struct figure *g = &t->fig[i];
		double u = g->get(a), v = g->get(b);
		if (!strcmp(g->unit, "%")) {
			snprintf(x, sizeof(x), "%.1f %%", u);
			snprintf(y, sizeof(y), "%.1f %%", v);
		} else {
			xp_fmt_rate(u, g->unit, x, sizeof(x));
			xp_fmt_rate(v, g->unit, y, sizeof(y));
		}
		fprintf(f, "%-32s %18s %18s %9.2fx\n", g->name, x, y, v / u);
	}
	fflush(f);
}

/* A run failed: with -J the error, and what ran so far, in one document (stdout is never left empty). */
static int compare_failed(enum xp_report_format fmt, struct xp_report *ra, struct xp_report *rb, const char *fast,
			  int rc)
{
	if (fmt == XP_REPORT_JSON) {
		struct json_object *doc = json_object_new_object();
		json_object_object_add(doc, "error", json_object_new_string(xp_client_last_error()));
		if (ra && ra->doc)
			json_object_object_add(doc, "socket", json_object_get(ra->doc));
		if (rb && rb->doc && rb->ended)
			json_object_object_add(doc, fast, json_object_get(rb->doc));
		printf("%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	}
	if (ra)
		xp_report_free(ra);
	if (rb)
		xp_report_free(rb);
	return rc;
}

/* The same test twice, each side's engine its own: so and xo are sp with the socket engine and with fast. */
static int compare(const struct xp_spec *sp, struct xp_spec *so, struct xp_spec *xo, const struct xp_run_opts *ro,
		   enum xp_engine_id fast, enum xp_report_format fmt)
{
	struct xp_summary sa, sb;
	struct xp_report ra, rb;

	bool conn = sp->kind != XP_TEST_STREAM;
	struct table t = { figures, sizeof(figures) / sizeof(figures[0]), "xsk" };
	if (sp->kind == XP_TEST_HOLD)
		t = (struct table){ hold_figures, sizeof(hold_figures) / sizeof(hold_figures[0]), "xdp" };
	else if (conn)
		t = (struct table){ conn_figures, sizeof(conn_figures) / sizeof(conn_figures[0]), "xdp" };
	else
		t.fast = xp_engine_name(fast); /* xsk, or the one --engine named */
	so->engine = XP_ENGINE_SOCKET;
	xo->engine = fast;
	/* TCP segments of a socket stream fill the MTU: compare with frames as large unless -l says otherwise. */
	if (!sp->traffic[0].frame_size_set)
		xo->traffic[0].frame_size = 0;

	xp_report_init(&ra, fmt, stdout);
	ra.keep_doc = true;
	if (fmt == XP_REPORT_TEXT)
		printf("== 1/2: socket engine\n");
	int rc = xp_client_test(so, ro, &ra, &sa);
	if (rc)
		return compare_failed(fmt, &ra, NULL, t.fast, rc);
	/* Let the socket test's last segments (FIN, RST, TIME_WAIT ACKs) pass before counting again. */
	xp_sleep(0.5);
	xp_report_init(&rb, fmt, stdout);
	rb.keep_doc = true;
	if (fmt == XP_REPORT_TEXT)
		printf("\n== 2/2: %s\n", conn ? "XDP connection engine" :
			fast == XP_ENGINE_LIVE ? "live engine (XDP live frames)" : "xsk engine (AF_XDP)");
	rc = xp_client_test(xo, ro, &rb, &sb);
	if (rc)
		return compare_failed(fmt, &ra, &rb, t.fast, rc);
	if (fmt == XP_REPORT_JSON) {
		struct json_object *doc = json_object_new_object();
		json_object_object_add(doc, "socket", ra.doc);
		json_object_object_add(doc, t.fast, rb.doc);
		ra.doc = rb.doc = NULL;
		json_object_object_add(doc, "compare", table_json(&t, &sa, &sb));
		printf("%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(doc);
	} else if (fmt == XP_REPORT_JSON_STREAM) {
		struct json_object *ev = json_object_new_object();
		json_object_object_add(ev, "event", json_object_new_string("compare"));
		json_object_object_add(ev, "data", table_json(&t, &sa, &sb));
		printf("%s\n", json_object_to_json_string_ext(ev, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(ev);
	} else {
		table_text(stdout, &t, &sa, &sb);
	}
	xp_report_free(&ra);
	xp_report_free(&rb);
	return 0;
}

int xp_client_compare(const struct xp_spec *sp, const struct xp_run_opts *ro, enum xp_engine_id fast,
		      enum xp_report_format fmt)
{
	/* Specs are megabytes with their flows: the two sides' copies on the heap. */
	struct xp_spec *so = xp_spec_dup(sp), *xo = xp_spec_dup(sp);
	int rc = so && xo ? compare(sp, so, xo, ro, fast, fmt) : 1;
	if (!so || !xo)
		fprintf(stderr, "xdpperf: out of memory\n");
	free(so);
	free(xo);
	return rc;
}
