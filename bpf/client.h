/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared between bpf/client.bpf.c (the client side of the XDP
 * connection engine) and userspace. Free of includes, like xdpperf.h: builds
 * against vmlinux.h (BPF) and <linux/types.h> (userspace).
 *
 * Configuration is rodata, set between open and load (the skeleton's
 * rodata): cc_family, cc_cport_lo/hi, cc_dport_lo/hi, cc_mode, cc_ctrl_port,
 * cc_reply_redirect, cc_data_len. Two programs: xdp_client, and for
 * XP_CC_MODE_DATA tc_client at TC ingress (frames XDP had no room for).
 * A test flow is a TCP segment from a port in [cc_dport_lo, cc_dport_hi] (the
 * server's test ports) to a port in [cc_cport_lo, cc_cport_hi] (the client's
 * source ports). Counters: the per-CPU array map cc_counters, one entry (key
 * 0) of struct xp_cc_counters; userspace sums the CPUs.
 */
#ifndef XDPPERF_CONN_CLIENT_H
#define XDPPERF_CONN_CLIENT_H

/* cc_mode: how the client ends its connections. */
#define XP_CC_MODE_RST       0u /* plain ACK; the server (XP_CLOSE_RST) resets */
#define XP_CC_MODE_FIN       1u /* ACK|FIN completes the handshake and starts the
				 * close in one frame; the server's FIN-ACK gets
				 * the final ACK */
#define XP_CC_MODE_DATA      2u /* ACK|PSH|FIN carrying cc_data_len bytes completes
				 * the handshake, sends the data and starts the
				 * close in one frame; the server's FIN-ACK gets
				 * the final ACK */
#define XP_CC_MODE_KEEPALIVE 3u /* plain ACK; the connection stays open */

/* cc_family: 0 = IPv4 and IPv6, 4 or 6 = that family only. */

/* cc_data_len (XP_CC_MODE_DATA): payload bytes per connection, 1..XP_CC_DATA_MAX,
 * zeroes. One segment, so within one MSS; the program sends less when the
 * SYN-ACK's window or MSS is smaller (see data_bytes). */
#define XP_CC_DATA_MAX       1400u

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
				 * room in the XDP frame, see tc_client) */
};

#endif /* XDPPERF_CONN_CLIENT_H */
