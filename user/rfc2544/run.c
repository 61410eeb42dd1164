/*
 * The RFC 2544 suite's driver (rfc2544.h): per frame size, the sender's
 * maximum (or --line-rate's), then throughput, latency, frame loss rate and
 * back-to-back as --tests asks, every trial through trial_run() below and
 * judged by search/search.c. Before the first trial it says how many trials and
 * about how long; after each, one progress line on stderr.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client/client.h"
#include "rfc2544/rfc2544.h"
#include "util/process.h"
#include "util/time.h"

/* RFC 2544 section 12, and RFC 5180 section 5 for IPv6 (64 is too small
 * for IPv6/TCP with the stamp; 78 is its smallest). */
static const unsigned sizes_v4[] = { 64, 128, 256, 512, 1024, 1280, 1518 };
static const unsigned sizes_v6[] = { 78, 128, 256, 512, 1024, 1280, 1518 };

#define SEARCH_RES_PCT 0.5      /* throughput resolution: 0.5 % of the failing rate */
#define CALIBRATE_PPS 1e8       /* "as fast as you can": a target no sender here reaches */
#define B2B_TRIAL_S 2.0         /* RFC 9004: bursts of up to 2 s at the maximum rate */
#define B2B_MAX_FRAMES 1048576u /* the engines' largest --burst */

/* Settle after each trial: RFC 2544 section 23 waits 2 s for frames in
 * flight and lets the device restabilise; short (quick) trials wait less. */
static double settle_of(double trial_s)
{
	return trial_s < 2 ? trial_s : 2.0;
}

/* The reverse figures' "who held it back" as the static names the report keeps. */
static const char *held_name(const char *s)
{
	return !strcmp(s, "sender") ? "sender" : !strcmp(s, "path") ? "path" : !strcmp(s, "kernel") ? "kernel" : NULL;
}

/* One trial, recorded in r; out gets all the client gave back (the latency histogram too). */
/* rev_pps: --bidir's B->A rate (its own search's in the throughput test; else the same as pps). */
static struct xp_rfc_trial_rec *trial_run_out(struct xp_rfc_run *r, const char *test, const struct xp_rfc_size *z,
					      double pps, double rev_pps, unsigned burst, double secs,
					      struct xp_trial_out *outp)
{
	unsigned len = z->len;
	if (r->ntrials >= XP_RFC_MAX_TRIALS)
		return NULL;
	struct xp_rfc_trial_rec *rec = &r->trials[r->ntrials++];
	rec->repeat_of = r->next_repeat_of;
	r->next_repeat_of = 0;
	struct xp_trial_req req = { .pps = pps, .frame_len = len, .mix = z->mix, .burst = burst, .seconds = secs,
				    .settle_s = r->settle_s };
	struct xp_trial_out out_;
	struct xp_trial_out *out = outp ? outp : &out_;
	/* A paced trial offers a constant load: the sender makes a stall up
	 * at most 1 % above the rate, never in one burst (client/trial.c); a
	 * device that drops then dropped the rate, not the sender's burst.
	 * --bidir: the server's side sends the same trial back at the same time (bidir.c). */
	if (r->bidir)
		xp_bidir_trial(&r->bd, r->o, &req, rev_pps, out, r->rev);
	else
		xp_client_trial(r->o->spec, &r->o->ro, &req, out);
	rec->len = len;
	rec->z = z;
	rec->test = test;
	rec->t = (struct xp_rfc_trial){ .target_pps = pps, .burst = burst, .seconds = out->seconds, .sent = out->sent,
					.received = out->received, .offered_pps = out->offered_pps,
					.short_of_target = pps > 0 && pps < CALIBRATE_PPS && out->short_of_target,
					.held_back_by = out->held_back_by, .kernel_sleeps = out->kernel_sleeps,
					.max_catchup = out->max_catchup, .error = out->rc };
	rec->t.lat = (struct xp_rfc_latency){ .known = out->lat_known, .min_us = out->lat_min_us,
					      .mean_us = out->lat_mean_us, .max_us = out->lat_max_us,
					      .p50_us = out->lat_p50_us, .p99_us = out->lat_p99_us,
					      .p999_us = out->lat_p999_us, .timed = out->lat_timed };
	const struct xp_reverse_res *rv = r->rev;
	if (r->bidir) {
		rec->t.rev = (struct xp_rfc_dir){ .on = true, .target_pps = rev_pps, .sent = rv->sent,
						  .received = rv->received, .seconds = rv->seconds, .offered_pps = rv->offered_pps,
						  .short_of_target = rev_pps > 0 && rev_pps < CALIBRATE_PPS && rv->short_of_target,
						  .held_back_by = held_name(rv->held_back_by), .error = rv->rc };
		rec->rev_lat = (struct xp_rfc_latency){ .known = rv->lat_known, .min_us = rv->lat_min_us,
							.mean_us = rv->lat_mean_us, .max_us = rv->lat_max_us,
							.p50_us = rv->lat_p50_us, .p99_us = rv->lat_p99_us,
							.p999_us = rv->lat_p999_us, .timed = rv->lat_timed };
		rec->rev_target_pps = rv->target_pps;
	}
	rec->v = xp_rfc_judge(&rec->t, 0);
	/* --flows: each flow's figures in this trial (its JSON below has them), then the trial's copy goes. */
	xp_rfc_flows_trial(&r->sizes[z - r->sizes], rec, out);
	free(out->flows);
	out->flows = NULL;
	out->nflows = 0;
	char line[1536];
	if (!out->rc && r->bidir && rv->rc) {
		/* B->A did not run: the trial did not, whatever A->B did. */
		rec->t.error = rv->rc;
		r->error = strdup(rv->error);
		snprintf(r->failed_at, sizeof(r->failed_at), "%s", z->label);
		xp_report_suite_trial(r->o->rep, NULL, xp_rfc_trial_json(rec));
		snprintf(line, sizeof(line), "rfc2544: %s%s %s trial did not run: B->A: %s", z->label, xp_rfc_named(z) ? "" : "-byte",
			 test, rv->error);
		xp_report_suite_error(r->o->rep, line);
		return rec;
	}
	if (out->rc) {
		r->error = strdup(out->error);
		snprintf(r->failed_at, sizeof(r->failed_at), "%s", z->label);
		xp_report_suite_trial(r->o->rep, NULL, xp_rfc_trial_json(rec));
		snprintf(line, sizeof(line), "rfc2544: %s%s %s trial did not run: %s", z->label, xp_rfc_named(z) ? "" : "-byte", test,
			 out->error);
		xp_report_suite_error(r->o->rep, line);
		return rec;
	}
	char extra[64] = "";
	if (burst)
		snprintf(extra, sizeof(extra), "burst %u, ", burst);
	char held[48] = "";
	if ((rec->t.short_of_target || pps >= CALIBRATE_PPS) && out->held_back_by)
		snprintf(held, sizeof(held), " (held back by the %s)", out->held_back_by);
	char lat[96] = "";
	if (rec->t.lat.known && !strcmp(test, "latency"))
		snprintf(lat, sizeof(lat), "; latency p50 %.1f us, p99 %.1f us, p99.9 %.1f us, max %.1f us",
			 rec->t.lat.p50_us, rec->t.lat.p99_us, rec->t.lat.p999_us, rec->t.lat.max_us);
	char back[320] = "";
	if (r->bidir) {
		char rlat[80] = "";
		if (rec->rev_lat.known && !strcmp(test, "latency"))
			snprintf(rlat, sizeof(rlat), "; latency p50 %.1f us, p99 %.1f us, max %.1f us", rec->rev_lat.p50_us,
				 rec->rev_lat.p99_us, rec->rev_lat.max_us);
		char rheld[48] = "";
		if (rec->t.rev.short_of_target && rec->t.rev.held_back_by)
			snprintf(rheld, sizeof(rheld), " (held back by the %s)", rec->t.rev.held_back_by);
		char rasked[48] = "";
		if (rev_pps > 0 && rev_pps < CALIBRATE_PPS)
			snprintf(rasked, sizeof(rasked), "%.0f fps asked, ", rev_pps);
		snprintf(back, sizeof(back), "\n      %5s%s B->A       %s%.0f offered: sent %llu, received %llu, lost %.4f %%: %s%s%s",
			 "", "  ", rasked, rv->offered_pps, (unsigned long long)rv->sent, (unsigned long long)rv->received,
			 xp_rfc_dir_loss_pct(&rec->t, true), xp_rfc_verdict_name(xp_rfc_judge_dir(&rec->t, true, 0)),
			 rheld, rlat);
		snprintf(back + strlen(back), sizeof(back) - strlen(back), "; the trial (both ways): %s",
			 xp_rfc_verdict_name(rec->v));
	}
	if (pps >= CALIBRATE_PPS)
		snprintf(line, sizeof(line), "[%3u] %5s%s %-10s as fast as it goes: %.0f fps offered, sent %llu, received %llu%s%s\n",
			r->ntrials, z->label, xp_rfc_named(z) ? "  " : " B", test, out->offered_pps, (unsigned long long)out->sent,
			(unsigned long long)out->received, held, back);
	else
		snprintf(line, sizeof(line), "[%3u] %5s%s %-10s %s%.0f fps asked, %.0f offered: sent %llu, received %llu, lost %.4f %%: "
			"%s%s%s%s\n", r->ntrials, z->label, xp_rfc_named(z) ? "  " : " B", test, extra, pps, out->offered_pps, (unsigned long long)out->sent,
			(unsigned long long)out->received, xp_rfc_dir_loss_pct(&rec->t, false),
			xp_rfc_verdict_name(r->bidir ? xp_rfc_judge_dir(&rec->t, false, 0) : rec->v), held, lat, back);
	xp_report_suite_trial(r->o->rep, line, xp_rfc_trial_json(rec));
	return rec;
}

static struct xp_rfc_trial_rec *trial_run(struct xp_rfc_run *r, const char *test, const struct xp_rfc_size *z,
					  double pps, unsigned burst, double secs)
{
	return trial_run_out(r, test, z, pps, pps, burst, secs, NULL);
}

static bool failed(const struct xp_rfc_trial_rec *rec)
{
	return !rec || rec->t.error;
}

/* The top of the search: the line rate, or the sender's maximum measured in a trial. */
static int size_max(struct xp_rfc_run *r, struct xp_rfc_size *z)
{
	const struct xp_rfc_job *o = r->o;
	if (o->rfc.line_bps > 0) {
		z->max_pps = xp_rfc_line_pps(o->rfc.line_bps, z->mean);
		z->max_is_line = true;
		z->dir_max[0] = z->dir_max[1] = z->max_pps;
		return 0;
	}
	struct xp_rfc_trial_rec *rec = trial_run(r, "calibrate", z, CALIBRATE_PPS, 0, o->rfc.trial_s);
	if (failed(rec))
		return -1;
	z->max_pps = floor(rec->t.offered_pps);
	z->max_held_by = rec->t.held_back_by ? rec->t.held_back_by : "sender";
	/* --bidir: each direction's search starts at its own maximum, measured
	 * with both sending at once; max_pps (frame loss and back-to-back,
	 * which run both ways at one rate) is the lower one. */
	if (rec->t.rev.on) {
		z->dir_max[0] = z->max_pps;
		z->dir_max_held_by[0] = z->max_held_by;
		z->dir_max[1] = floor(rec->t.rev.offered_pps);
		z->dir_max_held_by[1] = rec->t.rev.held_back_by ? rec->t.rev.held_back_by : "sender";
		if (z->dir_max[1] < z->max_pps) {
			z->max_pps = z->dir_max[1];
			z->max_held_by = z->dir_max_held_by[1];
		}
		if (z->dir_max[1] <= 0)
			return -1;
	}
	return z->max_pps > 0 ? 0 : -1;
}

/*
 * --bidir's throughput: a search per direction in the same trials
 * (search/search.h, xp_rfc_search2). Each direction ends with its own NDR, PDR
 * and "limited by"; ndr_pps and pdr_pps are the lower direction's (the
 * latency and back-to-back tests' reference), and the combined throughput
 * is the sum of the two NDRs.
 */
static int throughput_bidir(struct xp_rfc_run *r, struct xp_rfc_size *z)
{
	struct xp_rfc_search2 s;
	xp_rfc_search2_init(&s, 0, z->dir_max, SEARCH_RES_PCT, r->o->rfc.loss_tol);
	xp_rfc_search2_confirm(&s, r->o->rfc.confirm);
	double rate[2];
	/* Names without a blank after them: the progress lines' " B->A " marks each trial's B->A line. */
	static const char *const dn[2] = { "A->B's", "B->A's" };
	bool said_held[2] = { false, false };
	while (xp_rfc_search2_next(&s, rate)) {
		for (int d = 0; d < 2; d++)
			if (xp_rfc_search2_repeating(&s, d)) {
				xp_report_suite_line(r->o->rep, "      %s%s throughput: %s rate %.0f fps failed: the same rate again (--confirm-loss %u)\n",
					z->label, xp_rfc_named(z) ? "" : " B", dn[d], rate[d], r->o->rfc.confirm);
			} else if (s.d[d].done && !said_held[d]) {
				said_held[d] = true;
				xp_report_suite_line(r->o->rep, "      %s%s throughput: %s search is over; it sends at %.0f fps while the other "
					"direction's searches on\n", z->label, xp_rfc_named(z) ? "" : " B", dn[d], rate[d]);
			}
		struct xp_rfc_trial_rec *rec = trial_run_out(r, "throughput", z, rate[0], rate[1], 0, r->o->rfc.trial_s, NULL);
		if (failed(rec))
			return -1;
		xp_rfc_search2_record(&s, &rec->t);
	}
	z->tp_run = true;
	z->tp_trials = s.trials;
	for (int d = 0; d < 2; d++) {
		const struct xp_rfc_search *e = &s.d[d];
		z->dir_ndr[d] = e->ndr_pps;
		z->dir_pdr[d] = e->pdr_pps;
		z->dir_trials[d] = e->trials;
		z->dir_repeats[d] = e->repeats;
		z->dir_held[d] = s.held_trials[d];
		z->dir_held_failed[d] = s.held_failed[d];
		bool max_is_sender = !z->max_is_line && z->dir_max_held_by[d] && strcmp(z->dir_max_held_by[d], "path");
		z->dir_sender_limited[d] = xp_rfc_search_sender_limited(e, max_is_sender);
		z->tp_repeats += e->repeats;
		z->tp_passed_on_repeat += e->passed_on_repeat;
	}
	z->ndr_pps = fmin(z->dir_ndr[0], z->dir_ndr[1]);
	z->pdr_pps = fmin(z->dir_pdr[0], z->dir_pdr[1]);
	z->sender_limited = z->dir_sender_limited[0] && z->dir_sender_limited[1];
	return 0;
}

static int throughput(struct xp_rfc_run *r, struct xp_rfc_size *z)
{
	if (r->bidir)
		return throughput_bidir(r, z);
	struct xp_rfc_search s;
	xp_rfc_search_init(&s, 0, z->max_pps, SEARCH_RES_PCT, r->o->rfc.loss_tol);
	xp_rfc_search_confirm(&s, r->o->rfc.confirm); /* --confirm-loss: why, in search/search.h */
	double rate;
	unsigned first = 0; /* the progress number of the current rate's first trial */
	while ((rate = xp_rfc_search_next(&s)) > 0) {
		bool again = xp_rfc_search_repeating(&s);
		if (again)
			xp_report_suite_line(r->o->rep, "      %s%s throughput at %.0f fps %s: the same rate again (--confirm-loss %u)\n",
				z->label, xp_rfc_named(z) ? "" : " B", floor(rate), r->trials[r->ntrials - 1].v == XP_RFC_LOSS ? "lost frames"
				: "fell short of its target", r->o->rfc.confirm);
		/* Known before the trial, so that its record is whole when the report gets it. */
		r->next_repeat_of = again ? first : 0;
		struct xp_rfc_trial_rec *rec = trial_run(r, "throughput", z, floor(rate), 0, r->o->rfc.trial_s);
		if (failed(rec))
			return -1;
		if (!again)
			first = r->ntrials;
		xp_rfc_search_record(&s, &rec->t);
	}
	z->tp_run = true;
	z->tp_trials = s.trials;
	z->tp_repeats = s.repeats;
	z->tp_passed_on_repeat = s.passed_on_repeat;
	z->ndr_pps = s.ndr_pps;
	z->pdr_pps = s.pdr_pps;
	bool max_is_sender = !z->max_is_line && z->max_held_by && strcmp(z->max_held_by, "path");
	z->sender_limited = xp_rfc_search_sender_limited(&s, max_is_sender);
	return 0;
}

/*
 * Latency (RFC 2544 26.2): --latency-trials trials at the throughput rate.
 * RFC 2544 times one tagged frame per trial and reports the mean over 20
 * trials; here the measurement core times every frame of a trial, so each
 * trial gives its whole histogram (min, mean, max, p50, p99, p99.9), the
 * size's figures are each figure's mean over the trials, and the trials'
 * histograms are merged for the distribution plot. Without one-way times
 * (no stamp at this size, different clocks) one trial says so, not twenty.
 */
/* One trial's figures into a running sum, and the mean of n trials' sums. */
static void lat_sum_add(struct xp_rfc_latency *sum, const struct xp_rfc_latency *l)
{
	sum->min_us += l->min_us;
	sum->mean_us += l->mean_us;
	sum->max_us += l->max_us;
	sum->p50_us += l->p50_us;
	sum->p99_us += l->p99_us;
	sum->p999_us += l->p999_us;
	sum->timed += l->timed;
}

static struct xp_rfc_latency lat_mean(const struct xp_rfc_latency *sum, unsigned n)
{
	double k = n;
	return (struct xp_rfc_latency){ .known = true, .min_us = sum->min_us / k, .mean_us = sum->mean_us / k,
					.max_us = sum->max_us / k, .p50_us = sum->p50_us / k,
					.p99_us = sum->p99_us / k, .p999_us = sum->p999_us / k,
					.timed = sum->timed };
}

static int latency(struct xp_rfc_run *r, struct xp_rfc_size *z)
{
	double rate = floor(z->ndr_pps > 0 ? z->ndr_pps : z->max_pps), rev_rate = rate;
	if (r->bidir) {
		/* Each direction at its own throughput rate (its own search's NDR). */
		rate = floor(z->dir_ndr[0] > 0 ? z->dir_ndr[0] : z->dir_max[0]);
		rev_rate = floor(z->dir_ndr[1] > 0 ? z->dir_ndr[1] : z->dir_max[1]);
	}
	unsigned n = r->o->rfc.lat_trials;
	struct xp_rfc_latency sum = { 0 }, rsum = { 0 };
	z->lat_run = true;
	z->lat_pps = rate;
	z->lat_rev_pps = rev_rate;
	xp_lat_init(&z->lat_hist);
	xp_lat_init(&z->lat_rev_hist);
	for (unsigned i = 0; i < n; i++) {
		struct xp_trial_out out;
		struct xp_rfc_trial_rec *rec = trial_run_out(r, "latency", z, rate, rev_rate, 0, r->o->rfc.trial_s, &out);
		if (failed(rec))
			return -1;
		if (r->bidir && !z->lat_rev_why[0]) {
			/* B->A's own: timed on our side by the same core. */
			if (rec->rev_lat.known) {
				lat_sum_add(&rsum, &rec->rev_lat);
				xp_lat_add(&z->lat_rev_hist, &r->rev->lat_hist);
				z->lat_rev_n++;
			} else if (!z->lat_rev_n) {
				snprintf(z->lat_rev_why, sizeof(z->lat_rev_why), "%s",
					 r->rev->lat_why[0] ? r->rev->lat_why : "no figures");
			}
		}
		if (!rec->t.lat.known) {
			snprintf(z->lat_why, sizeof(z->lat_why), "%s", out.lat_why);
			break;
		}
		lat_sum_add(&sum, &rec->t.lat);
		xp_lat_add(&z->lat_hist, &out.lat_hist);
		z->lat_n++;
	}
	if (z->lat_n)
		z->lat = lat_mean(&sum, z->lat_n);
	if (z->lat_rev_n)
		z->lat_rev = lat_mean(&rsum, z->lat_rev_n);
	return 0;
}

static int frame_loss(struct xp_rfc_run *r, struct xp_rfc_size *z)
{
	struct xp_rfc_flr f;
	xp_rfc_flr_init(&f, z->max_pps);
	double rate;
	while ((rate = xp_rfc_flr_next(&f)) > 0 && z->flr_n < 10) {
		struct xp_rfc_trial_rec *rec = trial_run(r, "loss", z, floor(rate), 0, r->o->rfc.trial_s);
		if (failed(rec))
			return -1;
		z->flr_target[z->flr_n] = floor(rate);
		z->flr_offered[z->flr_n] = rec->t.offered_pps;
		z->flr_loss[z->flr_n] = xp_rfc_loss_pct(&rec->t);
		z->flr_fwd_loss[z->flr_n] = xp_rfc_dir_loss_pct(&rec->t, false);
		z->flr_rev_loss[z->flr_n] = xp_rfc_dir_loss_pct(&rec->t, true);
		z->flr_rev_offered[z->flr_n] = rec->t.rev.offered_pps;
		z->flr_n++;
		xp_rfc_flr_record(&f, &rec->t);
	}
	return 0;
}

static int back_to_back(struct xp_rfc_run *r, struct xp_rfc_size *z)
{
	/* RFC 9004: only where the throughput is below the maximum rate (else
	 * the device never needs its buffer). */
	if (z->tp_run && z->ndr_pps >= z->max_pps * (1 - SEARCH_RES_PCT / 100)) {
		z->b2b_skip = "throughput at the maximum rate: no buffering to measure";
		return 0;
	}
	double secs = r->o->rfc.trial_s < B2B_TRIAL_S ? r->o->rfc.trial_s : B2B_TRIAL_S;
	double top = z->max_pps * B2B_TRIAL_S;
	uint64_t max_burst = top < B2B_MAX_FRAMES ? (uint64_t)top : B2B_MAX_FRAMES;
	double sum = 0;
	z->b2b_run = true;
	z->b2b_at_max = true;
	for (unsigned k = 0; k < r->o->rfc.b2b_trials; k++) {
		struct xp_rfc_b2b b;
		xp_rfc_b2b_init(&b, max_burst, max_burst / 200 ? max_burst / 200 : 1);
		uint64_t n;
		while ((n = xp_rfc_b2b_next(&b)) > 0) {
			/* One burst: the next would be due 1.5 trial lengths later. */
			struct xp_rfc_trial_rec *rec = trial_run(r, "b2b", z, n / (secs * 1.5), (unsigned)n, secs);
			if (failed(rec))
				return -1;
			xp_rfc_b2b_record(&b, &rec->t);
		}
		sum += (double)xp_rfc_b2b_result(&b);
		z->b2b_at_max &= xp_rfc_b2b_result(&b) >= max_burst;
		z->b2b_n++;
	}
	z->b2b_mean = z->b2b_n ? sum / z->b2b_n : 0;
	z->implied_s = xp_rfc_implied_buffer_s(z->b2b_mean, z->max_pps);
	z->corrected_s = xp_rfc_corrected_buffer_s(z->b2b_mean, z->max_pps, z->ndr_pps);
	return 0;
}

/*
 * The estimate a run starts with (and --estimate prints): trials per size
 * in three cases, each trial's length + settle + TRIAL_OVERHEAD_S:
 *   fewest:  the device forwards everything at the top: one throughput
 *            trial, two clean loss steps, no back-to-back (it is skipped
 *            when the throughput is the maximum);
 *   about:   a device with a limit well below the top, as RFC 2544 is for:
 *            a search of ~12 rates (to 0.5 % of a limit ~1/10 of the top),
 *            about half of them lost and run again (--confirm-loss), 6 loss
 *            steps, 9 bursts per back-to-back search (halving from the
 *            largest to its resolution, 1/200 of it);
 *   most:    a limit far below the top: ~14 rates, every one run again,
 *            all 10 loss steps.
 * Measured on the lab (2 cores, shared) 2026-12-02: with no limit, 25
 * trials of 1 s + 1 s settle in 53.0 s and 20 of 2 s + 2 s in 82.3 s; with
 * an nft limit of 100 kframes/s (a top 12 times higher), 52 trials in
 * 111.2 s (21 throughput trials, 10 loss steps, 9 bursts per search). So
 * 0.1-0.15 s per trial for the session's set-up; --bidir adds the reverse
 * child's start (BIDIR_OVERHEAD_S).
 */
#define TRIAL_OVERHEAD_S 0.15
#define BIDIR_OVERHEAD_S 0.1 /* measured: 23 bidirectional trials of 1 s + 1 s in 50.8 s */

struct est {
	unsigned trials, b2b;
};

static double est_seconds(const struct xp_rfc_run *r, struct est e)
{
	const struct xp_rfc_job *o = r->o;
	double over = TRIAL_OVERHEAD_S + (r->bidir ? BIDIR_OVERHEAD_S : 0);
	double each = o->rfc.trial_s + r->settle_s + over;
	double b2b_each = (o->rfc.trial_s < B2B_TRIAL_S ? o->rfc.trial_s : B2B_TRIAL_S) + r->settle_s + over;
	return r->nsizes * (e.trials * each + e.b2b * b2b_each);
}

static const char *span(double s, char *buf, size_t len)
{
	if (s < 600)
		snprintf(buf, len, "%.0f s", s);
	else
		snprintf(buf, len, "%.0f min", s / 60);
	return buf;
}

static void announce(const struct xp_rfc_run *r)
{
	const struct xp_rfc_job *o = r->o;
	unsigned t = o->rfc.tests, c = o->rfc.confirm;
	unsigned cal = o->rfc.line_bps > 0 ? 0 : 1;
	bool tp = t & (XP_RFC_T_THROUGHPUT | XP_RFC_T_LATENCY | XP_RFC_T_B2B); /* latency and b2b need its result */
	unsigned lat = (t & XP_RFC_T_LATENCY) ? o->rfc.lat_trials : 0;
	bool loss = t & XP_RFC_T_LOSS, b2b = t & XP_RFC_T_B2B;
	struct est few = { cal + (tp ? 1 : 0) + lat + (loss ? 2 : 0), 0 };
	struct est mid = { cal + (tp ? 12 + 6 * c : 0) + lat + (loss ? 6 : 0), b2b ? 9 * o->rfc.b2b_trials : 0 };
	struct est most = { cal + (tp ? 14 * (1 + c) : 0) + lat + (loss ? 10 : 0), b2b ? 9 * o->rfc.b2b_trials : 0 };
	double s0 = est_seconds(r, few), s1 = est_seconds(r, mid), s2 = est_seconds(r, most);
	char a[32], b[32];
	char what[64];
	if (r->sizes[0].flow)
		snprintf(what, sizeof(what), "%u flows at their own sizes (one pass)", r->sizes[0].nflows);
	else
		snprintf(what, sizeof(what), "%u frame sizes", r->nsizes);
	xp_report_suite_line(o->rep, "RFC 2544: %s, about %u trials of %g s, about %.0f min (%.0f s); from %u trials "
		"(%s: every size passes at the top) to %u (%s: a limit far below the top)\n", what,
		r->nsizes * (mid.trials + mid.b2b), o->rfc.trial_s, s1 / 60, s1, r->nsizes * (few.trials + few.b2b),
		span(s0, a, sizeof(a)), r->nsizes * (most.trials + most.b2b), span(s2, b, sizeof(b)));
}

/* A test with flows (client/flows.c's rule): several streams, or one with headers of its own. */
static bool has_flows(const struct xp_spec *s)
{
	return s->ntraffic > 1 || s->traffic[0].has_hdr;
}

/* The sizes the suite runs: --sizes, or RFC 2544's (RFC 5180's for IPv6); a mix at its largest's template;
 * with flows one pass, each flow at its own sizes (the command line refuses --sizes with them). 0, or -1
 * without memory. */
static int sizes_of(struct xp_rfc_run *r)
{
	const struct xp_rfc_job *o = r->o;
	if (has_flows(o->spec)) {
		r->nsizes = 1;
		return xp_rfc_flows_setup(o->spec, &r->sizes[0]);
	}
	bool v6 = o->spec->family == AF_INET6 || strchr(o->spec->host, ':');
	const unsigned *def = v6 ? sizes_v6 : sizes_v4;
	r->nsizes = o->rfc.nsizes ? o->rfc.nsizes : 7;
	for (unsigned i = 0; i < r->nsizes; i++) {
		struct xp_rfc_size *z = &r->sizes[i];
		z->len = o->rfc.nsizes ? o->rfc.sizes[i] : def[i];
		z->mean = z->len;
		if (!z->len && o->rfc.mix.n) {
			/* The mix (opt_sizes): trials at its largest's template, rates by its mean. */
			z->mix = &o->rfc.mix;
			z->len = xp_mix_max(z->mix);
			z->mean = xp_mix_mean(z->mix);
			snprintf(z->label, sizeof(z->label), "%s", z->mix->imix ? "imix" : "mix");
		} else {
			snprintf(z->label, sizeof(z->label), "%u", z->len);
		}
	}
	return 0;
}

/* The tables into a string, for the sink's end (NULL without memory). */
static char *tables_text(const struct xp_rfc_run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	xp_rfc_report_text(f, r);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int xp_rfc2544_run(const struct xp_spec *s, const struct xp_rfc2544_cfg *cfg, const struct xp_run_opts *ro,
		   struct xp_report *rep)
{
	struct xp_rfc_job job = { .spec = s, .rfc = *cfg, .ro = ro ? *ro : (struct xp_run_opts){ 0 }, .rep = rep };
	const struct xp_rfc_job *o = &job;
	struct xp_rfc_run r = { .o = o, .bidir = o->rfc.bidir };
	r.settle_s = settle_of(o->rfc.trial_s);
	if (sizes_of(&r)) {
		xp_report_suite_error(rep, "out of memory");
		return 1;
	}
	if (o->rfc.estimate) {
		/* --estimate: the line a run starts with, and nothing sent, set up or asked of the server. */
		announce(&r);
		xp_rfc_flows_free(&r);
		return 0;
	}
	r.trials = calloc(XP_RFC_MAX_TRIALS, sizeof(*r.trials));
	if (!r.trials) {
		xp_rfc_flows_free(&r);
		xp_report_suite_error(rep, "out of memory");
		return 1;
	}
	char perr[256];
	if (xp_check_privileges(perr, sizeof(perr))) {
		xp_report_suite_error(rep, perr);
		xp_rfc_flows_free(&r);
		free(r.trials);
		return 1;
	}
	xp_install_signals();
	if (r.bidir) {
		r.rev = calloc(1, sizeof(*r.rev));
		if (!r.rev || xp_bidir_open(o, &r.bd, perr, sizeof(perr))) {
			xp_report_suite_error(rep, r.rev ? perr : "out of memory");
			xp_rfc_flows_free(&r);
			free(r.rev);
			free(r.trials);
			return 1;
		}
	}
	announce(&r);
	r.started = xp_now();
	int rc = 0;
	for (unsigned i = 0; i < r.nsizes && !rc && !xp_signalled; i++) {
		struct xp_rfc_size *z = &r.sizes[i];
		if (size_max(&r, z)) {
			rc = 1;
			break;
		}
		if ((o->rfc.tests & (XP_RFC_T_THROUGHPUT | XP_RFC_T_LATENCY | XP_RFC_T_B2B)) && throughput(&r, z))
			rc = 1;
		if (!rc && (o->rfc.tests & XP_RFC_T_LATENCY) && latency(&r, z))
			rc = 1;
		if (!rc && (o->rfc.tests & XP_RFC_T_LOSS) && frame_loss(&r, z))
			rc = 1;
		if (!rc && (o->rfc.tests & XP_RFC_T_B2B) && back_to_back(&r, z))
			rc = 1;
	}
	r.seconds = xp_now() - r.started;
	if (r.bidir)
		xp_bidir_close(&r.bd); /* our server for B->A: stopped, its XDP program detached */
	if (xp_signalled && !rc) {
		r.error = "interrupted";
		rc = 1;
	}
	char *text = rep->fmt == XP_REPORT_TEXT ? tables_text(&r) : NULL;
	xp_report_suite_end(rep, xp_rfc_head_json(&r), text, xp_rfc_tail_json(&r));
	free(text);
	char err[256];
	if (o->rfc.plot_dir[0] && xp_rfc_plot(&r, o->rfc.plot_dir, err, sizeof(err))) {
		char msg[sizeof(err) + 16];
		snprintf(msg, sizeof(msg), "--plot: %s", err);
		xp_report_suite_error(rep, msg);
		rc = rc ? rc : 1;
	}
	xp_rfc_flows_free(&r);
	free(r.trials);
	free(r.rev);
	return rc;
}
