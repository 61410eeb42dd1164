/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Whose frame is it: the one rule both server programs (bpf/server.bpf.c at
 * XDP, bpf/server_tc.bpf.c at TC ingress) apply before they count a frame
 * into a slot, so that the two can never disagree about a test's frames.
 * On server_maps.h's slot_peers map (the slot's --bind addresses).
 *
 * Not in bpf/lib (helpers that hold no map): it reads a map by name.
 * Included by server_maps.h, after the maps.
 */
#ifndef XDPPERF_SERVER_SLOT_H
#define XDPPERF_SERVER_SLOT_H

/* 1 if a frame that arrived on ifindex from (family, addr) belongs to the
 * slot: its interface, and its client's address or one of its --bind
 * addresses. */
static __always_inline int xp_slot_owns(const struct xp_slot_cfg *cfg, __u32 slot, __u32 ifindex,
					__u32 family, const __u32 addr[4])
{
	struct xp_peer_key k = { .slot = slot, .family = family };

	if (cfg->ifindex != ifindex || !cfg->peer_family)
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
