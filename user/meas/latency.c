/*
 * Latency figures from the measurement core's histograms: sums of the
 * server's per-CPU interval bins (bpf/measure.h), percentiles read off the
 * log-linear buckets (bpf/lib/latency.h), and a JSON form that keeps the raw
 * buckets so two runs (or two intervals) can be merged exactly later.
 */
#include "meas/latency.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <string.h>

#include "bpf/lib/stamp.h"
#include "util/json_add.h"

void xp_lat_init(struct xp_lat_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

void xp_lat_add(struct xp_lat_hist *h, const struct xp_lat_hist *o)
{
	h->recv += o->recv;
	h->dup += o->dup;
	h->late += o->late;
	h->reordered += o->reordered;
	h->clock_neg += o->clock_neg;
	h->n += o->n;
	h->sum += o->sum;
	if (o->n && o->min < h->min)
		h->min = o->min;
	if (o->n && o->max > h->max)
		h->max = o->max;
	for (unsigned b = 0; b < XP_LAT_BUCKETS; b++)
		h->b[b] += o->b[b];
}

void xp_lat_add_bin(struct xp_lat_hist *h, const struct xp_ibin *bin)
{
	h->recv += bin->recv;
	h->dup += bin->dup;
	h->late += bin->late;
	h->reordered += bin->reordered;
	h->clock_neg += bin->clock_neg;
	h->n += bin->lat_n;
	h->sum += bin->lat_sum;
	/* A CPU that timed nothing holds lat_min ~0 (never written): not a minimum. */
	if (bin->lat_n && bin->lat_min < h->min)
		h->min = bin->lat_min;
	if (bin->lat_n && bin->lat_max > h->max)
		h->max = bin->lat_max;
	for (unsigned b = 0; b < XP_LAT_BUCKETS; b++)
		h->b[b] += bin->hist[b];
}

/*
 * The rank is computed in integers from q in parts per 10^9: in doubles,
 * 0.9999 * 10000 is 9999.000000000002 and its ceiling would be one frame off.
 */
double xp_lat_quantile_ns(const struct xp_lat_hist *h, double q)
{
	if (!h->n || !(q >= 0) || q > 1)
		return NAN;
	uint64_t qn = (uint64_t)llround(q * 1e9);
	unsigned __int128 prod = (unsigned __int128)qn * h->n;
	uint64_t rank = (uint64_t)((prod + 999999999u) / 1000000000u);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned b = 0; b < XP_LAT_BUCKETS; b++) {
		seen += h->b[b];
		if (seen >= rank) {
			uint64_t hi = xp_lat_bucket_lo(b + 1); /* the bucket's upper edge */
			if (hi > h->max)
				hi = h->max;
			return (double)hi * XP_STAMP_TICK_NS;
		}
	}
	/* Fewer frames in the buckets than timed (a bin read while written): the largest is max. */
	return (double)h->max * XP_STAMP_TICK_NS;
}

double xp_lat_min_ns(const struct xp_lat_hist *h)
{
	return h->n ? (double)h->min * XP_STAMP_TICK_NS : NAN;
}

double xp_lat_max_ns(const struct xp_lat_hist *h)
{
	return h->n ? (double)h->max * XP_STAMP_TICK_NS : NAN;
}

void xp_flow_acct_hist(const struct xp_flow_acct *f, struct xp_lat_hist *h)
{
	xp_lat_init(h);
	h->recv = f->recv;
	h->dup = f->dup;
	h->reordered = f->reordered;
	h->clock_neg = f->clock_neg;
	h->n = f->lat_n;
	h->sum = f->lat_sum;
	h->min = f->lat_n ? ~f->lat_nmin : UINT64_MAX;
	h->max = f->lat_max;
	for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++)
		h->b[((b + 1) << XP_FLOW_LAT_SHIFT) - 1] += f->hist[b];
}

double xp_lat_bucket_hi_ns(unsigned b)
{
	return (double)xp_lat_bucket_lo(b + 1) * XP_STAMP_TICK_NS;
}

double xp_lat_mean_ns(const struct xp_lat_hist *h)
{
	return h->n ? (double)h->sum * XP_STAMP_TICK_NS / (double)h->n : NAN;
}

/* The percentiles every report gives, with their JSON names. */
const struct xp_lat_pct xp_lat_pcts[XP_LAT_NPCTS] = {
	{ "p50_ns", "p50", 0.50 },     { "p90_ns", "p90", 0.90 },       { "p99_ns", "p99", 0.99 },
	{ "p99_9_ns", "p99.9", 0.999 }, { "p99_99_ns", "p99.99", 0.9999 },
};

struct json_object *xp_lat_to_json(const struct xp_lat_hist *h)
{
	struct json_object *o = json_object_new_object();
	add_u(o, "received", h->recv);
	add_u(o, "duplicates", h->dup);
	add_u(o, "late", h->late);
	add_u(o, "reordered", h->reordered);
	add_u(o, "clock_negative", h->clock_neg);
	add_u(o, "timed", h->n);
	add_d(o, "min_ns", h->n ? (double)h->min * XP_STAMP_TICK_NS : NAN);
	add_d(o, "mean_ns", xp_lat_mean_ns(h));
	add_d(o, "max_ns", h->n ? (double)h->max * XP_STAMP_TICK_NS : NAN);
	for (unsigned i = 0; i < XP_LAT_NPCTS; i++)
		add_d(o, xp_lat_pcts[i].json, xp_lat_quantile_ns(h, xp_lat_pcts[i].q));
	/* What a later merge needs exactly: ticks, not rounded nanoseconds. */
	add_u(o, "tick_ns", XP_STAMP_TICK_NS);
	add_u(o, "sum_ticks", h->sum);
	add_u(o, "min_ticks", h->n ? h->min : 0);
	add_u(o, "max_ticks", h->max);
	struct json_object *bk = json_object_new_array();
	for (unsigned b = 0; b < XP_LAT_BUCKETS; b++) {
		if (!h->b[b])
			continue;
		struct json_object *p = json_object_new_array();
		json_object_array_add(p, json_object_new_int((int)b));
		json_object_array_add(p, json_object_new_int64((int64_t)h->b[b]));
		json_object_array_add(bk, p);
	}
	json_object_object_add(o, "buckets", bk);
	/* How to read a bucket index without this program (bpf/lib/latency.h). */
	json_object_object_add(o, "bucket_scheme",
			       json_object_new_string("log-linear: b<64 is b ticks; else msb e=6+(b-64)/32, "
						      "lower edge (32+(b-64)%32)<<(e-5) ticks"));
	return o;
}

/* A non-negative integer field; absent is an error (a merge must not guess). */
static int get_u(struct json_object *o, const char *k, uint64_t *out)
{
	struct json_object *v;
	if (!json_object_object_get_ex(o, k, &v) || !json_object_is_type(v, json_type_int))
		return -EINVAL;
	int64_t n = json_object_get_int64(v);
	if (n < 0)
		return -EINVAL;
	*out = (uint64_t)n;
	return 0;
}

int xp_lat_from_json(struct json_object *j, struct xp_lat_hist *h)
{
	uint64_t tick, minv;
	struct json_object *bk;
	xp_lat_init(h);
	if (!j || !json_object_is_type(j, json_type_object))
		return -EINVAL;
	if (get_u(j, "received", &h->recv) || get_u(j, "duplicates", &h->dup) || get_u(j, "late", &h->late) ||
	    get_u(j, "reordered", &h->reordered) || get_u(j, "clock_negative", &h->clock_neg) ||
	    get_u(j, "timed", &h->n) || get_u(j, "sum_ticks", &h->sum) || get_u(j, "min_ticks", &minv) ||
	    get_u(j, "max_ticks", &h->max) || get_u(j, "tick_ns", &tick))
		goto bad;
	if (tick != XP_STAMP_TICK_NS)
		goto bad; /* another tick size: its bucket numbers mean other values */
	h->min = h->n ? minv : UINT64_MAX;
	if (!json_object_object_get_ex(j, "buckets", &bk) || !json_object_is_type(bk, json_type_array))
		goto bad;
	uint64_t total = 0;
	for (size_t i = 0; i < json_object_array_length(bk); i++) {
		struct json_object *p = json_object_array_get_idx(bk, i);
		if (!json_object_is_type(p, json_type_array) || json_object_array_length(p) != 2)
			goto bad;
		struct json_object *bi = json_object_array_get_idx(p, 0), *bc = json_object_array_get_idx(p, 1);
		if (!json_object_is_type(bi, json_type_int) || !json_object_is_type(bc, json_type_int))
			goto bad;
		int64_t b = json_object_get_int64(bi), c = json_object_get_int64(bc);
		if (b < 0 || b >= XP_LAT_BUCKETS || c < 0)
			goto bad;
		h->b[b] += (uint64_t)c;
		total += (uint64_t)c;
	}
	if (total > h->n)
		goto bad; /* more frames in the buckets than were timed */
	return 0;
bad:
	xp_lat_init(h);
	return -EINVAL;
}

void xp_stream_figs_sum(const struct xp_stream_figs *s, unsigned n, struct xp_stream_sum *out)
{
	memset(out, 0, sizeof(*out));
	out->streams = n;
	double jsum = 0;
	for (unsigned i = 0; i < n; i++) {
		out->recv += s[i].recv;
		out->dup += s[i].dup;
		out->reordered += s[i].reordered;
		out->too_old += s[i].too_old;
		if (s[i].reorder_max > out->reorder_max)
			out->reorder_max = s[i].reorder_max;
		/* Sequence gaps: numbers below the highest seen that never came. */
		out->gaps += s[i].next_exp > s[i].recv ? s[i].next_exp - s[i].recv : 0;
		jsum += s[i].jitter_ns;
		if (s[i].jitter_ns > out->jitter_max_ns)
			out->jitter_max_ns = s[i].jitter_ns;
	}
	out->jitter_mean_ns = n ? jsum / n : NAN;
	if (!n)
		out->jitter_max_ns = NAN;
}

struct json_object *xp_stream_figs_to_json(const struct xp_stream_figs *s)
{
	struct json_object *o = json_object_new_object();
	add_u(o, "stream", s->stream);
	add_u(o, "received", s->recv);
	add_u(o, "duplicates", s->dup);
	add_u(o, "reordered", s->reordered);
	add_u(o, "reorder_extent_max", s->reorder_max);
	add_u(o, "too_old", s->too_old);
	add_u(o, "next_expected", s->next_exp);
	add_d(o, "jitter_ns", s->jitter_ns);
	return o;
}

int xp_stream_figs_from_json(struct json_object *j, struct xp_stream_figs *s)
{
	uint64_t st;
	struct json_object *v;
	memset(s, 0, sizeof(*s));
	if (!j || !json_object_is_type(j, json_type_object) || get_u(j, "stream", &st) || st >= XP_STAMP_MAX_STREAMS ||
	    get_u(j, "received", &s->recv) || get_u(j, "duplicates", &s->dup) || get_u(j, "reordered", &s->reordered) ||
	    get_u(j, "reorder_extent_max", &s->reorder_max) || get_u(j, "too_old", &s->too_old) ||
	    get_u(j, "next_expected", &s->next_exp))
		return -EINVAL;
	s->stream = (uint32_t)st;
	if (json_object_object_get_ex(j, "jitter_ns", &v) &&
	    (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)))
		s->jitter_ns = json_object_get_double(v);
	if (!(s->jitter_ns >= 0) || !isfinite(s->jitter_ns))
		s->jitter_ns = 0;
	return 0;
}
