// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the tests of bpf/server.bpf.c share (test_server_prog_traffic.c,
 * test_server_prog_headers.c, test_server_prog_slots.c): a frame builder for
 * hand-built frames, the skeleton's load and per-case setup/teardown (each
 * case loads a fresh skeleton, so map state never leaks between cases), the
 * port and slot maps, BPF_PROG_RUN, and the exact per-slot counters (summed
 * over CPUs) and global stats the cases check. Functions are static inline:
 * not every test file uses every one.
 */
#ifndef XDPPERF_TESTS_SERVER_PROG_FIXTURE_H
#define XDPPERF_TESTS_SERVER_PROG_FIXTURE_H

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
#include "tests/lib/ref_sum.h" /* ref_csum: the tests' one RFC 1071 reference */

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

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v & 0xff;
}


/* build()'s destination MAC: the slot's interface's (set_slot). */
static const uint8_t SRV_DMAC[6] = { 0x02, 0, 0, 0, 0, 0x02 };

/* Writes the frame described by s into buf; returns its length. */
static inline size_t build(const struct fspec *s, uint8_t *buf, size_t cap)
{
	static const uint8_t smac[6] = { 0x02, 0, 0, 0, 0, 0x01 };
	size_t off = 0, l3, l4, l4hdr, l4len;
	uint8_t *p;

	memset(buf, 0, cap);
	memcpy(buf, SRV_DMAC, 6);
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
		put16(p + 10, ref_csum(p, ihl));
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

/* Sends build()'s frame of s elsewhere: its destination address becomes
 * 2001:db8::2, or v4 (host order) with the IPv4 header checksum kept
 * right. A host we would forward to, for the "only our frames" cases. */
static inline void readdress(const struct fspec *s, uint8_t *buf, uint32_t v4)
{
	uint8_t *ip = buf + 14 + 4 * (size_t)s->nvlan;

	if (s->ipv6) {
		ip[24] = 0x20; ip[25] = 0x01; ip[26] = 0x0d; ip[27] = 0xb8; /* 2001:db8::2 */
	} else {
		uint32_t a = htonl(v4);
		size_t ihl = (ip[0] & 15) * 4u;

		memcpy(ip + 16, &a, 4);
		put16(ip + 10, 0);
		put16(ip + 10, ref_csum(ip, ihl));
	}
}

static inline struct fspec tcp4(uint16_t dport, uint8_t flags, unsigned payload)
{
	return (struct fspec){ .l4 = IPPROTO_TCP, .sport = 40000, .dport = dport,
			       .tcp_flags = flags, .payload = payload };
}

static inline struct fspec udp4(uint16_t dport, unsigned payload)
{
	return (struct fspec){ .l4 = IPPROTO_UDP, .sport = 40000, .dport = dport,
			       .payload = payload };
}

/* ---------------------------------------------------------------------- */
/* BPF helpers                                                            */
/* ---------------------------------------------------------------------- */

static int ncpus;

static inline struct server_bpf *load_skel(uint16_t ctrl_port)
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

static inline int setup(void **state)
{
	struct server_bpf *skel = load_skel(CTRL_PORT);

	if (!skel) {
		fprintf(stderr, "server: skeleton load failed: %s\n", strerror(errno));
		return -1;
	}
	*state = skel;
	return 0;
}

static inline int setup_no_ctrl(void **state)
{
	struct server_bpf *skel = load_skel(0);

	if (!skel) {
		fprintf(stderr, "server: skeleton load failed: %s\n", strerror(errno));
		return -1;
	}
	*state = skel;
	return 0;
}

static inline int teardown(void **state)
{
	server_bpf__destroy(*state);
	return 0;
}

static inline void map_port(struct server_bpf *skel, uint32_t port, uint32_t val)
{
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.port_slot),
					     &port, &val, BPF_ANY), 0);
}

/* A slot belongs to an interface, a client and this host: the interface
 * BPF_PROG_RUN runs on (the loopback of this namespace, taken here as an
 * ordinary interface: no XP_SLOT_LOCAL), build()'s source addresses,
 * 10.0.0.1 (the slot's peer) and fd00::1 (in slot_peers, as a --bind
 * address would be), and build()'s destinations: MAC 02:00:00:00:00:02
 * (the slot's mac) and 10.0.0.2 / fd00::2 (the interface's addresses in
 * local_addr, as the loader puts them; 10.0.0.2 in self4 too). */
static inline void set_slot(struct server_bpf *skel, uint32_t slot, uint32_t flags,
		     uint32_t protos)
{
	struct xp_slot_cfg cfg = { .flags = flags, .protos = protos,
				   .ifindex = if_nametoindex("lo"),
				   .peer_family = XP_FAMILY_V4,
				   .peer = { htonl(0x0a000001) }, .npeers = 1 };
	struct xp_peer_key k = { .slot = slot, .family = XP_FAMILY_V6,
				 .addr = { htonl(0xfd000000), 0, 0, htonl(1) } };
	struct xp_local_key l4 = { .ifindex = cfg.ifindex, .family = XP_FAMILY_V4,
				   .addr = { htonl(0x0a000002) } };
	struct xp_local_key l6 = { .ifindex = cfg.ifindex, .family = XP_FAMILY_V6,
				   .addr = { htonl(0xfd000000), 0, 0, htonl(2) } };
	uint32_t one = 1, local = XP_LOCAL_UNICAST;

	assert_int_not_equal(cfg.ifindex, 0);
	memcpy(cfg.mac, SRV_DMAC, 6);
	/* As the loader would, for IPv4 only: IPv4 frames take the program's
	 * no-lookup path, IPv6 ones the local_addr lookup. */
	cfg.self4 = htonl(0x0a000002);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.local_addr),
					     &l4, &local, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.local_addr),
					     &l6, &local, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_peers),
					     &k, &one, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_cfg),
					     &slot, &cfg, BPF_ANY), 0);
}

/* The common setup: TEST_PORT -> TEST_SLOT, active, counting protos. */
static inline void std_slot(struct server_bpf *skel, uint32_t protos)
{
	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE, protos);
}

static inline uint32_t run_n(struct server_bpf *skel, const void *frame, size_t len,
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

static inline uint32_t run(struct server_bpf *skel, const void *frame, size_t len)
{
	return run_n(skel, frame, len, 1);
}

static inline uint32_t run_spec(struct server_bpf *skel, const struct fspec *s,
			 size_t *lenp)
{
	uint8_t buf[2048];
	size_t len = build(s, buf, sizeof(buf));

	if (lenp)
		*lenp = len;
	return run(skel, buf, len);
}

/* Run buf through the program: its verdict, the frame that comes out in
 * out (cap 2048), its length in *olen. */
static inline uint32_t run_out(struct server_bpf *skel, const uint8_t *buf, size_t len, uint8_t *out,
			       size_t *olen)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = 2048);

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_server), &o))
		fail_msg("BPF_PROG_RUN failed: %s", strerror(errno));
	*olen = o.data_size_out;
	return o.retval;
}

static inline struct xp_counters get_counters(struct server_bpf *skel, uint32_t slot)
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

static inline uint64_t get_gstat(struct server_bpf *skel, uint32_t idx)
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
static inline void expect_counters(struct server_bpf *skel, uint32_t slot,
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
static inline void expect_slots_zero(struct server_bpf *skel, int except)
{
	for (int s = 0; s < XP_MAX_SLOTS; s++)
		if (s != except)
			expect_counters(skel, s, (struct xp_counters){ 0 });
}

static inline void expect_gstats(struct server_bpf *skel, uint64_t seen,
			  uint64_t passed, uint64_t malformed)
{
	assert_int_equal(get_gstat(skel, XP_G_SEEN), seen);
	assert_int_equal(get_gstat(skel, XP_G_PASSED), passed);
	assert_int_equal(get_gstat(skel, XP_G_MALFORMED), malformed);
}


/* main()'s checks before the cases: root, the CPU count the counters are
 * summed over, and one load of the program, so that an unusable BPF fails
 * loudly once, up front. 0 to go on, 1 (the exit status) if not. */
static inline int server_prog_init(const char *prog)
{
	struct server_bpf *probe;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: must run as root (loads BPF "
			"programs and uses BPF_PROG_RUN); not running as root\n", prog);
		return 1;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "%s: libbpf_num_possible_cpus: %d\n", prog, ncpus);
		return 1;
	}
	/* Fail loudly once, up front, if BPF is unusable here. */
	probe = load_skel(CTRL_PORT);
	if (!probe) {
		fprintf(stderr, "%s: cannot load the server BPF program "
			"(%s): BPF unavailable or verifier rejected it\n",
			prog, strerror(errno));
		return 1;
	}
	server_bpf__destroy(probe);
	return 0;
}

#endif
