/*
 * Before an engine opens: can it work on the test's device at all? The same
 * answer --probe gives (loader/live_out.h), so that auto passes over an engine
 * whose frames the device would drop, and an explicit one is refused with
 * the reason instead of a test that reports 100 % loss and no cause.
 */
#ifndef XP_ENGINE_DEVCHECK_H
#define XP_ENGINE_DEVCHECK_H

#include <stddef.h>

#include "engine/engine.h"

/* 0, or -EOPNOTSUPP with err set (one line, with the way out). */
int xp_engine_dev_check(const struct xp_engine_ops *ops, const struct xp_engine_cfg *cfg, char *err, size_t errlen);

#endif
