/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared between bpf/xdp_connect.bpf.c (the client side of the XDP connection
 * engine) and its loader (user/loader/xdp_connect_prog.c). Free of includes, like
 * server.h: builds against vmlinux.h (BPF) and <linux/types.h> (userspace).
 *
 * Configuration is the rodata variable `config` (struct xp_xdp_connect_config),
 * set between open and load (skel->rodata->config). Two programs:
 * xdp_connect, and for XP_CC_MODE_DATA tc_connect at TC ingress (frames XDP
 * had no room for). A test flow is a TCP segment from a port in
 * [dport_lo, dport_hi] (the server's test ports) to a port in
 * [cport_lo, cport_hi] (the client's source ports). Counters: the per-CPU
 * array map cc_counters, one entry (key 0) of struct xp_cc_counters;
 * userspace sums the CPUs.
 */
#ifndef XDPPERF_CLIENT_H
#define XDPPERF_CLIENT_H

/* config.mode: how the client ends its connections. */
#define XP_CC_MODE_RST       0u /* plain ACK; the server (XP_CLOSE_RST) resets */
#define XP_CC_MODE_FIN       1u /* ACK|FIN completes the handshake and starts the
				 * close in one frame; the server's FIN-ACK gets
				 * the final ACK */
#define XP_CC_MODE_DATA      2u /* ACK|PSH|FIN carrying data_len bytes completes
				 * the handshake, sends the data and starts the
				 * close in one frame; the server's FIN-ACK gets
				 * the final ACK */
#define XP_CC_MODE_KEEPALIVE 3u /* plain ACK; the connection stays open */

/* config.data_len (XP_CC_MODE_DATA): payload bytes per connection,
 * 1..XP_CC_DATA_MAX, zeroes. One segment, so within one MSS; the program
 * sends less when the SYN-ACK's window or MSS is smaller (see data_bytes). */
#define XP_CC_DATA_MAX       1400u

/* The program's read-only configuration (rodata, frozen at load: the
 * verifier sees every field as a constant). Ports in host order. */
struct xp_xdp_connect_config {
	__u32 mode;           /* XP_CC_MODE_* */
	__u32 data_len;       /* XP_CC_MODE_DATA: payload bytes per connection */
	__u16 cport_lo;       /* client (source) ports */
	__u16 cport_hi;
	__u16 dport_lo;       /* server (test) ports */
	__u16 dport_hi;
	/* The control connection's TCP port, 0 = none: never a test flow,
	 * whatever the ranges say. */
	__u16 ctrl_port;
	__u8 family;          /* 0 = IPv4 and IPv6, 4 or 6 = that family only */
	/* Replies via bpf_redirect() to the ingress interface instead of
	 * XDP_TX: for a veth whose peer has no XDP program (see
	 * xp_reply_verdict in bpf/lib/tcp_reply.h). */
	__u8 reply_redirect;
	__u8 pad[2];
	/* The window (bpf/window.h), 0 = none: stateless, as the unit tests
	 * load it. With one, every SYN-ACK, FIN and RST of a test flow is
	 * matched to its slot in win_slots and moves it on. */
	__u32 win_size;
	__u32 win_shift;
};

struct xp_cc_counters {
	__u64 synack_seen;      /* SYN-ACKs of test flows */
	__u64 acks_sent;        /* handshake-completing ACKs sent back out, FIN and DATA modes included */
	__u64 fins_sent;        /* of those, sent with FIN (XP_CC_MODE_FIN and _DATA) */
	__u64 rst_seen;         /* RSTs of test flows (dropped) */
	__u64 finack_answered;  /* server FINs answered with the final ACK */
	__u64 passed;           /* frames passed to the stack (non-test traffic) */
	/* Appended (userspace sums the struct as an array of __u64). */
	__u64 data_sent;        /* of acks_sent, those carrying data (XP_CC_MODE_DATA) */
	__u64 data_bytes;       /* their payload bytes */
	__u64 data_tc;          /* of data_sent, those built by the TC fallback (no
				 * room in the XDP frame, see tc_connect) */
	__u64 unanswered;       /* SYN-ACKs and FINs of test flows dropped without a
				 * reply: headers no reply is built for (IPv4
				 * options), or the frame could not be resized */
};

#endif /* XDPPERF_CLIENT_H */
