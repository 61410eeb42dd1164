/* Field patterns; see pattern.h. Pure functions, no state. */
#include "frame/pattern.h"

#include <string.h>

static xp_u128 width_mask(uint8_t width)
{
	return width >= 128 ? ~(xp_u128)0 : (((xp_u128)1 << width) - 1);
}

struct xp_pattern xp_pattern_fixed(uint8_t width, xp_u128 v)
{
	struct xp_pattern p;

	memset(&p, 0, sizeof(p));
	p.kind = XP_PAT_VALUE;
	p.width = width;
	p.value = v;
	p.count = 1;
	return p;
}

static int fail(const char **err, const char *msg)
{
	if (err)
		*err = msg;
	return -1;
}

int xp_pattern_check(const struct xp_pattern *p, const char **err)
{
	xp_u128 m;

	if (!p)
		return fail(err, "no pattern");
	if (p->width < 1 || p->width > 128)
		return fail(err, "field width must be 1..128 bits");
	m = width_mask(p->width);
	switch (p->kind) {
	case XP_PAT_VALUE:
		if (p->value & ~m)
			return fail(err, "value does not fit the field");
		return 0;
	case XP_PAT_VALUES:
		if (p->nvalues < 1 || p->nvalues > XP_PAT_MAX_VALUES)
			return fail(err, "values: 1 to 32 of them");
		for (uint32_t i = 0; i < p->nvalues; i++)
			if (p->values[i] & ~m)
				return fail(err, "values: a value does not fit the field");
		return 0;
	case XP_PAT_INCREMENT:
	case XP_PAT_DECREMENT:
		if ((p->value | p->step) & ~m)
			return fail(err, "start or step does not fit the field");
		if (p->count < 1)
			return fail(err, "count must be at least 1");
		return 0;
	case XP_PAT_RANDOM:
		if ((p->min | p->max) & ~m)
			return fail(err, "random: min or max does not fit the field");
		if (p->min > p->max)
			return fail(err, "random: min is above max");
		if (p->count < 1)
			return fail(err, "count must be at least 1");
		return 0;
	}
	return fail(err, "unknown pattern kind");
}

uint64_t xp_pattern_rand64(uint32_t seed, uint64_t k)
{
	/* splitmix64 (Steele, Lea, Flood 2014) at position k of the stream
	 * that seed starts: the state is seed * 2^32-ish + k golden steps. */
	uint64_t z = ((uint64_t)seed << 32 ^ 0x6a09e667f3bcc909ull) + (k + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A value uniform in [0, span] (span + 1 values; span may be 2^128 - 1). */
static xp_u128 rand_upto(uint32_t seed, uint64_t k, xp_u128 span)
{
	uint64_t r = xp_pattern_rand64(seed, 2 * k);

	if (span < ((xp_u128)1 << 64)) {
		/* Lemire's multiply-shift: floor(r * (span + 1) / 2^64). */
		return ((xp_u128)r * (span + 1)) >> 64;
	}
	/* Wider than 64 bits (IPv6 addresses, MACs never): two draws; the
	 * modulo's bias is below (span + 1) / 2^128. */
	xp_u128 w = (xp_u128)xp_pattern_rand64(seed, 2 * k + 1) << 64 | r;

	return span == ~(xp_u128)0 ? w : w % (span + 1);
}

xp_u128 xp_pattern_at(const struct xp_pattern *p, uint64_t n)
{
	xp_u128 m = width_mask(p->width);

	switch (p->kind) {
	case XP_PAT_VALUE:
		return p->value;
	case XP_PAT_VALUES:
		return p->values[n % (p->nvalues ? p->nvalues : 1)];
	case XP_PAT_INCREMENT:
		return (p->value + (xp_u128)(n % p->count) * p->step) & m;
	case XP_PAT_DECREMENT:
		return (p->value - (xp_u128)(n % p->count) * p->step) & m;
	case XP_PAT_RANDOM:
		return p->min + rand_upto(p->seed, n % p->count, p->max - p->min);
	}
	return 0;
}

uint64_t xp_pattern_period(const struct xp_pattern *p)
{
	switch (p->kind) {
	case XP_PAT_VALUES:
		return p->nvalues ? p->nvalues : 1;
	case XP_PAT_INCREMENT:
	case XP_PAT_DECREMENT:
	case XP_PAT_RANDOM:
		return p->count ? p->count : 1;
	default:
		return 1;
	}
}

xp_u128 xp_u128_from_bytes(const uint8_t *b, size_t n)
{
	xp_u128 v = 0;

	for (size_t i = 0; i < n && i < 16; i++)
		v = v << 8 | b[i];
	return v;
}

void xp_u128_to_bytes(xp_u128 v, uint8_t *b, size_t n)
{
	for (size_t i = n; i-- > 0; v >>= 8)
		b[i] = (uint8_t)v;
}
