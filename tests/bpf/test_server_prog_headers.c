// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/server.bpf.c with BPF_PROG_RUN (see
 * test_server_prog_traffic.c): malformed and unusual headers. Truncated and
 * inconsistent frames are passed and counted as malformed, IPv4 fragments are
 * not taken for test traffic, IPv4 and TCP options are stepped over, an IPv6
 * extension header is passed.
 * Needs root. Each test loads a fresh skeleton.
 */
#include "tests/bpf/server_prog_fixture.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_malformed_passed),
		T(test_ipv4_fragments),
		T(test_ip_and_tcp_options),
		T(test_ipv6_ext_header_passed),
#undef T
	};

	if (server_prog_init("test_server_prog_headers"))
		return 1;
	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
