/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Internet checksum (RFC 1071) arithmetic for the BPF programs in bpf/: the
 * one place they fold sums, sum pseudo-headers and update checksums
 * incrementally, so every program computes a checksum the same way.
 *
 * The memory-order convention of user/net/csum.h (and of the kernel's
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
 * Include after vmlinux.h and <bpf/bpf_endian.h>.
 */
#ifndef XDPPERF_CSUM_H
#define XDPPERF_CSUM_H

/* UDP sends a computed checksum of 0 as this (RFC 768): 0 means "none". */
#define XP_CSUM_MANGLED_0 0xffff

/* Fold a 32-bit partial sum to 16 bits and complement it: the value to
 * store in a checksum field (memory order, like csum_fold() in
 * user/net/csum.c). Two rounds: the first can carry once more into bit 16. */
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

#endif /* XDPPERF_CSUM_H */
