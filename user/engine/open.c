/* Opening the first engine of a list that can run here; see engine/open.h. */
#include "engine/open.h"

#include <errno.h>
#include <stdio.h>

#include "engine/devcheck.h"

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

void xp_engine_passed_debug(const char *name, const char *why, const char *next, void *arg)
{
	if (next)
		fprintf(stderr, "xdpperf: %s engine unavailable (%s); using %s\n", name, why, next);
}

int xp_engine_open_first(const struct xp_engine_ops *const *cands, size_t n, const struct xp_engine_cfg *cfg,
			 const struct xp_engine_ops **ops, struct xp_engine **out, char *err, size_t errlen,
			 xp_engine_passed_fn *passed, void *arg)
{
	int r = -ENOENT;

	*out = NULL;
	for (size_t i = 0; i < n; i++) {
		*ops = cands[i];
		r = open_one(cands[i], cfg, out, err, errlen);
		if (!r)
			return 0;
		if (passed)
			passed(cands[i]->name, err, i + 1 < n ? cands[i + 1]->name : NULL, arg);
	}
	return r;
}
