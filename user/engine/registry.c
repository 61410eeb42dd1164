/*
 * The engine table: each engine's ops by its id (the ids and their names are
 * spec/engine_names.h, for the CLI, the protocol and the report), and the
 * choice `auto` makes. The client asks here for an engine by id and never
 * falls back itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/devcheck.h"
#include "engine/engine.h"

static const struct {
	const struct xp_engine_ops *ops; /* NULL for auto */
} engines[XP_ENGINE_COUNT] = {
	[XP_ENGINE_AUTO] = { NULL },
	[XP_ENGINE_XSK] = { &xp_engine_xsk },
	[XP_ENGINE_LIVE] = { &xp_engine_live },
	[XP_ENGINE_SOCKET] = { &xp_engine_socket },
	[XP_ENGINE_NONE] = { &xp_engine_none },
	[XP_ENGINE_XDP] = { &xp_engine_xdp },
};

/* What auto tries, in order: XDP live frames are ~3x AF_XDP where the kernel has them. */
static const enum xp_engine_id auto_candidates[] = { XP_ENGINE_LIVE, XP_ENGINE_XSK };

const struct xp_engine_ops *xp_engine_ops_of(enum xp_engine_id id)
{
	if (id == XP_ENGINE_AUTO)
		return engines[auto_candidates[0]].ops;
	return (unsigned)id < XP_ENGINE_COUNT ? engines[id].ops : NULL;
}

static int open_one(const struct xp_engine_ops *ops, const struct xp_engine_cfg *cfg, struct xp_engine **out,
		    char *err, size_t errlen)
{
	/* First whether its frames would leave by this device at all (what --probe says of it). */
	int r = xp_engine_dev_check(ops, cfg, err, errlen);
	if (!r && ops->probe)
		r = ops->probe(cfg, err, errlen);
	if (!r)
		r = ops->create(cfg, out, err, errlen);
	if (r)
		*out = NULL;
	return r;
}

/* xp_engine_open's report with -d: why auto passed a candidate over. */
static void debug_passed(const char *name, const char *why, const char *next, void *arg)
{
	if (next)
		fprintf(stderr, "xdpperf: %s engine unavailable (%s); using %s\n", name, why, next);
}

int xp_engine_open_traced(enum xp_engine_id id, const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops,
			  struct xp_engine **out, char *err, size_t errlen, xp_engine_passed_fn *passed, void *arg)
{
	*out = NULL;
	if (id != XP_ENGINE_AUTO) {
		*ops = xp_engine_ops_of(id);
		if (!*ops) {
			snprintf(err, errlen, "no engine number %d", (int)id);
			return -EINVAL;
		}
		return open_one(*ops, cfg, out, err, errlen);
	}
	int r = -ENOENT;
	size_t n = sizeof(auto_candidates) / sizeof(auto_candidates[0]);
	for (size_t i = 0; i < n; i++) {
		*ops = engines[auto_candidates[i]].ops;
		r = open_one(*ops, cfg, out, err, errlen);
		if (!r)
			return 0;
		if (passed)
			passed((*ops)->name, err, i + 1 < n ? xp_engine_name(auto_candidates[i + 1]) : NULL, arg);
	}
	return r;
}

int xp_engine_open(enum xp_engine_id id, const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops,
		   struct xp_engine **out, char *err, size_t errlen)
{
	return xp_engine_open_traced(id, cfg, ops, out, err, errlen, cfg->debug ? debug_passed : NULL, NULL);
}
