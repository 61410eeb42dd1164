/* Rate control of the sending engines. See pacer.h. */
#include "engine/pacer.h"

#include <math.h>
#include <stddef.h>

#include "util/time.h"

void xp_pacer_init(struct xp_pacer *p, const struct xp_pacer_cfg *c, double now)
{
	unsigned n = c->nthreads ? c->nthreads : 1;
	p->pps = c->pps > 0 ? c->pps : 0;
	p->t0 = now;
	p->base = 0;
	p->cap = 0;
	p->sent = 0;
	p->left = 0;
	p->coalesce = c->coalesce;
	p->grant_limit = c->max_grant;
	p->catchups = 0;
	p->max_grant = 0;
	p->excess = 0;
	p->allow = p->allow_max = 0;
	p->t_allow = now;
	if (!p->pps) {
		p->unit = c->unpaced ? c->unpaced : 1;
		return;
	}
	if (c->burst)
		p->unit = c->burst;
	else
		p->unit = p->pps * XP_PACE_SLICE_S < 1 ? 1 : (uint32_t)(p->pps * XP_PACE_SLICE_S + 0.5);
	p->cap = p->pps * XP_PACE_CATCHUP_S;
	if (p->cap < 2.0 * p->unit)
		p->cap = 2.0 * p->unit;
	/* The first unit is due at once; thread k starts k/n of a unit's period
	 * later, so that the threads' units interleave evenly. */
	p->base = p->unit * (1.0 - (double)(c->thread % n) / n);
	if (c->catchup_excess > 0) {
		p->excess = c->catchup_excess;
		p->allow_max = p->pps * XP_PACE_SMOOTH_S;
		if (p->allow_max < 2.0 * p->unit)
			p->allow_max = 2.0 * p->unit;
		p->allow = p->allow_max;
	}
}

uint32_t xp_pacer_poll(struct xp_pacer *p, double now, double *wait)
{
	if (!p->pps)
		return p->unit;
	if (p->left)
		return p->left;
	double due = (now - p->t0) * p->pps + p->base - (double)p->sent;
	if (due > p->cap) { /* a long stall: forgive what is beyond the cap */
		p->base -= due - p->cap;
		due = p->cap;
	}
	if (due < p->unit) {
		if (wait)
			*wait = (p->unit - due) / p->pps;
		return 0;
	}
	if (p->excess > 0) { /* smooth catch-up: what the second bucket holds bounds the grant */
		p->allow += (now - p->t_allow) * p->pps * (1 + p->excess);
		p->t_allow = now;
		if (p->allow > p->allow_max)
			p->allow = p->allow_max;
		if (p->allow < p->unit) {
			if (wait)
				*wait = (p->unit - p->allow) / (p->pps * (1 + p->excess));
			return 0;
		}
		if (due > p->allow)
			due = p->allow;
	}
	p->left = p->unit;
	if (p->coalesce && due >= 2.0 * p->unit) {
		/* Behind by two units or more: all whole units due in one grant. */
		double units = (double)(uint64_t)(due / p->unit);
		double n = units * p->unit;
		/* A grant is one call: bounded, so the call stays short (the engine's deadline and stop()). */
		double lim = p->grant_limit ? (double)p->grant_limit : (double)UINT32_MAX;
		if (n > lim)
			n = lim < p->unit ? p->unit : lim - fmod(lim, p->unit);
		p->left = (uint32_t)n;
		p->catchups++;
	}
	if (p->excess > 0)
		p->allow -= p->left;
	if (p->left > p->max_grant)
		p->max_grant = p->left;
	return p->left;
}

void xp_pacer_sent(struct xp_pacer *p, uint32_t n)
{
	p->sent += n;
	p->left = n < p->left ? p->left - n : 0;
}

uint32_t xp_pacer_next(struct xp_pacer *p)
{
	if (!p->pps)
		return p->unit;
	if (p->left)
		return p->left;
	double wait = 0;
	uint32_t n = xp_pacer_poll(p, xp_now(), &wait);
	if (!n && wait > XP_PACE_SPIN_S)
		xp_sleep(wait - XP_PACE_SPIN_S < XP_PACE_MAX_SLEEP ? wait - XP_PACE_SPIN_S : XP_PACE_MAX_SLEEP);
	return n;
}
