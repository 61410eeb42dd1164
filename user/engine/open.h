/*
 * Opening an engine out of candidates: the first whose device check, probe
 * and create succeed. The registry opens an engine by id through it (auto:
 * its candidates in order), and the XDP connection engine its SYN sender
 * (live or xsk), so that engine needs nothing of the registry that lists it.
 */
#ifndef XP_ENGINE_OPEN_H
#define XP_ENGINE_OPEN_H

#include <stddef.h>

#include "engine/engine.h"

/*
 * Try cands[0..n-1] in order; 0 with *ops and *out set for the first that
 * opens, or the last one's -errno with its reason in err. passed (may be
 * NULL) hears of each that could not, with the name of the one tried next
 * (NULL after the last).
 */
int xp_engine_open_first(const struct xp_engine_ops *const *cands, size_t n, const struct xp_engine_cfg *cfg,
			 const struct xp_engine_ops **ops, struct xp_engine **out, char *err, size_t errlen,
			 xp_engine_passed_fn *passed, void *arg);

/* -d's passed: "xdpperf: live engine unavailable (why); using xsk" on stderr. */
xp_engine_passed_fn xp_engine_passed_debug;

#endif
