// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 26, frames without stamps counted per flow by the headers the flow
 * declares unique (bpf/measure.h's struct xp_flow_key, map flow_key, the
 * slot's key_mask; bpf/server.bpf.c's xp_key_count). The keys go in and out
 * through the real loader code (loader/flow_maps.c's xp_meas_keys_start and
 * xp_meas_keys_clear); the slot's key_mask is written into slot_cfg as the
 * loader's server_prog_flow_keys does.
 *
 *  - two unstamped flows told apart by DSCP (0 and 46), beside a stamped
 *    flow with DSCP 46 whose tagged frames are read as stamps, never by key;
 *  - two told apart by source port, and two by the frame's VLAN ID;
 *  - a frame whose key is no flow's: counted in the slot and as unkeyed;
 *  - a frame with a flow's key not addressed to this host: passed with its
 *    bytes unchanged, counted nowhere ("only our frames are ours");
 *  - a test without stamps (slot_meas ival 0) counts by key just the same;
 *  - the keys gone after the test's end (another slot's stay); a key given
 *    twice or an entry past flow_acct refused.
 *
 * Frames come from user/frame's builder (frame_build_hdr). Needs root
 * (BPF_PROG_RUN).
 */
#include "tests/bpf/server_prog_fixture.h"

#include <sys/socket.h>

#include "bpf/lib/stamp.h"
#include "bpf/measure.h"
#include "frame/flow_hdr.h"
#include "frame/frame.h"
#include "frame/frame_stamp.h"
#include "loader/meas_maps.h"
#include "tests/lib/stamped.h"
#include "tests/lib/wire.h"

static const uint64_t KEY[2] = { 0x1122334455667788ull, 0x99aabbccddeeff00ull };
#define SIZE 128

static struct xp_meas_maps maps(struct server_bpf *s)
{
	return (struct xp_meas_maps){ .slot_meas = s->maps.slot_meas, .stream_acct = s->maps.stream_acct,
				      .ibins = s->maps.ibins, .meas_stats = s->maps.meas_stats,
				      .nslots = XP_MAX_SLOTS, .stream_flow = s->maps.stream_flow,
				      .flow_acct = s->maps.flow_acct, .nflow_entries = XP_FLOW_ENTRIES,
				      .flow_key = s->maps.flow_key };
}

/* What a frame of the tests is: UDP 10.0.0.1:sport -> 10.0.0.2:TEST_PORT
 * (or to another host, fwd), DSCP dscp, one 802.1Q tag vid (0: none). */
struct fr {
	uint8_t dscp;
	uint16_t sport, vid;
	int fwd;
};

/* The frame; stamped (stream 0, seq) with the tag under KEY if stamped. */
static size_t frame(struct fr f, int stamped, uint32_t seq, uint8_t *buf, size_t cap)
{
	struct xp_flow_hdr h = { .src_mac = { 2, 0, 0, 0, 0, 1 }, .l4_proto = IPPROTO_UDP,
				 .sport = f.sport ? f.sport : 40000, .dport = TEST_PORT, .dscp = f.dscp };
	struct frame_layout lay;
	size_t n;

	memcpy(h.dst_mac, SRV_DMAC, 6);
	assert_int_equal(xp_addr_parse("10.0.0.1", &h.src), 0);
	assert_int_equal(xp_addr_parse(f.fwd ? "198.18.119.1" : "10.0.0.2", &h.dst), 0);
	if (f.vid) {
		h.nvlan = 1;
		h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = f.vid };
	}
	assert_int_equal(frame_layout_hdr(&h, SIZE, false, &lay, NULL), 0);
	n = frame_build_hdr(&h, SIZE, false, 0, buf, cap, NULL);
	assert_int_equal(n, SIZE - 4);
	if (stamped)
		frame_put_stamp(buf, &lay, XP_STAMP_AT_PAYLOAD, xp_stamp_pack(0, seq, xt_now_ticks()), KEY);
	struct wp w = w_parse(buf, n);
	assert_true(w.ok && w.ip_csum_ok && w.l4_csum_ok);
	return n;
}

static uint32_t send1(struct server_bpf *s, struct fr f, int stamped, uint32_t seq)
{
	uint8_t buf[256];
	size_t n = frame(f, stamped, seq, buf, sizeof(buf));

	return run(s, buf, n);
}

static struct xp_flow_acct flow(struct server_bpf *s, unsigned e)
{
	struct xp_meas_maps mm = maps(s);
	struct xp_flow_acct f;

	assert_int_equal(xp_meas_maps_read_flow(&mm, e, &f), 0);
	return f;
}

static struct xp_meas_stats stats(struct server_bpf *s)
{
	struct xp_meas_maps mm = maps(s);
	struct xp_meas_stats m;

	assert_int_equal(xp_meas_maps_read_stats(&mm, TEST_SLOT, &m), 0);
	return m;
}

static void set_mask(struct server_bpf *s, uint32_t slot, uint32_t mask)
{
	struct xp_slot_cfg cfg;

	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.slot_cfg), &slot, &cfg), 0);
	cfg.key_mask = mask;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.slot_cfg), &slot, &cfg, 0), 0);
}

/* A test's start: stamps on (ival) or off, streams -> entries as given,
 * then n keys into entries, then the mask. */
static void start(struct server_bpf *s, uint64_t ival, const __u32 *stream_entry, uint32_t mask,
		  const struct xp_flow_key *keys, const __u32 *entries, unsigned n)
{
	struct xp_meas_maps mm = maps(s);
	struct xp_slot_meas m = { .t0 = xt_now_ticks(), .ival = ival, .flags = XP_MEAS_ONEWAY,
				  .key = { KEY[0], KEY[1] } };

	std_slot(s, XP_PROTO_UDP);
	assert_int_equal(xp_meas_maps_start_flows(&mm, TEST_SLOT, &m, stream_entry), 0);
	assert_int_equal(xp_meas_keys_start(&mm, TEST_SLOT, keys, entries, n), 0);
	set_mask(s, TEST_SLOT, mask);
}

static unsigned keys_of(struct server_bpf *s, uint16_t slot)
{
	struct xp_flow_key k, *cur = NULL;
	unsigned n = 0;

	while (!bpf_map_get_next_key(bpf_map__fd(s->maps.flow_key), cur, &k)) {
		n += k.slot == slot;
		cur = &k;
	}
	return n;
}

/*
 * DSCP: flow "be" (entry 10) DSCP 0, flow "ef" (entry 11) DSCP 46, no
 * stamps; flow "st" (entry 12) stream 0, stamped, DSCP 46 too. be 3
 * frames, ef 5, st 4, and 2 of DSCP 10 (no flow's): be 3, ef 5 (frames,
 * bytes, recv; nothing else), st 4 by its stamps, unkeyed 2, the slot 14.
 */
static void test_dscp(void **state)
{
	struct server_bpf *s = *state;
	__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };
	const struct xp_flow_key k[2] = { { .dscp = 0 }, { .dscp = 46 } };
	const __u32 e[2] = { 10, 11 };

	se[0] = 12 + 1;
	start(s, 250000000ull, se, XP_KEY_ON | XP_KEY_DSCP, k, e, 2);
	for (int i = 0; i < 3; i++)
		assert_int_equal(send1(s, (struct fr){ .dscp = 0 }, 0, 0), XDP_DROP);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(send1(s, (struct fr){ .dscp = 46 }, 0, 0), XDP_DROP);
		if (i < 4)
			assert_int_equal(send1(s, (struct fr){ .dscp = 46 }, 1, i), XDP_DROP);
	}
	for (int i = 0; i < 2; i++)
		assert_int_equal(send1(s, (struct fr){ .dscp = 10 }, 0, 0), XDP_DROP);

	struct xp_flow_acct be = flow(s, 10), ef = flow(s, 11), st = flow(s, 12);
	assert_int_equal(be.frames, 3);
	assert_int_equal(be.recv, 3);
	assert_int_equal(be.bytes, 3 * (SIZE - 4));
	assert_int_equal(ef.frames, 5);
	assert_int_equal(ef.recv, 5);
	assert_int_equal(ef.bytes, 5 * (SIZE - 4));
	/* No sequence and no send time: the rest stays 0. */
	assert_int_equal(be.dup + be.reordered + be.expected + be.lat_n + be.clock_neg, 0);
	assert_int_equal(ef.dup + ef.reordered + ef.expected + ef.lat_n + ef.clock_neg, 0);
	/* The stamped flow by its stamps: 4 received, 4 expected. */
	assert_int_equal(st.recv, 4);
	assert_int_equal(st.expected, 4);
	struct xp_meas_stats m = stats(s);
	assert_int_equal(m.stamped, 4);  /* only the tagged frames were read as stamps */
	assert_int_equal(m.nostamp, 0);
	assert_int_equal(m.unkeyed, 2);
	assert_int_equal(get_counters(s, TEST_SLOT).pkts, 14);
	assert_int_equal(keys_of(s, TEST_SLOT), 2);
}

/* Source port (20000 -> entry 0, 20001 -> entry 1) and, on another start,
 * the frame's VLAN ID (100 -> entry 2, 200 -> entry 3; none -> no flow). */
static void test_sport_and_vid(void **state)
{
	struct server_bpf *s = *state;
	const struct xp_flow_key ks[2] = { { .sport = 20000 }, { .sport = 20001 } };
	const __u32 es[2] = { 0, 1 };
	const struct xp_flow_key kv[2] = { { .vid = { 100, 0 } }, { .vid = { 200, 0 } } };
	const __u32 ev[2] = { 2, 3 };

	start(s, 250000000ull, NULL, XP_KEY_ON | XP_KEY_SPORT, ks, es, 2);
	for (int i = 0; i < 4; i++)
		assert_int_equal(send1(s, (struct fr){ .sport = 20000, .dscp = (uint8_t)i }, 0, 0), XDP_DROP);
	for (int i = 0; i < 7; i++)
		assert_int_equal(send1(s, (struct fr){ .sport = 20001, .vid = 5 }, 0, 0), XDP_DROP);
	assert_int_equal(send1(s, (struct fr){ .sport = 20002 }, 0, 0), XDP_DROP);
	assert_int_equal(flow(s, 0).recv, 4); /* whatever the DSCP: not a key field here */
	assert_int_equal(flow(s, 1).recv, 7);
	assert_int_equal(flow(s, 1).bytes, 7 * (SIZE - 4));
	assert_int_equal(stats(s).unkeyed, 1);

	start(s, 250000000ull, NULL, XP_KEY_ON | XP_KEY_VID0, kv, ev, 2);
	assert_int_equal(keys_of(s, TEST_SLOT), 2); /* the earlier test's keys went */
	for (int i = 0; i < 2; i++)
		assert_int_equal(send1(s, (struct fr){ .vid = 100, .sport = 20000 }, 0, 0), XDP_DROP);
	for (int i = 0; i < 3; i++)
		assert_int_equal(send1(s, (struct fr){ .vid = 200, .sport = 20000 + i }, 0, 0), XDP_DROP);
	assert_int_equal(send1(s, (struct fr){ .sport = 20000 }, 0, 0), XDP_DROP); /* untagged: vid 0xfff */
	assert_int_equal(flow(s, 2).recv, 2);
	assert_int_equal(flow(s, 3).recv, 3);
	assert_int_equal(flow(s, 0).recv, 4); /* the old entries keep what they had */
	assert_int_equal(stats(s).unkeyed, 1);
}

/* A frame with a flow's key to an address this host does not hold: not the
 * test's (no stamp, so no tag), passed as it came, counted nowhere. */
static void test_not_for_us(void **state)
{
	struct server_bpf *s = *state;
	const struct xp_flow_key k = { .dscp = 46 };
	const __u32 e = 7;
	uint8_t in[256], out[2048];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_out = out, .data_size_out = sizeof(out));
	size_t n;

	start(s, 250000000ull, NULL, XP_KEY_ON | XP_KEY_DSCP, &k, &e, 1);
	n = frame((struct fr){ .dscp = 46, .fwd = 1 }, 0, 0, in, sizeof(in));
	o.data_size_in = (__u32)n;
	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(s->progs.xdp_server), &o), 0);
	assert_int_equal(o.retval, XDP_PASS);
	assert_int_equal(o.data_size_out, n);
	assert_memory_equal(out, in, n);
	assert_int_equal(flow(s, 7).frames, 0);
	assert_int_equal(stats(s).unkeyed, 0);
	assert_int_equal(get_counters(s, TEST_SLOT).pkts, 0);
	assert_int_equal(get_gstat(s, XP_G_FOREIGN), 1);
	/* The same frame to this host is the flow's. */
	assert_int_equal(send1(s, (struct fr){ .dscp = 46 }, 0, 0), XDP_DROP);
	assert_int_equal(flow(s, 7).recv, 1);
}

/* --no-stamps (slot_meas off): counted by key all the same; one lone flow
 * needs no field (XP_KEY_ON alone: every frame of the slot is its). */
static void test_no_stamps_one_flow(void **state)
{
	struct server_bpf *s = *state;
	const struct xp_flow_key k = { 0 };
	const __u32 e = 300;

	start(s, 0, NULL, XP_KEY_ON, &k, &e, 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(send1(s, (struct fr){ .dscp = (uint8_t)i, .sport = (uint16_t)(1000 + i) }, 0, 0),
				 XDP_DROP);
	assert_int_equal(flow(s, 300).recv, 5);
	assert_int_equal(stats(s).unkeyed, 0);
	assert_int_equal(stats(s).stamped + stats(s).nostamp, 0);
}

/* The end: the slot's keys go, another slot's stay; then the slot's frames
 * count in no flow (mask 0, as the loader leaves it). Refusals. */
static void test_end_and_refusals(void **state)
{
	struct server_bpf *s = *state;
	struct xp_meas_maps mm = maps(s);
	const struct xp_flow_key k[2] = { { .sport = 1 }, { .sport = 1 } };
	const __u32 e[2] = { 20, 21 }, past = XP_FLOW_ENTRIES;

	assert_int_equal(xp_meas_keys_start(&mm, TEST_SLOT + 1, k, e, 1), 0);
	start(s, 250000000ull, NULL, XP_KEY_ON | XP_KEY_SPORT, k, e, 1);
	assert_int_equal(send1(s, (struct fr){ .sport = 1 }, 0, 0), XDP_DROP);
	assert_int_equal(flow(s, 20).recv, 1);
	set_mask(s, TEST_SLOT, 0);
	assert_int_equal(xp_meas_keys_clear(&mm, TEST_SLOT), 0);
	assert_int_equal(keys_of(s, TEST_SLOT), 0);
	assert_int_equal(keys_of(s, TEST_SLOT + 1), 1);
	assert_int_equal(send1(s, (struct fr){ .sport = 1 }, 0, 0), XDP_DROP);
	assert_int_equal(flow(s, 20).recv, 1);
	assert_int_equal(get_counters(s, TEST_SLOT).pkts, 2);

	assert_int_equal(xp_meas_keys_start(&mm, TEST_SLOT, k, e, 2), -EEXIST);
	assert_int_equal(keys_of(s, TEST_SLOT), 0); /* none left half in */
	assert_int_equal(xp_meas_keys_start(&mm, TEST_SLOT, k, &past, 1), -EINVAL);
	mm.flow_key = NULL;
	assert_int_equal(xp_meas_keys_start(&mm, TEST_SLOT, k, e, 1), -EOPNOTSUPP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_dscp, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sport_and_vid, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_for_us, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_stamps_one_flow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_and_refusals, setup, teardown),
	};
	int r = server_prog_init("test_server_flow_keys");

	if (r)
		return r;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
