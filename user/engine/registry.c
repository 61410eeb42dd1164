/*
 * The engine table: each engine's ops by its id (the ids and their names are
 * spec/engine_names.h, for the CLI, the protocol and the report), and the
 * choice `auto` makes. The client asks here for an engine by id and never
 * falls back itself. Opening is engine/open.c's, which the XDP connection
 * engine uses for its SYN sender without coming back here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/open.h"

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

int xp_engine_open_traced(enum xp_engine_id id, const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops,
			  struct xp_engine **out, char *err, size_t errlen, xp_engine_passed_fn *passed, void *arg)
{
	*out = NULL;
	if (id != XP_ENGINE_AUTO) {
		const struct xp_engine_ops *one = xp_engine_ops_of(id);
		if (!one) {
			snprintf(err, errlen, "no engine number %d", (int)id);
			return -EINVAL;
		}
		return xp_engine_open_first(&one, 1, cfg, ops, out, err, errlen, NULL, NULL);
	}
	const struct xp_engine_ops *cands[sizeof(auto_candidates) / sizeof(auto_candidates[0])];
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		cands[i] = engines[auto_candidates[i]].ops;
	return xp_engine_open_first(cands, sizeof(cands) / sizeof(cands[0]), cfg, ops, out, err, errlen, passed, arg);
}

int xp_engine_open(enum xp_engine_id id, const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops,
		   struct xp_engine **out, char *err, size_t errlen)
{
	return xp_engine_open_traced(id, cfg, ops, out, err, errlen, cfg->debug ? xp_engine_passed_debug : NULL, NULL);
}
