/*
 * Latency figures from the measurement core's histograms (bpf/lib/latency.h
 * buckets, bpf/measure.h bins): merging, percentiles, jitter, and their JSON
 * form, so that runs can be merged later (the buckets go into -J).
 */
#ifndef XDPPERF_REPORT_LATENCY_H
#define XDPPERF_REPORT_LATENCY_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/measure.h"

struct json_object;

/* One interval's (or a whole test's) received-frame figures from the stamps,
 * summed over CPUs (and, for a test, over intervals). Latencies in ticks
 * (XP_STAMP_TICK_NS). */
struct xp_lat_hist {
	uint64_t recv, dup, late, reordered, clock_neg;
	uint64_t n, sum, min, max;          /* timed frames; min = UINT64_MAX when n == 0 */
	uint64_t b[XP_LAT_BUCKETS];
};

/* Per stream, at the end of a test (server side, bpf/measure.h's xp_stream_acct). */
struct xp_stream_figs {
	uint32_t stream;
	uint64_t recv, dup, reordered, reorder_max, too_old;
	uint64_t next_exp;                  /* highest seq received + 1 */
	double jitter_ns;                   /* RFC 3550 interarrival jitter */
};

void xp_lat_init(struct xp_lat_hist *h);                       /* empty: min = UINT64_MAX */
void xp_lat_add(struct xp_lat_hist *h, const struct xp_lat_hist *o); /* h += o */
void xp_lat_add_bin(struct xp_lat_hist *h, const struct xp_ibin *bin); /* h += one CPU's bin */
/* The value (ns) below which a fraction q (0..1) of the timed frames fall:
 * the upper edge of the bucket that holds the ceil(q * n)-th, clamped to max. NAN when n == 0. */
double xp_lat_quantile_ns(const struct xp_lat_hist *h, double q);
double xp_lat_mean_ns(const struct xp_lat_hist *h);
/* The smallest and the largest time timed, ns; NAN when n == 0. */
double xp_lat_min_ns(const struct xp_lat_hist *h);
double xp_lat_max_ns(const struct xp_lat_hist *h);
/* A flow's figures (bpf/measure.h) as a histogram of this file's (a flow bucket
 * counted at the top of the slot buckets it spans, so a percentile errs high,
 * never low): the server's per-flow reply, the report and the suites read it so. */
void xp_flow_acct_hist(const struct xp_flow_acct *f, struct xp_lat_hist *h);
/* Bucket b's upper edge in ns (the lower edge of b + 1): a distribution's rows (rfc2544/plot.c). */
double xp_lat_bucket_hi_ns(unsigned b);
/* JSON: counts, min/mean/max/p50/p90/p99/p99.9/p99.99 in ns, and the non-empty
 * buckets as [[bucket, count], ...] with their tick size, so runs can be merged. */
struct json_object *xp_lat_to_json(const struct xp_lat_hist *h);
int xp_lat_from_json(struct json_object *j, struct xp_lat_hist *h); /* 0 or -EINVAL */

/* The percentiles the reports give (p50 .. p99.99): JSON key, text label, q. */
struct xp_lat_pct {
	const char *json, *label;
	double q;
};
#define XP_LAT_NPCTS 5
extern const struct xp_lat_pct xp_lat_pcts[XP_LAT_NPCTS];

/* A test's streams together (the stop reply's per-stream figures). */
struct xp_stream_sum {
	unsigned streams;                   /* that saw a frame */
	uint64_t recv, dup, reordered, too_old;
	uint64_t reorder_max;               /* largest extent, sequence numbers */
	uint64_t gaps;                      /* sum of next_exp - recv: numbers below the highest seen that never came */
	double jitter_mean_ns, jitter_max_ns; /* RFC 3550 jitter: mean over streams, and the largest; NAN if none */
};
void xp_stream_figs_sum(const struct xp_stream_figs *s, unsigned n, struct xp_stream_sum *out);
struct json_object *xp_stream_figs_to_json(const struct xp_stream_figs *s);
int xp_stream_figs_from_json(struct json_object *j, struct xp_stream_figs *s); /* 0 or -EINVAL */

#endif /* XDPPERF_REPORT_LATENCY_H */
