/*
 * A sending thread's count of the frames it stamped per send interval
 * (bpf/measure.h: interval i = (t - t0) / ival of the stamp's send time t,
 * frames before t0 in interval 0), for senders that stamp in userspace (the
 * AF_XDP engine; the live engine's generator keeps the same ring in BPF).
 * The ring holds the last XP_IBINS intervals, each bin tagged i + 1.
 *
 * One writer (the thread), any number of readers (the client's sent_in):
 * relaxed atomics, and a bin's reset is published before its new tag, so a
 * reader that sees the tag it wants never sees an older interval's count;
 * readers check the tag again after the count.
 */
#ifndef XP_SEND_BINS_H
#define XP_SEND_BINS_H

#include <errno.h>
#include <linux/types.h>
#include <stdint.h>

#include "bpf/measure.h"

struct xp_send_bins {
	uint64_t idx;   /* interval counted into now */
	uint64_t end;   /* tick it ends at; 0 before the first frame */
	struct xp_sbin b[XP_IBINS];
};

/* Count n frames stamped at ts (ticks). Divides only when an interval ends. */
static inline void xp_send_bins_count(struct xp_send_bins *s, uint64_t t0, uint64_t ival, uint64_t ts, uint64_t n)
{
	struct xp_sbin *b;

	if (ts >= s->end) {
		uint64_t idx = ts < t0 ? 0 : (ts - t0) / ival;

		s->idx = idx;
		s->end = t0 + (idx + 1) * ival;
		b = &s->b[idx % XP_IBINS];
		if (b->tag != idx + 1) {
			__atomic_store_n(&b->sent, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&b->tag, idx + 1, __ATOMIC_RELEASE);
		}
	}
	b = &s->b[s->idx % XP_IBINS];
	__atomic_store_n(&b->sent, b->sent + n, __ATOMIC_RELAXED);
}

/* Take back the last n frames counted (posted, then never sent): newest
 * interval first, as far as the ring reaches. */
static inline void xp_send_bins_uncount(struct xp_send_bins *s, uint64_t n)
{
	if (!s->end)
		return;
	for (uint64_t i = 0; n && i < XP_IBINS && i <= s->idx; i++) {
		struct xp_sbin *b = &s->b[(s->idx - i) % XP_IBINS];
		uint64_t k;

		if (b->tag != s->idx - i + 1)
			continue;
		k = b->sent < n ? b->sent : n;
		__atomic_store_n(&b->sent, b->sent - k, __ATOMIC_RELAXED);
		n -= k;
	}
}

/*
 * Add this thread's frames of interval i to *sent. 0 (an older tag: it sent
 * nothing in i), or -ENOENT when the bin was taken for a later interval or
 * changed while being read.
 */
static inline int xp_send_bins_read(const struct xp_send_bins *s, uint64_t i, uint64_t *sent)
{
	const struct xp_sbin *b = &s->b[i % XP_IBINS];
	uint64_t tag = __atomic_load_n(&b->tag, __ATOMIC_ACQUIRE);
	uint64_t n = __atomic_load_n(&b->sent, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&b->tag, __ATOMIC_ACQUIRE) != tag)
		return -ENOENT;
	if (tag == i + 1)
		*sent += n;
	else if (tag > i + 1)
		return -ENOENT;
	return 0;
}

#endif
