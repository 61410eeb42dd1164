/*
 * A flow's headers as one value (issue 26): everything frame_build writes
 * in front of the payload, for one frame of one flow. The fields follow the
 * Open Traffic Generator's packet headers (open-traffic-generator/models
 * v1.61.0, flow/packet-headers/NAME.yaml); docs/flows.md maps them name by
 * name. A flow's field patterns (frame/pattern.h, frame/flow_pat.h) give
 * one of these per frame number; frame_build_hdr turns it into bytes.
 *
 *   Ethernet   dst, src                        (ethernet.dst / .src)
 *   VLAN tags  0..2, vlan[0] outermost: TPID, PCP, DEI, VID
 *                                              (vlan.tpid / .priority / .cfi / .id)
 *   IPv4       DSCP, ECN, TTL, src, dst        (ipv4.priority.dscp.phb / .ecn,
 *                                               .time_to_live, .src, .dst)
 *   IPv6       traffic class (DSCP << 2 | ECN), flow label, hop limit,
 *              src, dst                        (ipv6.traffic_class, .flow_label,
 *                                               .hop_limit, .src, .dst)
 *   TCP        ports, seq, ack, flags, window, SYN options
 *   UDP        ports
 *
 * What frame_build_hdr always writes, as frame_build did: IPv4 without
 * options, DF set, ID 0; lengths and checksums computed, never taken.
 */
#ifndef XP_FRAME_FLOW_HDR_H
#define XP_FRAME_FLOW_HDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/addr.h"

#define XP_FLOW_MAX_VLANS 2
#define XP_TPID_8021Q  0x8100u /* customer tag (C-tag) */
#define XP_TPID_8021AD 0x88a8u /* service tag (S-tag), the outer tag of QinQ */

/* Field limits (IEEE 802.1Q, RFC 2474, RFC 3168, RFC 8200). */
#define XP_VID_MAX        4094u  /* 0 = priority tag only, 4095 reserved */
#define XP_PCP_MAX        7u
#define XP_DSCP_MAX       63u
#define XP_ECN_MAX        3u
#define XP_FLOW_LABEL_MAX 0xfffffu

struct xp_vlan_tag {
	uint16_t tpid; /* XP_TPID_8021Q or XP_TPID_8021AD */
	uint8_t pcp;   /* priority code point 0..7 */
	uint8_t dei;   /* drop eligible (OTG's cfi) 0..1 */
	uint16_t vid;  /* 0..4094 */
};

struct xp_flow_hdr {
	uint8_t dst_mac[6], src_mac[6];
	uint8_t nvlan;                           /* 0..XP_FLOW_MAX_VLANS */
	struct xp_vlan_tag vlan[XP_FLOW_MAX_VLANS]; /* [0] outermost */
	struct xp_addr src, dst;                 /* same family */
	uint8_t dscp;                            /* 0..63 */
	uint8_t ecn;                             /* 0..3 */
	uint8_t ttl;                             /* TTL / hop limit; 0 -> 64 */
	uint32_t flow_label;                     /* IPv6 only; 0..0xfffff */
	uint8_t l4_proto;                        /* IPPROTO_TCP or IPPROTO_UDP */
	uint16_t sport, dport;                   /* host order */
	/* TCP only */
	uint8_t tcp_flags;                       /* e.g. TH_ACK|TH_PUSH, TH_SYN */
	uint32_t seq, ack;
	uint16_t window;                         /* 0 -> 65535 */
	bool tcp_syn_options;                    /* MSS, SACK-perm, TS, WS (frame.h) */
	uint16_t mss;                            /* 0 -> 1460 / 1440 */
};

/*
 * Where things are in a built frame, for per-packet patching (frame.h's
 * frame_set_*). l3_off is 14 + 4 per VLAN tag.
 */
struct frame_layout {
	uint16_t l3_off;      /* IP header: 14, 18 or 22 */
	uint16_t l4_off;      /* TCP/UDP header */
	uint16_t payload_off; /* first payload byte */
	uint16_t payload_len; /* payload bytes (excludes Ethernet padding) */
	uint16_t len;         /* bytes the builder writes (no FCS) */
	uint8_t l4_proto;     /* IPPROTO_TCP or IPPROTO_UDP */
};

/* Bytes of all headers (Ethernet .. L4 with options), or 0 if the family or
 * protocol is not one we build. */
size_t xp_flow_hdr_len(const struct xp_flow_hdr *h);

/*
 * Check every field against its range and the others (families, protocol,
 * TPIDs, SYN options only on TCP). 0, or -1 with *err (if not NULL) a
 * one-line reason naming the field ("VLAN tag 1: VID 4095 is reserved
 * (0..4094)"). Static or per-thread message, valid until the next call.
 */
int xp_flow_hdr_check(const struct xp_flow_hdr *h, const char **err);

/*
 * Layout of a frame of h: frame_size is the on-the-wire size including the
 * 4-byte FCS; with no_payload the frame is exactly the headers, zero-padded
 * to 60 bytes (frame.h). 0, or -1 with *err set.
 */
int frame_layout_hdr(const struct xp_flow_hdr *h, size_t frame_size, bool no_payload,
		     struct frame_layout *lay, const char **err);

/*
 * Build a frame of h into buf: headers, payload bytes of value fill,
 * checksums. Returns the bytes written (frame_size - 4, or the padded
 * header length with no_payload), or 0 with *err set. The same bytes
 * frame_build gives for the frame_spec with those fields.
 */
size_t frame_build_hdr(const struct xp_flow_hdr *h, size_t frame_size, bool no_payload, uint8_t fill,
		       uint8_t *buf, size_t buflen, const char **err);

#endif /* XP_FRAME_FLOW_HDR_H */
