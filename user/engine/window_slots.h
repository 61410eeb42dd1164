/*
 * The window's slots and free ring (bpf/window.h, bpf/window_ring.h) as the
 * SYN senders take them and the keeper gives them back; beneath the window
 * (engine/window.h) and its keeper's scan (engine/window_scan.h), which both
 * use it.
 */
#ifndef XP_WINDOW_SLOTS_H
#define XP_WINDOW_SLOTS_H

#include <stdint.h>

#include "engine/engine.h"

#define XP_WIN_RTO_S 1.0 /* a slot's first retransmission timeout (RFC 6298 5.7 for SYNs) */

/* The retransmission timeout after `tries` retransmissions: 1 s << tries (testable, no clock). */
static inline double xp_win_rto(unsigned tries)
{
	return XP_WIN_RTO_S * (double)(1u << (tries < 20 ? tries : 20));
}

/* CLOCK_MONOTONIC in ns, bpf_ktime_get_ns()'s clock: the slots' times. */
uint64_t xp_win_mono_ns(void);

/*
 * The AF_XDP sender's part: take a free slot for connection k (ports in
 * host order; hashed its ISN of bpf/lib/isn.h) and record it, *isn the ISN
 * with the slot in it. 0, or -1 when the window is full.
 */
int xp_win_take(const struct xp_win_maps *m, uint64_t k, uint16_t sport, uint16_t dport, uint32_t hashed,
		uint32_t *isn);
/* The same in two steps, for a sender that must know how many it may send
 * before it reserves ring space: pop (0, or -1: full), give back (unused;
 * also the keeper's release: 0, or -1 when the ring would not take it now:
 * the slot is parked for the keeper's next scan, bpf/window_ring.h), record
 * (returns the ISN). */
int xp_win_pop(const struct xp_win_maps *m, uint32_t *slot);
int xp_win_unpop(const struct xp_win_maps *m, uint32_t slot);
uint32_t xp_win_record(const struct xp_win_maps *m, uint32_t slot, uint64_t k, uint16_t sport, uint16_t dport,
		       uint32_t hashed);
/* The free ring's cells for a window of shift (bpf/window_ring.h): a power of two >= its size. */
uint32_t xp_win_ring_cells(unsigned shift);
/* Slots free now (a bound: others may take or free meanwhile). */
uint64_t xp_win_avail(const struct xp_win_maps *m);

#endif
