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

/* 1 if a frame that arrived on ifindex from (family, addr), to dmac and
 * daddr, belongs to the slot: its interface, addressed to this host
 * (xp_for_us), and from its client's address or one of its --bind
 * addresses. */
static __always_inline int xp_slot_owns(const struct xp_slot_cfg *cfg, __u32 slot, __u32 ifindex,
					__u32 family, const __u32 addr[4], const __u8 *dmac,
					const __u32 *daddr)
{
	struct xp_peer_key k = { .slot = slot, .family = family };

	if (cfg->ifindex != ifindex || !cfg->peer_family)
		return 0;
	if (!xp_for_us(cfg, ifindex, dmac, family, daddr))
		return 0;
	if (cfg->peer_family == family && cfg->peer[0] == addr[0] && cfg->peer[1] == addr[1] &&
	    cfg->peer[2] == addr[2] && cfg->peer[3] == addr[3])
		return 1;
	if (!cfg->npeers)
		return 0;
	__builtin_memcpy(k.addr, addr, 16);
	return bpf_map_lookup_elem(&slot_peers, &k) != NULL;
}

#endif /* XDPPERF_SERVER_SLOT_H */
