/*
 * Size/rate arithmetic shared by every engine and the reports, plus SI
 * formatting for human output.
 *
 * Vocabulary: an "L2 byte count without FCS" is what software sees (XDP,
 * AF_XDP descriptors, socket byte counters); the NIC appends a 4-byte FCS.
 * On the wire each frame also costs an 8-byte preamble+SFD and a 12-byte
 * inter-frame gap. Line-rate figures ("10 Gbit/s") are L1, so a 64-byte frame
 * costs 84 bytes = 672 bits of line time.
 */
#ifndef XP_UNITS_H
#define XP_UNITS_H

#include <stddef.h>
#include <stdint.h>

#define XP_FCS_LEN       4u
#define XP_PREAMBLE_LEN  8u  /* 7 preamble + 1 start-of-frame delimiter */
#define XP_IFG_LEN       12u /* minimum inter-frame gap */
/* Per-frame bytes on the wire beyond the FCS-less L2 frame: 24. */
#define XP_L1_OVERHEAD   (XP_FCS_LEN + XP_PREAMBLE_LEN + XP_IFG_LEN)

/* Bits of line time (L1) used by `frames` frames totalling l2_bytes_without_fcs. */
static inline uint64_t l1_bits(uint64_t frames, uint64_t l2_bytes_without_fcs)
{
	return (l2_bytes_without_fcs + frames * XP_L1_OVERHEAD) * 8;
}

/* Greatest common divisor (Euclid), for the least common multiples of the mix's weights, the flows'
 * schedule and their patterns' periods. */
static inline uint64_t xp_gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* Bits at L2 counting the FCS (what "frame size 64" refers to). */
static inline uint64_t l2_bits(uint64_t frames, uint64_t l2_bytes_without_fcs)
{
	return (l2_bytes_without_fcs + frames * XP_FCS_LEN) * 8;
}

/*
 * Format v with an SI (1000-based) prefix and two decimals: "1.23 M",
 * "987.00 k", "12.00 " (note the trailing space so a unit can be appended
 * directly: "%sbit/s"). Prefixes go up to E; values below 1 get no prefix.
 * Rounding that would print "1000.00 k" moves up to "1.00 M". Returns buf.
 */
const char *fmt_si(double v, char *buf, size_t len);

/* "1.5 s": seconds as the user gave them. Returns buf. */
const char *xp_fmt_secs(double v, char *buf, size_t len);
/* "1.23 Mpps" style: SI value + unit. Returns buf. */
const char *xp_fmt_rate(double v, const char *unit, char *buf, size_t len);
/* "12.3us": nanoseconds in the unit that suits them ("-" for NaN). Returns buf. */
const char *xp_fmt_ns(double ns, char *buf, size_t len);

#endif /* XP_UNITS_H */
