// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 26, the server's side of flows: bpf/server.bpf.c reads frames with
 * one or two VLAN tags (802.1Q, 802.1ad outer) and counts a stamped frame
 * into its flow, found from the stamp's stream through stream_flow
 * (bpf/measure.h), in flow_acct: frames, bytes, received, duplicates,
 * reordering, loss by sequence and a latency histogram. The maps are set
 * through the real loader code (loader/meas_maps.c, loader/flow_maps.c's
 * xp_meas_maps_start_flows, xp_meas_maps_read_flow) on the skeleton.
 *
 *  - flows over tagged frames: each flow's counts exactly, worked out in
 *    the comments; a flow of two streams sums them; a stream no flow
 *    claims counts in the slot only; the slot's counters see every frame;
 *  - a test started without flows counts into no entry (an earlier test's
 *    mapping is cleared), and the slot's figures are as before;
 *  - a tagged frame not addressed to this host is the test's only with its
 *    stamp's right tag (docs/stamps.md), QinQ-tagged or not: with a wrong
 *    tag it passes untouched, counted in no flow;
 *  - three tags: not parsed, passed; an entry past the map is refused.
 *
 * Frames come from user/frame's builder (frame_build_hdr, the headers a
 * flow declares) with frame_put_stamp; the program's view is checked
 * against the slot counters the fixture reads. Needs root (BPF_PROG_RUN).
 */
#include "tests/bpf/server_prog_fixture.h"

#include <sys/socket.h>

#include "bpf/lib/latency.h"
#include "bpf/lib/stamp.h"
#include "bpf/measure.h"
#include "frame/flow_hdr.h"
#include "frame/frame.h"
#include "frame/frame_stamp.h"
#include "loader/meas_maps.h"
#include "tests/lib/stamped.h"
#include "tests/lib/wire.h"

static const uint64_t KEY[2] = { 0x1122334455667788ull, 0x99aabbccddeeff00ull };
#define SIZE 128 /* on the wire: room for stamp and tag behind two tags */

static struct xp_meas_maps maps(struct server_bpf *s)
{
	return (struct xp_meas_maps){ .slot_meas = s->maps.slot_meas, .stream_acct = s->maps.stream_acct,
				      .ibins = s->maps.ibins, .meas_stats = s->maps.meas_stats,
				      .nslots = XP_MAX_SLOTS, .stream_flow = s->maps.stream_flow,
				      .flow_acct = s->maps.flow_acct, .nflow_entries = XP_FLOW_ENTRIES };
}

/* A UDP frame 10.0.0.1 -> 10.0.0.2:TEST_PORT (the fixture's slot), nvlan
 * tags (two: 802.1ad S-tag 100 outside 802.1Q C-tag vid), stamped (stream,
 * seq, sent at ts) with the tag under key; to another host if fwd. */
static size_t frame(int nvlan, uint16_t vid, uint32_t stream, uint32_t seq, uint64_t ts, const uint64_t *key,
		    int fwd, uint8_t *buf, size_t cap)
{
	struct xp_flow_hdr h = { .src_mac = { 2, 0, 0, 0, 0, 1 }, .l4_proto = IPPROTO_UDP, .sport = 40000,
				 .dport = TEST_PORT, .dscp = 46 };
	struct frame_layout lay;
	size_t n;

	memcpy(h.dst_mac, SRV_DMAC, 6);
	assert_int_equal(xp_addr_parse("10.0.0.1", &h.src), 0);
	assert_int_equal(xp_addr_parse(fwd ? "198.18.119.1" : "10.0.0.2", &h.dst), 0);
	h.nvlan = (uint8_t)nvlan;
	if (nvlan == 1)
		h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = vid, .pcp = 5 };
	if (nvlan == 2) {
		h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021AD, .vid = 100 };
		h.vlan[1] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = vid };
	}
	assert_int_equal(frame_layout_hdr(&h, SIZE, false, &lay, NULL), 0);
	n = frame_build_hdr(&h, SIZE, false, 0, buf, cap, NULL);
	assert_int_equal(n, SIZE - 4);
	frame_put_stamp(buf, &lay, XP_STAMP_AT_PAYLOAD, xp_stamp_pack(stream, seq, ts), key);
	struct wp w = w_parse(buf, n);
	assert_true(w.ok && w.ip_csum_ok && w.l4_csum_ok);
	assert_int_equal(w.nvlan, nvlan);
	return n;
}

static uint32_t send1(struct server_bpf *s, int nvlan, uint16_t vid, uint32_t stream, uint32_t seq)
{
	uint8_t buf[256];
	size_t n = frame(nvlan, vid, stream, seq, xt_now_ticks(), KEY, 0, buf, sizeof(buf));

	return run(s, buf, n);
}

static struct xp_flow_acct flow(struct server_bpf *s, unsigned e)
{
	struct xp_meas_maps mm = maps(s);
	struct xp_flow_acct f;

	assert_int_equal(xp_meas_maps_read_flow(&mm, e, &f), 0);
	return f;
}

static void start(struct server_bpf *s, const __u32 *stream_entry)
{
	struct xp_meas_maps mm = maps(s);
	struct xp_slot_meas m = { .t0 = xt_now_ticks(), .ival = 250000000ull, .flags = XP_MEAS_ONEWAY,
				  .key = { KEY[0], KEY[1] } };

	std_slot(s, XP_PROTO_UDP);
	assert_int_equal(xp_meas_maps_start_flows(&mm, TEST_SLOT, &m, stream_entry), 0);
}

static uint64_t hist_sum(const struct xp_flow_acct *f)
{
	uint64_t n = 0;

	for (unsigned b = 0; b < XP_FLOW_LAT_BUCKETS; b++)
		n += f->hist[b];
	return n;
}

/*
 * Flow A (entry 5) = stream 0, VLAN 100, sends 0 1 2 4 5 5 6 8 7 9:
 *   frames 10, recv 9, dup 1 (the second 5), reordered 1 (7 after 8),
 *   expected 10 (highest 9 + 1), so loss by sequence 1 (3).
 * Flow B (entry 6) = streams 1 and 2, QinQ 100/200, 0..4 each:
 *   frames 10, recv 10, expected 10, no loss.
 * Stream 3 (no flow), untagged, 4 frames: counted in the slot only.
 * The slot: 24 frames, all dropped as the test's.
 */
static void test_flows_over_tags(void **state)
{
	struct server_bpf *s = *state;
	__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };
	const uint32_t a_seq[] = { 0, 1, 2, 4, 5, 5, 6, 8, 7, 9 };
	struct xp_flow_acct a, b, z;

	se[0] = 5 + 1;
	se[1] = se[2] = 6 + 1;
	start(s, se);
	for (unsigned k = 0; k < 10; k++)
		assert_int_equal(send1(s, 1, 100, 0, a_seq[k]), XDP_DROP);
	for (uint32_t k = 0; k < 5; k++) {
		assert_int_equal(send1(s, 2, 200, 1, k), XDP_DROP);
		assert_int_equal(send1(s, 2, 200, 2, k), XDP_DROP);
	}
	for (uint32_t k = 0; k < 4; k++)
		assert_int_equal(send1(s, 0, 0, 3, k), XDP_DROP);

	a = flow(s, 5);
	assert_int_equal(a.frames, 10);
	assert_int_equal(a.bytes, 10 * (SIZE - 4));
	assert_int_equal(a.recv, 9);
	assert_int_equal(a.dup, 1);
	assert_int_equal(a.reordered, 1);
	assert_int_equal(a.too_old, 0);
	assert_int_equal(a.expected, 10);
	assert_int_equal(a.expected - a.recv, 1);
	/* Timed: every frame received once (not the duplicate), each in one
	 * bucket; the kernel clock moved forward between stamp and receipt. */
	assert_int_equal(a.lat_n + a.clock_neg, 9);
	assert_int_equal(hist_sum(&a), a.lat_n);
	assert_true(a.lat_n == 0 || (~a.lat_nmin <= a.lat_max && a.lat_sum >= a.lat_max));

	b = flow(s, 6);
	assert_int_equal(b.frames, 10);
	assert_int_equal(b.bytes, 10 * (SIZE - 4));
	assert_int_equal(b.recv, 10);
	assert_int_equal(b.expected, 10);
	assert_int_equal(b.dup + b.reordered, 0);

	/* No other entry moved. */
	for (unsigned e = 0; e < 16; e++) {
		if (e == 5 || e == 6)
			continue;
		z = flow(s, e);
		assert_int_equal(z.frames + z.recv + z.expected, 0);
	}
	/* The slot saw all 24, as the test's (addressed to this host). */
	struct xp_counters c = get_counters(s, TEST_SLOT);
	assert_int_equal(c.pkts, 24);
	assert_int_equal(c.udp_pkts, 24);
	assert_int_equal(c.bytes, 24 * (SIZE - 4));
}

/* A test without flows after one with them: the slot's streams count into
 * no entry, and the old entries keep what they had (until a test with
 * flows starts them again, zeroed). */
static void test_start_without_flows_clears(void **state)
{
	struct server_bpf *s = *state;
	__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };

	se[0] = 1;
	start(s, se);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(send1(s, 1, 7, 0, k), XDP_DROP);
	assert_int_equal(flow(s, 0).recv, 3);
	start(s, NULL);
	for (uint32_t k = 0; k < 3; k++)
		assert_int_equal(send1(s, 1, 7, 0, k), XDP_DROP);
	assert_int_equal(flow(s, 0).recv, 3);
	assert_int_equal(get_counters(s, TEST_SLOT).pkts, 6);
	/* Started again with flows: the entry is zeroed first. */
	start(s, se);
	assert_int_equal(flow(s, 0).frames, 0);
	assert_int_equal(send1(s, 2, 9, 0, 0), XDP_DROP);
	assert_int_equal(flow(s, 0).recv, 1);
}

/* A frame to another host (one we would forward), VLAN or QinQ tagged: the
 * test's only with the right tag, and then counted in its flow; with a
 * wrong one it passes untouched and no flow moves. */
static void test_forwarded_tagged(void **state)
{
	struct server_bpf *s = *state;
	__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };
	const uint64_t wrong[2] = { KEY[0] ^ 1, KEY[1] };
	uint8_t in[256], out[2048];

	se[4] = 9 + 1;
	start(s, se);
	for (int nvlan = 0; nvlan <= 2; nvlan++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out, .data_size_out = sizeof(out));
		size_t n = frame(nvlan, 300, 4, (uint32_t)nvlan, xt_now_ticks(), wrong, 1, in, sizeof(in));

		o.data_size_in = (__u32)n;
		assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(s->progs.xdp_server), &o), 0);
		assert_int_equal(o.retval, XDP_PASS);
		assert_int_equal(o.data_size_out, n);
		assert_memory_equal(out, in, n);
		assert_int_equal(flow(s, 9).frames, (uint64_t)nvlan); /* the earlier rounds' right ones */

		n = frame(nvlan, 300, 4, (uint32_t)nvlan, xt_now_ticks(), KEY, 1, in, sizeof(in));
		assert_int_equal(run(s, in, n), XDP_DROP);
		assert_int_equal(flow(s, 9).recv, (uint64_t)nvlan + 1);
	}
	assert_int_equal(get_counters(s, TEST_SLOT).pkts, 3);
	assert_int_equal(get_gstat(s, XP_G_FOREIGN), 3);
}

/* Three tags: beyond what the program parses (XP_VLAN_MAX_DEPTH 2): passed,
 * not counted. An entry past flow_acct is refused by the loader. */
static void test_three_tags_and_limits(void **state)
{
	struct server_bpf *s = *state;
	struct xp_meas_maps mm = maps(s);
	struct xp_slot_meas m = { .t0 = 1, .ival = 1000 };
	__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };
	struct wf w = { .nvlan = 3, .vid = { 1, 2, 3 }, .l4 = IPPROTO_UDP, .sport = 40000, .dport = TEST_PORT,
			.payload = 18 };
	uint8_t st[8], buf[256];
	size_t n;

	se[0] = 1;
	start(s, se);
	memcpy(w.dmac, SRV_DMAC, 6);
	w_ip4(w.saddr, 10, 0, 0, 1);
	w_ip4(w.daddr, 10, 0, 0, 2);
	xt_stamp_bytes(0, 0, xt_now_ticks(), st);
	n = xt_stamped_frame(&w, st, 0, buf, sizeof(buf));
	assert_int_equal(run(s, buf, n), XDP_PASS);
	assert_int_equal(get_counters(s, TEST_SLOT).pkts, 0);
	assert_int_equal(flow(s, 0).frames, 0);

	se[0] = XP_FLOW_ENTRIES + 1;
	assert_int_equal(xp_meas_maps_start_flows(&mm, TEST_SLOT, &m, se), -EINVAL);
	assert_int_equal(xp_meas_maps_read_flow(&mm, XP_FLOW_ENTRIES, &(struct xp_flow_acct){ 0 }), -EINVAL);
}

/* 256 flows, one stream each (the most one test has): each counts its own. */
static void test_256_flows(void **state)
{
	struct server_bpf *s = *state;
	__u32 se[XP_STAMP_MAX_STREAMS];

	for (unsigned st = 0; st < XP_STAMP_MAX_STREAMS; st++)
		se[st] = 512 + st + 1; /* entries 512..767 */
	start(s, se);
	for (uint32_t st = 0; st < XP_STAMP_MAX_STREAMS; st++)
		for (uint32_t k = 0; k <= st % 3; k++)
			assert_int_equal(send1(s, 1, (uint16_t)(1 + st), st, k), XDP_DROP);
	for (unsigned st = 0; st < XP_STAMP_MAX_STREAMS; st++) {
		struct xp_flow_acct f = flow(s, 512 + st);

		assert_int_equal(f.recv, st % 3 + 1);
		assert_int_equal(f.expected, st % 3 + 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_flows_over_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_start_without_flows_clears, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forwarded_tagged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_three_tags_and_limits, setup, teardown),
		cmocka_unit_test_setup_teardown(test_256_flows, setup, teardown),
	};
	int r = server_prog_init("test_server_flows");

	if (r)
		return r;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
