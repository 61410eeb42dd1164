/*
 * POST /monitor/metrics (otg.h): a Metrics.Request of choice "flow" or
 * "port" answered with a Metrics.Response's flow_metrics or port_metrics
 * (models v1.61.0, result/{metrics,flow,port}.yaml: the member names
 * below are the model's). A flow's figures once its test ended are the
 * client's per-flow results: the engine's sent count and the receiving
 * agent's count of the flow by its stamps (duplicates not counted twice);
 * while the test runs, the memory sink's intervals (a test's sums: a flow's
 * own only when its test has one flow). A port's are its tests' totals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "otg/ctl_internal.h"
#include "bpf/lib/stamp.h"

static void add_u(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

static void add_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static void add_s(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static const struct otg_run *run_of(const struct xp_otg *c, unsigned g)
{
	return c->runs ? &c->runs[g] : NULL;
}

/* One direction's counts and rates ("tx" or "rx"): frames_tx, bytes_tx, frames_tx_rate (and bytes_tx_rate
 * where the model has it, Bps not NULL). Only a known direction is given: an unknown one is left out, not 0. */
static void add_dir(struct json_object *o, const char *dir, uint64_t frames, uint64_t bytes, double fps,
		    const double *Bps)
{
	char k[32];
	snprintf(k, sizeof(k), "frames_%s", dir);
	add_u(o, k, frames);
	snprintf(k, sizeof(k), "bytes_%s", dir);
	add_u(o, k, bytes);
	snprintf(k, sizeof(k), "frames_%s_rate", dir);
	add_d(o, k, fps);
	if (Bps) {
		snprintf(k, sizeof(k), "bytes_%s_rate", dir);
		add_d(o, k, *Bps);
	}
}

static bool sending(const struct xp_otg *c, const struct otg_run *r)
{
	return r && c->running && r->started && !r->ended;
}

static struct json_object *flow_metric(const struct xp_otg *c, const struct otg_flow *fl)
{
	const struct otg_run *r = run_of(c, fl->group);
	const struct otg_group *g = &c->plan.groups[fl->group];
	struct json_object *o = json_object_new_object();
	add_s(o, "name", fl->name);
	add_s(o, "port_tx", c->plan.ports[fl->tx].name);
	add_s(o, "port_rx", c->plan.ports[fl->rx].name);
	add_s(o, "transmit", sending(c, r) ? "started" : "stopped");
	bool one = g->spec->ntraffic == 1;
	uint64_t ftx = 0, btx = 0, frx = 0, brx = 0;
	double rtx = 0, rrx = 0;
	bool tx_known = !r, rx_known = !r; /* never started: nothing sent, nothing received */
	const struct xp_flow_result *f = r && r->flows && fl->slot < r->nflows ? &r->flows[fl->slot] : NULL;
	if (f && r->rx_lost && one && r->have_total) {
		/* The agent went away: both sides up to its last sample (what was sent after it is not loss). */
		ftx = r->total.tx_pkts, btx = r->total.tx_bytes, frx = r->total.rx.pkts, brx = r->total.rx.bytes;
		tx_known = rx_known = true;
	} else if (f) {
		ftx = f->tx_frames, btx = f->tx_bytes, tx_known = true;
		if (f->rx_known)
			frx = f->rx.recv, brx = f->rx.bytes, rx_known = true;
		else if (one && r->have_total) /* no stamps: the test's own count is its one flow's */
			frx = r->total.rx.pkts, brx = r->total.rx.bytes, rx_known = true;
	} else if (r && one && r->have_total) {
		ftx = r->total.tx_pkts, btx = r->total.tx_bytes, frx = r->total.rx.pkts, brx = r->total.rx.bytes;
		tx_known = rx_known = true;
	} else if (r && one && !g->remote) { /* an agent reports at its end only */
		ftx = r->tx_frames, btx = r->tx_bytes, frx = r->rx_frames, brx = r->rx_bytes;
		rtx = r->tx_fps, rrx = r->rx_fps;
		tx_known = rx_known = true;
	}
	/* A figure not known (a test of several flows, while it runs) is left out, never given as 0. */
	if (tx_known)
		add_dir(o, "tx", ftx, btx, rtx, NULL);
	if (rx_known)
		add_dir(o, "rx", frx, brx, rrx, NULL);
	if (tx_known && rx_known)
		add_d(o, "loss", ftx && ftx > frx ? 100.0 * (double)(ftx - frx) / (double)ftx : 0);
	if (f && f->rx_known && f->rx.lat_n) {
		struct json_object *l = json_object_new_object();
		add_d(l, "minimum_ns", (double)~f->rx.lat_nmin * XP_STAMP_TICK_NS);
		add_d(l, "maximum_ns", (double)f->rx.lat_max * XP_STAMP_TICK_NS);
		add_d(l, "average_ns", (double)f->rx.lat_sum * XP_STAMP_TICK_NS / (double)f->rx.lat_n);
		json_object_object_add(o, "latency", l);
	}
	return o;
}

static struct json_object *port_metric(const struct xp_otg *c, unsigned i)
{
	const struct otg_port *pt = &c->plan.ports[i];
	struct json_object *o = json_object_new_object();
	uint64_t ftx = 0, btx = 0, frx = 0, brx = 0;
	double rftx = 0, rfrx = 0, rbtx = 0, rbrx = 0;
	bool started = false, tx_known = true, rx_known = true;
	const struct otg_run *lost = NULL, *failed = NULL;
	add_s(o, "name", pt->name);
	for (unsigned g = 0; g < c->plan.ngroups; g++) {
		const struct otg_run *r = run_of(c, g);
		const struct otg_group *gr = &c->plan.groups[g];
		if (!r || (gr->tx != i && gr->rx != i))
			continue;
		uint64_t a = r->have_total ? r->total.tx_pkts : r->tx_frames;
		uint64_t b = r->have_total ? r->total.tx_bytes : r->tx_bytes;
		uint64_t x = r->have_total ? r->total.rx.pkts : r->rx_frames;
		uint64_t y = r->have_total ? r->total.rx.bytes : r->rx_bytes;
		/* An agent's test reports at its end only: while it runs, or if it ended without its figures (the
		 * agent went away), its sums are not known (left out, not 0). */
		bool unknown = gr->remote && !r->have_total && r->started;
		if (gr->tx == i)
			tx_known &= !unknown;
		if (gr->rx == i)
			rx_known &= !unknown;
		if (gr->tx == i) {
			ftx += a, btx += b, rftx += r->tx_fps, rbtx += r->tx_Bps;
			started |= sending(c, r);
		}
		if (gr->rx == i)
			frx += x, brx += y, rfrx += r->rx_fps, rbrx += r->rx_Bps;
		if (gr->rx == i && r->rx_lost)
			lost = r;
		if (gr->tx == i && r->failed && r->ended && !r->rx_lost && !failed)
			failed = r;
	}
	/* Port.Metric's location is "the configured port location along with any custom connection state
	 * message": an agent that went away mid-test says so there, and its link is down. */
	if (lost) {
		char loc[sizeof(pt->location) + sizeof(lost->error) + 64];
		snprintf(loc, sizeof(loc), "%s (agent gone %.1f s into the test, its figures end there: %s)",
			 pt->location, lost->lost_at, lost->error[0] ? lost->error : "the control connection closed");
		add_s(o, "location", loc);
		add_s(o, "link", "down");
	} else if (failed) {
		/* A sending port whose test failed mid-way (its agent gone, its test's error): said the same way. */
		char loc[sizeof(pt->location) + sizeof(failed->error) + 64];
		snprintf(loc, sizeof(loc), "%s (its test failed: %s)", pt->location, failed->error);
		add_s(o, "location", loc);
		add_s(o, "link", "down");
	} else {
		add_s(o, "location", pt->location);
		add_s(o, "link", "up");
	}
	if (tx_known)
		add_dir(o, "tx", ftx, btx, rftx, &rbtx);
	if (rx_known)
		add_dir(o, "rx", frx, brx, rfrx, &rbrx);
	add_s(o, "transmit", started ? "started" : "stopped");
	return o;
}

/* names (metric_names / column_names): each one we give (known), then o keeps only those and "name". */
static int check_columns(struct json_object *names, const char *path, const char *const *known, struct xp_otg_err *err)
{
	if (!names)
		return 0;
	if (!json_object_is_type(names, json_type_array))
		return otg_fail(err, 400, "%s: not an array", path);
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(names, i));
		const char *const *k;
		for (k = known; *k && strcmp(*k, s ? s : ""); k++)
			;
		if (!*k)
			return otg_fail(err, 400, "%s[%zu]: %s is not given by this controller", path, i, s ? s : "");
	}
	return 0;
}

static void keep_columns(struct json_object *o, struct json_object *names)
{
	if (!names || !json_object_array_length(names))
		return;
	const char *drop[32];
	unsigned n = 0;
	json_object_object_foreach(o, key, val) {
		(void)val;
		bool keep = !strcmp(key, "name") || !strcmp(key, "port_tx") || !strcmp(key, "port_rx");
		for (size_t i = 0; !keep && i < json_object_array_length(names); i++)
			keep = !strcmp(key, json_object_get_string(json_object_array_get_idx(names, i)));
		if (!keep && n < 32)
			drop[n++] = key;
	}
	for (unsigned i = 0; i < n; i++)
		json_object_object_del(o, drop[i]);
}

/* The request's names (flow_names / port_names): each configured (index into *idx), or all. */
static int pick(struct json_object *names, const char *path, unsigned count, const char *(*name_at)(const struct xp_otg *,
		unsigned), const struct xp_otg *c, unsigned *idx, unsigned *n, struct xp_otg_err *err)
{
	*n = 0;
	if (names && !json_object_is_type(names, json_type_array))
		return otg_fail(err, 400, "%s: not an array", path);
	size_t want = names ? json_object_array_length(names) : 0;
	if (!want) {
		for (unsigned i = 0; i < count; i++)
			idx[(*n)++] = i;
		return 0;
	}
	for (size_t i = 0; i < want; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(names, i));
		unsigned k;
		for (k = 0; k < count && strcmp(name_at(c, k), s ? s : ""); k++)
			;
		if (k == count)
			return otg_fail(err, 400, "%s[%zu]: no %s %s", path, i, strstr(path, "flow") ? "flow" : "port",
					s ? s : "");
		idx[(*n)++] = k;
	}
	return 0;
}

static const char *flow_name_at(const struct xp_otg *c, unsigned i)
{
	return c->plan.flows[i].name;
}

static const char *port_name_at(const struct xp_otg *c, unsigned i)
{
	return c->plan.ports[i].name;
}

struct json_object *otg_metrics(struct xp_otg *c, struct json_object *req, struct xp_otg_err *err)
{
	static const char *const flow_cols[] = { "transmit", "frames_tx", "frames_rx", "bytes_tx", "bytes_rx",
						 "frames_tx_rate", "frames_rx_rate", NULL };
	static const char *const port_cols[] = { "transmit", "location", "link", "frames_tx", "frames_rx", "bytes_tx",
						 "bytes_rx", "frames_tx_rate", "frames_rx_rate", "bytes_tx_rate",
						 "bytes_rx_rate", NULL };
	struct json_object *v, *sub = NULL;
	const char *choice = "port"; /* Metrics.Request's default */
	if (!req || !json_object_is_type(req, json_type_object)) {
		otg_fail(err, 400, "metrics request: not a JSON object");
		return NULL;
	}
	json_object_object_foreach(req, key, val) {
		(void)val;
		if (strcmp(key, "choice") && strcmp(key, "flow") && strcmp(key, "port")) {
			otg_fail(err, 400, "%s: not supported (flow and port metrics)", key);
			return NULL;
		}
	}
	if (json_object_object_get_ex(req, "choice", &v))
		choice = json_object_get_string(v);
	bool flow = !strcmp(choice, "flow");
	if (!flow && strcmp(choice, "port")) {
		otg_fail(err, 400, "choice: %s metrics are not supported (flow and port)", choice);
		return NULL;
	}
	if (json_object_object_get_ex(req, flow ? "flow" : "port", &sub) && !json_object_is_type(sub, json_type_object)) {
		otg_fail(err, 400, "%s: not an object", choice);
		return NULL;
	}
	struct json_object *names = NULL, *cols = NULL;
	if (sub) {
		json_object_object_foreach(sub, key, val) {
			(void)val;
			if (flow ? strcmp(key, "flow_names") && strcmp(key, "metric_names")
				 : strcmp(key, "port_names") && strcmp(key, "column_names")) {
				otg_fail(err, 400, "%s.%s: not supported", choice, key);
				return NULL;
			}
		}
		json_object_object_get_ex(sub, flow ? "flow_names" : "port_names", &names);
		json_object_object_get_ex(sub, flow ? "metric_names" : "column_names", &cols);
	}
	char path[32];
	snprintf(path, sizeof(path), flow ? "flow.metric_names" : "port.column_names");
	if (check_columns(cols, path, flow ? flow_cols : port_cols, err))
		return NULL;
	unsigned count = flow ? c->plan.nflows : c->plan.nports, n;
	unsigned *idx = malloc((count + 1) * sizeof(*idx) + (names ? json_object_array_length(names) : 0) * sizeof(*idx));
	if (!idx) {
		otg_fail(err, 500, "out of memory");
		return NULL;
	}
	snprintf(path, sizeof(path), flow ? "flow.flow_names" : "port.port_names");
	if (pick(names, path, count, flow ? flow_name_at : port_name_at, c, idx, &n, err)) {
		free(idx);
		return NULL;
	}
	struct json_object *resp = json_object_new_object(), *a = json_object_new_array();
	add_s(resp, flow ? "choice" : "choice", flow ? "flow_metrics" : "port_metrics");
	for (unsigned i = 0; i < n; i++) {
		struct json_object *o = flow ? flow_metric(c, &c->plan.flows[idx[i]]) : port_metric(c, idx[i]);
		keep_columns(o, cols);
		json_object_array_add(a, o);
	}
	json_object_object_add(resp, flow ? "flow_metrics" : "port_metrics", a);
	otg_metrics_ext(c, resp); /* xdpperf's extension (agent.c): a timed start's skew, merged latencies */
	free(idx);
	return resp;
}
