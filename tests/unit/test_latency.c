/*
 * meas/latency.c: histograms of stamp latencies (bpf/lib/latency.h
 * buckets, 4-ns ticks) merged from per-CPU bins, percentiles read off the
 * buckets (the upper edge of the bucket holding the ceil(q*n)-th frame,
 * clamped to the maximum), the mean, and the JSON form with its buckets.
 * Every expected figure below is worked out by hand in the comments.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "meas/latency.h"

/* Put count frames of latency v ticks into a CPU's bin. */
static void bin_put(struct xp_ibin *b, uint32_t v, uint32_t count)
{
	if (!b->lat_n)
		b->lat_min = v;
	b->recv += count;
	b->lat_n += count;
	b->lat_sum += (uint64_t)v * count;
	if (v < b->lat_min)
		b->lat_min = v;
	if (v > b->lat_max)
		b->lat_max = v;
	b->hist[xp_lat_bucket(v)] += count;
}

/*
 * 100 frames on two CPUs: 50 of 10 ticks, 40 of 100, 9 of 1000, 1 of 100000.
 * Buckets (latency.h): 10 -> 10 (exact, [10, 11) ticks); 100 (msb 6) ->
 * 64 + 0*32 + (100 >> 1) - 32 = 82, [100, 102); 1000 (msb 9) -> 64 + 3*32 +
 * (1000 >> 4) - 32 = 190, [992, 1008); 100000 (msb 16) -> 64 + 10*32 +
 * (100000 >> 11) - 32 = 400, [98304, 100352).
 */
static void fixture(struct xp_lat_hist *h)
{
	struct xp_ibin *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *idle = calloc(1, sizeof(*idle));
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(idle);
	bin_put(a, 10, 30);
	bin_put(a, 100, 40);
	bin_put(b, 10, 20);
	bin_put(b, 1000, 9);
	bin_put(b, 100000, 1);
	a->dup = 2, b->dup = 1, a->late = 3, b->reordered = 4, b->clock_neg = 5;
	/* A CPU that timed nothing: its lat_min is 0, never written; it must not become the minimum. */
	idle->recv = 7;
	xp_lat_init(h);
	xp_lat_add_bin(h, a);
	xp_lat_add_bin(h, idle);
	xp_lat_add_bin(h, b);
	free(a);
	free(b);
	free(idle);
}

static void test_buckets_by_hand(void **state)
{
	assert_int_equal(xp_lat_bucket(10), 10);
	assert_int_equal(xp_lat_bucket(100), 82);
	assert_int_equal(xp_lat_bucket(1000), 190);
	assert_int_equal(xp_lat_bucket(100000), 400);
	assert_int_equal(xp_lat_bucket_lo(83), 102);
	assert_int_equal(xp_lat_bucket_lo(191), 1008);
	assert_int_equal(xp_lat_bucket_lo(401), 100352);
}

static void test_merge_and_percentiles(void **state)
{
	struct xp_lat_hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	fixture(h);
	assert_int_equal(h->recv, 107);
	assert_int_equal(h->n, 100);
	assert_int_equal(h->dup, 3);
	assert_int_equal(h->late, 3);
	assert_int_equal(h->reordered, 4);
	assert_int_equal(h->clock_neg, 5);
	assert_int_equal(h->min, 10);
	assert_int_equal(h->max, 100000);
	/* 50*10 + 40*100 + 9*1000 + 100000 = 113500 ticks; / 100 = 1135 ticks = 4540 ns */
	assert_int_equal(h->sum, 113500);
	assert_true(xp_lat_mean_ns(h) == 4540.0);
	/* p50: the 50th frame is the last of bucket 10: its upper edge 11 ticks = 44 ns */
	assert_true(xp_lat_quantile_ns(h, 0.50) == 44.0);
	/* p90: the 90th is the last in bucket 82, edge 102 ticks = 408 ns */
	assert_true(xp_lat_quantile_ns(h, 0.90) == 408.0);
	/* p99: the 99th in bucket 190, edge 1008 ticks = 4032 ns */
	assert_true(xp_lat_quantile_ns(h, 0.99) == 4032.0);
	/* p99.9, p99.99: ceil(99.9) = ceil(99.99) = 100th, bucket 400, edge 100352 clamped to max 100000 = 400000 ns */
	assert_true(xp_lat_quantile_ns(h, 0.999) == 400000.0);
	assert_true(xp_lat_quantile_ns(h, 0.9999) == 400000.0);
	/* q = 0 is the first frame's bucket; q = 1 the last */
	assert_true(xp_lat_quantile_ns(h, 0) == 44.0);
	assert_true(xp_lat_quantile_ns(h, 1) == 400000.0);
	assert_true(isnan(xp_lat_quantile_ns(h, 1.5)));
	free(h);
}

/* The rank of p99.99 in 10000 frames is exactly 9999: floating point would make it 10000. */
static void test_rank_is_exact(void **state)
{
	struct xp_ibin *b = calloc(1, sizeof(*b));
	struct xp_lat_hist *h = malloc(sizeof(*h));
	assert_non_null(b);
	assert_non_null(h);
	bin_put(b, 5, 9999);
	bin_put(b, 2000, 1);
	xp_lat_init(h);
	xp_lat_add_bin(h, b);
	/* the 9999th frame is in bucket 5: [5, 6) ticks, edge 24 ns */
	assert_true(xp_lat_quantile_ns(h, 0.9999) == 24.0);
	/* all but one at 5 ticks: the minimum clamps nothing, the max is 2000 ticks = 8000 ns */
	assert_true(xp_lat_quantile_ns(h, 1.0) == 8000.0);
	/* A single value: every percentile is that value (the edge clamped to max). */
	struct xp_ibin *one = calloc(1, sizeof(*one));
	assert_non_null(one);
	bin_put(one, 250, 1); /* bucket [248, 252) by msb 7: edge 252, clamped to 250 ticks = 1000 ns */
	xp_lat_init(h);
	xp_lat_add_bin(h, one);
	assert_true(xp_lat_quantile_ns(h, 0.5) == 1000.0);
	assert_true(xp_lat_mean_ns(h) == 1000.0);
	free(one);
	free(b);
	free(h);
}

static void test_empty(void **state)
{
	struct xp_lat_hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	xp_lat_init(h);
	assert_true(h->min == UINT64_MAX);
	assert_true(isnan(xp_lat_quantile_ns(h, 0.5)));
	assert_true(isnan(xp_lat_mean_ns(h)));
	struct json_object *j = xp_lat_to_json(h), *v;
	assert_true(json_object_object_get_ex(j, "p50_ns", &v));
	assert_null(v); /* null, not NaN or 0 */
	assert_true(json_object_object_get_ex(j, "buckets", &v));
	assert_int_equal(json_object_array_length(v), 0);
	struct xp_lat_hist *g = malloc(sizeof(*g));
	assert_non_null(g);
	assert_int_equal(xp_lat_from_json(j, g), 0);
	assert_true(g->min == UINT64_MAX);
	assert_int_equal(g->n, 0);
	json_object_put(j);
	free(g);
	free(h);
}

static void test_json_roundtrip_and_merge(void **state)
{
	struct xp_lat_hist *h = malloc(sizeof(*h)), *g = malloc(sizeof(*g)), *m = malloc(sizeof(*m));
	assert_non_null(h);
	assert_non_null(g);
	assert_non_null(m);
	fixture(h);
	struct json_object *j = xp_lat_to_json(h), *v;
	/* figures as printed */
	assert_true(json_object_object_get_ex(j, "p90_ns", &v));
	assert_true(json_object_get_double(v) == 408.0);
	assert_true(json_object_object_get_ex(j, "p99_99_ns", &v));
	assert_true(json_object_get_double(v) == 400000.0);
	assert_true(json_object_object_get_ex(j, "min_ns", &v));
	assert_true(json_object_get_double(v) == 40.0);
	assert_true(json_object_object_get_ex(j, "mean_ns", &v));
	assert_true(json_object_get_double(v) == 4540.0);
	assert_true(json_object_object_get_ex(j, "tick_ns", &v));
	assert_int_equal(json_object_get_int(v), 4);
	/* only the four non-empty buckets, in order, with their counts */
	assert_true(json_object_object_get_ex(j, "buckets", &v));
	assert_int_equal(json_object_array_length(v), 4);
	static const int want[4][2] = { { 10, 50 }, { 82, 40 }, { 190, 9 }, { 400, 1 } };
	for (int i = 0; i < 4; i++) {
		struct json_object *p = json_object_array_get_idx(v, i);
		assert_int_equal(json_object_get_int(json_object_array_get_idx(p, 0)), want[i][0]);
		assert_int_equal(json_object_get_int(json_object_array_get_idx(p, 1)), want[i][1]);
	}
	/* back through text, as a later merge of saved -J files would */
	struct json_object *k = json_tokener_parse(json_object_to_json_string(j));
	assert_int_equal(xp_lat_from_json(k, g), 0);
	assert_memory_equal(h, g, sizeof(*h));
	/* two runs merged: counts double, percentiles stay */
	*m = *h;
	xp_lat_add(m, g);
	assert_int_equal(m->n, 200);
	assert_int_equal(m->recv, 214);
	assert_true(xp_lat_quantile_ns(m, 0.90) == 408.0);
	assert_true(xp_lat_mean_ns(m) == 4540.0);
	/* adding an empty histogram changes nothing, min included */
	struct xp_lat_hist *e = malloc(sizeof(*e));
	assert_non_null(e);
	xp_lat_init(e);
	xp_lat_add(g, e);
	assert_memory_equal(h, g, sizeof(*h));
	free(e);
	json_object_put(k);
	json_object_put(j);
	free(h);
	free(g);
	free(m);
}

/* Each document is refused: a merge must not guess. */
static void test_from_json_refuses(void **state)
{
	static const char *const bad[] = {
		/* another tick size */
		"{\"received\":1,\"duplicates\":0,\"late\":0,\"reordered\":0,\"clock_negative\":0,\"timed\":1,"
		"\"sum_ticks\":3,\"min_ticks\":3,\"max_ticks\":3,\"tick_ns\":8,\"buckets\":[[3,1]]}",
		/* a bucket past the last (895) */
		"{\"received\":1,\"duplicates\":0,\"late\":0,\"reordered\":0,\"clock_negative\":0,\"timed\":1,"
		"\"sum_ticks\":3,\"min_ticks\":3,\"max_ticks\":3,\"tick_ns\":4,\"buckets\":[[896,1]]}",
		/* more frames in the buckets than timed */
		"{\"received\":1,\"duplicates\":0,\"late\":0,\"reordered\":0,\"clock_negative\":0,\"timed\":1,"
		"\"sum_ticks\":3,\"min_ticks\":3,\"max_ticks\":3,\"tick_ns\":4,\"buckets\":[[3,2]]}",
		/* a negative count */
		"{\"received\":1,\"duplicates\":0,\"late\":0,\"reordered\":0,\"clock_negative\":0,\"timed\":1,"
		"\"sum_ticks\":3,\"min_ticks\":3,\"max_ticks\":3,\"tick_ns\":4,\"buckets\":[[3,-1]]}",
		/* a field missing (sum_ticks) */
		"{\"received\":1,\"duplicates\":0,\"late\":0,\"reordered\":0,\"clock_negative\":0,\"timed\":1,"
		"\"min_ticks\":3,\"max_ticks\":3,\"tick_ns\":4,\"buckets\":[[3,1]]}",
		/* a count that is not an integer */
		"{\"received\":1.5,\"duplicates\":0,\"late\":0,\"reordered\":0,\"clock_negative\":0,\"timed\":1,"
		"\"sum_ticks\":3,\"min_ticks\":3,\"max_ticks\":3,\"tick_ns\":4,\"buckets\":[[3,1]]}",
		"[1,2]",
	};
	struct xp_lat_hist *h = malloc(sizeof(*h));
	assert_non_null(h);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *j = json_tokener_parse(bad[i]);
		assert_non_null(j);
		assert_int_equal(xp_lat_from_json(j, h), -EINVAL);
		assert_int_equal(h->n, 0); /* and left empty */
		json_object_put(j);
	}
	free(h);
}

/* Per-stream figures: the sum over streams, jitter as mean and max, and their JSON. */
static void test_streams(void **state)
{
	static const struct xp_stream_figs s[2] = {
		{ .stream = 0, .recv = 90, .dup = 1, .reordered = 2, .reorder_max = 5, .next_exp = 100, .jitter_ns = 100 },
		{ .stream = 1, .recv = 100, .reordered = 1, .reorder_max = 9, .too_old = 3, .next_exp = 100, .jitter_ns = 300 },
	};
	struct xp_stream_figs back;
	struct xp_stream_sum t;
	xp_stream_figs_sum(s, 2, &t);
	assert_int_equal(t.streams, 2);
	assert_int_equal(t.recv, 190);
	assert_int_equal(t.dup, 1);
	assert_int_equal(t.reordered, 3);
	assert_int_equal(t.reorder_max, 9);
	assert_int_equal(t.too_old, 3);
	assert_int_equal(t.gaps, 10); /* stream 0: numbers 0..99 seen up to, 90 came */
	assert_true(t.jitter_mean_ns == 200.0);
	assert_true(t.jitter_max_ns == 300.0);
	struct json_object *j = xp_stream_figs_to_json(&s[1]);
	assert_int_equal(xp_stream_figs_from_json(j, &back), 0);
	assert_memory_equal(&back, &s[1], sizeof(back));
	json_object_put(j);
	xp_stream_figs_sum(s, 0, &t);
	assert_true(isnan(t.jitter_mean_ns));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buckets_by_hand),
		cmocka_unit_test(test_merge_and_percentiles),
		cmocka_unit_test(test_rank_is_exact),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_json_roundtrip_and_merge),
		cmocka_unit_test(test_from_json_refuses),
		cmocka_unit_test(test_streams),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
