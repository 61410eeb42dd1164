// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Client side of the XDP connection engine: completes the handshakes of the
 * raw SYNs the client sends (from AF_XDP), at XDP speed and with no
 * per-connection state. Attached to the client's interface:
 *
 *   SYN-ACK of a test flow -> rewritten in place into the ACK that completes
 *                             the handshake (ACK|FIN in XP_CC_MODE_FIN):
 *                             seq = its ack, ack = its seq + 1, timestamps
 *                             echoed; XDP_TX
 *   FIN of a test flow     -> the final ACK (seq = its ack, ack = its seq +
 *                             len + 1); XDP_TX
 *   RST of a test flow     -> counted, dropped (the server's close)
 *   anything else          -> XDP_PASS: the control connection, ARP/ND, the
 *                             host's own traffic
 *
 * (XDP_TX, or a redirect to the ingress interface with cc_reply_redirect.)
 *
 * Everything the reply needs is in the segment being answered: our sequence
 * number is the one the server acknowledges, theirs the one it sent. See
 * conn_client.h for the configuration (rodata) and counters.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "conn_client.h"
#include "parsing.h"
#include "tcp_reply.h"

const volatile __u8 cc_family = 0;      /* 0 both, 4, 6 */
const volatile __u16 cc_cport_lo = 0;   /* client (source) ports, host order */
const volatile __u16 cc_cport_hi = 0;
const volatile __u16 cc_dport_lo = 0;   /* server (test) ports, host order */
const volatile __u16 cc_dport_hi = 0;
const volatile __u32 cc_mode = XP_CC_MODE_RST;
/* The control connection's TCP port (host order), 0 = none: never a test
 * flow, whatever the ranges say. */
const volatile __u16 cc_ctrl_port = 0;
/* Replies via bpf_redirect() to the ingress interface instead of XDP_TX:
 * for a veth whose peer has no XDP program (see xp_reply_verdict). */
const volatile __u8 cc_reply_redirect = 0;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_cc_counters);
} cc_counters SEC(".maps");

/* Window of our ACKs: with window scaling (7, what the client's SYN offers,
 * see FRAME_SYN_WSCALE) 502 << 7 = 64256 bytes, as Linux shows. */
#define XP_CC_WINDOW_SCALED 502
#define XP_CC_WINDOW        65535

static __always_inline int in_range(__u16 port_be, __u16 lo, __u16 hi)
{
	__u16 p = bpf_ntohs(port_be);

	return p >= lo && p <= hi;
}

SEC("xdp")
int xdp_conn_client(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data };
	struct xp_cc_counters *cnt;
	struct xp_tcp_reply r = {};
	struct xp_tcp_seg sg;
	struct ipv6hdr *ip6h;
	struct iphdr *iph;
	struct tcphdr *th;
	__u32 key = 0, l4_len, payload;
	__u16 h_proto;
	void *l3;
	__u8 fl;
	int is_v6;

	cnt = bpf_map_lookup_elem(&cc_counters, &key);
	if (!cnt)
		return XDP_PASS;

	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		goto pass;
	if (h_proto == bpf_htons(ETH_P_IP)) {
		if (cc_family == 6)
			goto pass;
		if (parse_iphdr(&c, data_end, &iph, &l4_len) < 0 ||
		    iph->protocol != IPPROTO_TCP || ipv4_is_later_fragment(iph))
			goto pass;
		l3 = iph;
		is_v6 = 0;
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		if (cc_family == 4)
			goto pass;
		if (parse_ipv6hdr(&c, data_end, &ip6h, &l4_len) < 0 ||
		    ip6h->nexthdr != IPPROTO_TCP)
			goto pass;
		l3 = ip6h;
		is_v6 = 1;
	} else {
		goto pass;
	}
	if (parse_tcphdr(&c, data_end, l4_len, &th, &payload) < 0)
		goto pass;
	if (cc_ctrl_port && (th->source == bpf_htons(cc_ctrl_port) ||
			     th->dest == bpf_htons(cc_ctrl_port)))
		goto pass;
	if (!in_range(th->dest, cc_cport_lo, cc_cport_hi) ||
	    !in_range(th->source, cc_dport_lo, cc_dport_hi))
		goto pass;

	fl = tcp_flags(th);
	if (fl & XP_TCPF_RST) {
		cnt->rst_seen++;
		return XDP_DROP;
	}
	if ((fl & (XP_TCPF_SYN | XP_TCPF_ACK | XP_TCPF_FIN)) == (XP_TCPF_SYN | XP_TCPF_ACK)) {
		cnt->synack_seen++;
		if (xp_tcp_seg_read(data, data_end, l3, th, is_v6, payload, &sg))
			return XDP_DROP;
		r.seq = sg.ack;
		r.ack = sg.seq + 1;
		r.flags = XP_TCPF_ACK;
		if (cc_mode == XP_CC_MODE_FIN)
			r.flags |= XP_TCPF_FIN;
		r.window = sg.has_ws ? XP_CC_WINDOW_SCALED : XP_CC_WINDOW;
		/* Our clock: the server echoed our SYN's TSval; going on from
		 * there keeps it monotonic without knowing what userspace put
		 * in the SYN. */
		if (sg.has_ts)
			xp_reply_put_ts(&r, sg.tsecr, sg.tsval);
		if (xp_tcp_reply_send(ctx, &sg, &r))
			return XDP_DROP;
		cnt->acks_sent++;
		if (cc_mode == XP_CC_MODE_FIN)
			cnt->fins_sent++;
		return xp_reply_verdict(ctx, cc_reply_redirect);
	}
	if ((fl & (XP_TCPF_SYN | XP_TCPF_ACK | XP_TCPF_FIN)) == (XP_TCPF_ACK | XP_TCPF_FIN)) {
		if (xp_tcp_seg_read(data, data_end, l3, th, is_v6, payload, &sg))
			return XDP_DROP;
		r.seq = sg.ack;
		r.ack = sg.seq + sg.payload + 1;
		r.flags = XP_TCPF_ACK;
		r.window = XP_CC_WINDOW_SCALED;
		if (sg.has_ts)
			xp_reply_put_ts(&r, sg.tsecr, sg.tsval);
		if (xp_tcp_reply_send(ctx, &sg, &r))
			return XDP_DROP;
		cnt->finack_answered++;
		return xp_reply_verdict(ctx, cc_reply_redirect);
	}
pass:
	cnt->passed++;
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
