/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live generator's stamp and L4 checksum steps (bpf/live.bpf.c), one
 * copy for its two paths: one stream (offsets from config) and flows
 * (bpf/live_flows.h, offsets per flow). The frame holds a template whose
 * checksums are right, so only the words that change are accounted
 * (struct csum_delta) and the checksum is fixed incrementally at the end
 * (RFC 1624 eqn 3, lib/csum.h).
 *
 * Include after vmlinux.h, <bpf/bpf_endian.h>, lib/csum.h and lib/stamp.h.
 */
#ifndef XDPPERF_LIB_STAMP_PUT_H
#define XDPPERF_LIB_STAMP_PUT_H

/* What changed in the frame, for the checksum (RFC 1624 eqn 3): the old
 * words out, the new words in, and how many 16-bit words. */
struct csum_delta {
	__u32 old_sum, sum, nwords;
};

/*
 * Stamp v where place says, accounted in cd for the L4 checksum (pl the
 * payload at pl_off, ip the IP header at l3_off):
 *  - XP_STAMP_AT_PAYLOAD: its 8 bytes at pl, and with tag the test's tag
 *    (xp_stamp_tag of key[0], key[1]: a few ns, no clock) after them;
 *  - XP_STAMP_AT_IPID (64-byte IPv4/TCP, no room in the payload): its first
 *    two bytes in the IPv4 ID of the header at ip, whose checksum is fixed
 *    here (the ID is not in the L4 pseudo-header), the other six at pl.
 * The payload starts at an even offset (14 [+4 +4] + 20/40 + 20/8), so the
 * stamp's 16-bit words are the checksum's words. The fields are unaligned:
 * the verifier allows that on x86-64 and arm64, and one wide access is
 * cheaper than bytes. 0 written, 1 no stamp at this place, -1 to abort.
 */
static __always_inline int xp_stamp_put(void *data, void *data_end, __u32 pl_off, __u32 l3_off, __u64 v,
					__u8 place, __u8 tag, const volatile __u64 *key, struct csum_delta *cd)
{
	void *pl = data + pl_off;

	if (place == XP_STAMP_AT_PAYLOAD) {
		__u64 w = bpf_cpu_to_be64(v);

		if (pl + XP_STAMP_BYTES > data_end)
			return -1;
		cd->old_sum += xp_csum_words64(*(__u64 *)pl);
		cd->sum += xp_csum_words64(w);
		cd->nwords += XP_STAMP_BYTES / 2;
		*(__u64 *)pl = w;
		if (tag) {
			__u32 t = bpf_htonl(xp_stamp_tag(key[0], key[1], v));

			if (pl + XP_STAMP_BYTES + XP_STAMP_TAG_BYTES > data_end)
				return -1;
			cd->old_sum += xp_csum_words32(*(__u32 *)(pl + XP_STAMP_BYTES));
			cd->sum += xp_csum_words32(t);
			cd->nwords += XP_STAMP_TAG_BYTES / 2;
			*(__u32 *)(pl + XP_STAMP_BYTES) = t;
		}
		return 0;
	}
	if (place == XP_STAMP_AT_IPID) {
		void *ip = data + l3_off;
		__u16 id = bpf_htons((__u16)(v >> 48)), old_id;
		__u16 w16 = bpf_htons((__u16)(v >> 32));
		__u32 w32 = bpf_htonl((__u32)v);

		if (ip + 20 > data_end || pl + XP_STAMP_BYTES - 2 > data_end)
			return -1;
		old_id = *(__u16 *)(ip + 4);
		*(__u16 *)(ip + 10) = xp_csum_replace(*(__u16 *)(ip + 10), old_id, id, 1);
		*(__u16 *)(ip + 4) = id;
		cd->old_sum += *(__u16 *)pl + xp_csum_words32(*(__u32 *)(pl + 2));
		cd->sum += w16 + xp_csum_words32(w32);
		cd->nwords += (XP_STAMP_BYTES - 2) / 2;
		*(__u16 *)pl = w16;
		*(__u32 *)(pl + 2) = w32;
		return 0;
	}
	return 1;
}

/*
 * The L4 checksum at check, from the template's, for the words cd
 * accounted. UDP (udp true): 0 means "no checksum", so a computed 0 is
 * sent as 0xffff (RFC 768), as frame_build (user/frame/frame.c) does.
 */
static __always_inline void xp_csum_delta_put(void *check, int udp, const struct csum_delta *cd)
{
	__u16 c = xp_csum_replace(*(__u16 *)check, cd->old_sum, cd->sum, cd->nwords);

	if (udp && c == 0)
		c = XP_CSUM_MANGLED_0;
	*(__u16 *)check = c;
}

#endif /* XDPPERF_LIB_STAMP_PUT_H */
