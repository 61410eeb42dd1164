/*
 * Attach churn (issue 28 point 5). On many NIC drivers attaching or detaching
 * an XDP program in native mode resets the rings, which hits all the host's
 * traffic, and a client could start and stop tests in a loop. Two bounds:
 *
 *  - the XDP program stays on an interface XP_SRV_XDP_LINGER s after its
 *    last test ends (with no test it has no slot and passes every frame), so
 *    tests that follow each other share one attach;
 *  - each /24 or /64 (policy.h) may start XP_SRV_START_BURST tests at once,
 *    then XP_SRV_START_PER_S a second (a token bucket), reverse trials too.
 *
 * The TC counter (socket tests) is not kept: tcx and clsact attaches reset
 * nothing.
 */
#include <stdio.h>
#include <string.h>

#include "server/state.h"
#include "util/time.h"

static struct srv_linger *linger_of(struct server *s, int ifindex)
{
	for (int i = 0; i < XP_SRV_MAX_LINGER; i++)
		if (s->linger[i].ifindex == ifindex)
			return &s->linger[i];
	return NULL;
}

void srv_xdp_release(struct server *s, int ifindex)
{
	double until = xp_now() + XP_SRV_XDP_LINGER;
	struct srv_linger *l = linger_of(s, ifindex);
	if (l) {
		/* The lingering reference holds it: this test's goes now. */
		server_prog_detach(s->rp, ifindex);
		l->until = until;
		return;
	}
	l = linger_of(s, 0);
	if (!l) {
		server_prog_detach(s->rp, ifindex);
		return;
	}
	/* This test's reference becomes the lingering one. */
	*l = (struct srv_linger){ .ifindex = ifindex, .until = until };
}

void srv_xdp_linger_drop(struct server *s, int ifindex)
{
	struct srv_linger *l = linger_of(s, ifindex);
	if (!l)
		return;
	server_prog_detach(s->rp, ifindex);
	*l = (struct srv_linger){ 0 };
}

void srv_xdp_linger_check(struct server *s, int ifindex, bool want_hwts)
{
	const char *why;
	/* The program there is the other variant (NIC times or not): only a
	 * fresh attach chooses, so the lingering one goes first. */
	if (linger_of(s, ifindex) && server_prog_hwts_on(s->rp, ifindex, &why) != want_hwts)
		srv_xdp_linger_drop(s, ifindex);
}

void srv_xdp_linger_expire(struct server *s, bool all, double *next)
{
	double now = xp_now();
	for (int i = 0; i < XP_SRV_MAX_LINGER; i++) {
		struct srv_linger *l = &s->linger[i];
		if (!l->ifindex)
			continue;
		if (all || now >= l->until) {
			server_prog_detach(s->rp, l->ifindex);
			*l = (struct srv_linger){ 0 };
		} else if (next && l->until < *next) {
			*next = l->until;
		}
	}
}

int srv_start_rate(struct server *s, const struct xp_addr *peer, char *err, size_t errlen)
{
	struct xp_cidr blk;
	xp_policy_addr_block(peer, &blk);
	struct srv_rate *r = NULL, *free_r = NULL, *lru = NULL;
	for (int i = 0; i < XP_SRV_RATE_BLOCKS && !r; i++) {
		struct srv_rate *k = &s->rates[i];
		if (!k->blk.plen)
			free_r = free_r ? free_r : k;
		else if (k->blk.plen == blk.plen && xp_addr_eq(&k->blk.net, &blk.net))
			r = k;
		else if (!lru || k->b.t < lru->b.t)
			lru = k;
	}
	if (!r) {
		/* A block not seen lately starts with a full bucket; the one seen least recently is forgotten. */
		r = free_r ? free_r : lru;
		*r = (struct srv_rate){ .blk = blk };
	}
	if (xp_policy_rate_take(&r->b, xp_now(), XP_SRV_START_BURST, XP_SRV_START_PER_S))
		return 0;
	char bs[64];
	xp_addr_str(&blk.net, bs, sizeof(bs));
	snprintf(err, errlen, "too many test starts from %s/%u: the server takes %.0f at once, then %.0f a second; "
		 "try again in a moment", bs, blk.plen, XP_SRV_START_BURST, XP_SRV_START_PER_S);
	return -1;
}
