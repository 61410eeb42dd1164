/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The tests' one reference checksum: RFC 1071 written out from the RFC,
 * independent of user/frame/csum.c, of bpf/lib/csum.h and of the programs'
 * incremental updates, which every test that checks a checksum holds
 * against it (the unit, BPF and root tests and the tools, through
 * tests/lib/wire.h as well). Its forms:
 *
 *   ref_sum_add(p, n, sum)  the big-endian 16-bit words of n bytes (an odd
 *                           last byte padded with a zero on the right) added
 *                           to sum with end-around carry, folded (not
 *                           complemented): chain it over the parts of a sum
 *   ref_csum(p, n)          the value of a checksum field over n bytes (host
 *                           order): 0 over bytes whose checksum is right
 *   ref_sum(a, alen, b, blen, extra)
 *                           a then b then extra (a pseudo-header's protocol
 *                           and length), folded, not complemented: 0xffff
 *                           where a checksum over a and b is right
 *
 * Header-only (static functions), so the unit tests, which link no
 * tests/lib object, can use it.
 */
#ifndef XDPPERF_TESTS_REF_SUM_H
#define XDPPERF_TESTS_REF_SUM_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t ref_sum_add(const uint8_t *p, size_t n, uint32_t sum)
{
	uint64_t s = sum;
	size_t k;

	for (k = 0; k + 1 < n; k += 2)
		s += (uint32_t)(p[k] << 8 | p[k + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint32_t)s;
}

static inline uint16_t ref_csum(const uint8_t *p, size_t n)
{
	return (uint16_t)~ref_sum_add(p, n, 0);
}

static inline uint16_t ref_sum(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint32_t extra)
{
	return (uint16_t)ref_sum_add(b, blen, ref_sum_add(a, alen, extra));
}

#endif
