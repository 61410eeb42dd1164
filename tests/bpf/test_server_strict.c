// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The server's XDP program as a hostile peer meets it (issue 9, findings 5
 * and 6): a test's slot belongs to its interface and its client, and the
 * SYN-cookie responder answers only what a TCP stack would. Frames go
 * through the loaded program with BPF_PROG_RUN; every reply is parsed and
 * its checksums verified by tests/bpf/wire.h, written from the RFCs and
 * sharing no code with the program.
 *
 *  - frames from anyone but the test's client, or on another interface,
 *    pass untouched and uncounted;
 *  - a SYN of the client to an address that is not the interface's, to a
 *    broadcast or multicast address or MAC, or to another station's MAC, is
 *    not the test's (not addressed to this host: issue 28): it passes
 *    untouched, uncounted and unanswered;
 *  - a SYN from a broadcast or multicast MAC, from a martian source
 *    (broadcast, multicast, 0/8, loopback, ::, ::1, our own address), or
 *    with a bad TCP checksum is counted and not answered;
 *  - the checksum is checked over every length, across the check's 512-byte
 *    chunks, odd lengths and Ethernet padding included;
 *  - every TCP frame of a responding slot is answered or counted in one
 *    noreply_* counter.
 *
 * The loader's side (binding a slot to an interface and a client) is
 * tests/root/test_server_loader.c.
 *
 * Needs root.
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
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/server.skel.h"
#include "tests/lib/stamped.h" /* xt_addr */
#include "tests/lib/wire.h"

#define CTRL_PORT 5301
#define PORT_LO   63100
#define PORT_HI   63109
#define SLOT      4

static const uint8_t SRV_MAC[6] = { 0x02, 0x5e, 0, 0, 0, 0x02 };
static const uint8_t CLI_MAC[6] = { 0x02, 0xc1, 0, 0, 0, 0x01 };
static const uint8_t BCAST_MAC[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Client, its --bind address, the server; a stranger on the same link. */
#define CLI4    "198.18.230.1"
#define BIND4   "198.18.230.10"
#define SRV4    "198.18.230.2"
#define OTHER4  "198.18.230.99"
#define CLI6    "2001:2:0:230::1"
#define SRV6    "2001:2:0:230::2"
#define OTHER6  "2001:2:0:230::99"

/* What a Linux SYN carries: MSS 1460, SACK-permitted, timestamps, WS 7. */
static const uint8_t SYN_OPTS[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7 };

static int ncpus;

/* ---- frames --------------------------------------------------------- */

/* A client SYN from src to dst (one family), to the slot's first port. */
static struct wf syn(const char *src, const char *dst)
{
	struct wf f = { .l4 = IPPROTO_TCP, .sport = 40000, .dport = PORT_LO, .flags = W_SYN,
			.seq = 0x1000, .tcp_opt = SYN_OPTS, .tcp_opt_len = sizeof(SYN_OPTS) };

	memcpy(f.dmac, SRV_MAC, 6);
	memcpy(f.smac, CLI_MAC, 6);
	f.v6 = strchr(src, ':') != NULL;
	xt_addr(src, f.saddr);
	xt_addr(dst, f.daddr);
	return f;
}

/* ---- the program ---------------------------------------------------- */

struct env {
	struct server_bpf *s;
	uint32_t lo;
};

static void key_of(const char *a, uint32_t *family, uint32_t addr[4])
{
	uint8_t b[16];

	xt_addr(a, b);
	*family = strchr(a, ':') ? XP_FAMILY_V6 : XP_FAMILY_V4;
	memcpy(addr, b, 16);
}

static void add_peer(struct env *e, uint32_t slot, const char *a)
{
	struct xp_peer_key k = { .slot = slot };
	uint32_t one = 1;

	key_of(a, &k.family, k.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->s->maps.slot_peers), &k, &one, BPF_ANY), 0);
}

static void add_local(struct env *e, const char *a)
{
	struct xp_local_key k = { .ifindex = e->lo };
	uint32_t v = XP_LOCAL_UNICAST;

	key_of(a, &k.family, k.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->s->maps.local_addr), &k, &v, BPF_ANY), 0);
}

static void write_cfg(struct env *e, const struct xp_slot_cfg *cfg)
{
	uint32_t key = SLOT;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->s->maps.slot_cfg), &key, cfg, BPF_ANY), 0);
}

/* The slot as the loader sets it up: on this namespace's loopback (where
 * BPF_PROG_RUN runs frames) with SRV_MAC and SRV4/SRV6 as its addresses,
 * for the client CLI4 with CLI6 and BIND4 as further addresses. */
static struct xp_slot_cfg std_cfg(struct env *e)
{
	struct xp_slot_cfg cfg = { .flags = XP_SLOT_ACTIVE | XP_SLOT_RESPOND, .protos = XP_PROTO_TCP,
				   .close_mode = XP_CLOSE_RST, .ifindex = e->lo, .npeers = 2 };

	memcpy(cfg.mac, SRV_MAC, 6);
	key_of(CLI4, &cfg.peer_family, cfg.peer);
	return cfg;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	uint32_t val = SLOT + 1;

	if (!e)
		return -1;
	e->lo = if_nametoindex("lo");
	e->s = server_bpf__open();
	if (!e->s || !e->lo)
		return -1;
	e->s->rodata->config.ctrl_port = CTRL_PORT;
	e->s->rodata->config.cookie_key[0] = 0x0123456789abcdefULL;
	e->s->rodata->config.cookie_key[1] = 0xfedcba9876543210ULL;
	if (server_bpf__load(e->s)) {
		fprintf(stderr, "test_server_strict: load failed: %s\n", strerror(errno));
		return -1;
	}
	*state = e;
	add_peer(e, SLOT, CLI6);
	add_peer(e, SLOT, BIND4);
	add_local(e, SRV4);
	add_local(e, SRV6);
	struct xp_slot_cfg cfg = std_cfg(e);
	write_cfg(e, &cfg);
	for (uint32_t p = PORT_LO; p <= PORT_HI; p++)
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->s->maps.port_slot), &p, &val, BPF_ANY), 0);
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	server_bpf__destroy(e->s);
	free(e);
	return 0;
}

/* Run one frame; the frame that comes out in out (cap 4096), its length
 * in *olen. */
static int run(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = 4096);

	if (bpf_prog_test_run_opts(bpf_program__fd(e->s->progs.xdp_server), &o))
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	*olen = o.data_size_out;
	return (int)o.retval;
}

static struct xp_counters counters(struct env *e)
{
	struct xp_counters v[ncpus], sum = { 0 };
	uint32_t key = SLOT;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->s->maps.counters), &key, v), 0);
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < sizeof(sum) / 8; f++)
			((__u64 *)&sum)[f] += ((__u64 *)&v[c])[f];
	return sum;
}

static uint64_t gstat(struct env *e, uint32_t idx)
{
	uint64_t v[ncpus], sum = 0;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->s->maps.gstats), &idx, v), 0);
	for (int c = 0; c < ncpus; c++)
		sum += v[c];
	return sum;
}

/* Every TCP frame of the slot is answered or counted as not answered. */
static void expect_balanced(struct env *e)
{
	struct xp_counters c = counters(e);
	uint64_t answered = c.synack_sent + c.fin_answered + c.rst_sent;
	uint64_t not = c.noreply_addr + c.noreply_shape + c.noreply_csum + c.noreply_room + c.noreply_other;

	if (c.pkts - c.udp_pkts != answered + not)
		fail_msg("%llu TCP frames, %llu answered + %llu not answered", (unsigned long long)(c.pkts - c.udp_pkts),
			 (unsigned long long)answered, (unsigned long long)not);
	assert_int_equal(c.pkts, c.ipv4_pkts + c.ipv6_pkts);
}

/* The reply out to the frame in: well formed, both checksums right, the
 * frame's addresses, ports and MACs swapped, its VLAN tags kept. */
static void expect_reply_to(const uint8_t *in, size_t ilen, const uint8_t *out, size_t olen)
{
	struct wp a = w_parse(in, ilen), b = w_parse(out, olen);

	assert_true(a.ok);
	assert_true(b.ok);
	assert_true(b.ip_csum_ok);
	assert_true(b.l4_csum_ok);
	assert_int_equal(b.tail, 0);
	assert_memory_equal(out, in + 6, 6);     /* to the frame's source MAC */
	assert_memory_equal(out + 6, in, 6);     /* from the MAC it was sent to */
	assert_false(w_mac_multicast(out));
	assert_int_equal(b.v6, a.v6);
	assert_memory_equal(b.daddr, a.saddr, a.v6 ? 16 : 4);
	assert_memory_equal(b.saddr, a.daddr, a.v6 ? 16 : 4);
	assert_int_equal(b.dport, a.sport);
	assert_int_equal(b.sport, a.dport);
	assert_int_equal(b.nvlan, a.nvlan);
	for (int i = 0; i < a.nvlan; i++)
		assert_int_equal(b.tci[i], a.tci[i]);
}

/* A SYN f is answered with a SYN-ACK to its source. */
static void expect_answered(struct env *e, const struct wf *f)
{
	uint8_t in[4096], out[4096];
	size_t len = w_build(f, in, sizeof(in)), olen;

	assert_true(len > 0);
	assert_int_equal(run(e, in, len, out, &olen), XDP_TX);
	expect_reply_to(in, len, out, olen);
	assert_int_equal(w_parse(out, olen).flags, W_SYN | W_ACK);
}

/* Frame f gets verdict v and comes out as it went in. */
static void expect_untouched(struct env *e, const struct wf *f, int v)
{
	uint8_t in[4096], out[4096];
	size_t len = w_build(f, in, sizeof(in)), olen;

	assert_true(len > 0);
	assert_int_equal(run(e, in, len, out, &olen), v);
	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
}

/* ---- the slot's client ---------------------------------------------- */

static void test_answers_its_client(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, SRV4);

	expect_answered(e, &f);
	f = syn(BIND4, SRV4);
	expect_answered(e, &f);
	f = syn(CLI6, SRV6);
	expect_answered(e, &f);
	f = syn(CLI4, SRV4);
	f.nvlan = 2;
	f.tpid[0] = W_ETH_8021AD;
	f.vid[0] = 100;
	f.vid[1] = 200;
	expect_answered(e, &f);
	struct xp_counters c = counters(e);
	assert_int_equal(c.pkts, 4);
	assert_int_equal(c.synack_sent, 4);
	expect_balanced(e);
}

/* Finding 5: SYNs from 8.8.8.8 and friends were answered, and third
 * parties could add to another test's counters. Now they pass, uncounted. */
static void test_strangers_pass_uncounted(void **state)
{
	struct env *e = *state;
	struct wf f = syn(OTHER4, SRV4);

	expect_untouched(e, &f, XDP_PASS);
	f = syn(OTHER6, SRV6);
	expect_untouched(e, &f, XDP_PASS);
	f = syn("8.8.8.8", SRV4);
	expect_untouched(e, &f, XDP_PASS);
	/* An unvalidated ACK|FIN from a stranger got a FIN-ACK. */
	f = syn(OTHER4, SRV4);
	f.flags = W_ACK | W_FIN;
	f.ack = 0x5000;
	expect_untouched(e, &f, XDP_PASS);
	/* UDP from a stranger to a UDP test's ports: not counted either. */
	struct xp_slot_cfg cfg = std_cfg(e);
	cfg.protos = XP_PROTO_UDP;
	cfg.flags = XP_SLOT_ACTIVE;
	write_cfg(e, &cfg);
	f = syn(OTHER4, SRV4);
	f.l4 = IPPROTO_UDP;
	f.payload = 18;
	expect_untouched(e, &f, XDP_PASS);
	f = syn(CLI4, SRV4);
	f.l4 = IPPROTO_UDP;
	f.payload = 18;
	expect_untouched(e, &f, XDP_DROP); /* the client's own: counted, dropped */

	struct xp_counters c = counters(e);
	assert_int_equal(c.pkts, 1);
	assert_int_equal(c.udp_pkts, 1);
	assert_int_equal(gstat(e, XP_G_FOREIGN), 5);
	assert_int_equal(gstat(e, XP_G_PASSED), 5);
}

/* The port-to-slot map is shared by every interface: a test's slot is its
 * interface's only. */
static void test_other_interface_passes(void **state)
{
	struct env *e = *state;
	struct xp_slot_cfg cfg = std_cfg(e);
	struct wf f = syn(CLI4, SRV4);

	cfg.ifindex = e->lo + 1000; /* any interface but this one */
	write_cfg(e, &cfg);
	expect_untouched(e, &f, XDP_PASS);
	cfg.flags = XP_SLOT_ACTIVE; /* a counting slot, the same */
	write_cfg(e, &cfg);
	expect_untouched(e, &f, XDP_PASS);
	assert_int_equal(counters(e).pkts, 0);
	assert_int_equal(gstat(e, XP_G_FOREIGN), 2);
}

/* A slot without any peer (peer_family 0) owns no frame. */
static void test_slot_without_peer_owns_nothing(void **state)
{
	struct env *e = *state;
	struct xp_slot_cfg cfg = std_cfg(e);
	struct wf f = syn(CLI4, SRV4);

	cfg.peer_family = 0;
	cfg.npeers = 0;
	write_cfg(e, &cfg);
	expect_untouched(e, &f, XDP_PASS);
	f = syn(CLI6, SRV6);
	expect_untouched(e, &f, XDP_PASS);
	assert_int_equal(counters(e).pkts, 0);
}

/* ---- what the responder answers ------------------------------------- */

/* Frame f of the client is counted, not answered (noreply_addr), dropped
 * untouched. */
static void expect_refused_addr(struct env *e, const struct wf *f)
{
	uint64_t before = counters(e).noreply_addr;

	expect_untouched(e, f, XDP_DROP);
	assert_int_equal(counters(e).noreply_addr, before + 1);
	expect_balanced(e);
}

/* Frame f of the client is not addressed to this host: not the test's at
 * all (issue 28). It passes untouched, counted nowhere but XP_G_FOREIGN. */
static void expect_not_ours(struct env *e, const struct wf *f)
{
	uint64_t foreign = gstat(e, XP_G_FOREIGN);
	struct xp_counters c0 = counters(e), c1;

	expect_untouched(e, f, XDP_PASS);
	c1 = counters(e);
	assert_memory_equal(&c0, &c1, sizeof(c0));
	assert_int_equal(gstat(e, XP_G_FOREIGN), foreign + 1);
}

/* Finding 5: a SYN to a foreign destination got a SYN-ACK from it (and,
 * issue 28, was counted and dropped: on a router, a forwarded SYN of the
 * client's --bind address to another host). */
static void test_foreign_destination_not_answered(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, "198.18.230.50");

	expect_not_ours(e, &f);
	f = syn(BIND4, "203.0.113.7");
	expect_not_ours(e, &f);
	f = syn(CLI6, "2001:2:0:230::50");
	expect_not_ours(e, &f);
	assert_int_equal(counters(e).pkts, 0);
	/* The same SYNs to our address are answered. */
	f = syn(BIND4, SRV4);
	expect_answered(e, &f);
}

/* A broadcast destination produced a reply from ff:ff:ff:ff:ff:ff and
 * 255.255.255.255. Such frames are not addressed to this host: no slot's. */
static void test_broadcast_and_multicast_destinations(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, "255.255.255.255");

	memcpy(f.dmac, BCAST_MAC, 6);
	expect_not_ours(e, &f);
	memcpy(f.dmac, SRV_MAC, 6);
	expect_not_ours(e, &f);
	f = syn(CLI4, "198.18.230.255"); /* the subnet's broadcast: not ours */
	expect_not_ours(e, &f);
	f = syn(CLI4, "224.0.0.1");
	memcpy(f.dmac, (uint8_t[6]){ 0x01, 0x00, 0x5e, 0, 0, 1 }, 6);
	expect_not_ours(e, &f);
	f = syn(CLI6, "ff02::1");
	memcpy(f.dmac, (uint8_t[6]){ 0x33, 0x33, 0, 0, 0, 1 }, 6);
	expect_not_ours(e, &f);
	/* Our address, but a broadcast or another station's MAC. */
	f = syn(CLI4, SRV4);
	memcpy(f.dmac, BCAST_MAC, 6);
	expect_not_ours(e, &f);
	memcpy(f.dmac, (uint8_t[6]){ 0x02, 0x5e, 0, 0, 0, 0x03 }, 6);
	expect_not_ours(e, &f);
	f = syn(CLI6, SRV6);
	memcpy(f.dmac, (uint8_t[6]){ 0x02, 0x5e, 0, 0, 0, 0x03 }, 6);
	expect_not_ours(e, &f);
	assert_int_equal(counters(e).pkts, 0);
}

/* A broadcast source MAC sent the SYN-ACK to every host on the segment. */
static void test_multicast_source_mac(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, SRV4);

	memcpy(f.smac, BCAST_MAC, 6);
	expect_refused_addr(e, &f);
	memcpy(f.smac, (uint8_t[6]){ 0x01, 0x00, 0x5e, 0x7f, 0, 1 }, 6);
	expect_refused_addr(e, &f);
	f = syn(CLI6, SRV6);
	memcpy(f.smac, (uint8_t[6]){ 0x33, 0x33, 0, 0, 0, 1 }, 6);
	expect_refused_addr(e, &f);
	assert_int_equal(counters(e).synack_sent, 0);
}

/* SYNs from 255.255.255.255, 224.0.0.1 and ff02::1 were answered. The
 * loader refuses such client addresses; the program does not rely on it:
 * with them in the slot's peers, they are still never answered. */
static void test_martian_sources_never_answered(void **state)
{
	struct env *e = *state;
	static const char *const v4[] = { "255.255.255.255", "224.0.0.1", "239.1.2.3", "0.0.0.0",
					  "0.1.2.3", "127.0.0.1", "240.0.0.1", SRV4 };
	static const char *const v6[] = { "ff02::1", "ff0e::1", "::", "::1", "::ffff:198.18.230.1", SRV6 };
	struct xp_slot_cfg cfg = std_cfg(e);

	cfg.npeers = 2 + sizeof(v4) / sizeof(v4[0]) + sizeof(v6) / sizeof(v6[0]);
	write_cfg(e, &cfg);
	for (size_t i = 0; i < sizeof(v4) / sizeof(v4[0]); i++) {
		struct wf f = syn(v4[i], SRV4);

		add_peer(e, SLOT, v4[i]);
		expect_refused_addr(e, &f);
	}
	for (size_t i = 0; i < sizeof(v6) / sizeof(v6[0]); i++) {
		struct wf f = syn(v6[i], SRV6);

		add_peer(e, SLOT, v6[i]);
		expect_refused_addr(e, &f);
	}
	struct xp_counters c = counters(e);
	assert_int_equal(c.noreply_addr, sizeof(v4) / sizeof(v4[0]) + sizeof(v6) / sizeof(v6[0]));
	assert_int_equal(c.synack_sent, 0);
	/* The client itself is still answered. */
	struct wf ok = syn(CLI4, SRV4);
	expect_answered(e, &ok);
}

/* A SYN with a bad TCP checksum was answered. */
static void test_bad_checksum_not_answered(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, SRV4);

	f.bad_l4_csum = 1;
	expect_untouched(e, &f, XDP_DROP);
	f = syn(CLI6, SRV6);
	f.bad_l4_csum = 1;
	expect_untouched(e, &f, XDP_DROP);
	/* Nor a FIN (which needs no cookie) with a bad checksum. */
	f = syn(CLI4, SRV4);
	f.flags = W_ACK | W_FIN;
	f.ack = 0x5000;
	f.tcp_opt_len = 0;
	f.bad_l4_csum = 1;
	expect_untouched(e, &f, XDP_DROP);
	f.bad_l4_csum = 0;
	uint8_t in[256], out[256];
	size_t len = w_build(&f, in, sizeof(in)), olen;
	assert_int_equal(run(e, in, len, out, &olen), XDP_TX);
	expect_reply_to(in, len, out, olen);
	struct xp_counters c = counters(e);
	assert_int_equal(c.noreply_csum, 3);
	assert_int_equal(c.fin_answered, 1);
	expect_balanced(e);
}

/* The check sums the segment in 512-byte chunks: every length around the
 * chunk edges, odd ones included, and one flipped byte anywhere in it. */
static void test_checksum_every_length(void **state)
{
	struct env *e = *state;
	/* Segment = 40 header bytes + payload: 512 and 1024 fall at 472, 984. */
	static const size_t lens[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 470, 471, 472, 473, 474, 475,
				       982, 983, 984, 985, 986, 1400, 1461, 3000, 3401 };
	uint8_t in[4096], out[4096];
	size_t olen;
	uint64_t n = 0, bad = 0;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		for (int v6 = 0; v6 < 2; v6++) {
			struct wf f = v6 ? syn(CLI6, SRV6) : syn(CLI4, SRV4);
			size_t len, l4;

			f.payload = lens[i];
			f.fill = (uint8_t)(i * 7 + 1);
			len = w_build(&f, in, sizeof(in));
			assert_true(len > 0);
			assert_int_equal(run(e, in, len, out, &olen), XDP_TX);
			expect_reply_to(in, len, out, olen);
			n++;
			if (!lens[i])
				continue;
			/* First, last, and the bytes either side of the first
			 * chunk edge (segment offset 511/512). */
			l4 = 14 + (v6 ? 40 : 20);
			size_t at[] = { l4 + 40, len - 1, l4 + 511, l4 + 512 };
			for (size_t k = 0; k < sizeof(at) / sizeof(at[0]); k++) {
				if (at[k] < l4 + 40 || at[k] >= len)
					continue;
				len = w_build(&f, in, sizeof(in));
				in[at[k]] ^= 0x40;
				assert_int_equal(run(e, in, len, out, &olen), XDP_DROP);
				assert_memory_equal(out, in, len);
				bad++;
			}
		}
	}
	struct xp_counters c = counters(e);
	assert_int_equal(c.synack_sent, n);
	assert_int_equal(c.noreply_csum, bad);
	expect_balanced(e);
}

/* Ethernet pads short frames with any bytes: the checksum covers the IP
 * length only. */
static void test_padding_not_summed(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, SRV4);

	f.tcp_opt_len = 0;
	f.pad_to = 60;
	expect_answered(e, &f);
	f.tcp_opt_len = 4; /* MSS only */
	f.pad_to = 64;
	expect_answered(e, &f);
	assert_int_equal(counters(e).noreply_csum, 0);
}

/* Finding 6: a first IPv4 fragment was counted and dropped while the rest
 * waited in reassembly. */
static void test_first_fragment_passes(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, SRV4);

	f.frag = 0x2000; /* MF, offset 0 */
	f.payload = 100;
	expect_untouched(e, &f, XDP_PASS);
	f.frag = 0x2000 | 100;
	expect_untouched(e, &f, XDP_PASS);
	assert_int_equal(counters(e).pkts, 0);
	assert_int_equal(gstat(e, XP_G_FRAGMENT), 2);
}

/* Headers no reply is built for: counted as noreply_shape. */
static void test_ip_options_noreply_shape(void **state)
{
	struct env *e = *state;
	struct wf f = syn(CLI4, SRV4);

	f.ip_opt_len = 8;
	expect_untouched(e, &f, XDP_DROP);
	assert_int_equal(counters(e).noreply_shape, 1);
	expect_balanced(e);
}

/* Over a mixed batch, every frame is answered or counted as not. */
static void test_counters_add_up(void **state)
{
	struct env *e = *state;
	static const uint8_t flags[] = { W_SYN, W_ACK, W_ACK | W_FIN, W_RST, W_RST | W_ACK, W_SYN | W_ACK,
					 0, W_ACK | W_PSH, W_FIN };
	uint8_t in[512], out[512];
	size_t olen;
	uint64_t tx = 0;

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		for (int v = 0; v < 4; v++) {
			struct wf f = v & 1 ? syn(CLI6, SRV6) : syn(CLI4, SRV4);

			f.flags = flags[i];
			f.ack = 0x7777 * (uint32_t)(i + 1);
			f.payload = v & 2 ? 10 : 0;
			f.bad_l4_csum = i == 3 && v == 0;
			size_t len = w_build(&f, in, sizeof(in));
			int r = run(e, in, len, out, &olen);
			if (r == XDP_TX) {
				expect_reply_to(in, len, out, olen);
				tx++;
			} else {
				assert_int_equal(r, XDP_DROP);
			}
		}
	struct xp_counters c = counters(e);
	assert_int_equal(c.pkts, 36);
	assert_int_equal(c.synack_sent + c.fin_answered + c.rst_sent, tx);
	expect_balanced(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_answers_its_client),
		T(test_strangers_pass_uncounted),
		T(test_other_interface_passes),
		T(test_slot_without_peer_owns_nothing),
		T(test_foreign_destination_not_answered),
		T(test_broadcast_and_multicast_destinations),
		T(test_multicast_source_mac),
		T(test_martian_sources_never_answered),
		T(test_bad_checksum_not_answered),
		T(test_checksum_every_length),
		T(test_padding_not_summed),
		T(test_first_fragment_passes),
		T(test_ip_options_noreply_shape),
		T(test_counters_add_up),
#undef T
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_server_strict: must run as root (BPF_PROG_RUN)\n");
		return 1;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return 1;
	return cmocka_run_group_tests_name("server_strict", tests, NULL, NULL);
}
