/*
 * Per-flow figures on the control channel (issue 26): the server's count of
 * a test's flow (bpf/measure.h's struct xp_flow_acct, summed over CPUs) as
 * JSON in its stop reply ("flows": one object per flow, in flow order), read
 * back strictly by the client, and turned into a latency histogram the
 * percentiles of meas/latency.h work on.
 */
#ifndef XP_PROTO_FLOW_FIGS_H
#define XP_PROTO_FLOW_FIGS_H

#include <stddef.h>

#include "meas/latency.h"

struct json_object;

struct json_object *xp_flow_acct_to_json(const struct xp_flow_acct *f, unsigned n);
/* n objects into f[0..n-1]: 0, or -1 with a one-line err (a count other
 * than n, a member missing or not a non-negative integer, a bucket out of
 * range, recv > frames, lat_n > recv). */
int xp_flow_acct_from_json(struct json_object *a, struct xp_flow_acct *f, unsigned n, char *err, size_t errlen);
/*
 * The compact form an interval sample's reply carries ({"op":"sample",
 * "flows":true}): per flow one array of integers, cumulative, [frames, bytes,
 * recv, dup, reordered, lat_n, lat_sum, lat_max, then the non-zero histogram
 * buckets as bucket, count, bucket, count ...] (buckets ascending). About a
 * third of the named form's size, so 256 flows' realistic figures stay near
 * 100 KB a sample; the worst case (every bucket of every flow) fits
 * XP_CTRL_MAX_REPLY. Read back as strictly as the named form.
 */
#define XP_FLOW_COMPACT_COUNTS 8
struct json_object *xp_flow_acct_to_compact(const struct xp_flow_acct *f, unsigned n);
int xp_flow_acct_from_compact(struct json_object *a, struct xp_flow_acct *f, unsigned n, char *err, size_t errlen);
/*
 * The figures between two cumulative readings: out = now - prev, counts and
 * histogram buckets (one that went backwards, which a server never sends: 0);
 * lat_max is now's (the interval's is not known, only bounded), lat_nmin 0.
 */
void xp_flow_acct_delta(const struct xp_flow_acct *now, const struct xp_flow_acct *prev, struct xp_flow_acct *out);
/* Add a later interval's differences d into a (lat_max the larger). */
void xp_flow_acct_add(struct xp_flow_acct *a, const struct xp_flow_acct *d);

/* A flow's latencies as a histogram: xp_flow_acct_hist (meas/latency.h). */

#endif /* XP_PROTO_FLOW_FIGS_H */
