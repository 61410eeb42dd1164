/* Frame builder; see frame.h. Pure userspace code, no syscalls. */
#include "frame/frame.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "frame/csum.h"

#define ETH_HLEN_    14u
#define VLAN_HLEN_   4u
#define IPV4_HLEN_   20u
#define IPV6_HLEN_   40u
#define TCP_HLEN_    20u
#define UDP_HLEN_    8u
#define ETHERTYPE_IPV4_ 0x0800u
#define ETHERTYPE_IPV6_ 0x86ddu
#define ETHERTYPE_VLAN_ 0x8100u
#define TCP_CHECK_OFF 16u
#define UDP_CHECK_OFF 6u

/* Header bytes (Ethernet .. L4, options included) or 0 if unsupported. */
static size_t headers_len(const struct frame_spec *s)
{
	size_t n = ETH_HLEN_ + (s->vlan_id ? VLAN_HLEN_ : 0);

	if (s->src.family == AF_INET)
		n += IPV4_HLEN_;
	else if (s->src.family == AF_INET6)
		n += IPV6_HLEN_;
	else
		return 0;
	if (s->l4_proto == IPPROTO_TCP)
		n += TCP_HLEN_ + (s->tcp_syn_options ? FRAME_SYN_OPT_LEN : 0);
	else if (s->l4_proto == IPPROTO_UDP)
		n += UDP_HLEN_;
	else
		return 0;
	return n;
}

size_t frame_min_size(const struct frame_spec *s)
{
	size_t h = s ? headers_len(s) : 0;

	if (!h)
		return 0;
	return h + 4 > FRAME_MIN_SIZE ? h + 4 : FRAME_MIN_SIZE;
}

/* Formatted error messages live here so callers get a plain const char *
 * without owning a buffer; per-thread so engines can build concurrently. */
static __thread char err_buf[160];

static int fail(const char **err, const char *msg)
{
	if (err)
		*err = msg;
	return -1;
}

int frame_layout_of(const struct frame_spec *s, struct frame_layout *lay,
		    const char **err)
{
	size_t hdrs, min, len, payload;

	if (!s || !lay)
		return fail(err, "no frame spec");
	if (s->src.family != AF_INET && s->src.family != AF_INET6)
		return fail(err, "source address is not IPv4 or IPv6");
	if (s->dst.family != s->src.family)
		return fail(err, "source and destination address families differ");
	if (s->l4_proto != IPPROTO_TCP && s->l4_proto != IPPROTO_UDP)
		return fail(err, "L4 protocol must be TCP or UDP");
	if (s->tcp_syn_options && s->l4_proto != IPPROTO_TCP)
		return fail(err, "TCP SYN options requested on a UDP frame");
	if (s->vlan_id > 4094)
		return fail(err, "VLAN id must be 1..4094 (0 = untagged)");

	hdrs = headers_len(s);
	min = frame_min_size(s);
	if (s->no_payload) {
		payload = 0;
		len = hdrs < FRAME_ETH_MIN_LEN ? FRAME_ETH_MIN_LEN : hdrs;
	} else {
		if (s->frame_size < min) {
			snprintf(err_buf, sizeof(err_buf),
				 "frame size %zu is below the minimum %zu for these headers",
				 s->frame_size, min);
			return fail(err, err_buf);
		}
		len = s->frame_size - 4;
		payload = len - hdrs;
	}
	/* The IP length fields are 16 bits; layout fields are too. */
	if (len > 65535 - 4) {
		snprintf(err_buf, sizeof(err_buf),
			 "frame size %zu is too large for one IP packet", s->frame_size);
		return fail(err, err_buf);
	}

	lay->l3_off = (uint16_t)(ETH_HLEN_ + (s->vlan_id ? VLAN_HLEN_ : 0));
	lay->l4_off = (uint16_t)(lay->l3_off +
				 (s->src.family == AF_INET ? IPV4_HLEN_ : IPV6_HLEN_));
	lay->payload_off = (uint16_t)hdrs;
	lay->payload_len = (uint16_t)payload;
	lay->len = (uint16_t)len;
	lay->l4_proto = s->l4_proto;
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

static uint8_t *build_eth(const struct frame_spec *s, uint8_t *p)
{
	memcpy(p, s->dst_mac, 6);
	memcpy(p + 6, s->src_mac, 6);
	p += 12;
	if (s->vlan_id) {
		put16(p, ETHERTYPE_VLAN_);
		put16(p + 2, s->vlan_id); /* TCI: PCP 0, DEI 0, VID */
		p += 4;
	}
	put16(p, s->src.family == AF_INET ? ETHERTYPE_IPV4_ : ETHERTYPE_IPV6_);
	return p + 2;
}

static void build_ipv4(const struct frame_spec *s, uint8_t *ip, size_t l4_len)
{
	ip[0] = 0x45; /* version 4, IHL 5 words: no options */
	ip[1] = 0;    /* DSCP/ECN */
	put16(ip + 2, (uint16_t)(IPV4_HLEN_ + l4_len)); /* real length, not padding */
	put16(ip + 4, 0);      /* id 0: fine with DF, as Linux does (RFC 6864) */
	put16(ip + 6, 0x4000); /* DF, fragment offset 0 */
	ip[8] = s->ttl ? s->ttl : 64;
	ip[9] = s->l4_proto;
	put16(ip + 10, 0);
	memcpy(ip + 12, &s->src.v4, 4);
	memcpy(ip + 16, &s->dst.v4, 4);
	put_csum(ip + 10, csum_ipv4_hdr(ip, IPV4_HLEN_));
}

static void build_ipv6(const struct frame_spec *s, uint8_t *ip, size_t l4_len)
{
	put32(ip, 0x60000000u); /* version 6, traffic class 0, flow label 0 */
	put16(ip + 4, (uint16_t)l4_len);
	ip[6] = s->l4_proto;
	ip[7] = s->ttl ? s->ttl : 64;
	memcpy(ip + 8, &s->src.v6, 16);
	memcpy(ip + 24, &s->dst.v6, 16);
}

/* SYN options in the order Linux's tcp_options_write emits them when MSS,
 * SACK, timestamps and window scaling are all on, so middleboxes and the
 * peer see a familiar SYN. Returns the bytes written (FRAME_SYN_OPT_LEN). */
static size_t build_syn_options(const struct frame_spec *s, uint8_t *o)
{
	uint16_t mss = s->mss ? s->mss : (s->src.family == AF_INET ? 1460 : 1440);

	o[0] = 2; o[1] = 4; put16(o + 2, mss);      /* MSS */
	o[4] = 4; o[5] = 2;                          /* SACK permitted */
	o[6] = 8; o[7] = 10;                         /* timestamps */
	put32(o + 8, FRAME_SYN_TSVAL);
	put32(o + 12, 0);                            /* TSecr: 0 on a SYN */
	o[16] = 1;                                   /* NOP (alignment) */
	o[17] = 3; o[18] = 3; o[19] = FRAME_SYN_WSCALE; /* window scale */
	return FRAME_SYN_OPT_LEN;
}

static void build_tcp(const struct frame_spec *s, uint8_t *l4)
{
	size_t hlen = TCP_HLEN_;

	put16(l4, s->sport);
	put16(l4 + 2, s->dport);
	put32(l4 + 4, s->seq);
	put32(l4 + 8, s->ack);
	if (s->tcp_syn_options)
		hlen += build_syn_options(s, l4 + TCP_HLEN_);
	l4[12] = (uint8_t)((hlen / 4) << 4); /* data offset in 32-bit words */
	l4[13] = s->tcp_flags;
	put16(l4 + 14, s->window ? s->window : 65535);
	put16(l4 + 16, 0); /* checksum, filled by the caller */
	put16(l4 + 18, 0); /* urgent pointer */
}

static void build_udp(const struct frame_spec *s, uint8_t *l4, size_t l4_len)
{
	put16(l4, s->sport);
	put16(l4 + 2, s->dport);
	put16(l4 + 4, (uint16_t)l4_len);
	put16(l4 + 6, 0);
}

size_t frame_build(const struct frame_spec *s, uint8_t *buf, size_t buflen,
		   const char **err)
{
	struct frame_layout lay;
	uint8_t *l4;
	size_t l4_len;
	uint16_t check;

	if (frame_layout_of(s, &lay, err))
		return 0;
	if (!buf) {
		fail(err, "no buffer");
		return 0;
	}
	if (lay.len > buflen) {
		snprintf(err_buf, sizeof(err_buf),
			 "frame needs %u bytes but the buffer holds %zu", lay.len, buflen);
		fail(err, err_buf);
		return 0;
	}

	/* Zero first: Ethernet padding must be zeros and a reused buffer may
	 * hold an older, longer frame. */
	memset(buf, 0, lay.len);
	build_eth(s, buf);
	l4 = buf + lay.l4_off;
	l4_len = (size_t)(lay.payload_off - lay.l4_off) + lay.payload_len;

	/* L4 first: the IPv4 header checksum does not cover it, but the L4
	 * checksum needs the final header and payload bytes. */
	if (s->l4_proto == IPPROTO_TCP)
		build_tcp(s, l4);
	else
		build_udp(s, l4, l4_len);
	memset(buf + lay.payload_off, s->payload_fill, lay.payload_len);

	if (s->src.family == AF_INET) {
		build_ipv4(s, buf + lay.l3_off, l4_len);
		check = csum_l4_v4(&s->src.v4, &s->dst.v4, s->l4_proto, l4, l4_len);
	} else {
		build_ipv6(s, buf + lay.l3_off, l4_len);
		check = csum_l4_v6(&s->src.v6, &s->dst.v6, s->l4_proto, l4, l4_len);
	}
	put_csum(l4 + (s->l4_proto == IPPROTO_TCP ? TCP_CHECK_OFF : UDP_CHECK_OFF), check);
	return lay.len;
}

void frame_set_ports(uint8_t *frame, const struct frame_layout *lay,
		     uint16_t sport, uint16_t dport)
{
	uint8_t *l4 = frame + lay->l4_off;
	uint16_t old_s, old_d, new_s = htons(sport), new_d = htons(dport), check;
	size_t coff;
	uint32_t sum;

	if (lay->l4_proto == IPPROTO_TCP)
		coff = TCP_CHECK_OFF;
	else if (lay->l4_proto == IPPROTO_UDP)
		coff = UDP_CHECK_OFF;
	else
		return;

	memcpy(&old_s, l4, 2);
	memcpy(&old_d, l4 + 2, 2);
	memcpy(l4, &new_s, 2);
	memcpy(l4 + 2, &new_d, 2);
	memcpy(&check, l4 + coff, 2);

	/* UDP checksum 0 means "none" (IPv4 only, but we never build one):
	 * nothing to keep consistent. */
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		return;
	/* RFC 1624 eqn 3 for both words in one sum; same as two
	 * csum_replace16 calls, one fold. */
	sum = (uint16_t)~check;
	sum += (uint16_t)~old_s;
	sum += new_s;
	sum += (uint16_t)~old_d;
	sum += new_d;
	check = csum_fold(sum);
	/* A full recomputation gives UDP 0xffff where the sum is zero. */
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		check = 0xffff;
	memcpy(l4 + coff, &check, 2);
}

/* ~old + new over n 16-bit words, in the memory-order convention of csum.h:
 * the RFC 1624 (eqn 3) difference term for replacing old by new, which a
 * caller adds to ~HC and folds. At most 16 words, so no carry is lost. */
static uint32_t csum_diff_words(const uint8_t *old, const uint8_t *new, size_t nwords)
{
	uint32_t d = 0;

	for (size_t i = 0; i < nwords; i++) {
		uint16_t o, n;

		memcpy(&o, old + 2 * i, 2);
		memcpy(&n, new + 2 * i, 2);
		d += (uint16_t)~o;
		d += n;
	}
	return d;
}

/* Apply a difference term to the frame's L4 checksum, keeping UDP's rules
 * (0 = no checksum: leave it; a computed 0 is sent as ffff), as
 * frame_set_ports does. */
static void l4_check_apply(uint8_t *frame, const struct frame_layout *lay, uint32_t d)
{
	uint8_t *l4 = frame + lay->l4_off;
	size_t coff = lay->l4_proto == IPPROTO_TCP ? TCP_CHECK_OFF : UDP_CHECK_OFF;
	uint16_t check;

	memcpy(&check, l4 + coff, 2);
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		return;
	check = csum_fold((uint16_t)~check + d);
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		check = 0xffff;
	memcpy(l4 + coff, &check, 2);
}

int frame_set_saddr(uint8_t *frame, const struct frame_layout *lay,
		    const struct xp_addr *a)
{
	uint8_t *ip = frame + lay->l3_off;
	const uint8_t *na;
	uint8_t *sa;
	size_t alen;
	uint32_t d;

	if (lay->l4_proto != IPPROTO_TCP && lay->l4_proto != IPPROTO_UDP)
		return -1;
	if ((ip[0] >> 4) == 4 && a->family == AF_INET) {
		sa = ip + 12;
		na = (const uint8_t *)&a->v4;
		alen = 4;
	} else if ((ip[0] >> 4) == 6 && a->family == AF_INET6) {
		sa = ip + 8;
		na = (const uint8_t *)&a->v6;
		alen = 16;
	} else {
		return -1;
	}
	/* The same difference goes into both checksums: the address is summed
	 * as-is by the IPv4 header checksum and by the pseudo-header. */
	d = csum_diff_words(sa, na, alen / 2);
	if (alen == 4) {
		uint16_t check;

		memcpy(&check, ip + 10, 2);
		check = csum_fold((uint16_t)~check + d);
		memcpy(ip + 10, &check, 2);
	}
	l4_check_apply(frame, lay, d);
	memcpy(sa, na, alen);
	return 0;
}

void frame_set_seq(uint8_t *frame, const struct frame_layout *lay, uint32_t seq)
{
	uint8_t *p = frame + lay->l4_off + 4;
	uint8_t n[4];

	if (lay->l4_proto != IPPROTO_TCP)
		return;
	put32(n, seq);
	l4_check_apply(frame, lay, csum_diff_words(p, n, 2));
	memcpy(p, n, 4);
}
