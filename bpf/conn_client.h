/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared between bpf/conn_client.bpf.c (the client side of the XDP
 * connection engine) and userspace. Free of includes, like xdpperf.h: builds
 * against vmlinux.h (BPF) and <linux/types.h> (userspace).
 *
 * Configuration is rodata, set between open and load (the skeleton's
 * rodata): cc_family, cc_cport_lo/hi, cc_dport_lo/hi, cc_mode, cc_ctrl_port,
 * cc_reply_redirect.
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
#define XP_CC_MODE_DATA      2u /* plain ACK; userspace sends the data */
#define XP_CC_MODE_KEEPALIVE 3u /* plain ACK; the connection stays open */

/* cc_family: 0 = IPv4 and IPv6, 4 or 6 = that family only. */

struct xp_cc_counters {
	__u64 synack_seen;      /* SYN-ACKs of test flows */
	__u64 acks_sent;        /* handshake-completing ACKs sent back out, FIN mode included */
	__u64 fins_sent;        /* of those, sent as ACK|FIN (XP_CC_MODE_FIN) */
	__u64 rst_seen;         /* RSTs of test flows (dropped) */
	__u64 finack_answered;  /* server FINs answered with the final ACK */
	__u64 passed;           /* frames passed to the stack (non-test traffic) */
};

#endif /* XDPPERF_CONN_CLIENT_H */
