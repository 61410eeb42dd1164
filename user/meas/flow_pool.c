/*
 * First-fit allocation of the server's flow entries (meas/flow_pool.h).
 * 1024 bytes scanned at a test's start and end: no need for anything faster.
 */
#include "meas/flow_pool.h"

#include <string.h>

int xp_flow_pool_alloc(struct xp_flow_pool *p, unsigned n)
{
	if (!p || !n || n > XP_FLOW_POOL_SIZE)
		return -1;
	unsigned run = 0;
	for (unsigned i = 0; i < XP_FLOW_POOL_SIZE; i++) {
		run = p->used[i] ? 0 : run + 1;
		if (run == n) {
			unsigned base = i + 1 - n;
			memset(&p->used[base], 1, n);
			return (int)base;
		}
	}
	return -1;
}

void xp_flow_pool_free(struct xp_flow_pool *p, unsigned base, unsigned n)
{
	if (!p || base >= XP_FLOW_POOL_SIZE)
		return;
	if (n > XP_FLOW_POOL_SIZE - base)
		n = XP_FLOW_POOL_SIZE - base;
	memset(&p->used[base], 0, n);
}

unsigned xp_flow_pool_nfree(const struct xp_flow_pool *p)
{
	unsigned n = 0;
	for (unsigned i = 0; p && i < XP_FLOW_POOL_SIZE; i++)
		n += !p->used[i];
	return n;
}

unsigned xp_flow_pool_largest(const struct xp_flow_pool *p)
{
	unsigned run = 0, best = 0;
	for (unsigned i = 0; p && i < XP_FLOW_POOL_SIZE; i++) {
		run = p->used[i] ? 0 : run + 1;
		if (run > best)
			best = run;
	}
	return best;
}
