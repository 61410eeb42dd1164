// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive-side TC (clsact/tcx ingress) program: counts the frames of socket
 * tests, for which the server's kernel stack is the receiver.
 *
 * Why not XDP: with an XDP program on a veth the kernel turns GSO off on its
 * peer and big GSO packets no longer cross whole; a TCP stream through the
 * routed lab fell from ~26-40 Gbit/s to ~10 Gbit/s with a count-and-pass XDP
 * program on the server's veth, with or without multi-buffer support
 * (SEC("xdp.frags") does not bring GSO back). At TC ingress the stack's own
 * skb goes by: counting it costs a map lookup, and nothing on the path changes.
 *
 * What it counts, into the XDP program's maps (the loader shares them:
 * port_slot, slot_cfg, slot_peers, counters), in struct xp_counters' layout,
 * so everything that reads a slot reads this one the same way: only slots with
 * XP_SLOT_TC (which never have XP_SLOT_ACTIVE, so the XDP program passes
 * their frames uncounted if it is attached for another test), for the
 * slot's interface, client addresses and protocols, and only frames addressed
 * to this host (xp_slot_owns: our MAC and one of the interface's addresses),
 * as server.bpf.c does.
 *
 * Segments as the stack sees them: a GSO packet (gso_segs > 1, one set of
 * headers for all) counts as gso_segs frames, and its bytes as those segments
 * carry them on a wire, headers repeated: payload + gso_segs * header bytes
 * (Ethernet to L4, options included; all segments of a GSO packet have the
 * same headers). A frame that is not GSO counts as itself, skb->len bytes,
 * which is what XDP counts (Ethernet header included, FCS not). SYN, FIN and
 * RST are counted once per packet: GSO puts FIN on the last segment only and
 * never splits a SYN or a RST.
 *
 * The program never changes a verdict: it returns TC_ACT_UNSPEC (TCX_NEXT),
 * so whatever comes after it on the interface decides as if it were not there.
 *
 * Its cost is paid by every packet on the interface, the test's or not (an
 * iperf3 beside a socket test): parse, then one array lookup by port. What is
 * read only for a test's packet stays after that lookup: gso_segs (in the
 * skb's shared info, a cache line nothing else here touches) and the slot's
 * maps. Measured with kernel.bpf_stats_enabled under iperf3 -P 4 (routed
 * lab, 16 Gbit/s): 195 ns a run with gso_segs read first, 177 ns after; an
 * empty TC program reads 121 ns there (the statistics' own clock reads), so
 * the program's own work went from about 74 to 56 ns a packet.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "server.h"
#include "lib/consts.h"
#include "lib/csum.h"
#include "lib/parsing.h"
#include "server_maps.h"
#include "lib/mutate.h"

/* TC_ACT_UNSPEC: the next program or filter, or the default (pass). */
#define XP_TC_NEXT (-1)
/* Headers this program reads: Ethernet, two VLAN tags, IPv6, TCP with the
 * longest options: 14 + 8 + 40 + 60 = 122 bytes. */
#define XP_TC_HDR_MAX 128u

/* Set by the loader before load: the control connection's port (host order),
 * whose frames are never a test's (as in server.bpf.c). */
const volatile __u16 ctrl_port = 0;

/* Headers that do not parse: XP_TC_SHORT if the packet has more than its
 * linear part holds (they may be past it: pull and look again), else not a
 * frame of ours. */
#define XP_TC_DONE  0
#define XP_TC_SHORT 1
#define FAIL() return short_ok ? XP_TC_SHORT : XP_TC_DONE

/* Count the packet if it is a TC slot's: XP_TC_DONE, or XP_TC_SHORT (see
 * FAIL) when short_ok and its headers may lie past data_end. */
static __always_inline int tc_count(struct __sk_buff *skb, void *data, void *data_end, int short_ok)
{
	__u32 len = skb->len, segs, l3off, avail, l4_len, payload, hdr;
	__u32 port, slot, proto_bit, *slotp, src_family, src[4] = {}, dst[4] = {};
	struct hdr_cursor c;
	struct xp_slot_cfg *cfg;
	struct xp_counters *cnt;
	struct tcphdr *th;
	struct udphdr *uh;
	__u16 h_proto, dport;
	__u8 l4proto, flags = 0;
	int is_v6;

	c.pos = data;
	c.frags = 0; /* an skb's data_end is its linear part; the lengths are checked against that */

	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		FAIL();
	l3off = c.pos - data;
	if (l3off >= len)
		return XP_TC_DONE;
	avail = len - l3off; /* L3 bytes of the whole packet, linear or not */

	if (h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *iph = c.pos;
		__u32 ihl, tot;

		if ((void *)(iph + 1) > data_end)
			FAIL();
		if ((*(__u8 *)iph >> 4) != 4)
			return XP_TC_DONE;
		ihl = (*(__u8 *)iph & 0x0F) * 4;
		if (ihl < sizeof(*iph))
			return XP_TC_DONE;
		if (c.pos + ihl > data_end)
			FAIL();
		/* Fragments pass uncounted, as in server.bpf.c. */
		if (ipv4_is_fragment(iph))
			return XP_TC_DONE;
		tot = bpf_ntohs(iph->tot_len);
		/* A BIG TCP GSO packet has tot_len 0: its length is the skb's. */
		if (!tot && skb->gso_segs > 1)
			tot = avail;
		if (tot < ihl || tot > avail)
			return XP_TC_DONE;
		l4_len = tot - ihl;
		l4proto = iph->protocol;
		is_v6 = 0;
		src_family = XP_FAMILY_V4;
		src[0] = iph->saddr;
		dst[0] = iph->daddr;
		c.pos += ihl;
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6h = c.pos;
		__u32 plen;

		if ((void *)(ip6h + 1) > data_end)
			FAIL();
		if ((*(__u8 *)ip6h >> 4) != 6 || avail < sizeof(*ip6h))
			return XP_TC_DONE;
		plen = bpf_ntohs(ip6h->payload_len);
		if (!plen && skb->gso_segs > 1)
			plen = avail - sizeof(*ip6h);
		if (plen > avail - sizeof(*ip6h))
			return XP_TC_DONE;
		l4_len = plen;
		l4proto = ip6h->nexthdr;
		is_v6 = 1;
		src_family = XP_FAMILY_V6;
		__builtin_memcpy(src, &ip6h->saddr, sizeof(src));
		__builtin_memcpy(dst, &ip6h->daddr, sizeof(dst));
		c.pos = ip6h + 1;
	} else {
		return XP_TC_DONE;
	}

	if (l4proto == IPPROTO_TCP) {
		if (parse_tcphdr(&c, data_end, l4_len, &th, &payload) < 0)
			FAIL();
		if (ctrl_port && (th->source == bpf_htons(ctrl_port) || th->dest == bpf_htons(ctrl_port)))
			return XP_TC_DONE;
		dport = th->dest;
		flags = tcp_flags(th);
		proto_bit = XP_PROTO_TCP;
	} else if (l4proto == IPPROTO_UDP) {
		if (parse_udphdr(&c, data_end, l4_len, &uh, &payload) < 0)
			FAIL();
		dport = uh->dest;
		proto_bit = XP_PROTO_UDP;
	} else {
		return XP_TC_DONE;
	}

	port = bpf_ntohs(dport);
	slotp = bpf_map_lookup_elem(&port_slot, &port);
	if (!slotp || !*slotp)
		return XP_TC_DONE;
	slot = *slotp - 1;
	cfg = bpf_map_lookup_elem(&slot_cfg, &slot);
	if (!cfg || !(cfg->flags & XP_SLOT_TC) || !(cfg->protos & proto_bit))
		return XP_TC_DONE;
	if (!xp_slot_owns(cfg, slot, skb->ingress_ifindex, src_family, src, ((struct ethhdr *)data)->h_dest, dst))
		return XP_TC_DONE;
	cnt = bpf_map_lookup_elem(&counters, &slot);
	if (!cnt)
		return XP_TC_DONE;

	/* Read only now, for a test's frame: gso_segs lives in the skb's shared
	 * info, past the packet's data (see the comment at the top). */
	segs = skb->gso_segs;
	if (!segs)
		segs = 1;
	hdr = c.pos - data; /* Ethernet to the end of the L4 header */
	/* XP_ADD_AS / XP_INC_AS: lib/mutate.h (tc_ names: the XDP program
	 * has counters of the same fields, mutated on their own). */
	XP_ADD_AS(tc_pkts, cnt->pkts, segs);
	XP_ADD_AS(tc_bytes, cnt->bytes, segs > 1 ? payload + (__u64)segs * hdr : len);
	if (is_v6)
		XP_ADD_AS(tc_ipv6_pkts, cnt->ipv6_pkts, segs);
	else
		XP_ADD_AS(tc_ipv4_pkts, cnt->ipv4_pkts, segs);

	if (proto_bit == XP_PROTO_UDP) {
		XP_ADD_AS(tc_udp_pkts, cnt->udp_pkts, segs);
	} else {
		if (flags & XP_TCPF_SYN) {
			if (flags & XP_TCPF_ACK)
				XP_INC_AS(tc_tcp_synack, cnt, tcp_synack);
			else
				XP_INC_AS(tc_tcp_syn, cnt, tcp_syn);
		}
		if (flags & XP_TCPF_FIN)
			XP_INC_AS(tc_tcp_fin, cnt, tcp_fin);
		if (flags & XP_TCPF_RST)
			XP_INC_AS(tc_tcp_rst, cnt, tcp_rst);
		if ((flags & (XP_TCPF_ACK | XP_TCPF_SYN | XP_TCPF_FIN | XP_TCPF_RST)) ==
		    XP_TCPF_ACK && payload == 0)
			XP_ADD_AS(tc_tcp_ack_only, cnt->tcp_ack_only, segs);
	}
	if (payload) {
		XP_ADD_AS(tc_data_pkts, cnt->data_pkts, segs);
		XP_ADD_AS(tc_data_bytes, cnt->data_bytes, payload);
	}
	return XP_TC_DONE;
}

#undef FAIL

SEC("tc")
int tc_server(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	__u32 len = skb->len, lin = data_end - data;

	/* The stack's own packets (a veth's, GSO or not) have their headers in
	 * the linear part: counted from there, nothing moved. */
	if (tc_count(skb, data, data_end, lin < len && lin < XP_TC_HDR_MAX) != XP_TC_SHORT)
		return XP_TC_NEXT;
	/* A NIC's skb may have only part of them there: pull them in (a copy,
	 * so only when needed) and look once more. */
	if (bpf_skb_pull_data(skb, len < XP_TC_HDR_MAX ? len : XP_TC_HDR_MAX))
		return XP_TC_NEXT;
	/* Fresh pointers: the helper moved the packet (the barrier keeps the
	 * compiler from reusing ctx addresses, which the verifier refuses). */
	asm volatile("" ::: "memory");
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	tc_count(skb, data, data_end, 0);
	return XP_TC_NEXT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
