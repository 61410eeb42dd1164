/*
 * One trial for the RFC 2544 suite (client.h, xp_client_trial): a normal
 * test (xp_client_test: its own control session, so the server counts
 * it by its own test id from zero, and its settle for frames in flight) at
 * the trial's rate, size and length, with its report thrown away, then the
 * RFC's wait before the next trial. Only the figures a trial's verdict
 * needs come back, and its latency (from the stamps in every frame).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "client/session.h"
#include "bpf/lib/stamp.h"
#include "engine/flow_table.h"
#include "util/time.h"

/* A stream's mean frame size, as the client reckons it for its rate (flows.c, check_sizes): over its sizes'
 * period (at most the engine's table; a sample of a longer one is enough for a mean). */
static double stream_mean(const struct xp_stream *st)
{
	struct xp_engine_flow *f = calloc(1, sizeof(*f));
	if (!f)
		return st->frame_size;
	f->frame_size = st->frame_size;
	f->mix = st->mix;
	f->size_pat_set = st->size_pat_set;
	f->size_pat = st->size_pat;
	uint64_t period = f->size_pat_set ? xp_pattern_period(&f->size_pat) : f->mix.n ? f->mix.plen : 1;
	if (period > XP_FLOW_TABLE_MAX)
		period = XP_FLOW_TABLE_MAX;
	double sum = 0;
	for (uint64_t n = 0; n < period; n++)
		sum += xp_flow_size_at(f, n);
	free(f);
	return sum / (double)period;
}

double xp_trial_flow_shares(const struct xp_spec *s, double *shares, double *means)
{
	double total = 0, mean = 0;
	unsigned n = s->ntraffic;
	bool paced = false;
	for (unsigned i = 0; i < n; i++) {
		const struct xp_stream *st = &s->traffic[i];
		double m = stream_mean(st);
		if (means)
			means[i] = m;
		/* Its rate in frames/s at its mean size, as the client paces it (client/flows.c). */
		shares[i] = st->rate.unit != XP_RATE_NONE ? xp_rate_to_pps(&st->rate, m) : 0;
		paced |= shares[i] > 0;
		total += shares[i];
	}
	for (unsigned i = 0; i < n; i++) {
		/* Flows without rates share a thread's frames equally (engine/flow_sched.h). */
		shares[i] = paced && total > 0 ? shares[i] / total : 1.0 / n;
		mean += shares[i] * (means ? means[i] : stream_mean(&s->traffic[i]));
	}
	return mean;
}

void xp_trial_flow_rates(struct xp_spec *s, double pps)
{
	double *share = calloc(s->ntraffic ? s->ntraffic : 1, sizeof(*share));
	if (!share)
		return;
	xp_trial_flow_shares(s, share, NULL);
	for (unsigned i = 0; i < s->ntraffic; i++) {
		struct xp_stream *st = &s->traffic[i];
		st->rate = pps > 0 ? (struct xp_rate){ XP_RATE_PPS, pps * share[i] } : (struct xp_rate){ XP_RATE_NONE, 0 };
		st->rate_pct = 0; /* a share of the trial's load now, not of the line rate */
	}
	free(share);
}

/*
 * The trial's latency from its stamps: the server timed every frame into
 * one histogram (meas/latency.h). Only one-way times on a clock both ends
 * share count; otherwise the reason is kept for the report.
 */
static void trial_latency(const struct xp_meas_figs *m, struct xp_trial_out *out)
{
	const struct xp_lat_hist *h = &m->lat;
	const char *why = !m->valid ? "the frames carry no stamp (frame size, protocol or engine)"
			  : m->unknown ? "the server's bins were reused before they were read"
			  : m->rtt ? "round trip, not one way"
			  : !m->oneway ? (m->lat_why ? m->lat_why : "the ends do not share a clock")
			  : h->clock_neg ? "frames arrived before their stamped send time (the clocks disagree)"
			  : !h->n ? "no frame timed" : NULL;
	if (why) {
		snprintf(out->lat_why, sizeof(out->lat_why), "%s", why);
		return;
	}
	out->lat_known = true;
	out->lat_timed = h->n;
	out->lat_hist = *h;
	out->lat_min_us = (double)h->min * XP_STAMP_TICK_NS / 1e3;
	out->lat_max_us = (double)h->max * XP_STAMP_TICK_NS / 1e3;
	out->lat_mean_us = xp_lat_mean_ns(h) / 1e3;
	out->lat_p50_us = xp_lat_quantile_ns(h, 0.5) / 1e3;
	out->lat_p99_us = xp_lat_quantile_ns(h, 0.99) / 1e3;
	out->lat_p999_us = xp_lat_quantile_ns(h, 0.999) / 1e3;
}

int xp_client_trial(const struct xp_spec *base, const struct xp_run_opts *base_ro, const struct xp_trial_req *req,
		    struct xp_trial_out *out)
{
	/* The base test at the trial's rate, size and length. */
	struct xp_spec *o = xp_spec_dup(base); /* megabytes: not on the stack */
	struct xp_run_opts ro = base_ro ? *base_ro : (struct xp_run_opts){ 0 };
	memset(out, 0, sizeof(*out));
	if (!o) {
		snprintf(out->error, sizeof(out->error), "out of memory");
		return out->rc = 1;
	}
	ro.quiet = true; /* the error comes back in out->error: the suite's one line says it */
	o->require_rate = false;
	o->max_loss = -1;
	o->duration = req->seconds;
	o->interval = req->seconds;
	bool flows = xp_client_has_flows(o);
	if (!flows) {
		o->traffic[0].frame_size = req->frame_len;
		o->traffic[0].frame_size_set = true;
		if (req->mix)
			o->traffic[0].mix = *req->mix; /* frame_len is its largest */
		else
			o->traffic[0].mix.n = 0;
	}
	o->burst = req->burst;
	/* A constant load: a device with a small burst allowance (a policer,
	 * nftables' limit with its burst) loses a 20-ms catch-up burst that it
	 * would carry as a steady rate, so a stall is made up at most 1 % above
	 * the rate (at most 5 ms of frames back to back: engine/pacer.h); what
	 * is not made up by the end shows as an offered load below the target. */
	o->pace_catchup_excess = XP_TRIAL_CATCHUP_EXCESS;
	/* With flows (each its own size), the trial's rate is their aggregate: each flow keeps its share of it. */
	if (flows)
		xp_trial_flow_rates(o, req->pps);
	else
		o->traffic[0].rate = req->pps > 0 ? (struct xp_rate){ XP_RATE_PPS, req->pps }
						  : (struct xp_rate){ XP_RATE_NONE, 0 };

	/* Reported into memory: the suite prints its own lines; the summary and the error come back here. */
	struct xp_report rep;
	struct xp_summary sum;
	memset(&sum, 0, sizeof(sum));
	xp_report_init(&rep, XP_REPORT_MEMORY, NULL);
	out->rc = xp_client_test(o, &ro, &rep, &sum);
	/* Each flow's figures, kept by the memory sink at the test's end: the caller's now. */
	out->flows = rep.mem.flows;
	out->nflows = rep.mem.nflows;
	rep.mem.flows = NULL;
	rep.mem.nflows = 0;
	xp_report_free(&rep);
	free(o);
	/* Exit statuses 3 and 4 are thresholds, not failures; they are off here anyway. */
	if (out->rc || sum.error) {
		snprintf(out->error, sizeof(out->error), "%.*s", (int)sizeof(out->error) - 1,
			 sum.error ? sum.error : rep.mem.error[0] ? rep.mem.error : "the test failed");
		if (!out->rc)
			out->rc = 1;
		return out->rc;
	}
	const struct xp_period *p = &sum.total;
	out->sent = p->tx_pkts;
	out->received = p->rx.pkts;
	out->seconds = p->t1 - p->t0;
	out->target_pps = sum.pace.target_pps;
	out->offered_pps = sum.pace.target_pps > 0 ? sum.pace.reached_pps
			   : out->seconds > 0 ? (double)p->tx_pkts / out->seconds : 0;
	out->short_of_target = sum.pace.short_of_target;
	out->held_back_by = sum.pace.short_of_target ? sum.pace.held_back_by : NULL;
	snprintf(out->why, sizeof(out->why), "%s", sum.pace.short_of_target ? sum.pace.why : "");
	out->kernel_sleeps = sum.pace.kernel_sleep_pct >= 1.0;
	out->max_catchup = sum.pace.catchups ? sum.pace.max_grant : 0;
	trial_latency(&p->meas, out);
	if (req->settle_s > 0)
		xp_sleep(req->settle_s);
	return 0;
}
