/*
 * The --metrics endpoint's text: Prometheus exposition format 0.0.4, which
 * OpenMetrics parsers read too. One family after another (HELP, TYPE, then
 * a sample per test), so `promtool check metrics` finds each family whole.
 * Pure: records in, text out (tests/unit/test_metrics.c).
 */
#include <math.h>
#include <string.h>

#include <linux/types.h>

#include "bpf/lib/latency.h"
#include "bpf/lib/stamp.h"
#include "report/metrics.h"

double xp_metrics_le_s(unsigned i)
{
	return (double)xp_lat_bucket_lo(XP_METRICS_LE_FIRST + i * XP_METRICS_LE_STEP) * XP_STAMP_TICK_NS * 1e-9;
}

void xp_metrics_lat_add(struct xp_metrics_test *t, const struct xp_lat_hist *h)
{
	/* Fine bucket b holds values below lo(b + 1): under bound i when b + 1 <= FIRST + i * STEP. */
	for (unsigned b = 0; b < XP_LAT_BUCKETS; b++) {
		if (!h->b[b])
			continue;
		unsigned i = b + 1 <= XP_METRICS_LE_FIRST ? 0
			     : (b + 1 - XP_METRICS_LE_FIRST + XP_METRICS_LE_STEP - 1) / XP_METRICS_LE_STEP;
		if (i >= XP_METRICS_LE)
			i = XP_METRICS_LE - 1; /* cannot happen: the last bound is the last bucket's end */
		t->lat_bucket[i] += h->b[b];
		/* The buckets' own sum, so _count, +Inf and the last bound agree whatever h->n says. */
		t->lat_count += h->b[b];
	}
	t->lat_sum_s += (double)h->sum * XP_STAMP_TICK_NS * 1e-9;
	t->lat = true;
}

/* A label value with \, " and newline escaped, as the format asks. */
static void put_value(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
}

/* The test's labels, then flow="..." (a flow's series) and le="..." when not NULL. */
static void put_labels_flow(FILE *f, const struct xp_metrics_test *t, const char *flow, const char *le)
{
	fprintf(f, "{test=\"%llu\",role=\"", (unsigned long long)t->id);
	put_value(f, t->role);
	fputs("\",engine=\"", f);
	put_value(f, t->engine);
	fputs("\",kind=\"", f);
	put_value(f, t->kind);
	fputs("\",peer=\"", f);
	put_value(f, t->peer);
	fputc('"', f);
	if (flow) {
		fputs(",flow=\"", f);
		put_value(f, flow);
		fputc('"', f);
	}
	if (le)
		fprintf(f, ",le=\"%s\"", le);
	fputc('}', f);
}

static void put_labels(FILE *f, const struct xp_metrics_test *t, const char *le)
{
	put_labels_flow(f, t, NULL, le);
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A double as the format writes it: shortest round-trip form, +Inf/-Inf/NaN by name. */
static void put_double(FILE *f, double v)
{
	if (isnan(v))
		fputs("NaN", f);
	else if (isinf(v))
		fputs(v > 0 ? "+Inf" : "-Inf", f);
	else
		fprintf(f, "%.17g", v);
}

enum which {
	W_RUNNING, W_START, W_TX, W_TXB, W_RX, W_RXB, W_LOST, W_OPENED, W_FAILED, W_HELD, W_OFFERED, W_TARGET,
};

static const struct family {
	const char *name, *type, *help;
} families[] = {
	[W_RUNNING] = { "xdpperf_test_running", "gauge", "1 while the test runs, 0 once it ended" },
	[W_START] = { "xdpperf_test_start_time_seconds", "gauge", "when the test started (Unix time)" },
	[W_TX] = { "xdpperf_frames_sent_total", "counter", "frames (SYNs) the client's engine sent" },
	[W_TXB] = { "xdpperf_bytes_sent_total", "counter", "bytes the client's engine sent (L2, without FCS)" },
	[W_RX] = { "xdpperf_frames_received_total", "counter",
		   "the test's frames the server counted (its XDP or TC program)" },
	[W_RXB] = { "xdpperf_bytes_received_total", "counter", "bytes of the test's frames the server counted" },
	[W_LOST] = { "xdpperf_frames_lost", "gauge",
		     "frames lost so far as the report counts them (by send interval with stamps); final at the end" },
	[W_OPENED] = { "xdpperf_connections_opened_total", "counter",
		       "connections established (the server's count: valid SYN cookies or accepts)" },
	[W_FAILED] = { "xdpperf_connections_failed_total", "counter",
		       "connection attempts that failed (timed out, reset, unreachable)" },
	[W_HELD] = { "xdpperf_connections_held", "gauge", "connections open now (-k: held)" },
	[W_OFFERED] = { "xdpperf_offered_load_frames_per_second", "gauge",
			"frames (SYNs) sent per second: the last interval's, the whole test's once ended" },
	[W_TARGET] = { "xdpperf_target_load_frames_per_second", "gauge", "the rate asked for (-b, --cps)" },
};

/* Whether record t has family w, and its value. */
static bool value_of(const struct xp_metrics_test *t, enum which w, double *v)
{
	switch (w) {
	case W_RUNNING: *v = t->running; return true;
	case W_START: *v = t->start_time; return true;
	case W_TX: *v = (double)t->tx_frames; return t->sends;
	case W_TXB: *v = (double)t->tx_bytes; return t->sends;
	case W_RX: *v = (double)t->rx_frames; return t->receives;
	case W_RXB: *v = (double)t->rx_bytes; return t->receives;
	case W_LOST: *v = (double)t->lost; return t->loss_known;
	case W_OPENED: *v = (double)t->conn_opened; return t->conns;
	case W_FAILED: *v = (double)t->conn_failed; return t->conns;
	case W_HELD: *v = (double)t->conn_held; return t->conns;
	case W_OFFERED: *v = t->offered_pps; return t->sends && t->offered_pps >= 0;
	case W_TARGET: *v = t->target_pps; return t->target_pps > 0;
	}
	return false;
}

enum fwhich { F_TX, F_TXB, F_RX, F_RXB, F_LOST };

static const struct family flow_families[] = {
	[F_TX] = { "xdpperf_flow_frames_sent_total", "counter", "frames of the flow the client's engine sent" },
	[F_TXB] = { "xdpperf_flow_bytes_sent_total", "counter", "bytes of the flow the client's engine sent (L2, without FCS)" },
	[F_RX] = { "xdpperf_flow_frames_received_total", "counter",
		   "stamped frames of the flow the server counted (a duplicate once)" },
	[F_RXB] = { "xdpperf_flow_bytes_received_total", "counter", "bytes of the flow's frames the server counted" },
	[F_LOST] = { "xdpperf_flow_frames_lost", "gauge",
		     "frames of the flow sent and not counted so far (in flight included); final at the end" },
};

static bool flow_value(const struct xp_metrics_flow *m, enum fwhich w, double *v)
{
	switch (w) {
	case F_TX: *v = (double)m->tx_frames; return true;
	case F_TXB: *v = (double)m->tx_bytes; return true;
	case F_RX: *v = (double)m->rx_frames; return m->counted;
	case F_RXB: *v = (double)m->rx_bytes; return m->counted;
	case F_LOST: *v = (double)m->lost; return m->counted;
	}
	return false;
}

/* Flow i's label value: its name, with " #N" (N = i + 1) when an earlier flow of the test has the same. */
static void flow_label(const struct xp_metrics_test *t, unsigned i, char *buf, size_t len)
{
	bool dup = false;
	for (unsigned j = 0; j < i && !dup; j++)
		dup = !strcmp(t->flows[j].name, t->flows[i].name);
	if (dup)
		snprintf(buf, len, "%s #%u", t->flows[i].name, i + 1);
	else
		snprintf(buf, len, "%s", t->flows[i].name);
}

static void flow_families_format(const struct xp_metrics_test *t, unsigned n, FILE *f)
{
	for (unsigned w = 0; w < sizeof(flow_families) / sizeof(flow_families[0]); w++) {
		bool any = false;
		double v;
		for (unsigned k = 0; k < n; k++) {
			if (!t[k].seq)
				continue;
			for (unsigned i = 0; i < t[k].nflows && i < XP_METRICS_FLOWS; i++) {
				char name[80];
				if (!flow_value(&t[k].flows[i], w, &v))
					continue;
				if (!any)
					head(f, flow_families[w].name, flow_families[w].type, flow_families[w].help);
				any = true;
				flow_label(&t[k], i, name, sizeof(name));
				fputs(flow_families[w].name, f);
				put_labels_flow(f, &t[k], name, NULL);
				fputc(' ', f);
				put_double(f, v);
				fputc('\n', f);
			}
		}
	}
}

int xp_metrics_format(const struct xp_metrics_test *t, unsigned n, FILE *f)
{
	for (unsigned w = 0; w < sizeof(families) / sizeof(families[0]); w++) {
		bool any = false;
		double v;
		for (unsigned k = 0; k < n; k++) {
			if (!t[k].seq || !value_of(&t[k], w, &v))
				continue;
			if (!any)
				head(f, families[w].name, families[w].type, families[w].help);
			any = true;
			fputs(families[w].name, f);
			put_labels(f, &t[k], NULL);
			fputc(' ', f);
			put_double(f, v);
			fputc('\n', f);
		}
	}
	bool any = false;
	for (unsigned k = 0; k < n; k++) {
		if (!t[k].seq || !t[k].lat)
			continue;
		if (!any)
			head(f, "xdpperf_latency_seconds", "histogram",
			     "latency of the stamped frames (one way, or round trip with --rtt)");
		any = true;
		uint64_t cum = 0;
		char le[32];
		for (unsigned i = 0; i < XP_METRICS_LE; i++) {
			cum += t[k].lat_bucket[i];
			snprintf(le, sizeof(le), "%.9g", xp_metrics_le_s(i));
			fputs("xdpperf_latency_seconds_bucket", f);
			put_labels(f, &t[k], le);
			fprintf(f, " %llu\n", (unsigned long long)cum);
		}
		/* The bounds cover every bucket: +Inf equals the last one. */
		fputs("xdpperf_latency_seconds_bucket", f);
		put_labels(f, &t[k], "+Inf");
		fprintf(f, " %llu\n", (unsigned long long)t[k].lat_count);
		fputs("xdpperf_latency_seconds_sum", f);
		put_labels(f, &t[k], NULL);
		fputc(' ', f);
		put_double(f, t[k].lat_sum_s);
		fputc('\n', f);
		fputs("xdpperf_latency_seconds_count", f);
		put_labels(f, &t[k], NULL);
		fprintf(f, " %llu\n", (unsigned long long)t[k].lat_count);
	}
	flow_families_format(t, n, f);
	fflush(f);
	return ferror(f) ? -1 : 0;
}
