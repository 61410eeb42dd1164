/* A test that stalls (stall.h). */
#include <stdio.h>

#include "util/units.h"
#include "meas/stall.h"

void xp_stall_init(struct xp_stall *s, double pct, bool conn)
{
	*s = (struct xp_stall){ .pct = pct, .conn = conn };
}

void xp_stall_feed(struct xp_stall *s, double t0, double t1, double done, double sent)
{
	double secs = t1 - t0;
	if (secs < XP_STALL_MIN_SECS)
		return;
	double rate = done / secs, srate = sent / secs, frac = s->pct / 100.0;
	bool sending = s->conn || (s->peak_sent > 0 && srate >= s->peak_sent * frac);
	if (s->peak > 0 && rate < s->peak * frac && sending) {
		if (!s->stalled)
			*s = (struct xp_stall){ .pct = s->pct, .conn = s->conn, .peak = s->peak, .peak_sent = s->peak_sent,
						.stalled = true, .t0 = t0, .t1 = t1, .rate = rate, .before = s->peak };
		s->intervals++;
	}
	if (rate > s->peak)
		s->peak = rate;
	if (srate > s->peak_sent)
		s->peak_sent = srate;
}

void xp_stall_text(const struct xp_stall *s, const char *why, char *buf, unsigned long len)
{
	char a[32], b[32];
	const char *unit = s->conn ? "/s" : "pps";
	int n = snprintf(buf, len, "WARNING: stalled at %.2f-%.2f s: %s fell to %s, below %g %% of the running peak %s",
			 s->t0, s->t1, s->conn ? "connections completed" : "frames received while sending went on",
			 xp_fmt_rate(s->rate, unit, a, sizeof(a)), s->pct, xp_fmt_rate(s->before, unit, b, sizeof(b)));
	if (n > 0 && (unsigned long)n < len && s->intervals > 1)
		n += snprintf(buf + n, len - (unsigned long)n, " (%u intervals stalled)", s->intervals);
	if (n > 0 && (unsigned long)n < len && why && *why)
		snprintf(buf + n, len - (unsigned long)n, "; likely %s", why);
}
