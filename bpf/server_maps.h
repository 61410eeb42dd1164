/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The server's XDP program's maps (bpf/server.bpf.c), BPF side: what the
 * loader (user/loader/server_prog.c) writes when a test starts and reads
 * while it runs. Their value types, limits and keys are in server.h,
 * shared with userspace; the names are the skeleton's (skel->maps.port_slot,
 * ...).
 *
 * Include after vmlinux.h, bpf_helpers.h, server.h, lib/csum.h,
 * lib/stamp.h and measure.h.
 */
#ifndef XDPPERF_SERVER_MAPS_H
#define XDPPERF_SERVER_MAPS_H

/* The measurement core's map values and limits (both server programs
 * include this file: the XDP one and the TC one that shares its maps). */
#include "lib/stamp.h"
#include "measure.h"

/* Destination port (host order) -> slot index + 1, 0 = not a test port.
 * An array indexed by port is one bounds check and a load; no hashing. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_NUM_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} port_slot SEC(".maps");

/* Slot index -> the test's configuration, written when it starts. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_slot_cfg);
} slot_cfg SEC(".maps");

/* Per-CPU so the hot path needs no atomics; userspace sums the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_counters);
} counters SEC(".maps");

/* XP_SLOT_RESPOND: per slot, the payload length of the last handshake-
 * completing segment that carried data (the client's data mode sends the
 * same length on every connection of a test). It lets the client's final
 * ACK after such a close be recognised: that ACK's seq is ISN + len + 2,
 * and the client's ISN is what the cookie is bound to. A property of the
 * test, learned from its traffic; nothing is kept per connection. Shared by
 * the CPUs (plain loads and stores: it is written only when it changes). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} slot_data_len SEC(".maps");

/* A slot's client addresses besides slot_cfg's peer (--bind), key struct
 * xp_peer_key, value 1. Looked up only for a slot with npeers > 0 and a
 * source that is not its peer, so a test without --bind pays nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_MAX_SLOTS * XP_SLOT_MAX_PEERS);
	__type(key, struct xp_peer_key);
	__type(value, __u32);
} slot_peers SEC(".maps");

/* The attached interfaces' own addresses, key struct xp_local_key, value
 * XP_LOCAL_UNICAST: what XP_SLOT_RESPOND may answer for, and what can never
 * be a client's source. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, XP_MAX_LOCAL_ADDRS);
	__type(key, struct xp_local_key);
	__type(value, __u32);
} local_addr SEC(".maps");

/* Scratch space for checking a segment's checksum (xp_csum_l4_ok() in
 * lib/csum.h), one buffer per CPU: too big for the BPF stack. */
struct xp_csum_buf {
	__u32 w[XP_CSUM_CHUNK / 4];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_csum_buf);
} csum_scratch SEC(".maps");

/* enum xp_global_stat -> frames, per CPU: counts of every frame, test or
 * not (see the accounting in server.bpf.c). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_G_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} gstats SEC(".maps");

/* The measurement core's maps (slot_meas, stream_acct, ibins, meas_stats),
 * shared with the client's round-trip program (bpf/rtt.bpf.c). */
#include "meas_maps.h"

/* xp_slot_owns: whose frame it is, by slot_cfg, slot_peers and local_addr
 * (both server programs apply it). */
#include "lib/addr.h"
#include "server_slot.h"

#endif /* XDPPERF_SERVER_MAPS_H */
