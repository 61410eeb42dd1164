// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for the XDP connection engine: the XP_SLOT_RESPOND path of
 * bpf/server.bpf.c (server) and bpf/client.bpf.c (client). Frames go
 * through the loaded programs with BPF_PROG_RUN; what one program sends
 * (XDP_TX, the rewritten frame in data_out) is fed to the other, so a whole
 * handshake and close run without any traffic:
 *
 *   client SYN (user/net/frame.c) -> server: SYN-ACK with a SYN cookie
 *                             -> client: ACK (or ACK|FIN, or ACK|PSH|FIN
 *                                with data)
 *                             -> server: established; RST (or FIN-ACK)
 *                             -> client: RST dropped (or final ACK) ...
 *
 * Every frame out is parsed and checked field by field, with both checksums
 * verified by user/net/csum.c. The cookie is recomputed here from the design in
 * bpf/lib/syncookie.h (SipHash-2-4 reference below, checked against the
 * reference vector of the SipHash paper) with the key the test loads, which
 * also lets the tests forge cookies from other time steps. Needs root.
 */
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
#include "bpf/client.h"
#include "net/csum.h"
#include "net/frame.h"
#include "bpf/server.skel.h"
#include "bpf/client.skel.h"

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

#include "tests/lib/ref_cookie.h"

static uint32_t ref_cookie(const struct flow *f, uint32_t cseq, uint32_t t, uint32_t mss_idx)
{
	return ref_cookie_key(KEY, f, cseq, t, mss_idx);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The server reads the coarse clock (bpf_ktime_get_coarse_ns, the last
 * tick's CLOCK_MONOTONIC): CLOCK_MONOTONIC_COARSE is the same value, so a
 * step taken here before a run is never later than the program's. */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint32_t now_step(void)
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

/* A client -> server segment built by user/net/frame.c. */
static size_t client_frame(const struct peer *p, uint16_t sport, uint16_t dport,
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

static struct flow flow_of(const struct peer *p, uint16_t sport, uint16_t dport)
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

static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Parse and validate: lengths consistent with the frame (no padding, no
 * trailing bytes), IP and TCP checksums correct. */
static struct seg parse(const uint8_t *f, size_t len)
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
static void expect_addressed_back(const struct seg *in, const struct seg *out)
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
static void expect_reply_of(const struct seg *in, const struct seg *out)
{
	expect_addressed_back(in, out);
	assert_int_equal(out->payload, 0);
}

/* ---------------------------------------------------------------------- */
/* Programs                                                               */
/* ---------------------------------------------------------------------- */

struct env {
	struct server_bpf *srv;
	struct client_bpf *cli;
};

static int reply_redirect; /* load the next programs with the redirect knob */
static uint32_t data_len;  /* config.data_len of the next client program */

#define DATA_LEN 1000 /* what the e2e test sends */

static struct server_bpf *load_server(void)
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

static struct client_bpf *load_client(uint32_t mode, uint8_t family)
{
	struct client_bpf *c = client_bpf__open();

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
	if (client_bpf__load(c)) {
		client_bpf__destroy(c);
		return NULL;
	}
	return c;
}

/* An address of the test's peers as the server's map keys hold it. */
static void key_of(const char *a, uint32_t *family, uint32_t addr[4])
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
static void bind_slot(struct server_bpf *s, struct xp_slot_cfg *cfg)
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

static void set_slot(struct server_bpf *s, uint32_t flags, uint32_t close_mode)
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

static int setup_mode(void **state, uint32_t mode, uint32_t close_mode, uint8_t family)
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

static int setup_rst(void **state) { return setup_mode(state, XP_CC_MODE_RST, XP_CLOSE_RST, 0); }
static int setup_fin(void **state) { return setup_mode(state, XP_CC_MODE_FIN, XP_CLOSE_RST, 0); }
static int setup_none(void **state) { return setup_mode(state, XP_CC_MODE_KEEPALIVE, XP_CLOSE_NONE, 0); }
static int setup_v4only(void **state) { return setup_mode(state, XP_CC_MODE_RST, XP_CLOSE_RST, 4); }
static int setup_data_len(void **state, uint32_t len)
{
	int r;

	data_len = len;
	r = setup_mode(state, XP_CC_MODE_DATA, XP_CLOSE_NONE, 0);
	data_len = 0;
	return r;
}
static int setup_data(void **state) { return setup_data_len(state, DATA_LEN); }
static int setup_data_max(void **state) { return setup_data_len(state, XP_CC_DATA_MAX); }
static int setup_data_rst(void **state)
{
	int r;

	data_len = 1;
	r = setup_mode(state, XP_CC_MODE_DATA, XP_CLOSE_RST, 0);
	data_len = 0;
	return r;
}
static int setup_redirect(void **state)
{
	int r;

	reply_redirect = 1;
	r = setup_mode(state, XP_CC_MODE_FIN, XP_CLOSE_RST, 0);
	reply_redirect = 0;
	return r;
}

static int teardown(void **state)
{
	struct env *e = *state;

	if (e) {
		server_bpf__destroy(e->srv);
		client_bpf__destroy(e->cli);
		free(e);
	}
	return 0;
}

/* Run one frame; out and outlen get the frame as the program left it. */
static uint32_t run(int prog_fd, const uint8_t *in, size_t len, uint8_t *out,
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

static uint32_t run_srv(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->srv->progs.xdp_server), in, len, out, olen);
}

static uint32_t run_cli(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->cli->progs.xdp_client), in, len, out, olen);
}

/* The client's TC fallback (an skb program: same frames in and out). */
static uint32_t run_tc(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->cli->progs.tc_client), in, len, out, olen);
}

#define TC_ACT_OK_       0
#define TC_ACT_REDIRECT_ 7

/* Summed counters. */
static struct xp_counters srv_counters(struct env *e)
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

static struct xp_cc_counters cli_counters(struct env *e)
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
static void expect_srv(struct env *e, struct xp_counters want)
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

static void expect_cli(struct env *e, struct xp_cc_counters want)
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
static void do_syn(struct env *e, struct conn *c)
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
static void do_client_ack(struct env *e, struct conn *c, int fin)
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

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

static void test_siphash_reference(void **state)
{
	/* The SipHash paper's vector: key 00..0f, message 00..0e. */
	uint8_t key[16], msg[64];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	assert_int_equal(siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);
	assert_int_equal(siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
	assert_int_equal(siphash24(key, msg, 8), 0x93f5f5799a932462ULL);
}

/* The full RST-mode connection, for one address family / VLAN setup. */
static void rst_connection(struct env *e, const struct peer *p, uint16_t sport)
{
	struct conn c = { .p = p, .sport = sport, .dport = PORT_LO + 5 };
	struct xp_counters srv = { 0 };
	struct xp_cc_counters cli = { 0 };
	struct seg in, out;
	size_t rst_len;
	int v6 = strchr(p->caddr, ':') != NULL;

	do_syn(e, &c);
	srv.pkts = 1; srv.tcp_syn = 1; srv.synack_sent = 1;
	if (v6) srv.ipv6_pkts = 1; else srv.ipv4_pkts = 1;
	expect_srv(e, srv);

	do_client_ack(e, &c, 0);
	cli.synack_seen = 1; cli.acks_sent = 1;
	expect_cli(e, cli);

	/* ACK -> server: established, and a RST with seq = its ack. */
	in = parse(c.ack, c.ack_len);
	assert_int_equal(run_srv(e, c.ack, c.ack_len, c.last, &rst_len), XDP_TX);
	out = parse(c.last, rst_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_RST);
	assert_int_equal(out.seq, c.cookie + 1);
	assert_int_equal(out.ack, 0);
	assert_int_equal(out.optlen, 0);
	assert_int_equal(rst_len, (v6 ? 54u : 34u) + (p->vlan ? 4 : 0) + 20);
	srv.pkts++; srv.tcp_ack_only++; srv.conn_established = 1; srv.rst_sent = 1;
	if (v6) srv.ipv6_pkts++; else srv.ipv4_pkts++;
	expect_srv(e, srv);

	/* RST -> client: counted, dropped. */
	assert_int_equal(run_cli(e, c.last, rst_len, NULL, NULL), XDP_DROP);
	cli.rst_seen = 1;
	expect_cli(e, cli);
}

static void test_rst_connection_v4(void **state) { rst_connection(*state, &P4, 40000); }
static void test_rst_connection_v6(void **state) { rst_connection(*state, &P6, 40001); }
static void test_rst_connection_v4_vlan(void **state) { rst_connection(*state, &P4V, 12345); }
static void test_rst_connection_v6_vlan(void **state) { rst_connection(*state, &P6V, 59999); }

/* FIN mode: ACK|FIN -> server: established + FIN-ACK -> client: final ACK
 * -> server: recognised as the ACK of our FIN, dropped quietly. */
static void fin_connection(struct env *e, const struct peer *p)
{
	struct conn c = { .p = p, .sport = 33333, .dport = PORT_HI };
	struct xp_counters srv;
	struct xp_cc_counters cli = { 0 };
	uint8_t finack[256], last[256];
	size_t finack_len, last_len;
	struct seg in, out;

	do_syn(e, &c);
	do_client_ack(e, &c, 1);
	cli.synack_seen = 1; cli.acks_sent = 1; cli.fins_sent = 1;
	expect_cli(e, cli);

	in = parse(c.ack, c.ack_len);
	assert_int_equal(run_srv(e, c.ack, c.ack_len, finack, &finack_len), XDP_TX);
	out = parse(finack, finack_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_FIN | F_ACK);
	assert_int_equal(out.seq, c.cookie + 1);
	assert_int_equal(out.ack, CLIENT_ISN + 2); /* the client's FIN took one */
	assert_int_equal(out.window, 502);
	assert_int_equal(out.optlen, 12);
	assert_int_equal(out.tsecr, in.tsval);
	srv = srv_counters(e);
	assert_int_equal(srv.conn_established, 1);
	assert_int_equal(srv.fin_answered, 1);
	assert_int_equal(srv.tcp_fin, 1);
	assert_int_equal(srv.rst_sent, 0);

	in = out;
	assert_int_equal(run_cli(e, finack, finack_len, last, &last_len), XDP_TX);
	out = parse(last, last_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_ACK);
	assert_int_equal(out.seq, CLIENT_ISN + 2);
	assert_int_equal(out.ack, c.cookie + 2);
	assert_int_equal(out.tsecr, in.tsval);
	cli.finack_answered = 1;
	expect_cli(e, cli);

	assert_int_equal(run_srv(e, last, last_len, NULL, NULL), XDP_DROP);
	srv = srv_counters(e);
	assert_int_equal(srv.pkts, 3);
	assert_int_equal(srv.tcp_ack_only, 1);
	assert_int_equal(srv.conn_established, 1); /* not twice */
	assert_int_equal(srv.cookie_invalid, 0);   /* not a forgery either */
	assert_int_equal(srv.fin_answered, 1);
	assert_int_equal(srv.synack_sent, 1);
}

static void test_fin_connection_v4(void **state) { fin_connection(*state, &P4); }
static void test_fin_connection_v6(void **state) { fin_connection(*state, &P6V); }

/* close_mode NONE: the connection is counted, the ACK dropped, no RST. */
static void test_close_none(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 20000, .dport = PORT_LO };

	do_syn(e, &c);
	do_client_ack(e, &c, 0);
	assert_int_equal(run_srv(e, c.ack, c.ack_len, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 2, .tcp_syn = 1, .tcp_ack_only = 1,
		.ipv4_pkts = 2, .synack_sent = 1, .conn_established = 1, .noreply_other = 1 });
}

/* What the slot's SYN-ACKs note in ka_steps (bpf/server.h) when they send
 * a cookie of step t: written here for steps a test cannot send in (the
 * past), as the server would have noted them then. */
static void ka_noted(struct env *e, uint32_t t)
{
	struct xp_ka_steps *ks = calloc(1, sizeof(*ks));
	uint32_t key = SLOT;
	int fd = bpf_map__fd(e->srv->maps.ka_steps);

	assert_non_null(ks);
	assert_int_equal(bpf_map_lookup_elem(fd, &key, ks), 0);
	ks->step[t % XP_KA_STEPS] = t;
	if (!ks->first || (int32_t)(t - (uint32_t)ks->first) < 0)
		ks->first = (1ull << 32) | t;
	assert_int_equal(bpf_map_update_elem(fd, &key, ks, BPF_ANY), 0);
	free(ks);
}

/*
 * Keepalives of held connections (seq = the client's ISN, ack = cookie + 1,
 * no data) are counted as keepalives, not invalid cookies, however old the
 * cookie up to 274 s (512 rounds of 8 steps of 67.1 ms): one from this step,
 * one from 1000 steps (67 s) ago. One from 4100 steps ago (275 s), one with
 * another ISN, and one with data are not keepalives (cookie_invalid). None
 * is answered. (The slot issued cookies in those three steps, ka_noted: the
 * search looks only at steps the slot issued cookies in, since its first,
 * test_keepalive_bound.c.)
 */
static void test_keepalives(void **state)
{
	struct env *e = *state;
	struct flow f = flow_of(&P4, 20300, PORT_LO);
	uint8_t buf[2048], out[2048];
	size_t len, olen;
	uint32_t t = now_step();
	struct {
		uint32_t seq, cookie;
		size_t data;
	} rows[] = {
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t, 3), 0 },
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t - 1000, 3), 0 },
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t - 4100, 3), 0 },
		{ CLIENT_ISN + 7, ref_cookie(&f, CLIENT_ISN, t - 1000, 3), 0 },
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t, 3), DATA_LEN },
	};

	ka_noted(e, t - 4100);
	ka_noted(e, t - 1000);
	ka_noted(e, t);

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		len = client_frame(&P4, 20300, PORT_LO, F_ACK, rows[i].seq, rows[i].cookie + 1, 0, rows[i].data,
				   buf, sizeof(buf));
		if (run_srv(e, buf, len, out, &olen) != XDP_DROP)
			fail_msg("keepalive row %zu answered", i);
		assert_memory_equal(out, buf, len);
	}
	expect_srv(e, (struct xp_counters){ .pkts = 5, .tcp_ack_only = 4, .data_pkts = 1, .data_bytes = DATA_LEN,
		.ipv4_pkts = 5, .keepalives = 2, .cookie_invalid = 3, .noreply_other = 5 });
}

/* Forged ACKs: random ack, right cookie on the wrong flow / wrong ISN. */
static void test_forged_ack(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 20001, .dport = PORT_LO + 1 };
	uint8_t buf[256], out[256];
	size_t len, olen;
	uint32_t invalid = 0;

	srandom((unsigned)time(NULL));
	for (int i = 0; i < 50; i++) {
		len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1,
				   (uint32_t)random() * 2654435761u + 1, 0, 0, buf, sizeof(buf));
		assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
		assert_memory_equal(out, buf, len); /* dropped untouched */
		invalid++;
	}
	do_syn(e, &c);
	/* Right cookie, other source port / other destination port / other
	 * client ISN / IPv6 instead of IPv4: all forgeries. */
	len = client_frame(&P4, 20002, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 20001, PORT_LO + 2, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 2, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P6, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	/* Cookie with a flipped MSS index bit. */
	len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, (c.cookie ^ 1) + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	invalid += 5;
	expect_srv(e, (struct xp_counters){ .pkts = 56, .tcp_syn = 1, .tcp_ack_only = 55,
		.ipv4_pkts = 55, .ipv6_pkts = 1, .synack_sent = 1, .cookie_invalid = invalid,
		.noreply_other = invalid });

	/* And the genuine one still works (plain ACK without options). */
	len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	assert_int_equal(parse(out, olen).flags, F_RST);
	assert_int_equal(srv_counters(e).conn_established, 1);
}

/* Cookies from other time steps, made with the reference and the key. */
static void test_cookie_time_steps(void **state)
{
	struct env *e = *state;
	struct flow f = flow_of(&P4, 30000, PORT_LO + 3);
	uint8_t buf[256];
	size_t len;
	struct {
		int age;     /* steps before now; negative = future */
		int valid;
	} rows[] = {
		{ 0, 1 }, { 3, 1 }, { 5, 1 },       /* within 0..7 (margin for a step change) */
		{ 12, 0 }, { 100, 0 }, { 100000, 0 }, /* far past: alias to a younger step */
		{ -3, 0 },                            /* future */
	};
	uint64_t est = 0, inv = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t t = now_step() - (uint32_t)rows[i].age;
		uint32_t ck = ref_cookie(&f, CLIENT_ISN, t, 3);

		len = client_frame(&P4, 30000, PORT_LO + 3, F_ACK, CLIENT_ISN + 1, ck + 1, 0, 0,
				   buf, sizeof(buf));
		assert_int_equal(run_srv(e, buf, len, NULL, NULL), rows[i].valid ? XDP_TX : XDP_DROP);
		if (rows[i].valid)
			est++;
		else
			inv++;
		if (srv_counters(e).conn_established != est || srv_counters(e).cookie_invalid != inv)
			fail_msg("cookie aged %d steps: established %llu invalid %llu", rows[i].age,
				 (unsigned long long)srv_counters(e).conn_established,
				 (unsigned long long)srv_counters(e).cookie_invalid);
	}
	assert_int_equal(srv_counters(e).rst_sent, 3);
}

/* SYNs with fewer options get fewer options back, and the frame resizes. */
static void test_syn_option_variants(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;
	struct seg s;

	/* No options at all: MSS only; 60-byte padded SYN -> 58-byte SYN-ACK;
	 * MSS index 0 (TCP's default 536). */
	len = client_frame(&P4, 40010, PORT_LO, F_SYN, 7, 0, 0, 0, buf, sizeof(buf));
	assert_int_equal(len, 60);
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(olen, 58);
	assert_int_equal(s.optlen, 4);
	assert_true(s.has_mss && !s.has_ts && !s.has_sack && !s.has_ws);
	assert_int_equal(s.seq & 3, 0);
	assert_int_equal(s.ack, 8);

	/* MSS 1300, SACK-perm, WS, no timestamps (built by hand on a
	 * SYN without options: 02 04 05 14 | 01 03 03 05 | 01 01 04 02). */
	len = client_frame(&P4, 40011, PORT_LO, F_SYN, 9, 0, 1, 0, buf, sizeof(buf));
	{
		uint8_t *th = buf + 34;
		static const uint8_t o[12] = { 2, 4, 0x05, 0x14, 1, 3, 3, 5, 1, 1, 4, 2 };
		struct in_addr sa, da;

		memcpy(th + 20, o, 12);
		th[12] = (32 / 4) << 4;
		len = 14 + 20 + 32;
		buf[16] = 0; buf[17] = 52;              /* IP total length */
		buf[24] = buf[25] = 0;
		{
			uint16_t ck = csum_ipv4_hdr(buf + 14, 20);
			memcpy(buf + 24, &ck, 2);
		}
		th[16] = th[17] = 0;
		memcpy(&sa, buf + 26, 4);
		memcpy(&da, buf + 30, 4);
		{
			uint16_t ck = csum_l4_v4(&sa, &da, IPPROTO_TCP, th, 32);
			memcpy(th + 16, &ck, 2);
		}
	}
	parse(buf, len); /* our hand edit is valid */
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	/* MSS, NOP+WS, NOP NOP SACK-perm: Linux's order without timestamps. */
	assert_int_equal(s.optlen, 12);
	assert_memory_equal(s.opt + 4, "\x01\x03\x03\x07", 4);
	assert_memory_equal(s.opt + 8, "\x01\x01\x04\x02", 4);
	assert_int_equal(s.seq & 3, 1); /* 1300 -> index 1 */
	assert_int_equal(srv_counters(e).synack_sent, 2);
}

/* Only the segment that completes a handshake may carry data (the client's
 * data mode): data whose seq - 1 / ack - 1 is not a valid cookie (a forgery,
 * or the data of a real TCP client after its handshake, which nothing here
 * acknowledges) is counted as data and as cookie_invalid and dropped
 * untouched, FIN or not. A FIN without data is still answered unvalidated
 * (after a real client's data its ISN is unknown), with a headers-only frame. */
static void test_data_without_cookie(void **state)
{
	struct env *e = *state;
	uint8_t buf[512], out[512];
	size_t len, olen;
	struct seg s;

	len = client_frame(&P4, 40020, PORT_LO, F_ACK | F_PSH, 1000, 5000, 0, 100, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P6, 40020, PORT_LO, F_ACK | F_FIN, 1100, 5000, 0, 37, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P6, 40020, PORT_LO, F_ACK | F_FIN, 1137, 5000, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(s.flags, F_FIN | F_ACK);
	assert_int_equal(s.seq, 5000);
	assert_int_equal(s.ack, 1137 + 1);
	assert_int_equal(olen, 14 + 40 + 20);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_fin = 2, .data_pkts = 2,
		.data_bytes = 137, .ipv4_pkts = 1, .ipv6_pkts = 2, .cookie_invalid = 2,
		.fin_answered = 1, .noreply_other = 2 });
}

/* ---------------------------------------------------------------------- */
/* Data mode (XP_CC_MODE_DATA)                                            */
/* ---------------------------------------------------------------------- */

static size_t l2l3_len(const struct peer *p)
{
	return (strchr(p->caddr, ':') ? 54u : 34u) + (p->vlan ? 4 : 0);
}

static int all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* SYN-ACK (plus trailer bytes after it in the frame) -> client in data
 * mode: checks the ACK|PSH|FIN segment with n zero bytes (the checksums,
 * which cover them, are checked by parse()). */
static struct seg do_client_data_tr(struct env *e, struct conn *c, size_t trailer, uint8_t *out,
				    size_t *olen, uint32_t n)
{
	struct seg in = parse(c->synack, c->synack_len), s;

	if (c->via_tc)
		assert_int_equal(run_tc(e, c->synack, c->synack_len + trailer, out, olen), TC_ACT_REDIRECT_);
	else
		assert_int_equal(run_cli(e, c->synack, c->synack_len + trailer, out, olen), XDP_TX);
	s = parse(out, *olen);
	expect_addressed_back(&in, &s);
	assert_int_equal(s.flags, n ? (F_ACK | F_PSH | F_FIN) : (F_ACK | F_FIN));
	assert_int_equal(s.seq, CLIENT_ISN + 1);  /* the data starts at ISN + 1 */
	assert_int_equal(s.ack, c->cookie + 1);
	assert_int_equal(s.window, 502);
	assert_int_equal(s.optlen, 12);
	assert_memory_equal(s.opt, "\x01\x01\x08\x0a", 4);
	assert_int_equal(s.tsval, in.tsecr);
	assert_int_equal(s.tsecr, in.tsval);
	assert_int_equal(s.payload, n);
	assert_int_equal(*olen, l2l3_len(c->p) + 32 + n);
	assert_true(all_zero(out + *olen - n, n));
	return s;
}

static struct seg do_client_data(struct env *e, struct conn *c, uint8_t *out, size_t *olen,
				 uint32_t n)
{
	return do_client_data_tr(e, c, 0, out, olen, n);
}

/* The whole data-mode connection: SYN -> SYN-ACK -> ACK|PSH|FIN + n bytes ->
 * server: established, n data bytes, FIN-ACK -> client: final ACK -> server:
 * recognised as the ACK of its FIN (not a forgery), dropped. */
static void data_connection_via(struct env *e, const struct peer *p, uint16_t sport, uint32_t n,
				int via_tc)
{
	struct conn c = { .p = p, .sport = sport, .dport = PORT_LO + 7, .via_tc = via_tc };
	int v6 = strchr(p->caddr, ':') != NULL;
	uint8_t data[2048], finack[256], last[256];
	size_t data_len_out, finack_len, last_len;
	struct xp_counters srv = { 0 };
	struct seg in, out;

	do_syn(e, &c);
	in = do_client_data(e, &c, data, &data_len_out, n);
	/* (XDP counts the SYN-ACKs it sees, before it hands one to TC) */
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = !via_tc, .acks_sent = 1, .fins_sent = 1,
		.data_sent = 1, .data_bytes = n, .data_tc = !!via_tc });

	assert_int_equal(run_srv(e, data, data_len_out, finack, &finack_len), XDP_TX);
	out = parse(finack, finack_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_FIN | F_ACK);
	assert_int_equal(out.seq, c.cookie + 1);
	assert_int_equal(out.ack, CLIENT_ISN + 1 + n + 1); /* the data, then the FIN */
	assert_int_equal(out.window, 502);
	assert_int_equal(out.optlen, 12);
	assert_int_equal(out.tsecr, in.tsval);
	assert_int_equal(finack_len, l2l3_len(p) + 32);
	srv.pkts = 2; srv.tcp_syn = 1; srv.tcp_fin = 1; srv.data_pkts = 1; srv.data_bytes = n;
	srv.synack_sent = 1; srv.conn_established = 1; srv.fin_answered = 1;
	if (v6) srv.ipv6_pkts = 2; else srv.ipv4_pkts = 2;
	expect_srv(e, srv);

	in = out;
	assert_int_equal(run_cli(e, finack, finack_len, last, &last_len), XDP_TX);
	out = parse(last, last_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_ACK);
	assert_int_equal(out.seq, CLIENT_ISN + 1 + n + 1);
	assert_int_equal(out.ack, c.cookie + 2);
	assert_int_equal(out.tsecr, in.tsval);
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = !via_tc, .acks_sent = 1, .fins_sent = 1,
		.data_sent = 1, .data_bytes = n, .data_tc = !!via_tc, .finack_answered = 1 });

	assert_int_equal(run_srv(e, last, last_len, NULL, NULL), XDP_DROP);
	srv.pkts++; srv.tcp_ack_only++; srv.noreply_other++;
	if (v6) srv.ipv6_pkts++; else srv.ipv4_pkts++;
	expect_srv(e, srv); /* established once, cookie_invalid 0 */
}

static void data_connection(struct env *e, const struct peer *p, uint16_t sport, uint32_t n)
{
	data_connection_via(e, p, sport, n, 0);
}

static void test_data_connection_v4(void **state) { data_connection(*state, &P4, 40100, DATA_LEN); }
static void test_data_connection_v6(void **state) { data_connection(*state, &P6, 40101, DATA_LEN); }
static void test_data_connection_v4_vlan(void **state) { data_connection(*state, &P4V, 40102, DATA_LEN); }
static void test_data_connection_v6_vlan(void **state) { data_connection(*state, &P6V, 40103, DATA_LEN); }
static void test_data_connection_max(void **state)
{
	data_connection(*state, &P6V, 40104, XP_CC_DATA_MAX); /* the largest frame: 1494 bytes */
}

/* Forged data segments: random ack, the right cookie with another ISN /
 * source port / time step, data without FIN. All counted, cookie_invalid,
 * dropped untouched, no FIN-ACK. Then a final ACK one off the data length. */
static void test_forged_data(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 20101, .dport = PORT_LO + 1 };
	uint8_t buf[2048], out[2048];
	size_t len, olen;
	const uint8_t dfin = F_ACK | F_PSH | F_FIN;
	struct {
		uint16_t sport;
		uint8_t flags;
		uint32_t seq, ack;
	} rows[5];

	do_syn(e, &c);
	rows[0] = (typeof(rows[0])){ 20101, dfin, CLIENT_ISN + 1, (uint32_t)time(NULL) * 2654435761u };
	rows[1] = (typeof(rows[0])){ 20101, dfin, CLIENT_ISN + 2, c.cookie + 1 };
	rows[2] = (typeof(rows[0])){ 20102, dfin, CLIENT_ISN + 1, c.cookie + 1 };
	rows[3] = (typeof(rows[0])){ 20101, dfin, CLIENT_ISN + 1, (c.cookie ^ 0x10) + 1 };
	rows[4] = (typeof(rows[0])){ 20101, F_ACK | F_PSH, CLIENT_ISN + 1, c.cookie + 7 };
	for (size_t i = 0; i < 5; i++) {
		len = client_frame(&P4, rows[i].sport, PORT_LO + 1, rows[i].flags, rows[i].seq,
				   rows[i].ack, 0, DATA_LEN, buf, sizeof(buf));
		if (run_srv(e, buf, len, out, &olen) != XDP_DROP)
			fail_msg("forged data segment %zu answered", i);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	expect_srv(e, (struct xp_counters){ .pkts = 6, .tcp_syn = 1, .tcp_fin = 4, .data_pkts = 5,
		.data_bytes = 5 * DATA_LEN, .ipv4_pkts = 6, .synack_sent = 1, .cookie_invalid = 5,
		.noreply_other = 5 });

	/* The genuine one still completes... */
	do_client_data(e, &c, buf, &len, DATA_LEN);
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	assert_int_equal(parse(out, olen).flags, F_FIN | F_ACK);
	/* ...and a final ACK with another data length is no ACK of our FIN. */
	len = client_frame(&P4, 20101, PORT_LO + 1, F_ACK, CLIENT_ISN + DATA_LEN + 3, c.cookie + 2, 0, 0,
			   buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	assert_int_equal(srv_counters(e).conn_established, 1);
	assert_int_equal(srv_counters(e).cookie_invalid, 6);
	/* The right one is. */
	len = client_frame(&P4, 20101, PORT_LO + 1, F_ACK, CLIENT_ISN + DATA_LEN + 2, c.cookie + 2, 0, 0,
			   buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	assert_int_equal(srv_counters(e).cookie_invalid, 6);
	assert_int_equal(srv_counters(e).fin_answered, 1);
}

/* Rewrite a 16-bit TCP field of a frame (no VLAN, IPv4), fixing the checksum. */
static void patch_tcp16(uint8_t *f, size_t off, uint16_t val)
{
	uint8_t *th = f + 34;
	uint16_t old, nv = htons(val), ck;

	memcpy(&old, th + off, 2);
	memcpy(&ck, th + 16, 2);
	ck = csum_replace16(ck, old, nv);
	memcpy(th + off, &nv, 2);
	memcpy(th + 16, &ck, 2);
}

/* The client sends no more than the SYN-ACK allows: its window (never
 * scaled in a SYN-ACK) and its MSS less our options (RFC 6691); a window of
 * 0 leaves a plain ACK|FIN.
 * Whatever trails the SYN-ACK's IP datagram (Ethernet padding) is not sent
 * as payload: the payload is zeroes. */
static void test_data_capped_by_synack(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 40200, .dport = PORT_LO };
	uint8_t buf[2048];
	size_t len;
	uint64_t sent = 0;

	do_syn(e, &c);
	/* MSS option at TCP offset 22 (MSS is the first option). */
	assert_int_equal(c.synack[34 + 20], 2);
	patch_tcp16(c.synack, 14, 300);          /* window 300 */
	parse(c.synack, c.synack_len);
	do_client_data(e, &c, buf, &len, 300);
	sent += 300;
	patch_tcp16(c.synack, 14, 65535);
	patch_tcp16(c.synack, 22, 536);          /* MSS 536, less 12 for timestamps */
	do_client_data(e, &c, buf, &len, 524);
	sent += 524;
	patch_tcp16(c.synack, 22, 1460);
	patch_tcp16(c.synack, 14, 0);            /* zero window: no data */
	do_client_data(e, &c, buf, &len, 0);
	patch_tcp16(c.synack, 14, 65535);
	/* 40 bytes of non-zero trailer after the datagram. */
	memset(c.synack + c.synack_len, 0xee, 40);
	do_client_data_tr(e, &c, 40, buf, &len, XP_CC_DATA_MAX);
	sent += XP_CC_DATA_MAX;
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = 4, .acks_sent = 4, .fins_sent = 4,
		.data_sent = 3, .data_bytes = sent });
}

/* Close mode RST: a valid handshake segment with data and no FIN is
 * established and reset (seq = its ack); with FIN it gets the FIN-ACK. */
/* The TC fallback (SYN-ACKs whose XDP frame had no room) builds the same
 * segment from an skb that must grow (BPF_PROG_RUN's skb has almost no
 * tailroom: bpf_skb_change_tail reallocates), with the payload zeroed. */
static void test_tc_data_connection_v4(void **state) { data_connection_via(*state, &P4, 40400, DATA_LEN, 1); }
static void test_tc_data_connection_v6(void **state) { data_connection_via(*state, &P6, 40401, DATA_LEN, 1); }
static void test_tc_data_connection_v4_vlan(void **state) { data_connection_via(*state, &P4V, 40402, DATA_LEN, 1); }
static void test_tc_data_connection_v6_vlan(void **state)
{
	data_connection_via(*state, &P6V, 40403, XP_CC_DATA_MAX, 1);
}

/* The TC program leaves alone everything but SYN-ACKs of test flows in
 * data mode; in other modes it is not even that. */
static void test_tc_passes_the_rest(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 40410, .dport = PORT_LO, .via_tc = 1 };
	uint8_t buf[256], out[2048];
	size_t len, olen;
	struct {
		const struct peer *p;
		uint16_t sport, dport;
		uint8_t flags;
	} rows[] = {
		{ &P4, PORT_LO, 40000, F_ACK | F_FIN },   /* a server FIN: XDP's */
		{ &P6, PORT_LO, 40000, F_RST },
		{ &P4, PORT_LO, 40000, F_ACK },
		{ &P4, CTRL_PORT, 40000, F_SYN | F_ACK }, /* control connection */
		{ &P4, PORT_LO - 1, 40000, F_SYN | F_ACK }, /* not a test port */
		{ &P6, PORT_LO, CPORT_HI + 1, F_SYN | F_ACK },
		{ &P4, 40000, PORT_LO, F_SYN },           /* the other way */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		len = client_frame(rows[i].p, rows[i].sport, rows[i].dport, rows[i].flags, 1, 2,
				   rows[i].flags & F_SYN, 0, buf, sizeof(buf));
		assert_int_equal(run_tc(e, buf, len, out, &olen), TC_ACT_OK_);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	expect_cli(e, (struct xp_cc_counters){ 0 });
	do_syn(e, &c);
	do_client_data(e, &c, out, &olen, DATA_LEN);
	assert_int_equal(cli_counters(e).data_tc, 1);
}

static void test_tc_idle_in_other_modes(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P6, .sport = 40420, .dport = PORT_LO };
	uint8_t out[256];
	size_t olen;

	do_syn(e, &c);
	assert_int_equal(run_tc(e, c.synack, c.synack_len, out, &olen), TC_ACT_OK_);
	assert_int_equal(olen, c.synack_len);
	assert_memory_equal(out, c.synack, c.synack_len);
	expect_cli(e, (struct xp_cc_counters){ 0 });
}

static void test_data_close_rst(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P6, .sport = 40300, .dport = PORT_HI };
	uint8_t buf[512], out[512];
	size_t len, olen;
	struct seg s;

	do_syn(e, &c);
	len = client_frame(&P6, 40300, PORT_HI, F_ACK | F_PSH, CLIENT_ISN + 1, c.cookie + 1, 0, 10,
			   buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(s.flags, F_RST);
	assert_int_equal(s.seq, c.cookie + 1);
	do_client_data(e, &c, buf, &len, 1);
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(s.flags, F_FIN | F_ACK);
	assert_int_equal(s.ack, CLIENT_ISN + 3);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_syn = 1, .tcp_fin = 1, .data_pkts = 2,
		.data_bytes = 11, .ipv6_pkts = 3, .synack_sent = 1, .conn_established = 2,
		.fin_answered = 1, .rst_sent = 1 });
}

/* Client RSTs and other segments to a RESPOND slot are counted and dropped. */
static void test_server_drops_rest(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;

	len = client_frame(&P4, 40030, PORT_LO, F_RST, 1, 0, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P4, 40030, PORT_LO, F_RST | F_ACK, 1, 2, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 40030, PORT_LO, F_SYN | F_ACK, 1, 2, 1, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 40030, PORT_LO, 0, 1, 2, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 4, .tcp_rst = 2, .tcp_synack = 1,
		.ipv4_pkts = 4, .noreply_other = 4 });
}

/* A SYN with IPv4 options is counted but not answered (what would we echo?). */
static void test_syn_ip_options_not_answered(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], opt[256];
	size_t len;

	len = client_frame(&P4, 40040, PORT_LO, F_SYN, 1, 0, 1, 0, buf, sizeof(buf));
	/* Insert 4 bytes of NOP options: IHL 6. */
	memcpy(opt, buf, 34);
	memset(opt + 34, 1, 4);
	memcpy(opt + 38, buf + 34, len - 34);
	opt[14] = 0x46;
	opt[17] = (uint8_t)(opt[17] + 4);
	opt[24] = opt[25] = 0;
	{
		uint16_t ck = csum_ipv4_hdr(opt + 14, 24);
		memcpy(opt + 24, &ck, 2);
	}
	assert_int_equal(run_srv(e, opt, len + 4, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 1, .tcp_syn = 1, .ipv4_pkts = 1,
		.noreply_shape = 1 });
}

/* A slot without XP_SLOT_RESPOND behaves as before: count, drop, untouched. */
static void test_slot_without_respond(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;

	set_slot(e->srv, XP_SLOT_ACTIVE, XP_CLOSE_RST);
	len = client_frame(&P4, 40050, PORT_LO, F_SYN, 1, 0, 1, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_int_equal(olen, len);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P4, 40050, PORT_LO, F_ACK, 2, 12345, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 40050, PORT_LO, F_ACK | F_FIN, 2, 12345, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_syn = 1, .tcp_ack_only = 1,
		.tcp_fin = 1, .ipv4_pkts = 3 });

	/* With XP_SLOT_PASS: passed, as socket tests need. */
	set_slot(e->srv, XP_SLOT_ACTIVE | XP_SLOT_PASS, XP_CLOSE_NONE);
	len = client_frame(&P6, 40050, PORT_LO, F_SYN, 1, 0, 1, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_PASS);
	assert_memory_equal(out, buf, len);
	/* RESPOND|PASS: answered frames go back out, the rest is passed. */
	set_slot(e->srv, XP_SLOT_ACTIVE | XP_SLOT_PASS | XP_SLOT_RESPOND, XP_CLOSE_NONE);
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_TX);
	len = client_frame(&P6, 40050, PORT_LO, F_ACK, 2, 12345, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_PASS);
	assert_int_equal(srv_counters(e).cookie_invalid, 1);
}

/* Non-test traffic and the control connection pass both programs untouched. */
static void test_non_test_traffic_passes(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;
	uint8_t arp[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xc1, 0, 0, 0, 0x01,
		0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,
	};
	struct {
		const struct peer *p;
		uint16_t sport, dport;
		uint8_t flags;
	} srv_rows[] = {
		{ &P4, 40000, CTRL_PORT, F_SYN },       /* control connection */
		{ &P6, 40000, CTRL_PORT, F_ACK },
		{ &P4, CTRL_PORT, PORT_LO, F_SYN },     /* control port as source */
		{ &P4, 40000, PORT_LO - 1, F_SYN },     /* not a test port */
		{ &P6, 40000, 22, F_ACK | F_PSH },
	}, cli_rows[] = {
		/* Seen from the client: server -> client segments. */
		{ &P4, CTRL_PORT, 40000, F_SYN | F_ACK },  /* control connection */
		{ &P4, PORT_LO, CTRL_PORT, F_SYN | F_ACK },
		{ &P4, PORT_LO - 1, 40000, F_SYN | F_ACK }, /* not from a test port */
		{ &P6, PORT_HI + 1, 40000, F_RST },
		{ &P4, PORT_LO, CPORT_LO - 1, F_SYN | F_ACK }, /* not to a client port */
		{ &P6, PORT_LO, CPORT_HI + 1, F_FIN | F_ACK },
		{ &P4, PORT_LO, 40000, F_ACK },            /* test flow, nothing to answer */
		{ &P6, 80, 55555, F_ACK | F_PSH },
	};

	/* The control port is mapped to the slot: it must pass anyway. */
	{
		uint32_t p = CTRL_PORT, v = SLOT + 1;
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->srv->maps.port_slot), &p, &v, 0), 0);
	}
	for (size_t i = 0; i < sizeof(srv_rows) / sizeof(srv_rows[0]); i++) {
		len = client_frame(srv_rows[i].p, srv_rows[i].sport, srv_rows[i].dport,
				   srv_rows[i].flags, 1, 0, srv_rows[i].flags == F_SYN, 0,
				   buf, sizeof(buf));
		assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_PASS);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	assert_int_equal(run_srv(e, arp, sizeof(arp), out, &olen), XDP_PASS);
	assert_memory_equal(out, arp, sizeof(arp));
	expect_srv(e, (struct xp_counters){ 0 });

	for (size_t i = 0; i < sizeof(cli_rows) / sizeof(cli_rows[0]); i++) {
		len = client_frame(cli_rows[i].p, cli_rows[i].sport, cli_rows[i].dport,
				   cli_rows[i].flags, 1, 2, cli_rows[i].flags & F_SYN, 0,
				   buf, sizeof(buf));
		assert_int_equal(run_cli(e, buf, len, out, &olen), XDP_PASS);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	assert_int_equal(run_cli(e, arp, sizeof(arp), out, &olen), XDP_PASS);
	/* UDP from a test port to a client port is not TCP: passed. */
	{
		struct frame_spec s = { 0 };
		const char *err;

		assert_int_equal(xp_addr_parse(P4.saddr, &s.src), 0);
		assert_int_equal(xp_addr_parse(P4.caddr, &s.dst), 0);
		s.l4_proto = IPPROTO_UDP;
		s.sport = PORT_LO;
		s.dport = 40000;
		s.frame_size = 64;
		len = frame_build(&s, buf, sizeof(buf), &err);
		assert_int_equal(run_cli(e, buf, len, out, &olen), XDP_PASS);
		assert_memory_equal(out, buf, len);
	}
	expect_cli(e, (struct xp_cc_counters){ .passed = 10 });
}

/* config.family 4: IPv6 SYN-ACKs are not ours. */
static void test_client_family_filter(void **state)
{
	struct env *e = *state;
	struct conn c4 = { .p = &P4, .sport = 41000, .dport = PORT_LO };
	struct conn c6 = { .p = &P6, .sport = 41000, .dport = PORT_LO };
	uint8_t out[256];
	size_t olen;

	do_syn(e, &c6);
	assert_int_equal(run_cli(e, c6.synack, c6.synack_len, out, &olen), XDP_PASS);
	assert_memory_equal(out, c6.synack, c6.synack_len);
	do_syn(e, &c4);
	do_client_ack(e, &c4, 0);
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = 1, .acks_sent = 1, .passed = 1 });
}

/* With the redirect knob, replies leave as XDP_REDIRECT (to the ingress
 * interface) instead of XDP_TX, rewritten exactly the same way. */
static void test_reply_redirect(void **state)
{
	struct env *e = *state;
	uint8_t syn[256], synack[256], ack[256], finack[256], last[256];
	size_t l1, l2, l3, l4, l5;
	struct seg s;

	l1 = client_frame(&P6V, 44444, PORT_LO, F_SYN, CLIENT_ISN, 0, 1, 0, syn, sizeof(syn));
	assert_int_equal(run_srv(e, syn, l1, synack, &l2), XDP_REDIRECT);
	s = parse(synack, l2);
	assert_int_equal(s.flags, F_SYN | F_ACK);
	assert_int_equal(run_cli(e, synack, l2, ack, &l3), XDP_REDIRECT);
	assert_int_equal(parse(ack, l3).flags, F_ACK | F_FIN);
	assert_int_equal(run_srv(e, ack, l3, finack, &l4), XDP_REDIRECT);
	assert_int_equal(parse(finack, l4).flags, F_ACK | F_FIN);
	assert_int_equal(run_cli(e, finack, l4, last, &l5), XDP_REDIRECT);
	assert_int_equal(parse(last, l5).ack, s.seq + 2);
	assert_int_equal(run_srv(e, last, l5, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_syn = 1, .tcp_fin = 1,
		.tcp_ack_only = 1, .ipv6_pkts = 3, .synack_sent = 1, .conn_established = 1,
		.fin_answered = 1, .noreply_other = 1 });
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = 1, .acks_sent = 1,
		.fins_sent = 1, .finack_answered = 1 });
}

/* Many flows in one go: every handshake validates (cookies per flow). */
static void test_many_connections(void **state)
{
	struct env *e = *state;
	const int n = 2000;

	for (int i = 0; i < n; i++) {
		const struct peer *p = (i & 1) ? &P6 : &P4;
		uint8_t syn[256], synack[256], ack[256], rst[256];
		size_t l1, l2, l3, l4;
		uint16_t sport = (uint16_t)(CPORT_LO + i * 7);
		uint16_t dport = (uint16_t)(PORT_LO + i % 16);

		l1 = client_frame(p, sport, dport, F_SYN, (uint32_t)i * 0x9e3779b9u, 0, 1, 0,
				  syn, sizeof(syn));
		assert_int_equal(run_srv(e, syn, l1, synack, &l2), XDP_TX);
		assert_int_equal(run_cli(e, synack, l2, ack, &l3), XDP_TX);
		assert_int_equal(run_srv(e, ack, l3, rst, &l4), XDP_TX);
		assert_int_equal(run_cli(e, rst, l4, NULL, NULL), XDP_DROP);
	}
	expect_srv(e, (struct xp_counters){ .pkts = 2 * n, .tcp_syn = n, .tcp_ack_only = n,
		.ipv4_pkts = n, .ipv6_pkts = n, .synack_sent = n, .conn_established = n,
		.rst_sent = n });
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = n, .acks_sent = n, .rst_seen = n });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash_reference),
#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_rst_connection_v4, setup_rst),
		T(test_rst_connection_v6, setup_rst),
		T(test_rst_connection_v4_vlan, setup_rst),
		T(test_rst_connection_v6_vlan, setup_rst),
		T(test_fin_connection_v4, setup_fin),
		T(test_fin_connection_v6, setup_fin),
		T(test_close_none, setup_none),
		T(test_keepalives, setup_none),
		T(test_forged_ack, setup_rst),
		T(test_cookie_time_steps, setup_rst),
		T(test_syn_option_variants, setup_rst),
		T(test_data_without_cookie, setup_rst),
		T(test_data_connection_v4, setup_data),
		T(test_data_connection_v6, setup_data),
		T(test_data_connection_v4_vlan, setup_data),
		T(test_data_connection_v6_vlan, setup_data),
		T(test_data_connection_max, setup_data_max),
		T(test_forged_data, setup_data),
		T(test_data_capped_by_synack, setup_data_max),
		T(test_data_close_rst, setup_data_rst),
		T(test_tc_data_connection_v4, setup_data),
		T(test_tc_data_connection_v6, setup_data),
		T(test_tc_data_connection_v4_vlan, setup_data),
		T(test_tc_data_connection_v6_vlan, setup_data_max),
		T(test_tc_passes_the_rest, setup_data),
		T(test_tc_idle_in_other_modes, setup_fin),
		T(test_server_drops_rest, setup_rst),
		T(test_syn_ip_options_not_answered, setup_rst),
		T(test_slot_without_respond, setup_rst),
		T(test_non_test_traffic_passes, setup_rst),
		T(test_client_family_filter, setup_v4only),
		T(test_reply_redirect, setup_redirect),
		T(test_many_connections, setup_rst),
#undef T
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_connection: must run as root (loads BPF programs "
			"and uses BPF_PROG_RUN); not running as root\n");
		return 1;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "test_connection: libbpf_num_possible_cpus: %d\n", ncpus);
		return 1;
	}
	return cmocka_run_group_tests_name("connection", tests, NULL, NULL);
}
