/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared by the client's round-trip program (bpf/rtt.bpf.c) and its loader
 * (user/loader/rtt_prog.c). Free of includes, like server.h.
 *
 * Round-trip mode (issue 10, hosts with different clocks): the server's
 * program sends each stamped frame of the test back (XP_SLOT_REFLECT,
 * bpf/lib/reflect.h); this program, on the client's interface, recognises
 * those frames, times them against the client's own clock with the
 * server's accounting code (bpf/server_meas.h, in its maps of
 * bpf/meas_maps.h, one slot: key 0) and drops them. The latency it bins is
 * rx - stamp ts on ONE clock, the round trip.
 */
#ifndef XDPPERF_RTT_H
#define XDPPERF_RTT_H

/*
 * The rodata variable `config`, set by the loader between open and load. A
 * reflected frame is TCP or UDP (protos, XP_PROTO_* of server.h) of family
 * (XP_FAMILY_*), from server (the server's test address) and a source port
 * in [port_lo, port_hi] (the test's ports at the server), to client (our
 * address). Addresses in network order, IPv4 in [0], the rest 0; ports in
 * host order.
 */
struct xp_rtt_config {
	__u32 family;
	__u32 server[4];
	__u32 client[4];
	__u32 protos;
	__u16 port_lo;
	__u16 port_hi;
};

/* Per-CPU frame counts, map rtt_stats: every frame is SEEN, then exactly
 * one of TIMED (a reflected frame with a stamp: accounted and dropped),
 * NOSTAMP (from the server's test ports to us, but with no stamp where
 * lib/stamp.h puts one, or while no test is started: passed) or PASSED
 * (anything else, untouched). */
enum xp_rtt_stat {
	XP_RTT_SEEN = 0,
	XP_RTT_TIMED,
	XP_RTT_NOSTAMP,
	XP_RTT_PASSED,
	XP_RTT_NSTATS,
};

#endif /* XDPPERF_RTT_H */
