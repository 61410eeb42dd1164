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
	/* Budget of the keepalive check's step search (xp_is_keepalive in
	 * server.bpf.c): cookie MACs per second per CPU, at most one second's
	 * worth at once; 0 = XP_KA_MAC_BUDGET. Tests set it low to reach it. */
	__u32 ka_mac_budget;
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
/* Counted by the TC program (bpf/server_tc.bpf.c) instead: socket tests,
 * whose GSO packets an XDP program on a veth would break up. Set WITHOUT
 * XP_SLOT_ACTIVE, so the XDP program, if it is attached to the same interface
 * for another test, passes the slot's frames uncounted (no frame counted
 * twice); the TC program counts only slots with this flag. */
#define XP_SLOT_TC       (1u << 3)
/* Round trip (issue 10, hosts with different clocks): send every stamped
 * frame of the slot back to where it came from (MACs, addresses and ports
 * swapped, TTL / hop limit reset, XDP_TX or the reply_redirect path), after
 * counting and accounting it as any slot's; the client's program
 * (bpf/rtt.bpf.c) times it on its own clock. Frames without a stamp are
 * dropped as in any slot. Stream tests only: not with XP_SLOT_RESPOND or
 * XP_SLOT_PASS (the loader refuses those). */
#define XP_SLOT_REFLECT  (1u << 4)
/* The slot's interface is a loopback device: every frame on it comes from
 * this host and is for this host, whatever its addresses (127.0.0.1 and the
 * host's other addresses are in no local_addr entry of lo), so the
 * addressed-to-us rule (xp_slot_owns in bpf/server_slot.h) holds for all of
 * them. Set by the loader from the device's IFF_LOOPBACK, never by a
 * client. */
#define XP_SLOT_LOCAL    (1u << 5)

/* Protocols a slot counts (struct xp_slot_cfg.protos bit mask). */
#define XP_PROTO_TCP     (1u << 0)
#define XP_PROTO_UDP     (1u << 1)

/*
 * Per-slot configuration, written by userspace when a test starts (before
 * its ports are mapped, so no frame sees half of it).
 *
 * A slot belongs to one interface and to the test's client: only frames that
 * arrive on ifindex from the client's address (peer, the control
 * connection's far end) or from one of its --bind addresses (slot_peers, npeers
 * of them), AND are addressed to this host (sent to the interface's MAC, mac,
 * and to one of its addresses, local_addr; or XP_SLOT_LOCAL) are the test's.
 * Every other frame to the same ports, whatever its source (one this host
 * forwards, one a DNAT rule will rewrite later, anyone else's), is neither
 * counted nor dropped nor answered nor reflected: it passes (XP_G_FOREIGN).
 * A slot whose peer is unset (peer_family 0) matches no source at all.
 */
struct xp_slot_cfg {
	__u32 flags;
	__u32 protos;
	__u32 close_mode;   /* XP_CLOSE_*: what XP_SLOT_RESPOND does with a valid ACK */
	__u32 ifindex;      /* the interface the test's frames arrive on */
	__u32 peer_family;  /* XP_FAMILY_V4 / XP_FAMILY_V6; 0 = none */
	__u32 peer[4];      /* the client's address, network order (IPv4: [0]) */
	__u32 npeers;       /* further client addresses in slot_peers (--bind) */
	/* The interface's MAC: only frames sent to it are the slot's. */
	__u8 mac[6];
	__u8 pad[2];
	/* One IPv4 and one IPv6 address of the interface (network order; 0 =
	 * none), read by the loader with local_addr at the test's start: a
	 * frame sent to one of them is addressed to us without a local_addr
	 * lookup (the cost of one, ~12 ns a frame, measured with
	 * BPF_PROG_RUN). Frames to the interface's other addresses are looked
	 * up there. Appended: the fields above keep their offsets. */
	__u32 self4;
	__u32 self6[4];
	/* Frames without stamps counted per flow by these header fields
	 * (XP_KEY_* of bpf/measure.h, map flow_key); 0 = the test has no
	 * unstamped flow. Set by server_prog_flow_keys after the keys. */
	__u32 key_mask;
};

/* Address families in map keys and slot_cfg (AF_INET and AF_INET6 are
 * #defines that vmlinux.h lacks). */
#define XP_FAMILY_V4 4u
#define XP_FAMILY_V6 6u

/* Most client addresses a slot takes besides its peer (--bind). */
#define XP_SLOT_MAX_PEERS 256

/* slot_peers map key: one of a slot's further client addresses. */
struct xp_peer_key {
	__u32 slot;
	__u32 family;       /* XP_FAMILY_* */
	__u32 addr[4];      /* network order, IPv4 in [0], the rest 0 */
};

/* local_addr map: the addresses of the interfaces the program is attached to:
 * a slot's frames are those sent to one of them (xp_slot_owns), so that a
 * reply's or a reflection's source address, the frame's destination, is
 * always ours. Filled by the loader at attach and at every test start. */
struct xp_local_key {
	__u32 ifindex;
	__u32 family;       /* XP_FAMILY_* */
	__u32 addr[4];      /* network order, IPv4 in [0], the rest 0 */
};
#define XP_MAX_LOCAL_ADDRS 1024 /* all interfaces together */
#define XP_LOCAL_UNICAST 1u     /* local_addr value */

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
	/* XP_SLOT_RESPOND: TCP frames of the slot that got no reply, each
	 * counted once, under the first reason that applies. With synack_sent,
	 * fin_answered and rst_sent they add up to the slot's TCP frames
	 * (pkts - udp_pkts): every frame is either answered or counted here. */
	__u64 noreply_addr;     /* from a source no reply may go to: a group MAC, an IP
				 * address that is not one host's, or one of ours (a frame
				 * not sent to our MAC and address is no slot's at all) */
	__u64 noreply_shape;    /* IPv4 options or headers beyond what a reply is built for */
	__u64 noreply_csum;     /* bad TCP checksum: a TCP stack would drop it too */
	__u64 noreply_room;     /* the frame could not be resized for the reply */
	__u64 noreply_other;    /* nothing to answer: RST, SYN-ACK, no ACK, forged or stale
				 * cookie (cookie_invalid), the ACK of our FIN, a valid ACK
				 * with XP_CLOSE_NONE, a keepalive */
	/* Of noreply_other: keepalive probes of held connections (a pure ACK,
	 * no data, seq one below the handshake's: the client's ISN, ack our
	 * cookie + 1) whose cookie the slot issued up to 274 s ago
	 * (XP_KA_ROUNDS) and since its test began; older ones count as
	 * cookie_invalid. */
	__u64 keepalives;
	/* Of noreply_other: pure ACKs that needed the keepalive search but
	 * found this CPU's budget of MACs spent (XP_KA_MAC_BUDGET): counted
	 * neither as keepalives nor as invalid cookies, as nobody checked. */
	__u64 keepalive_unchecked;
};

/*
 * Keepalive checks (xp_is_keepalive in server.bpf.c). A keepalive's cookie
 * is as old as its connection, but carries only 3 bits of its 67.1 ms time
 * step: the step is searched, 8 steps back each round, at most
 * XP_KA_ROUNDS rounds (512 x 8 x 67.1 ms = 274 s), one MAC per candidate.
 * What bounds that search on hostile input:
 *  - struct xp_ka_steps, per slot (map ka_steps): the steps in which the
 *    slot issued a cookie (a SYN-ACK) and the first of them. Only those
 *    steps are candidates, none before the slot's first cookie: a forged
 *    pure ACK costs one MAC per step of its 3-bit class in which the test
 *    sent SYN-ACKs (a hold test opens in a few steps), not 512.
 *  - struct xp_ka_budget, per CPU (map ka_budget): a token bucket of MACs,
 *    XP_KA_MAC_BUDGET a second (config.ka_mac_budget), one second's worth
 *    at most. A search that finds it spent stops and counts its ACK as
 *    keepalive_unchecked.
 */
#define XP_KA_ROUNDS     512u
#define XP_KA_STEPS      (XP_KA_ROUNDS * 8u) /* 4096 steps of 67.1 ms: the whole search */
/* ~51 ns a MAC on the test machine (BPF_PROG_RUN): the searches take at most
 * ~2.6 % of a core per CPU, while a hold test's keepalives (1-3 MACs and a
 * few rounds each) pass at over 100 k/s per CPU. */
#define XP_KA_MAC_BUDGET 500000u
/* A round of the search (two array lookups and a compare, 7-11 ns
 * measured) costs a quarter of a MAC's budget. */
#define XP_KA_ROUND_SHIFT 2u

struct xp_ka_steps {
	/* (1 << 32) | the step of the slot's first cookie; 0 = none yet. The
	 * loader zeroes the whole struct when a test takes the slot. */
	__u64 first;
	/* step[s % XP_KA_STEPS] == s: the slot issued a cookie in step s
	 * (entries of steps 274 s older are simply overwritten). */
	__u32 step[XP_KA_STEPS];
};

struct xp_ka_budget {
	__u64 credit_ns; /* the bucket, in ns of budget: a MAC costs 1e9 / budget ns */
	__u64 last_ns;   /* when it was last refilled (bpf_ktime_get_ns) */
	__u64 macs;      /* MACs the keepalive searches computed: what tests bound */
};

/*
 * Per-CPU, per-slot counts of the measurement core's frames (slots whose
 * slot_meas.ival is not 0, bpf/measure.h), map meas_stats. Kept out of
 * struct xp_counters, which travels field by field in the control
 * messages: these are read through server_prog_read_meas_stats.
 */
struct xp_meas_stats {
	__u64 stamped;      /* frames whose stamp was read and accounted */
	__u64 nostamp;      /* frames with no room for a stamp (lib/stamp.h: IPv6/TCP
			     * below 86 bytes, no payload): counted, not accounted */
	__u64 hw_timed;     /* of stamped: timed by the NIC's RX timestamp
			     * (XP_MEAS_HWTS, device-bound program); the rest by the
			     * kernel's clock */
	/* XP_SLOT_REFLECT slots: of stamped, the frames sent back to the
	 * client, and those refused (a multicast or broadcast MAC or IP
	 * address on either side, which a reflection would send from or to:
	 * dropped instead). stamped == reflected + reflect_refused there. */
	__u64 reflected;
	__u64 reflect_refused;
	/* A slot with key_mask: frames without a stamp of the test whose
	 * headers are no flow's key (bpf/measure.h, flow_key). */
	__u64 unkeyed;
};

/* Global (slot independent) counters: index into the stats map. Every frame
 * is SEEN, then exactly one of counted in a slot, PASSED or MALFORMED. */
enum xp_global_stat {
	XP_G_SEEN = 0,      /* every frame the program ran on */
	XP_G_PASSED,        /* non-test frames passed */
	XP_G_MALFORMED,     /* truncated headers: passed untouched */
	/* Sub-counts of XP_G_PASSED: */
	XP_G_FOREIGN,       /* to a test's ports and protocol, but from another source,
			     * on another interface than the test's, or not addressed to
			     * this host (another MAC or IP destination: forwarded) */
	XP_G_FRAGMENT,      /* IPv4 fragments, first or later: a later one carries no
			     * ports, so none is counted (the stack reassembles them) */
	XP_G_NSTATS,
};

#endif /* XDPPERF_SERVER_H */
