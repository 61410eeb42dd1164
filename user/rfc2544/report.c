/*
 * The RFC 2544 suite's report: a text table per test, as a commercial
 * tester's RFC 2544 report has them (frame size, frames/s, L1 and L2 bit/s,
 * % of the line rate when --line-rate is known, loss, latency), and -J with
 * every trial.
 */
#include <ctype.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report.h"
#include "rfc2544/rfc2544.h"
#include "util/units.h"

static const char *rate(double v, const char *unit, char *buf, size_t len)
{
	return xp_fmt_rate(v, unit, buf, len);
}

static void pct_line(char *buf, size_t len, const struct xp_rfc_run *r, const struct xp_rfc_size *z, double pps)
{
	if (r->o->rfc.line_bps > 0)
		snprintf(buf, len, "%6.2f %%", 100.0 * pps / z->max_pps);
	else
		snprintf(buf, len, "%8s", "-");
}

static void settings(FILE *f, const struct xp_rfc_run *r)
{
	char lb[16];
	const struct xp_rfc_job *o = r->o;
	char a[32];
	/* A run that stopped says so first; what it finished before stays below. */
	if (r->error && r->failed_at[0])
		fprintf(f, "RFC 2544 stopped at %s%s: %s; the sizes before it are complete\n", r->failed_at,
			isdigit((unsigned char)r->failed_at[0]) ? " B" : "", r->error);
	else if (r->error)
		fprintf(f, "RFC 2544 stopped: %s\n", r->error);
	fprintf(f, "RFC 2544 against %s: trials of %g s, settle %g s, throughput resolution 0.5 %%, "
		"loss tolerance (PDR) %g %%, %s\n", o->spec->host, o->rfc.trial_s, r->settle_s, o->rfc.loss_tol,
		o->rfc.line_bps > 0 ? "top of the search: the line rate" : "top of the search: the sender's measured maximum");
	if (o->rfc.line_bps > 0)
		fprintf(f, "  (line rate %s)\n", rate(o->rfc.line_bps, "bit/s", a, sizeof(a)));
	if (r->bidir)
		fprintf(f, "  bidirectional (RFC 2544 section 14): every trial sends A->B (this client to the server) and B->A "
			"(the server's side to this client) at once, at the same rate, size and length\n");
	if (o->rfc.confirm)
		fprintf(f, "  a throughput trial that lost frames (or fell short of its rate) runs again, "
			"up to %u time%s; the rate fails only if every run failed (--confirm-loss %u; 0: one trial per "
			"rate)\n", o->rfc.confirm,
			o->rfc.confirm == 1 ? "" : "s", o->rfc.confirm);
	else
		fprintf(f, "  one trial per rate: a trial that lost frames fails its rate (--confirm-loss 0)\n");
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		char spec[160];
		if (z->flow)
			fprintf(f, "  %s: the %u flows of the flow file, each at its own sizes (mean %.2f bytes over their "
				"shares, which the L1/L2 bit rates use); every trial's rate is their aggregate, each flow at "
				"its rate's share\n", z->label, z->nflows, xp_rfc_mean(z));
		if (z->mix)
			fprintf(f, "  %s: the frame mix %s (size:weight), interleaved frame by frame in a %u-frame pattern; "
				"mean %.2f bytes, which the L1/L2 bit rates use; loss and latency over all its sizes\n",
				xp_rfc_label(z, lb), xp_mix_spec(z->mix, spec, sizeof(spec)), z->mix->plen, xp_rfc_mean(z));
	}
}

/* -J: a size's "frame_bytes" (a mix: its label) and, for a mix, its sizes and weights. */
static void size_json(struct json_object *o, const struct xp_rfc_size *z)
{
	char lb[16];
	if (z->flow) {
		/* --flows: each flow at its own sizes; "flows" below has each one's mean. */
		json_object_object_add(o, "frame_bytes", json_object_new_string(z->label));
		json_object_object_add(o, "mean_frame_bytes", json_object_new_double(xp_rfc_mean(z)));
		return;
	}
	if (!z->mix) {
		json_object_object_add(o, "frame_bytes", json_object_new_int((int)z->len));
		return;
	}
	json_object_object_add(o, "frame_bytes", json_object_new_string(xp_rfc_label(z, lb)));
	struct json_object *m = json_object_new_object(), *a = json_object_new_array();
	char spec[160];
	json_object_object_add(m, "name", json_object_new_string(z->mix->imix ? "imix" : "custom"));
	json_object_object_add(m, "spec", json_object_new_string(xp_mix_spec(z->mix, spec, sizeof(spec))));
	for (unsigned k = 0; k < z->mix->n; k++) {
		struct json_object *e = json_object_new_object();
		json_object_object_add(e, "frame_bytes", json_object_new_int((int)z->mix->size[k]));
		json_object_object_add(e, "weight", json_object_new_int((int)z->mix->weight[k]));
		json_object_array_add(a, e);
	}
	json_object_object_add(m, "sizes", a);
	json_object_object_add(m, "pattern_frames", json_object_new_int((int)z->mix->plen));
	json_object_object_add(m, "mean_frame_bytes", json_object_new_double(xp_rfc_mean(z)));
	json_object_object_add(o, "frame_mix", m);
}

/*
 * --bidir: what limited one direction's own search (search/search.h,
 * xp_rfc_search2): the search's top (the line rate), its sender's maximum
 * (then it is not the device's throughput), or the device.
 */
static const char *dir_limit(const struct xp_rfc_size *z, int d)
{
	bool top = z->dir_ndr[d] > 0 && z->dir_ndr[d] >= floor(z->dir_max[d]); /* the search's rates are whole frames/s */
	if (top && z->max_is_line)
		return "the search's top: none below the line rate: passed at the search's top";
	if (z->dir_sender_limited[d])
		return top ? "the sender's maximum: passed at the search's top (its sender's maximum), not the device's throughput"
			   : "the sender's maximum: its sender fell short above this, not the device's throughput";
	if (top)
		return "the device in this direction (it pushed back at the sender's maximum)";
	return "the device in this direction (loss or pushback above it)";
}

/* A throughput trial in which both directions passed at their own NDRs at once. */
static bool ndrs_together(const struct xp_rfc_run *r, const struct xp_rfc_size *z)
{
	for (unsigned i = 0; i < r->ntrials; i++) {
		const struct xp_rfc_trial_rec *t = &r->trials[i];
		if (t->z == z && !strcmp(t->test, "throughput") && t->t.target_pps == z->dir_ndr[0] &&
		    t->t.rev.target_pps == z->dir_ndr[1] && t->v == XP_RFC_PASS)
			return true;
	}
	return false;
}

static void tp_text_bidir(FILE *f, const struct xp_rfc_run *r)
{
	char lb[16], a[32], b[32], p[32];
	fprintf(f, "\nThroughput (RFC 2544 26.1), bidirectional (RFC 2544 section 14): both directions at once, each searched "
		"to its own limit; a direction's trial passes only if it lost nothing and reached its rate\n");
	fprintf(f, "%6s %5s %14s %14s %14s %9s %14s %7s  %s\n", "bytes", "dir", "NDR frames/s", "L1 bit/s", "L2 bit/s",
		"% line", "PDR frames/s", "trials", "limited by");
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		if (!z->tp_run)
			continue;
		for (int d = 0; d < 2; d++) {
			double v = z->dir_ndr[d];
			pct_line(p, sizeof(p), r, z, v);
			fprintf(f, "%6s %5s %14.0f %14s %14s %9s %14.0f %7u  %s\n", xp_rfc_label(z, lb), d ? "B->A" : "A->B", v,
				rate(xp_rfc_l1_bps(v, xp_rfc_mean(z)), "bit/s", a, sizeof(a)),
				rate(xp_rfc_l2_bps(v, xp_rfc_mean(z)), "bit/s", b, sizeof(b)), p, z->dir_pdr[d], z->dir_trials[d],
				dir_limit(z, d));
		}
		/* The combined row: the two directions' own NDRs summed. */
		double v = z->dir_ndr[0] + z->dir_ndr[1];
		snprintf(p, sizeof(p), "%8s", "-");
		fprintf(f, "%6s %5s %14.0f %14s %14s %9s %14.0f %7u  the two NDRs summed; %s\n", xp_rfc_label(z, lb), "both",
			v, rate(xp_rfc_l1_bps(v, xp_rfc_mean(z)), "bit/s", a, sizeof(a)),
			rate(xp_rfc_l2_bps(v, xp_rfc_mean(z)), "bit/s", b, sizeof(b)), p, z->dir_pdr[0] + z->dir_pdr[1],
			z->tp_trials, ndrs_together(r, z) ? "both passed at them in one trial"
							  : "NOT passed at them together in one trial");
		for (int d = 0; d < 2; d++)
			if (z->dir_held_failed[d])
				fprintf(f, "  note: %s%s %s held at its NDR in %u trials while the other direction searched on: "
					"failed in %u of them (lost frames or fell short beside the other's load)\n",
					xp_rfc_label(z, lb), xp_rfc_named(z) ? "" : " B", d ? "B->A" : "A->B", z->dir_held[d],
					z->dir_held_failed[d]);
	}
	fprintf(f, "  A->B, B->A: each direction's own search, both sending in every trial (a direction whose search "
		"ended sends at its NDR while the other searches on); trials: that direction's rates. both: the sum of the "
		"two NDRs (and PDRs), the bidirectional throughput; trials: the bidirectional trials\n");
}

void xp_rfc_report_text(FILE *f, const struct xp_rfc_run *r)
{
	char lb[16];
	char a[32], b[32], c[32], p[32];
	settings(f, r);
	bool any_tp = false, any_flr = false, any_b2b = false, any_lat = false;
	for (unsigned i = 0; i < r->nsizes; i++) {
		any_tp |= r->sizes[i].tp_run;
		any_flr |= r->sizes[i].flr_n > 0;
		any_b2b |= r->sizes[i].b2b_run || r->sizes[i].b2b_skip;
		any_lat |= r->sizes[i].lat_run;
	}
	if (any_tp && r->bidir)
		tp_text_bidir(f, r);
	if (any_tp && !r->bidir) {
		fprintf(f, "\nThroughput (RFC 2544 26.1): the highest rate with zero loss (NDR), and at %g %% loss (PDR)\n",
			r->o->rfc.loss_tol);
		fprintf(f, "%6s %14s %14s %14s %9s %14s %7s  %s\n", "bytes", "NDR frames/s", "L1 bit/s", "L2 bit/s",
			"% line", "PDR frames/s", "trials", "limited by");
		for (unsigned i = 0; i < r->nsizes; i++) {
			const struct xp_rfc_size *z = &r->sizes[i];
			if (!z->tp_run)
				continue;
			pct_line(p, sizeof(p), r, z, z->ndr_pps);
			fprintf(f, "%6s %14.0f %14s %14s %9s %14.0f %7u  %s\n", xp_rfc_label(z, lb), z->ndr_pps,
				rate(xp_rfc_l1_bps(z->ndr_pps, xp_rfc_mean(z)), "bit/s", a, sizeof(a)),
				rate(xp_rfc_l2_bps(z->ndr_pps, xp_rfc_mean(z)), "bit/s", b, sizeof(b)), p, z->pdr_pps, z->tp_trials,
				z->sender_limited ? "sender-limited: the sender's maximum, not the device's throughput"
						  : "the device (loss or pushback above it)");
		}
	}
	if (any_tp) {
		for (unsigned i = 0; i < r->nsizes; i++) {
			const struct xp_rfc_size *z = &r->sizes[i];
			if (z->tp_run && z->tp_repeats)
				fprintf(f, "%6s%s: %u failed trial%s run again; %u rate%s failed once and passed when run "
					"again\n", xp_rfc_label(z, lb), xp_rfc_named(z) ? "" : " B", z->tp_repeats, z->tp_repeats == 1 ? "" : "s", z->tp_passed_on_repeat,
					z->tp_passed_on_repeat == 1 ? "" : "s");
		}
	}
	if (any_lat) {
		fprintf(f, "\nLatency (RFC 2544 26.2) at the throughput rate: every frame timed, one way; each figure "
			"the mean over the trials\n");
		fprintf(f, "%6s %s%14s %7s %12s %9s %9s %9s %9s %9s %9s\n", "bytes", r->bidir ? "  dir " : "", "rate frames/s",
			"trials", "frames timed", "min us", "mean us", "max us", "p50 us", "p99 us", "p99.9 us");
		for (unsigned i = 0; i < r->nsizes; i++) {
			const struct xp_rfc_size *z = &r->sizes[i];
			if (!z->lat_run)
				continue;
			for (int d = 0; d < (r->bidir ? 2 : 1); d++) {
				const struct xp_rfc_latency *l = d ? &z->lat_rev : &z->lat;
				const char *why = d ? z->lat_rev_why : z->lat_why;
				const char *dir = !r->bidir ? "" : d ? " B->A " : " A->B ";
				if (!l->known) {
					fprintf(f, "%6s %s%14.0f  not measured: %s\n", xp_rfc_label(z, lb), dir, d ? z->lat_rev_pps : z->lat_pps,
						why[0] ? why : "no trial ran");
					continue;
				}
				fprintf(f, "%6s %s%14.0f %7u %12llu %9.1f %9.1f %9.1f %9.1f %9.1f %9.1f\n", xp_rfc_label(z, lb), dir,
					d ? z->lat_rev_pps : z->lat_pps, d ? z->lat_rev_n : z->lat_n, (unsigned long long)l->timed, l->min_us, l->mean_us,
					l->max_us, l->p50_us, l->p99_us, l->p999_us);
			}
		}
	}
	if (any_flr) {
		fprintf(f, "\nFrame loss rate (RFC 2544 26.3): from 100 %% of %s down in 10 %% steps\n",
			r->o->rfc.line_bps > 0 ? "the line rate" : "the sender's maximum");
		fprintf(f, "%6s %6s %s%14s %14s %14s %10s\n", "bytes", "step", r->bidir ? "  dir " : "", "asked fps",
			"offered fps", "L1 bit/s", "loss %");
		for (unsigned i = 0; i < r->nsizes; i++) {
			const struct xp_rfc_size *z = &r->sizes[i];
			for (unsigned k = 0; k < z->flr_n; k++) {
				if (!r->bidir) {
					fprintf(f, "%6s %5u%% %14.0f %14.0f %14s %10.4f\n", xp_rfc_label(z, lb), 100 - 10 * k,
						z->flr_target[k], z->flr_offered[k],
						rate(xp_rfc_l1_bps(z->flr_offered[k], xp_rfc_mean(z)), "bit/s", c, sizeof(c)),
						z->flr_loss[k]);
					continue;
				}
				double off[3] = { z->flr_offered[k], z->flr_rev_offered[k], z->flr_offered[k] + z->flr_rev_offered[k] };
				/* both: the frames lost of those sent both ways (each way's share weighted by its load) */
				double lost = off[0] * z->flr_fwd_loss[k] + off[1] * z->flr_rev_loss[k];
				double loss[3] = { z->flr_fwd_loss[k], z->flr_rev_loss[k], off[2] > 0 ? lost / off[2] : 0 };
				static const char *const dn[3] = { " A->B ", " B->A ", " both " };
				for (int d = 0; d < 3; d++)
					fprintf(f, "%6s %5u%% %s%14.0f %14.0f %14s %10.4f\n", xp_rfc_label(z, lb), 100 - 10 * k, dn[d],
						d == 2 ? 2 * z->flr_target[k] : z->flr_target[k], off[d],
						rate(xp_rfc_l1_bps(off[d], xp_rfc_mean(z)), "bit/s", c, sizeof(c)), loss[d]);
			}
		}
	}
	if (any_b2b) {
		fprintf(f, "\nBack-to-back (RFC 2544 26.4, RFC 9004): the longest burst at the maximum rate with no loss\n");
		fprintf(f, "RFC 9004 5.4: implied = B / R, corrected = implied * (1 - throughput / R); R = %s\n",
			r->o->rfc.line_bps > 0 ? "the line rate's frame rate"
					       : "the sender's measured maximum (no --line-rate: the link's theoretical rate is unknown)");
		fprintf(f, "%6s %14s %7s %16s %16s\n", "bytes", "mean frames", "trials", "implied buffer", "corrected");
		for (unsigned i = 0; i < r->nsizes; i++) {
			const struct xp_rfc_size *z = &r->sizes[i];
			if (z->b2b_skip)
				fprintf(f, "%6s  not run: %s\n", xp_rfc_label(z, lb), z->b2b_skip);
			else if (z->b2b_run)
				fprintf(f, "%6s %s%13.0f %7u %s%12.3f ms %s%12.3f ms%s\n", xp_rfc_label(z, lb), z->b2b_at_max ? ">" : " ",
					z->b2b_mean, z->b2b_n, z->b2b_at_max ? ">" : " ", z->implied_s * 1e3,
					z->b2b_at_max ? ">" : " ", z->corrected_s * 1e3,
					z->b2b_at_max ? "  (the largest burst tried lost nothing: lower bounds; on veth "
							"the device may push back instead of buffering)" : "");
		}
	}
	xp_rfc_flows_text(f, r);
	fprintf(f, "\n%u trials in %.0f s%s%s\n", r->ntrials, r->seconds, r->error ? "; stopped: " : "",
		r->error ? r->error : "");
}


struct json_object *xp_rfc_head_json(const struct xp_rfc_run *r)
{
	const struct xp_rfc_job *o = r->o;
	struct json_object *doc = json_object_new_object(), *set = json_object_new_object();
	json_object_object_add(set, "server", json_object_new_string(o->spec->host));
	xp_rfc_add_d(set, "trial_seconds", o->rfc.trial_s);
	xp_rfc_add_d(set, "settle_seconds", r->settle_s);
	xp_rfc_add_d(set, "loss_tolerance_percent", o->rfc.loss_tol);
	json_object_object_add(set, "confirm_loss", json_object_new_int((int)o->rfc.confirm));
	xp_rfc_add_d(set, "line_rate_bps", o->rfc.line_bps > 0 ? o->rfc.line_bps : NAN);
	/* --bidir (RFC 2544 section 14): every trial both ways at once; "A->B" is the client's frames to the server. */
	json_object_object_add(set, "bidirectional", json_object_new_boolean(r->bidir));
	json_object_object_add(doc, "settings", set);
	struct json_object *sizes = json_object_new_array();
	for (unsigned i = 0; i < r->nsizes; i++) {
		const struct xp_rfc_size *z = &r->sizes[i];
		struct json_object *s = json_object_new_object();
		size_json(s, z);
		xp_rfc_add_d(s, "max_frames_per_second", z->max_pps);
		json_object_object_add(s, "max_is_line_rate", json_object_new_boolean(z->max_is_line));
		if (z->tp_run) {
			struct json_object *t = json_object_new_object();
			xp_rfc_add_d(t, "ndr_frames_per_second", z->ndr_pps);
			xp_rfc_add_d(t, "ndr_l1_bps", xp_rfc_l1_bps(z->ndr_pps, xp_rfc_mean(z)));
			xp_rfc_add_d(t, "ndr_l2_bps", xp_rfc_l2_bps(z->ndr_pps, xp_rfc_mean(z)));
			xp_rfc_add_d(t, "pdr_frames_per_second", z->pdr_pps);
			json_object_object_add(t, "sender_limited", json_object_new_boolean(z->sender_limited));
			json_object_object_add(t, "trials", json_object_new_int((int)z->tp_trials));
			json_object_object_add(t, "repeats", json_object_new_int((int)z->tp_repeats));
			json_object_object_add(t, "passed_on_repeat", json_object_new_int((int)z->tp_passed_on_repeat));
			if (r->bidir) {
				/* ndr/pdr above: the lower direction's; combined: the two directions' own NDRs (PDRs) summed. */
				double c = z->dir_ndr[0] + z->dir_ndr[1];
				xp_rfc_add_d(t, "combined_ndr_frames_per_second", c);
				xp_rfc_add_d(t, "combined_ndr_l1_bps", xp_rfc_l1_bps(c, xp_rfc_mean(z)));
				xp_rfc_add_d(t, "combined_ndr_l2_bps", xp_rfc_l2_bps(c, xp_rfc_mean(z)));
				xp_rfc_add_d(t, "combined_pdr_frames_per_second", z->dir_pdr[0] + z->dir_pdr[1]);
				json_object_object_add(t, "combined_ndrs_passed_together", json_object_new_boolean(ndrs_together(r, z)));
				for (int d = 0; d < 2; d++) {
					struct json_object *e = json_object_new_object();
					xp_rfc_add_d(e, "ndr_frames_per_second", z->dir_ndr[d]);
					xp_rfc_add_d(e, "pdr_frames_per_second", z->dir_pdr[d]);
					xp_rfc_add_d(e, "highest_pass_frames_per_second", z->dir_ndr[d]); /* the same: its own search's NDR */
					xp_rfc_add_d(e, "max_frames_per_second", z->dir_max[d]);
					json_object_object_add(e, "passed_at_top",
							       json_object_new_boolean(z->dir_ndr[d] > 0 && z->dir_ndr[d] >= floor(z->dir_max[d])));
					json_object_object_add(e, "sender_limited", json_object_new_boolean(z->dir_sender_limited[d]));
					json_object_object_add(e, "limited_by", json_object_new_string(dir_limit(z, d)));
					json_object_object_add(e, "trials", json_object_new_int((int)z->dir_trials[d]));
					json_object_object_add(e, "repeats", json_object_new_int((int)z->dir_repeats[d]));
					json_object_object_add(e, "held_trials", json_object_new_int((int)z->dir_held[d]));
					json_object_object_add(e, "held_failed", json_object_new_int((int)z->dir_held_failed[d]));
					json_object_object_add(t, d ? "b_to_a" : "a_to_b", e);
				}
			}
			json_object_object_add(s, "throughput", t);
		}
		if (z->lat_run) {
			struct json_object *l = json_object_new_object();
			json_object_object_add(l, "measured", json_object_new_boolean(z->lat.known));
			xp_rfc_add_d(l, "rate_frames_per_second", z->lat_pps);
			json_object_object_add(l, "trials", json_object_new_int((int)z->lat_n));
			if (z->lat.known) {
				/* Each figure's mean over the trials (RFC 2544 26.2 reports the mean of its trials). */
				xp_rfc_lat_json(l, &z->lat);
				/* Every frame of every latency trial: the distribution, with its buckets to merge. */
				json_object_object_add(l, "all_frames", xp_lat_to_json(&z->lat_hist));
			} else {
				json_object_object_add(l, "why", json_object_new_string(z->lat_why[0] ? z->lat_why : "no trial ran"));
			}
			if (r->bidir) {
				struct json_object *v = json_object_new_object();
				json_object_object_add(v, "measured", json_object_new_boolean(z->lat_rev.known));
				json_object_object_add(v, "trials", json_object_new_int((int)z->lat_rev_n));
				xp_rfc_add_d(v, "rate_frames_per_second", z->lat_rev_pps);
				if (z->lat_rev.known) {
					xp_rfc_lat_json(v, &z->lat_rev);
					json_object_object_add(v, "all_frames", xp_lat_to_json(&z->lat_rev_hist));
				} else {
					json_object_object_add(v, "why", json_object_new_string(z->lat_rev_why[0] ? z->lat_rev_why
												  : "no trial ran"));
				}
				json_object_object_add(l, "b_to_a", v);
			}
			json_object_object_add(s, "latency", l);
		}
		if (z->flr_n) {
			struct json_object *a = json_object_new_array();
			for (unsigned k = 0; k < z->flr_n; k++) {
				struct json_object *e = json_object_new_object();
				xp_rfc_add_d(e, "target_frames_per_second", z->flr_target[k]);
				xp_rfc_add_d(e, "offered_frames_per_second", z->flr_offered[k]);
				xp_rfc_add_d(e, "loss_percent", z->flr_loss[k]);
				if (r->bidir) {
					xp_rfc_add_d(e, "a_to_b_loss_percent", z->flr_fwd_loss[k]);
					xp_rfc_add_d(e, "b_to_a_offered_frames_per_second", z->flr_rev_offered[k]);
					xp_rfc_add_d(e, "b_to_a_loss_percent", z->flr_rev_loss[k]);
				}
				json_object_array_add(a, e);
			}
			json_object_object_add(s, "frame_loss_rate", a);
		}
		if (z->b2b_run || z->b2b_skip) {
			struct json_object *b = json_object_new_object();
			if (z->b2b_skip)
				json_object_object_add(b, "skipped", json_object_new_string(z->b2b_skip));
			else {
				xp_rfc_add_d(b, "mean_frames", z->b2b_mean);
				json_object_object_add(b, "at_least", json_object_new_boolean(z->b2b_at_max));
				json_object_object_add(b, "trials", json_object_new_int((int)z->b2b_n));
				xp_rfc_add_d(b, "implied_buffer_seconds", z->implied_s);
				xp_rfc_add_d(b, "corrected_buffer_seconds", z->corrected_s);
			}
			json_object_object_add(s, "back_to_back", b);
		}
		struct json_object *fl = xp_rfc_flows_size_json(r, z);
		if (fl)
			json_object_object_add(s, "flows", fl);
		json_object_array_add(sizes, s);
	}
	json_object_object_add(doc, "sizes", sizes);
	return doc;
}

struct json_object *xp_rfc_trial_json(const struct xp_rfc_trial_rec *t)
{
	struct json_object *e = json_object_new_object();
	if (t->z && xp_rfc_named(t->z))
		json_object_object_add(e, "frame_bytes", json_object_new_string(t->z->label));
	else
		json_object_object_add(e, "frame_bytes", json_object_new_int((int)t->len));
	json_object_object_add(e, "test", json_object_new_string(t->test));
	xp_rfc_add_d(e, "target_frames_per_second", t->t.target_pps);
	if (t->t.burst)
		json_object_object_add(e, "burst", json_object_new_int((int)t->t.burst));
	xp_rfc_add_d(e, "seconds", t->t.seconds);
	/* --confirm-loss: the number of the losing trial (as in the progress lines) this one runs again. */
	if (t->repeat_of)
		json_object_object_add(e, "repeat_of", json_object_new_int((int)t->repeat_of));
	json_object_object_add(e, "sent", json_object_new_int64((int64_t)t->t.sent));
	json_object_object_add(e, "received", json_object_new_int64((int64_t)t->t.received));
	xp_rfc_add_d(e, "offered_frames_per_second", t->t.offered_pps);
	xp_rfc_add_d(e, "loss_percent", xp_rfc_loss_pct(&t->t));
	json_object_object_add(e, "short_of_target", json_object_new_boolean(t->t.short_of_target));
	if (t->t.held_back_by)
		json_object_object_add(e, "held_back_by", json_object_new_string(t->t.held_back_by));
	json_object_object_add(e, "kernel_sleeps", json_object_new_boolean(t->t.kernel_sleeps));
	/* The sender's largest grant after a stall: at most 5 ms of frames, or two units (engine/pacer.h). */
	json_object_object_add(e, "largest_catchup_frames", json_object_new_int64((int64_t)t->t.max_catchup));
	json_object_object_add(e, "verdict", json_object_new_string(xp_rfc_verdict_name(t->v)));
	if (t->t.lat.known) {
		struct json_object *l = json_object_new_object();
		xp_rfc_lat_json(l, &t->t.lat);
		json_object_object_add(e, "latency", l);
	}
	if (t->t.rev.on) {
		/* The fields above are A->B's (loss_percent: the worse direction's, which the verdict is judged by). */
		const struct xp_rfc_dir *v = &t->t.rev;
		json_object_object_add(e, "verdict_a_to_b", json_object_new_string(
			xp_rfc_verdict_name(xp_rfc_judge_dir(&t->t, false, 0))));
		xp_rfc_add_d(e, "a_to_b_loss_percent", xp_rfc_dir_loss_pct(&t->t, false));
		struct json_object *b = json_object_new_object();
		xp_rfc_add_d(b, "target_frames_per_second", v->target_pps); /* asked: B->A's own search's rate */
		xp_rfc_add_d(b, "seconds", v->seconds);
		json_object_object_add(b, "sent", json_object_new_int64((int64_t)v->sent));
		json_object_object_add(b, "received", json_object_new_int64((int64_t)v->received));
		xp_rfc_add_d(b, "offered_frames_per_second", v->offered_pps);
		xp_rfc_add_d(b, "loss_percent", xp_rfc_dir_loss_pct(&t->t, true));
		json_object_object_add(b, "short_of_target", json_object_new_boolean(v->short_of_target));
		if (v->held_back_by)
			json_object_object_add(b, "held_back_by", json_object_new_string(v->held_back_by));
		json_object_object_add(b, "verdict", json_object_new_string(
			xp_rfc_verdict_name(xp_rfc_judge_dir(&t->t, true, 0))));
		if (t->rev_lat.known) {
			struct json_object *l = json_object_new_object();
			xp_rfc_lat_json(l, &t->rev_lat);
			json_object_object_add(b, "latency", l);
		}
		json_object_object_add(e, "b_to_a", b);
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "sent", json_object_new_int64((int64_t)(t->t.sent + v->sent)));
		json_object_object_add(c, "received", json_object_new_int64((int64_t)(t->t.received + v->received)));
		xp_rfc_add_d(c, "offered_frames_per_second", t->t.offered_pps + v->offered_pps);
		xp_rfc_add_d(c, "offered_l1_bps", xp_rfc_l1_bps(t->t.offered_pps + v->offered_pps, t->z ? xp_rfc_mean(t->z) : t->len));
		json_object_object_add(e, "combined", c);
	}
	struct json_object *fl = xp_rfc_flows_trial_json(t);
	if (fl)
		json_object_object_add(e, "flows", fl);
	return e;
}

struct json_object *xp_rfc_tail_json(const struct xp_rfc_run *r)
{
	struct json_object *doc = json_object_new_object();
	xp_rfc_add_d(doc, "seconds", r->seconds);
	if (r->error)
		json_object_object_add(doc, "error", json_object_new_string(r->error));
	if (r->failed_at[0])
		json_object_object_add(doc, "failed_size", json_object_new_string(r->failed_at));
	return doc;
}

void xp_rfc_report_json(FILE *f, const struct xp_rfc_run *r)
{
	struct xp_report rep;
	xp_report_init(&rep, XP_REPORT_JSON, f);
	for (unsigned i = 0; i < r->ntrials; i++)
		xp_report_suite_trial(&rep, NULL, xp_rfc_trial_json(&r->trials[i]));
	xp_report_suite_end(&rep, xp_rfc_head_json(r), NULL, xp_rfc_tail_json(r));
	xp_report_free(&rep);
}
