/*
 * --bidir's throughput search, one per direction in the same trials
 * (search.h, xp_rfc_search2): pure, no I/O, no clock. Each direction's
 * search is an ordinary xp_rfc_search fed with that direction's half of
 * every trial, so the binary search, --confirm-loss's repeats, the PDR and
 * "sender-limited" are the one-way rules, per direction.
 */
#include "search/search.h"

#include <math.h>

struct xp_rfc_trial xp_rfc_trial_dir(const struct xp_rfc_trial *t, int d)
{
	if (!d) {
		struct xp_rfc_trial a = *t;
		a.rev.on = false;
		return a;
	}
	const struct xp_rfc_dir *r = &t->rev;
	return (struct xp_rfc_trial){ .target_pps = r->target_pps, .burst = t->burst, .seconds = r->seconds,
				      .sent = r->sent, .received = r->received, .offered_pps = r->offered_pps,
				      .short_of_target = r->short_of_target, .held_back_by = r->held_back_by,
				      .error = r->error };
}

void xp_rfc_search2_init(struct xp_rfc_search2 *s, double floor_pps, const double max_pps[2], double res_pct,
			 double loss_tol_pct)
{
	*s = (struct xp_rfc_search2){ 0 };
	for (int d = 0; d < 2; d++)
		xp_rfc_search_init(&s->d[d], floor_pps, max_pps[d], res_pct, loss_tol_pct);
}

void xp_rfc_search2_confirm(struct xp_rfc_search2 *s, unsigned n)
{
	for (int d = 0; d < 2; d++)
		xp_rfc_search_confirm(&s->d[d], n);
}

/*
 * A direction whose search is over is held at its NDR; one that passed
 * nothing, at the lowest rate it failed (its search's hi): a rate it was
 * seen at, never 0, which the engines read as "as fast as you can".
 */
static double held_rate(const struct xp_rfc_search *s)
{
	double r = s->ndr_pps > 0 ? s->ndr_pps : s->hi;
	return r >= 1 ? floor(r) : 1;
}

bool xp_rfc_search2_next(const struct xp_rfc_search2 *s, double rate[2])
{
	if (s->d[0].done && s->d[1].done) {
		rate[0] = rate[1] = 0;
		return false;
	}
	for (int d = 0; d < 2; d++)
		rate[d] = s->d[d].done ? held_rate(&s->d[d]) : floor(xp_rfc_search_next(&s->d[d]));
	return true;
}

bool xp_rfc_search2_repeating(const struct xp_rfc_search2 *s, int d)
{
	return xp_rfc_search_repeating(&s->d[d]);
}

void xp_rfc_search2_record(struct xp_rfc_search2 *s, const struct xp_rfc_trial *t)
{
	s->trials++;
	bool err = xp_rfc_judge(t, 0) == XP_RFC_ERROR;
	for (int d = 0; d < 2; d++) {
		struct xp_rfc_trial one = xp_rfc_trial_dir(t, d);
		if (s->d[d].done) {
			s->held_trials[d]++;
			if (xp_rfc_judge(&one, 0) != XP_RFC_PASS)
				s->held_failed[d]++;
		} else {
			xp_rfc_search_record(&s->d[d], &one);
		}
		if (err)
			s->d[d].done = true; /* either direction did not run: nothing to go on (the caller reports it) */
	}
}
