/*
 * The RFC 2544 suite with a flow file as its traffic (--rfc2544 --flows
 * FILE, issue 26): one pass, the flows' own sizes (the suite's --sizes does
 * not apply), every trial's rate the flows' aggregate with each flow at its
 * share (client/trial.c), so the throughput search runs on the aggregate.
 * Here: the pass's size record, each trial's per-flow figures (from the
 * server's per-flow counts the trial brings back), each flow's latency over
 * the latency trials, and their table and -J objects.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rfc2544/rfc2544.h"

int xp_rfc_flows_setup(const struct xp_spec *s, struct xp_rfc_size *z)
{
	unsigned n = s->ntraffic;
	double *share = calloc(n, sizeof(*share)), *mean = calloc(n, sizeof(*mean));
	z->flow = calloc(n, sizeof(*z->flow));
	if (!share || !mean || !z->flow) {
		free(share);
		free(mean);
		free(z->flow);
		z->flow = NULL;
		return -1;
	}
	z->nflows = n;
	z->mean = xp_trial_flow_shares(s, share, mean);
	z->len = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct xp_stream *st = &s->traffic[i];
		struct xp_rfc_flow *f = &z->flow[i];
		if (st->name[0])
			snprintf(f->name, sizeof(f->name), "%s", st->name);
		else
			snprintf(f->name, sizeof(f->name), "flow %u", i + 1);
		f->share = share[i];
		f->mean = mean[i];
		xp_lat_init(&f->lat_hist);
		/* frame_size is the flow's largest (of its mix or size pattern too: the flow file sets it so). */
		if (st->frame_size > z->len)
			z->len = st->frame_size;
	}
	snprintf(z->label, sizeof(z->label), "flows");
	free(share);
	free(mean);
	return 0;
}

static struct xp_rfc_latency lat_of(const struct xp_lat_hist *h)
{
	if (!h->n)
		return (struct xp_rfc_latency){ 0 };
	return (struct xp_rfc_latency){ .known = true, .timed = h->n,
					.min_us = xp_lat_min_ns(h) / 1e3,
					.max_us = xp_lat_max_ns(h) / 1e3,
					.mean_us = xp_lat_mean_ns(h) / 1e3,
					.p50_us = xp_lat_quantile_ns(h, 0.5) / 1e3,
					.p99_us = xp_lat_quantile_ns(h, 0.99) / 1e3,
					.p999_us = xp_lat_quantile_ns(h, 0.999) / 1e3 };
}

void xp_rfc_flows_trial(struct xp_rfc_size *z, struct xp_rfc_trial_rec *rec, const struct xp_trial_out *out)
{
	if (!z->flow || !out->flows || out->nflows != z->nflows)
		return;
	rec->flows = calloc(z->nflows, sizeof(*rec->flows));
	struct xp_lat_hist *h = malloc(sizeof(*h));
	if (!rec->flows || !h) {
		free(rec->flows);
		rec->flows = NULL;
		free(h);
		return;
	}
	rec->nflows = z->nflows;
	bool latency_trial = !strcmp(rec->test, "latency");
	for (unsigned i = 0; i < z->nflows; i++) {
		const struct xp_flow_result *r = &out->flows[i];
		struct xp_rfc_flow_fig *f = &rec->flows[i];
		f->sent = r->tx_frames;
		f->counted = r->rx_known;
		f->received = r->rx_known ? r->rx.recv : 0;
		/* Timed one way only when the trial's own figures are (a shared clock, no negative reading). */
		if (!out->lat_known || !r->rx_known || !r->rx.lat_n || r->rx.clock_neg)
			continue;
		xp_flow_acct_hist(&r->rx, h);
		f->lat = lat_of(h);
		if (latency_trial) {
			xp_lat_add(&z->flow[i].lat_hist, h);
			z->flow[i].lat_n++;
		}
	}
	free(h);
}

double xp_rfc_flow_loss_pct(const struct xp_rfc_flow_fig *f)
{
	return f->sent && f->received < f->sent ? 100.0 * (double)(f->sent - f->received) / (double)f->sent : 0;
}

/* The throughput trial just above the NDR: the lowest rate that failed (a rate above the NDR that passed on a
 * repeat would have raised the NDR), so each flow's loss where the aggregate first lost. NULL: none failed. */
static const struct xp_rfc_trial_rec *above_ndr(const struct xp_rfc_run *r, const struct xp_rfc_size *z)
{
	const struct xp_rfc_trial_rec *best = NULL;
	for (unsigned i = 0; i < r->ntrials; i++) {
		const struct xp_rfc_trial_rec *t = &r->trials[i];
		if (t->z != z || !t->flows || strcmp(t->test, "throughput") || t->v == XP_RFC_PASS ||
		    t->t.target_pps <= z->ndr_pps)
			continue;
		if (!best || t->t.target_pps < best->t.target_pps)
			best = t;
	}
	return best;
}

/* The frame loss test's first step: 100 % of the top. */
static const struct xp_rfc_trial_rec *loss_at_top(const struct xp_rfc_run *r, const struct xp_rfc_size *z)
{
	for (unsigned i = 0; i < r->ntrials; i++)
		if (r->trials[i].z == z && r->trials[i].flows && !strcmp(r->trials[i].test, "loss"))
			return &r->trials[i];
	return NULL;
}

static const char *loss_cell(const struct xp_rfc_trial_rec *t, unsigned i, char *buf, size_t len)
{
	if (!t || !t->flows[i].counted)
		snprintf(buf, len, "%s", "-");
	else
		snprintf(buf, len, "%.4f", xp_rfc_flow_loss_pct(&t->flows[i]));
	return buf;
}

void xp_rfc_flows_text(FILE *f, const struct xp_rfc_run *r)
{
	for (unsigned s = 0; s < r->nsizes; s++) {
		const struct xp_rfc_size *z = &r->sizes[s];
		if (!z->flow)
			continue;
		const struct xp_rfc_trial_rec *up = z->tp_run ? above_ndr(r, z) : NULL, *top = loss_at_top(r, z);
		fprintf(f, "\nFlows: each at its share of every trial's rate (the flow file's rates scaled by one factor); "
			"loss %% of the frames sent of it\n");
		if (z->tp_run && up)
			fprintf(f, "  loss above the NDR: in the throughput trial at %.0f fps, the lowest rate that failed\n",
				up->t.target_pps);
		else if (z->tp_run)
			fprintf(f, "  loss above the NDR: none (no throughput rate failed)\n");
		if (top)
			fprintf(f, "  loss at the top: the frame loss test's 100 %% step, %.0f fps\n", top->t.target_pps);
		if (z->lat_run)
			fprintf(f, "  latency: every frame of the flow the %u latency trials timed, one way\n",
				r->o->rfc.lat_trials);
		fprintf(f, "%-24s %7s %8s %12s %12s %12s %9s %9s %9s\n", "flow", "share %", "bytes", "NDR fps",
			"loss > NDR", "loss at top", "p50 us", "p99 us", "max us");
		for (unsigned i = 0; i < z->nflows; i++) {
			const struct xp_rfc_flow *fl = &z->flow[i];
			char a[32], b[32], ndr[32];
			if (z->tp_run)
				snprintf(ndr, sizeof(ndr), "%.0f", z->ndr_pps * fl->share);
			else
				snprintf(ndr, sizeof(ndr), "-");
			fprintf(f, "%-24.24s %7.2f %8.1f %12s %12s %12s", fl->name, 100 * fl->share, fl->mean, ndr,
				loss_cell(up, i, a, sizeof(a)), loss_cell(top, i, b, sizeof(b)));
			struct xp_rfc_latency l = lat_of(&fl->lat_hist);
			if (l.known)
				fprintf(f, " %9.1f %9.1f %9.1f\n", l.p50_us, l.p99_us, l.max_us);
			else
				fprintf(f, " %9s %9s %9s\n", "-", "-", "-");
		}
	}
}

static struct json_object *lat_json(const struct xp_rfc_latency *l)
{
	struct json_object *o = json_object_new_object();
	xp_rfc_lat_json(o, l);
	return o;
}

static struct json_object *fig_json(const char *name, const struct xp_rfc_flow_fig *f)
{
	struct json_object *o = json_object_new_object();
	if (name)
		json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "sent", json_object_new_int64((int64_t)f->sent));
	json_object_object_add(o, "counted", json_object_new_boolean(f->counted));
	if (f->counted) {
		json_object_object_add(o, "received", json_object_new_int64((int64_t)f->received));
		xp_rfc_add_d(o, "loss_percent", xp_rfc_flow_loss_pct(f));
	}
	if (f->lat.known)
		json_object_object_add(o, "latency", lat_json(&f->lat));
	return o;
}

/* A trial's figures of flow i (NULL when the trial has none), with the trial's rate. */
static struct json_object *at_trial(const struct xp_rfc_trial_rec *t, unsigned i)
{
	if (!t)
		return NULL;
	struct json_object *o = fig_json(NULL, &t->flows[i]);
	xp_rfc_add_d(o, "target_frames_per_second", t->t.target_pps);
	return o;
}

struct json_object *xp_rfc_flows_size_json(const struct xp_rfc_run *r, const struct xp_rfc_size *z)
{
	if (!z->flow)
		return NULL;
	const struct xp_rfc_trial_rec *up = z->tp_run ? above_ndr(r, z) : NULL, *top = loss_at_top(r, z);
	struct json_object *a = json_object_new_array();
	for (unsigned i = 0; i < z->nflows; i++) {
		const struct xp_rfc_flow *fl = &z->flow[i];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(fl->name));
		xp_rfc_add_d(o, "share", fl->share);
		xp_rfc_add_d(o, "mean_frame_bytes", fl->mean);
		if (z->tp_run)
			xp_rfc_add_d(o, "ndr_frames_per_second", z->ndr_pps * fl->share);
		json_object_object_add(o, "above_ndr", at_trial(up, i));   /* null: no throughput rate failed */
		json_object_object_add(o, "loss_at_top", at_trial(top, i)); /* null: no frame loss test */
		if (z->lat_run) {
			struct xp_rfc_latency l = lat_of(&fl->lat_hist);
			struct json_object *lj = l.known ? lat_json(&l) : json_object_new_object();
			json_object_object_add(lj, "measured", json_object_new_boolean(l.known));
			json_object_object_add(lj, "trials", json_object_new_int((int)fl->lat_n));
			json_object_object_add(o, "latency", lj);
		}
		json_object_array_add(a, o);
	}
	return a;
}

struct json_object *xp_rfc_flows_trial_json(const struct xp_rfc_trial_rec *t)
{
	if (!t->flows || !t->z || !t->z->flow)
		return NULL;
	struct json_object *a = json_object_new_array();
	for (unsigned i = 0; i < t->nflows; i++)
		json_object_array_add(a, fig_json(t->z->flow[i].name, &t->flows[i]));
	return a;
}

void xp_rfc_flows_free(struct xp_rfc_run *r)
{
	for (unsigned i = 0; r->trials && i < r->ntrials; i++) {
		free(r->trials[i].flows);
		r->trials[i].flows = NULL;
	}
	for (unsigned i = 0; i < r->nsizes; i++) {
		free(r->sizes[i].flow);
		r->sizes[i].flow = NULL;
	}
}
