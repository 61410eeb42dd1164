/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stamped test frames for the C tests (tests/bpf/test_measure.c,
 * test_rtt.c, tests/root/test_rtt_veth.c, test_server_hwts.c): the stamp's
 * 8 bytes written out from bpf/lib/stamp.h's description (not with its pack
 * helper: the tests hold the programs against their own reading of the
 * layout), put where the programs look for it in a frame of tests/lib/wire.h,
 * and the stamps' clock.
 *
 * The cases' assertions (cmocka) are made in here, as they were in each
 * test's own copy: a frame that cannot be built fails the case that asked.
 */
#ifndef XDPPERF_TESTS_STAMPED_H
#define XDPPERF_TESTS_STAMPED_H

#include <stddef.h>
#include <stdint.h>

#include "tests/lib/wire.h"

/* bpf_ktime_get_ns()'s clock (CLOCK_MONOTONIC) and bpf_ktime_get_tai_ns()'s
 * (CLOCK_TAI), in the stamps' 4-ns ticks. */
uint64_t xt_now_ticks(void);
uint64_t xt_tai_ticks(void);

/* An IPv4 or IPv6 address (by the ':') into 16 bytes, zero-padded; asserted. */
void xt_addr(const char *s, uint8_t out[16]);

/* The 8 stamp bytes, big-endian: stream, seq (24 bits), ts (its low 32 bits). */
void xt_stamp_bytes(uint32_t stream, uint32_t seq, uint64_t ts, uint8_t b[8]);

/* Frame w into buf (w_build) with stamp st where the programs look for it:
 * the first 8 L4 payload bytes (w->payload >= 8), or (IPv4 with 6 or 7
 * payload bytes) bytes 0-1 in the IPv4 ID and 2-7 in the first 6 payload
 * bytes; no stamp below that. ttl: the TTL / hop limit, 0 = wire.h's 64.
 * Then the IPv4 header checksum and the TCP/UDP checksum are recomputed
 * (RFC 1071 sums of wire.h) and the frame asserted well formed with valid
 * checksums. Returns its length. Headers as wire.h builds them with no IPv4
 * options, VLAN tags or IPv6 extension headers (what the stamp tests send). */
size_t xt_stamped_frame(const struct wf *w, const uint8_t st[8], uint8_t ttl, uint8_t *buf, size_t cap);

/* Where the root tests' stamped UDP/IPv4 frames go: MACs, addresses
 * (dotted quads), ports. */
struct xt_udp4_path {
	const uint8_t *smac, *dmac;
	const char *cli, *srv;
	uint16_t sport, dport;
};

/* A UDP/IPv4 frame cli:sport -> srv:dport with 18 payload bytes, the stamp
 * (stream 0, seq, sent now) in its first 8 and no UDP checksum (0: none, as
 * IPv4 allows), as the root tests put them on a veth with AF_PACKET. Its
 * length. */
size_t xt_udp4_stamped(const struct xt_udp4_path *path, uint32_t seq, uint8_t *buf, size_t cap);

#endif
