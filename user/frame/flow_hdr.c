/* The frame builder's core: a struct xp_flow_hdr into bytes; see flow_hdr.h.
 * frame.c's frame_build is this with a frame_spec's fields. Pure userspace
 * code, no syscalls. */
#include "frame/flow_hdr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "frame/csum.h"
#include "frame/frame.h"

#define ETH_HLEN_    14u
#define VLAN_HLEN_   4u
#define IPV4_HLEN_   20u
#define IPV6_HLEN_   40u
#define TCP_HLEN_    20u
#define UDP_HLEN_    8u
#define ETHERTYPE_IPV4_ 0x0800u
#define ETHERTYPE_IPV6_ 0x86ddu
#define TCP_CHECK_OFF 16u
#define UDP_CHECK_OFF 6u

size_t xp_flow_hdr_len(const struct xp_flow_hdr *h)
{
	size_t n = ETH_HLEN_ + (size_t)h->nvlan * VLAN_HLEN_;

	if (h->src.family == AF_INET)
		n += IPV4_HLEN_;
	else if (h->src.family == AF_INET6)
		n += IPV6_HLEN_;
	else
		return 0;
	if (h->l4_proto == IPPROTO_TCP)
		n += TCP_HLEN_ + (h->tcp_syn_options ? FRAME_SYN_OPT_LEN : 0);
	else if (h->l4_proto == IPPROTO_UDP)
		n += UDP_HLEN_;
	else
		return 0;
	return n;
}

/* Formatted messages live here so callers get a plain const char * without
 * owning a buffer; per-thread so engines can build concurrently. */
static __thread char err_buf[160];

static int fail(const char **err, const char *msg)
{
	if (err)
		*err = msg;
	return -1;
}

static int failf(const char **err, const char *fmt, unsigned a, unsigned b)
{
	snprintf(err_buf, sizeof(err_buf), fmt, a, b);
	return fail(err, err_buf);
}

int xp_flow_hdr_check(const struct xp_flow_hdr *h, const char **err)
{
	if (!h)
		return fail(err, "no flow headers");
	if (h->src.family != AF_INET && h->src.family != AF_INET6)
		return fail(err, "source address is not IPv4 or IPv6");
	if (h->dst.family != h->src.family)
		return fail(err, "source and destination address families differ");
	if (h->l4_proto != IPPROTO_TCP && h->l4_proto != IPPROTO_UDP)
		return fail(err, "L4 protocol must be TCP or UDP");
	if (h->tcp_syn_options && h->l4_proto != IPPROTO_TCP)
		return fail(err, "TCP SYN options requested on a UDP frame");
	if (h->nvlan > XP_FLOW_MAX_VLANS)
		return failf(err, "%u VLAN tags: at most %u", h->nvlan, XP_FLOW_MAX_VLANS);
	for (unsigned i = 0; i < h->nvlan; i++) {
		const struct xp_vlan_tag *t = &h->vlan[i];

		if (t->tpid != XP_TPID_8021Q && t->tpid != XP_TPID_8021AD)
			return failf(err, "VLAN tag %u: TPID 0x%04x is neither 0x8100 (802.1Q) nor 0x88a8 (802.1ad)",
				     i + 1, t->tpid);
		if (t->vid > XP_VID_MAX)
			return failf(err, "VLAN tag %u: VID %u is reserved or out of range (0..4094)", i + 1, t->vid);
		if (t->pcp > XP_PCP_MAX)
			return failf(err, "VLAN tag %u: PCP %u is out of range (0..7)", i + 1, t->pcp);
		if (t->dei > 1)
			return failf(err, "VLAN tag %u: DEI %u is out of range (0..1)", i + 1, t->dei);
	}
	if (h->dscp > XP_DSCP_MAX)
		return failf(err, "DSCP %u is out of range (0..%u)", h->dscp, XP_DSCP_MAX);
	if (h->ecn > XP_ECN_MAX)
		return failf(err, "ECN %u is out of range (0..%u)", h->ecn, XP_ECN_MAX);
	if (h->flow_label > XP_FLOW_LABEL_MAX)
		return failf(err, "flow label %u is out of range (0..%u)", h->flow_label, XP_FLOW_LABEL_MAX);
	if (h->flow_label && h->src.family != AF_INET6)
		return fail(err, "a flow label needs IPv6");
	return 0;
}

int frame_layout_hdr(const struct xp_flow_hdr *h, size_t frame_size, bool no_payload,
		     struct frame_layout *lay, const char **err)
{
	size_t hdrs, min, len, payload;

	if (!lay)
		return fail(err, "no frame layout");
	if (xp_flow_hdr_check(h, err))
		return -1;
	hdrs = xp_flow_hdr_len(h);
	min = hdrs + 4 > FRAME_MIN_SIZE ? hdrs + 4 : FRAME_MIN_SIZE;
	if (no_payload) {
		payload = 0;
		len = hdrs < FRAME_ETH_MIN_LEN ? FRAME_ETH_MIN_LEN : hdrs;
	} else {
		if (frame_size < min) {
			snprintf(err_buf, sizeof(err_buf),
				 "frame size %zu is below the minimum %zu for these headers", frame_size, min);
			return fail(err, err_buf);
		}
		len = frame_size - 4;
		payload = len - hdrs;
	}
	/* The IP length fields are 16 bits; layout fields are too. */
	if (len > 65535 - 4) {
		snprintf(err_buf, sizeof(err_buf), "frame size %zu is too large for one IP packet", frame_size);
		return fail(err, err_buf);
	}
	lay->l3_off = (uint16_t)(ETH_HLEN_ + h->nvlan * VLAN_HLEN_);
	lay->l4_off = (uint16_t)(lay->l3_off + (h->src.family == AF_INET ? IPV4_HLEN_ : IPV6_HLEN_));
	lay->payload_off = (uint16_t)hdrs;
	lay->payload_len = (uint16_t)payload;
	lay->len = (uint16_t)len;
	lay->l4_proto = h->l4_proto;
	return 0;
}

/* Big-endian stores; frames have no alignment guarantees. */
static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* Store a checksum value that is already in frame (memory) order. */
static void put_csum(uint8_t *p, uint16_t c)
{
	memcpy(p, &c, 2);
}

static void build_eth(const struct xp_flow_hdr *h, uint8_t *p)
{
	memcpy(p, h->dst_mac, 6);
	memcpy(p + 6, h->src_mac, 6);
	p += 12;
	/* Outermost tag first (IEEE 802.1Q 9.5: TCI = PCP(3) DEI(1) VID(12)). */
	for (unsigned i = 0; i < h->nvlan; i++, p += VLAN_HLEN_) {
		const struct xp_vlan_tag *t = &h->vlan[i];

		put16(p, t->tpid);
		put16(p + 2, (uint16_t)(t->pcp << 13 | (t->dei & 1) << 12 | t->vid));
	}
	put16(p, h->src.family == AF_INET ? ETHERTYPE_IPV4_ : ETHERTYPE_IPV6_);
}

static void build_ipv4(const struct xp_flow_hdr *h, uint8_t *ip, size_t l4_len)
{
	ip[0] = 0x45; /* version 4, IHL 5 words: no options */
	ip[1] = (uint8_t)(h->dscp << 2 | h->ecn); /* RFC 2474 / RFC 3168 */
	put16(ip + 2, (uint16_t)(IPV4_HLEN_ + l4_len)); /* real length, not padding */
	put16(ip + 4, 0);      /* id 0: fine with DF, as Linux does (RFC 6864) */
	put16(ip + 6, 0x4000); /* DF, fragment offset 0 */
	ip[8] = h->ttl ? h->ttl : 64;
	ip[9] = h->l4_proto;
	put16(ip + 10, 0);
	memcpy(ip + 12, &h->src.v4, 4);
	memcpy(ip + 16, &h->dst.v4, 4);
	put_csum(ip + 10, csum_ipv4_hdr(ip, IPV4_HLEN_));
}

static void build_ipv6(const struct xp_flow_hdr *h, uint8_t *ip, size_t l4_len)
{
	/* version 6, traffic class (DSCP, ECN), flow label (RFC 8200 3) */
	put32(ip, 6u << 28 | (uint32_t)(h->dscp << 2 | h->ecn) << 20 | (h->flow_label & XP_FLOW_LABEL_MAX));
	put16(ip + 4, (uint16_t)l4_len);
	ip[6] = h->l4_proto;
	ip[7] = h->ttl ? h->ttl : 64;
	memcpy(ip + 8, &h->src.v6, 16);
	memcpy(ip + 24, &h->dst.v6, 16);
}

/* SYN options in the order Linux's tcp_options_write emits them when MSS,
 * SACK, timestamps and window scaling are all on, so middleboxes and the
 * peer see a familiar SYN. Returns the bytes written (FRAME_SYN_OPT_LEN). */
static size_t build_syn_options(const struct xp_flow_hdr *h, uint8_t *o)
{
	uint16_t mss = h->mss ? h->mss : (h->src.family == AF_INET ? 1460 : 1440);

	o[0] = 2; o[1] = 4; put16(o + 2, mss);      /* MSS */
	o[4] = 4; o[5] = 2;                          /* SACK permitted */
	o[6] = 8; o[7] = 10;                         /* timestamps */
	put32(o + 8, FRAME_SYN_TSVAL);
	put32(o + 12, 0);                            /* TSecr: 0 on a SYN */
	o[16] = 1;                                   /* NOP (alignment) */
	o[17] = 3; o[18] = 3; o[19] = FRAME_SYN_WSCALE; /* window scale */
	return FRAME_SYN_OPT_LEN;
}

static void build_tcp(const struct xp_flow_hdr *h, uint8_t *l4)
{
	size_t hlen = TCP_HLEN_;

	put16(l4, h->sport);
	put16(l4 + 2, h->dport);
	put32(l4 + 4, h->seq);
	put32(l4 + 8, h->ack);
	if (h->tcp_syn_options)
		hlen += build_syn_options(h, l4 + TCP_HLEN_);
	l4[12] = (uint8_t)((hlen / 4) << 4); /* data offset in 32-bit words */
	l4[13] = h->tcp_flags;
	put16(l4 + 14, h->window ? h->window : 65535);
	put16(l4 + 16, 0); /* checksum, filled by the caller */
	put16(l4 + 18, 0); /* urgent pointer */
}

static void build_udp(const struct xp_flow_hdr *h, uint8_t *l4, size_t l4_len)
{
	put16(l4, h->sport);
	put16(l4 + 2, h->dport);
	put16(l4 + 4, (uint16_t)l4_len);
	put16(l4 + 6, 0);
}

size_t frame_build_hdr(const struct xp_flow_hdr *h, size_t frame_size, bool no_payload, uint8_t fill,
		       uint8_t *buf, size_t buflen, const char **err)
{
	struct frame_layout lay;
	uint8_t *l4;
	size_t l4_len;
	uint16_t check;

	if (frame_layout_hdr(h, frame_size, no_payload, &lay, err))
		return 0;
	if (!buf) {
		fail(err, "no buffer");
		return 0;
	}
	if (lay.len > buflen) {
		snprintf(err_buf, sizeof(err_buf), "frame needs %u bytes but the buffer holds %zu", lay.len, buflen);
		fail(err, err_buf);
		return 0;
	}

	/* Zero first: Ethernet padding must be zeros and a reused buffer may
	 * hold an older, longer frame. */
	memset(buf, 0, lay.len);
	build_eth(h, buf);
	l4 = buf + lay.l4_off;
	l4_len = (size_t)(lay.payload_off - lay.l4_off) + lay.payload_len;

	/* L4 first: the IPv4 header checksum does not cover it, but the L4
	 * checksum needs the final header and payload bytes. */
	if (h->l4_proto == IPPROTO_TCP)
		build_tcp(h, l4);
	else
		build_udp(h, l4, l4_len);
	memset(buf + lay.payload_off, fill, lay.payload_len);

	if (h->src.family == AF_INET) {
		build_ipv4(h, buf + lay.l3_off, l4_len);
		check = csum_l4_v4(&h->src.v4, &h->dst.v4, h->l4_proto, l4, l4_len);
	} else {
		build_ipv6(h, buf + lay.l3_off, l4_len);
		check = csum_l4_v6(&h->src.v6, &h->dst.v6, h->l4_proto, l4, l4_len);
	}
	put_csum(l4 + (h->l4_proto == IPPROTO_TCP ? TCP_CHECK_OFF : UDP_CHECK_OFF), check);
	return lay.len;
}
