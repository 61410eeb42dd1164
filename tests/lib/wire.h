/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Frames on the wire for the tests that judge what the XDP programs send
 * (tests/bpf/test_server_strict.c, test_frame_fuzz.c, tests/root/
 * test_server_loader.c): a builder of Ethernet (+ up to
 * three VLAN tags) / IPv4 (+ options, fragments) or IPv6 (+ extension
 * headers) / TCP (+ options) or UDP frames, and a parser that checks a
 * frame is well formed. Both written here from the RFCs (791, 8200, 9293,
 * 768, 1071) byte by byte, on purpose sharing no code with bpf/lib or
 * user/net: they are the independent implementation the programs' replies
 * and checksums are held against (the checksum: tests/lib/ref_sum.h, the
 * tests' one reference).
 *
 * Header-only (static functions): each test binary is one .c file.
 */
#ifndef XDPPERF_TESTS_WIRE_H
#define XDPPERF_TESTS_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tests/lib/ref_sum.h"

#define W_ETH_IP    0x0800
#define W_ETH_IPV6  0x86DD
#define W_ETH_8021Q 0x8100
#define W_ETH_8021AD 0x88A8
#define W_ETH_ARP   0x0806

#define W_FIN 0x01
#define W_SYN 0x02
#define W_RST 0x04
#define W_PSH 0x08
#define W_ACK 0x10

static inline uint16_t w_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t w_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void w_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void w_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* RFC 1071, the tests' one reference (tests/lib/ref_sum.h): the 16-bit
 * ones' complement sum of n bytes, big-endian words, an odd last byte padded
 * with a zero on the right, added to sum. */
static inline uint32_t w_sum(const uint8_t *p, size_t n, uint32_t sum) { return ref_sum_add(p, n, sum); }

/* Fold and complement: the value of a checksum field (host order). */
static inline uint16_t w_fold(uint32_t sum) { return (uint16_t)~ref_sum_add(NULL, 0, sum); }

/* The pseudo-header of RFC 9293 3.1 / RFC 768 (IPv4) and RFC 8200 8.1
 * (IPv6): addresses as bytes, protocol, L4 length. */
static inline uint32_t w_pseudo(int v6, const uint8_t *saddr, const uint8_t *daddr, uint8_t proto,
				uint32_t l4len)
{
	uint32_t sum = w_sum(saddr, v6 ? 16 : 4, 0);

	sum = w_sum(daddr, v6 ? 16 : 4, sum);
	return sum + proto + (l4len >> 16) + (l4len & 0xffff);
}

/* ---- builder ------------------------------------------------------- */

struct wf {
	uint8_t dmac[6], smac[6];
	int nvlan;                /* 0..3 tags, outer first */
	uint16_t tpid[3];         /* 0 = 802.1Q */
	uint16_t vid[3];
	int v6;
	uint8_t saddr[16], daddr[16];
	uint8_t ip_opt_len;       /* IPv4 options (NOPs), multiple of 4, <= 40 */
	uint16_t frag;            /* IPv4 flags | fragment offset; 0 = DF */
	uint8_t ext_len;          /* IPv6: a hop-by-hop header of this many bytes (8..) first */
	uint8_t l4;               /* IPPROTO_TCP / IPPROTO_UDP / other */
	uint16_t sport, dport;
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t window;
	const uint8_t *tcp_opt;   /* option bytes, tcp_opt_len of them (a multiple of 4) */
	uint8_t tcp_opt_len;
	size_t payload;           /* L4 payload bytes */
	uint8_t fill;             /* payload byte (fill + i) */
	size_t pad_to;            /* Ethernet padding (non-zero junk) up to this length */
	int bad_l4_csum;          /* flip the L4 checksum */
};

static inline void w_ip4(uint8_t a[16], uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	memset(a, 0, 16);
	a[0] = b0; a[1] = b1; a[2] = b2; a[3] = b3;
}

/* The frame described by s into buf (cap bytes); its length, or 0 if it
 * does not fit. */
static inline size_t w_build(const struct wf *s, uint8_t *buf, size_t cap)
{
	size_t off = 12, l3, l4, l4hdr, l4len, iph, end;
	int i;

	l4hdr = s->l4 == IPPROTO_TCP ? 20u + s->tcp_opt_len : s->l4 == IPPROTO_UDP ? 8u : 0u;
	l4len = l4hdr + s->payload;
	iph = s->v6 ? 40u + s->ext_len : 20u + s->ip_opt_len;
	end = 12 + 4u * (unsigned)s->nvlan + 2 + iph + l4len;
	if (end > cap || (s->pad_to > cap))
		return 0;
	memset(buf, 0, end > s->pad_to ? end : s->pad_to);
	memcpy(buf, s->dmac, 6);
	memcpy(buf + 6, s->smac, 6);
	for (i = 0; i < s->nvlan; i++, off += 4) {
		w_put16(buf + off, s->tpid[i] ? s->tpid[i] : W_ETH_8021Q);
		w_put16(buf + off + 2, s->vid[i]);
	}
	w_put16(buf + off, s->v6 ? W_ETH_IPV6 : W_ETH_IP);
	l3 = off + 2;
	if (s->v6) {
		uint8_t *p = buf + l3;

		p[0] = 0x60;
		w_put16(p + 4, (uint16_t)(s->ext_len + l4len));
		p[6] = s->ext_len ? 0 /* hop-by-hop */ : s->l4;
		p[7] = 64;
		memcpy(p + 8, s->saddr, 16);
		memcpy(p + 24, s->daddr, 16);
		if (s->ext_len) {
			p[40] = s->l4;
			p[41] = (uint8_t)(s->ext_len / 8 - 1);
			p[42] = 1; /* PadN */
			p[43] = (uint8_t)(s->ext_len - 4);
		}
	} else {
		uint8_t *p = buf + l3;

		p[0] = (uint8_t)(0x40 | (iph / 4));
		w_put16(p + 2, (uint16_t)(iph + l4len));
		w_put16(p + 4, 0x1234);
		w_put16(p + 6, s->frag ? s->frag : 0x4000);
		p[8] = 64;
		p[9] = s->l4;
		memcpy(p + 12, s->saddr, 4);
		memcpy(p + 16, s->daddr, 4);
		memset(p + 20, 1, s->ip_opt_len);
		w_put16(p + 10, w_fold(w_sum(p, iph, 0)));
	}
	l4 = l3 + iph;
	if (s->l4 == IPPROTO_TCP) {
		uint8_t *p = buf + l4;

		w_put16(p, s->sport);
		w_put16(p + 2, s->dport);
		w_put32(p + 4, s->seq);
		w_put32(p + 8, s->ack);
		p[12] = (uint8_t)((l4hdr / 4) << 4);
		p[13] = s->flags;
		w_put16(p + 14, s->window ? s->window : 64240);
		if (s->tcp_opt_len)
			memcpy(p + 20, s->tcp_opt, s->tcp_opt_len);
	} else if (s->l4 == IPPROTO_UDP) {
		w_put16(buf + l4, s->sport);
		w_put16(buf + l4 + 2, s->dport);
		w_put16(buf + l4 + 4, (uint16_t)l4len);
	}
	for (size_t k = 0; k < s->payload; k++)
		buf[l4 + l4hdr + k] = (uint8_t)(s->fill + k);
	if (s->l4 == IPPROTO_TCP || s->l4 == IPPROTO_UDP) {
		size_t co = l4 + (s->l4 == IPPROTO_TCP ? 16 : 6);
		uint16_t c = w_fold(w_sum(buf + l4, l4len,
					  w_pseudo(s->v6, buf + l3 + (s->v6 ? 8 : 12), buf + l3 + (s->v6 ? 24 : 16),
						   s->l4, (uint32_t)l4len)));
		if (s->l4 == IPPROTO_UDP && c == 0)
			c = 0xffff;
		if (s->bad_l4_csum)
			c ^= 0x0101;
		w_put16(buf + co, c);
	}
	for (size_t k = end; k < s->pad_to; k++)
		buf[k] = (uint8_t)(0xa5 ^ k); /* padding is anybody's bytes */
	return end > s->pad_to ? end : s->pad_to;
}

/* ---- parser -------------------------------------------------------- */

/* A frame as the parser sees it. ok: it is Ethernet, up to three VLAN tags,
 * IPv4 without fragmentation or IPv6 with TCP/UDP right after the fixed
 * header, lengths consistent with the frame (trailing bytes allowed: tail).
 * ip_csum_ok / l4_csum_ok: the checksums verify. */
struct wp {
	int ok;
	size_t len, l3, l4, hlen, l4len, tail;
	int nvlan;
	uint16_t tpid[3], tci[3];
	int v6;
	uint8_t ihl;
	uint16_t frag, ip_id;
	uint8_t ttl, proto;
	uint8_t tos;              /* IPv4 DSCP/ECN byte, IPv6 traffic class */
	uint32_t flow_label;      /* IPv6 */
	uint8_t saddr[16], daddr[16];
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window, urg;
	size_t payload;
	int ip_csum_ok, l4_csum_ok;
};

static inline struct wp w_parse(const uint8_t *f, size_t len)
{
	struct wp w = { .len = len };
	size_t off = 12;
	uint16_t et;

	if (len < 14)
		return w;
	et = w_get16(f + off);
	while ((et == W_ETH_8021Q || et == W_ETH_8021AD) && w.nvlan < 3) {
		if (len < off + 6)
			return w;
		w.tpid[w.nvlan] = et;
		w.tci[w.nvlan] = w_get16(f + off + 2);
		w.nvlan++;
		off += 4;
		et = w_get16(f + off);
	}
	w.l3 = off + 2;
	if (et == W_ETH_IP) {
		const uint8_t *p = f + w.l3;
		size_t tot;

		if (len < w.l3 + 20 || p[0] >> 4 != 4 || (p[0] & 15) < 5)
			return w;
		w.ihl = p[0] & 15;
		tot = w_get16(p + 2);
		if (tot < w.ihl * 4u || w.l3 + tot > len)
			return w;
		w.frag = w_get16(p + 6);
		w.ip_id = w_get16(p + 4);
		w.tos = p[1];
		w.ttl = p[8];
		w.proto = p[9];
		memcpy(w.saddr, p + 12, 4);
		memcpy(w.daddr, p + 16, 4);
		w.ip_csum_ok = w_fold(w_sum(p, w.ihl * 4u, 0)) == 0;
		w.l4 = w.l3 + w.ihl * 4u;
		w.l4len = tot - w.ihl * 4u;
		if (w.frag & 0x3fff)
			return w;
	} else if (et == W_ETH_IPV6) {
		const uint8_t *p = f + w.l3;

		if (len < w.l3 + 40 || p[0] >> 4 != 6)
			return w;
		w.v6 = 1;
		w.l4len = w_get16(p + 4);
		if (w.l3 + 40 + w.l4len > len)
			return w;
		w.proto = p[6];
		w.ttl = p[7];
		w.tos = (uint8_t)(w_get32(p) >> 20);
		w.flow_label = w_get32(p) & 0xfffff;
		memcpy(w.saddr, p + 8, 16);
		memcpy(w.daddr, p + 24, 16);
		w.ip_csum_ok = 1;
		w.l4 = w.l3 + 40;
	} else {
		return w;
	}
	w.tail = len - (w.l4 + w.l4len);
	if (w.proto == IPPROTO_TCP) {
		const uint8_t *p = f + w.l4;

		if (w.l4len < 20)
			return w;
		w.hlen = (p[12] >> 4) * 4u;
		if (w.hlen < 20 || w.hlen > w.l4len)
			return w;
		w.sport = w_get16(p);
		w.dport = w_get16(p + 2);
		w.seq = w_get32(p + 4);
		w.ack = w_get32(p + 8);
		w.flags = p[13];
		w.window = w_get16(p + 14);
		w.urg = w_get16(p + 18);
	} else if (w.proto == IPPROTO_UDP) {
		if (w.l4len < 8)
			return w;
		w.hlen = 8;
		w.sport = w_get16(f + w.l4);
		w.dport = w_get16(f + w.l4 + 2);
	} else {
		return w;
	}
	w.payload = w.l4len - w.hlen;
	w.l4_csum_ok = w_fold(w_sum(f + w.l4, w.l4len,
				    w_pseudo(w.v6, w.saddr, w.daddr, w.proto, (uint32_t)w.l4len))) == 0;
	w.ok = 1;
	return w;
}

static inline bool w_mac_multicast(const uint8_t *mac) { return mac[0] & 1; }

#endif /* XDPPERF_TESTS_WIRE_H */
