/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the server's XDP program (bpf/server.bpf.c) and its loader
 * (user/loader/server_prog.c): the read-only configuration, map keys and
 * values, slot flags and limits. Kept free of includes so it builds both
 * against vmlinux.h (BPF side) and <linux/types.h> (userspace side).
 */
#ifndef XDPPERF_SERVER_H
#define XDPPERF_SERVER_H

/*
 * The program's configuration: the rodata variable `config`, set by the
 * loader between open and load (skel->rodata->config) and frozen at load,
 * so the verifier sees every field as a constant. One struct, so what
 * configures the program is in one place on both sides.
 */
struct xp_server_config {
	/* SYN cookie key (SipHash-2-4, 128 bits): the loader sets it from
	 * getrandom(), a new one per load. All zero (not set) still works but
	 * anyone can then forge cookies. Only root can read it back (map
	 * dump). */
	__u64 cookie_key[2];
	/* TCP port of the xdpperf control connection (host order), 0 = none:
	 * frames to or from it reach the stack whatever port_slot says, or a
	 * test could cut its own control channel. */
	__u16 ctrl_port;
	/* Send replies with bpf_redirect() to the ingress interface instead
	 * of XDP_TX: needed on a veth whose peer has no XDP program (see
	 * xp_reply_verdict in bpf/lib/tcp_reply.h). */
	__u8 reply_redirect;
};

/* How many tests one server can run at once; each gets a slot. */
#define XP_MAX_SLOTS 64

/* port_slot map: one entry per destination port, 0 = not a test port,
 * otherwise slot index + 1 of the test that owns the port. */
#define XP_NUM_PORTS 65536

/* Slot flags (struct xp_slot_cfg.flags). */
#define XP_SLOT_ACTIVE   (1u << 0) /* slot in use */
#define XP_SLOT_PASS     (1u << 1) /* count and XDP_PASS (socket tests); default drop */
/* Answer the slot's TCP frames statelessly from XDP (connection tests): SYN ->
 * SYN-ACK carrying a SYN cookie, a valid cookie ACK -> counted as established
 * (and RST back with XP_CLOSE_RST), client FIN -> FIN-ACK. Frames it does not
 * answer are counted and dropped (or passed with XP_SLOT_PASS) as before. */
#define XP_SLOT_RESPOND  (1u << 2)

/* Protocols a slot counts (struct xp_slot_cfg.protos bit mask). */
#define XP_PROTO_TCP     (1u << 0)
#define XP_PROTO_UDP     (1u << 1)

/* Per-slot configuration, written by userspace when a test starts. */
struct xp_slot_cfg {
	__u32 flags;
	__u32 protos;
	__u32 close_mode;   /* XP_CLOSE_*: what XP_SLOT_RESPOND does with a valid ACK */
};

/* struct xp_slot_cfg.close_mode. */
#define XP_CLOSE_NONE    0u /* count the connection, drop the ACK (data, keepalive tests) */
#define XP_CLOSE_RST     1u /* count it, answer with a RST (connection-rate tests) */

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
	/* XP_SLOT_RESPOND slots only (appended: userspace sums the struct as
	 * an array of __u64, so new fields go at the end). */
	__u64 conn_established; /* ACK (or ACK|FIN) carrying a valid SYN cookie */
	__u64 cookie_invalid;   /* pure ACK whose cookie is forged or stale: dropped */
	__u64 synack_sent;      /* SYNs answered with a SYN-ACK (sent back out) */
	__u64 fin_answered;     /* client FINs answered with a FIN-ACK */
	__u64 rst_sent;         /* valid ACKs answered with a RST (XP_CLOSE_RST) */
};

/* Global (slot independent) counters: index into the stats map. */
enum xp_global_stat {
	XP_G_SEEN = 0,      /* every frame the program ran on */
	XP_G_PASSED,        /* non-test frames passed */
	XP_G_MALFORMED,     /* truncated headers: passed untouched */
	XP_G_NSTATS,
};

#endif /* XDPPERF_SERVER_H */
