// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 28, "What to build", first point: the server's XDP program takes a
 * frame as a test's if it is addressed to this host, or if it carries the
 * test's stamp with its right tag (bpf/lib/stamp.h: a keyed 32-bit value
 * after the stamp, under the per-test secret of slot_meas.key).
 *
 *  - the client's frame to another host (our MAC, another IP address: one
 *    we would forward) with the stamp and the right tag is the test's:
 *    counted, accounted and dropped, IPv4 and IPv6, TCP and UDP;
 *  - the same frame with a wrong tag (one bit off, or another test's key),
 *    without room for a tag (8-11 payload bytes), or in a slot without a key
 *    or without stamps, passes untouched (XDP_PASS, the bytes unchanged)
 *    and is counted nowhere but XP_G_FOREIGN;
 *  - a frame addressed to us needs no tag (today's rule): a wrong one is
 *    counted all the same;
 *  - a tagged frame not addressed to us is never reflected (its reflection
 *    would leave from an address not ours: reflect_refused) nor answered
 *    (noreply_addr).
 *
 * Frames from tests/bpf/server_prog_fixture.h's build(): from 10.0.0.1 /
 * fd00::1 to 10.0.0.2 / fd00::2 at the slot's MAC; "forwarded" ones are
 * rewritten to 198.18.119.1 / 2001:db8::2. Needs root (BPF_PROG_RUN).
 */
#include "tests/bpf/server_prog_fixture.h"

#include "bpf/lib/stamp.h"
#include "bpf/measure.h"

static const uint64_t KEY[2] = { 0x8badf00ddeadbeefull, 0x0123456789abcdefull };
#define STAMP 0x05000102a5a5a5a5ull /* stream 5, seq 258, some time */

/* The frame of s (payload >= 8 bytes): its stamp STAMP at the payload,
 * then, where the payload has room, tag (big-endian); sent to another host
 * if fwd. Checksums are not the program's business here. Its length. */
static size_t tagged_frame(const struct fspec *s, int fwd, uint32_t tag, uint8_t *buf, size_t cap)
{
	size_t len = build(s, buf, cap), l3 = 14;
	size_t pl = l3 + (s->ipv6 ? 40 : 20) + (s->l4 == IPPROTO_TCP ? 20 : 8);

	for (int i = 0; i < 8; i++)
		buf[pl + i] = (uint8_t)(STAMP >> (56 - 8 * i));
	if (s->payload >= 12)
		for (int i = 0; i < 4; i++)
			buf[pl + 8 + i] = (uint8_t)(tag >> (24 - 8 * i));
	if (fwd)
		readdress(s, buf, 0xc6127701u); /* 198.18.119.1 */
	return len;
}

static void set_meas(struct server_bpf *skel, const uint64_t key[2])
{
	struct xp_slot_meas m = { .t0 = 0, .ival = 1u << 20, .key = { key[0], key[1] } };
	uint32_t k = TEST_SLOT;

	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_meas), &k, &m, BPF_ANY), 0);
}

static struct xp_meas_stats meas_stats(struct server_bpf *skel)
{
	struct xp_meas_stats ms[ncpus], sum = { 0 };
	uint32_t k = TEST_SLOT;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.meas_stats), &k, ms), 0);
	for (int c = 0; c < ncpus; c++) {
		sum.stamped += ms[c].stamped;
		sum.reflected += ms[c].reflected;
		sum.reflect_refused += ms[c].reflect_refused;
	}
	return sum;
}

/* The frame is not the test's: XDP_PASS, bytes unchanged, the slot's
 * counters unchanged, one more XP_G_FOREIGN. */
static void expect_passed(struct server_bpf *skel, const uint8_t *in, size_t len)
{
	uint8_t out[2048];
	size_t olen;
	uint64_t foreign = get_gstat(skel, XP_G_FOREIGN);
	struct xp_counters c0 = get_counters(skel, TEST_SLOT), c1;

	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
	c1 = get_counters(skel, TEST_SLOT);
	assert_memory_equal(&c0, &c1, sizeof(c0));
	assert_int_equal(get_gstat(skel, XP_G_FOREIGN), foreign + 1);
}

static struct fspec kind(int i, unsigned payload)
{
	struct fspec s = (i & 1) ? udp4(TEST_PORT, payload) : tcp4(TEST_PORT, F_ACK | F_PSH, payload);

	s.ipv6 = (i & 2) != 0;
	return s;
}

/* Forwarded frames: the right tag is the test's, a wrong one passes. */
static void test_right_tag_counted_wrong_passes(void **state)
{
	struct server_bpf *skel = *state;
	uint32_t good = xp_stamp_tag(KEY[0], KEY[1], STAMP);
	uint32_t other = xp_stamp_tag(KEY[0] ^ 0x100, KEY[1], STAMP);
	uint8_t in[2048], out[2048];
	size_t len, olen;

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	set_meas(skel, KEY);
	for (int i = 0; i < 4; i++) {
		struct fspec s = kind(i, 18);

		len = tagged_frame(&s, 1, good ^ 1, in, sizeof(in));      /* one bit off */
		expect_passed(skel, in, len);
		len = tagged_frame(&s, 1, other, in, sizeof(in));         /* another test's key */
		expect_passed(skel, in, len);
		len = tagged_frame(&s, 1, 0, in, sizeof(in));             /* none */
		expect_passed(skel, in, len);
		struct fspec s11 = kind(i, 11);                           /* no room for a tag */
		len = tagged_frame(&s11, 1, good, in, sizeof(in));
		expect_passed(skel, in, len);
	}
	expect_counters(skel, TEST_SLOT, (struct xp_counters){ 0 });
	assert_int_equal(meas_stats(skel).stamped, 0);
	for (int i = 0; i < 4; i++) {
		struct fspec s = kind(i, 18);

		len = tagged_frame(&s, 1, good, in, sizeof(in));
		assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	}
	struct xp_counters c = get_counters(skel, TEST_SLOT);
	assert_int_equal(c.pkts, 4);
	assert_int_equal(c.udp_pkts, 2);
	assert_int_equal(c.ipv6_pkts, 2);
	assert_int_equal(meas_stats(skel).stamped, 4);
	assert_int_equal(get_gstat(skel, XP_G_FOREIGN), 16);
	expect_gstats(skel, 20, 16, 0);
}

/* Addressed to us: no tag needed, a wrong one changes nothing. */
static void test_to_us_needs_no_tag(void **state)
{
	struct server_bpf *skel = *state;
	uint8_t in[2048], out[2048];
	size_t len, olen;

	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	set_meas(skel, KEY);
	for (int i = 0; i < 4; i++) {
		struct fspec s = kind(i, 18);

		len = tagged_frame(&s, 0, 0x12345678, in, sizeof(in));
		assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
		s = kind(i, 8); /* a stamp, no room for a tag */
		len = tagged_frame(&s, 0, 0, in, sizeof(in));
		assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	}
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 8);
	assert_int_equal(meas_stats(skel).stamped, 8);
	assert_int_equal(get_gstat(skel, XP_G_FOREIGN), 0);
}

/* A slot with no key (0, 0), or without stamps (ival 0), takes no tagged
 * frame that is not addressed to it: a tag under key 0, 0 is no key. */
static void test_no_key_no_tag_path(void **state)
{
	struct server_bpf *skel = *state;
	static const uint64_t zero[2] = { 0, 0 };
	uint8_t in[2048];
	size_t len;
	struct fspec s = udp4(TEST_PORT, 18);

	std_slot(skel, XP_PROTO_UDP);
	set_meas(skel, zero);
	len = tagged_frame(&s, 1, xp_stamp_tag(0, 0, STAMP), in, sizeof(in));
	expect_passed(skel, in, len);
	/* Stamps off: the key alone lets nothing in. */
	struct xp_slot_meas m = { .ival = 0, .key = { KEY[0], KEY[1] } };
	uint32_t k = TEST_SLOT;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_meas), &k, &m, BPF_ANY), 0);
	len = tagged_frame(&s, 1, xp_stamp_tag(KEY[0], KEY[1], STAMP), in, sizeof(in));
	expect_passed(skel, in, len);
	/* And a stranger's frame with the right tag is still a stranger's. */
	set_meas(skel, KEY);
	len = tagged_frame(&s, 1, xp_stamp_tag(KEY[0], KEY[1], STAMP), in, sizeof(in));
	in[14 + 15] = 9; /* from 10.0.0.9 */
	put16(in + 14 + 10, 0);
	put16(in + 14 + 10, ref_csum(in + 14, 20));
	expect_passed(skel, in, len);
	expect_counters(skel, TEST_SLOT, (struct xp_counters){ 0 });
}

/* Reflecting and responding slots: a tagged frame not addressed to us is
 * counted (and accounted), never sent back. */
static void test_tagged_not_reflected_nor_answered(void **state)
{
	struct server_bpf *skel = *state;
	uint32_t good = xp_stamp_tag(KEY[0], KEY[1], STAMP);
	uint8_t in[2048], out[2048];
	size_t len, olen;
	struct fspec s = udp4(TEST_PORT, 18);

	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_REFLECT, XP_PROTO_TCP | XP_PROTO_UDP);
	set_meas(skel, KEY);
	len = tagged_frame(&s, 1, good, in, sizeof(in));
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, in, len);
	struct xp_meas_stats ms = meas_stats(skel);
	assert_int_equal(ms.stamped, 1);
	assert_int_equal(ms.reflected, 0);
	assert_int_equal(ms.reflect_refused, 1);
	/* Sent to us, the same frame goes back. */
	len = tagged_frame(&s, 0, good, in, sizeof(in));
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_TX);
	assert_int_equal(meas_stats(skel).reflected, 1);

	/* A responding slot that reads stamps (the fuzzer's world): a tagged
	 * SYN to another host is counted, not answered. */
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_RESPOND, XP_PROTO_TCP);
	struct fspec syn = tcp4(TEST_PORT, F_SYN, 18);
	len = tagged_frame(&syn, 1, good, in, sizeof(in));
	struct xp_counters c0 = get_counters(skel, TEST_SLOT);
	assert_int_equal(run_out(skel, in, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, in, len);
	struct xp_counters c1 = get_counters(skel, TEST_SLOT);
	assert_int_equal(c1.pkts, c0.pkts + 1);
	assert_int_equal(c1.noreply_addr, c0.noreply_addr + 1);
	assert_int_equal(c1.synack_sent, c0.synack_sent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_right_tag_counted_wrong_passes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_to_us_needs_no_tag, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_key_no_tag_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tagged_not_reflected_nor_answered, setup, teardown),
	};

	if (server_prog_init("test_server_tag"))
		return 1;
	return cmocka_run_group_tests_name("server_tag", tests, NULL, NULL);
}
