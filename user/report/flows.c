/*
 * The per-flow report of a test with flows (issue 26): in text a table after
 * the summary, the flows with most loss first, --flow-top rows and the rest
 * summed in one row; in -J / --json-stream every flow in the end object with
 * Open Traffic Generator-like names (frames_tx, frames_rx, loss, latency).
 * A flow's loss is what the engine sent of it that the server did not count
 * (duplicates not counted twice); a flow the server did not count says so.
 * Each interval line of such a test has the same per interval (meas/figures.h's
 * struct xp_flow_ival: an interval's loss may be below 0, frames in flight).
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "proto/flow_figs.h"
#include "bpf/lib/stamp.h"
#include "util/json_add.h"

static uint64_t lost_of(const struct xp_flow_result *f)
{
	return f->rx_known && f->tx_frames > f->rx.recv ? f->tx_frames - f->rx.recv : 0;
}

static void flow_label(const struct xp_flow_result *f, unsigned i, char *buf, size_t len)
{
	if (f->name[0])
		snprintf(buf, len, "%s", f->name);
	else
		snprintf(buf, len, "flow %u", i + 1);
}

/* The text table's name of a flow: its label, "*" after it for one without stamps. */
static void row_label(const struct xp_flow_result *f, unsigned i, char *buf, size_t len)
{
	char l[64];
	flow_label(f, i, l, sizeof(l));
	snprintf(buf, len, "%.22s%s", l, f->keyed || f->uncountable ? " *" : "");
}

unsigned xp_flows_uncounted(const struct xp_summary *s)
{
	unsigned n = 0;
	for (unsigned i = 0; s->flows && i < s->nflows; i++)
		n += s->flows[i].uncountable;
	return n;
}

struct json_object *xp_flows_json(const struct xp_summary *s)
{
	struct json_object *a = json_object_new_array();
	for (unsigned i = 0; i < s->nflows; i++) {
		const struct xp_flow_result *f = &s->flows[i];
		struct json_object *o = json_object_new_object();
		char name[64];
		flow_label(f, i, name, sizeof(name));
		add_s(o, "name", name);
		add_u(o, "frames_tx", f->tx_frames);
		add_u(o, "bytes_tx", f->tx_bytes);
		json_object_object_add(o, "counted", json_object_new_boolean(f->rx_known));
		/* Without stamps: counted by its headers, or not at all (sent where the server takes none). */
		if (f->keyed || f->uncountable)
			json_object_object_add(o, "stamps", json_object_new_boolean(false));
		if (f->rx_known) {
			add_u(o, "frames_rx", f->rx.recv);
			add_u(o, "frames_rx_all", f->rx.frames); /* duplicates included: what a wire counter sees */
			add_u(o, "bytes_rx", f->rx.bytes);
			/* No sequence, no send time: duplicates, order and latency are unknown, not 0. */
			if (!f->keyed) {
				add_u(o, "duplicates", f->rx.dup);
				add_u(o, "reordered", f->rx.reordered);
			}
			add_u(o, "loss", lost_of(f));
			add_d(o, "loss_percent", f->tx_frames ? 100.0 * (double)lost_of(f) / (double)f->tx_frames : 0);
			if (f->rx.lat_n && !f->keyed) {
				struct xp_lat_hist *h = malloc(sizeof(*h));
				struct json_object *l = json_object_new_object();
				add_u(l, "timed", f->rx.lat_n);
				add_d(l, "minimum_ns", (double)~f->rx.lat_nmin * XP_STAMP_TICK_NS);
				add_d(l, "maximum_ns", (double)f->rx.lat_max * XP_STAMP_TICK_NS);
				add_d(l, "average_ns", (double)f->rx.lat_sum * XP_STAMP_TICK_NS / (double)f->rx.lat_n);
				if (h) {
					xp_flow_acct_hist(&f->rx, h);
					add_d(l, "p50_ns", xp_lat_quantile_ns(h, 0.50));
					add_d(l, "p99_ns", xp_lat_quantile_ns(h, 0.99));
				}
				free(h);
				json_object_object_add(o, "latency", l);
			}
		}
		json_object_array_add(a, o);
	}
	return a;
}

/* A table's order: the flows with most loss first, ties by their number.
 * lost is signed: an interval's loss may be below 0 (flows_ival). */
struct rank {
	unsigned i;
	int64_t lost;
};

static int by_loss(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;
	if (x->lost != y->lost)
		return x->lost < y->lost ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* n flows ranked by lost(flows, i), and *top the rows --flow-top gives (10 if 0); NULL without memory. */
static struct rank *rank_flows(const void *flows, unsigned n, int64_t (*lost)(const void *, unsigned),
			       unsigned flow_top, unsigned *top)
{
	struct rank *rk = calloc(n, sizeof(*rk));
	if (!rk)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		rk[i] = (struct rank){ .i = i, .lost = lost(flows, i) };
	qsort(rk, n, sizeof(*rk), by_loss);
	*top = flow_top ? flow_top : 10;
	if (*top > n)
		*top = n;
	return rk;
}

static int64_t result_lost(const void *flows, unsigned i)
{
	return (int64_t)lost_of(&((const struct xp_flow_result *)flows)[i]);
}

/* One row of a table: the end's (indent 2) or an interval's (indent 6, narrower). */
static void row(struct xp_report *r, bool ival, const char *name, uint64_t tx, bool known, uint64_t rx, int64_t lost,
		double p50, double p99)
{
	char a[24], b[24], c[24], d[24], e[24], g[24];
	snprintf(a, sizeof(a), "%" PRIu64, tx);
	snprintf(b, sizeof(b), known ? "%" PRIu64 : "-", rx);
	snprintf(c, sizeof(c), known ? "%" PRId64 : "-", lost);
	if (known && tx)
		snprintf(d, sizeof(d), "%.3f%%", 100.0 * (double)lost / (double)tx);
	else
		snprintf(d, sizeof(d), "-");
	if (ival)
		fprintf(r->out, "      %-20.20s %10s %10s %8s %8s %9s %9s\n", name, a, b, c, d,
			xp_fmt_ns(p50, e, sizeof(e)), xp_fmt_ns(p99, g, sizeof(g)));
	else
		fprintf(r->out, "  %-24.24s %12s %12s %12s %9s %10s %10s\n", name, a, b, c, d,
			xp_fmt_ns(p50, e, sizeof(e)), xp_fmt_ns(p99, g, sizeof(g)));
}

void xp_report_flows_text(struct xp_report *r, const struct xp_summary *s)
{
	if (!s->nflows || !s->flows)
		return;
	unsigned top;
	struct rank *rk = rank_flows(s->flows, s->nflows, result_lost, s->flow_top, &top);
	struct xp_lat_hist *h = malloc(sizeof(*h));
	if (!rk || !h) {
		free(rk);
		free(h);
		return;
	}
	fprintf(r->out, "Flows: %u, most loss first (received: counted by the server, stamped, duplicates once)\n",
		s->nflows);
	fprintf(r->out, "  %-24s %12s %12s %12s %9s %10s %10s\n", "flow", "sent", "received", "lost", "loss", "p50",
		"p99");
	for (unsigned k = 0; k < top; k++) {
		const struct xp_flow_result *f = &s->flows[rk[k].i];
		char name[64];
		double p50 = NAN, p99 = NAN;
		row_label(f, rk[k].i, name, sizeof(name));
		if (f->rx_known && f->rx.lat_n && !f->keyed) {
			xp_flow_acct_hist(&f->rx, h);
			p50 = xp_lat_quantile_ns(h, 0.50);
			p99 = xp_lat_quantile_ns(h, 0.99);
		}
		row(r, false, name, f->tx_frames, f->rx_known, f->rx.recv, (int64_t)rk[k].lost, p50, p99);
	}
	if (top < s->nflows) {
		uint64_t tx = 0, rx = 0, lost = 0;
		bool known = true;
		for (unsigned k = top; k < s->nflows; k++) {
			const struct xp_flow_result *f = &s->flows[rk[k].i];
			tx += f->tx_frames;
			rx += f->rx.recv;
			lost += rk[k].lost;
			known = known && f->rx_known;
		}
		char name[64];
		unsigned rest = s->nflows - top;
		snprintf(name, sizeof(name), "(%u other%s)", rest, rest == 1 ? "" : "s");
		row(r, false, name, tx, known, rx, (int64_t)lost, NAN, NAN);
	}
	bool keyed = false, unc = false;
	for (unsigned i = 0; i < s->nflows; i++) {
		keyed |= s->flows[i].keyed;
		unc |= s->flows[i].uncountable;
	}
	if (keyed)
		fprintf(r->out, "  * without stamps: counted by the headers each declares unique, no latency, order or "
				"duplicates (a frame duplicated on the way counts twice)\n");
	if (unc)
		fprintf(r->out, "  * without stamps to an address the server does not own: not counted (-)\n");
	fflush(r->out);
	free(rk);
	free(h);
}

/* ---- per interval ---- */

static int64_t ival_lost(const struct xp_flow_ival *f)
{
	return f->rx_known ? (int64_t)f->tx_frames - (int64_t)f->rx.recv : 0;
}

struct json_object *xp_flows_ival_json(const struct xp_period *p)
{
	struct json_object *a = json_object_new_array_ext((int)p->nflows);
	struct xp_lat_hist *h = malloc(sizeof(*h));
	for (unsigned i = 0; i < p->nflows; i++) {
		const struct xp_flow_ival *f = &p->flows[i];
		struct json_object *o = json_object_new_object();
		char name[64];
		if (f->name[0])
			snprintf(name, sizeof(name), "%s", f->name);
		else
			snprintf(name, sizeof(name), "flow %u", i + 1);
		add_s(o, "name", name);
		add_u(o, "frames_tx", f->tx_frames);
		add_u(o, "bytes_tx", f->tx_bytes);
		json_object_object_add(o, "counted", json_object_new_boolean(f->rx_known));
		if (f->keyed)
			json_object_object_add(o, "stamps", json_object_new_boolean(false));
		if (f->rx_known) {
			add_u(o, "frames_rx", f->rx.recv);
			add_u(o, "frames_rx_all", f->rx.frames);
			add_u(o, "bytes_rx", f->rx.bytes);
			if (!f->keyed) {
				add_u(o, "duplicates", f->rx.dup);
				add_u(o, "reordered", f->rx.reordered);
			}
			json_object_object_add(o, "loss", json_object_new_int64(ival_lost(f)));
			add_d(o, "loss_percent", f->tx_frames ? 100.0 * (double)ival_lost(f) / (double)f->tx_frames : 0);
			if (f->rx.lat_n && !f->keyed) {
				struct json_object *l = json_object_new_object();
				add_u(l, "timed", f->rx.lat_n);
				add_d(l, "average_ns", (double)f->rx.lat_sum * XP_STAMP_TICK_NS / (double)f->rx.lat_n);
				if (h) {
					xp_flow_acct_hist(&f->rx, h);
					add_d(l, "p50_ns", xp_lat_quantile_ns(h, 0.50));
					add_d(l, "p99_ns", xp_lat_quantile_ns(h, 0.99));
				}
				json_object_object_add(o, "latency", l);
			}
		}
		json_object_array_add(a, o);
	}
	free(h);
	return a;
}

static int64_t ival_lost_at(const void *flows, unsigned i)
{
	return ival_lost(&((const struct xp_flow_ival *)flows)[i]);
}

void xp_report_flows_ival_text(struct xp_report *r, const struct xp_period *p)
{
	if (!p->nflows || !p->flows)
		return;
	unsigned top;
	struct rank *rk = rank_flows(p->flows, p->nflows, ival_lost_at, p->flow_top, &top);
	struct xp_lat_hist *h = malloc(sizeof(*h));
	if (!rk || !h) {
		free(rk);
		free(h);
		return;
	}
	fprintf(r->out, "      %-20s %10s %10s %8s %8s %9s %9s\n", "flow (most loss)", "sent", "received", "lost", "loss",
		"p50", "p99");
	for (unsigned k = 0; k < top; k++) {
		const struct xp_flow_ival *f = &p->flows[rk[k].i];
		char name[64];
		double p50 = NAN, p99 = NAN;
		if (f->name[0])
			snprintf(name, sizeof(name), "%s", f->name);
		else
			snprintf(name, sizeof(name), "flow %u", rk[k].i + 1);
		if (f->rx_known && f->rx.lat_n) {
			xp_flow_acct_hist(&f->rx, h);
			p50 = xp_lat_quantile_ns(h, 0.50);
			p99 = xp_lat_quantile_ns(h, 0.99);
		}
		row(r, true, name, f->tx_frames, f->rx_known, f->rx.recv, rk[k].lost, p50, p99);
	}
	if (top < p->nflows) {
		uint64_t tx = 0, rx = 0;
		int64_t lost = 0;
		bool known = true;
		for (unsigned k = top; k < p->nflows; k++) {
			const struct xp_flow_ival *f = &p->flows[rk[k].i];
			tx += f->tx_frames;
			rx += f->rx.recv;
			lost += rk[k].lost;
			known = known && f->rx_known;
		}
		char name[64];
		unsigned rest = p->nflows - top;
		snprintf(name, sizeof(name), "(%u other%s)", rest, rest == 1 ? "" : "s");
		row(r, true, name, tx, known, rx, lost, NAN, NAN);
	}
	fflush(r->out);
	free(rk);
	free(h);
}
