/*
 * The order in which a sending thread sends its flows' frames (issue 26):
 * a pattern of flow indices, each flow as often as its share of the
 * thread's rate, spread out as a mix spreads its sizes (frame/mix.h), not
 * in bursts per flow. Frame k of the thread is of flow
 * sched.flow[k % sched.len]. Rates are kept to the pattern's resolution:
 * a flow's count in it is its rate's share rounded to 1/XP_FLOW_SCHED_MAX
 * (largest remainder), at least 1.
 */
#ifndef XP_ENGINE_FLOW_SCHED_H
#define XP_ENGINE_FLOW_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "frame/flow_streams.h"

#define XP_FLOW_SCHED_MAX 4096u

struct xp_flow_sched {
	unsigned len;                       /* pattern length, 0: this thread sends no flow */
	uint16_t flow[XP_FLOW_SCHED_MAX];   /* index into the flows array */
	unsigned count[XP_FLOW_MAX_STREAMS]; /* frames of each flow per pattern */
	double pps;                         /* this thread's rate: the sum of its flows' shares, 0 = unpaced */
};

/*
 * The pattern of thread t of nthreads for flows[0..nflows): the flows it
 * sends (frame/flow_streams.h) weighted by pps * share; flows all at pps 0
 * (as fast as possible) weigh alike. 0, or -1 with err (a mix of paced and
 * unpaced flows, more flows than XP_FLOW_MAX_STREAMS).
 */
int xp_flow_sched_build(const struct xp_engine_flow *flows, unsigned nflows, unsigned t, unsigned nthreads,
			struct xp_flow_sched *s, char *err, size_t errlen);

#endif /* XP_ENGINE_FLOW_SCHED_H */
