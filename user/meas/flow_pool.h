/*
 * The server's per-flow counting entries (bpf/measure.h's flow_acct, 1024
 * entries shared by every slot) handed out to tests (issue 26): a test with
 * n flows takes n consecutive entries, first fit, and gives them back when it
 * ends. Consecutive so that a test's flows are base..base+n-1 and its
 * streams map to base + xp_flow_of_stream(s, n, T) (frame/flow_streams.h).
 */
#ifndef XP_MEAS_FLOW_POOL_H
#define XP_MEAS_FLOW_POOL_H

#include <stdint.h>

#define XP_FLOW_POOL_SIZE 1024u

struct xp_flow_pool {
	uint8_t used[XP_FLOW_POOL_SIZE]; /* 1: the entry belongs to a running test */
};

/* The first run of n free entries: its first entry, or -1 (n 0 or too big, or none free that long). */
int xp_flow_pool_alloc(struct xp_flow_pool *p, unsigned n);
/* Give back base..base+n-1 (out of range parts ignored). */
void xp_flow_pool_free(struct xp_flow_pool *p, unsigned base, unsigned n);
/* Entries free in all (for the refusal's message). */
unsigned xp_flow_pool_nfree(const struct xp_flow_pool *p);
/* The longest run of free entries: the most flows a new test can have. */
unsigned xp_flow_pool_largest(const struct xp_flow_pool *p);

#endif /* XP_MEAS_FLOW_POOL_H */
