/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The stamp every stream test frame carries (issue "every frame counted and
 * timed"): which stream sent it, its number in that stream, and when it was
 * made. Written by the live engine's generator (bpf/live.bpf.c) and the
 * AF_XDP engine (user/engine/xsk.c), read by the server's XDP program
 * (bpf/server.bpf.c) and by the tests. Shared by BPF and userspace: needs
 * only __u8..__u64, and every function is static inline on plain pointers.
 *
 * Eight bytes, big-endian:
 *   byte  0     stream: stream_base + the sending thread's index (0..255);
 *               one sequence space each
 *   bytes 1-3   seq: the low 24 bits of the frame's number in its stream
 *               (0, 1, 2, ...); the receiver extends it to 64 bits from the
 *               previous frame of the stream (serial-number arithmetic), so
 *               it wraps every 16.7 M frames without harm as long as no frame
 *               is reordered by more than 2^23
 *   bytes 4-7   ts: the low 32 bits of the send time in ticks of
 *               XP_STAMP_TICK_NS (4 ns): it wraps after 17.18 s, more than
 *               the latency range (10 s) the histograms cover. The clock is
 *               CLOCK_MONOTONIC (bpf_ktime_get_ns, clock_gettime) unless the
 *               test says CLOCK_TAI (hosts synchronised by PTP).
 *
 * Why eight bytes and where they go: a 64-byte IPv4/TCP frame (60 bytes
 * without FCS) has 6 payload bytes after 54 bytes of headers. So:
 *   payload >= 8 bytes          the first 8 payload bytes (XP_STAMP_AT_PAYLOAD)
 *   IPv4, payload 6 or 7 bytes  bytes 0-1 in the IPv4 Identification field,
 *                               bytes 2-7 in the first 6 payload bytes
 *                               (XP_STAMP_AT_IPID). The ID of a datagram
 *                               with DF set is meaningless (RFC 6864: it is
 *                               not used for reassembly), and routers and
 *                               Linux NAT leave it alone; a normaliser that
 *                               randomises IDs (pf's scrub random-id) would
 *                               garble the stream and seq bits, which the
 *                               receiver then counts as foreign streams.
 *   anything shorter            no stamp (XP_STAMP_NONE): IPv6/TCP below 86
 *                               bytes has at most 4 payload bytes and no
 *                               header field a stateful path leaves free
 *                               (conntrack checks TCP seq, ack and flags;
 *                               the flow label is 20 bits); UDP always has
 *                               room from the smallest frame up.
 */
#ifndef XDPPERF_LIB_STAMP_H
#define XDPPERF_LIB_STAMP_H

/*
 * The tag (issue 28): 4 more bytes right after the stamp, big-endian,
 * xp_stamp_tag(key, stamp), in every frame whose stamp is in the payload
 * with 4 bytes to spare (xp_stamp_tagged: payload >= 12 bytes, i.e. IPv4/UDP
 * from 64-byte frames, IPv4/TCP from 70, IPv6/UDP from 78, IPv6/TCP from
 * 90). key: a per-test random secret the server chooses at the test's start
 * and gives the client in its "started" reply (over the control
 * connection, authenticated with --auth-key), never in a frame.
 *
 * What it is for: the server's XDP program takes a frame as a test's if it
 * is addressed to this host (its MAC and an address it owns there), or
 * else only if it carries that test's stamp with a right tag. A frame the
 * host merely forwards, whatever its ports and source, passes untouched
 * unless it carries the tag. A smaller frame (stamp without tag, or no
 * stamp) is the test's only when addressed to this host, as before.
 *
 * Why 32 bits suffice: whoever sends a foreign frame does not know the key
 * (it never leaves the control channel), and a wrong tag costs nothing:
 * the frame is "not ours" and passes untouched. Passing for a test's by
 * chance takes 1 frame in 2^32 of those from the client's addresses to the
 * test's ports, and then the harm is one frame counted and dropped. It is a
 * keyed hash, not a cryptographic MAC (the live generator computes it for
 * ~10 M frames a second, so it must cost a few ns): someone who captures
 * many tagged frames on the path might work the key out, but such a
 * party can already replay the test's frames, which the tag does not stop
 * either (they count as duplicates).
 */
#define XP_STAMP_TAG_BYTES   4u

#define XP_STAMP_BYTES       8u
#define XP_STAMP_TICK_SHIFT  2u                        /* ns >> 2 */
#define XP_STAMP_TICK_NS     (1u << XP_STAMP_TICK_SHIFT)
#define XP_STAMP_MAX_STREAMS 256u
#define XP_STAMP_SEQ_BITS    24u
#define XP_STAMP_SEQ_MASK    ((1u << XP_STAMP_SEQ_BITS) - 1)

/* Where a frame of this family and payload length carries its stamp. */
enum xp_stamp_place {
	XP_STAMP_NONE = 0,
	XP_STAMP_AT_PAYLOAD = 1,
	XP_STAMP_AT_IPID = 2,
};

/* is_v6: the frame's family; payload_len: its L4 payload bytes. */
static inline enum xp_stamp_place xp_stamp_place_of(int is_v6, unsigned payload_len)
{
	if (payload_len >= XP_STAMP_BYTES)
		return XP_STAMP_AT_PAYLOAD;
	if (!is_v6 && payload_len >= XP_STAMP_BYTES - 2)
		return XP_STAMP_AT_IPID;
	return XP_STAMP_NONE;
}

/* Does a frame whose stamp is at p, with payload_len payload bytes, carry the tag too? */
static inline int xp_stamp_tagged(enum xp_stamp_place p, unsigned payload_len)
{
	return p == XP_STAMP_AT_PAYLOAD && payload_len >= XP_STAMP_BYTES + XP_STAMP_TAG_BYTES;
}

/*
 * The tag of stamp s (the 64-bit value of xp_stamp_pack) under key k0, k1:
 * murmur3's 64-bit finaliser (every input bit moves every output bit) over
 * the stamp mixed with k0, then k1 added and the halves folded. A few
 * multiplies and shifts, the same in BPF and userspace.
 */
static inline __u32 xp_stamp_tag(__u64 k0, __u64 k1, __u64 s)
{
	__u64 x = s ^ k0;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	x += k1;
	return (__u32)(x >> 32) ^ (__u32)x;
}

/* The stamp as one 64-bit value in host order: stream << 56 | seq24 << 32 | ts32. */
static inline __u64 xp_stamp_pack(__u32 stream, __u64 seq, __u64 ts_ticks)
{
	return ((__u64)(stream & 0xff) << 56) | ((__u64)(seq & XP_STAMP_SEQ_MASK) << 32) | (ts_ticks & 0xffffffffull);
}

static inline __u32 xp_stamp_stream(__u64 s) { return (__u32)(s >> 56); }
static inline __u32 xp_stamp_seq24(__u64 s)  { return (__u32)(s >> 32) & XP_STAMP_SEQ_MASK; }
static inline __u32 xp_stamp_ts32(__u64 s)   { return (__u32)s; }

/*
 * The 64-bit sequence number of a frame whose low 24 bits are seq24, given
 * the 64-bit number of an earlier frame of the same stream (ref): the one
 * within +-2^23 of ref.
 */
static inline __u64 xp_stamp_seq_extend(__u64 ref, __u32 seq24)
{
	__s32 d = (__s32)(((seq24 - (__u32)ref) & XP_STAMP_SEQ_MASK) << 8) >> 8;

	if (d < 0 && (__u64)(-(__s64)d) > ref)
		return seq24; /* before the first frame: cannot go below 0 */
	return ref + (__s64)d;
}

/* The full send time in ticks of a frame stamped ts32, given a full time
 * within +-2^31 ticks (8.6 s) of it (ref: the previous frame of the stream,
 * or the test's start). */
static inline __u64 xp_stamp_ts_extend(__u64 ref, __u32 ts32)
{
	return ref + (__s64)(__s32)(ts32 - (__u32)ref);
}

#endif /* XDPPERF_LIB_STAMP_H */
