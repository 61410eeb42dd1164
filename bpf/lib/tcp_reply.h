/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Turn a received TCP segment into the reply to it, in place, for XDP_TX
 * (or, for the client's data mode, a TC redirect):
 * the stateless handshake and close answers of server.bpf.c (server) and
 * xdp_connect.bpf.c (client). Header-only segments out, except the client's
 * data mode, whose single segment carries r->payload zero bytes.
 *
 * Two steps, so nothing about the reply depends on packet pointers that
 * bpf_xdp_adjust_tail() invalidates:
 *   1. xp_tcp_seg_read(): copy what a reply needs (offsets, addresses, ports,
 *      seq/ack, flags, the MSS/WS/SACK/timestamp options) into a struct.
 *   2. fill a struct xp_tcp_reply (seq, ack, flags, window, option words
 *      from tcp_options.h), then xp_tcp_reply_send(): resize the frame to
 *      exactly the reply's headers (bpf_xdp_adjust_tail: option lengths
 *      differ between a SYN and a SYN-ACK, an ACK and a RST; any payload
 *      and Ethernet padding go), swap MACs, addresses and ports, reset TTL /
 *      hop limit, write the TCP header and recompute both checksums. With
 *      r->payload, the frame also gets that many zero bytes after the
 *      header; zero bytes add nothing to a ones' complement sum, so the
 *      payload only shows in the lengths (IP and the TCP pseudo-header) and
 *      needs no checksum loop. The steps inside (xp_reply_hdr,
 *      xp_reply_write) also serve the client's TC fallback for frames
 *      without that much room.
 *
 * The TCP header is assembled in a zeroed 60-byte stack buffer and checksummed
 * there over a fixed length (zero words add nothing to a ones' complement
 * sum), so the checksum loop has constant bounds whatever the option length;
 * it is then stored into the frame word by word, each word behind its own
 * constant-offset bounds check. VLAN tags (up to the two parse_ethhdr skips)
 * are kept, so the reply leaves on the VLAN the segment came in on.
 *
 * Only plain headers are answered: IPv4 without options and not fragmented,
 * IPv6 with TCP as the first next header (parse_ipv6hdr does not walk
 * extension headers anyway). xp_tcp_seg_read() refuses anything else.
 *
 * The checksums come from csum.h; reading and writing TCP options, a job of
 * its own (the option walk is shaped by the verifier), from tcp_options.h.
 *
 * Include after vmlinux.h, bpf_helpers.h, bpf_endian.h and parsing.h.
 */
#ifndef XDPPERF_TCP_REPLY_H
#define XDPPERF_TCP_REPLY_H

#include "consts.h"
#include "csum.h"
#include "tcp_options.h"

#define XP_REPLY_OPT_WORDS   10u  /* 40 option bytes */

/* Where the headers may be: Ethernet plus up to two VLAN tags. */
#define XP_L3_OFF_MAX        22u
#define XP_L4_OFF_MAX        (XP_L3_OFF_MAX + 40u)
#define XP_L3_OFF_MASK       0x1fu /* >= XP_L3_OFF_MAX, for the verifier */
#define XP_L4_OFF_MASK       0x3fu /* >= XP_L4_OFF_MAX */

#define XP_REPLY_TTL         64   /* what Linux uses (net.ipv4.ip_default_ttl) */
/* Bound on r->payload (the lengths stay far from overflowing 16 bits); the
 * caller keeps within the path's MSS. */
#define XP_REPLY_MAX_PAYLOAD 1448u

/* A received segment, as far as a reply needs it. */
struct xp_tcp_seg {
	__u32 l3_off;      /* IP header offset: 14, 18 or 22 */
	__u32 l4_off;      /* TCP header offset */
	__u32 is_v6;
	__u32 saddr[4];    /* network order; IPv4 in [0] */
	__u32 daddr[4];
	__u16 sport;       /* network order */
	__u16 dport;
	__u32 seq;         /* host order */
	__u32 ack;
	__u32 payload;     /* TCP payload bytes (IP length based) */
	__u16 window;      /* host order, as on the wire (unscaled) */
	__u32 tsval;       /* host order; valid if has_ts */
	__u32 tsecr;
	__u16 mss;         /* valid if has_mss */
	__u8 flags;
	__u8 has_mss;
	__u8 has_ws;
	__u8 has_sack;     /* SACK-permitted */
	__u8 has_ts;
	__u8 ws;
};

/* The reply's TCP fields; addresses and ports come from the segment. */
struct xp_tcp_reply {
	__u32 seq;         /* host order */
	__u32 ack;
	__u32 opt[XP_REPLY_OPT_WORDS]; /* option words, network order */
	__u32 nopt;        /* words used in opt[] */
	__u32 payload;     /* zero bytes after the header, <= XP_REPLY_MAX_PAYLOAD */
	__u16 window;      /* host order, as it goes on the wire (scaled or not) */
	__u8 flags;        /* XP_TCPF_* */
};

/* The TCP header under construction. */
union xp_tcp_hdr_buf {
	__u8 b[XP_TCP_HLEN + XP_TCP_MAX_OPT_LEN];
	__u16 h[(XP_TCP_HLEN + XP_TCP_MAX_OPT_LEN) / 2];
	__u32 w[(XP_TCP_HLEN + XP_TCP_MAX_OPT_LEN) / 4];
};

/* Note MSS, window scale, SACK-permitted and timestamps from the optlen
 * (<= 40) option bytes after the 20-byte TCP header th. */
static __always_inline void xp_tcp_read_opts(struct tcphdr *th, void *data_end,
					     __u32 optlen, struct xp_tcp_seg *s)
{
	struct xp_opt_walk w;

	xp_tcp_opts_read(th, data_end, optlen, &w);
	s->has_mss = !!(w.seen & XP_OPT_SEEN_MSS);
	s->has_ws = !!(w.seen & XP_OPT_SEEN_WS);
	s->has_sack = !!(w.seen & XP_OPT_SEEN_SACK);
	s->has_ts = !!(w.seen & XP_OPT_SEEN_TS);
	s->mss = w.mss;
	s->ws = w.ws;
	s->tsval = w.tsval;
	s->tsecr = w.tsecr;
}

/*
 * Fill *s from a segment parse_*hdr/parse_tcphdr already accepted: l3 is
 * the IP header, th the TCP header, payload the TCP payload length. Returns
 * 0, or -1 when the segment is not one we answer (IPv4 options or
 * fragments, headers beyond the offsets we handle).
 */
static __always_inline int xp_tcp_seg_read(void *data, void *data_end, void *l3,
					   struct tcphdr *th, __u32 is_v6,
					   __u32 payload, struct xp_tcp_seg *s)
{
	__u32 doff;

	__builtin_memset(s, 0, sizeof(*s));
	s->l3_off = l3 - data;
	s->l4_off = (void *)th - data;
	if (s->l3_off > XP_L3_OFF_MAX || s->l4_off > XP_L4_OFF_MAX)
		return -1;
	s->is_v6 = is_v6;
	if (is_v6) {
		struct ipv6hdr *ip6h = l3;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		if (s->l4_off != s->l3_off + sizeof(*ip6h))
			return -1;
		__builtin_memcpy(s->saddr, &ip6h->saddr, 16);
		__builtin_memcpy(s->daddr, &ip6h->daddr, 16);
	} else {
		struct iphdr *iph = l3;

		if ((void *)(iph + 1) > data_end)
			return -1;
		/* No IP options (we would have to decide what to echo) and no
		 * fragments (a reply to a part of a segment makes no sense). */
		if (s->l4_off != s->l3_off + sizeof(*iph))
			return -1;
		if (iph->frag_off & bpf_htons(XP_IP_MF | XP_IP_OFFSET))
			return -1;
		s->saddr[0] = iph->saddr;
		s->daddr[0] = iph->daddr;
	}
	if ((void *)(th + 1) > data_end)
		return -1;
	s->sport = th->source;
	s->dport = th->dest;
	s->seq = bpf_ntohl(th->seq);
	s->ack = bpf_ntohl(th->ack_seq);
	s->window = bpf_ntohs(th->window);
	s->flags = tcp_flags(th);
	s->payload = payload;
	doff = (((__u8 *)th)[12] >> 4) * 4;
	if (doff > XP_TCP_HLEN)
		xp_tcp_read_opts(th, data_end, doff - XP_TCP_HLEN, s);
	return 0;
}

/* Append NOP,NOP,TS(tsval, tsecr): the timestamps block of a non-SYN segment. */
static __always_inline void xp_reply_put_ts(struct xp_tcp_reply *r, __u32 tsval,
					    __u32 tsecr)
{
	if (r->nopt > XP_REPLY_OPT_WORDS - 3)
		return;
	r->opt[r->nopt++] = xp_opt_ts_head(0);
	r->opt[r->nopt++] = bpf_htonl(tsval);
	r->opt[r->nopt++] = bpf_htonl(tsecr);
}

/* Step 2a: the reply's TCP header in hb, checksum included (pseudo-header
 * with the payload length; the payload is zeroes and adds nothing). *hlen
 * gets its length. -1 when r is out of range. */
static __always_inline int xp_reply_hdr(const struct xp_tcp_seg *s, const struct xp_tcp_reply *r,
					union xp_tcp_hdr_buf *hb, __u32 *hlen)
{
	__u32 nopt = r->nopt, plen = r->payload, i;
	__u64 sum;

	if (s->l3_off > XP_L3_OFF_MAX || s->l4_off > XP_L4_OFF_MAX || nopt > XP_REPLY_OPT_WORDS ||
	    plen > XP_REPLY_MAX_PAYLOAD)
		return -1;
	*hlen = XP_TCP_HLEN + nopt * 4;

	/* TCP header: ports swapped, the reply's fields, checksum 0 for now. */
	__builtin_memset(hb, 0, sizeof(*hb));
	hb->h[0] = s->dport;
	hb->h[1] = s->sport;
	hb->w[1] = bpf_htonl(r->seq);
	hb->w[2] = bpf_htonl(r->ack);
	hb->b[12] = (*hlen / 4) << 4;
	hb->b[13] = r->flags;
	hb->h[7] = bpf_htons(r->window);
#pragma unroll
	for (i = 0; i < XP_REPLY_OPT_WORDS; i++)
		if (i < nopt)
			hb->w[5 + i] = r->opt[i];

	/* Pseudo-header (the swapped addresses sum the same) + whole buffer.
	 * The zero payload sums to nothing; only its length counts. */
	sum = xp_csum_pseudo(s->saddr, s->daddr, s->is_v6, IPPROTO_TCP, *hlen + plen);
#pragma unroll
	for (i = 0; i < sizeof(hb->w) / sizeof(hb->w[0]); i++)
		sum += hb->w[i];
	hb->h[8] = xp_csum_fold64(sum);
	return 0;
}

/*
 * Step 2b: write the reply's headers into the frame [data, data_end), which
 * already has the reply's length (l4_off + hlen + plen): MACs, addresses
 * and ports swapped, IP header redone, TCP header from hb. Works on any
 * program type with direct packet access (XDP, TC). Returns 0 or -1.
 */
static __always_inline int xp_reply_write(void *data, void *data_end, const struct xp_tcp_seg *s,
					  const union xp_tcp_hdr_buf *hb, __u32 hlen, __u32 plen)
{
	__u32 l3_off = s->l3_off, l4_off = s->l4_off, nopt = (hlen - XP_TCP_HLEN) / 4, i;
	struct ethhdr *eth;
	__u8 mac[XP_ETH_ALEN];
	void *tcp;

	/* Offsets were range-checked, but clang may spill and reload them
	 * past the verifier's knowledge: mask them where they are used (the
	 * barrier keeps clang from dropping the "redundant" masks). */
	barrier_var(l3_off);
	barrier_var(l4_off);
	l3_off &= XP_L3_OFF_MASK;
	l4_off &= XP_L4_OFF_MASK;

	eth = data;
	if ((void *)(eth + 1) > data_end)
		return -1;
	__builtin_memcpy(mac, eth->h_dest, XP_ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, XP_ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, XP_ETH_ALEN);

	if (s->is_v6) {
		struct ipv6hdr *ip6h = data + l3_off;

		if ((void *)(ip6h + 1) > data_end)
			return -1;
		/* Version 6, traffic class and flow label 0: ours, not the
		 * client's, as a stack's own reply would be. */
		*(__u32 *)ip6h = bpf_htonl(0x60000000);
		ip6h->payload_len = bpf_htons(hlen + plen);
		ip6h->nexthdr = IPPROTO_TCP;
		ip6h->hop_limit = XP_REPLY_TTL;
		__builtin_memcpy(&ip6h->saddr, s->daddr, 16);
		__builtin_memcpy(&ip6h->daddr, s->saddr, 16);
	} else {
		struct iphdr *iph = data + l3_off;

		if ((void *)(iph + 1) > data_end)
			return -1;
		/* Keep version/IHL (5, checked) and TOS; id 0 with DF, as
		 * Linux sends its own handshake segments (RFC 6864). */
		iph->tot_len = bpf_htons(sizeof(*iph) + hlen + plen);
		iph->id = 0;
		iph->frag_off = bpf_htons(XP_IPV4_DF);
		iph->ttl = XP_REPLY_TTL;
		iph->protocol = IPPROTO_TCP;
		iph->check = 0;
		iph->saddr = s->daddr[0];
		iph->daddr = s->saddr[0];
		iph->check = xp_csum_ipv4_hdr(iph);
	}

	tcp = data + l4_off;
	if (tcp + XP_TCP_HLEN > data_end)
		return -1;
#pragma unroll
	for (i = 0; i < XP_TCP_HLEN / 4; i++)
		((__u32 *)tcp)[i] = hb->w[i];
	/* The frame ends after the options (or the payload) now, but a
	 * variable length proves nothing to the verifier: one constant-offset
	 * check per word. */
#pragma unroll
	for (i = 0; i < XP_REPLY_OPT_WORDS; i++) {
		if (i < nopt && tcp + XP_TCP_HLEN + 4 * (i + 1) <= data_end)
			((__u32 *)tcp)[5 + i] = hb->w[5 + i];
	}
	return 0;
}

/* xp_tcp_reply_send(): the frame has no room for the reply's payload; it is
 * untouched (the caller may hand it on, see xdp_connect.bpf.c). */
#define XP_REPLY_NOROOM (-2)

/*
 * Rewrite the XDP frame s was read from into the reply r, addressed back to
 * the sender. Returns 0 (the caller returns xp_reply_verdict()), -1 (frame
 * could not be resized; the caller drops it) or, for a reply with payload,
 * XP_REPLY_NOROOM. All packet pointers the caller held are invalid
 * afterwards.
 *
 * Room for a payload is the frame's tailroom, which depends on the driver:
 * NICs give a page or half of one, but veth gives a copy of a small frame
 * (a SYN-ACK) little more than it needs. So a payload is asked for first,
 * as one grow that fails without changing anything; then the frame is cut
 * to the reply's header (whatever it held past that goes) and grown again,
 * so that all of the payload is bytes the kernel zeroes.
 */
static __always_inline int xp_tcp_reply_send(struct xdp_md *ctx,
					     const struct xp_tcp_seg *s,
					     const struct xp_tcp_reply *r)
{
	union xp_tcp_hdr_buf hb;
	__u32 plen = r->payload, hlen, len, keep;
	void *data, *data_end;
	int delta;

	if (xp_reply_hdr(s, r, &hb, &hlen))
		return -1;

	/* Exactly the reply's headers: drop payload and Ethernet padding, or
	 * grow when our options are longer than the segment's. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	len = data_end - data;
	keep = s->l4_off + hlen;
	if (plen) {
		if (keep + plen > len) {
			if (bpf_xdp_adjust_tail(ctx, (int)(keep + plen - len)))
				return XP_REPLY_NOROOM;
			len = keep + plen;
		}
		if (bpf_xdp_adjust_tail(ctx, (int)keep - (int)len))
			return -1;
		len = keep;
	}
	delta = (int)(keep + plen) - (int)len;
	if (delta && bpf_xdp_adjust_tail(ctx, delta))
		return -1;
	/* Reload both bounds from ctx itself: without the barrier clang may
	 * address data_end as (ctx + 4), which the verifier refuses. */
	barrier_var(ctx);
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	return xp_reply_write(data, data_end, s, &hb, hlen, plen);
}

/*
 * The verdict that sends a rewritten reply back out of the interface it came
 * in on: XDP_TX, or with `redirect` bpf_redirect() to the ingress interface.
 * The redirect exists for veth: an XDP_TX'd frame is queued to the peer veth
 * but the peer's NAPI is only kicked when the peer has an XDP program of its
 * own (veth_xdp_flush()), so into a peer with GRO but no XDP program (a lab
 * router) the frames sit in its 256-entry ring and then get dropped. The
 * redirect path (ndo_xdp_xmit with XDP_XMIT_FLUSH) kicks it either way. On a
 * physical NIC keep XDP_TX, the cheaper path.
 */
static __always_inline int xp_reply_verdict(struct xdp_md *ctx, int redirect)
{
	if (redirect)
		return bpf_redirect(ctx->ingress_ifindex, 0);
	return XDP_TX;
}

#endif /* XDPPERF_TCP_REPLY_H */
