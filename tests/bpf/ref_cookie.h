/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The SYN cookie design of bpf/lib/syncookie.h written out again for the
 * BPF tests that check or forge cookies (tests/bpf/test_handshake.c,
 * tests/bpf/test_keepalive_bound.c), independent of the program's code:
 * byte-oriented SipHash-2-4 from the paper (checked there against the
 * paper's vectors), the hash input as the header documents it, the cookie.
 *
 * Header-only (static functions), as tests/lib/ref_sum.h.
 */
#ifndef XDPPERF_TESTS_REF_COOKIE_H
#define XDPPERF_TESTS_REF_COOKIE_H

#include <stddef.h>
#include <stdint.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND do {                                                   \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                    \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                    \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
	} while (0)

/* Byte-oriented SipHash-2-4, straight from the paper (any length). */
static inline uint64_t siphash24(const uint8_t key[16], const uint8_t *in, size_t len)
{
	uint64_t k0 = 0, k1 = 0, v0, v1, v2, v3, m, b = (uint64_t)len << 56;
	size_t i, full = len & ~(size_t)7;

	for (i = 0; i < 8; i++) {
		k0 |= (uint64_t)key[i] << (8 * i);
		k1 |= (uint64_t)key[8 + i] << (8 * i);
	}
	v0 = k0 ^ 0x736f6d6570736575ULL;
	v1 = k1 ^ 0x646f72616e646f6dULL;
	v2 = k0 ^ 0x6c7967656e657261ULL;
	v3 = k1 ^ 0x7465646279746573ULL;
	for (size_t off = 0; off < full; off += 8) {
		m = 0;
		for (i = 0; i < 8; i++)
			m |= (uint64_t)in[off + i] << (8 * i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (i = 0; i < (len & 7); i++)
		b |= (uint64_t)in[full + i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The flow a cookie is bound to, client -> server. */
struct flow {
	int v6;
	uint32_t saddr[4], daddr[4]; /* raw network-order words */
	uint16_t sport, dport;       /* network order */
};

/* SipHash input words as bpf/lib/syncookie.h defines them, as bytes
 * (little-endian words, which is how SipHash reads its message). */
static inline size_t cookie_msg(const struct flow *f, uint32_t cseq, uint32_t t,
			 uint32_t mss_idx, uint8_t *msg)
{
	uint64_t w[6];
	uint64_t tail0 = (uint64_t)f->sport | ((uint64_t)f->dport << 16) |
			 ((uint64_t)cseq << 32);
	uint64_t tail1 = (uint64_t)t | ((uint64_t)mss_idx << 32);
	size_t n;

	if (f->v6) {
		w[0] = (uint64_t)f->saddr[0] | ((uint64_t)f->saddr[1] << 32);
		w[1] = (uint64_t)f->saddr[2] | ((uint64_t)f->saddr[3] << 32);
		w[2] = (uint64_t)f->daddr[0] | ((uint64_t)f->daddr[1] << 32);
		w[3] = (uint64_t)f->daddr[2] | ((uint64_t)f->daddr[3] << 32);
		w[4] = tail0;
		w[5] = tail1;
		n = 6;
	} else {
		w[0] = (uint64_t)f->saddr[0] | ((uint64_t)f->daddr[0] << 32);
		w[1] = tail0;
		w[2] = tail1;
		n = 3;
	}
	for (size_t i = 0; i < n; i++)
		for (int j = 0; j < 8; j++)
			msg[8 * i + j] = (uint8_t)(w[i] >> (8 * j));
	return 8 * n;
}

/* The cookie for (flow, client ISN, full step t, mss index) under the key
 * the program was loaded with (config.cookie_key). */
static inline uint32_t ref_cookie_key(const uint64_t k[2], const struct flow *f, uint32_t cseq, uint32_t t,
			       uint32_t mss_idx)
{
	uint8_t key[16], msg[48];
	size_t n = cookie_msg(f, cseq, t, mss_idx, msg);
	uint32_t mac;

	for (int i = 0; i < 8; i++) {
		key[i] = (uint8_t)(k[0] >> (8 * i));
		key[8 + i] = (uint8_t)(k[1] >> (8 * i));
	}
	mac = (uint32_t)(siphash24(key, msg, n) >> (64 - 27));
	return (mac << 5) | ((t & 7) << 2) | (mss_idx & 3);
}

#endif
