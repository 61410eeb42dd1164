// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/server.bpf.c with BPF_PROG_RUN (see
 * test_server_prog_traffic.c): the slot table. A pass slot counts and passes,
 * an inactive slot and a slot number out of range count nothing, two slots
 * count apart. Needs root. Each test loads a fresh skeleton.
 */
#include "tests/bpf/server_prog_fixture.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_pass_slot),
		T(test_inactive_slot),
		T(test_slot_out_of_range),
		T(test_slots_separate),
#undef T
	};

	if (server_prog_init("test_server_prog_slots"))
		return 1;
	return cmocka_run_group_tests_name("server", tests, NULL, NULL);
}
