/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the XDP connection engine's tests share (test_handshake.c,
 * test_handshake_data.c, test_handshake_paths.c): the frames a client sends,
 * their parser, the SipHash cookie reference, the loaded server and client
 * programs of one case (struct env, its setups and teardown), BPF_PROG_RUN
 * and the counters. Each binary runs its cases on programs loaded for it.
 * Needs root.
 */
#ifndef XDPPERF_TESTS_HANDSHAKE_FIXTURE_H
#define XDPPERF_TESTS_HANDSHAKE_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>
#include <linux/if_ether.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/xdp_connect.h"
#include "frame/csum.h"
#include "frame/frame.h"
#include "bpf/server.skel.h"
#include "bpf/xdp_connect.skel.h"

#define CTRL_PORT   5301
#define PORT_LO     63000
#define PORT_HI     63015
#define CPORT_LO    10000
#define CPORT_HI    59999
#define SLOT        2
#define CLIENT_ISN  0x12345678u

#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

/* Must match bpf/lib/syncookie.h and bpf/server.bpf.c. */
#define STEP_SHIFT  26
#define SRV_TS_SHIFT 20

static const uint64_t KEY[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
static const uint8_t CLIENT_MAC[6] = { 0x02, 0xc1, 0, 0, 0, 0x01 };
static const uint8_t SERVER_MAC[6] = { 0x02, 0x5e, 0, 0, 0, 0x02 };

static int ncpus;

/* ---------------------------------------------------------------------- */
/* SipHash-2-4 reference and the cookie design of bpf/lib/syncookie.h      */
/* ---------------------------------------------------------------------- */

#include "tests/bpf/ref_cookie.h"

static inline uint32_t ref_cookie(const struct flow *f, uint32_t cseq, uint32_t t, uint32_t mss_idx)
{
	return ref_cookie_key(KEY, f, cseq, t, mss_idx);
}

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The server reads the coarse clock (bpf_ktime_get_coarse_ns, the last
 * tick's CLOCK_MONOTONIC): CLOCK_MONOTONIC_COARSE is the same value, so a
 * step taken here before a run is never later than the program's. */
static inline uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint32_t now_step(void)
{
	return (uint32_t)(coarse_ns() >> STEP_SHIFT);
}

/* ---------------------------------------------------------------------- */
/* Frames                                                                 */
/* ---------------------------------------------------------------------- */

struct peer {
	const char *caddr, *saddr; /* client, server */
	uint16_t vlan;
};

static const struct peer P4 = { "198.18.210.1", "198.18.210.2", 0 };
static const struct peer P6 = { "2001:2:0:210::1", "2001:2:0:210::2", 0 };
static const struct peer P4V = { "198.18.210.1", "198.18.210.2", 100 };
static const struct peer P6V = { "2001:2:0:210::1", "2001:2:0:210::2", 3000 };

/* A client -> server segment built by user/frame/frame.c. */
static inline size_t client_frame(const struct peer *p, uint16_t sport, uint16_t dport,
			   uint8_t flags, uint32_t seq, uint32_t ack,
			   int syn_opts, size_t payload, uint8_t *buf, size_t cap)
{
	struct frame_spec s = { 0 };
	const char *err = NULL;
	size_t len;

	memcpy(s.src_mac, CLIENT_MAC, 6);
	memcpy(s.dst_mac, SERVER_MAC, 6);
	s.vlan_id = p->vlan;
	assert_int_equal(xp_addr_parse(p->caddr, &s.src), 0);
	assert_int_equal(xp_addr_parse(p->saddr, &s.dst), 0);
	s.l4_proto = IPPROTO_TCP;
	s.sport = sport;
	s.dport = dport;
	s.tcp_flags = flags;
	s.seq = seq;
	s.ack = ack;
	s.tcp_syn_options = syn_opts;
	if (payload) {
		struct frame_layout lay;

		s.frame_size = 1518; /* any valid size, for the header length */
		assert_int_equal(frame_layout_of(&s, &lay, &err), 0);
		s.frame_size = lay.payload_off + payload + 4;
		s.payload_fill = 0xab;
	} else {
		s.no_payload = true;
	}
	len = frame_build(&s, buf, cap, &err);
	if (!len)
		fail_msg("frame_build: %s", err);
	return len;
}

static inline struct flow flow_of(const struct peer *p, uint16_t sport, uint16_t dport)
{
	struct flow f = { 0 };
	struct xp_addr c, s;

	assert_int_equal(xp_addr_parse(p->caddr, &c), 0);
	assert_int_equal(xp_addr_parse(p->saddr, &s), 0);
	f.v6 = c.family == AF_INET6;
	if (f.v6) {
		memcpy(f.saddr, &c.v6, 16);
		memcpy(f.daddr, &s.v6, 16);
	} else {
		memcpy(f.saddr, &c.v4, 4);
		memcpy(f.daddr, &s.v4, 4);
	}
	f.sport = htons(sport);
	f.dport = htons(dport);
	return f;
}

/* A parsed frame out of a program, with everything the tests check. */
struct seg {
	size_t len;
	uint8_t dmac[6], smac[6];
	int vlan;
	uint16_t vid;
	int v6;
	uint8_t saddr[16], daddr[16];
	uint8_t ttl, tos;
	uint16_t ip_id, frag;
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t window, urg;
	uint8_t opt[40];
	unsigned optlen;
	unsigned payload;
	int has_mss, has_ws, has_sack, has_ts;
	uint16_t mss;
	uint8_t ws;
	uint32_t tsval, tsecr;
};

static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Parse and validate: lengths consistent with the frame (no padding, no
 * trailing bytes), IP and TCP checksums correct. */
static inline struct seg parse(const uint8_t *f, size_t len)
{
	struct seg s = { .len = len };
	size_t off = 12, l4, hlen, l4len;
	uint16_t et;
	uint32_t sum;

	assert_true(len >= 14);
	memcpy(s.dmac, f, 6);
	memcpy(s.smac, f + 6, 6);
	et = get16(f + off);
	if (et == ETH_P_8021Q) {
		s.vlan = 1;
		s.vid = get16(f + off + 2) & 0xfff;
		off += 4;
		et = get16(f + off);
	}
	off += 2;
	if (et == ETH_P_IPV6) {
		const uint8_t *ip = f + off;

		s.v6 = 1;
		assert_true(len >= off + 40);
		assert_int_equal(ip[0] >> 4, 6);
		assert_int_equal(ip[6], IPPROTO_TCP);
		s.ttl = ip[7];
		memcpy(s.saddr, ip + 8, 16);
		memcpy(s.daddr, ip + 24, 16);
		l4 = off + 40;
		l4len = get16(ip + 4);
		assert_int_equal(l4 + l4len, len);
		sum = csum_pseudo_v6((const struct in6_addr *)(ip + 8),
				     (const struct in6_addr *)(ip + 24), IPPROTO_TCP,
				     (uint32_t)l4len, 0);
	} else {
		const uint8_t *ip = f + off;

		assert_int_equal(et, ETH_P_IP);
		assert_true(len >= off + 20);
		assert_int_equal(ip[0], 0x45);
		assert_int_equal(ip[9], IPPROTO_TCP);
		assert_int_equal(csum_ipv4_hdr(ip, 20), 0); /* IP checksum valid */
		s.tos = ip[1];
		s.ip_id = get16(ip + 4);
		s.frag = get16(ip + 6);
		s.ttl = ip[8];
		memcpy(s.saddr, ip + 12, 4);
		memcpy(s.daddr, ip + 16, 4);
		l4 = off + 20;
		l4len = get16(ip + 2) - 20u;
		assert_int_equal(l4 + l4len, len);
		sum = csum_pseudo_v4((const struct in_addr *)(ip + 12),
				     (const struct in_addr *)(ip + 16), IPPROTO_TCP,
				     (uint32_t)l4len, 0);
	}
	/* TCP checksum valid: the segment with its checksum folds to 0. */
	assert_int_equal(csum_fold(csum_partial(f + l4, l4len, sum)), 0);

	s.sport = get16(f + l4);
	s.dport = get16(f + l4 + 2);
	s.seq = get32(f + l4 + 4);
	s.ack = get32(f + l4 + 8);
	hlen = (f[l4 + 12] >> 4) * 4u;
	assert_true(hlen >= 20 && hlen <= l4len);
	s.flags = f[l4 + 13];
	s.window = get16(f + l4 + 14);
	s.urg = get16(f + l4 + 18);
	s.optlen = (unsigned)(hlen - 20);
	memcpy(s.opt, f + l4 + 20, s.optlen);
	s.payload = (unsigned)(l4len - hlen);
	for (unsigned i = 0; i < s.optlen;) {
		uint8_t k = s.opt[i];

		if (k == 0)
			break;
		if (k == 1) {
			i++;
			continue;
		}
		assert_true(i + 1 < s.optlen && s.opt[i + 1] >= 2 && i + s.opt[i + 1] <= s.optlen);
		if (k == 2) { s.has_mss = 1; s.mss = get16(s.opt + i + 2); }
		if (k == 3) { s.has_ws = 1; s.ws = s.opt[i + 2]; }
		if (k == 4) s.has_sack = 1;
		if (k == 8) { s.has_ts = 1; s.tsval = get32(s.opt + i + 2); s.tsecr = get32(s.opt + i + 6); }
		i += s.opt[i + 1];
	}
	return s;
}

/* The reply to a frame: L2 and L3 addresses swapped, VLAN kept, TTL 64;
 * any payload is the caller's to check. */
static inline void expect_addressed_back(const struct seg *in, const struct seg *out)
{
	assert_memory_equal(out->dmac, in->smac, 6);
	assert_memory_equal(out->smac, in->dmac, 6);
	assert_int_equal(out->vlan, in->vlan);
	assert_int_equal(out->vid, in->vid);
	assert_int_equal(out->v6, in->v6);
	assert_memory_equal(out->saddr, in->daddr, in->v6 ? 16 : 4);
	assert_memory_equal(out->daddr, in->saddr, in->v6 ? 16 : 4);
	assert_int_equal(out->sport, in->dport);
	assert_int_equal(out->dport, in->sport);
	assert_int_equal(out->ttl, 64);
	assert_int_equal(out->urg, 0);
	if (!out->v6) {
		assert_int_equal(out->frag, 0x4000); /* DF */
		assert_int_equal(out->ip_id, 0);
	}
}

/* The same, for a headers-only reply. */
static inline void expect_reply_of(const struct seg *in, const struct seg *out)
{
	expect_addressed_back(in, out);
	assert_int_equal(out->payload, 0);
}

/* ---------------------------------------------------------------------- */
/* Programs                                                               */
/* ---------------------------------------------------------------------- */

struct env {
	struct server_bpf *srv;
	struct xdp_connect_bpf *cli;
};

static int reply_redirect; /* load the next programs with the redirect knob */
static uint32_t data_len;  /* config.data_len of the next client program */

#define DATA_LEN 1000 /* what the e2e test sends */

static inline struct server_bpf *load_server(void)
{
	struct server_bpf *s = server_bpf__open();

	if (!s)
		return NULL;
	s->rodata->config.reply_redirect = (uint8_t)reply_redirect;
	s->rodata->config.ctrl_port = CTRL_PORT;
	s->rodata->config.cookie_key[0] = KEY[0];
	s->rodata->config.cookie_key[1] = KEY[1];
	if (server_bpf__load(s)) {
		server_bpf__destroy(s);
		return NULL;
	}
	return s;
}

static inline struct xdp_connect_bpf *load_client(uint32_t mode, uint8_t family)
{
	struct xdp_connect_bpf *c = xdp_connect_bpf__open();

	if (!c)
		return NULL;
	c->rodata->config.family = family;
	c->rodata->config.cport_lo = CPORT_LO;
	c->rodata->config.cport_hi = CPORT_HI;
	c->rodata->config.dport_lo = PORT_LO;
	c->rodata->config.dport_hi = PORT_HI;
	c->rodata->config.mode = mode;
	c->rodata->config.ctrl_port = CTRL_PORT;
	c->rodata->config.reply_redirect = (uint8_t)reply_redirect;
	c->rodata->config.data_len = data_len;
	if (xdp_connect_bpf__load(c)) {
		xdp_connect_bpf__destroy(c);
		return NULL;
	}
	return c;
}

/* An address of the test's peers as the server's map keys hold it. */
static inline void key_of(const char *a, uint32_t *family, uint32_t addr[4])
{
	struct xp_addr x;

	assert_int_equal(xp_addr_parse(a, &x), 0);
	memset(addr, 0, 16);
	*family = x.family == AF_INET6 ? XP_FAMILY_V6 : XP_FAMILY_V4;
	memcpy(addr, x.family == AF_INET6 ? (void *)&x.v6 : (void *)&x.v4,
	       x.family == AF_INET6 ? 16 : 4);
}

/* The slot as the loader binds it: to the interface BPF_PROG_RUN runs on
 * (this namespace's loopback) with SERVER_MAC, the client's IPv4 address as
 * its peer and the IPv6 one as a further (--bind) address; the server
 * addresses are the interface's own (local_addr). */
static inline void bind_slot(struct server_bpf *s, struct xp_slot_cfg *cfg)
{
	struct xp_peer_key pk = { .slot = SLOT };
	struct xp_local_key lk = { .ifindex = if_nametoindex("lo") };
	uint32_t one = 1, local = XP_LOCAL_UNICAST;

	assert_int_not_equal(lk.ifindex, 0);
	cfg->ifindex = lk.ifindex;
	memcpy(cfg->mac, SERVER_MAC, 6);
	key_of(P4.caddr, &cfg->peer_family, cfg->peer);
	key_of(P6.caddr, &pk.family, pk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.slot_peers), &pk, &one, BPF_ANY), 0);
	cfg->npeers = 1;
	key_of(P4.saddr, &lk.family, lk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.local_addr), &lk, &local, BPF_ANY), 0);
	key_of(P6.saddr, &lk.family, lk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.local_addr), &lk, &local, BPF_ANY), 0);
}

static inline void set_slot(struct server_bpf *s, uint32_t flags, uint32_t close_mode)
{
	struct xp_slot_cfg cfg = { .flags = flags, .protos = XP_PROTO_TCP,
				   .close_mode = close_mode };
	uint32_t key = SLOT, val = SLOT + 1;

	bind_slot(s, &cfg);

	for (uint32_t p = PORT_LO; p <= PORT_HI; p++)
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.port_slot),
						     &p, &val, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.slot_cfg), &key,
					     &cfg, BPF_ANY), 0);
}

static inline int setup_mode(void **state, uint32_t mode, uint32_t close_mode, uint8_t family)
{
	struct env *e = calloc(1, sizeof(*e));

	if (!e)
		return -1;
	e->srv = load_server();
	e->cli = load_client(mode, family);
	if (!e->srv || !e->cli) {
		fprintf(stderr, "test_connection: skeleton load failed: %s\n", strerror(errno));
		return -1;
	}
	set_slot(e->srv, XP_SLOT_ACTIVE | XP_SLOT_RESPOND, close_mode);
	*state = e;
	return 0;
}

static inline int setup_rst(void **state) { return setup_mode(state, XP_CC_MODE_RST, XP_CLOSE_RST, 0); }
static inline int setup_fin(void **state) { return setup_mode(state, XP_CC_MODE_FIN, XP_CLOSE_RST, 0); }
static inline int setup_none(void **state) { return setup_mode(state, XP_CC_MODE_KEEPALIVE, XP_CLOSE_NONE, 0); }
static inline int setup_v4only(void **state) { return setup_mode(state, XP_CC_MODE_RST, XP_CLOSE_RST, 4); }
static inline int setup_data_len(void **state, uint32_t len)
{
	int r;

	data_len = len;
	r = setup_mode(state, XP_CC_MODE_DATA, XP_CLOSE_NONE, 0);
	data_len = 0;
	return r;
}
static inline int setup_data(void **state) { return setup_data_len(state, DATA_LEN); }
static inline int setup_data_max(void **state) { return setup_data_len(state, XP_CC_DATA_MAX); }
static inline int setup_data_rst(void **state)
{
	int r;

	data_len = 1;
	r = setup_mode(state, XP_CC_MODE_DATA, XP_CLOSE_RST, 0);
	data_len = 0;
	return r;
}
static inline int setup_redirect(void **state)
{
	int r;

	reply_redirect = 1;
	r = setup_mode(state, XP_CC_MODE_FIN, XP_CLOSE_RST, 0);
	reply_redirect = 0;
	return r;
}

static inline int teardown(void **state)
{
	struct env *e = *state;

	if (e) {
		server_bpf__destroy(e->srv);
		xdp_connect_bpf__destroy(e->cli);
		free(e);
	}
	return 0;
}

/* Run one frame; out and outlen get the frame as the program left it. */
static inline uint32_t run(int prog_fd, const uint8_t *in, size_t len, uint8_t *out,
		    size_t *outlen)
{
	static uint8_t scratch[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = in,
		.data_size_in = (__u32)len,
		.data_out = out ? out : scratch,
		.data_size_out = 4096,
		.repeat = 1,
	);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		fail_msg("BPF_PROG_RUN failed: %s (len %zu)", strerror(errno), len);
	if (outlen)
		*outlen = o.data_size_out;
	return o.retval;
}

static inline uint32_t run_srv(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->srv->progs.xdp_server), in, len, out, olen);
}

static inline uint32_t run_cli(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->cli->progs.xdp_connect), in, len, out, olen);
}

/* The client's TC fallback (an skb program: same frames in and out). */
static inline uint32_t run_tc(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->cli->progs.tc_connect), in, len, out, olen);
}

#define TC_ACT_OK_       0
#define TC_ACT_REDIRECT_ 7

/* Summed counters. */
static inline struct xp_counters srv_counters(struct env *e)
{
	struct xp_counters *v = calloc(ncpus, sizeof(*v)), sum = { 0 };
	uint32_t key = SLOT;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->srv->maps.counters), &key, v), 0);
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < sizeof(sum) / 8; f++)
			((__u64 *)&sum)[f] += ((__u64 *)&v[c])[f];
	free(v);
	return sum;
}

static inline struct xp_cc_counters cli_counters(struct env *e)
{
	struct xp_cc_counters *v = calloc(ncpus, sizeof(*v)), sum = { 0 };
	uint32_t key = 0;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->cli->maps.cc_counters), &key, v), 0);
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < sizeof(sum) / 8; f++)
			((__u64 *)&sum)[f] += ((__u64 *)&v[c])[f];
	free(v);
	return sum;
}

#define SRV_FIELDS(X) X(pkts) X(bytes) X(tcp_syn) X(tcp_synack) X(tcp_fin) X(tcp_rst) \
	X(tcp_ack_only) X(data_pkts) X(data_bytes) X(udp_pkts) X(ipv4_pkts) X(ipv6_pkts) \
	X(conn_established) X(cookie_invalid) X(synack_sent) X(fin_answered) X(rst_sent) \
	X(noreply_addr) X(noreply_shape) X(noreply_csum) X(noreply_room) X(noreply_other) \
	X(keepalives) X(keepalive_unchecked)
#define CLI_FIELDS(X) X(synack_seen) X(acks_sent) X(fins_sent) X(rst_seen) \
	X(finack_answered) X(passed) X(data_sent) X(data_bytes) X(data_tc) X(unanswered)

/* Every named field must match (ignoring bytes, checked where it matters);
 * both name lists must cover their structs. */
static inline void expect_srv(struct env *e, struct xp_counters want)
{
	struct xp_counters got = srv_counters(e);
	int bad = 0, n = 0;

#define X(f) n++; if (strcmp(#f, "bytes") && got.f != want.f) { \
		print_error("server %s: got %llu, want %llu\n", #f, \
			    (unsigned long long)got.f, (unsigned long long)want.f); bad = 1; }
	SRV_FIELDS(X)
#undef X
	assert_int_equal(n, sizeof(struct xp_counters) / 8);
	if (bad)
		fail_msg("server counters differ");
}

static inline void expect_cli(struct env *e, struct xp_cc_counters want)
{
	struct xp_cc_counters got = cli_counters(e);
	int bad = 0, n = 0;

#define X(f) n++; if (got.f != want.f) { \
		print_error("client %s: got %llu, want %llu\n", #f, \
			    (unsigned long long)got.f, (unsigned long long)want.f); bad = 1; }
	CLI_FIELDS(X)
#undef X
	assert_int_equal(n, sizeof(struct xp_cc_counters) / 8);
	if (bad)
		fail_msg("client counters differ");
}

/* ---------------------------------------------------------------------- */
/* Steps of a connection                                                  */
/* ---------------------------------------------------------------------- */

struct conn {
	const struct peer *p;
	uint16_t sport, dport;
	uint8_t syn[256], synack[256], ack[256], last[256];
	size_t syn_len, synack_len, ack_len, last_len;
	uint32_t cookie;
	int via_tc; /* data mode: the SYN-ACK goes to the TC fallback */
};

/* SYN -> server: checks the SYN-ACK completely; returns the cookie. */
static inline void do_syn(struct env *e, struct conn *c)
{
	struct seg in, out;
	uint64_t t0, t1;
	struct flow f = flow_of(c->p, c->sport, c->dport);
	uint32_t mss_idx;
	int found = 0;

	c->syn_len = client_frame(c->p, c->sport, c->dport, F_SYN, CLIENT_ISN, 0, 1, 0,
				  c->syn, sizeof(c->syn));
	in = parse(c->syn, c->syn_len);
	/* The server's TSval and cookie step come from the coarse clock. It
	 * lags the fine one by more than a tick here (measured in a VM: up to
	 * 9.4 ms, 2.3 ticks of 4 ms, over one tick in a third of the reads), so
	 * the window opens at the coarse clock itself, read before the run:
	 * the program's reading can be no earlier. */
	t0 = coarse_ns();
	assert_int_equal(run_srv(e, c->syn, c->syn_len, c->synack, &c->synack_len), XDP_TX);
	t1 = mono_ns();
	out = parse(c->synack, c->synack_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_SYN | F_ACK);
	assert_int_equal(out.ack, CLIENT_ISN + 1);
	assert_int_equal(out.window, 65535);
	/* Same option bytes, in Linux's order: MSS, SACK-perm+TS, NOP+WS. */
	assert_int_equal(out.optlen, 20);
	assert_int_equal(c->synack_len, c->syn_len);
	assert_true(out.has_mss && out.has_sack && out.has_ts && out.has_ws);
	assert_int_equal(out.mss, strchr(c->p->saddr, ':') ? 1440 : 1460);
	assert_memory_equal(out.opt, "\x02\x04", 2);
	assert_memory_equal(out.opt + 4, "\x04\x02\x08\x0a", 4);
	assert_memory_equal(out.opt + 16, "\x01\x03\x03\x07", 4);
	assert_int_equal(out.ws, 7);
	assert_int_equal(out.tsecr, FRAME_SYN_TSVAL);
	assert_in_range(out.tsval, (uint32_t)(t0 >> SRV_TS_SHIFT), (uint32_t)(t1 >> SRV_TS_SHIFT));

	/* The cookie is exactly the documented design, for the step of the
	 * run, with the MSS index of the client's MSS (1460 -> 3 in the IPv4
	 * table, 1440 -> 2 in the IPv6 one). */
	mss_idx = f.v6 ? 2 : 3;
	assert_int_equal(out.seq & 3, mss_idx);
	for (uint32_t t = (uint32_t)(t0 >> STEP_SHIFT); t <= (uint32_t)(t1 >> STEP_SHIFT); t++)
		if (ref_cookie(&f, CLIENT_ISN, t, mss_idx) == out.seq)
			found = 1;
	if (!found)
		fail_msg("SYN-ACK seq %#x is not the reference cookie", out.seq);
	c->cookie = out.seq;
}

/* SYN-ACK -> client: checks the handshake ACK (ACK|FIN in FIN mode). */
static inline void do_client_ack(struct env *e, struct conn *c, int fin)
{
	struct seg in = parse(c->synack, c->synack_len), out;

	assert_int_equal(run_cli(e, c->synack, c->synack_len, c->ack, &c->ack_len), XDP_TX);
	out = parse(c->ack, c->ack_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, fin ? (F_ACK | F_FIN) : F_ACK);
	assert_int_equal(out.seq, CLIENT_ISN + 1);
	assert_int_equal(out.ack, c->cookie + 1);
	assert_int_equal(out.window, 502);
	/* NOP NOP TS: our TSval goes on from what the server echoed, TSecr
	 * echoes the server's. */
	assert_int_equal(out.optlen, 12);
	assert_memory_equal(out.opt, "\x01\x01\x08\x0a", 4);
	assert_int_equal(out.tsval, in.tsecr);
	assert_int_equal(out.tsecr, in.tsval);
	assert_int_equal(c->ack_len, (in.v6 ? 54u : 34u) + (in.vlan ? 4 : 0) + 32);
}


/* main()'s start and run: root, the CPU count the per-CPU counters need. */
static inline int handshake_main(const char *prog, const char *group, const struct CMUnitTest *tests, size_t n)
{
	if (geteuid() != 0) {
		fprintf(stderr, "%s: must run as root (loads BPF programs "
			"and uses BPF_PROG_RUN); not running as root\n", prog);
		return 1;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "%s: libbpf_num_possible_cpus: %d\n", prog, ncpus);
		return 1;
	}
	return _cmocka_run_group_tests(group, tests, n, NULL, NULL);
}

#endif
