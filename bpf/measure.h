/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The measurement core's shared layout: what the senders count per send
 * interval, and what the server's XDP program keeps per stream and per send
 * interval from the stamps (lib/stamp.h) it reads. Shared by BPF and
 * userspace (loaders, engines, the control messages, the report, the tests):
 * only __u8..__u64, no includes.
 *
 * Loss belongs to the interval that SENT the frames. Both sides bin by the
 * same number, the stamp's send time: interval i of a test holds the frames
 * whose send time t (full ticks) has (t - t0) / ival == i, t0 and ival in
 * stamp ticks, fixed when the test starts (the client's clock; the server
 * learns them from the test request). The sender counts what it stamped into
 * interval i, the receiver what it got of interval i: the difference is
 * interval i's loss, never negative, whatever the latency.
 *
 * Bins are a ring of XP_IBINS per slot (sender: per thread), indexed i %
 * XP_IBINS and tagged with i: the writer (one CPU, no atomics) resets a bin
 * whose tag is older than the frame's interval; a reader takes a bin only
 * when its tag is the interval it wants. An interval is final when it ended
 * XP_LATE_AFTER_NS ago (the grace for frames in flight); userspace reads it
 * then (it has XP_IBINS - 1 intervals' time to do so), and frames of an
 * interval that arrive after userspace closed it (slot's closed_upto) count
 * as late: in the bin of the interval they arrive in, not in their own.
 */
#ifndef XDPPERF_MEASURE_H
#define XDPPERF_MEASURE_H

#include "lib/latency.h"

#define XP_IBINS 4u            /* interval bins per slot / per sending thread */
#define XP_LATE_AFTER_NS 1000000000ull /* a frame more than 1 s behind its interval's end is late */

/* Per send interval, per CPU, per slot: what the server got of it. */
struct xp_ibin {
	__u64 tag;             /* interval index i + 1 (0: never used) */
	__u64 recv;            /* stamped frames of interval i, duplicates excluded */
	__u64 dup;             /* duplicates (seen twice within the reorder window) */
	__u64 late;            /* frames of an earlier, already closed interval that
				* arrived during this one */
	__u64 reordered;       /* RFC 4737: seq below the stream's next expected */
	__u64 lat_n;           /* frames timed (recv minus those with a negative latency) */
	__u64 lat_sum;         /* ticks */
	__u64 lat_min, lat_max;/* ticks; lat_min is ~0 while lat_n == 0 */
	__u64 clock_neg;       /* latency < 0: the clocks disagree (one-way figures withheld) */
	__u32 hist[XP_LAT_BUCKETS]; /* latency buckets, lib/latency.h */
};

/* Reorder / duplicate window per stream: a bitmap of the last
 * XP_SEQ_WINDOW sequence numbers below next_exp. */
#define XP_SEQ_WINDOW 1024u

/*
 * Per (slot, stream), shared by the CPUs under a bpf_spin_lock (a stream's
 * frames can arrive on any CPU). Userspace zeroes a slot's streams when a
 * test starts, before its ports are mapped. Map key: slot * XP_STAMP_MAX_STREAMS
 * + stream. The lock is the BPF side's struct bpf_spin_lock (4 bytes);
 * userspace sees a __u32.
 */
struct xp_stream_acct {
#ifdef __bpf__
	struct bpf_spin_lock lock;
#else
	__u32 lock;
#endif
	__u16 seen;            /* 1 once the stream's first frame arrived */
	__u16 flow;            /* its flow's entry in flow_acct + 1 (0: none): stream_flow's value,
				* set with the zeroed state at the test's start, so a frame finds
				* its flow in the entry it already holds (one lookup less); 16
				* bits (XP_FLOW_ENTRIES + 1 fits) keep the entry at 208 bytes */
	__u64 next_exp;        /* RFC 4737 NextExp: highest seq received + 1 (64-bit) */
	__u64 last_ts;         /* full send time (ticks) of the frame that set next_exp */
	__u64 recv;            /* frames, duplicates excluded */
	__u64 dup;
	__u64 reordered;       /* arrived with seq < next_exp and not a duplicate */
	__u64 reorder_max;     /* largest next_exp - 1 - seq of a reordered frame (sequence
				* numbers, not RFC 4737's arrival positions) */
	__u64 too_old;         /* seq below the window: cannot tell reordered from duplicate;
				* counted as received */
	__s64 last_transit;    /* RFC 3550 jitter: transit time of the previous frame */
	__u64 jitter_x16;      /* RFC 3550 J * 16 (ticks), J += (|D| - J) / 16 */
	__u64 window[XP_SEQ_WINDOW / 64]; /* bit (seq % XP_SEQ_WINDOW): received */
};

/* Per send interval, per sending thread: what it stamped (sender side). */
struct xp_sbin {
	__u64 tag;             /* interval index + 1 */
	__u64 sent;
};

/* Per slot, written by userspace: when the test started and how long its
 * intervals are (stamp ticks of the sender's clock, from the test request),
 * and which intervals it has closed. Map slot_meas, key slot. */
struct xp_slot_meas {
	__u64 t0;              /* start of interval 0 (ticks, sender clock) */
	__u64 ival;            /* ticks per interval; 0 = the slot's frames carry no stamp */
	__u64 closed_upto;     /* intervals below this are closed: their frames are late */
	__u32 flags;           /* XP_MEAS_* */
	__u32 pad;
	/* The test's tag key (lib/stamp.h's xp_stamp_tag): a frame not
	 * addressed to this host is the test's only with a right tag. 0, 0:
	 * none (no frame gets in that way). */
	__u64 key[2];
};
#define XP_MEAS_ONEWAY (1u << 0) /* both ends share a clock: time frames one way */
#define XP_MEAS_TAI    (1u << 1) /* the clock is CLOCK_TAI (else CLOCK_MONOTONIC) */
#define XP_MEAS_HWTS   (1u << 2) /* prefer the NIC's RX timestamp (metadata kfunc) */
/* With XP_MEAS_HWTS (--rx-timestamp hw): the NIC's time or none. A frame the
 * NIC gave no time for is counted (received, lost, reordered) but neither
 * timed nor a jitter sample: mixing the NIC's clock with the kernel's in one
 * histogram would mean nothing. meas_stats says how many were timed. */
#define XP_MEAS_HWTS_ONLY (1u << 3)

/*
 * Per-flow counting (issue 26). A flow is a set of the test's streams: the
 * stamp keeps its layout (lib/stamp.h), and its stream byte, which already
 * names a sequence space, names the flow through the map stream_flow (key
 * slot * XP_STAMP_MAX_STREAMS + stream, value: the flow's entry in
 * flow_acct + 1; 0: the stream is counted per slot only, as every stream of
 * a test without flows). A flow sent by one thread is one stream; a flow
 * that several threads send is several streams mapped to one entry. So a
 * test has at most 256 flows (one stream each), and today's single-stream
 * stamps, whose streams map to nothing, are read and counted exactly as
 * before.
 *
 * flow_acct holds XP_FLOW_ENTRIES entries for all slots together (per CPU):
 * the server hands each test with flows a range of them. Counted for each
 * stamped frame of a mapped stream, whatever its interval (cumulative; the
 * reader takes differences at interval ends):
 *   frames, bytes      every frame, duplicates included (bytes: the whole
 *                      frame, as the slot's counters count it)
 *   recv, dup, reordered, too_old   as xp_stream_acct counts them
 *   expected           the sum over the flow's streams of how far each
 *                      frame moved its stream's next expected number: the
 *                      flow's highest seq + 1 per stream, so expected - recv
 *                      is the loss by sequence (frames missing below the
 *                      highest seen; loss after the last frame received
 *                      needs the sender's count)
 *   lat_*, hist        one-way latency (XP_MEAS_ONEWAY only), in buckets of
 *                      XP_FLOW_LAT_SHIFT coarser than the slot's (lib/
 *                      latency.h's bucket >> 2: 8 a octave, each 9 % wide,
 *                      16 ns below 256 ns), to keep a flow at ~1 KB a CPU
 */
#define XP_FLOW_ENTRIES     1024u
_Static_assert(XP_FLOW_ENTRIES < 0xffff, "xp_stream_acct.flow holds an entry + 1 in 16 bits");
#define XP_FLOW_LAT_SHIFT   2u
#define XP_FLOW_LAT_BUCKETS (XP_LAT_BUCKETS >> XP_FLOW_LAT_SHIFT) /* 224 */

struct xp_flow_acct {
	__u64 frames;
	__u64 bytes;
	__u64 recv;
	__u64 dup;
	__u64 reordered;
	__u64 too_old;
	__u64 expected;
	__u64 lat_n;           /* frames timed */
	__u64 lat_sum;         /* ticks */
	__u64 lat_nmin;        /* ~(smallest latency) in ticks: 0 while lat_n == 0,
				* so a zeroed entry needs no initial value */
	__u64 lat_max;         /* ticks */
	__u64 clock_neg;       /* latency < 0 (clocks disagree) */
	__u32 hist[XP_FLOW_LAT_BUCKETS]; /* bucket b: lib/latency.h's buckets
					  * b << 2 .. (b << 2) + 3 */
};

/*
 * Frames without stamps, per flow (issue 26, docs/flows.md "Counting frames
 * without stamps"). A flow that sends no stamp is found by the headers it
 * declares unique: the map flow_key (a hash, XP_FLOW_ENTRIES keys for all
 * slots) takes struct xp_flow_key to the flow's entry in flow_acct + 1, and
 * counts frames, bytes and recv there (no sequence, no send time: expected,
 * order and latency stay 0). The slot's xp_slot_cfg.key_mask says which
 * fields make the key (the same for all the test's flows); the others are 0
 * in it. Only frames addressed to this host that carry no stamp of the test
 * (no right tag, lib/stamp.h) are looked up; one whose key is in no flow
 * counts in meas_stats' unkeyed. 0: the slot has no unstamped flow, and its
 * frames pay one branch for all this.
 *
 * The fields, in the order the client tries them (fewest first):
 *   vid[0], vid[1]  the frame's first (outer) and second VLAN ID as the
 *                   program sees them, XP_KEY_NO_VID without that tag
 *   dscp            IPv4 TOS >> 2, IPv6 traffic class >> 2
 *   sport, dport    host order
 *   src             IPv4 source, or the IPv6 source's four 32-bit words
 *                   XORed (network order as in the frame: a flow's source
 *                   is one of the client's addresses, which a fold tells
 *                   apart without a 16-byte key)
 */
#define XP_KEY_VID0   (1u << 0)
#define XP_KEY_VID1   (1u << 1)
#define XP_KEY_DSCP   (1u << 2)
#define XP_KEY_SPORT  (1u << 3)
#define XP_KEY_DPORT  (1u << 4)
#define XP_KEY_SRC    (1u << 5)
#define XP_KEY_FIELDS 0x3fu
/* Key counting on, whatever the fields: a lone unstamped flow needs none. */
#define XP_KEY_ON     (1u << 7)
#define XP_KEY_NO_VID 0xfffu

struct xp_flow_key {
	__u16 slot;
	__u16 vid[2];
	__u8 dscp;
	__u8 pad;
	__u16 sport, dport;
	__u16 pad2;
	__u32 src;
};

#endif /* XDPPERF_MEASURE_H */
