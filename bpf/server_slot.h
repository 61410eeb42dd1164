/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Whose frame is it: the one rule both server programs (bpf/server.bpf.c at
 * XDP, bpf/server_tc.bpf.c at TC ingress) apply before they count a frame
 * into a slot, so that the two can never disagree about a test's frames.
 * On server_maps.h's slot_peers map (the slot's --bind addresses) and
 * local_addr map (the interface's own addresses).
 *
 * Not in bpf/lib (helpers that hold no map): it reads maps by name.
 * Included by server_maps.h, after the maps. Needs lib/addr.h.
 */
#ifndef XDPPERF_SERVER_SLOT_H
#define XDPPERF_SERVER_SLOT_H

/* Is (family, addr) one of the unicast addresses of interface ifindex
 * (local_addr)? addr: network order, IPv4 in [0]; may point into the
 * frame. */
static __always_inline int xp_is_local(__u32 ifindex, __u32 family, const __u32 *addr)
{
	struct xp_local_key k = { .ifindex = ifindex, .family = family };
	__u32 *v;

	if (family == XP_FAMILY_V6)
		__builtin_memcpy(k.addr, addr, 16);
	else
		k.addr[0] = addr[0];
	v = bpf_map_lookup_elem(&local_addr, &k);
	return v && *v == XP_LOCAL_UNICAST;
}

/*
 * Is the frame addressed to this host: sent to the slot's interface's MAC
 * (cfg->mac, dmac the frame's destination MAC) and to one of the addresses
 * it holds on that interface (daddr, the frame's destination IP)? On a
 * loopback device (XP_SLOT_LOCAL) every frame is. A frame this host only
 * forwards (a router's), or one a DNAT rule after us would send elsewhere,
 * is not, whoever sent it: so neither a client's --bind list nor a forged
 * source can make a test count, drop, answer or reflect it.
 */
static __always_inline int xp_for_us(const struct xp_slot_cfg *cfg, __u32 ifindex, const __u8 *dmac,
				     __u32 family, const __u32 *daddr)
{
	if (cfg->flags & XP_SLOT_LOCAL)
		return 1;
	if (!xp_mac_eq(dmac, cfg->mac))
		return 0;
	/* The address the test's frames are sent to, nearly always: no lookup. */
	if (family == XP_FAMILY_V4 ? cfg->self4 && daddr[0] == cfg->self4
				   : (cfg->self6[0] | cfg->self6[1] | cfg->self6[2] | cfg->self6[3]) &&
					     daddr[0] == cfg->self6[0] && daddr[1] == cfg->self6[1] &&
					     daddr[2] == cfg->self6[2] && daddr[3] == cfg->self6[3])
		return 1;
	return xp_is_local(ifindex, family, daddr);
}

/* What xp_slot_owner makes of a frame. */
enum xp_owner {
	XP_OWN_NO = 0,   /* not the slot's: another interface or source */
	XP_OWN_YES,      /* the slot's: from its client, addressed to this host */
	XP_OWN_NOT_US,   /* from its client on its interface, not addressed to this host:
			  * the test's only with its stamp's tag (lib/stamp.h), which
			  * only bpf/server.bpf.c checks */
	XP_OWN_TAGGED,   /* XP_OWN_NOT_US with the right tag (server.bpf.c's xp_tag_ok) */
};

/* Whose is a frame that arrived on ifindex from (family, addr), to dmac
 * and daddr: the slot's interface, from its client's address or one of
 * its --bind addresses, and addressed to this host (xp_for_us) or not. */
static __always_inline enum xp_owner xp_slot_owner(const struct xp_slot_cfg *cfg, __u32 slot, __u32 ifindex,
						   __u32 family, const __u32 addr[4], const __u8 *dmac,
						   const __u32 *daddr)
{
	struct xp_peer_key k = { .slot = slot, .family = family };

	if (cfg->ifindex != ifindex || !cfg->peer_family)
		return XP_OWN_NO;
	if (!(cfg->peer_family == family && cfg->peer[0] == addr[0] && cfg->peer[1] == addr[1] &&
	      cfg->peer[2] == addr[2] && cfg->peer[3] == addr[3])) {
		if (!cfg->npeers)
			return XP_OWN_NO;
		__builtin_memcpy(k.addr, addr, 16);
		if (!bpf_map_lookup_elem(&slot_peers, &k))
			return XP_OWN_NO;
	}
	return xp_for_us(cfg, ifindex, dmac, family, daddr) ? XP_OWN_YES : XP_OWN_NOT_US;
}

/* 1 if the frame belongs to the slot without a tag: xp_slot_owner says
 * XP_OWN_YES. (The TC program's rule: socket tests' segments carry no
 * stamp.) */
static __always_inline int xp_slot_owns(const struct xp_slot_cfg *cfg, __u32 slot, __u32 ifindex,
					__u32 family, const __u32 addr[4], const __u8 *dmac,
					const __u32 *daddr)
{
	return xp_slot_owner(cfg, slot, ifindex, family, addr, dmac, daddr) == XP_OWN_YES;
}

#endif /* XDPPERF_SERVER_SLOT_H */
