/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Random and mutated frames for tests/bpf/test_frame_fuzz.c: frames of
 * every shape the XDP programs meet (VLAN and QinQ up to three tags, IPv4
 * with options and fragments, IPv6 with extension headers, TCP with
 * options, UDP, other protocols, ARP), from and to the test's addresses and
 * every kind of address a hostile peer would use, then mutated (bit flips,
 * bytes overwritten, length fields forged, truncated, extended with junk).
 * Built with tests/bpf/wire.h, so a frame is well formed before mutation.
 *
 * A small, seeded PRNG (xorshift64*, Vigna 2016), so a failing run is
 * repeated exactly with its seed (XP_FUZZ_SEED).
 */
#ifndef XDPPERF_TESTS_FUZZ_FRAMES_H
#define XDPPERF_TESTS_FUZZ_FRAMES_H

#include "tests/lib/wire.h"

static uint64_t fz_state = 0x9e3779b97f4a7c15ULL;

static inline uint64_t fz_next(void)
{
	fz_state ^= fz_state >> 12;
	fz_state ^= fz_state << 25;
	fz_state ^= fz_state >> 27;
	return fz_state * 0x2545f4914f6cdd1dULL;
}

/* Uniform in [0, n). */
static inline uint32_t fz_below(uint32_t n) { return n ? (uint32_t)(fz_next() % n) : 0; }
/* True with probability p percent. */
static inline int fz_pct(unsigned p) { return fz_below(100) < p; }

/* What a frame may be made of: the test's side and the rest of the world. */
struct fz_world {
	const uint8_t *our_mac, *peer_mac;
	const char *const *our4, *const *our6;      /* the receiving side's addresses */
	const char *const *peer4, *const *peer6;    /* the test's other end */
	unsigned n_our4, n_our6, n_peer4, n_peer6;
	uint16_t dport_lo, dport_hi;                /* where test frames go */
	uint16_t sport_lo, sport_hi;                /* where they come from */
	uint16_t ctrl_port;
};

/* Addresses nobody should answer, and strangers. */
static const char *const fz_bad4[] = { "255.255.255.255", "224.0.0.1", "0.0.0.0", "127.0.0.1", "240.1.2.3",
				       "198.18.250.255", "198.18.250.77", "8.8.8.8" };
static const char *const fz_bad6[] = { "ff02::1", "::", "::1", "::ffff:198.18.250.1", "2001:2:0:250::77",
				       "fe80::1" };

static inline void fz_pick_addr(int v6, const char *const *good, unsigned ngood, uint8_t out[16])
{
	const char *s;

	if (ngood && fz_pct(75))
		s = good[fz_below(ngood)];
	else
		s = v6 ? fz_bad6[fz_below(sizeof(fz_bad6) / sizeof(fz_bad6[0]))]
		       : fz_bad4[fz_below(sizeof(fz_bad4) / sizeof(fz_bad4[0]))];
	memset(out, 0, 16);
	inet_pton(v6 ? AF_INET6 : AF_INET, s, out);
	if (fz_pct(3))
		for (int i = 0; i < (v6 ? 16 : 4); i++)
			out[i] = (uint8_t)fz_next();
}

static inline void fz_pick_mac(const uint8_t *good, uint8_t out[6])
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t mcast[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
	static const uint8_t other[6] = { 0x02, 0x77, 0x77, 0x77, 0x77, 0x77 };
	unsigned r = fz_below(100);

	memcpy(out, r < 80 ? good : r < 87 ? bcast : r < 92 ? mcast : other, 6);
	if (r >= 97)
		for (int i = 0; i < 6; i++)
			out[i] = (uint8_t)fz_next();
}

/* TCP options: what Linux sends, parts of it, and junk. */
static inline uint8_t fz_tcp_opts(uint8_t *o)
{
	static const uint8_t linux_syn[20] = { 2, 4, 5, 0xb4, 4, 2, 8, 10, 1, 2, 3, 4, 0, 0, 0, 0, 1, 3, 3, 7 };
	static const uint8_t ts[12] = { 1, 1, 8, 10, 0, 0, 1, 0, 0, 0, 2, 0 };
	static const uint8_t mss[4] = { 2, 4, 5, 0xb4 };
	uint8_t n;

	switch (fz_below(6)) {
	case 0: return 0;
	case 1: memcpy(o, linux_syn, 20); return 20;
	case 2: memcpy(o, ts, 12); return 12;
	case 3: memcpy(o, mss, 4); return 4;
	case 4: /* malformed lengths: 0, 1, longer than the options */
		o[0] = (uint8_t)(2 + fz_below(8));
		o[1] = (uint8_t)(fz_pct(50) ? fz_below(2) : 40 + fz_below(200));
		o[2] = (uint8_t)fz_next();
		o[3] = (uint8_t)fz_next();
		return 4;
	default:
		n = (uint8_t)(4 * (1 + fz_below(10)));
		for (uint8_t i = 0; i < n; i++)
			o[i] = (uint8_t)fz_next();
		return n;
	}
}

static const uint8_t fz_flag_set[] = { W_SYN, W_SYN, W_ACK, W_ACK | W_FIN, W_ACK | W_PSH | W_FIN, W_RST,
				       W_RST | W_ACK, W_SYN | W_ACK, W_FIN, 0, W_ACK | W_PSH, W_SYN | W_FIN };

/*
 * A random frame in buf (cap bytes), mostly aimed at the test (to its
 * ports, from its addresses), well formed before mutate(). Returns its
 * length (at least 14, an Ethernet header).
 */
static inline size_t fz_frame(const struct fz_world *wd, uint8_t *buf, size_t cap, uint8_t *optbuf)
{
	struct wf f = { 0 };
	size_t len;
	unsigned kind = fz_below(100);

	fz_pick_mac(wd->our_mac, f.dmac);
	fz_pick_mac(wd->peer_mac, f.smac);
	f.nvlan = fz_pct(70) ? 0 : (int)(1 + fz_below(3));
	for (int i = 0; i < f.nvlan; i++) {
		f.tpid[i] = fz_pct(50) ? W_ETH_8021Q : fz_pct(90) ? W_ETH_8021AD : (uint16_t)fz_next();
		f.vid[i] = (uint16_t)fz_below(4096);
	}
	f.v6 = fz_pct(45);
	fz_pick_addr(f.v6, f.v6 ? wd->peer6 : wd->peer4, f.v6 ? wd->n_peer6 : wd->n_peer4, f.saddr);
	fz_pick_addr(f.v6, f.v6 ? wd->our6 : wd->our4, f.v6 ? wd->n_our6 : wd->n_our4, f.daddr);
	if (!f.v6) {
		if (fz_pct(10))
			f.ip_opt_len = (uint8_t)(4 * (1 + fz_below(10)));
		if (fz_pct(10)) {
			static const uint16_t frags[] = { 0x2000, 0x2000 | 185, 185, 0x4000 | 1, 0x0000 };
			f.frag = frags[fz_below(5)];
			if (!f.frag)
				f.frag = 0x8000; /* the reserved bit alone: not a fragment */
		}
	} else if (fz_pct(10)) {
		f.ext_len = (uint8_t)(8 * (1 + fz_below(3)));
	}
	f.l4 = kind < 70 ? IPPROTO_TCP : kind < 92 ? IPPROTO_UDP : kind < 96 ? IPPROTO_ICMP : (uint8_t)fz_next();
	f.dport = fz_pct(85) ? (uint16_t)(wd->dport_lo + fz_below(wd->dport_hi - wd->dport_lo + 1u))
			     : (uint16_t)fz_next();
	f.sport = fz_pct(85) ? (uint16_t)(wd->sport_lo + fz_below(wd->sport_hi - wd->sport_lo + 1u))
			     : (uint16_t)fz_next();
	if (fz_pct(3))
		f.sport = wd->ctrl_port;
	if (fz_pct(3))
		f.dport = wd->ctrl_port;
	f.flags = fz_pct(90) ? fz_flag_set[fz_below(sizeof(fz_flag_set))] : (uint8_t)fz_next();
	f.seq = (uint32_t)fz_next();
	f.ack = (uint32_t)fz_next();
	f.window = (uint16_t)fz_next();
	f.tcp_opt = optbuf;
	f.tcp_opt_len = f.l4 == IPPROTO_TCP ? fz_tcp_opts(optbuf) : 0;
	f.payload = fz_pct(50) ? 0 : fz_pct(80) ? fz_below(64) : fz_below(1600);
	f.fill = (uint8_t)fz_next();
	f.pad_to = fz_pct(30) ? 60 + fz_below(8) : 0;
	f.bad_l4_csum = fz_pct(8);
	if (kind >= 98) { /* ARP or any EtherType: nothing of ours */
		len = 60;
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)fz_next();
		memcpy(buf, f.dmac, 6);
		w_put16(buf + 12, kind == 98 ? W_ETH_ARP : (uint16_t)fz_next());
		return len;
	}
	len = w_build(&f, buf, cap);
	return len >= 14 ? len : 60;
}

/* Mutate the frame in place (it may grow up to cap); its new length. */
static inline size_t fz_mutate(uint8_t *buf, size_t len, size_t cap)
{
	unsigned n = 1 + fz_below(4);

	for (unsigned k = 0; k < n; k++) {
		switch (fz_below(7)) {
		case 0: /* flip a bit, most often in the headers */
			buf[fz_below((uint32_t)(len < 96 || fz_pct(70) ? (len < 96 ? len : 96) : len))] ^=
				(uint8_t)(1u << fz_below(8));
			break;
		case 1: /* a random byte */
			buf[fz_below((uint32_t)len)] = (uint8_t)fz_next();
			break;
		case 2: /* truncate, not below an Ethernet header: BPF_PROG_RUN
			 * refuses shorter frames (and XDP never sees them) */
			if (len > 14)
				len = 14 + fz_below((uint32_t)(len - 14));
			break;
		case 3: /* extend with junk */
		{
			size_t add = 1 + fz_below(64);
			if (len + add > cap)
				add = cap - len;
			for (size_t i = 0; i < add; i++)
				buf[len + i] = (uint8_t)fz_next();
			len += add;
			break;
		}
		case 4: /* a 16-bit field at a header offset: lengths, ports, types */
		{
			static const uint16_t at[] = { 12, 16, 18, 20, 22, 24, 30, 34, 36, 38, 42, 44, 46, 54, 58 };
			size_t o = at[fz_below(sizeof(at) / sizeof(at[0]))];
			if (o + 2 <= len)
				w_put16(buf + o, fz_pct(50) ? (uint16_t)fz_next() : (uint16_t)fz_below(80));
			break;
		}
		case 5: /* IHL / data offset nibbles */
		{
			size_t o = fz_pct(50) ? 14 + 4 * fz_below(3) : 14 + 20 + 12 + 4 * fz_below(3);
			if (o < len)
				buf[o] = (uint8_t)((buf[o] & 0xf0) | fz_below(16));
			break;
		}
		default: /* nothing: keep some frames as built */
			break;
		}
	}
	return len;
}

#endif /* XDPPERF_TESTS_FUZZ_FRAMES_H */
