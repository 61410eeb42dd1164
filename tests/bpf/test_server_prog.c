// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/server.bpf.c: hand-built frames run through the loaded
 * program with BPF_PROG_RUN; check verdicts and the exact per-slot counters
 * (summed over CPUs) and global stats. Needs root (CAP_BPF + CAP_NET_ADMIN).
 *
 * Each test loads a fresh skeleton, so map state never leaks between tests.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
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
#include "bpf/server.skel.h"

#define CTRL_PORT   5201
#define TEST_PORT   9000
#define OTHER_PORT  9001
#define TEST_SLOT   3

/* TCP flag bits (header byte 13). */
#define F_FIN 0x01
#define F_SYN 0x02
#define F_RST 0x04
#define F_PSH 0x08
#define F_ACK 0x10

/* ---------------------------------------------------------------------- */
/* Frame builder                                                          */
/* ---------------------------------------------------------------------- */

struct fspec {
	int ipv6;
	int nvlan;              /* VLAN tags, outer first */
	uint16_t tpid[3];       /* 0 = 802.1Q */
	uint8_t l4;             /* IPPROTO_TCP/UDP/ICMP/ICMPV6/any */
	uint16_t sport, dport;
	uint8_t tcp_flags;
	unsigned tcp_opt;       /* TCP option bytes, multiple of 4 */
	unsigned ip_opt;        /* IPv4 option bytes, multiple of 4 */
	unsigned payload;       /* L4 payload bytes */
	uint16_t frag;          /* IPv4 flags|fragment offset, host order */
	unsigned pad_to;        /* zero-pad the frame (Ethernet minimum 60) */
};

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}

static uint16_t csum16(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (p[i] << 8) | p[i + 1];
	if (len & 1)
		sum += p[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum & 0xffff;
}

/* Writes the frame described by s into buf; returns its length. */
static size_t build(const struct fspec *s, uint8_t *buf, size_t cap)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	size_t off = 0, l3, l4, l4hdr, l4len;
	uint8_t *p;

	memset(buf, 0, cap);
	memcpy(buf, dmac, 6);
	memcpy(buf + 6, smac, 6);
	off = 12;
	for (int i = 0; i < s->nvlan; i++) {
		put16(buf + off, s->tpid[i] ? s->tpid[i] : ETH_P_8021Q);
		put16(buf + off + 2, 100 + i); /* VID */
		off += 4;
	}
	put16(buf + off, s->ipv6 ? ETH_P_IPV6 : ETH_P_IP);
	off += 2;

	switch (s->l4) {
	case IPPROTO_TCP:
		l4hdr = 20 + s->tcp_opt;
		break;
	case IPPROTO_UDP:
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		l4hdr = 8;
		break;
	default:
		l4hdr = 0;
	}
	l4len = l4hdr + s->payload;

	l3 = off;
	if (s->ipv6) {
		p = buf + l3;
		p[0] = 0x60;
		put16(p + 4, l4len);
		p[6] = s->l4;
		p[7] = 64;
		p[8] = 0xfd;  p[23] = 1;  /* fd00::1 */
		p[24] = 0xfd; p[39] = 2;  /* fd00::2 */
		l4 = l3 + 40;
	} else {
		size_t ihl = 20 + s->ip_opt;

		p = buf + l3;
		p[0] = 0x40 | (ihl / 4);
		put16(p + 2, ihl + l4len);
		put16(p + 4, 0x1234);
		put16(p + 6, s->frag);
		p[8] = 64;
		p[9] = s->l4;
		p[12] = 10; p[15] = 1;    /* 10.0.0.1 */
		p[16] = 10; p[19] = 2;    /* 10.0.0.2 */
		memset(p + 20, 1, s->ip_opt); /* NOP options */
		put16(p + 10, csum16(p, ihl));
		l4 = l3 + ihl;
	}

	p = buf + l4;
	switch (s->l4) {
	case IPPROTO_TCP:
		put16(p, s->sport);
		put16(p + 2, s->dport);
		p[7] = 1;                             /* seq */
		p[12] = ((20 + s->tcp_opt) / 4) << 4; /* data offset */
		p[13] = s->tcp_flags;
		put16(p + 14, 65535);
		memset(p + 20, 1, s->tcp_opt);        /* NOP options */
		break;
	case IPPROTO_UDP:
		put16(p, s->sport);
		put16(p + 2, s->dport);
		put16(p + 4, l4len);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		p[0] = s->l4 == IPPROTO_ICMP ? 8 : 128; /* echo request */
		put16(p + 4, 0x4242);
		put16(p + 6, 1);
		break;
	}
	memset(p + l4hdr, 0xab, s->payload);

	off = l4 + l4len;
	if (off < s->pad_to)
		off = s->pad_to;
	assert_true(off <= cap);
	return off;
}

static struct fspec tcp4(uint16_t dport, uint8_t flags, unsigned payload)
{
	return (struct fspec){ .l4 = IPPROTO_TCP, .sport = 40000, .dport = dport,
			       .tcp_flags = flags, .payload = payload };
}

static struct fspec udp4(uint16_t dport, unsigned payload)
{
	return (struct fspec){ .l4 = IPPROTO_UDP, .sport = 40000, .dport = dport,
			       .payload = payload };
}

/* ---------------------------------------------------------------------- */
/* BPF helpers                                                            */
/* ---------------------------------------------------------------------- */

static int ncpus;

static struct server_bpf *load_skel(uint16_t ctrl_port)
{
	struct server_bpf *skel = server_bpf__open();

	if (!skel)
		return NULL;
	skel->rodata->config.ctrl_port = ctrl_port;
	if (server_bpf__load(skel)) {
		server_bpf__destroy(skel);
		return NULL;
	}
	return skel;
}

static int setup(void **state)
{
	struct server_bpf *skel = load_skel(CTRL_PORT);

	if (!skel) {
		fprintf(stderr, "server: skeleton load failed: %s\n", strerror(errno));
		return -1;
	}
	*state = skel;
	return 0;
}

static int setup_no_ctrl(void **state)
{
	struct server_bpf *skel = load_skel(0);

	if (!skel) {
		fprintf(stderr, "server: skeleton load failed: %s\n", strerror(errno));
		return -1;
	}
	*state = skel;
	return 0;
}

static int teardown(void **state)
{
	server_bpf__destroy(*state);
	return 0;
}

static void map_port(struct server_bpf *skel, uint32_t port, uint32_t val)
{
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.port_slot),
					     &port, &val, BPF_ANY), 0);
}

/* A slot belongs to an interface and a client: the interface BPF_PROG_RUN
 * runs on (the loopback of this namespace) and build()'s source addresses,
 * 10.0.0.1 (the slot's peer) and fd00::1 (in slot_peers, as a --bind
 * address would be). */
static void set_slot(struct server_bpf *skel, uint32_t slot, uint32_t flags,
		     uint32_t protos)
{
	struct xp_slot_cfg cfg = { .flags = flags, .protos = protos,
				   .ifindex = if_nametoindex("lo"),
				   .peer_family = XP_FAMILY_V4,
				   .peer = { htonl(0x0a000001) }, .npeers = 1 };
	struct xp_peer_key k = { .slot = slot, .family = XP_FAMILY_V6,
				 .addr = { htonl(0xfd000000), 0, 0, htonl(1) } };
	uint32_t one = 1;

	assert_int_not_equal(cfg.ifindex, 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_peers),
					     &k, &one, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_cfg),
					     &slot, &cfg, BPF_ANY), 0);
}

/* The common setup: TEST_PORT -> TEST_SLOT, active, counting protos. */
static void std_slot(struct server_bpf *skel, uint32_t protos)
{
	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE, protos);
}

static uint32_t run_n(struct server_bpf *skel, const void *frame, size_t len,
		      int repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = frame,
		.data_size_in = len,
		.repeat = repeat,
	);
	int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_server),
					 &opts);

	if (err)
		fail_msg("BPF_PROG_RUN failed: %s (len %zu)", strerror(errno), len);
	return opts.retval;
}

static uint32_t run(struct server_bpf *skel, const void *frame, size_t len)
{
	return run_n(skel, frame, len, 1);
}

static uint32_t run_spec(struct server_bpf *skel, const struct fspec *s,
			 size_t *lenp)
{
	uint8_t buf[2048];
	size_t len = build(s, buf, sizeof(buf));

	if (lenp)
		*lenp = len;
	return run(skel, buf, len);
}

static struct xp_counters get_counters(struct server_bpf *skel, uint32_t slot)
{
	struct xp_counters *v = calloc(ncpus, sizeof(*v)), sum = { 0 };
	const size_t nf = sizeof(sum) / sizeof(__u64);

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters),
					     &slot, v), 0);
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < nf; f++)
			((__u64 *)&sum)[f] += ((__u64 *)&v[c])[f];
	free(v);
	return sum;
}

static uint64_t get_gstat(struct server_bpf *skel, uint32_t idx)
{
	uint64_t *v = calloc(ncpus, sizeof(*v)), sum = 0;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.gstats),
					     &idx, v), 0);
	for (int c = 0; c < ncpus; c++)
		sum += v[c];
	free(v);
	return sum;
}

static const struct {
	const char *name;
	size_t off;
} cfields[] = {
#define F(x) { #x, offsetof(struct xp_counters, x) }
	F(pkts), F(bytes), F(tcp_syn), F(tcp_synack), F(tcp_fin), F(tcp_rst),
	F(tcp_ack_only), F(data_pkts), F(data_bytes), F(udp_pkts),
	F(ipv4_pkts), F(ipv6_pkts),
	F(conn_established), F(cookie_invalid), F(synack_sent), F(fin_answered),
	F(rst_sent), F(noreply_addr), F(noreply_shape), F(noreply_csum),
	F(noreply_room), F(noreply_other), F(keepalives), F(keepalive_unchecked),
#undef F
};

/* Every field of the slot's summed counters must equal want (unnamed = 0). */
static void expect_counters(struct server_bpf *skel, uint32_t slot,
			    struct xp_counters want)
{
	struct xp_counters got = get_counters(skel, slot);
	int bad = 0;

	/* Keep the name table in step with the struct. */
	assert_int_equal(sizeof(cfields) / sizeof(cfields[0]),
			 sizeof(struct xp_counters) / sizeof(__u64));
	for (size_t i = 0; i < sizeof(cfields) / sizeof(cfields[0]); i++) {
		__u64 g = *(__u64 *)((char *)&got + cfields[i].off);
		__u64 w = *(__u64 *)((char *)&want + cfields[i].off);

		if (g != w) {
			print_error("slot %u %s: got %llu, want %llu\n", slot,
				    cfields[i].name, (unsigned long long)g,
				    (unsigned long long)w);
			bad = 1;
		}
	}
	if (bad)
		fail_msg("slot %u counters differ", slot);
}

/* All slots except `except` (-1: all) must be untouched. */
static void expect_slots_zero(struct server_bpf *skel, int except)
{
	for (int s = 0; s < XP_MAX_SLOTS; s++)
		if (s != except)
			expect_counters(skel, s, (struct xp_counters){ 0 });
}

static void expect_gstats(struct server_bpf *skel, uint64_t seen,
			  uint64_t passed, uint64_t malformed)
{
	assert_int_equal(get_gstat(skel, XP_G_SEEN), seen);
	assert_int_equal(get_gstat(skel, XP_G_PASSED), passed);
	assert_int_equal(get_gstat(skel, XP_G_MALFORMED), malformed);
}

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

static void test_ipv4_tcp_data_dropped(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK | F_PSH, 100);
	size_t len;

	std_slot(skel, XP_PROTO_TCP);
	assert_int_equal(run_spec(skel, &s, &len), XDP_DROP);
	assert_int_equal(len, 154); /* 14 + 20 + 20 + 100 */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 154, .data_pkts = 1, .data_bytes = 100,
		.ipv4_pkts = 1 });
	expect_slots_zero(skel, TEST_SLOT);
	expect_gstats(skel, 1, 0, 0);
}

static void test_ipv6_tcp_syn(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_SYN, 0);
	size_t len;

	s.ipv6 = 1;
	s.tcp_opt = 20; /* MSS, SACK, TS, WS as a SYN carries them */
	std_slot(skel, XP_PROTO_TCP);
	assert_int_equal(run_spec(skel, &s, &len), XDP_DROP);
	assert_int_equal(len, 94); /* 14 + 40 + 40 */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 94, .tcp_syn = 1, .ipv6_pkts = 1 });
	expect_gstats(skel, 1, 0, 0);
}

static void test_ipv6_tcp_data(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK, 1000);
	size_t len;

	s.ipv6 = 1;
	s.tcp_opt = 12; /* timestamps */
	std_slot(skel, XP_PROTO_TCP);
	assert_int_equal(run_spec(skel, &s, &len), XDP_DROP);
	assert_int_equal(len, 1086); /* 14 + 40 + 32 + 1000 */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 1086, .data_pkts = 1, .data_bytes = 1000,
		.ipv6_pkts = 1 });
	expect_gstats(skel, 1, 0, 0);
}

static void test_udp_counted(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s4 = udp4(TEST_PORT, 200), s6 = udp4(TEST_PORT, 64);

	s6.ipv6 = 1;
	std_slot(skel, XP_PROTO_UDP);
	assert_int_equal(run_spec(skel, &s4, NULL), XDP_DROP); /* 242 bytes */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 242, .udp_pkts = 1, .data_pkts = 1,
		.data_bytes = 200, .ipv4_pkts = 1 });
	assert_int_equal(run_spec(skel, &s6, NULL), XDP_DROP); /* 14+40+8+64 = 126 */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 2, .bytes = 242 + 126, .udp_pkts = 2, .data_pkts = 2,
		.data_bytes = 264, .ipv4_pkts = 1, .ipv6_pkts = 1 });
	expect_gstats(skel, 2, 0, 0);
}

static void test_proto_not_in_slot_passed(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec u = udp4(TEST_PORT, 200), t = tcp4(TEST_PORT, F_ACK, 10);

	/* TCP-only slot: UDP to its port is passed, not counted. */
	std_slot(skel, XP_PROTO_TCP);
	assert_int_equal(run_spec(skel, &u, NULL), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 1, 1, 0);

	/* And the other way round. */
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE, XP_PROTO_UDP);
	assert_int_equal(run_spec(skel, &t, NULL), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 2, 2, 0);

	/* Both: both counted. */
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE, XP_PROTO_TCP | XP_PROTO_UDP);
	assert_int_equal(run_spec(skel, &u, NULL), XDP_DROP);
	assert_int_equal(run_spec(skel, &t, NULL), XDP_DROP); /* 64 bytes */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 2, .bytes = 242 + 64, .udp_pkts = 1, .data_pkts = 2,
		.data_bytes = 210, .ipv4_pkts = 2 });
	expect_gstats(skel, 4, 2, 0);
}

static void test_vlan_tagged(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec q = tcp4(TEST_PORT, F_ACK, 10);
	struct fspec qinq = q, v6 = udp4(TEST_PORT, 30), three = q;
	size_t len;

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);

	q.nvlan = 1;                               /* 802.1Q */
	assert_int_equal(run_spec(skel, &q, &len), XDP_DROP);
	assert_int_equal(len, 68);                 /* 14 + 4 + 20 + 20 + 10 */

	qinq.nvlan = 2;                            /* 802.1AD outer, 802.1Q inner */
	qinq.tpid[0] = ETH_P_8021AD;
	assert_int_equal(run_spec(skel, &qinq, &len), XDP_DROP);
	assert_int_equal(len, 72);

	v6.ipv6 = 1;                               /* 802.1Q, IPv6 UDP */
	v6.nvlan = 1;
	assert_int_equal(run_spec(skel, &v6, &len), XDP_DROP);
	assert_int_equal(len, 96);                 /* 14 + 4 + 40 + 8 + 30 */

	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 3, .bytes = 68 + 72 + 96, .udp_pkts = 1, .data_pkts = 3,
		.data_bytes = 50, .ipv4_pkts = 2, .ipv6_pkts = 1 });
	expect_gstats(skel, 3, 0, 0);

	/* Deeper than two tags is not parsed: passed as non-IP, not malformed. */
	three.nvlan = 3;
	assert_int_equal(run_spec(skel, &three, NULL), XDP_PASS);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 3, .bytes = 68 + 72 + 96, .udp_pkts = 1, .data_pkts = 3,
		.data_bytes = 50, .ipv4_pkts = 2, .ipv6_pkts = 1 });
	expect_gstats(skel, 4, 1, 0);
}

static void test_short_frame_padding(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec u = udp4(TEST_PORT, 4), a = tcp4(TEST_PORT, F_ACK, 0);
	size_t len;

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);

	/* 46 bytes of IPv4/UDP padded to the 60-byte Ethernet minimum: the
	 * 14 pad bytes must not be counted as payload. */
	u.pad_to = 60;
	assert_int_equal(run_spec(skel, &u, &len), XDP_DROP);
	assert_int_equal(len, 60);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 60, .udp_pkts = 1, .data_pkts = 1,
		.data_bytes = 4, .ipv4_pkts = 1 });

	/* 54-byte pure ACK padded to 60: still a pure ACK with no data. */
	a.pad_to = 60;
	assert_int_equal(run_spec(skel, &a, &len), XDP_DROP);
	assert_int_equal(len, 60);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 2, .bytes = 120, .udp_pkts = 1, .data_pkts = 1,
		.data_bytes = 4, .tcp_ack_only = 1, .ipv4_pkts = 2 });
	expect_gstats(skel, 2, 0, 0);
}

static void test_tcp_flag_classification(void **state)
{
	struct server_bpf *skel = *state;
	/* One row per frame: flags, payload, and what it must add. */
	static const struct {
		uint8_t flags;
		unsigned payload;
		struct xp_counters add;
	} rows[] = {
		{ F_SYN | F_ACK, 0,  { .pkts = 1, .bytes = 60, .tcp_synack = 1 } },
		{ F_SYN,         0,  { .pkts = 1, .bytes = 60, .tcp_syn = 1 } },
		{ F_FIN | F_ACK, 0,  { .pkts = 1, .bytes = 60, .tcp_fin = 1 } },
		{ F_RST,         0,  { .pkts = 1, .bytes = 60, .tcp_rst = 1 } },
		{ F_RST | F_ACK, 0,  { .pkts = 1, .bytes = 60, .tcp_rst = 1 } },
		{ F_ACK,         0,  { .pkts = 1, .bytes = 60, .tcp_ack_only = 1 } },
		{ F_ACK | F_PSH, 0,  { .pkts = 1, .bytes = 60, .tcp_ack_only = 1 } },
		{ F_ACK | F_PSH, 50, { .pkts = 1, .bytes = 104, .data_pkts = 1,
				       .data_bytes = 50 } },
		{ F_FIN | F_ACK, 10, { .pkts = 1, .bytes = 64, .tcp_fin = 1,
				       .data_pkts = 1, .data_bytes = 10 } },
		{ 0,             0,  { .pkts = 1, .bytes = 60 } }, /* null scan */
	};
	struct xp_counters want = { 0 };

	std_slot(skel, XP_PROTO_TCP);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct fspec s = tcp4(TEST_PORT, rows[i].flags, rows[i].payload);

		s.pad_to = 60;
		assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
		for (size_t f = 0; f < sizeof(want) / sizeof(__u64); f++)
			((__u64 *)&want)[f] += ((const __u64 *)&rows[i].add)[f];
		want.ipv4_pkts++;
		expect_counters(skel, TEST_SLOT, want);
	}
	assert_int_equal(want.pkts, 10);
	assert_int_equal(want.tcp_rst, 2);
	assert_int_equal(want.tcp_ack_only, 2);
	expect_gstats(skel, 10, 0, 0);
}

static void test_non_test_port_passed(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec t = tcp4(OTHER_PORT, F_ACK, 100), u = udp4(OTHER_PORT, 100);

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	assert_int_equal(run_spec(skel, &t, NULL), XDP_PASS);
	assert_int_equal(run_spec(skel, &u, NULL), XDP_PASS);
	/* Test port as the SOURCE port is not a match either. */
	t.sport = TEST_PORT;
	t.dport = 40000;
	assert_int_equal(run_spec(skel, &t, NULL), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 3, 3, 0);
}

static void test_arp_passed(void **state)
{
	struct server_bpf *skel = *state;
	/* ARP who-has 10.0.0.2 tell 10.0.0.1, padded to 60 bytes. */
	uint8_t arp[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0, 0, 0, 0, 0x01,
		0x08, 0x06,                         /* EtherType ARP */
		0x00, 0x01, 0x08, 0x00, 6, 4,       /* Ethernet/IPv4 */
		0x00, 0x01,                         /* request */
		0x02, 0, 0, 0, 0, 0x01, 10, 0, 0, 1,
		0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
	};

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	assert_int_equal(run(skel, arp, sizeof(arp)), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 1, 1, 0);
}

static void test_icmp_passed(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec e4 = { .l4 = IPPROTO_ICMP, .payload = 56 };
	struct fspec e6 = { .ipv6 = 1, .l4 = IPPROTO_ICMPV6, .payload = 56 };

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	/* Port 0 must not be a test port, but map it anyway: ICMP has no
	 * ports and must not be read as if it had. */
	map_port(skel, 0, TEST_SLOT + 1);
	map_port(skel, 0x0800 /* echo type/code as a "port" */, TEST_SLOT + 1);
	assert_int_equal(run_spec(skel, &e4, NULL), XDP_PASS);
	assert_int_equal(run_spec(skel, &e6, NULL), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 2, 2, 0);
}

static void test_control_port_passed(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(CTRL_PORT, F_ACK | F_PSH, 40);

	/* Even if userspace maps the control port, it is never counted. */
	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	map_port(skel, CTRL_PORT, TEST_SLOT + 1);

	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);        /* dst */
	s.sport = CTRL_PORT;
	s.dport = TEST_PORT;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);        /* src */
	s.ipv6 = 1;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);        /* v6 src */
	s = tcp4(CTRL_PORT, F_SYN, 0);
	s.ipv6 = 1;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);        /* v6 SYN dst */
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 4, 4, 0);

	/* The exemption is for the TCP control connection only. */
	s = udp4(CTRL_PORT, 10);
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 52, .udp_pkts = 1, .data_pkts = 1,
		.data_bytes = 10, .ipv4_pkts = 1 });
	expect_gstats(skel, 5, 4, 0);
}

static void test_control_port_unset(void **state)
{
	struct server_bpf *skel = *state; /* loaded with ctrl_port = 0 */
	struct fspec s = tcp4(CTRL_PORT, F_ACK, 0);

	assert_int_equal(skel->rodata->config.ctrl_port, 0);
	std_slot(skel, XP_PROTO_TCP);
	map_port(skel, CTRL_PORT, TEST_SLOT + 1);
	s.pad_to = 60;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 60, .tcp_ack_only = 1, .ipv4_pkts = 1 });
	/* And port 0 as a source port is not special either. */
	s = tcp4(TEST_PORT, F_ACK, 0);
	s.sport = 0;
	s.pad_to = 60;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	expect_gstats(skel, 2, 0, 0);
}

static void test_malformed_passed(void **state)
{
	struct server_bpf *skel = *state;
	uint8_t buf[256];
	struct fspec t = tcp4(TEST_PORT, F_ACK, 0), u = udp4(TEST_PORT, 0);
	uint64_t seen = 0, bad = 0;
	size_t len;

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);

#define EXPECT_MALFORMED(frame, flen) do {                                 \
		assert_int_equal(run(skel, frame, flen), XDP_PASS);          \
		seen++;                                                      \
		bad++;                                                       \
		expect_gstats(skel, seen, 0, bad);                           \
	} while (0)

	/* 20 bytes: Ethernet + 6 bytes of an IPv4 header. */
	len = build(&t, buf, sizeof(buf));
	EXPECT_MALFORMED(buf, 20);
	/* Ethernet header alone, EtherType IPv4 / IPv6. */
	EXPECT_MALFORMED(buf, 14);
	t.ipv6 = 1;
	build(&t, buf, sizeof(buf));
	EXPECT_MALFORMED(buf, 14);
	/* IPv6 header cut short. */
	EXPECT_MALFORMED(buf, 14 + 30);
	/* IPv6 with TCP header cut short. */
	EXPECT_MALFORMED(buf, 14 + 40 + 10);
	t.ipv6 = 0;
	/* VLAN tag cut short, and a second tag cut short. */
	t.nvlan = 1;
	build(&t, buf, sizeof(buf));
	EXPECT_MALFORMED(buf, 14);
	EXPECT_MALFORMED(buf, 16);
	t.nvlan = 2;
	build(&t, buf, sizeof(buf));
	EXPECT_MALFORMED(buf, 18 + 2);
	t.nvlan = 0;

	/* IHL < 5. */
	len = build(&t, buf, sizeof(buf));
	buf[14] = 0x44;
	EXPECT_MALFORMED(buf, len);
	/* IHL 15 (60-byte header) but only 40 bytes of IP in the frame. */
	buf[14] = 0x4f;
	EXPECT_MALFORMED(buf, len);
	/* Version 6 in an IPv4 EtherType. */
	buf[14] = 0x65;
	EXPECT_MALFORMED(buf, len);
	/* tot_len larger than the frame (IP datagram truncated). */
	len = build(&t, buf, sizeof(buf));
	put16(buf + 16, 1000);
	EXPECT_MALFORMED(buf, len);
	/* tot_len smaller than the IP header. */
	put16(buf + 16, 10);
	EXPECT_MALFORMED(buf, len);
	/* TCP header cut: IPv4 says 30 bytes, frame has them, TCP needs 20. */
	put16(buf + 16, 30);
	EXPECT_MALFORMED(buf, 14 + 30);
	/* Same, but Ethernet padding makes 20 bytes of "TCP" visible: the IP
	 * length still says the header is not there. */
	EXPECT_MALFORMED(buf, 60);
	/* TCP data offset < 5. */
	len = build(&t, buf, sizeof(buf));
	buf[14 + 20 + 12] = 0x40;
	EXPECT_MALFORMED(buf, len);
	/* TCP data offset 15 but the segment is only 20 bytes long. */
	buf[14 + 20 + 12] = 0xf0;
	EXPECT_MALFORMED(buf, len);
	/* TCP data offset 15 with 40 bytes of "payload" in the frame: the
	 * options fit the frame but the IP length still rules. */
	t.payload = 40;
	len = build(&t, buf, sizeof(buf));
	buf[14 + 20 + 12] = 0xf0;
	assert_int_equal(run(skel, buf, len), XDP_DROP); /* 60-byte TCP header */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = len, .ipv4_pkts = 1, .tcp_ack_only = 1 });
	expect_gstats(skel, ++seen, 0, bad);
	t.payload = 0;
	/* UDP: IPv4 says 4 bytes of L4, padding makes the frame 60 bytes. */
	u.pad_to = 60;
	len = build(&u, buf, sizeof(buf));
	put16(buf + 16, 24);
	EXPECT_MALFORMED(buf, len);
	/* IPv6 payload_len larger than the frame. */
	u.ipv6 = 1;
	u.pad_to = 0;
	len = build(&u, buf, sizeof(buf));
	put16(buf + 18, 200);
	EXPECT_MALFORMED(buf, len);
#undef EXPECT_MALFORMED
	assert_int_equal(bad, 19);
	/* Only the valid option-carrying frame was counted. */
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 1);
	expect_slots_zero(skel, TEST_SLOT);
}

static void test_pass_slot(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK | F_PSH, 100);

	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_PASS, XP_PROTO_TCP);
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1, .bytes = 154, .data_pkts = 1, .data_bytes = 100,
		.ipv4_pkts = 1 });
	/* Counted test traffic is not a "passed non-test frame". */
	expect_gstats(skel, 1, 0, 0);
}

static void test_inactive_slot(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK | F_PSH, 100);

	/* Port mapped and protos set, but ACTIVE clear (test torn down). */
	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_PASS, XP_PROTO_TCP);
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	/* Slot config never written at all (all zero). */
	map_port(skel, OTHER_PORT, 10 + 1);
	s.dport = OTHER_PORT;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 2, 2, 0);
}

static void test_slot_out_of_range(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK, 10);

	set_slot(skel, XP_MAX_SLOTS - 1, XP_SLOT_ACTIVE, XP_PROTO_TCP);
	map_port(skel, TEST_PORT, XP_MAX_SLOTS + 1); /* slot 64: no such slot */
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	map_port(skel, TEST_PORT, UINT32_MAX);
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 2, 2, 0);

	/* The last valid slot works. */
	map_port(skel, TEST_PORT, XP_MAX_SLOTS);
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	expect_counters(skel, XP_MAX_SLOTS - 1, (struct xp_counters){
		.pkts = 1, .bytes = 64, .data_pkts = 1, .data_bytes = 10,
		.ipv4_pkts = 1 });
	expect_slots_zero(skel, XP_MAX_SLOTS - 1);
}

static void test_slots_separate(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec a = tcp4(TEST_PORT, F_ACK, 10), b = udp4(OTHER_PORT, 100);

	map_port(skel, TEST_PORT, 0 + 1);
	map_port(skel, OTHER_PORT, 5 + 1);
	set_slot(skel, 0, XP_SLOT_ACTIVE, XP_PROTO_TCP);
	set_slot(skel, 5, XP_SLOT_ACTIVE | XP_SLOT_PASS, XP_PROTO_UDP);
	assert_int_equal(run_spec(skel, &a, NULL), XDP_DROP);
	assert_int_equal(run_spec(skel, &b, NULL), XDP_PASS);
	assert_int_equal(run_spec(skel, &b, NULL), XDP_PASS);
	expect_counters(skel, 0, (struct xp_counters){
		.pkts = 1, .bytes = 64, .data_pkts = 1, .data_bytes = 10,
		.ipv4_pkts = 1 });
	expect_counters(skel, 5, (struct xp_counters){
		.pkts = 2, .bytes = 284, .udp_pkts = 2, .data_pkts = 2,
		.data_bytes = 200, .ipv4_pkts = 2 });
	for (int sl = 1; sl < XP_MAX_SLOTS; sl++)
		if (sl != 5)
			expect_counters(skel, sl, (struct xp_counters){ 0 });
	expect_gstats(skel, 3, 0, 0);
}

static void test_ipv4_fragments(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK, 100);

	std_slot(skel, XP_PROTO_TCP);
	/* First fragment (MF, offset 0): has the TCP header, but the rest of
	 * the datagram goes to the stack's reassembly: passed, not counted
	 * (issue 9: it used to be counted and dropped). */
	s.frag = 0x2000;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){ 0 });
	/* DF is not fragmentation. */
	s.frag = 0x4000;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 2, .bytes = 308, .data_pkts = 2, .data_bytes = 200,
		.ipv4_pkts = 2 });
	/* Later fragments (offset 1480, last and middle) whose data happens
	 * to look like a TCP header to the test port: passed. */
	s.frag = 185;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	s.frag = 0x2000 | 185;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_PASS);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 2, .bytes = 308, .data_pkts = 2, .data_bytes = 200,
		.ipv4_pkts = 2 });
	expect_gstats(skel, 5, 3, 0);
	assert_int_equal(get_gstat(skel, XP_G_FRAGMENT), 3);
}

static void test_ip_and_tcp_options(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK | F_PSH, 33);
	size_t len;

	std_slot(skel, XP_PROTO_TCP);
	s.ip_opt = 12;  /* IHL 8 */
	s.tcp_opt = 12; /* doff 8 */
	assert_int_equal(run_spec(skel, &s, &len), XDP_DROP);
	assert_int_equal(len, 111); /* 14 + 32 + 32 + 33 */
	s.ip_opt = 40;  /* IHL 15, the maximum */
	s.tcp_opt = 40; /* doff 15, the maximum */
	s.payload = 0;
	assert_int_equal(run_spec(skel, &s, &len), XDP_DROP);
	assert_int_equal(len, 134); /* 14 + 60 + 60 */
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 2, .bytes = 245, .data_pkts = 1, .data_bytes = 33,
		.tcp_ack_only = 1, .ipv4_pkts = 2 });
	expect_gstats(skel, 2, 0, 0);
}

static void test_ipv6_ext_header_passed(void **state)
{
	struct server_bpf *skel = *state;
	uint8_t buf[256];
	struct fspec s = tcp4(TEST_PORT, F_ACK, 10);
	size_t len;

	std_slot(skel, XP_PROTO_TCP);
	/* Insert an 8-byte hop-by-hop header before a TCP header to the
	 * test port: extension headers are not walked, so it is passed. */
	s.ipv6 = 1;
	len = build(&s, buf, sizeof(buf));
	memmove(buf + 14 + 48, buf + 14 + 40, len - 54);
	memset(buf + 14 + 40, 0, 8);
	buf[14 + 40] = IPPROTO_TCP; /* HBH next header */
	buf[14 + 6] = 0;            /* IPv6 next header: hop-by-hop */
	put16(buf + 14 + 4, len - 54 + 8);
	len += 8;
	assert_int_equal(run(skel, buf, len), XDP_PASS);
	expect_slots_zero(skel, -1);
	expect_gstats(skel, 1, 1, 0);
}

static void test_repeat(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_ACK | F_PSH, 100);
	uint8_t buf[256];
	size_t len = build(&s, buf, sizeof(buf));

	std_slot(skel, XP_PROTO_TCP);
	assert_int_equal(len, 154);
	assert_int_equal(run_n(skel, buf, len, 1000), XDP_DROP);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){
		.pkts = 1000, .bytes = 154000, .data_pkts = 1000,
		.data_bytes = 100000, .ipv4_pkts = 1000 });
	expect_gstats(skel, 1000, 0, 0);
}

/* SEEN == counted + PASSED + MALFORMED over a mixed batch. */
static void test_gstats_invariant(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec ok = tcp4(TEST_PORT, F_ACK, 10), other = udp4(OTHER_PORT, 10);
	uint8_t buf[256];
	size_t len;

	std_slot(skel, XP_PROTO_TCP);
	len = build(&ok, buf, sizeof(buf));
	assert_int_equal(run_n(skel, buf, len, 7), XDP_DROP);
	assert_int_equal(run_n(skel, buf, 20, 3), XDP_PASS);       /* malformed */
	len = build(&other, buf, sizeof(buf));
	assert_int_equal(run_n(skel, buf, len, 5), XDP_PASS);      /* passed */
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 7);
	expect_gstats(skel, 15, 5, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_ipv4_tcp_data_dropped),
		T(test_ipv6_tcp_syn),
		T(test_ipv6_tcp_data),
		T(test_udp_counted),
		T(test_proto_not_in_slot_passed),
		T(test_vlan_tagged),
		T(test_short_frame_padding),
		T(test_tcp_flag_classification),
		T(test_non_test_port_passed),
		T(test_arp_passed),
		T(test_icmp_passed),
		T(test_control_port_passed),
		cmocka_unit_test_setup_teardown(test_control_port_unset,
						setup_no_ctrl, teardown),
		T(test_malformed_passed),
		T(test_pass_slot),
		T(test_inactive_slot),
		T(test_slot_out_of_range),
		T(test_slots_separate),
		T(test_ipv4_fragments),
		T(test_ip_and_tcp_options),
		T(test_ipv6_ext_header_passed),
		T(test_repeat),
		T(test_gstats_invariant),
#undef T
	};
	struct server_bpf *probe;

	if (geteuid() != 0) {
		fprintf(stderr, "test_server_prog: must run as root (loads BPF "
			"programs and uses BPF_PROG_RUN); not running as root\n");
		return 1;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "test_server_prog: libbpf_num_possible_cpus: %d\n", ncpus);
		return 1;
	}
	/* Fail loudly once, up front, if BPF is unusable here. */
	probe = load_skel(CTRL_PORT);
	if (!probe) {
		fprintf(stderr, "test_server_prog: cannot load the server BPF program "
			"(%s): BPF unavailable or verifier rejected it\n",
			strerror(errno));
		return 1;
	}
	server_bpf__destroy(probe);

	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
