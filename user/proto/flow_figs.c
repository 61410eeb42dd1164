/*
 * Per-flow figures as JSON (proto/flow_figs.h). The client takes them from a
 * server it may not trust: every member must be there and be a plain
 * non-negative integer; the histogram is [bucket, count] pairs, non-zero
 * buckets only, buckets ascending.
 */
#include "proto/flow_figs.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const names[] = { "frames", "bytes", "recv", "dup", "reordered", "expected",
				     "lat_n", "lat_sum", "lat_min", "lat_max" };
#define NNAMES (sizeof(names) / sizeof(names[0]))

static void values(const struct xp_flow_acct *f, uint64_t v[NNAMES])
{
	uint64_t in[NNAMES] = { f->frames, f->bytes, f->recv, f->dup, f->reordered, f->expected,
				f->lat_n, f->lat_sum, f->lat_n ? ~f->lat_nmin : 0, f->lat_max };
	memcpy(v, in, sizeof(in));
}

struct json_object *xp_flow_acct_to_json(const struct xp_flow_acct *f, unsigned n)
{
	struct json_object *a = json_object_new_array();
	for (unsigned i = 0; i < n; i++) {
		struct json_object *o = json_object_new_object(), *h = json_object_new_array();
		uint64_t v[NNAMES];
		values(&f[i], v);
		for (unsigned k = 0; k < NNAMES; k++)
			json_object_object_add(o, names[k], json_object_new_int64((int64_t)v[k]));
		for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++) {
			if (!f[i].hist[b])
				continue;
			struct json_object *p = json_object_new_array();
			json_object_array_add(p, json_object_new_int((int)b));
			json_object_array_add(p, json_object_new_int64(f[i].hist[b]));
			json_object_array_add(h, p);
		}
		json_object_object_add(o, "hist", h);
		json_object_array_add(a, o);
	}
	return a;
}

/* v as a non-negative integer (NULL, another type or below 0: -1). */
static int u64_of(struct json_object *v, uint64_t *out)
{
	if (!json_object_is_type(v, json_type_int))
		return -1;
	errno = 0;
	int64_t x = json_object_get_int64(v);
	if (errno || x < 0)
		return -1;
	*out = (uint64_t)x;
	return 0;
}

static int get_u64(struct json_object *o, const char *k, uint64_t *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, k, &v))
		return -1;
	return u64_of(v, out);
}

int xp_flow_acct_from_json(struct json_object *a, struct xp_flow_acct *f, unsigned n, char *err, size_t errlen)
{
	if (!a || !json_object_is_type(a, json_type_array) || json_object_array_length(a) != n) {
		snprintf(err, errlen, "the server's per-flow figures are not %u flows (not an xdpperf server of this version?)", n);
		return -1;
	}
	unsigned i;
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(a, i), *h;
		uint64_t v[NNAMES];
		memset(&f[i], 0, sizeof(f[i]));
		if (!json_object_is_type(o, json_type_object))
			goto bad;
		for (unsigned k = 0; k < NNAMES; k++)
			if (get_u64(o, names[k], &v[k]))
				goto bad;
		if (v[2] > v[0] || v[6] > v[2] || v[8] > v[9])
			goto bad;
		f[i].frames = v[0], f[i].bytes = v[1], f[i].recv = v[2], f[i].dup = v[3], f[i].reordered = v[4];
		f[i].expected = v[5], f[i].lat_n = v[6], f[i].lat_sum = v[7], f[i].lat_max = v[9];
		f[i].lat_nmin = v[6] ? ~v[8] : 0;
		if (!json_object_object_get_ex(o, "hist", &h) || !json_object_is_type(h, json_type_array))
			goto bad;
		long last = -1;
		for (size_t j = 0; j < json_object_array_length(h); j++) {
			struct json_object *p = json_object_array_get_idx(h, j), *bo, *co;
			if (!json_object_is_type(p, json_type_array) || json_object_array_length(p) != 2)
				goto bad;
			bo = json_object_array_get_idx(p, 0);
			co = json_object_array_get_idx(p, 1);
			if (!json_object_is_type(bo, json_type_int) || !json_object_is_type(co, json_type_int))
				goto bad;
			int64_t b = json_object_get_int64(bo), c = json_object_get_int64(co);
			if (b <= last || b >= XP_FLOW_LAT_BUCKETS || c <= 0 || c > UINT32_MAX)
				goto bad;
			f[i].hist[b] = (__u32)c;
			last = (long)b;
		}
	}
	return 0;
bad:
	snprintf(err, errlen, "the server's figures of flow %u are malformed (not an xdpperf server of this version?)", i);
	return -1;
}

struct json_object *xp_flow_acct_to_compact(const struct xp_flow_acct *f, unsigned n)
{
	struct json_object *a = json_object_new_array_ext((int)n);
	for (unsigned i = 0; i < n; i++) {
		uint64_t v[XP_FLOW_COMPACT_COUNTS] = { f[i].frames, f[i].bytes, f[i].recv, f[i].dup,
						       f[i].reordered, f[i].lat_n, f[i].lat_sum, f[i].lat_max };
		struct json_object *o = json_object_new_array();
		for (unsigned k = 0; k < XP_FLOW_COMPACT_COUNTS; k++)
			json_object_array_add(o, json_object_new_int64((int64_t)v[k]));
		for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++) {
			if (!f[i].hist[b])
				continue;
			json_object_array_add(o, json_object_new_int((int)b));
			json_object_array_add(o, json_object_new_int64(f[i].hist[b]));
		}
		json_object_array_add(a, o);
	}
	return a;
}

/* Element k of array o as a non-negative integer. */
static int elem_u64(struct json_object *o, size_t k, uint64_t *out)
{
	return u64_of(json_object_array_get_idx(o, k), out);
}

int xp_flow_acct_from_compact(struct json_object *a, struct xp_flow_acct *f, unsigned n, char *err, size_t errlen)
{
	if (!a || !json_object_is_type(a, json_type_array) || json_object_array_length(a) != n) {
		snprintf(err, errlen, "the server's per-flow figures are not %u flows (not an xdpperf server of this version?)", n);
		return -1;
	}
	unsigned i;
	for (i = 0; i < n; i++) {
		struct json_object *o = json_object_array_get_idx(a, i);
		uint64_t v[XP_FLOW_COMPACT_COUNTS];
		memset(&f[i], 0, sizeof(f[i]));
		if (!json_object_is_type(o, json_type_array))
			goto bad;
		size_t len = json_object_array_length(o);
		if (len < XP_FLOW_COMPACT_COUNTS || (len - XP_FLOW_COMPACT_COUNTS) % 2 ||
		    len > XP_FLOW_COMPACT_COUNTS + 2 * XP_FLOW_LAT_BUCKETS)
			goto bad;
		for (unsigned k = 0; k < XP_FLOW_COMPACT_COUNTS; k++)
			if (elem_u64(o, k, &v[k]))
				goto bad;
		if (v[2] > v[0] || v[5] > v[2])
			goto bad;
		f[i].frames = v[0], f[i].bytes = v[1], f[i].recv = v[2], f[i].dup = v[3], f[i].reordered = v[4];
		f[i].lat_n = v[5], f[i].lat_sum = v[6], f[i].lat_max = v[7];
		uint64_t last = 0;
		for (size_t j = XP_FLOW_COMPACT_COUNTS; j < len; j += 2) {
			uint64_t b, c;
			if (elem_u64(o, j, &b) || elem_u64(o, j + 1, &c))
				goto bad;
			if ((j > XP_FLOW_COMPACT_COUNTS && b <= last) || b >= XP_FLOW_LAT_BUCKETS || !c || c > UINT32_MAX)
				goto bad;
			f[i].hist[b] = (__u32)c;
			last = b;
		}
	}
	return 0;
bad:
	snprintf(err, errlen, "the server's interval figures of flow %u are malformed (not an xdpperf server of this "
		 "version?)", i);
	return -1;
}

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

void xp_flow_acct_delta(const struct xp_flow_acct *now, const struct xp_flow_acct *prev, struct xp_flow_acct *out)
{
	memset(out, 0, sizeof(*out));
	out->frames = sub0(now->frames, prev->frames);
	out->bytes = sub0(now->bytes, prev->bytes);
	out->recv = sub0(now->recv, prev->recv);
	out->dup = sub0(now->dup, prev->dup);
	out->reordered = sub0(now->reordered, prev->reordered);
	out->too_old = sub0(now->too_old, prev->too_old);
	out->expected = sub0(now->expected, prev->expected);
	out->lat_n = sub0(now->lat_n, prev->lat_n);
	out->lat_sum = sub0(now->lat_sum, prev->lat_sum);
	out->clock_neg = sub0(now->clock_neg, prev->clock_neg);
	out->lat_max = now->lat_max;
	for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++)
		out->hist[b] = now->hist[b] > prev->hist[b] ? now->hist[b] - prev->hist[b] : 0;
}

void xp_flow_acct_add(struct xp_flow_acct *a, const struct xp_flow_acct *d)
{
	a->frames += d->frames;
	a->bytes += d->bytes;
	a->recv += d->recv;
	a->dup += d->dup;
	a->reordered += d->reordered;
	a->too_old += d->too_old;
	a->expected += d->expected;
	a->lat_n += d->lat_n;
	a->lat_sum += d->lat_sum;
	a->clock_neg += d->clock_neg;
	if (d->lat_max > a->lat_max)
		a->lat_max = d->lat_max;
	for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++)
		a->hist[b] += d->hist[b];
}
