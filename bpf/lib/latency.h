/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The latency histogram's buckets: log-linear, like HdrHistogram with 5
 * significant bits. Values are in stamp ticks (XP_STAMP_TICK_NS = 4 ns,
 * lib/stamp.h), from 0 to 2^32 ticks (17.18 s):
 *   v < 64 ticks (256 ns)        bucket v: exact, 4 ns wide
 *   v >= 64, msb e (6..31)       bucket 64 + (e - 6) * 32 + (v >> (e - 5)) - 32
 * so every bucket above 256 ns is 1/32 of its octave wide: a value read back
 * as its bucket's midpoint is within 1/64 (1.6 %) of the true one, from 1 us
 * to 10 s and beyond. XP_LAT_BUCKETS buckets in all (896).
 *
 * Shared by the server's XDP program and userspace (user/meas/latency.c,
 * which turns buckets into percentiles, and the tests): static inline, plain
 * integer arithmetic (BPF has no count-leading-zeros instruction, hence the
 * binary search in xp_lat_msb).
 */
#ifndef XDPPERF_LIB_LATENCY_H
#define XDPPERF_LIB_LATENCY_H

#define XP_LAT_SUB_BITS 5u
#define XP_LAT_SUB      (1u << XP_LAT_SUB_BITS)           /* 32 buckets per octave */
#define XP_LAT_LINEAR   (2u * XP_LAT_SUB)                 /* 64 exact buckets */
#define XP_LAT_BUCKETS  (XP_LAT_LINEAR + (32u - 6u) * XP_LAT_SUB) /* 896 */

/* Index of the highest set bit of v (v > 0). */
static inline __u32 xp_lat_msb(__u32 v)
{
	__u32 e = 0;

	if (v >= 1u << 16) { v >>= 16; e += 16; }
	if (v >= 1u << 8)  { v >>= 8;  e += 8; }
	if (v >= 1u << 4)  { v >>= 4;  e += 4; }
	if (v >= 1u << 2)  { v >>= 2;  e += 2; }
	if (v >= 1u << 1)  { e += 1; }
	return e;
}

/* The bucket of a latency of v ticks. */
static inline __u32 xp_lat_bucket(__u32 v)
{
	if (v < XP_LAT_LINEAR)
		return v;
	__u32 e = xp_lat_msb(v);
	return XP_LAT_LINEAR + (e - 6) * XP_LAT_SUB + (v >> (e - XP_LAT_SUB_BITS)) - XP_LAT_SUB;
}

/* The lowest value (ticks) of bucket b; the bucket spans [lo(b), lo(b + 1)). */
static inline __u64 xp_lat_bucket_lo(__u32 b)
{
	if (b < XP_LAT_LINEAR)
		return b;
	__u32 k = b - XP_LAT_LINEAR, e = 6 + k / XP_LAT_SUB, m = XP_LAT_SUB + k % XP_LAT_SUB;
	return (__u64)m << (e - XP_LAT_SUB_BITS);
}

#endif /* XDPPERF_LIB_LATENCY_H */
