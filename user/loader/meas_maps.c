/*
 * The measurement core's maps from userspace (bpf/measure.h; the BPF side
 * is bpf/server_meas.h over bpf/meas_maps.h): a test's start (zero its
 * streams and bins, then hand the program t0/ival/flags), the closing of
 * intervals, and reading interval bins and stream states back, for the
 * server's program and the client's round-trip program alike. Declared in
 * loader/meas_maps.h.
 */
#include "loader/meas_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/stamp.h"
#include "loader/percpu.h"
#include "meas/latency.h"

static int slot_ok(const struct xp_meas_maps *mm, int slot)
{
	return mm && slot >= 0 && slot < mm->nslots;
}

int xp_meas_maps_start(const struct xp_meas_maps *mm, int slot, const struct xp_slot_meas *m)
{
	return xp_meas_maps_start_flows(mm, slot, m, NULL);
}

int xp_meas_maps_start_flows(const struct xp_meas_maps *mm, int slot, const struct xp_slot_meas *m,
			     const __u32 *stream_entry)
{
	struct xp_slot_meas off = { 0 }, on;
	struct xp_stream_acct zero;
	__u32 key = (__u32)slot;
	int r;

	if (!slot_ok(mm, slot) || !m)
		return -EINVAL;
	/* Off first: frames that arrive while the old test's state is being
	 * cleared are not accounted against half of it. */
	r = bpf_map__update_elem(mm->slot_meas, &key, sizeof(key), &off, sizeof(off), 0);
	if (r)
		return r;
	/* No stream of the slot counts into a flow unless this test says so
	 * (an earlier test's mapping would count into entries now another's). */
	r = xp_meas_flows_map(mm, slot, m->ival ? stream_entry : NULL);
	if (r || !m->ival)
		return r;
	memset(&zero, 0, sizeof(zero));
	for (__u32 st = 0; st < XP_STAMP_MAX_STREAMS; st++) {
		__u32 k = key * XP_STAMP_MAX_STREAMS + st;
		/* The frame path reads the stream's flow here (bpf/server_meas.h). */
		zero.flow = (__u16)(stream_entry && mm->stream_flow ? stream_entry[st] : 0); /* checked: <= entries */
		/* BPF_F_LOCK: written under the element's lock, so a CPU still in
		 * the old test's frame never sees half a zeroed state. */
		r = bpf_map__update_elem(mm->stream_acct, &k, sizeof(k), &zero, sizeof(zero), BPF_F_LOCK);
		if (r)
			return r;
	}
	r = xp_percpu_zero(mm->meas_stats, &key, sizeof(key), sizeof(struct xp_meas_stats));
	if (r)
		return r;
	for (__u32 b = 0; b < XP_IBINS; b++) {
		__u32 k = key * XP_IBINS + b;
		r = xp_percpu_zero(mm->ibins, &k, sizeof(k), sizeof(struct xp_ibin));
		if (r)
			return r;
	}
	on = *m;
	on.pad = 0;
	return bpf_map__update_elem(mm->slot_meas, &key, sizeof(key), &on, sizeof(on), 0);
}

int xp_meas_maps_read_stats(const struct xp_meas_maps *mm, int slot, struct xp_meas_stats *sum)
{
	__u32 key = (__u32)slot;

	if (!slot_ok(mm, slot) || !sum)
		return -EINVAL;
	return xp_percpu_read(mm->meas_stats, &key, sizeof(key), sizeof(*sum), sum,
			      sizeof(*sum));
}

int xp_meas_maps_close(const struct xp_meas_maps *mm, int slot, uint64_t upto)
{
	struct xp_slot_meas m;
	__u32 key = (__u32)slot;
	int r;

	if (!slot_ok(mm, slot))
		return -EINVAL;
	r = bpf_map__lookup_elem(mm->slot_meas, &key, sizeof(key), &m, sizeof(m), 0);
	if (r)
		return r;
	if (!m.ival)
		return -ENOENT; /* no measured test in this slot */
	if (upto <= m.closed_upto)
		return 0; /* intervals are closed once, in order: never reopened */
	/* Only closed_upto changes; the program reads it with one 8-byte load,
	 * and the update copies the value in 8-byte words. */
	m.closed_upto = upto;
	return bpf_map__update_elem(mm->slot_meas, &key, sizeof(key), &m, sizeof(m), 0);
}

/* h += one CPU's bin (what xp_lat_add_bin of meas/latency.c does; done
 * here so the loader does not depend on the report). */
static void add_bin(struct xp_lat_hist *h, const struct xp_ibin *b)
{
	h->recv += b->recv;
	h->dup += b->dup;
	h->late += b->late;
	h->reordered += b->reordered;
	h->clock_neg += b->clock_neg;
	if (!b->lat_n)
		return;
	h->n += b->lat_n;
	h->sum += b->lat_sum;
	if (b->lat_min < h->min)
		h->min = b->lat_min;
	if (b->lat_max > h->max)
		h->max = b->lat_max;
	for (unsigned k = 0; k < XP_LAT_BUCKETS; k++)
		h->b[k] += b->hist[k];
}

int xp_meas_maps_read_ibin(const struct xp_meas_maps *mm, int slot, uint64_t i, struct xp_lat_hist *h)
{
	int gone = 0, held = 0;
	__u32 key = (__u32)slot * XP_IBINS + (__u32)(i % XP_IBINS);
	struct xp_ibin *v;

	if (!slot_ok(mm, slot) || !h)
		return -EINVAL;
	/* Each CPU's copy as it is: its tag says whether it holds interval i (not a plain sum). */
	int ncpus = xp_percpu_lookup(mm->ibins, &key, sizeof(key), sizeof(*v), (void **)&v);
	if (ncpus < 0)
		return ncpus;
	/* A CPU whose bin has an older tag got no frame of i (nothing to add);
	 * one whose bin has a newer tag may have had frames of i and lost
	 * them to the ring: then i cannot be read whole. */
	for (int c = 0; c < ncpus; c++) {
		if (v[c].tag > i + 1)
			gone = 1;
		else if (v[c].tag == i + 1)
			held = 1;
	}
	if (gone) {
		free(v);
		return -ENOENT;
	}
	for (int c = 0; held && c < ncpus; c++)
		if (v[c].tag == i + 1)
			add_bin(h, &v[c]);
	free(v);
	return 0;
}

int xp_meas_maps_read_streams(const struct xp_meas_maps *mm, int slot, struct xp_stream_figs *out, unsigned max)
{
	struct xp_stream_acct a;
	int n = 0, r;

	if (!slot_ok(mm, slot) || (!out && max))
		return -EINVAL;
	for (__u32 st = 0; st < XP_STAMP_MAX_STREAMS && (unsigned)n < max; st++) {
		__u32 k = (__u32)slot * XP_STAMP_MAX_STREAMS + st;
		/* BPF_F_LOCK: one consistent copy, taken under the lock. */
		r = bpf_map__lookup_elem(mm->stream_acct, &k, sizeof(k), &a, sizeof(a), BPF_F_LOCK);
		if (r)
			return r;
		if (!a.seen)
			continue;
		struct xp_stream_figs *f = &out[n++];
		memset(f, 0, sizeof(*f));
		f->stream = st;
		f->recv = a.recv;
		f->dup = a.dup;
		f->reordered = a.reordered;
		f->reorder_max = a.reorder_max;
		f->too_old = a.too_old;
		f->next_exp = a.next_exp;
		f->jitter_ns = (double)a.jitter_x16 / 16.0 * XP_STAMP_TICK_NS;
	}
	return n;
}
