/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Round-trip mode (issue 10, hosts with different clocks): turn a received
 * stamped test frame into the same frame going back to its sender, in
 * place, for XDP_TX. The server's program (bpf/server.bpf.c, slots with
 * XP_SLOT_REFLECT) does it after the frame was counted and accounted; the
 * client's program (bpf/rtt.bpf.c) then reads the stamp, which this leaves
 * where it was (payload, and the IPv4 ID of a 64-byte frame), and times it
 * on the client's own clock.
 *
 * What changes, and what that does to the checksums:
 *   - MACs, IP addresses and ports swapped: sums are commutative, so the
 *     IPv4 header checksum and the TCP/UDP checksum (whose pseudo-header
 *     holds both addresses) stay valid without a change.
 *   - TCP seq and ack swapped: the same 16-bit words in another order, so
 *     neutral as well. A reply from the far end would carry the client's
 *     ack as its seq and acknowledge the client's seq; a stateful device on
 *     the way (conntrack's loose pick-up) then sees something like the
 *     other direction of the stream rather than the client's own segment
 *     coming back.
 *   - TTL / hop limit reset to XP_REPLY_TTL: the way back gets a fresh hop
 *     budget as a sent frame would (the way out used up part of it). IPv6
 *     has no header checksum and the hop limit is not in the pseudo-header;
 *     the IPv4 header checksum is updated incrementally (RFC 1624, csum.h).
 * The frame keeps its length: nothing is resized, so no packet pointer the
 * caller holds goes stale.
 *
 * Refused (-1, the caller drops the frame): a multicast or broadcast MAC on
 * either side, or an IP address on either side that is not one host's
 * (lib/addr.h): a reflection would send from or to it. The source is the
 * slot's client already and the destination one of this host's own
 * addresses, sent to its MAC (the server checked both, xp_slot_owns in
 * bpf/server_slot.h: a frame it only forwards is never reflected, which
 * would send it back from an address that is not ours), so this only keeps
 * a frame from or to a group or a broadcast from being echoed.
 *
 * Include after vmlinux.h, bpf_endian.h, lib/addr.h and lib/csum.h
 * (XP_REPLY_TTL: lib/tcp_reply.h, or define it first).
 */
#ifndef XDPPERF_LIB_REFLECT_H
#define XDPPERF_LIB_REFLECT_H

#ifndef XP_REPLY_TTL
#define XP_REPLY_TTL 64
#endif

/* Swap a and b, n bytes each (n a constant: unrolled). */
static __always_inline void xp_swap_bytes(__u8 *a, __u8 *b, const int n)
{
	int i;

#pragma unroll
	for (i = 0; i < n; i++) {
		__u8 t = a[i];

		a[i] = b[i];
		b[i] = t;
	}
}

/*
 * Reflect the frame at data: l3 its IPv4 (no options needed: only fixed
 * fields are touched) or IPv6 header (is_v6), l4 its TCP or UDP header
 * (is_tcp). 0, or -1 (refused, frame untouched).
 */
static __always_inline int xp_reflect(void *data, void *data_end, void *l3, void *l4, int is_v6, int is_tcp)
{
	struct ethhdr *eth = data;
	__u16 *ports = l4;

	if ((void *)(eth + 1) > data_end || (void *)(ports + 2) > data_end)
		return -1;
	if (is_tcp && (void *)((struct tcphdr *)l4 + 1) > data_end)
		return -1;
	if (!xp_mac_unicast(eth->h_source) || !xp_mac_unicast(eth->h_dest))
		return -1;
	if (is_v6) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		if (!xp_ipv6_unicast((__u32 *)&ip6h->saddr) || !xp_ipv6_unicast((__u32 *)&ip6h->daddr))
			return -1;
		xp_swap_bytes((__u8 *)&ip6h->saddr, (__u8 *)&ip6h->daddr, 16);
		ip6h->hop_limit = XP_REPLY_TTL;
	} else {
		struct iphdr *iph = l3;
		__u16 old, neww;
		__u32 a;

		if ((void *)(iph + 1) > data_end)
			return -1;
		if (!xp_ipv4_unicast(iph->saddr) || !xp_ipv4_unicast(iph->daddr))
			return -1;
		a = iph->saddr;
		iph->saddr = iph->daddr;
		iph->daddr = a;
		/* TTL and protocol are one 16-bit word of the checksum, here as
		 * it lies in memory (like check). Built from the fields, not
		 * loaded through a __u16 pointer over them: clang took that
		 * load to be unchanged by the TTL store and cancelled the
		 * update (seen: the reflected header's sum was off by exactly
		 * the TTL change). */
		old = bpf_htons((__u16)(iph->ttl << 8 | iph->protocol));
		neww = bpf_htons((__u16)(XP_REPLY_TTL << 8 | iph->protocol));
		iph->ttl = XP_REPLY_TTL;
		iph->check = xp_csum_replace(iph->check, old, neww, 1);
	}
	if (is_tcp) {
		struct tcphdr *th = l4;
		__u32 seq;

		if ((void *)(th + 1) > data_end)
			return -1;
		seq = th->seq;
		th->seq = th->ack_seq;
		th->ack_seq = seq;
	}
	xp_swap_bytes((__u8 *)&ports[0], (__u8 *)&ports[1], 2);
	xp_swap_bytes(eth->h_source, eth->h_dest, 6);
	return 0;
}

#endif /* XDPPERF_LIB_REFLECT_H */
