/*
 * What a finished test's summary means for the exit status (--max-loss,
 * --require-rate), and the arithmetic of its figures that needs no client.
 */
#include <stdio.h>

#include "client/client.h"

/*
 * The midpoint of two readings of a cumulative count: packets averaged, and
 * bytes taken at the same point between the readings, so bytes stay a whole
 * number of frames (averaging both separately can leave half a frame).
 */
void xp_midpoint(uint64_t p1, uint64_t b1, uint64_t p2, uint64_t b2, uint64_t *p, uint64_t *b)
{
	*p = p1 + (p2 - p1) / 2;
	*b = p2 == p1 ? b1 : b1 + (uint64_t)((unsigned __int128)(b2 - b1) * (*p - p1) / (p2 - p1));
}

/* Loss in percent by the engine's figures: frames not received, or SYNs not completed. */
double xp_summary_loss_pct(const struct xp_period *p)
{
	if (p->figures == XP_FIGS_HANDSHAKES) {
		uint64_t est = xp_period_established(p);
		return p->hs.syn_sent ? 100.0 * (double)(p->hs.syn_sent > est ? p->hs.syn_sent - est : 0) / p->hs.syn_sent
				      : 0;
	}
	struct xp_rates r;
	xp_rates_of(p, &r);
	return r.loss_pct;
}

int xp_summary_thresholds(const struct xp_spec *sp, const struct xp_summary *sum, char *msg, size_t len)
{
	double loss = xp_summary_loss_pct(&sum->total);
	/* The path refused frames and said so (the summary's first line): a run that lost frames then
	 * failed, whatever --max-loss allows, since its figures measure the refusal, not the device. */
	if (sum->icmp.count && loss > 0) {
		char t[XP_ICMP_TEXT_LEN];
		snprintf(msg, len, "lost %.4f %% of the frames; %s", loss, xp_icmp_text(&sum->icmp, t, sizeof(t)));
		return XP_EXIT_RUNTIME;
	}
	if (sp->max_loss >= 0 && loss > sp->max_loss) {
		snprintf(msg, len, "lost %.4f %% %s, more than --max-loss %g %%", loss,
			 sum->total.figures == XP_FIGS_HANDSHAKES ? "of the SYNs (not completed)" : "of the frames",
			 sp->max_loss);
		return XP_EXIT_LOSS;
	}
	/* A stall is loss the average hides: --stall, or --max-loss, fails it. */
	if (sum->stall.stalled && (sp->stall_set || sp->max_loss >= 0)) {
		snprintf(msg, len, "the test stalled at %.2f-%.2f s (%s below %g %% of the running peak)%s", sum->stall.t0,
			 sum->stall.t1, sum->stall.conn ? "connections completed" : "frames received", sum->stall.pct,
			 sp->stall_set ? " (--stall)" : " (--max-loss fails a stalled test)");
		return XP_EXIT_LOSS;
	}
	if (sp->require_rate && sum->pace.short_of_target) {
		snprintf(msg, len, "the offered load reached %.1f %% of the target (--require-rate): held back by the %s (%s)",
			 100.0 * sum->pace.reached_pps / sum->pace.target_pps, sum->pace.held_back_by, sum->pace.why);
		return XP_EXIT_SHORT;
	}
	return 0;
}
