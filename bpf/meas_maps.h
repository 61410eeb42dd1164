/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The measurement core's maps, BPF side: what bpf/server_meas.h's
 * accounting (xp_measure) reads and writes, by these names. Two programs
 * hold them: the server's (bpf/server.bpf.c, through server_maps.h: one
 * slot per test, XP_MAX_SLOTS) and the client's round-trip program
 * (bpf/rtt.bpf.c: its one test, XP_MEAS_SLOTS 1), so both time frames with
 * the same code and userspace reads both with the same readers
 * (user/loader/meas_maps.c).
 *
 * Include after vmlinux.h, bpf_helpers.h, server.h (struct xp_meas_stats),
 * lib/stamp.h and measure.h. Define XP_MEAS_SLOTS first for fewer slots.
 */
#ifndef XDPPERF_MEAS_MAPS_H
#define XDPPERF_MEAS_MAPS_H

#ifndef XP_MEAS_SLOTS
#define XP_MEAS_SLOTS XP_MAX_SLOTS
#endif
#ifndef XP_MEAS_FLOW_ENTRIES
#define XP_MEAS_FLOW_ENTRIES XP_FLOW_ENTRIES
#endif

/*
 * The measurement core (bpf/measure.h, accounting in server_meas.h).
 * Memory, all preallocated at load: slot_meas 64 x 40 B; stream_acct
 * 64 slots x 256 streams x 208 B = 3.4 MB; ibins 64 x 4 x 3664 B = 0.94 MB
 * per possible CPU (the server's XP_MAX_SLOTS). The round-trip program's one
 * slot: 256 x 208 B = 53 KB of stream_acct, 4 x 3664 B = 14.7 KB of ibins
 * per possible CPU.
 */
/* Slot -> its test's t0 / ival / closed_upto / flags; ival 0 = no stamps. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MEAS_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_slot_meas);
} slot_meas SEC(".maps");

/* slot * XP_STAMP_MAX_STREAMS + stream -> that stream's state, shared by
 * the CPUs under its bpf_spin_lock. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MEAS_SLOTS * XP_STAMP_MAX_STREAMS);
	__type(key, __u32);
	__type(value, struct xp_stream_acct);
} stream_acct SEC(".maps");

/* slot * XP_IBINS + i % XP_IBINS -> this CPU's figures of send interval i. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_MEAS_SLOTS * XP_IBINS);
	__type(key, __u32);
	__type(value, struct xp_ibin);
} ibins SEC(".maps");

/* Per-flow counting (measure.h): slot * XP_STAMP_MAX_STREAMS + stream ->
 * the stream's flow entry + 1, 0 = none (64 KB for the server's slots). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MEAS_SLOTS * XP_STAMP_MAX_STREAMS);
	__type(key, __u32);
	__type(value, __u32);
} stream_flow SEC(".maps");

/* Flow entry -> this CPU's struct xp_flow_acct (1000 B each: 1 MB per
 * possible CPU for the server's 1024 entries). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_MEAS_FLOW_ENTRIES);
	__type(key, __u32);
	__type(value, struct xp_flow_acct);
} flow_acct SEC(".maps");

/* Frames without stamps (measure.h): struct xp_flow_key -> the flow's
 * entry in flow_acct + 1. A hash: the keys are sparse (ports, addresses).
 * 1024 x (16 + 4 B and the table's ~50 B an element) ~ 70 KB. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_MEAS_FLOW_ENTRIES);
	__type(key, struct xp_flow_key);
	__type(value, __u32);
} flow_key SEC(".maps");

/* slot -> per-CPU struct xp_meas_stats. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_MEAS_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_meas_stats);
} meas_stats SEC(".maps");

#endif /* XDPPERF_MEAS_MAPS_H */
