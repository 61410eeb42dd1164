/*
 * The measurement core's maps (bpf/meas_maps.h) as userspace handles them,
 * whichever program holds them: the server's (one slot per test,
 * loader/server_meas.c) or the client's round-trip program (one slot,
 * loader/rtt_prog.c). One implementation of a test's start, the closing of
 * intervals and the readers, on the maps it is given.
 */
#ifndef XP_MEAS_MAPS_H
#define XP_MEAS_MAPS_H

#include <stdint.h>

#include <linux/types.h>

#include "bpf/server.h"
#include "bpf/measure.h"

struct bpf_map;
struct xp_lat_hist;
struct xp_stream_figs;

/* One program's measurement maps, and how many slots they hold. */
struct xp_meas_maps {
	struct bpf_map *slot_meas, *stream_acct, *ibins, *meas_stats;
	int nslots;
	/* Per-flow counting (bpf/measure.h); NULL: the program has none. */
	struct bpf_map *stream_flow, *flow_acct;
	unsigned nflow_entries;
	/* Frames without stamps (bpf/measure.h's struct xp_flow_key); NULL: none. */
	struct bpf_map *flow_key;
};

/*
 * start: zero the slot's streams, stats and bins and set its t0/ival/flags
 * (ival 0 = no stamps: the slot only goes off). close: intervals below upto
 * are closed (-ENOENT if the slot measures nothing). read_ibin: interval i
 * summed over CPUs, added into *h (which the caller initialised), -ENOENT
 * when the ring no longer holds i whole. read_streams: the streams that saw
 * a frame, at most max; their count. read_stats: struct xp_meas_stats
 * summed over CPUs. All 0 (or a count) or -errno; -EINVAL for a slot
 * outside [0, nslots).
 */
int xp_meas_maps_start(const struct xp_meas_maps *mm, int slot, const struct xp_slot_meas *m);
int xp_meas_maps_close(const struct xp_meas_maps *mm, int slot, uint64_t upto);
int xp_meas_maps_read_ibin(const struct xp_meas_maps *mm, int slot, uint64_t i, struct xp_lat_hist *h);
int xp_meas_maps_read_streams(const struct xp_meas_maps *mm, int slot, struct xp_stream_figs *out, unsigned max);
int xp_meas_maps_read_stats(const struct xp_meas_maps *mm, int slot, struct xp_meas_stats *sum);

/*
 * A test with flows (loader/flow_maps.c): start as xp_meas_maps_start, and
 * before the slot goes on, map its streams to flow entries: stream_entry[st]
 * is stream st's entry in flow_acct + 1, 0 for none (NULL: no stream has
 * one, which is what xp_meas_maps_start does); every entry named is zeroed.
 * -EINVAL for an entry past nflow_entries, -EOPNOTSUPP if the program has
 * no flow maps.
 */
int xp_meas_maps_start_flows(const struct xp_meas_maps *mm, int slot, const struct xp_slot_meas *m,
			     const __u32 *stream_entry);
/* The slot's streams -> flow entries (the part of start_flows that writes
 * stream_flow). Called with the slot off. */
int xp_meas_flows_map(const struct xp_meas_maps *mm, int slot, const __u32 *stream_entry);
/*
 * Frames without stamps (loader/flow_maps.c): the slot's n keys (their
 * slot field is set here), keys[i] counting into flow_acct entry
 * entries[i] (0..nflow_entries-1), which are zeroed first; the slot's keys
 * of an earlier test go first, and its unkeyed count is zeroed. Call before
 * the slot's key_mask is set. -EINVAL for an entry past the map, -EEXIST
 * for a key given twice, -EOPNOTSUPP without a flow_key map (n > 0).
 * keys_clear: every key of the slot out (the test's end). 0 or -errno.
 */
int xp_meas_keys_start(const struct xp_meas_maps *mm, int slot, const struct xp_flow_key *keys,
		       const __u32 *entries, unsigned n);
int xp_meas_keys_clear(const struct xp_meas_maps *mm, int slot);
/* Flow entry e summed over CPUs (lat_nmin: the largest, i.e. the smallest
 * latency; lat_max the largest). 0 or -errno. */
int xp_meas_maps_read_flow(const struct xp_meas_maps *mm, unsigned e, struct xp_flow_acct *sum);

#endif
