/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The server's receive-side accounting of stamped frames (issue 10): what
 * bpf/server.bpf.c does with a counted test frame of a slot whose
 * slot_meas.ival is not 0. The layouts and their meaning are bpf/measure.h's,
 * the stamp is bpf/lib/stamp.h's; this file is the BPF code between them.
 *
 * Per frame, in this order:
 *   1. read the stamp where xp_stamp_place_of() says it is (payload, or
 *      IPv4 ID + payload at 64 bytes); no room: counted in meas_nostamp;
 *   2. per (slot, stream), under the stream's bpf_spin_lock: extend seq and
 *      ts to 64 bits, classify the frame (in order / gap, RFC 4737
 *      reordered, duplicate, below the window) and update RFC 3550 jitter;
 *   3. per send interval i = (ts - t0) / ival, in this CPU's bin of i (a
 *      ring of XP_IBINS per slot, tagged i + 1): recv / dup / reordered and
 *      the latency rx - ts into the histogram; a frame whose interval is
 *      already closed (or gone from the ring) counts as late in the bin of
 *      the interval it arrives in.
 * Cost: four array lookups (slot_meas, meas_stats, stream_acct, ibins; array lookups
 * are inlined by the verifier), one clock read, one spin lock; a frame of a
 * flow one more (its flow_acct entry, named by its stream_acct entry). The lock is
 * needed because a stream's frames can land on any CPU (RSS, veth's
 * sender-CPU receive); the bins are per CPU and need none.
 *
 * Include after server_maps.h.
 */
#ifndef XDPPERF_SERVER_MEAS_H
#define XDPPERF_SERVER_MEAS_H

#include "measure.h"
#include "lib/latency.h"
#include "lib/stamp.h"
#include "lib/mutate.h"

#ifdef XP_SERVER_HWTS
/* The NIC's receive time of this frame (ns, the NIC's clock). Only a
 * device-bound program may call it (the kernel refuses to load it in any
 * other), hence the separate program bpf/server_hwts.bpf.c. 0 or -errno
 * (-EOPNOTSUPP: the driver has none; -ENODATA: none for this frame). */
extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx, __u64 *timestamp) __ksym;
#endif

/* What the stream state made of a frame (step 2). */
enum xp_arrival_kind {
	XP_ARR_NEXT = 0,   /* seq >= next_exp: in order, or after a gap */
	XP_ARR_REORDERED,  /* seq < next_exp, inside the window, not seen before */
	XP_ARR_DUP,        /* seen before (inside the window) */
	XP_ARR_TOO_OLD,    /* below the window: counted as received */
};

/*
 * The 8-byte stamp of a frame with payload_len bytes of L4 payload at pl
 * (ip_id: the IPv4 Identification field as it is on the wire). 0 with *s
 * set, or -1 when the frame has no room for one (or is cut short).
 */
static __always_inline int xp_stamp_read(void *pl, void *data_end, __u32 payload_len, int is_v6,
					 __u16 ip_id, __u64 *s)
{
	enum xp_stamp_place where = xp_stamp_place_of(is_v6, payload_len);
	__u8 *p = pl;

	if (where == XP_STAMP_AT_PAYLOAD) {
		if ((void *)(p + XP_STAMP_BYTES) > data_end)
			return -1;
		/* One unaligned 8-byte load: x86 and arm64 have efficient
		 * unaligned access, which is when the verifier allows it. */
		*s = __bpf_be64_to_cpu(*(__u64 *)p);
		return 0;
	}
	if (where == XP_STAMP_AT_IPID) {
		if ((void *)(p + XP_STAMP_BYTES - 2) > data_end)
			return -1;
		*s = (__u64)bpf_ntohs(ip_id) << 48 | (__u64)bpf_ntohl(*(__u32 *)p) << 16 |
		     bpf_ntohs(*(__u16 *)(p + 4));
		return 0;
	}
	return -1;
}

/* The bits of window word base/64 (positions base..base+63) that lie in
 * [lo, hi). */
static __always_inline __u64 xp_win_mask(__u32 base, __u32 lo, __u32 hi)
{
	__u32 l = lo > base ? lo - base : 0, h = hi < base + 64 ? hi - base : 64;

	if (lo >= base + 64 || hi <= base || h <= l)
		return 0;
	return (h - l == 64 ? ~0ull : ((1ull << (h - l)) - 1)) << l;
}

/* Forget the window bits of sequence numbers [from, from + n), 0 < n <
 * XP_SEQ_WINDOW: their positions are about to stand for seq + XP_SEQ_WINDOW,
 * not yet received. Word by word, 16 words, so a gap of any size costs the
 * same and the verifier walks no per-bit loop. */
static __always_inline void xp_win_clear(struct xp_stream_acct *a, __u64 from, __u32 n)
{
	__u32 s = (__u32)(from % XP_SEQ_WINDOW), e = s + n;
	__u32 e2 = e > XP_SEQ_WINDOW ? e - XP_SEQ_WINDOW : 0; /* the part that wraps to 0 */
	__u32 w;

#pragma unroll
	for (w = 0; w < XP_SEQ_WINDOW / 64; w++)
		a->window[w] &= ~(xp_win_mask(w * 64, s, e) | xp_win_mask(w * 64, 0, e2));
}

static __always_inline __u64 *xp_win_word(struct xp_stream_acct *a, __u64 seq, __u64 *bit)
{
	__u32 pos = (__u32)(seq % XP_SEQ_WINDOW);

	*bit = 1ull << (pos % 64);
	return &a->window[(pos / 64) & (XP_SEQ_WINDOW / 64 - 1)];
}

/*
 * Step 2, under the stream's lock: a frame of stream a with stamp fields
 * seq24/ts32 arrived at rx (ticks). *ts gets its full send time; the result
 * is its kind. No helper calls in here (the verifier allows none under a
 * lock), so everything the lock protects is plain arithmetic.
 */
static __always_inline enum xp_arrival_kind xp_stream_account(struct xp_stream_acct *a, __u64 t0, __u32 seq24,
							      __u32 ts32, __u64 rx, int timed, __u64 *ts)
{
	enum xp_arrival_kind kind = XP_ARR_NEXT;
	__u64 seq, bit, *word;
	__s64 transit, d;

	if (!a->seen) {
		/* The stream's first frame: its number is its seq24 (streams
		 * start at 0), its time the one nearest the test's start. */
		seq = seq24;
		*ts = xp_stamp_ts_extend(t0, ts32);
		a->seen = 1;
		a->next_exp = seq + 1;
		a->last_ts = *ts;
		word = xp_win_word(a, seq, &bit);
		*word |= bit;
		XP_INC_AS(stream_recv, a, recv);
		if (timed)
			a->last_transit = (__s64)(rx - *ts);
		return XP_ARR_NEXT;
	}
	seq = xp_stamp_seq_extend(a->next_exp - 1, seq24);
	*ts = xp_stamp_ts_extend(a->last_ts, ts32);
	if (seq >= a->next_exp) {
		__u64 gap = seq - a->next_exp;

		if (gap >= XP_SEQ_WINDOW) {
			__u32 w;
#pragma unroll
			for (w = 0; w < XP_SEQ_WINDOW / 64; w++)
				a->window[w] = 0;
		} else if (gap) {
			xp_win_clear(a, a->next_exp, (__u32)gap);
		}
		word = xp_win_word(a, seq, &bit);
		*word |= bit;
		a->next_exp = seq + 1;
		a->last_ts = *ts;
		XP_INC_AS(stream_recv, a, recv);
	} else if (a->next_exp - seq > XP_SEQ_WINDOW) {
		XP_INC_AS(stream_too_old, a, too_old);
		XP_INC_AS(stream_recv, a, recv);
		kind = XP_ARR_TOO_OLD;
	} else {
		word = xp_win_word(a, seq, &bit);
		if (*word & bit) {
			XP_INC_AS(stream_dup, a, dup);
			return XP_ARR_DUP; /* no jitter sample: RFC 3550 times packets, not copies */
		}
		*word |= bit;
		XP_INC_AS(stream_recv, a, recv);
		XP_INC_AS(stream_reordered, a, reordered);
		if (a->next_exp - 1 - seq > a->reorder_max)
			a->reorder_max = a->next_exp - 1 - seq;
		kind = XP_ARR_REORDERED;
	}
	/* RFC 3550 6.4.1 / A.8 in arrival order: J += (|D| - J) / 16, kept
	 * as 16 J in integers. The clocks' offset cancels in D, so this needs
	 * no shared clock; but not a change of clock (XP_MEAS_HWTS_ONLY: a
	 * frame without the NIC's time is no sample). */
	if (!timed)
		return kind;
	transit = (__s64)(rx - *ts);
	d = transit - a->last_transit;
	if (d < 0)
		d = -d;
	a->last_transit = transit;
	a->jitter_x16 += (__u64)d - ((a->jitter_x16 + 8) >> 4);
	return kind;
}

/* Start bin b afresh for the interval with tag (i + 1). Once per interval
 * per CPU, so a plain loop (not unrolled: 450 stores of code for nothing). */
static __always_inline void xp_ibin_reset(struct xp_ibin *b, __u64 tag)
{
	__u32 k;

	b->recv = b->dup = b->late = b->reordered = 0;
	b->lat_n = b->lat_sum = b->lat_max = b->clock_neg = 0;
	b->lat_min = ~0ull;
	/* 8 bytes a step; the empty asm keeps clang from turning the loop
	 * into a memset call, which BPF does not have. */
#pragma clang loop unroll(disable)
	for (k = 0; k < XP_LAT_BUCKETS / 2; k++) {
		asm volatile("" : "+r"(k));
		((__u64 *)b->hist)[k] = 0;
	}
	b->tag = tag;
}

/* This CPU's bin of interval i of slot, reset if it still holds an older
 * interval; NULL if the ring has moved past i (a newer interval holds it). */
static __always_inline struct xp_ibin *xp_ibin_of(__u32 slot, __u64 i)
{
	__u32 key = slot * XP_IBINS + (__u32)(i % XP_IBINS);
	struct xp_ibin *b = bpf_map_lookup_elem(&ibins, &key);

	if (!b)
		return NULL;
	if (b->tag < i + 1)
		xp_ibin_reset(b, i + 1);
	else if (b->tag > i + 1)
		return NULL;
	return b;
}

/* The receiver's clock in stamp ticks: CLOCK_TAI or CLOCK_MONOTONIC. */
static __always_inline __u64 xp_rx_clock(__u32 flags)
{
	return ((flags & XP_MEAS_TAI) ? bpf_ktime_get_tai_ns() : bpf_ktime_get_ns()) >> XP_STAMP_TICK_SHIFT;
}

/*
 * Per-flow counting (measure.h): the frame of a stream whose flow entry + 1
 * is fe (its stream_acct's flow: stream_flow's value, kept in the entry the
 * frame already holds), whose accounting said kind, which moved its
 * stream's next expected number by adv, flen bytes long, latency lat ticks
 * if timed. Nothing for a stream no flow claims (fe 0): one test of a field
 * already loaded is all a test without flows pays.
 */
static __always_inline void xp_flow_count(__u32 fe, enum xp_arrival_kind kind, __u64 adv, __u32 flen, __s64 lat,
					  int timed)
{
	struct xp_flow_acct *f;
	__u32 e;
	__u64 bk;

	if (!fe)
		return;
	e = fe - 1;
	f = bpf_map_lookup_elem(&flow_acct, &e);
	if (!f)
		return;
	f->frames++;
	f->bytes += flen;
	if (kind == XP_ARR_DUP) {
		f->dup++;
		return; /* a copy: not received again, not timed */
	}
	f->recv++;
	f->expected += adv;
	if (kind == XP_ARR_REORDERED)
		f->reordered++;
	else if (kind == XP_ARR_TOO_OLD)
		f->too_old++;
	if (!timed)
		return;
	if (lat < 0) {
		f->clock_neg++;
		return;
	}
	f->lat_n++;
	f->lat_sum += (__u64)lat;
	if (~(__u64)lat > f->lat_nmin)
		f->lat_nmin = ~(__u64)lat;
	if ((__u64)lat > f->lat_max)
		f->lat_max = (__u64)lat;
	/* As xp_measure's bucket: the index pinned to one register. */
	bk = xp_lat_bucket(lat > 0xffffffffll ? 0xffffffffu : (__u32)lat) >> XP_FLOW_LAT_SHIFT;
	asm volatile("" : "+r"(bk));
	if (bk >= XP_FLOW_LAT_BUCKETS)
		return;
	asm volatile("" : "+r"(bk));
	f->hist[bk]++;
}

/*
 * Steps 2-3 for a counted frame of a slot whose slot_meas.ival is not 0
 * (has_stamp: step 1 found its stamp s). A global function, verified once
 * on its own: inlined into xdp_server, its loops were walked again on every
 * path there, past the verifier's limit. Its arguments are plain numbers
 * (a global function cannot take packet pointers), so step 1, which reads
 * the packet, stays in the caller. Returns 0.
 */
#ifdef XP_SERVER_HWTS
__noinline int xp_measure(struct xdp_md *ctx, __u32 slot, __u64 s, int has_stamp, __u32 flen)
#else
/* (No ctx here: unused, clang would not pass it, and the verifier would
 * refuse the call for the ctx argument it then does not get.) */
__noinline int xp_measure(__u32 slot, __u64 s, int has_stamp, __u32 flen)
#endif
{
	struct xp_slot_meas *m;
	struct xp_meas_stats *ms;
	struct xp_stream_acct *a;
	enum xp_arrival_kind kind;
	struct xp_ibin *b;
	__u64 rx = 0, ts = 0, i, bk, adv;
	__u32 key, flags, fe;
	__s64 lat;
	int hw = 0, untimed;

	m = bpf_map_lookup_elem(&slot_meas, &slot);
	ms = bpf_map_lookup_elem(&meas_stats, &slot);
	if (!m || !ms || !m->ival)
		return 0;
	flags = m->flags;
	if (!has_stamp) {
		XP_INC_AS(meas_nostamp, ms, nostamp);
		return 0;
	}
	XP_INC_AS(meas_stamped, ms, stamped);
#ifdef XP_SERVER_HWTS
	if (flags & XP_MEAS_HWTS) {
		__u64 nic = 0;

		/* 0 with a time of 0 is "none" too: veth answers 0 and the
		 * skb's hardware stamp, which no hardware set. */
		if (!bpf_xdp_metadata_rx_timestamp(ctx, &nic) && nic) {
			rx = nic >> XP_STAMP_TICK_SHIFT;
			hw = 1;
			ms->hw_timed++;
		}
	}
#endif
	/* --rx-timestamp hw: no NIC time, no time (measure.h); counted all the same. */
	untimed = !hw && (flags & XP_MEAS_HWTS_ONLY);
	if (!hw)
		rx = xp_rx_clock(flags);

	key = slot * XP_STAMP_MAX_STREAMS + xp_stamp_stream(s);
	a = bpf_map_lookup_elem(&stream_acct, &key);
	if (!a)
		return 0;
	bpf_spin_lock(&a->lock);
	fe = a->flow;
	adv = a->next_exp;
	kind = xp_stream_account(a, m->t0, xp_stamp_seq24(s), xp_stamp_ts32(s), rx, !untimed, &ts);
	adv = a->next_exp - adv; /* how far the frame moved the stream on */
	bpf_spin_unlock(&a->lock);
	/* Its flow, if the test has flows: whatever its interval. */
	xp_flow_count(fe, kind, adv, flen, (flags & XP_MEAS_ONEWAY) && !untimed ? (__s64)(rx - ts) : 0,
		      (flags & XP_MEAS_ONEWAY) && !untimed);

	/* The interval that sent it. A send time before t0 (a sender whose
	 * first stamp precedes the start it announced) is interval 0's. */
	i = ts > m->t0 ? (ts - m->t0) / m->ival : 0;
	b = i < m->closed_upto ? NULL : xp_ibin_of(slot, i);
	if (!b) {
		/* Late: interval i is closed (userspace has read it) or gone
		 * from the ring. Counted in the bin of the interval it arrives
		 * in, by the receiver's clock when it shares the sender's
		 * (ONEWAY); otherwise that clock says nothing about t0, and
		 * the oldest open interval (the next one userspace reads) is
		 * the nearest honest answer. Never in a closed interval. */
		__u64 at = m->closed_upto;

		if (flags & XP_MEAS_ONEWAY) {
			__u64 now = xp_rx_clock(flags);

			if (now > m->t0 && (now - m->t0) / m->ival > at)
				at = (now - m->t0) / m->ival;
		}
		b = xp_ibin_of(slot, at);
		if (b)
			XP_INC_AS(ibin_late, b, late);
		return 0;
	}
	if (kind == XP_ARR_DUP) {
		XP_INC_AS(ibin_dup, b, dup);
		return 0;
	}
	if (kind == XP_ARR_REORDERED)
		XP_INC_AS(ibin_reordered, b, reordered);
	XP_INC_AS(ibin_recv, b, recv);
	if (!(flags & XP_MEAS_ONEWAY) || untimed)
		return 0; /* no shared clock: one-way times would be the clocks' offset */
	lat = (__s64)(rx - ts);
	if (lat < 0) {
		XP_INC_AS(ibin_clock_neg, b, clock_neg);
		return 0;
	}
	XP_INC_AS(ibin_lat_n, b, lat_n);
	XP_ADD_AS(ibin_lat_sum, b->lat_sum, (__u64)lat);
	if ((__u64)lat < b->lat_min)
		b->lat_min = (__u64)lat;
	if ((__u64)lat > b->lat_max)
		b->lat_max = (__u64)lat;
	/* The empty asm pins the index to one register, checked and used as
	 * is: clang may otherwise check one copy and index with another whose
	 * bound the verifier does not know (seen when this was inlined). */
	bk = xp_lat_bucket(lat > 0xffffffffll ? 0xffffffffu : (__u32)lat);
	asm volatile("" : "+r"(bk));
	if (bk >= XP_LAT_BUCKETS)
		return 0;
	asm volatile("" : "+r"(bk));
	XP_ADD_AS(ibin_hist, b->hist[bk], 1);
	return 0;
}

#endif /* XDPPERF_SERVER_MEAS_H */
