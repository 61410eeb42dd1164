/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The XDP connection engine's window (-P): at most `size` handshakes in
 * flight (-x) or held (-k). Shared by its three parts, which all see the
 * same maps (created by user/engine/window.c, handed to both BPF objects
 * with bpf_map__reuse_fd):
 *
 *   win_slots  ARRAY (BPF_F_MMAPABLE) of `size` struct xp_win_slot: one
 *              connection's state per slot, mapped into userspace too;
 *   win_free   ARRAY (BPF_F_MMAPABLE) of 2^bits struct xp_win_cell: the
 *              free slot ids, a FIFO ring without a lock (bpf/window_ring.h);
 *   win_ctl    ARRAY (BPF_F_MMAPABLE), one struct xp_win_ctl (with the
 *              ring's head and tail).
 *
 * Who does what:
 *   - the SYN sender (bpf/live.bpf.c in SYN mode, or the AF_XDP engine
 *     in userspace) pops a free slot for every new connection, writes the
 *     connection into it (state SYN_SENT, a new generation) and sends its
 *     SYN. No free slot: no SYN (the window is full);
 *   - the client's XDP program (bpf/xdp_connect.bpf.c) finds the slot of each
 *     SYN-ACK, FIN or RST from the sequence number it acknowledges (below),
 *     moves the slot on with a compare-and-swap and, when the connection is
 *     done (-x: handshake complete; --fin: the server's FIN answered; a
 *     reset), pushes the slot back on win_free: the next SYN can go;
 *   - userspace (user/engine/window.c) scans the slots every few ms: SYNs
 *     (and --fin's FINs) unanswered for the retransmission timeout are sent
 *     again (1 s, doubling, --syn-retries times), then given up (the slot is
 *     freed, the failure counted); held connections get keepalives; at the
 *     end of -k every held connection is reset from its state.
 *
 * The slot is in the ISN: isn = slot << shift | r, r < 2^shift - XP_WIN_SEQ_SPAN,
 * shift = 32 - bits(size). Every segment of the connection acknowledges a
 * sequence number in [isn, isn + XP_WIN_SEQ_SPAN), so seq >> shift is the slot
 * for the SYN-ACK (ack - 1 = isn), the FIN-ACK (ack - 2) and an ICMP error
 * quoting the SYN (seq = isn) alike; the slot's isn and ports then confirm it.
 * r is the connection's hashed ISN (bpf/lib/isn.h) reduced: with the largest
 * window (2^20) 2048 values, with -P 1000 four million.
 *
 * Memory: 40 bytes of slot and 8 of free-list cell per connection of the
 * window (the ring is rounded up to a power of two: -P 50000, 65536 cells:
 * 2.5 MB), whatever the test's length.
 */
#ifndef XDPPERF_WINDOW_H
#define XDPPERF_WINDOW_H

#ifndef __bpf__
#include <linux/types.h>
#endif

#define XP_WIN_MAX       (1u << 20) /* largest window (-P) */
#define XP_WIN_SEQ_SPAN  2048u      /* > 2 + XP_CC_DATA_MAX: the sequence numbers a connection uses */

/* Slot states (the low 8 bits of word; the generation above them). */
#define XP_WIN_FREE      0u /* on win_free (or being taken) */
#define XP_WIN_SYN_SENT  1u /* SYN sent, no SYN-ACK yet */
#define XP_WIN_FIN_WAIT  2u /* --fin: ACK|FIN sent, the server's FIN not yet seen */
#define XP_WIN_OPEN      3u /* -k: established, held */
#define XP_WIN_DONE      4u /* -k: given up or reset; never reused (a hold opens each slot once) */
#define XP_WIN_PARKED    5u /* free, but the free ring would not take it (bpf/window_ring.h): the keeper puts it back */

#define XP_WIN_STATE(w)  ((w) & 0xffu)
#define XP_WIN_GEN(w)    ((w) >> 8)
#define XP_WIN_WORD(gen, st) (((gen) << 8) | (st))

struct xp_win_slot {
	__u32 word;     /* generation << 8 | state: compare-and-swapped, so that a
			 * late reply or a late timeout never moves a newer connection */
	__u32 isn;      /* our ISN */
	__u32 srv_nxt;  /* the server's ISN + 1, from its SYN-ACK */
	__u16 sport;    /* host order */
	__u16 dport;
	__u64 k;        /* connection number: its tuple (user/engine/tuples.h) */
	__u64 t_ns;     /* last transmission: CLOCK_MONOTONIC (userspace) or its
			 * coarse reading (BPF, bpf_ktime_get_coarse_ns: a tick
			 * behind at most, so a timeout fires a tick early at most) */
	__u32 tries;    /* retransmissions so far */
	__u32 pad;
};

/* One cell of the free list's ring (bpf/window_ring.h). */
struct xp_win_cell {
	__u32 seq;  /* the ring position it is ready for: pos (empty), pos + 1 (holds slot) */
	__u32 slot;
};

/* Counters kept by the BPF side (userspace keeps its own: retransmissions, timeouts). */
struct xp_win_ctl {
	__u64 taken;        /* slots taken by the SYN sender: new connections */
	__u64 freed;        /* slots the client program put back on win_free */
	__u64 synack_dup;   /* SYN-ACKs of a connection already answered (a retransmitted SYN's): answered again */
	__u64 stale;        /* SYN-ACKs of no current connection (given up, or gone): answered with RST */
	__u64 fail_reset;   /* SYNs answered by a reset */
	__u64 fail_unreach; /* SYNs answered by ICMP destination unreachable */
	__u64 fin_dup;      /* server FINs of a connection already closed: answered again */
	__u64 ring_parked;  /* puts the free ring refused (XP_WIN_PARKED; bpf/window_ring.h) */
	__u32 ring_head;    /* the free ring's positions (bpf/window_ring.h) */
	__u32 ring_tail;
};

/* The number of bits a slot id of a window of size slots needs (1..20). */
static inline __u32 xp_win_bits(__u32 size)
{
	__u32 b = 1;

	while (b < 20 && (1u << b) < size)
		b++;
	return b;
}

static inline __u32 xp_win_isn(__u32 hashed, __u32 slot, __u32 shift)
{
	return (slot << shift) | (hashed % ((1u << shift) - XP_WIN_SEQ_SPAN));
}

#endif /* XDPPERF_WINDOW_H */
