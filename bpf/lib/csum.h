/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internet checksum (RFC 1071) arithmetic for the BPF programs in bpf/: the
 * one place they fold sums, sum pseudo-headers and update checksums
 * incrementally, so every program computes a checksum the same way.
 *
 * The memory-order convention of user/frame/csum.h (and of the kernel's
 * csum_* helpers): 16-bit words are loaded raw (host order) and checksum
 * fields are stored raw, which works because the ones' complement sum does
 * not depend on byte order (RFC 1071 section 2(B)). A raw 32/64-bit load is
 * two/four such words; which half is which does not matter to a sum.
 *
 * Two ways to a checksum, for two kinds of program:
 *  - from scratch (the TCP replies of tcp_reply.h, whose headers are built
 *    anew): 32-bit words added into a 64-bit accumulator, which cannot
 *    overflow with a few hundred words (xp_csum_pseudo(), then the
 *    header's words), then xp_csum_fold64();
 *  - incrementally (the generator, which rewrites a few fields of a
 *    template whose checksums are right): RFC 1624 eqn 3 over the 16-bit
 *    words that changed, xp_csum_replace(), a few adds whatever the frame
 *    size.
 *
 * Include after vmlinux.h, <bpf/bpf_helpers.h> and <bpf/bpf_endian.h>.
 */
#ifndef XDPPERF_CSUM_H
#define XDPPERF_CSUM_H

/* UDP sends a computed checksum of 0 as this (RFC 768): 0 means "none". */
#define XP_CSUM_MANGLED_0 0xffff

/* Fold a 32-bit partial sum to 16 bits and complement it: the value to
 * store in a checksum field (memory order, like csum_fold() in
 * user/frame/csum.c). Two rounds: the first can carry once more into bit 16. */
static __always_inline __u16 xp_csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* The same for a 64-bit accumulator: to 32 bits first (two rounds, as the
 * first can carry into bit 32 again), then xp_csum_fold(). */
static __always_inline __u16 xp_csum_fold64(__u64 sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	return xp_csum_fold((__u32)sum);
}

/*
 * Partial sum of the TCP/UDP pseudo-header (RFC 9293 section 3.1, RFC 768;
 * RFC 8200 section 8.1 for IPv6): the addresses (network-order words, IPv4
 * in [0]), the protocol and the L4 length (header and payload, host order).
 * The length stays below 65536, so IPv6's 32-bit length field sums the same
 * as IPv4's 16-bit one, and the swapped addresses of a reply sum the same as
 * the segment's.
 */
static __always_inline __u64 xp_csum_pseudo(const __u32 *saddr, const __u32 *daddr, __u32 is_v6,
					     __u8 proto, __u32 l4_len)
{
	__u64 sum = 0;
	__u32 i;

	if (is_v6) {
#pragma unroll
		for (i = 0; i < 4; i++)
			sum += (__u64)saddr[i] + daddr[i];
	} else {
		sum += (__u64)saddr[0] + daddr[0];
	}
	return sum + bpf_htons(proto) + bpf_htons(l4_len);
}

/* The checksum field of an IPv4 header without options whose own checksum
 * field is 0 (all 20 bytes bounds-checked by the caller). */
static __always_inline __u16 xp_csum_ipv4_hdr(const void *iph)
{
	__u64 sum = 0;
	__u32 i;

	/* Literal bounds wherever a sum loops: clang unrolls those, not loops
	 * whose count only becomes a constant once inlined. */
#pragma unroll
	for (i = 0; i < 5; i++)
		sum += ((const __u32 *)iph)[i];
	return xp_csum_fold64(sum);
}

/* The 16-bit words of a raw 32-bit (64-bit) load, summed: what those bytes
 * add to a checksum. Feed the sums to xp_csum_replace(). */
static __always_inline __u32 xp_csum_words32(__u32 x)
{
	return (x & 0xffff) + (x >> 16);
}

static __always_inline __u32 xp_csum_words64(__u64 x)
{
	return xp_csum_words32((__u32)x) + xp_csum_words32((__u32)(x >> 32));
}

/*
 * RFC 1624 incremental update, eqn 3, over several words at once:
 * HC' = ~(~HC + sum(~m) + sum(m')), for nwords 16-bit words covered by the
 * checksum check (as stored) that changed from words summing to old_sum to
 * words summing to new_sum (xp_csum_words32/64 of the raw loads). ~m of one
 * word is 0xffff - m, so sum(~m) is nwords * 0xffff - old_sum, which cannot
 * go negative. Eqn 3 stays in ones' complement addition throughout (eqn 2,
 * HC - m + m', has the -0/+0 problem the RFC describes), so the result
 * matches a full recomputation. nwords below 32767 keeps it all in 32 bits.
 */
static __always_inline __u16 xp_csum_replace(__u16 check, __u32 old_sum, __u32 new_sum,
					     __u32 nwords)
{
	return xp_csum_fold(new_sum + (__u16)~check + nwords * 0xffff - old_sum);
}

/*
 * Verifying a received segment's L4 checksum (the server's responder answers
 * only segments a TCP stack would accept, RFC 9293 3.10.7.4: a bad checksum
 * is dropped). The segment is summed in chunks: bpf_xdp_load_bytes() copies
 * up to XP_CSUM_CHUNK bytes at any offset into buf (which works whatever the
 * frame's layout, multi-buffer included, and needs no packet-pointer proofs
 * of a variable length), and bpf_csum_diff() sums them (the kernel's
 * csum_partial). Every chunk but the last is whole, so each starts on an
 * even offset of the segment and the 16-bit words line up; the last is
 * zero-padded to a multiple of 4 in buf, which is how RFC 1071 pads an odd
 * byte. buf must hold XP_CSUM_CHUNK bytes: a map value, as 512 bytes do not
 * fit beside the rest on the 512-byte BPF stack.
 */
#define XP_CSUM_CHUNK   512u   /* bpf_csum_diff's most per call */
#define XP_CSUM_MAX_LEN 9216u  /* longest segment checked: jumbo frames */

/* 1 if the len-byte segment at offset off of the frame sums, with the
 * pseudo-header sum pseudo (xp_csum_pseudo()), to a valid checksum; 0 if not
 * or if it cannot be read. */
static __always_inline int xp_csum_l4_ok(struct xdp_md *ctx, __u32 off, __u32 len32, __u64 pseudo,
					 __u32 *buf)
{
	/* 64-bit throughout: clang would otherwise keep a copy of a value
	 * from before its 32-bit truncation, and use that one, unbounded,
	 * where the verifier needs the bound. */
	__u64 i, done = 0, n, words, len = len32;
	__s64 sum = 0;

	if (len > XP_CSUM_MAX_LEN)
		return 0;
	for (i = 0; i < XP_CSUM_MAX_LEN / XP_CSUM_CHUNK; i++) {
		if (done >= len)
			break;
		n = len - done;
		if (n > XP_CSUM_CHUNK)
			n = XP_CSUM_CHUNK;
		/* Keep clang from dropping the check below as redundant: the
		 * verifier needs it to bound the sizes. */
		barrier_var(n);
		if (n == 0 || n > XP_CSUM_CHUNK)
			return 0;
		/* The last word summed may be only partly loaded: the rest of
		 * it must be zero (a word wholly past n is not summed). */
		buf[((n - 1) >> 2) & (XP_CSUM_CHUNK / 4 - 1)] = 0;
		if (bpf_xdp_load_bytes(ctx, off + (__u32)done, buf, (__u32)n))
			return 0;
		/* Whole words, with the same guard as n. */
		words = (n + 3) & ~3ull;
		barrier_var(words);
		if (words > XP_CSUM_CHUNK)
			return 0;
		sum = bpf_csum_diff(NULL, 0, (__be32 *)buf, (__u32)words, (__wsum)sum);
		if (sum < 0)
			return 0;
		done += n;
	}
	if (done != len)
		return 0;
	/* A valid segment and pseudo-header sum to 0xffff (-0): folded and
	 * complemented, 0. */
	return xp_csum_fold64(pseudo + (__u64)(__u32)sum) == 0;
}

#endif /* XDPPERF_CSUM_H */
