// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 30: multi-buffer XDP on the server. The loader (server_prog_open)
 * loads the counter program with BPF_F_XDP_HAS_FRAGS where the kernel takes
 * it, so that native XDP takes a jumbo MTU; a frame can then come in
 * several buffers, and the program must count the whole of it.
 *
 *  - the loaded program has the flag;
 *  - a 9014-byte frame (9018 on the wire), run with BPF_PROG_RUN, which hands
 *    a frags program everything past its first page in fragments: counted
 *    with all its bytes (bpf_xdp_get_buff_len), its payload from the IP
 *    length, its stamp read from the first buffer; IPv4/UDP, IPv6/TCP;
 *  - an IP length past the end of the whole frame is still malformed, and a
 *    stranger's jumbo frame passes untouched;
 *  - the SYN responder answers no segment reaching past the first buffer
 *    (its replies are built there): counted, noreply_shape.
 * (Checked: with the first buffer's length in place of the whole frame's,
 * the jumbo frames come out malformed and passed, and this fails. That a
 * program without the flag cannot attach natively at MTU 9000 is
 * tests/e2e/87_jumbo.sh's.)
 *
 * Needs root (BPF_PROG_RUN).
 */
#include "tests/bpf/server_prog_fixture.h"

#include "bpf/measure.h"
#include "loader/server_prog.h"

#define JUMBO 9014 /* frame without FCS: -l 9018 */

/* The frame of s, padded by its payload to JUMBO bytes. */
static size_t jumbo(struct fspec *s, uint8_t *buf, size_t cap)
{
	size_t hdr = 14 + (s->ipv6 ? 40 : 20) + (s->l4 == IPPROTO_TCP ? 20 : 8);

	s->payload = JUMBO - hdr;
	return build(s, buf, cap);
}

static uint32_t run_big(struct server_bpf *skel, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = 9216);

	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_server), &o))
		fail_msg("BPF_PROG_RUN of %zu bytes failed: %s", len, strerror(errno));
	*olen = o.data_size_out;
	return o.retval;
}

static void test_loader_sets_frags(void **state)
{
	struct server_prog *rp;
	char err[256];
	(void)state;

	assert_int_equal(server_prog_open(&rp, CTRL_PORT, false, err, sizeof(err)), 0);
	assert_true(bpf_program__flags(server_prog_skel(rp)->progs.xdp_server) & BPF_F_XDP_HAS_FRAGS);
	server_prog_close(rp);
}

static void test_jumbo_counted_whole(void **state)
{
	struct server_prog *rp;
	char err[256];
	static uint8_t in[9216], out[9216];
	size_t len, olen;
	(void)state;

	assert_int_equal(server_prog_open(&rp, CTRL_PORT, false, err, sizeof(err)), 0);
	struct server_bpf *skel = server_prog_skel(rp);
	std_slot(skel, XP_PROTO_TCP | XP_PROTO_UDP);
	struct xp_slot_meas m = { .ival = 1u << 20 };
	uint32_t k = TEST_SLOT;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(skel->maps.slot_meas), &k, &m, BPF_ANY), 0);

	struct fspec u = udp4(TEST_PORT, 0);
	len = jumbo(&u, in, sizeof(in));
	assert_int_equal(len, JUMBO);
	assert_int_equal(run_big(skel, in, len, out, &olen), XDP_DROP);
	struct fspec t = tcp4(TEST_PORT, F_ACK | F_PSH, 0);
	t.ipv6 = 1;
	len = jumbo(&t, in, sizeof(in));
	assert_int_equal(run_big(skel, in, len, out, &olen), XDP_DROP);

	struct xp_counters c = get_counters(skel, TEST_SLOT);
	assert_int_equal(c.pkts, 2);
	assert_int_equal(c.bytes, 2 * JUMBO);
	assert_int_equal(c.data_bytes, u.payload + t.payload);
	assert_int_equal(c.data_pkts, 2);
	assert_int_equal(c.udp_pkts, 1);
	assert_int_equal(c.ipv6_pkts, 1);
	struct xp_meas_stats ms[ncpus], sum = { 0 };
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(skel->maps.meas_stats), &k, ms), 0);
	for (int i = 0; i < ncpus; i++)
		sum.stamped += ms[i].stamped, sum.nostamp += ms[i].nostamp;
	assert_int_equal(sum.stamped, 2); /* read from the first buffer */
	assert_int_equal(sum.nostamp, 0);

	/* An IPv4 total length 4 bytes past the whole frame: malformed, passed. */
	len = jumbo(&u, in, sizeof(in));
	put16(in + 14 + 2, (uint16_t)(JUMBO - 14 + 4));
	put16(in + 14 + 10, 0);
	put16(in + 14 + 10, ref_csum(in + 14, 20));
	uint64_t mal = get_gstat(skel, XP_G_MALFORMED);
	assert_int_equal(run_big(skel, in, len, out, &olen), XDP_PASS);
	assert_int_equal(get_gstat(skel, XP_G_MALFORMED), mal + 1);
	/* A stranger's jumbo frame passes with every byte as it came. */
	len = jumbo(&u, in, sizeof(in));
	in[14 + 15] = 9; /* from 10.0.0.9 */
	put16(in + 14 + 10, 0);
	put16(in + 14 + 10, ref_csum(in + 14, 20));
	for (size_t i = 100; i < len; i++)
		in[i] = (uint8_t)(i * 7);
	assert_int_equal(run_big(skel, in, len, out, &olen), XDP_PASS);
	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
	assert_int_equal(get_counters(skel, TEST_SLOT).pkts, 2);
	server_prog_close(rp);
}

/* A responding slot: a segment reaching past the first buffer is counted,
 * never answered (replies are built in the first buffer): noreply_shape. */
static void test_responder_skips_multibuffer_segment(void **state)
{
	struct server_prog *rp;
	char err[256];
	static uint8_t in[9216], out[9216];
	size_t len, olen;
	(void)state;

	assert_int_equal(server_prog_open(&rp, CTRL_PORT, false, err, sizeof(err)), 0);
	struct server_bpf *skel = server_prog_skel(rp);
	map_port(skel, TEST_PORT, TEST_SLOT + 1);
	set_slot(skel, TEST_SLOT, XP_SLOT_ACTIVE | XP_SLOT_RESPOND, XP_PROTO_TCP);
	struct fspec t = tcp4(TEST_PORT, F_ACK | F_FIN, 0);
	len = jumbo(&t, in, sizeof(in));
	assert_int_equal(run_big(skel, in, len, out, &olen), XDP_DROP);
	assert_int_equal(olen, len);
	assert_memory_equal(out, in, len);
	struct xp_counters c = get_counters(skel, TEST_SLOT);
	assert_int_equal(c.pkts, 1);
	assert_int_equal(c.bytes, JUMBO);
	assert_int_equal(c.noreply_shape, 1);
	assert_int_equal(c.fin_answered, 0);
	server_prog_close(rp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loader_sets_frags),
		cmocka_unit_test(test_jumbo_counted_whole),
		cmocka_unit_test(test_responder_skips_multibuffer_segment),
	};

	if (server_prog_init("test_server_frags"))
		return 1;
	return cmocka_run_group_tests_name("server_frags", tests, NULL, NULL);
}
