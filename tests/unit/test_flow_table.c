/*
 * Unit tests for a flow's frame table (engine/flow_table.c), as the AF_XDP
 * engine sends from it (engine/xsk_flows.c): frames of three flows
 * interleaved onto a few reused slots, each copied in as its entry's prefix
 * with the stamp written over it, must be frame n of its flow: every field
 * as its pattern gives it, the size its size's, the stamp the one written,
 * and both checksums right (parsed back by tests/lib/wire.h, which computes
 * them itself). Also the period (lcm of the patterns') and its cap, and the
 * refusal of a stamped size without room for the stamp.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/types.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/stamp.h"
#include "engine/flow_table.h"
#include "frame/frame_stamp.h"
#include "tests/lib/wire.h"

static void addr(const char *s, struct xp_addr *a)
{
	assert_int_equal(xp_addr_parse(s, a), 0);
}

static struct xp_pattern incr(uint8_t width, xp_u128 start, xp_u128 step, uint32_t count)
{
	struct xp_pattern p = { .kind = XP_PAT_INCREMENT, .width = width, .value = start, .step = step, .count = count };
	return p;
}

/* A: IPv4/UDP, one 802.1Q tag, VID 100..109, dst 198.18.2.0..99, sport random 10000..10999 (1000 values), 128 bytes. */
static void flow_a(struct xp_engine_flow *f)
{
	struct xp_flow_hdr h = { .dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
				 .l4_proto = IPPROTO_UDP, .sport = 10000, .dport = 5201, .nvlan = 1,
				 .vlan = { { .tpid = XP_TPID_8021Q, .vid = 100 } } };
	addr("198.18.1.2", &h.src);
	addr("198.18.2.0", &h.dst);
	memset(f, 0, sizeof(*f));
	xp_flow_pat_init(&f->hdr, &h);
	f->hdr.f[XP_FF_VLAN0_VID] = incr(12, 100, 1, 10);
	f->hdr.f[XP_FF_DST] = incr(32, 0xc6120200u, 1, 100);
	f->hdr.f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 16, .min = 10000, .max = 10999,
						     .seed = 7, .count = 1000 };
	f->frame_size = 128;
	f->stamps = true;
}

/* B: IPv6/TCP, QinQ, dport one of 3 values, sizes 100, 104, ... 124 (7): period 21. */
static void flow_b(struct xp_engine_flow *f)
{
	struct xp_flow_hdr h = { .dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
				 .l4_proto = IPPROTO_TCP, .sport = 40000, .dport = 1, .tcp_flags = 0x18, .seq = 1,
				 .ack = 1, .nvlan = 2, .dscp = 46, .ttl = 7,
				 .vlan = { { .tpid = XP_TPID_8021AD, .vid = 10 }, { .tpid = XP_TPID_8021Q, .vid = 300 } } };
	addr("2001:2::1", &h.src);
	addr("2001:2:0:1::1", &h.dst);
	memset(f, 0, sizeof(*f));
	xp_flow_pat_init(&f->hdr, &h);
	f->hdr.f[XP_FF_DPORT] = (struct xp_pattern){ .kind = XP_PAT_VALUES, .width = 16, .nvalues = 3,
						     .values = { 5201, 5202, 5203 } };
	f->size_pat_set = true;
	f->size_pat = incr(16, 100, 4, 7);
	f->stamps = true;
}

/* C: IPv4/TCP at 64 bytes: the stamp half in the IPv4 ID. */
static void flow_c(struct xp_engine_flow *f)
{
	struct xp_flow_hdr h = { .dst_mac = { 2, 0, 0, 0, 0, 2 }, .src_mac = { 2, 0, 0, 0, 0, 1 },
				 .l4_proto = IPPROTO_TCP, .sport = 40001, .dport = 5201, .tcp_flags = 0x18, .seq = 1,
				 .ack = 1 };
	addr("198.18.1.2", &h.src);
	addr("198.18.3.1", &h.dst);
	memset(f, 0, sizeof(*f));
	xp_flow_pat_init(&f->hdr, &h);
	f->hdr.f[XP_FF_TTL] = incr(8, 200, 255, 5); /* decreasing by wrap: 200, 199, ... */
	f->frame_size = 64;
	f->stamps = true;
}

/* The stamp as the parser finds it: the payload's first 8 bytes, or ID + 6 bytes. */
static uint64_t stamp_read(const uint8_t *f, const struct frame_layout *lay, uint8_t place)
{
	uint8_t b[8];
	if (place == XP_STAMP_AT_IPID) {
		memcpy(b, f + lay->l3_off + 4, 2);
		memcpy(b + 2, f + lay->payload_off, 6);
	} else {
		memcpy(b, f + lay->payload_off, 8);
	}
	uint64_t v = 0;
	for (unsigned i = 0; i < 8; i++)
		v = v << 8 | b[i];
	return v;
}

static void test_interleaved_slots(void **state)
{
	(void)state;
	static struct xp_engine_flow fl[3];
	struct xp_flow_table tb[3];
	char err[256];
	static uint8_t slots[4][2048]; /* zero, as the engine's mmap'd UMEM */
	const uint64_t key[2] = { 0x1122334455667788ull, 0x99aabbccddeeff00ull };
	flow_a(&fl[0]);
	flow_b(&fl[1]);
	flow_c(&fl[2]);
	assert_int_equal(xp_flow_period(&fl[0], XP_FLOW_TABLE_MAX), 1000);
	assert_int_equal(xp_flow_period(&fl[1], XP_FLOW_TABLE_MAX), 21);
	assert_int_equal(xp_flow_period(&fl[2], XP_FLOW_TABLE_MAX), 5);
	for (unsigned f = 0; f < 3; f++)
		assert_int_equal(xp_flow_table_build(&fl[f], XP_FLOW_TABLE_MAX, true, &tb[f], err, sizeof(err)), 0);
	assert_int_equal(tb[2].e[0].place, XP_STAMP_AT_IPID);
	assert_int_equal(tb[0].e[0].place, XP_STAMP_AT_PAYLOAD);
	uint64_t n[3] = { 0 }, tcp_next[3] = { 0 };
	unsigned bins[10] = { 0 };
	for (unsigned k = 0; k < 6000; k++) {
		unsigned f = k % 7 < 4 ? 0 : k % 7 < 6 ? 1 : 2; /* 4:2:1, as a schedule */
		uint64_t i = n[f]++;
		const struct xp_flow_entry *en = &tb[f].e[i % tb[f].period];
		uint8_t *p = slots[k % 4];
		memcpy(p, en->pre, XP_FLOW_PRE);
		if (tb[f].seq_adv) /* as the engine: a TCP data flow's segment starts where its last one ended */
			frame_set_seq(p, &en->lay, xp_flow_seq_of(&tb[f], i));
		uint64_t st = xp_stamp_pack(f, i, 1000 + k);
		frame_put_stamp(p, &en->lay, (enum xp_stamp_place)en->place, st, key);
		/* What the frame must be. */
		struct xp_flow_hdr h;
		xp_flow_pat_at(&fl[f].hdr, i, &h);
		assert_int_equal(en->lay.len + 4, xp_flow_size_at(&fl[f], i));
		struct wp w = w_parse(p, en->lay.len);
		assert_true(w.ok);
		assert_true(w.ip_csum_ok);
		assert_true(w.l4_csum_ok);
		assert_int_equal(w.nvlan, h.nvlan);
		for (unsigned v = 0; v < h.nvlan; v++) {
			assert_int_equal(w.tpid[v], h.vlan[v].tpid);
			assert_int_equal(w.tci[v] & 0xfff, h.vlan[v].vid);
		}
		assert_int_equal(w.sport, h.sport);
		assert_int_equal(w.dport, h.dport);
		assert_int_equal(w.ttl, h.ttl ? h.ttl : 64);
		assert_memory_equal(w.daddr, &h.dst.v6, h.dst.family == AF_INET6 ? 16 : 4);
		assert_int_equal(w.tos >> 2, h.dscp);
		assert_true(stamp_read(p, &en->lay, en->place) == st);
		if (h.l4_proto == IPPROTO_TCP) {
			/* One stream: the sequence number is the first frame's plus every payload byte sent before. */
			assert_true(tb[f].seq_adv);
			assert_int_equal(w.seq, (uint32_t)(h.seq + tcp_next[f]));
		}
		tcp_next[f] += en->lay.payload_len;
		if (f == 0) {
			/* The declared sequences, frame by frame. */
			assert_int_equal(h.vlan[0].vid, 100 + i % 10);
			assert_int_equal(w.daddr[3], i % 100);
			bins[(w.sport - 10000) / 100]++;
		}
	}
	/* The random port spreads over its range (3428 frames, 10 bins of 100 ports: ~343 each). */
	for (unsigned b = 0; b < 10; b++)
		assert_true(bins[b] > 200 && bins[b] < 500);
	for (unsigned f = 0; f < 3; f++)
		xp_flow_table_free(&tb[f]);
}

static void test_period_cap(void **state)
{
	(void)state;
	static struct xp_engine_flow f;
	struct xp_flow_table t;
	char err[256];
	flow_a(&f);
	/* 1000 * 257 (coprime to 1000) = 257 000 frames: more than the cap. */
	f.hdr.f[XP_FF_DPORT] = incr(16, 6000, 1, 257);
	assert_int_equal(xp_flow_period(&f, XP_FLOW_TABLE_MAX), XP_FLOW_TABLE_MAX + 1);
	assert_int_equal(xp_flow_table_build(&f, XP_FLOW_TABLE_MAX, true, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "repeat after more than 65536"));
	assert_null(t.e);
	/* The same flow fits a cap above its period, and less fits less. */
	assert_int_equal(xp_flow_period(&f, 1u << 20), 257000);
	f.hdr.f[XP_FF_DPORT] = incr(16, 6000, 1, 8); /* lcm(1000, 8) = 1000 */
	assert_int_equal(xp_flow_period(&f, XP_FLOW_TABLE_MAX), 1000);
	assert_int_equal(xp_flow_table_build(&f, 999, true, &t, err, sizeof(err)), -1);
}

static void test_no_room_for_stamp(void **state)
{
	(void)state;
	static struct xp_engine_flow f;
	struct xp_flow_table t;
	char err[256];
	flow_b(&f);
	f.size_pat_set = false;
	f.frame_size = 86; /* IPv6/TCP with two tags: no payload */
	assert_int_equal(xp_flow_table_build(&f, XP_FLOW_TABLE_MAX, true, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "no room for the stamp"));
	/* Without stamps the frame is fine, and carries none. */
	assert_int_equal(xp_flow_table_build(&f, XP_FLOW_TABLE_MAX, false, &t, err, sizeof(err)), 0);
	assert_int_equal(t.e[0].place, XP_STAMP_NONE);
	assert_int_equal(t.e[0].lay.len, 82);
	xp_flow_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_slots),
		cmocka_unit_test(test_period_cap),
		cmocka_unit_test(test_no_room_for_stamp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
