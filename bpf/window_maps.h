/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The XDP connection engine's window maps (bpf/window.h), BPF side: the
 * SYN sender (bpf/live.bpf.c in SYN mode) and the client's program
 * (bpf/xdp_connect.bpf.c) both hold them by these names. Each object is loaded
 * with max_entries 1; when config.win_size is set the loader hands it the
 * engine's own maps (user/engine/window.c, bpf_map__reuse_fd), so both
 * programs and userspace see the same slots.
 *
 * A file of its own because window.h is shared with userspace, which must
 * not see map definitions. Include after vmlinux.h, bpf_helpers.h and
 * window.h.
 */
#ifndef XDPPERF_WINDOW_MAPS_H
#define XDPPERF_WINDOW_MAPS_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xp_win_slot);
} win_slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xp_win_cell);
} win_free SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
	__type(key, __u32);
	__type(value, struct xp_win_ctl);
} win_ctl SEC(".maps");

static __always_inline struct xp_win_cell *xp_win_cell_at(void *ring, __u32 i)
{
	return bpf_map_lookup_elem(ring, &i);
}

#include "window_ring.h"

#endif /* XDPPERF_WINDOW_MAPS_H */
