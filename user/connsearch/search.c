/* The connection searches' bookkeeping; see search.h. Pure: no I/O, no clock. */
#include "connsearch/search.h"

#include <string.h>

const char *xp_cs_mode_name(enum xp_cs_mode m)
{
	switch (m) {
	case XP_CS_RATE: return "rate";
	case XP_CS_CAPACITY: return "capacity";
	case XP_CS_TEARDOWN: return "teardown";
	default: return "none";
	}
}

int xp_cs_mode_parse(const char *s, enum xp_cs_mode *m)
{
	static const enum xp_cs_mode all[] = { XP_CS_RATE, XP_CS_CAPACITY, XP_CS_TEARDOWN };
	for (unsigned i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!strcmp(s, xp_cs_mode_name(all[i]))) {
			*m = all[i];
			return 0;
		}
	}
	return -1;
}

uint64_t xp_cs_ok(const struct xp_cs_trial *t)
{
	uint64_t ok;
	switch (t->mode) {
	case XP_CS_CAPACITY:
		ok = t->held;
		break;
	case XP_CS_TEARDOWN:
		/* A close counts once the handshake did too: never more than established. */
		ok = t->closed < t->established ? t->closed : t->established;
		break;
	default:
		ok = t->established;
	}
	return ok;
}

uint64_t xp_cs_failed(const struct xp_cs_trial *t)
{
	uint64_t asked = t->mode == XP_CS_CAPACITY ? t->want : t->started, ok = xp_cs_ok(t);
	uint64_t f = asked > ok ? asked - ok : 0;
	/* The client's own count of failures (timed out, reset, unreachable, still
	 * waiting, closes given up) can see what the server's count cannot: a
	 * connection the server completed whose close then failed, say. */
	uint64_t own = t->fail_timeout + t->fail_reset + t->fail_unreach + t->in_flight +
		       (t->mode == XP_CS_TEARDOWN ? t->fin_timeout : 0);
	return own > f ? own : f;
}

enum xp_rfc_verdict xp_cs_judge(const struct xp_cs_trial *t)
{
	if (t->error || !t->started)
		return XP_RFC_ERROR;
	if (xp_cs_failed(t))
		return XP_RFC_LOSS;
	/* No failure, but below the rate asked: that rate was not tried. Capacity
	 * opens at its rate only to get there; the count is what it measures. */
	if (t->short_of_target && t->mode != XP_CS_CAPACITY)
		return XP_RFC_SHORT;
	return XP_RFC_PASS;
}

struct xp_rfc_trial xp_cs_as_rfc(const struct xp_cs_trial *t)
{
	uint64_t failed = xp_cs_failed(t);
	uint64_t sent = t->started > failed ? t->started : failed;
	return (struct xp_rfc_trial){ .target_pps = t->target_cps, .seconds = t->seconds, .sent = sent,
				      .received = sent - failed, .offered_pps = t->offered_cps,
				      .short_of_target = t->short_of_target, .held_back_by = t->held_back_by,
				      .error = t->error || !t->started };
}

void xp_cs_cap_init(struct xp_cs_cap *c, uint64_t max, double res_pct)
{
	*c = (struct xp_cs_cap){ .lo = 0, .hi = max + 1, .max = max, .res_pct = res_pct > 0 ? res_pct : 1 };
	c->done = max == 0;
}

/* The resolution at n connections, at least one. */
static uint64_t cap_step(const struct xp_cs_cap *c, uint64_t n)
{
	uint64_t s = (uint64_t)((double)n * c->res_pct / 100);
	return s ? s : 1;
}

uint64_t xp_cs_cap_next(const struct xp_cs_cap *c)
{
	if (c->done)
		return 0;
	if (!c->trials)
		return c->max;
	if (c->hint > c->lo && c->hint < c->hi)
		return c->hint;
	/* The hint held all: the capacity is at least that; one step above it
	 * says whether it is the limit, to the resolution (of the smaller N,
	 * so that a failure there ends the search). */
	if (c->hint_passed && c->lo + cap_step(c, c->lo) < c->hi)
		return c->lo + cap_step(c, c->lo);
	uint64_t mid = c->lo + (c->hi - c->lo) / 2;
	return mid > c->lo ? mid : c->lo + 1;
}

void xp_cs_cap_record(struct xp_cs_cap *c, const struct xp_cs_trial *t)
{
	uint64_t n = t->want;
	bool was_hint = c->hint && n == c->hint;
	enum xp_rfc_verdict v = xp_cs_judge(t);
	c->trials++;
	c->hint_passed = false;
	if (v == XP_RFC_ERROR) {
		c->done = true;
		return;
	}
	if (v == XP_RFC_PASS) {
		if (n > c->lo) {
			c->lo = n;
			c->lo_tested = true;
		}
		c->hint_passed = was_hint;
		c->hint = 0;
		if (n >= c->max)
			c->done = true;
	} else {
		if (n < c->hi)
			c->hi = n;
		/* What it held is what the device took: likely its capacity. */
		c->hint = t->held > c->lo && t->held < c->hi ? t->held : 0;
	}
	if (c->hi <= c->lo + cap_step(c, c->hi) || c->hi <= 1)
		c->done = true;
}

uint64_t xp_cs_cap_result(const struct xp_cs_cap *c, bool *at_max)
{
	if (at_max)
		*at_max = c->lo_tested && c->lo >= c->max;
	return c->lo_tested ? c->lo : 0;
}

bool xp_cs_drained(uint64_t table_now, uint64_t baseline)
{
	return table_now <= baseline + XP_CS_DRAIN_SLACK;
}

double xp_cs_cap_seconds(uint64_t want, double cps, double trial_s)
{
	double open_s = cps > 0 ? (double)want / cps : 0;
	double s = open_s + 2;
	return s > trial_s ? s : trial_s;
}
