/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Bounds-checked packet parsing helpers for the XDP programs in bpf/.
 *
 * Every parser takes a cursor and data_end, checks that the whole header it
 * hands back lies inside the packet, and advances the cursor past it. They
 * return 0 on success and XP_PARSE_ERR when the header is truncated or
 * carries impossible values (IHL < 5, version mismatch, lengths larger than
 * the frame); callers treat that as "malformed" and leave the frame alone.
 *
 * Include after vmlinux.h and <bpf/bpf_endian.h>. Only fixed-layout wire
 * fields are read through the vmlinux.h structs; bitfields (IHL, version,
 * data offset, TCP flags) are read as whole bytes because their bitfield
 * layout in vmlinux.h is host-endian specific and wire formats are not.
 */
#ifndef XDPPERF_PARSING_H
#define XDPPERF_PARSING_H

#include "consts.h"

/* How many VLAN tags (802.1Q or 802.1AD, any order) parse_ethhdr skips. */
#define XP_VLAN_MAX_DEPTH 2

#define XP_PARSE_ERR  (-1)

/*
 * pos: where the next header starts. frags: bytes of the frame past
 * data_end, in the fragments of a multi-buffer frame (an XDP program loaded
 * with BPF_F_XDP_HAS_FRAGS: bpf_xdp_get_buff_len - (data_end - data)); 0 for
 * a frame that is all in its first buffer, as every frame of a program
 * without frags is. The headers must lie in the first buffer; only the IP
 * lengths may reach into the fragments.
 */
struct hdr_cursor {
	void *pos;
	__u32 frags;
};

/* Does len bytes from c->pos fit the frame (its first buffer and, for a
 * multi-buffer frame, its fragments)? */
static __always_inline int xp_fits(const struct hdr_cursor *c, void *data_end, __u32 len)
{
	if (c->pos + len <= data_end)
		return 1;
	/* (data_end - pos: both packet pointers, pos <= data_end here.) */
	return c->frags && (__u64)len <= (__u64)(data_end - c->pos) + c->frags;
}

static __always_inline int proto_is_vlan(__u16 h_proto)
{
	return h_proto == bpf_htons(ETH_P_8021Q) ||
	       h_proto == bpf_htons(ETH_P_8021AD);
}

/*
 * Ethernet header plus up to XP_VLAN_MAX_DEPTH VLAN tags. *h_proto gets the
 * inner EtherType in network byte order. A frame with more tags than that
 * comes back with a VLAN EtherType, i.e. "not IP", which callers pass.
 */
static __always_inline int parse_ethhdr(struct hdr_cursor *c, void *data_end,
					__u16 *h_proto)
{
	struct ethhdr *eth = c->pos;
	struct vlan_hdr *vlh;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > data_end)
		return XP_PARSE_ERR;
	proto = eth->h_proto;
	vlh = (void *)(eth + 1);

#pragma unroll
	for (i = 0; i < XP_VLAN_MAX_DEPTH; i++) {
		if (!proto_is_vlan(proto))
			break;
		if ((void *)(vlh + 1) > data_end)
			return XP_PARSE_ERR;
		proto = vlh->h_vlan_encapsulated_proto;
		vlh++;
	}

	c->pos = vlh;
	*h_proto = proto;
	return 0;
}

/*
 * IPv4 header including options. *l4_len gets the L4 length from the IP
 * total length (tot_len - IHL*4), which is what payload accounting must use:
 * Ethernet pads short frames to 60 bytes, so the frame length overstates it.
 * A datagram claiming more bytes than the frame holds is malformed: a
 * non-frags XDP program always sees the whole frame, so it really was cut.
 */
static __always_inline int parse_iphdr(struct hdr_cursor *c, void *data_end,
				       struct iphdr **iphp, __u32 *l4_len)
{
	struct iphdr *iph = c->pos;
	__u32 hdrsize, tot_len;
	__u8 vihl;

	if ((void *)(iph + 1) > data_end)
		return XP_PARSE_ERR;
	vihl = *(__u8 *)iph;
	if ((vihl >> 4) != 4)
		return XP_PARSE_ERR;
	hdrsize = (vihl & 0x0F) * 4;
	if (hdrsize < sizeof(*iph))
		return XP_PARSE_ERR;
	/* Variable length (options): check again with the real size. */
	if (c->pos + hdrsize > data_end)
		return XP_PARSE_ERR;
	tot_len = bpf_ntohs(iph->tot_len);
	if (tot_len < hdrsize || !xp_fits(c, data_end, tot_len))
		return XP_PARSE_ERR;

	c->pos += hdrsize;
	*iphp = iph;
	*l4_len = tot_len - hdrsize;
	return 0;
}

/* Non-zero for a fragment other than the first (it has no L4 header). */
static __always_inline int ipv4_is_later_fragment(const struct iphdr *iph)
{
	return (iph->frag_off & bpf_htons(XP_IP_OFFSET)) != 0;
}

/* Non-zero for any fragment: a later one (no L4 header) or the first (MF set,
 * offset 0: an L4 header, but only part of the datagram). */
static __always_inline int ipv4_is_fragment(const struct iphdr *iph)
{
	return (iph->frag_off & bpf_htons(XP_IP_MF | XP_IP_OFFSET)) != 0;
}

/*
 * IPv6 fixed header only; extension headers are not walked, so the caller
 * sees them as nexthdr values other than TCP/UDP and passes the frame.
 * *l4_len gets payload_len (everything after the fixed header).
 */
static __always_inline int parse_ipv6hdr(struct hdr_cursor *c, void *data_end,
					 struct ipv6hdr **ip6hp, __u32 *l4_len)
{
	struct ipv6hdr *ip6h = c->pos;
	__u32 plen;

	if ((void *)(ip6h + 1) > data_end)
		return XP_PARSE_ERR;
	if ((*(__u8 *)ip6h >> 4) != 6)
		return XP_PARSE_ERR;
	plen = bpf_ntohs(ip6h->payload_len);
	c->pos = ip6h + 1;
	if (!xp_fits(c, data_end, plen))
		return XP_PARSE_ERR;

	*ip6hp = ip6h;
	*l4_len = plen;
	return 0;
}

/*
 * TCP header including options. l4_len is the L4 length from the IP layer;
 * *payload_len gets what is left after the TCP header.
 */
static __always_inline int parse_tcphdr(struct hdr_cursor *c, void *data_end,
					__u32 l4_len, struct tcphdr **thp,
					__u32 *payload_len)
{
	struct tcphdr *th = c->pos;
	__u32 hdrsize;

	if ((void *)(th + 1) > data_end)
		return XP_PARSE_ERR;
	hdrsize = (((__u8 *)th)[12] >> 4) * 4;
	if (hdrsize < sizeof(*th) || hdrsize > l4_len)
		return XP_PARSE_ERR;
	if (c->pos + hdrsize > data_end)
		return XP_PARSE_ERR;

	c->pos += hdrsize;
	*thp = th;
	*payload_len = l4_len - hdrsize;
	return 0;
}

/* FIN/SYN/RST/PSH/ACK/URG/ECE/CWR byte; test with XP_TCPF_*. */
static __always_inline __u8 tcp_flags(const struct tcphdr *th)
{
	return ((const __u8 *)th)[13];
}

/* UDP header. Payload length comes from the IP layer, like TCP's. */
static __always_inline int parse_udphdr(struct hdr_cursor *c, void *data_end,
					__u32 l4_len, struct udphdr **uhp,
					__u32 *payload_len)
{
	struct udphdr *uh = c->pos;

	if ((void *)(uh + 1) > data_end)
		return XP_PARSE_ERR;
	if (l4_len < sizeof(*uh))
		return XP_PARSE_ERR;

	c->pos = uh + 1;
	*uhp = uh;
	*payload_len = l4_len - sizeof(*uh);
	return 0;
}

#endif /* XDPPERF_PARSING_H */
