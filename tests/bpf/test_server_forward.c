// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 28, points 1 and 2: the server's XDP program takes a frame as a
 * test's only if it is addressed to this host (the interface's MAC and one
 * of its addresses), whatever its source. A client's --bind list once made
 * the program drop a third party's traffic it only forwards (a router), or
 * that a DNAT rule after it would have sent on; and round-trip reflection
 * sent a stamped frame V -> X back as X -> V, from an address not ours.
 *
 *  - a frame of the client (its own address, or a --bind one) to a test
 *    port, sent to our MAC but another IP address (a frame we route), to
 *    our address but another station's MAC, or to neither, passes untouched
 *    and is counted nowhere but XP_G_FOREIGN, in counting, responding and
 *    reflecting slots alike; the same frame sent to us is the test's;
 *  - a reflecting slot reflects only frames sent to us, so a reflection's
 *    source is always our address;
 *  - on a loopback device every frame is this host's: the loader marks such
 *    a slot XP_SLOT_LOCAL (from the device, never from its caller) and the
 *    program takes its client's frames whatever their destination.
 *
 * Frames from tests/bpf/server_prog_fixture.h's build(): from 10.0.0.1 /
 * fd00::1 (the slot's client and a --bind address) to 10.0.0.2 / fd00::2
 * at 02:00:00:00:00:02 (the slot's interface), rewritten here where a case
 * sends elsewhere. Needs root (BPF_PROG_RUN).
 */
#include "tests/bpf/server_prog_fixture.h"

#include "loader/server_prog.h"
#include "util/addr.h"

/* Another station's MAC, and addresses that are not the interface's: a
 * host behind us (what a router forwards to), and a public one (what a
 * DNAT rule after us would rewrite). */
static const uint8_t OTHER_MAC[6] = { 0x02, 0, 0, 0, 0, 0x77 };
#define BEHIND4 0xc6127701u /* 198.18.119.1 */
#define PUBLIC4 0xcb007107u /* 203.0.113.7 */

enum dest { TO_US, TO_OTHER_IP, TO_OTHER_MAC, TO_NEITHER, TO_PUBLIC };

/* The frame of s, sent where d says: its destination MAC and IP address
 * rewritten (IPv4 header checksum kept right). Its length. */
static size_t build_to(const struct fspec *s, enum dest d, uint8_t *buf, size_t cap)
{
	size_t len = build(s, buf, cap);

	if (d == TO_OTHER_MAC || d == TO_NEITHER)
		memcpy(buf, OTHER_MAC, 6);
	if (d == TO_OTHER_IP || d == TO_NEITHER || d == TO_PUBLIC)
		readdress(s, buf, d == TO_PUBLIC ? PUBLIC4 : BEHIND4);
	return len;
}

/* Frame s sent to d is not the test's: passed untouched, the slot's
 * counters unchanged, one more XP_G_FOREIGN and XP_G_PASSED. */
static void expect_not_ours(struct server_bpf *skel, const struct fspec *s, enum dest d)
{
	uint8_t in[2048], out[2048];
	size_t len = build_to(s, d, in, sizeof(in)), olen;
	uint64_t foreign = get_gstat(skel, XP_G_FOREIGN), passed = get_gstat(skel, XP_G_PASSED);
	struct xp_counters c0 = get_counters(skel, TEST_SLOT), c1;

	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
	c1 = get_counters(skel, TEST_SLOT);
	assert_memory_equal(&c0, &c1, sizeof(c0));
	assert_int_equal(get_gstat(skel, XP_G_FOREIGN), foreign + 1);
	assert_int_equal(get_gstat(skel, XP_G_PASSED), passed + 1);
}

/* The four kinds of frame a test counts, from the client's address
 * (IPv4) and from its --bind address (IPv6). */
static struct fspec kind(int i)
{
	struct fspec s = (i & 1) ? udp4(TEST_PORT, 18) : tcp4(TEST_PORT, F_ACK | F_PSH, 18);

	s.ipv6 = (i & 2) != 0;
	return s;
}

/* A counting (dropping) slot: the client's frames to another host pass,
 * uncounted, whichever way they are not ours; sent to us, they are the
 * test's. */
static void test_forwarded_frames_pass(void **state)
{
	struct server_bpf *skel = *state;
	uint8_t in[2048], out[2048];
	size_t len, olen;

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	for (int i = 0; i < 4; i++) {
		struct fspec s = kind(i);

		expect_not_ours(skel, &s, TO_OTHER_IP);
		expect_not_ours(skel, &s, TO_OTHER_MAC);
		expect_not_ours(skel, &s, TO_NEITHER);
		expect_not_ours(skel, &s, TO_PUBLIC);
		s.nvlan = 1; /* behind a VLAN tag alike */
		expect_not_ours(skel, &s, TO_OTHER_IP);
	}
	expect_counters(skel, TEST_SLOT, (struct xp_counters){ 0 });
	assert_int_equal(get_gstat(skel, XP_G_FOREIGN), 20);
	/* The same frames sent to us: the test's, counted and dropped. */
	for (int i = 0; i < 4; i++) {
		struct fspec s = kind(i);

		len = build_to(&s, TO_US, in, sizeof(in));
		assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	}
	struct xp_counters c = get_counters(skel, TEST_SLOT);
	assert_int_equal(c.pkts, 4);
	assert_int_equal(c.udp_pkts, 2);
	assert_int_equal(c.ipv6_pkts, 2);
	assert_int_equal(get_gstat(skel, XP_G_FOREIGN), 20);
	expect_gstats(skel, 24, 20, 0);
}

/* The interface's addresses change: a frame to an address it no longer
 * holds is no longer the test's (the loader rewrites local_addr, and the
 * slot's self4/self6, at each test start), and one to any address it holds
 * is, in local_addr if not in self4/self6. */
static void test_interface_addresses(void **state)
{
	struct server_bpf *skel = *state;
	struct xp_local_key k6 = { .ifindex = if_nametoindex("lo"), .family = XP_FAMILY_V6,
				   .addr = { htonl(0xfd000000), 0, 0, htonl(2) } };
	struct xp_local_key k4 = { .ifindex = if_nametoindex("lo"), .family = XP_FAMILY_V4,
				   .addr = { htonl(PUBLIC4) } };
	uint32_t local = XP_LOCAL_UNICAST;
	struct fspec s = udp4(TEST_PORT, 18);

	std_slot(skel, XP_PROTO_UDP);
	/* 203.0.113.7 becomes the interface's too: not in self4, looked up. */
	expect_not_ours(skel, &s, TO_PUBLIC);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.local_addr), &k4, &local, BPF_ANY), 0);
	uint8_t in[2048], out[2048];
	size_t olen, len = build_to(&s, TO_PUBLIC, in, sizeof(in));
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	/* fd00::2 (no self6: looked up) goes. */
	s.ipv6 = 1;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	assert_int_equal(bpf_map_delete_elem(bpf_map__fd(skel->maps.local_addr), &k6), 0);
	expect_not_ours(skel, &s, TO_US);
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 2);
}

/* A responding slot: a forwarded SYN is neither counted nor answered. */
static void test_responder_only_for_us(void **state)
{
	struct server_bpf *skel = *state;
	struct fspec s = tcp4(TEST_PORT, F_SYN, 0);

	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_RESPOND, XP_PROTO_TCP);
	expect_not_ours(skel, &s, TO_OTHER_IP);
	expect_not_ours(skel, &s, TO_PUBLIC);
	s.ipv6 = 1;
	expect_not_ours(skel, &s, TO_OTHER_IP);
	expect_not_ours(skel, &s, TO_OTHER_MAC);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){ 0 });
	/* Sent to us it is the slot's: counted, and judged by the responder
	 * (build() leaves the TCP checksum 0: not answered, noreply_csum). */
	s.ipv6 = 0;
	assert_int_equal(run_spec(skel, &s, NULL), XDP_DROP);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){ .pkts = 1, .bytes = 54, .tcp_syn = 1,
							       .ipv4_pkts = 1, .noreply_csum = 1 });
}

/* A reflecting slot (round trip): a stamped frame V -> X is not sent back
 * as X -> V; one sent to us goes back from our own address. */
static void test_reflection_only_for_us(void **state)
{
	struct server_bpf *skel = *state;
	struct xp_slot_meas m = { .t0 = 0, .ival = 1u << 20 };
	uint32_t key = TEST_SLOT;
	uint8_t in[2048], out[2048];
	size_t len, olen;
	struct xp_meas_stats ms[ncpus], sum = { 0 };

	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_REFLECT, XP_PROTO_TCP | XP_PROTO_UDP);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_meas), &key, &m, BPF_ANY), 0);
	for (int i = 0; i < 4; i++) {
		struct fspec s = kind(i); /* 18 payload bytes: a stamp */

		expect_not_ours(skel, &s, TO_OTHER_IP);
		expect_not_ours(skel, &s, TO_OTHER_MAC);
		expect_not_ours(skel, &s, TO_PUBLIC);
	}
	/* Sent to us: reflected, from our address and MAC to the client's. */
	struct fspec s = udp4(TEST_PORT, 18);
	len = build_to(&s, TO_US, in, sizeof(in));
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_TX);
	assert_int_equal(olen, len);
	assert_memory_equal(out + 6, SRV_DMAC, 6);
	assert_memory_equal(out + 14 + 12, in + 14 + 16, 4); /* source: the address it was sent to */
	assert_memory_equal(out + 14 + 16, in + 14 + 12, 4);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.meas_stats), &key, ms), 0);
	for (int c = 0; c < ncpus; c++) {
		sum.stamped += ms[c].stamped;
		sum.reflected += ms[c].reflected;
		sum.reflect_refused += ms[c].reflect_refused;
	}
	assert_int_equal(sum.stamped, 1);
	assert_int_equal(sum.reflected, 1);
	assert_int_equal(sum.reflect_refused, 0);
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 1);
}

/* A slot on a loopback device (XP_SLOT_LOCAL): every frame there is this
 * host's, whatever its destination (lo holds no entry of local_addr for
 * 127.0.0.1 or the host's other addresses). Its client's frames count. */
static void test_loopback_slot_takes_its_client(void **state)
{
	struct server_bpf *skel = *state;
	uint8_t in[2048], out[2048];
	size_t len, olen;

	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_LOCAL, XP_PROTO_UDP);
	for (int d = TO_US; d <= TO_PUBLIC; d++) {
		struct fspec s = udp4(TEST_PORT, 18);

		len = build_to(&s, (enum dest)d, in, sizeof(in));
		assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	}
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 5);
	/* Not a stranger's, still: the source rule holds there too. */
	struct fspec s = udp4(TEST_PORT, 18);
	len = build(&s, in, sizeof(in));
	in[14 + 15] = 9; /* from 10.0.0.9 */
	put16(in + 14 + 10, 0);
	put16(in + 14 + 10, ref_csum(in + 14, 20));
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_PASS);
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 5);
}

/* The loader sets XP_SLOT_LOCAL from the device: on lo, and never because
 * its caller asked (on lo it is set whatever the caller said; that it is
 * cleared elsewhere is in tests/root/test_server_loader.c, which has a
 * veth). */
static void test_loader_marks_loopback(void **state)
{
	struct server_prog *rp;
	struct xp_addr cli;
	struct xp_slot_cfg cfg;
	char err[256];
	(void)state;

	assert_int_equal(server_prog_open(&rp, CTRL_PORT, false, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse("10.0.0.1", &cli), 0);
	int slot = server_prog_slot_alloc(rp, TEST_PORT, TEST_PORT, XP_PROTO_UDP, 0, XP_CLOSE_NONE,
					  (int)if_nametoindex("lo"), &cli, NULL, 0, err, sizeof(err));
	assert_true(slot >= 0);
	uint32_t key = (uint32_t)slot;
	struct server_bpf *skel = server_prog_skel(rp);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.slot_cfg), &key, &cfg), 0);
	assert_true(cfg.flags & XP_SLOT_LOCAL);
	assert_true(cfg.flags & XP_SLOT_ACTIVE);
	/* build()'s frame to 10.0.0.2, an address lo does not hold: on lo,
	 * the test's all the same. */
	uint8_t in[2048], out[2048];
	size_t olen;
	struct fspec s = udp4(TEST_PORT, 18);
	size_t len = build(&s, in, sizeof(in));
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	struct xp_counters c;
	assert_int_equal(server_prog_read(rp, slot, &c), 0);
	assert_int_equal(c.pkts, 1);
	server_prog_close(rp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_forwarded_frames_pass, setup, teardown),
		cmocka_unit_test_setup_teardown(test_interface_addresses, setup, teardown),
		cmocka_unit_test_setup_teardown(test_responder_only_for_us, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reflection_only_for_us, setup, teardown),
		cmocka_unit_test_setup_teardown(test_loopback_slot_takes_its_client, setup, teardown),
		cmocka_unit_test(test_loader_marks_loopback),
	};

	if (server_prog_init("test_server_forward"))
		return 1;
	return cmocka_run_group_tests_name("server_forward", tests, NULL, NULL);
}
