/* A thread's order of its flows' frames: see flow_sched.h. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "engine/flow_sched.h"
#include "util/units.h"

int xp_flow_sched_build(const struct xp_engine_flow *flows, unsigned nflows, unsigned t, unsigned nthreads,
			struct xp_flow_sched *s, char *err, size_t errlen)
{
	double w[XP_FLOW_MAX_STREAMS], sum = 0;
	unsigned paced = 0, mine = 0;

	memset(s, 0, sizeof(*s));
	if (nflows > XP_FLOW_MAX_STREAMS) {
		snprintf(err, errlen, "%u flows: a test has at most %u", nflows, XP_FLOW_MAX_STREAMS);
		return -1;
	}
	for (unsigned f = 0; f < nflows; f++)
		paced += flows[f].pps > 0;
	if (paced && paced != nflows) {
		snprintf(err, errlen, "%u of %u flows have a rate: give every flow a rate, or none", paced, nflows);
		return -1;
	}
	for (unsigned f = 0; f < nflows; f++) {
		double share = xp_flow_share(f, t, nflows, nthreads);
		w[f] = share * (paced ? flows[f].pps : 1.0);
		mine += w[f] > 0;
		sum += w[f];
		if (paced)
			s->pps += w[f];
	}
	if (!mine)
		return 0;
	/* The shortest pattern whose counts are the shares exactly (1:15, 1:1:1), else
	 * counts by largest remainder out of XP_FLOW_SCHED_MAX, each at least 1. */
	unsigned total = 0, room = XP_FLOW_SCHED_MAX;
	for (unsigned len = mine; len <= XP_FLOW_SCHED_MAX; len++) {
		bool exact = true;
		for (unsigned f = 0; f < nflows && exact; f++) {
			double want = w[f] / sum * len;
			exact = !(w[f] > 0) || (want >= 0.5 && fabs(want - round(want)) < 1e-6 * len);
		}
		if (exact) {
			room = len;
			break;
		}
	}
	double rem[XP_FLOW_MAX_STREAMS];
	for (unsigned f = 0; f < nflows; f++) {
		if (!(w[f] > 0))
			continue;
		double want = w[f] / sum * room;
		s->count[f] = (unsigned)floor(want);
		rem[f] = want - s->count[f];
		if (!s->count[f]) {
			s->count[f] = 1;
			rem[f] = -1;
		}
		total += s->count[f];
	}
	while (total < room) {
		int best = -1;
		for (unsigned f = 0; f < nflows; f++)
			if (w[f] > 0 && rem[f] >= 0 && (best < 0 || rem[f] > rem[best]))
				best = (int)f;
		if (best < 0)
			break;
		s->count[best]++;
		rem[best] = -1;
		total++;
	}
	while (total > room) { /* the minimum of 1 overshot: take from the largest */
		unsigned big = 0;
		for (unsigned f = 1; f < nflows; f++)
			if (s->count[f] > s->count[big])
				big = f;
		s->count[big]--;
		total--;
	}
	/* The shortest pattern with the same proportions. */
	unsigned g = 0;
	for (unsigned f = 0; f < nflows; f++)
		if (s->count[f])
			g = xp_gcd(g, s->count[f]);
	total = 0;
	for (unsigned f = 0; f < nflows; f++) {
		s->count[f] /= g ? g : 1;
		total += s->count[f];
	}
	/* Smooth weighted round robin: each step every flow gains its count, the
	 * one ahead is sent and loses the total; a flow's frames come evenly spaced. */
	long cur[XP_FLOW_MAX_STREAMS] = { 0 };
	for (unsigned k = 0; k < total; k++) {
		int best = -1;
		for (unsigned f = 0; f < nflows; f++) {
			if (!s->count[f])
				continue;
			cur[f] += s->count[f];
			if (best < 0 || cur[f] > cur[best])
				best = (int)f;
		}
		cur[best] -= total;
		s->flow[k] = (uint16_t)best;
	}
	s->len = total;
	return 0;
}
