/*
 * What every kind of figures' text report shares (frames.c, sockets.c,
 * handshakes.c): an interval's rates, the lines above a summary (what went
 * wrong first) and below it (CPU, how it ended). A helper of its own, so the
 * kinds' modules and report.c, which dispatches to them, do not call each
 * other back.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

#include "report/report.h"

void xp_rates_of(const struct xp_period *p, struct xp_rates *r)
{
	r->secs = p->t1 - p->t0;
	double s = r->secs > 0 ? r->secs : NAN;
	r->tx_pps = p->tx_pkts / s;
	r->tx_l1 = l1_bits(p->tx_pkts, p->tx_bytes) / s;
	r->tx_l2 = l2_bits(p->tx_pkts, p->tx_bytes) / s;
	r->rx_pps = p->rx.pkts / s;
	r->rx_l1 = l1_bits(p->rx.pkts, p->rx.bytes) / s;
	r->rx_l2 = l2_bits(p->rx.pkts, p->rx.bytes) / s;
	r->lost = (int64_t)p->tx_pkts - (int64_t)p->rx.pkts;
	r->loss_pct = p->tx_pkts ? 100.0 * (double)r->lost / (double)p->tx_pkts : 0;
	r->lost_known = true;
	/* With stamps, loss is by send interval: what was stamped into it minus what arrived of it. */
	if (p->meas.valid && !p->meas.unknown) {
		r->lost = p->meas.lost;
		r->loss_pct = p->meas.sent ? 100.0 * (double)r->lost / (double)p->meas.sent : 0;
	} else if (p->interval) {
		/* Without them, an interval's sent - received counts frames in
		 * flight at its ends on one side only (negative loss one second,
		 * too much the next): not a loss figure. The whole test's is. */
		r->lost_known = false;
	}
}

void xp_report_head(struct xp_report *r, const struct xp_summary *s, const char *first)
{
	const struct xp_pace_figs *p = &s->pace;
	char a[32], b[32];

	fprintf(r->out, "- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	/* Flows whose figures are missing: first, so no lower total reads as their loss. */
	unsigned unc = xp_flows_uncounted(s);
	if (unc)
		fprintf(r->out, "%u flow%s could not be counted without stamps (sent to addresses the server does not own): "
				"no received figures for %s\n", unc, unc == 1 ? "" : "s", unc == 1 ? "it" : "them");
	/* The path refused frames and said so: before anything that reads like a result. */
	char icmp[XP_ICMP_TEXT_LEN];
	if (xp_icmp_text(&s->icmp, icmp, sizeof(icmp)))
		fprintf(r->out, "%s\n", icmp);
	/* A stall next: the averages below hide it. */
	if (s->stall.stalled)
		fprintf(r->out, "%s\n", s->stall.text);
	if (first)
		fprintf(r->out, "%s\n", first);
	if (p->target_pps > 0 && p->short_of_target)
		fprintf(r->out, "Warning: the offered load reached %s, %.1f %% of the target %s: held back by the %s (%s)\n",
			xp_fmt_rate(p->reached_pps, "pps", a, sizeof(a)), 100.0 * p->reached_pps / p->target_pps,
			xp_fmt_rate(p->target_pps, "pps", b, sizeof(b)), p->held_back_by, p->why);
	else if (p->target_pps > 0 && p->catchups && p->kernel_sleep_pct >= 1.0)
		/* On target, but not evenly: say so, a burst may cost frames a smooth load would not. */
		fprintf(r->out, "Note: %" PRIu64 " sending calls slept in the kernel (%.1f %% of the time, longest call %.1f ms); "
				"the delay was made up %" PRIu64 " times in bursts of up to %u frames\n",
			p->kernel_sleeps, p->kernel_sleep_pct, p->longest_call_ms, p->catchups, p->max_grant);
	if (s->server_lost)
		fprintf(r->out, "The server went away after %.2f s: the summary covers 0-%.2f s, up to its last sample; "
				"%" PRIu64 " sent after it are not counted as lost\n",
			s->server_lost_at, s->server_lost_at, s->sent_after_lost);
}

void xp_report_tail(struct xp_report *r, const struct xp_summary *s)
{
	if (s->server_cpu_pct >= 0)
		fprintf(r->out, "CPU       client %.1f %%  server %.1f %%  (100 %% = one core)\n", s->client_cpu_pct,
			s->server_cpu_pct);
	else
		fprintf(r->out, "CPU       client %.1f %%  (100 %% = one core)\n", s->client_cpu_pct);
	if (s->interrupted)
		fprintf(r->out, "Interrupted: summary of the test so far.\n");
	if (s->error)
		fprintf(r->out, "Test ended early: %s\n", s->error);
	fflush(r->out);
}
