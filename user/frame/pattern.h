/*
 * A header field's pattern, as the Open Traffic Generator models define
 * them (open-traffic-generator/models v1.61.0: every Pattern.Flow.<Header>.
 * <Field> object of artifacts/openapi.yaml, with its .Counter and .Random):
 *
 *   value       one value for every frame
 *   values      a list, frame n takes values[n % count]
 *   increment   start, step, count: frame n takes start + (n % count) * step
 *   decrement   start, step, count: frame n takes start - (n % count) * step
 *   random      min, max, seed, count: frame n takes the (n % count)-th value
 *               of a seeded sequence, uniform in [min, max]
 *
 * Arithmetic is modulo 2^width (the field's width in bits: 3 for a PCP,
 * 12 for a VID, 32 for IPv4, 48 for a MAC, 128 for IPv6), so an increment
 * that passes the top wraps to 0 as a counter in the field would. OTG
 * leaves what happens past the end to the implementation; here every
 * pattern repeats after its count, so frame n's value depends only on n:
 * any thread can make any frame, and a capture can be checked against it.
 *
 * Random: value k of the sequence is a hash of (seed, k) (splitmix64, a
 * counter-based generator: no state to carry, frame n is as cheap as frame
 * 0), reduced into [min, max] by a 64x64->128 multiply (Lemire): the bias is
 * below range / 2^64, nothing a chi-square test at any practical sample
 * size can see. OTG's seed 0 asks for a non-deterministic sequence: the
 * caller draws a seed then (xp_pattern_check leaves 0 alone, it is the
 * caller's to replace before use; xp_pattern_at treats it as any seed).
 *
 * Values are unsigned __int128 in host order: an IPv6 address's first byte
 * is the value's top byte (xp_u128_from_bytes / _to_bytes).
 */
#ifndef XP_FRAME_PATTERN_H
#define XP_FRAME_PATTERN_H

#include <stddef.h>
#include <stdint.h>

typedef unsigned __int128 xp_u128;

enum xp_pattern_kind {
	XP_PAT_VALUE = 0,
	XP_PAT_VALUES,
	XP_PAT_INCREMENT,
	XP_PAT_DECREMENT,
	XP_PAT_RANDOM,
};

/* At most this many entries in a values list (OTG sets no limit; a flow's
 * fields are copied per flow, so the list is bounded). */
#define XP_PAT_MAX_VALUES 32u

struct xp_pattern {
	enum xp_pattern_kind kind;
	uint8_t width;          /* field width in bits, 1..128 */
	xp_u128 value;          /* VALUE; INCREMENT/DECREMENT: start */
	xp_u128 step;           /* INCREMENT/DECREMENT */
	xp_u128 min, max;       /* RANDOM, inclusive */
	uint32_t count;         /* INCREMENT/DECREMENT/RANDOM: values before it repeats (>= 1) */
	uint32_t seed;          /* RANDOM */
	uint32_t nvalues;       /* VALUES */
	xp_u128 values[XP_PAT_MAX_VALUES];
};

/* The pattern of one fixed value. */
struct xp_pattern xp_pattern_fixed(uint8_t width, xp_u128 v);

/*
 * Check p: width 1..128, every value, start, step, min, max inside the
 * width, min <= max, count >= 1, 1..XP_PAT_MAX_VALUES values. 0, or -1
 * with *err a one-line reason (static or per-thread).
 */
int xp_pattern_check(const struct xp_pattern *p, const char **err);

/* The field's value in frame n (p checked). */
xp_u128 xp_pattern_at(const struct xp_pattern *p, uint64_t n);

/* How many frames before the pattern's values repeat: 1, nvalues or count. */
uint64_t xp_pattern_period(const struct xp_pattern *p);

/* The k-th 64-bit output of the seeded sequence (splitmix64 of seed, k). */
uint64_t xp_pattern_rand64(uint32_t seed, uint64_t k);

/* Big-endian bytes (an address, a MAC) <-> a value; n <= 16. */
xp_u128 xp_u128_from_bytes(const uint8_t *b, size_t n);
void xp_u128_to_bytes(xp_u128 v, uint8_t *b, size_t n);

#endif /* XP_FRAME_PATTERN_H */
