/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stateless SYN cookies for the XDP connection responder (server.bpf.c with
 * XP_SLOT_RESPOND). The server's initial sequence number IS the cookie; the
 * ACK that completes the handshake carries it back (ack - 1), so a
 * connection is validated without any per-connection state anywhere.
 *
 * Cookie layout (32 bits, the SYN-ACK's sequence number):
 *
 *    31                                  5 4     2 1   0
 *   +-------------------------------------+-------+-----+
 *   |  MAC: 27 bits of SipHash-2-4        | t & 7 | mss |
 *   +-------------------------------------+-------+-----+
 *
 *  - mss: index into a 4-entry MSS table (Linux's syncookie tables), the
 *    largest entry <= the MSS the client offered. Low bits, like Linux.
 *  - t: the low 3 bits of a coarse clock, t = ktime_ns >> 26 (67.1 ms steps),
 *    read from bpf_ktime_get_coarse_ns (the server, xp_respond).
 *    Carrying them lets the checker rebuild the full step with one hash
 *    instead of trying every candidate step. Cookies are accepted for the
 *    current step and the 7 before it (age 0..7: 470-537 ms), far more than a
 *    handshake round trip through a loaded router, while a captured cookie
 *    is useless half a second later. An age of 8 or more aliases to a
 *    younger step whose MAC does not match, so it is rejected.
 *  - MAC: the top 27 bits of SipHash-2-4 (a PRF, so truncation is safe) under
 *    a 128-bit secret key, over the client->server 4-tuple, the client's ISN,
 *    the FULL 32-bit step t and the mss index. Forging an ACK therefore
 *    takes 2^27 guesses on average (Linux's cookies have ~24 bits), and the
 *    MSS index and time bits cannot be altered without breaking the MAC.
 *    Including the client's ISN gives each attempt on a reused 4-tuple its
 *    own ISN, which matters because a benchmark reuses tuples every second.
 *
 * Hash input: 64-bit words built from the raw (network order) 32-bit address
 * words and 16-bit ports as loaded on this host, then host-order values:
 *   IPv4 (3 words, 24 bytes): saddr | daddr << 32
 *                             sport | dport << 16 | cseq << 32
 *                             t | mss_idx << 32
 *   IPv6 (6 words, 48 bytes): saddr[0] | saddr[1] << 32, saddr[2] | saddr[3] << 32,
 *                             daddr[0] | daddr[1] << 32, daddr[2] | daddr[3] << 32,
 *                             then the same two words as IPv4.
 * The message length (SipHash's final byte) separates the two families.
 * Userspace (tests) can recompute cookies from this description and the key.
 *
 * Needs vmlinux.h types. The key is passed in (server.bpf.c keeps it in its
 * rodata config, struct xp_server_config, set by the loader from getrandom()).
 */
#ifndef XDPPERF_SYNCOOKIE_H
#define XDPPERF_SYNCOOKIE_H

#define XP_COOKIE_STEP_SHIFT 26u          /* ns >> 26: 67.1 ms time steps */
#define XP_COOKIE_T_BITS     3u
#define XP_COOKIE_T_MASK     ((1u << XP_COOKIE_T_BITS) - 1)
#define XP_COOKIE_MAX_AGE    XP_COOKIE_T_MASK /* steps: current and 7 before */
#define XP_COOKIE_MSS_BITS   2u
#define XP_COOKIE_MSS_MASK   ((1u << XP_COOKIE_MSS_BITS) - 1)
#define XP_COOKIE_MAC_SHIFT  (XP_COOKIE_T_BITS + XP_COOKIE_MSS_BITS) /* 5 */
#define XP_COOKIE_MAC_BITS   (32u - XP_COOKIE_MAC_SHIFT)               /* 27 */

/* MSS tables, as Linux's msstab (IPv4) and msstab in syncookies.c (IPv6):
 * the values real clients offer most, so rounding down loses little. */
#define XP_COOKIE_MSS4_0 536
#define XP_COOKIE_MSS4_1 1300
#define XP_COOKIE_MSS4_2 1440
#define XP_COOKIE_MSS4_3 1460
#define XP_COOKIE_MSS6_0 1220
#define XP_COOKIE_MSS6_1 1420
#define XP_COOKIE_MSS6_2 1440
#define XP_COOKIE_MSS6_3 8940

/* The connection a cookie belongs to, in client -> server orientation. */
struct xp_cookie_flow {
	__u32 saddr[4];  /* network order words; IPv4 uses [0] */
	__u32 daddr[4];
	__u16 sport;     /* network order */
	__u16 dport;
	__u32 is_v6;
};

#define XP_ROTL64(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define XP_SIPROUND(v0, v1, v2, v3) do {                               \
		v0 += v1; v1 = XP_ROTL64(v1, 13); v1 ^= v0; v0 = XP_ROTL64(v0, 32); \
		v2 += v3; v3 = XP_ROTL64(v3, 16); v3 ^= v2;                    \
		v0 += v3; v3 = XP_ROTL64(v3, 21); v3 ^= v0;                    \
		v2 += v1; v1 = XP_ROTL64(v1, 17); v1 ^= v2; v2 = XP_ROTL64(v2, 32); \
	} while (0)

/*
 * SipHash-2-4 of n 64-bit little-endian words (a message of 8n bytes, so the
 * final block holds only the length byte). k0/k1: the key's two halves.
 * Not inlined: one copy serves the SYN and ACK paths of both families
 * (about 250 instructions per call).
 */
static __noinline __u64 xp_siphash24(__u64 k0, __u64 k1, const __u64 *m, __u32 n)
{
	__u64 v0 = k0 ^ 0x736f6d6570736575ULL;
	__u64 v1 = k1 ^ 0x646f72616e646f6dULL;
	__u64 v2 = k0 ^ 0x6c7967656e657261ULL;
	__u64 v3 = k1 ^ 0x7465646279746573ULL;
	__u64 b;
	__u32 i;

	if (n > 6)
		n = 6;
	for (i = 0; i < 6; i++) {
		if (i >= n)
			break;
		v3 ^= m[i];
		XP_SIPROUND(v0, v1, v2, v3);
		XP_SIPROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	b = (__u64)(n * 8) << 56;
	v3 ^= b;
	XP_SIPROUND(v0, v1, v2, v3);
	XP_SIPROUND(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	XP_SIPROUND(v0, v1, v2, v3);
	XP_SIPROUND(v0, v1, v2, v3);
	XP_SIPROUND(v0, v1, v2, v3);
	XP_SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* The time step of a CLOCK_MONOTONIC value (the server passes the coarse
 * clock's, bpf_ktime_get_coarse_ns). */
static __always_inline __u32 xp_cookie_step(__u64 now_ns)
{
	return (__u32)(now_ns >> XP_COOKIE_STEP_SHIFT);
}

/* MSS index (largest table entry <= mss); 0 when the SYN had no MSS option
 * (mss 0), which is what TCP assumes then (536 / 1220). */
static __always_inline __u32 xp_cookie_mss_idx(__u32 mss, __u32 is_v6)
{
	if (is_v6) {
		if (mss >= XP_COOKIE_MSS6_3) return 3;
		if (mss >= XP_COOKIE_MSS6_2) return 2;
		if (mss >= XP_COOKIE_MSS6_1) return 1;
		return 0;
	}
	if (mss >= XP_COOKIE_MSS4_3) return 3;
	if (mss >= XP_COOKIE_MSS4_2) return 2;
	if (mss >= XP_COOKIE_MSS4_1) return 1;
	return 0;
}

/* The hash input's last word: the step and the mss index. */
static __always_inline __u64 xp_cookie_msg_t(__u32 t, __u32 mss_idx)
{
	return (__u64)t | ((__u64)mss_idx << 32);
}

/* The hash input of (flow, client ISN, full step t, mss index), as above,
 * into m: returns its length in words (3 or 6). Only its last word depends
 * on t and mss_idx (xp_cookie_msg_t), so a search over steps builds it once. */
static __always_inline __u32 xp_cookie_msg(const struct xp_cookie_flow *f, __u32 cseq, __u32 t,
					   __u32 mss_idx, __u64 m[6])
{
	__u64 tail0 = (__u64)f->sport | ((__u64)f->dport << 16) | ((__u64)cseq << 32);

	if (f->is_v6) {
		m[0] = (__u64)f->saddr[0] | ((__u64)f->saddr[1] << 32);
		m[1] = (__u64)f->saddr[2] | ((__u64)f->saddr[3] << 32);
		m[2] = (__u64)f->daddr[0] | ((__u64)f->daddr[1] << 32);
		m[3] = (__u64)f->daddr[2] | ((__u64)f->daddr[3] << 32);
		m[4] = tail0;
		m[5] = xp_cookie_msg_t(t, mss_idx);
		return 6;
	}
	m[0] = (__u64)f->saddr[0] | ((__u64)f->daddr[0] << 32);
	m[1] = tail0;
	m[2] = xp_cookie_msg_t(t, mss_idx);
	return 3;
}

/* The 27-bit MAC of a hash input of n words. */
static __always_inline __u32 xp_cookie_mac_of(__u64 k0, __u64 k1, const __u64 *m, __u32 n)
{
	return (__u32)(xp_siphash24(k0, k1, m, n) >> (64 - XP_COOKIE_MAC_BITS));
}

/* 27-bit MAC of (flow, client ISN, full step t, mss index). */
static __always_inline __u32 xp_cookie_mac(__u64 k0, __u64 k1,
					   const struct xp_cookie_flow *f,
					   __u32 cseq, __u32 t, __u32 mss_idx)
{
	__u64 m[6] = {};
	__u32 n = xp_cookie_msg(f, cseq, t, mss_idx, m);

	return xp_cookie_mac_of(k0, k1, m, n);
}

/* The cookie (server ISN) for a SYN with client ISN cseq at step t. */
static __always_inline __u32 xp_cookie_make(__u64 k0, __u64 k1,
					    const struct xp_cookie_flow *f,
					    __u32 cseq, __u32 t, __u32 mss_idx)
{
	mss_idx &= XP_COOKIE_MSS_MASK;
	return (xp_cookie_mac(k0, k1, f, cseq, t, mss_idx) << XP_COOKIE_MAC_SHIFT) |
	       ((t & XP_COOKIE_T_MASK) << XP_COOKIE_MSS_BITS) | mss_idx;
}

/*
 * 1 if cookie is one we issued for this flow and client ISN within the last
 * XP_COOKIE_MAX_AGE steps of now_t, else 0. The step is rebuilt from the
 * cookie's 3 time bits: the latest step <= now_t with those low bits.
 */
static __always_inline int xp_cookie_check(__u64 k0, __u64 k1,
					   const struct xp_cookie_flow *f,
					   __u32 cseq, __u32 cookie, __u32 now_t)
{
	__u32 lo = (cookie >> XP_COOKIE_MSS_BITS) & XP_COOKIE_T_MASK;
	__u32 t = now_t - ((now_t - lo) & XP_COOKIE_T_MASK);
	__u32 mss_idx = cookie & XP_COOKIE_MSS_MASK;

	return xp_cookie_mac(k0, k1, f, cseq, t, mss_idx) ==
	       cookie >> XP_COOKIE_MAC_SHIFT;
}

#endif /* XDPPERF_SYNCOOKIE_H */
