/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The window's free list (bpf/window.h): a bounded multi-producer,
 * multi-consumer FIFO of free slot ids without a lock (D. Vyukov's bounded
 * MPMC queue). It replaced a BPF QUEUE map, whose push and pop take a
 * spinlock with interrupts saved: on the direct pair at ~0.8 M conn/s the
 * map's push, pop and spinlock were ~7 % of all perf samples.
 *
 * One implementation for both sides: the SYN sender and the client's XDP
 * program (BPF) and the keeper and the AF_XDP sender (userspace, on the
 * mmapped maps). The includer defines, before including this file,
 *   static __always_inline struct xp_win_cell *xp_win_cell_at(void *ring, __u32 i)
 * (BPF: a lookup in the win_free ARRAY map; userspace: &cells[i]).
 *
 * The ring has 2^bits cells (bits = 32 - the window's shift: at least the
 * window's size), each { seq, slot }, and two positions in win_ctl:
 * ring_tail (where the next free slot goes) and ring_head (where the next
 * is taken). Cell pos & mask is free for a put at position pos when its seq
 * is pos, and holds a slot for a get at pos when its seq is pos + 1; a put
 * claims its position with a compare-and-swap on the tail, writes the slot,
 * then publishes seq = pos + 1; a get claims the head, reads the slot, then
 * hands the cell to the put one lap later (seq = pos + 2^bits). Positions
 * are 32 bits and wrap; they are compared as signed differences, exact for
 * rings up to 2^31 cells (the largest window is 2^20).
 *
 * -P stays exact without the ring's help: a slot goes on the ring only from
 * the one who moved its word to FREE (compare-and-swap), so it is on the
 * ring at most once, and at most `size` slots exist (<= the ring's cells).
 * A put can still fail: after XP_WIN_RING_TRIES compare-and-swaps in a row
 * lost to other CPUs, or when the cell one lap ahead is still held by a get
 * that claimed it and has not yet handed it on. BPF programs are not
 * preempted there, but a userspace get (the AF_XDP sender) can be, and the
 * puts then reach its cell after one lap (measured: tests/unit/test_win_ring,
 * 4 threads on 2 CPUs). The caller then parks the slot (XP_WIN_PARKED,
 * counted in win_ctl.ring_parked) and the keeper's next scan (10 ms) puts it
 * back: the window is one smaller for that long, never larger. A stalled put
 * only makes gets find the window full until it publishes. A get that
 * loses XP_WIN_RING_TRIES races finds the window full this once (no SYN
 * this run).
 *
 * Ordering: the seq store is an exchange (a full barrier) after the slot's
 * store; its load is a plain load before the slot's load, which x86-64 does
 * not reorder (the project's BPF side already relies on that, see
 * live.bpf.c's slot record).
 */
#ifndef XDPPERF_WINDOW_RING_H
#define XDPPERF_WINDOW_RING_H

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

#define XP_WIN_RING_TRIES 16
#define XP_WIN_LOAD(x)    (*(volatile __u32 *)&(x))

/* The ring's mask for a window's shift (bpf/window.h: shift = 32 - bits). */
static __always_inline __u32 xp_win_ring_mask(__u32 shift)
{
	return (1u << ((32 - shift) & 31)) - 1;
}

/* Slot back on the ring: 0, or -1 (counted in ring_parked: the caller parks the slot). */
static __always_inline int xp_win_ring_put(void *ring, struct xp_win_ctl *ctl, __u32 mask, __u32 slot)
{
	for (int i = 0; i < XP_WIN_RING_TRIES; i++) {
		__u32 pos = XP_WIN_LOAD(ctl->ring_tail);
		struct xp_win_cell *c = xp_win_cell_at(ring, pos & mask);
		__s32 dif;

		if (!c)
			break;
		dif = (__s32)(XP_WIN_LOAD(c->seq) - pos);
		if (dif < 0)
			break; /* the cell's last get has not handed it on yet */
		if (dif > 0)
			continue; /* another put took pos: try the new tail */
		if (__sync_val_compare_and_swap(&ctl->ring_tail, pos, pos + 1) != pos)
			continue;
		c->slot = slot;
		__sync_lock_test_and_set(&c->seq, pos + 1);
		return 0;
	}
	__sync_fetch_and_add(&ctl->ring_parked, 1);
	return -1;
}

/* A free slot into *slot: 0, or -1 (none free now). */
static __always_inline int xp_win_ring_get(void *ring, struct xp_win_ctl *ctl, __u32 mask, __u32 *slot)
{
	for (int i = 0; i < XP_WIN_RING_TRIES; i++) {
		__u32 pos = XP_WIN_LOAD(ctl->ring_head);
		struct xp_win_cell *c = xp_win_cell_at(ring, pos & mask);
		__s32 dif;

		if (!c)
			return -1;
		dif = (__s32)(XP_WIN_LOAD(c->seq) - (pos + 1));
		if (dif < 0)
			return -1; /* empty: the window is full */
		if (dif > 0)
			continue; /* another get took pos */
		if (__sync_val_compare_and_swap(&ctl->ring_head, pos, pos + 1) != pos)
			continue;
		*slot = XP_WIN_LOAD(c->slot);
		__sync_lock_test_and_set(&c->seq, pos + mask + 1);
		return 0;
	}
	return -1;
}

#endif /* XDPPERF_WINDOW_RING_H */
