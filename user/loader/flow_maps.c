/*
 * Per-flow counting's maps from userspace (bpf/measure.h's struct
 * xp_flow_acct, bpf/meas_maps.h's stream_flow and flow_acct): mapping a
 * slot's streams to flow entries at a test's start, the keys of its flows
 * without stamps (flow_key) in and out, and reading an entry back summed
 * over CPUs. Declared in loader/meas_maps.h.
 */
#include "loader/meas_maps.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/stamp.h"
#include "loader/percpu.h"

int xp_meas_flows_map(const struct xp_meas_maps *mm, int slot, const __u32 *stream_entry)
{
	if (!mm || slot < 0 || slot >= mm->nslots)
		return -EINVAL;
	if (!mm->stream_flow)
		return stream_entry ? -EOPNOTSUPP : 0;
	/* Entries first, zeroed, then the streams pointed at them: a frame
	 * never counts into a half-cleared entry. */
	for (__u32 st = 0; stream_entry && st < XP_STAMP_MAX_STREAMS; st++) {
		__u32 e = stream_entry[st];
		int r;

		if (!e)
			continue;
		if (e > mm->nflow_entries)
			return -EINVAL;
		e--;
		r = xp_percpu_zero(mm->flow_acct, &e, sizeof(e), sizeof(struct xp_flow_acct));
		if (r)
			return r;
	}
	for (__u32 st = 0; st < XP_STAMP_MAX_STREAMS; st++) {
		__u32 k = (__u32)slot * XP_STAMP_MAX_STREAMS + st, v = stream_entry ? stream_entry[st] : 0;
		int r = bpf_map__update_elem(mm->stream_flow, &k, sizeof(k), &v, sizeof(v), 0);

		if (r)
			return r;
	}
	return 0;
}

int xp_meas_keys_clear(const struct xp_meas_maps *mm, int slot)
{
	if (!mm || slot < 0 || slot >= mm->nslots)
		return -EINVAL;
	if (!mm->flow_key)
		return 0;
	/* The slot's keys first, then out: deleting during the walk would
	 * restart it. The map holds at most max_entries keys. */
	unsigned cap = bpf_map__max_entries(mm->flow_key), n = 0;
	struct xp_flow_key *own = calloc(cap ? cap : 1, sizeof(*own)), k, *cur = NULL;
	if (!own)
		return -ENOMEM;
	while (n < cap && !bpf_map__get_next_key(mm->flow_key, cur, &k, sizeof(k))) {
		if (k.slot == (__u16)slot)
			own[n++] = k;
		cur = &k;
	}
	int r = 0;
	for (unsigned i = 0; i < n; i++) {
		int d = bpf_map__delete_elem(mm->flow_key, &own[i], sizeof(own[i]), 0);
		if (d && d != -ENOENT && !r)
			r = d;
	}
	free(own);
	return r;
}

int xp_meas_keys_start(const struct xp_meas_maps *mm, int slot, const struct xp_flow_key *keys,
		       const __u32 *entries, unsigned n)
{
	__u32 key = (__u32)slot;
	int r;

	if (!mm || slot < 0 || slot >= mm->nslots || (n && (!keys || !entries)))
		return -EINVAL;
	if (!mm->flow_key)
		return n ? -EOPNOTSUPP : 0;
	for (unsigned i = 0; i < n; i++)
		if (entries[i] >= mm->nflow_entries)
			return -EINVAL;
	r = xp_meas_keys_clear(mm, slot);
	if (r)
		return r;
	r = xp_percpu_zero(mm->meas_stats, &key, sizeof(key), sizeof(struct xp_meas_stats));
	if (r)
		return r;
	/* The entries zeroed before any key points at them. */
	for (unsigned i = 0; i < n; i++) {
		__u32 e = entries[i];
		r = xp_percpu_zero(mm->flow_acct, &e, sizeof(e), sizeof(struct xp_flow_acct));
		if (r)
			return r;
	}
	for (unsigned i = 0; i < n; i++) {
		struct xp_flow_key k = keys[i];
		__u32 v = entries[i] + 1;

		k.slot = (__u16)slot;
		k.pad = 0;
		k.pad2 = 0;
		r = bpf_map__update_elem(mm->flow_key, &k, sizeof(k), &v, sizeof(v), BPF_NOEXIST);
		if (r) {
			xp_meas_keys_clear(mm, slot);
			return r;
		}
	}
	return 0;
}

int xp_meas_maps_read_flow(const struct xp_meas_maps *mm, unsigned e, struct xp_flow_acct *sum)
{
	struct xp_flow_acct *v;
	__u32 key = e;

	if (!mm || !mm->flow_acct || !sum || e >= mm->nflow_entries)
		return -EINVAL;
	memset(sum, 0, sizeof(*sum));
	/* Not xp_percpu_read's plain sum: lat_nmin and lat_max are the largest of the CPUs'. */
	int ncpus = xp_percpu_lookup(mm->flow_acct, &key, sizeof(key), sizeof(*v), (void **)&v);
	if (ncpus < 0)
		return ncpus;
	for (int c = 0; c < ncpus; c++) {
		const struct xp_flow_acct *f = &v[c];

		sum->frames += f->frames;
		sum->bytes += f->bytes;
		sum->recv += f->recv;
		sum->dup += f->dup;
		sum->reordered += f->reordered;
		sum->too_old += f->too_old;
		sum->expected += f->expected;
		sum->lat_n += f->lat_n;
		sum->lat_sum += f->lat_sum;
		sum->clock_neg += f->clock_neg;
		if (f->lat_nmin > sum->lat_nmin)
			sum->lat_nmin = f->lat_nmin;
		if (f->lat_max > sum->lat_max)
			sum->lat_max = f->lat_max;
		for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++)
			sum->hist[b] += f->hist[b];
	}
	free(v);
	return 0;
}
