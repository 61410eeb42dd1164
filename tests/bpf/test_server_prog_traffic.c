// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/server.bpf.c: hand-built frames run through the loaded
 * program with BPF_PROG_RUN; check verdicts and the exact per-slot counters
 * (summed over CPUs) and global stats. Needs root (CAP_BPF + CAP_NET_ADMIN).
 *
 * Here: what the program counts as test traffic (IPv4 and IPv6, TCP by its
 * flags, UDP, VLAN tags, short frames) and what it passes to the stack (other
 * ports and protocols, ARP, ICMP, the control port), alone and over many
 * frames. Malformed and unusual headers are in test_server_prog_headers.c, the
 * slot table in test_server_prog_slots.c; the helpers in server_prog_fixture.h.
 *
 * Each test loads a fresh skeleton, so map state never leaks between tests.
 */
#include "tests/bpf/server_prog_fixture.h"

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
		T(test_repeat),
		T(test_gstats_invariant),
#undef T
	};

	if (server_prog_init("test_server_prog_traffic"))
		return 1;
	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
