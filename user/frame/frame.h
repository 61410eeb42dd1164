/*
 * Frame builder shared by every frame engine (live, xsk) and the tests:
 * one complete Ethernet [802.1Q] IPv4/IPv6 TCP/UDP frame with correct
 * checksums, built once per flow, then patched per packet (ports) with
 * incremental checksum updates. The bytes are frame/flow_hdr.c's
 * (frame_build_hdr), which also writes a flow's wider headers: two VLAN
 * tags, DSCP, ECN, flow label; frame_spec is today's engines' view of it.
 *
 * Sizes: frame_spec.frame_size is the on-the-wire Ethernet frame size
 * INCLUDING the 4-byte FCS ("64-byte frames"), which is what benchmarks
 * quote. frame_build writes frame_size - 4 bytes because the NIC appends the
 * FCS. The payload fills whatever the headers leave.
 */
#ifndef XP_FRAME_H
#define XP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame/flow_hdr.h"
#include "util/addr.h"

/* Ethernet limits, L2 without FCS. */
#define FRAME_ETH_MIN_LEN 60u /* shorter frames are padded with zeros */
#define FRAME_MIN_SIZE    64u /* minimum frame_size (incl. FCS) */

/* What a SYN with tcp_syn_options carries besides the MSS. A real stack puts
 * a clock in TSval; receivers only echo it, so a constant does the job. The
 * window scale is Linux's usual value for default buffers. */
#define FRAME_SYN_TSVAL   1u
#define FRAME_SYN_WSCALE  7u
/* Length of those options: MSS(4) SACK-perm+TS(12) NOP+WS(4). */
#define FRAME_SYN_OPT_LEN 20u

struct frame_spec {
	uint8_t src_mac[6], dst_mac[6];
	uint16_t vlan_id;        /* 0 = untagged, else 1..4094 (802.1Q, PCP 0) */
	struct xp_addr src, dst; /* same family */
	uint8_t l4_proto;        /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t sport, dport;   /* host order */
	uint8_t tcp_flags;       /* e.g. TH_ACK|TH_PUSH for data, TH_SYN */
	uint32_t seq, ack;       /* host order */
	uint16_t window;         /* host order; 0 -> 65535 */
	uint8_t ttl;             /* 0 -> 64 (IPv4 TTL / IPv6 hop limit) */
	bool tcp_syn_options;    /* MSS, SACK-permitted, timestamps, window
				  * scale, in Linux's order (TCP only) */
	uint16_t mss;            /* for the option; 0 -> 1460 (v4) / 1440 (v6) */
	size_t frame_size;       /* on-the-wire size INCLUDING the 4-byte FCS */
	uint8_t payload_fill;    /* byte value the payload is filled with */
	/*
	 * Extension: headers only, no payload (pure SYN, ACK, RST, or an empty
	 * UDP datagram). frame_size is then ignored: the frame is exactly the
	 * headers, zero-padded to the 60-byte Ethernet minimum when shorter,
	 * with the IP length fields giving the real (unpadded) length.
	 */
	bool no_payload;
};

/*
 * Smallest valid frame_size (incl. FCS) for this spec: max(64, headers + 4).
 * e.g. IPv4/TCP 64, IPv6/TCP 78, IPv6/UDP 66; +4 with a VLAN tag, +20 with
 * SYN options. With no_payload it is the size frame_build will produce + 4.
 * Returns 0 if family or protocol is unsupported.
 */
size_t frame_min_size(const struct frame_spec *s);

/* The flow headers (frame/flow_hdr.h) of a frame_spec: its one VLAN tag an
 * 802.1Q tag with PCP 0, DSCP, ECN and flow label 0. frame_build(s) is
 * frame_build_hdr of these. */
void frame_spec_hdr(const struct frame_spec *s, struct xp_flow_hdr *h);

/*
 * Validate the spec and compute its layout without building anything.
 * Returns 0, or -1 with *err (if err is non-NULL) set to a one-line reason.
 * Messages are static or per-thread; valid until the next call on the thread.
 */
int frame_layout_of(const struct frame_spec *s, struct frame_layout *lay,
		    const char **err);

/*
 * Build into buf: writes frame_size - 4 bytes (no FCS; the NIC adds it), or
 * the padded header length with no_payload. Returns the number of bytes
 * written, or 0 with *err set to a one-line reason if the spec is invalid
 * (size too small or too large for buflen, family mismatch, ...).
 * IPv4: DF set, IP id 0. IPv6: traffic class and flow label 0.
 */
size_t frame_build(const struct frame_spec *s, uint8_t *buf, size_t buflen,
		   const char **err);

/*
 * Rewrite the ports (host order) of a frame built by frame_build, fixing the
 * L4 checksum incrementally (RFC 1624) instead of re-summing the payload.
 * The result is byte-for-byte what frame_build gives with those ports.
 */
void frame_set_ports(uint8_t *frame, const struct frame_layout *lay,
		     uint16_t sport, uint16_t dport);

/*
 * Rewrite the source address of a frame built by frame_build (a must have the
 * frame's family), fixing incrementally (RFC 1624) the IPv4 header checksum
 * and the part of the TCP/UDP checksum that covers the pseudo-header. The
 * result is byte-for-byte what frame_build gives with that source address.
 * Returns 0, or -1 (frame untouched) if a is not of the frame's family.
 */
int frame_set_saddr(uint8_t *frame, const struct frame_layout *lay,
		    const struct xp_addr *a);

/*
 * Rewrite the TCP sequence number (host order) of a frame built by
 * frame_build, fixing the TCP checksum incrementally. No-op for UDP.
 * The result is byte-for-byte what frame_build gives with that seq.
 */
void frame_set_seq(uint8_t *frame, const struct frame_layout *lay, uint32_t seq);

#endif /* XP_FRAME_H */
