// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Client side of the XDP connection engine: completes the handshakes of the
 * raw SYNs the client sends (from AF_XDP), at XDP speed and with no
 * per-connection state. Attached to the client's interface:
 *
 *   SYN-ACK of a test flow -> rewritten in place into the ACK that completes
 *                             the handshake (ACK|FIN in XP_CC_MODE_FIN;
 *                             ACK|PSH|FIN with config.data_len zero bytes in
 *                             XP_CC_MODE_DATA): seq = its ack, ack = its
 *                             seq + 1, timestamps echoed; XDP_TX
 *   FIN of a test flow     -> the final ACK (seq = its ack, ack = its seq +
 *                             len + 1); XDP_TX. After data its ack already
 *                             counts the data and our FIN: seq = ISN + N + 2
 *   RST of a test flow     -> counted, dropped (the server's close)
 *   anything else          -> XDP_PASS: the control connection, ARP/ND, the
 *                             host's own traffic
 *
 * (XDP_TX, or a redirect to the ingress interface with config.reply_redirect.)
 * In XP_CC_MODE_DATA a SYN-ACK whose frame has no room for the payload is
 * passed on to tc_connect below, which builds the same segment.
 *
 * Everything the reply needs is in the segment being answered: our sequence
 * number is the one the server acknowledges, theirs the one it sent. See
 * xdp_connect.h for the configuration (rodata) and counters.
 *
 * With the engine's window (config.win_size, bpf/window.h) each of those
 * segments also moves its connection's slot on (a completion, a reset, the
 * server's FIN in FIN mode, an ICMP unreachable quoting the SYN), so that
 * the SYN sender knows how many are in flight and userspace what to send
 * again; a SYN-ACK that no connection waits for any more is reset.
 */
/* vmlinux.h has a typedef named config (zstd's): rename it on the way in,
 * the name is our rodata variable's (struct xp_xdp_connect_config). */
#define config xp_vmlinux_config
#include "vmlinux.h"
#undef config
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdp_connect.h"
#include "lib/consts.h"
#include "lib/parsing.h"
#include "lib/tcp_reply.h"
#include "lib/mutate.h"
#include "window.h"

/* Set by the loader before load; see struct xp_xdp_connect_config. */
const volatile struct xp_xdp_connect_config config = { .mode = XP_CC_MODE_RST };

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_cc_counters);
} cc_counters SEC(".maps");

/* The window's maps (win_slots, win_free, win_ctl): max_entries 1 here, the
 * engine's own maps (bpf_map__reuse_fd) when config.win_size is set. */
#include "window_maps.h"

/* Window of our ACKs: with window scaling (7, what the client's SYN offers,
 * see FRAME_SYN_WSCALE) 502 << 7 = 64256 bytes, as Linux shows. */
#define XP_CC_WINDOW_SCALED 502
#define XP_CC_WINDOW        65535
/* What TCP assumes when a SYN-ACK has no MSS option (RFC 9293, 8200). */
#define XP_CC_DEFAULT_MSS4  536
#define XP_CC_DEFAULT_MSS6  1220

/* XP_CC_MODE_DATA: how much of config.data_len the SYN-ACK lets us send in
 * one segment: no more than its window (never scaled in a SYN-ACK) nor its
 * MSS, less the timestamps option our segment carries (RFC 6691). The
 * server's XDP program announces 65535 and 1460/1440. */
static __always_inline __u32 data_len_for(const struct xp_tcp_seg *sg)
{
	__u32 n = config.data_len, mss;

	if (n > XP_CC_DATA_MAX)
		n = XP_CC_DATA_MAX;
	if (n > sg->window)
		n = sg->window;
	mss = sg->has_mss ? sg->mss : sg->is_v6 ? XP_CC_DEFAULT_MSS6 : XP_CC_DEFAULT_MSS4;
	if (sg->has_ts)
		mss = mss > XP_TCPOLEN_TS_BLOCK ? mss - XP_TCPOLEN_TS_BLOCK : 0;
	if (n > mss)
		n = mss;
	return n;
}

static __always_inline int in_range(__u16 port_be, __u16 lo, __u16 hi)
{
	__u16 p = bpf_ntohs(port_be);

	return p >= lo && p <= hi;
}

/* The TCP headers of a frame [data, data_end) if it is a segment of a test
 * flow (server test port -> client port, not the control connection, of
 * config.family): 0 and *l3, *th, *is_v6, *payload; else -1. */
static __always_inline int xp_cc_test_seg(void *data, void *data_end, void **l3,
					  struct tcphdr **th, int *is_v6, __u32 *payload)
{
	struct hdr_cursor c = { .pos = data };
	struct ipv6hdr *ip6h;
	struct iphdr *iph;
	__u32 l4_len;
	__u16 h_proto;

	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		return -1;
	if (h_proto == bpf_htons(ETH_P_IP)) {
		if (config.family == 6)
			return -1;
		if (parse_iphdr(&c, data_end, &iph, &l4_len) < 0 ||
		    iph->protocol != IPPROTO_TCP || ipv4_is_later_fragment(iph))
			return -1;
		*l3 = iph;
		*is_v6 = 0;
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		if (config.family == 4)
			return -1;
		if (parse_ipv6hdr(&c, data_end, &ip6h, &l4_len) < 0 ||
		    ip6h->nexthdr != IPPROTO_TCP)
			return -1;
		*l3 = ip6h;
		*is_v6 = 1;
	} else {
		return -1;
	}
	if (parse_tcphdr(&c, data_end, l4_len, th, payload) < 0)
		return -1;
	if (config.ctrl_port && ((*th)->source == bpf_htons(config.ctrl_port) ||
				 (*th)->dest == bpf_htons(config.ctrl_port)))
		return -1;
	if (!in_range((*th)->dest, config.cport_lo, config.cport_hi) ||
	    !in_range((*th)->source, config.dport_lo, config.dport_hi))
		return -1;
	return 0;
}

#define XP_SYNACK_MASK (XP_TCPF_SYN | XP_TCPF_ACK | XP_TCPF_FIN)
#define XP_SYNACK      (XP_TCPF_SYN | XP_TCPF_ACK)

/* The segment that completes the handshake, for the SYN-ACK sg. */
static __always_inline void xp_cc_handshake_reply(const struct xp_tcp_seg *sg,
						  struct xp_tcp_reply *r)
{
	r->seq = sg->ack;
	r->ack = sg->seq + 1;
	r->flags = XP_TCPF_ACK;
	if (config.mode == XP_CC_MODE_FIN)
		r->flags |= XP_TCPF_FIN;
	if (config.mode == XP_CC_MODE_DATA) {
		/* seq is the first data byte (ISN + 1), the FIN comes after
		 * the data: ISN + 1 + N. */
		r->payload = data_len_for(sg);
		r->flags |= XP_TCPF_FIN | (r->payload ? XP_TCPF_PSH : 0);
	}
	r->window = sg->has_ws ? XP_CC_WINDOW_SCALED : XP_CC_WINDOW;
	/* Our clock: the server echoed our SYN's TSval; going on from there
	 * keeps it monotonic without knowing what userspace put in the SYN. */
	if (sg->has_ts)
		xp_reply_put_ts(r, sg->tsecr, sg->tsval);
}

static __always_inline void xp_cc_count_handshake(struct xp_cc_counters *cnt,
						  const struct xp_tcp_reply *r)
{
	XP_INC(cnt, acks_sent);
	if (config.mode == XP_CC_MODE_FIN || config.mode == XP_CC_MODE_DATA)
		XP_INC(cnt, fins_sent);
	if (r->payload) {
		XP_INC(cnt, data_sent);
		XP_ADD_AS(cc_data_bytes, cnt->data_bytes, r->payload);
	}
}

/*
 * The window (config.win_size): what a segment of a test flow means for
 * its connection's slot. The slot is in the sequence number the segment
 * acknowledges (bpf/window.h); the slot's ISN and ports must agree, and
 * every move is a compare-and-swap on the slot's word, so a reply that
 * races a timeout in userspace, or comes after the slot went to a newer
 * connection, moves nothing.
 */
enum { WIN_NEW, WIN_DUP, WIN_STALE };

/* The slot whose connection has ISN isn and ports (network order, as the
 * server's segment carries them: its source is our destination), or NULL. */
static __always_inline struct xp_win_slot *win_slot(__u32 isn, __u16 srv_port, __u16 cli_port)
{
	__u32 slot = isn >> (config.win_shift & 31);
	struct xp_win_slot *w;

	if (slot >= config.win_size)
		return NULL;
	w = bpf_map_lookup_elem(&win_slots, &slot);
	if (!w || w->isn != isn || w->sport != bpf_ntohs(cli_port) || w->dport != bpf_ntohs(srv_port))
		return NULL;
	return w;
}

static __always_inline struct xp_win_ctl *win_ctl_get(void)
{
	__u32 key = 0;

	return bpf_map_lookup_elem(&win_ctl, &key);
}

/* The connection is over (its word just swapped to FREE): its slot back on
 * the free ring, for the next SYN; or, when the ring would not take it now
 * (bpf/window_ring.h), parked for the keeper to put back. */
static __always_inline void win_release(__u32 isn, struct xp_win_ctl *ctl, struct xp_win_slot *w)
{
	__u32 slot = isn >> (config.win_shift & 31), word;

	if (xp_win_ring_put(&win_free, ctl, xp_win_ring_mask(config.win_shift), slot) == 0) {
		XP_ATOMIC_INC(ctl, freed);
		return;
	}
	word = w->word;
	if (XP_WIN_STATE(word) == XP_WIN_FREE)
		__sync_val_compare_and_swap(&w->word, word, XP_WIN_WORD(XP_WIN_GEN(word), XP_WIN_PARKED));
}

/* A SYN-ACK: WIN_NEW (it completes its connection: answer and count it),
 * WIN_DUP (answered before: answer again, as TCP does), WIN_STALE (no
 * connection of ours waits for it any more: answer with RST). */
static __always_inline int win_synack(const struct xp_tcp_seg *sg)
{
	struct xp_win_ctl *ctl = win_ctl_get();
	struct xp_win_slot *w;
	__u32 word, next;

	if (!ctl)
		return WIN_STALE;
	w = win_slot(sg->ack - 1, sg->sport, sg->dport);
	if (!w) {
		XP_ATOMIC_INC(ctl, stale);
		return WIN_STALE;
	}
	word = w->word;
	if (XP_WIN_STATE(word) == XP_WIN_FIN_WAIT || XP_WIN_STATE(word) == XP_WIN_OPEN) {
		XP_ATOMIC_INC(ctl, synack_dup);
		return WIN_DUP;
	}
	if (XP_WIN_STATE(word) != XP_WIN_SYN_SENT) {
		XP_ATOMIC_INC(ctl, stale);
		return WIN_STALE;
	}
	next = config.mode == XP_CC_MODE_FIN ? XP_WIN_FIN_WAIT
	     : config.mode == XP_CC_MODE_KEEPALIVE ? XP_WIN_OPEN : XP_WIN_FREE;
	/* Before the swap: whoever sees the new state finds these set. The
	 * time only where a timer goes on (--fin's FIN, -k's keepalives): a
	 * -x connection's slot is freed here, and a clock read was 3 % of
	 * the direct pair's CPU at 1 M connections/s (perf, read_tsc). The
	 * coarse clock (CLOCK_MONOTONIC_COARSE, one tick behind at most) is
	 * plenty for timers of a second or more. */
	w->srv_nxt = sg->seq + 1;
	if (next != XP_WIN_FREE)
		w->t_ns = bpf_ktime_get_coarse_ns();
	w->tries = 0;
	if (__sync_val_compare_and_swap(&w->word, word, XP_WIN_WORD(XP_WIN_GEN(word), next)) != word) {
		XP_ATOMIC_INC(ctl, stale); /* given up by userspace just now */
		return WIN_STALE;
	}
	if (next == XP_WIN_FREE)
		win_release(w->isn, ctl, w);
	return WIN_NEW;
}

/* --fin: the server's FIN (ack = ISN + 2): WIN_NEW closes the connection and
 * frees its slot; WIN_DUP (already closed, or not ours) is answered all the same. */
static __always_inline int win_fin(const struct xp_tcp_seg *sg)
{
	struct xp_win_ctl *ctl = win_ctl_get();
	struct xp_win_slot *w;
	__u32 word;

	if (!ctl)
		return WIN_DUP;
	w = win_slot(sg->ack - 2, sg->sport, sg->dport);
	word = w ? w->word : 0;
	if (!w || XP_WIN_STATE(word) != XP_WIN_FIN_WAIT ||
	    __sync_val_compare_and_swap(&w->word, word, XP_WIN_WORD(XP_WIN_GEN(word), XP_WIN_FREE)) != word) {
		XP_ATOMIC_INC(ctl, fin_dup);
		return WIN_DUP;
	}
	win_release(sg->ack - 2, ctl, w);
	return WIN_NEW;
}

/* A reset with ACK = ISN + 1: the server (or a device) refused the SYN, or
 * reset a held connection. Its slot is freed (-k: done, never reopened). */
static __always_inline void win_reset(const struct tcphdr *th)
{
	struct xp_win_ctl *ctl = win_ctl_get();
	__u32 isn = bpf_ntohl(th->ack_seq) - 1, word, next;
	struct xp_win_slot *w;

	if (!ctl || !(tcp_flags(th) & XP_TCPF_ACK))
		return;
	w = win_slot(isn, th->source, th->dest);
	if (!w)
		return;
	word = w->word;
	if (XP_WIN_STATE(word) != XP_WIN_SYN_SENT && XP_WIN_STATE(word) != XP_WIN_OPEN)
		return;
	next = config.mode == XP_CC_MODE_KEEPALIVE ? XP_WIN_DONE : XP_WIN_FREE;
	if (__sync_val_compare_and_swap(&w->word, word, XP_WIN_WORD(XP_WIN_GEN(word), next)) != word)
		return;
	XP_ATOMIC_INC(ctl, fail_reset);
	if (next == XP_WIN_FREE)
		win_release(isn, ctl, w);
}

/*
 * ICMP destination unreachable (IPv4 type 3, ICMPv6 type 1) quoting one of
 * our SYNs: its IP header and first 8 TCP bytes (ports, seq = the ISN) say
 * which connection; it failed as unreachable and its slot is freed. 0 when
 * it was such a message (counted, to be dropped), -1 for anything else.
 */
#define XP_ICMP_UNREACH   3
#define XP_ICMP6_UNREACH  1
#define XP_IPPROTO_ICMPV6 58
static __always_inline int win_icmp(void *data, void *data_end)
{
	struct hdr_cursor c = { .pos = data };
	struct iphdr *iph;
	struct ipv6hdr *ip6h;
	__u8 *icmp, *in;
	__u32 l4_len, inner;
	__u16 h_proto;

	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		return -1;
	if (h_proto == bpf_htons(ETH_P_IP) && config.family != 6) {
		if (parse_iphdr(&c, data_end, &iph, &l4_len) < 0 || iph->protocol != IPPROTO_ICMP ||
		    ipv4_is_fragment(iph))
			return -1;
		icmp = c.pos;
		if ((void *)(icmp + 8 + 20) > data_end || icmp[0] != XP_ICMP_UNREACH)
			return -1;
		in = icmp + 8; /* the quoted IPv4 header */
		inner = (in[0] & 0x0f) * 4;
		if ((in[0] >> 4) != 4 || inner < 20 || inner > 60 || in[9] != IPPROTO_TCP)
			return -1;
	} else if (h_proto == bpf_htons(ETH_P_IPV6) && config.family != 4) {
		if (parse_ipv6hdr(&c, data_end, &ip6h, &l4_len) < 0 || ip6h->nexthdr != XP_IPPROTO_ICMPV6)
			return -1;
		icmp = c.pos;
		if ((void *)(icmp + 8 + 40) > data_end || icmp[0] != XP_ICMP6_UNREACH)
			return -1;
		in = icmp + 8;
		inner = 40;
		if ((in[0] >> 4) != 6 || in[6] != IPPROTO_TCP)
			return -1;
	} else {
		return -1;
	}
	struct tcphdr *th = (void *)(in + inner);
	if ((void *)th + 8 > data_end)
		return -1;
	/* Our SYN: from a client port to a server port. */
	if (!in_range(th->source, config.cport_lo, config.cport_hi) ||
	    !in_range(th->dest, config.dport_lo, config.dport_hi))
		return -1;
	struct xp_win_ctl *ctl = win_ctl_get();
	__u32 isn = bpf_ntohl(th->seq), word, next;
	struct xp_win_slot *w = win_slot(isn, th->dest, th->source);

	if (!ctl || !w)
		return 0;
	word = w->word;
	if (XP_WIN_STATE(word) != XP_WIN_SYN_SENT)
		return 0;
	next = config.mode == XP_CC_MODE_KEEPALIVE ? XP_WIN_DONE : XP_WIN_FREE;
	if (__sync_val_compare_and_swap(&w->word, word, XP_WIN_WORD(XP_WIN_GEN(word), next)) != word)
		return 0;
	XP_ATOMIC_INC(ctl, fail_unreach);
	if (next == XP_WIN_FREE)
		win_release(isn, ctl, w);
	return 0;
}

SEC("xdp")
int xdp_connect(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xp_cc_counters *cnt;
	struct xp_tcp_reply r = {};
	struct xp_tcp_seg sg;
	struct tcphdr *th;
	__u32 key = 0, payload;
	void *l3;
	__u8 fl;
	int is_v6, rc, wv;

	cnt = bpf_map_lookup_elem(&cc_counters, &key);
	if (!cnt)
		return XDP_PASS;
	if (xp_cc_test_seg(data, data_end, &l3, &th, &is_v6, &payload)) {
		/* The window: an ICMP error about one of our SYNs ends its connection. */
		if (config.win_size && !win_icmp(data, data_end))
			return XDP_DROP;
		goto pass;
	}

	fl = tcp_flags(th);
	if (fl & XP_TCPF_RST) {
		XP_INC(cnt, rst_seen);
		if (config.win_size)
			win_reset(th);
		return XDP_DROP;
	}
	if ((fl & XP_SYNACK_MASK) == XP_SYNACK) {
		XP_INC(cnt, synack_seen);
		if (xp_tcp_seg_read(data, data_end, l3, th, is_v6, payload, &sg))
			goto unanswered;
		wv = config.win_size ? win_synack(&sg) : WIN_NEW;
		if (wv == WIN_STALE) {
			/* RFC 9293's reset for an unacceptable ACK: <SEQ=SEG.ACK><CTL=RST>. */
			r.seq = sg.ack;
			r.flags = XP_TCPF_RST;
			if (xp_tcp_reply_send(ctx, &sg, &r))
				goto unanswered;
			return xp_reply_verdict(ctx, config.reply_redirect);
		}
		xp_cc_handshake_reply(&sg, &r);
		rc = xp_tcp_reply_send(ctx, &sg, &r);
		if (rc == XP_REPLY_NOROOM)
			return XDP_PASS; /* untouched, to tc_connect */
		if (rc)
			goto unanswered;
		if (wv == WIN_NEW)
			xp_cc_count_handshake(cnt, &r);
		return xp_reply_verdict(ctx, config.reply_redirect);
	}
	if ((fl & XP_SYNACK_MASK) == (XP_TCPF_ACK | XP_TCPF_FIN)) {
		if (xp_tcp_seg_read(data, data_end, l3, th, is_v6, payload, &sg))
			goto unanswered;
		wv = config.win_size && config.mode == XP_CC_MODE_FIN ? win_fin(&sg) : WIN_NEW;
		r.seq = sg.ack;
		r.ack = sg.seq + sg.payload + 1;
		r.flags = XP_TCPF_ACK;
		r.window = XP_CC_WINDOW_SCALED;
		if (sg.has_ts)
			xp_reply_put_ts(&r, sg.tsecr, sg.tsval);
		if (xp_tcp_reply_send(ctx, &sg, &r))
			goto unanswered;
		if (wv == WIN_NEW)
			XP_INC(cnt, finack_answered);
		return xp_reply_verdict(ctx, config.reply_redirect);
	}
pass:
	XP_INC(cnt, passed);
	return XDP_PASS;
unanswered:
	XP_INC(cnt, unanswered);
	return XDP_DROP;
}

/*
 * XP_CC_MODE_DATA's fallback, attached at TC ingress of the same interface
 * (user/loader/xdp_connect_prog.c, a tcx link): the SYN-ACKs whose XDP buffer
 * had no room for the payload (xp_tcp_reply_send() -> XP_REPLY_NOROOM; on
 * veth a forwarded SYN-ACK has a few dozen bytes of tailroom) come here as
 * skbs, which can grow: the same data segment is built with
 * bpf_skb_change_tail() and sent back out of the interface with
 * bpf_redirect(). Still one frame out per frame in, nothing kept.
 * Everything else: TC_ACT_OK.
 *
 * A VLAN tag the stack has moved into the skb (hardware or software
 * untagging) stays there and goes out with the reply; one still in the
 * frame is kept like in XDP.
 */

/* The payload's source for bpf_skb_store_bytes() (a grown skb is not
 * zeroed, unlike a grown XDP frame). */
static const volatile __u8 xp_zeros[XP_CC_DATA_MAX];

SEC("tc")
int tc_connect(struct __sk_buff *skb)
{
	struct xp_cc_counters *cnt;
	struct xp_tcp_reply r = {};
	union xp_tcp_hdr_buf hb;
	struct xp_tcp_seg sg;
	struct tcphdr *th;
	__u32 key = 0, payload, hlen, plen;
	void *data, *data_end, *l3;
	int is_v6;

	if (config.mode != XP_CC_MODE_DATA)
		return XP_TC_ACT_OK;
	cnt = bpf_map_lookup_elem(&cc_counters, &key);
	if (!cnt)
		return XP_TC_ACT_OK;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (xp_cc_test_seg(data, data_end, &l3, &th, &is_v6, &payload) ||
	    (tcp_flags(th) & XP_SYNACK_MASK) != XP_SYNACK)
		return XP_TC_ACT_OK;
	if (xp_tcp_seg_read(data, data_end, l3, th, is_v6, payload, &sg))
		return XP_TC_ACT_SHOT;
	xp_cc_handshake_reply(&sg, &r);
	plen = r.payload;
	if (plen > XP_CC_DATA_MAX || xp_reply_hdr(&sg, &r, &hb, &hlen))
		return XP_TC_ACT_SHOT;
	if (bpf_skb_change_tail(skb, sg.l4_off + hlen + plen, 0))
		return XP_TC_ACT_SHOT;
	if (plen && bpf_skb_store_bytes(skb, sg.l4_off + hlen, (const void *)xp_zeros, plen, 0))
		return XP_TC_ACT_SHOT;
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (xp_reply_write(data, data_end, &sg, &hb, hlen, plen))
		return XP_TC_ACT_SHOT;
	/* Whatever the receive path concluded about the checksums was
	 * about the SYN-ACK: let the next hop check ours. */
	bpf_csum_level(skb, BPF_CSUM_LEVEL_RESET);
	xp_cc_count_handshake(cnt, &r);
	XP_INC(cnt, data_tc);
	return bpf_redirect(skb->ifindex, 0);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
