/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Map keys, values and limits shared by the XDP programs in bpf/ and the
 * xdpperf userspace program. Kept free of includes so it builds both against
 * vmlinux.h (BPF side) and <linux/types.h> (userspace side).
 */
#ifndef XDPPERF_H
#define XDPPERF_H

/* How many tests one server can run at once; each gets a slot. */
#define XP_MAX_SLOTS 64

/* port_slot map: one entry per destination port, 0 = not a test port,
 * otherwise slot index + 1 of the test that owns the port. */
#define XP_NUM_PORTS 65536

/* Slot flags (struct xp_slot_cfg.flags). */
#define XP_SLOT_ACTIVE   (1u << 0) /* slot in use */
#define XP_SLOT_PASS     (1u << 1) /* count and XDP_PASS (socket tests); default drop */

/* Protocols a slot counts (struct xp_slot_cfg.protos bit mask). */
#define XP_PROTO_TCP     (1u << 0)
#define XP_PROTO_UDP     (1u << 1)

/* Per-slot configuration, written by userspace when a test starts. */
struct xp_slot_cfg {
	__u32 flags;
	__u32 protos;
};

/*
 * Per-CPU, per-slot counters of frames that matched a test. Userspace sums the
 * CPUs. bytes are L2 frame bytes as XDP sees them (no FCS, no preamble).
 */
struct xp_counters {
	__u64 pkts;
	__u64 bytes;
	__u64 tcp_syn;      /* SYN without ACK */
	__u64 tcp_synack;   /* SYN with ACK */
	__u64 tcp_fin;
	__u64 tcp_rst;
	__u64 tcp_ack_only; /* ACK, no SYN/FIN/RST, no payload */
	__u64 data_pkts;    /* TCP or UDP frames with payload */
	__u64 data_bytes;   /* payload bytes (L4 payload) */
	__u64 udp_pkts;
	__u64 ipv4_pkts;
	__u64 ipv6_pkts;
};

/* Global (slot independent) counters: index into the stats map. */
enum xp_global_stat {
	XP_G_SEEN = 0,      /* every frame the program ran on */
	XP_G_PASSED,        /* non-test frames passed */
	XP_G_MALFORMED,     /* truncated headers: passed untouched */
	XP_G_NSTATS,
};

#endif /* XDPPERF_H */
