/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RFC 1071 written out once more for the tests that check generated frames
 * (tests/unit/test_stamp.c, tests/bpf/test_generator_stream.c), independent of
 * user/frame/csum.c and of the programs' incremental updates: the big-endian
 * 16-bit words of a, then of b (even lengths but the last), summed with
 * end-around carry, plus extra. Returns the folded sum (not complemented):
 * 0xffff where a checksum over a and b is right.
 *
 * Header-only (a static function), so the unit tests, which link no
 * tests/lib object, can use it.
 */
#ifndef XDPPERF_TESTS_REF_SUM_H
#define XDPPERF_TESTS_REF_SUM_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t ref_sum(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, uint32_t extra)
{
	uint64_t sum = extra;
	size_t k;

	for (k = 0; k + 1 < alen; k += 2)
		sum += (uint32_t)(a[k] << 8 | a[k + 1]);
	for (k = 0; k + 1 < blen; k += 2)
		sum += (uint32_t)(b[k] << 8 | b[k + 1]);
	if (blen & 1)
		sum += (uint32_t)b[blen - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

#endif
