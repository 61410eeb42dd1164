/*
 * Writing the 8-byte stamp of bpf/lib/stamp.h (and its 4-byte tag where
 * there is room) into a frame built by
 * frame_build, for senders that write frames in userspace (the AF_XDP
 * engine; the live engine's generator does the same in BPF). The stamp
 * replaces whatever stamp (or template bytes) the frame held, and the
 * checksums follow incrementally (RFC 1624 eqn 3 over the changed 16-bit
 * words), so a frame rewritten a million times stays a valid frame_build
 * frame: a few adds per frame, whatever its size.
 *
 * Where it goes (xp_stamp_place_of): the first 8 payload bytes, or, at
 * 64-byte IPv4/TCP (6 payload bytes), bytes 0-1 in the IPv4 ID (its header
 * checksum fixed; the ID is not in the L4 pseudo-header) and bytes 2-7 in
 * the payload. The payload starts at an even offset in every frame_build
 * layout (14 [+4] + 20/40 + 20/8), so the stamp's words are checksum words.
 *
 * Static inline: it runs per frame in the AF_XDP engine's TX loop.
 */
#ifndef XP_FRAME_STAMP_H
#define XP_FRAME_STAMP_H

#include <linux/types.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "bpf/lib/stamp.h"
#include "frame/frame.h"

/* Where frames of spec s with layout lay carry the stamp. */
static inline enum xp_stamp_place frame_stamp_place(const struct frame_spec *s, const struct frame_layout *lay)
{
	if (lay->payload_off & 1)
		return XP_STAMP_NONE; /* not a frame_build layout */
	return xp_stamp_place_of(s->src.family == AF_INET6, lay->payload_len);
}

/* The ones' complement sum of n 16-bit words at p (raw loads, as csum.h). */
static inline uint32_t frame_stamp_words(const uint8_t *p, unsigned n)
{
	uint32_t sum = 0;

	for (unsigned i = 0; i < n; i++) {
		uint16_t w;

		memcpy(&w, p + 2 * i, 2);
		sum += w;
	}
	return sum;
}

/* RFC 1624 eqn 3 for nwords changed words: HC' = ~(~HC + sum(~m) + sum(m')). */
static inline uint16_t frame_stamp_csum(uint16_t check, uint32_t old_sum, uint32_t new_sum, unsigned nwords)
{
	uint32_t sum = (uint16_t)~check + nwords * 0xffffu - old_sum + new_sum;

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Write stamp (xp_stamp_pack) at place p of frame f, fixing its checksums;
 * with key (the test's, from the server's start reply; NULL: none) its tag
 * too where the frame has room (xp_stamp_tagged: 4 bytes after the stamp). */
static inline void frame_put_stamp(uint8_t *f, const struct frame_layout *lay, enum xp_stamp_place p, uint64_t stamp,
				   const uint64_t *key)
{
	uint8_t be[XP_STAMP_BYTES + XP_STAMP_TAG_BYTES];
	unsigned len = XP_STAMP_BYTES;
	uint8_t *pl = f + lay->payload_off, *ip = f + lay->l3_off;
	uint8_t *ck = f + lay->l4_off + (lay->l4_proto == IPPROTO_TCP ? 16 : 6);
	uint16_t check;
	unsigned skip;

	if (p == XP_STAMP_NONE)
		return;
	for (unsigned i = 0; i < XP_STAMP_BYTES; i++)
		be[i] = (uint8_t)(stamp >> (56 - 8 * i));
	if (key && xp_stamp_tagged(p, lay->payload_len)) {
		uint32_t tag = xp_stamp_tag(key[0], key[1], stamp);

		for (unsigned i = 0; i < XP_STAMP_TAG_BYTES; i++)
			be[XP_STAMP_BYTES + i] = (uint8_t)(tag >> (24 - 8 * i));
		len += XP_STAMP_TAG_BYTES;
	}
	skip = p == XP_STAMP_AT_IPID ? 2 : 0;
	if (skip) {
		uint16_t ipck, old_id, id;

		memcpy(&old_id, ip + 4, 2);
		memcpy(&id, be, 2);
		memcpy(&ipck, ip + 10, 2);
		ipck = frame_stamp_csum(ipck, old_id, id, 1);
		memcpy(ip + 10, &ipck, 2);
		memcpy(ip + 4, &id, 2);
	}
	unsigned nw = (len - skip) / 2;
	uint32_t old_sum = frame_stamp_words(pl, nw), new_sum = frame_stamp_words(be + skip, nw);

	memcpy(&check, ck, 2);
	check = frame_stamp_csum(check, old_sum, new_sum, nw);
	/* UDP sends a computed 0 as 0xffff (RFC 768: 0 is "no checksum"). */
	if (check == 0 && lay->l4_proto == IPPROTO_UDP)
		check = 0xffff;
	memcpy(ck, &check, 2);
	memcpy(pl, be + skip, len - skip);
}

#endif
