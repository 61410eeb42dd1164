/*
 * The AF_XDP engine's stamped stream frames (user/engine/xsk.c, kind
 * XP_TEST_STREAM) on a real veth pair, captured on the far end with an
 * AF_PACKET socket:
 *
 *   netns xpxc-a:  xpxca0 (engine, AF_XDP, 2 queues) <--veth--> xpxcb0 (capture)
 *
 * No IP addresses and no IPv6 on either side: nothing answers, nothing else
 * is sent, the capture holds exactly what the engine sent. Every captured
 * frame is checked with csum.h and compared with a fresh frame_build of its
 * ports, its stamp read back (see check_stream_frame).
 *
 * The connection tests are in test_xsk_connect.c; the namespace, the engine
 * configuration and the capture are in xsk_fixture.h.
 *
 * Needs root (exits 77 without it, which tests/run.sh counts as a failure). The namespace is removed at
 * the end, on a failed assertion, at exit and on SIGINT/SIGTERM/SIGALRM.
 */
#include "tests/root/xsk_fixture.h"

/* ---- stream tests with stamps ------------------------------------------ */

#define STAMP_BASE 9
#define STAMP_IVAL (250000000ull >> XP_STAMP_TICK_SHIFT) /* 250 ms */

static uint64_t clock_ticks(bool tai)
{
	struct timespec ts;

	clock_gettime(tai ? CLOCK_TAI : CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

static void stream_cfg(struct xp_engine_cfg *c, bool v6, uint8_t proto, size_t size, unsigned queues)
{
	struct frame_spec *t = &c->frames.tmpl;

	base_cfg(c, XP_TEST_STREAM, v6);
	t->l4_proto = proto;
	t->tcp_flags = TH_ACK | TH_PUSH;
	t->tcp_syn_options = false;
	t->no_payload = false;
	t->window = 0;
	t->seq = 1;
	t->ack = 1;
	t->frame_size = size;
	t->payload_fill = 0x5a;
	c->frames.queues = queues;
	c->frames.stamp.ival = STAMP_IVAL;
	c->frames.stamp.stream_base = STAMP_BASE;
}

/* The test's tag key (bpf/lib/stamp.h), given to the engine as the client
 * does from the server's start reply (ops->set_stamp_key). */
static const uint64_t TAG_KEY[2] = { 0x5555aaaa3333ccccull, 0x0f0f0f0ff0f0f0f0ull };

/*
 * A captured stream frame: IPv4 header and L4 checksums by the test's own
 * RFC 1071 sum and by csum.h; every byte but the stamp and the checksums
 * equal to a fresh frame_build with the frame's ports; the stamp read back
 * from where lib/stamp.h puts it (payload, or IPv4 ID + payload).
 */
static void check_stream_frame(const struct xp_engine_cfg *c, const uint8_t *f, size_t len, struct cap *out)
{
	const struct frame_spec *t = &c->frames.tmpl;
	bool v6 = t->src.family == AF_INET6;
	size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), l4_len, ck;
	uint8_t want[9216], a[9216], st[8];
	struct frame_spec s = *t;
	struct frame_layout lay;

	assert_int_equal(len, t->frame_size - 4);
	assert_int_equal(frame_layout_of(t, &lay, NULL), 0);
	memset(out, 0, sizeof(*out));
	if (v6) {
		l4_len = (size_t)(f[l3 + 4] << 8 | f[l3 + 5]);
		assert_int_equal(ref_sum_proto(f + l3 + 8, f + l3 + 24, 16, t->l4_proto, f + l4, l4_len, true), 0);
	} else {
		assert_int_equal(ref_sum_proto(NULL, NULL, 0, 0, f + l3, 20, false), 0);
		assert_int_equal(csum_ipv4_hdr(f + l3, 20), 0);
		l4_len = (size_t)(f[l3 + 2] << 8 | f[l3 + 3]) - 20;
		assert_int_equal(ref_sum_proto(f + l3 + 12, f + l3 + 16, 4, t->l4_proto, f + l4, l4_len, true), 0);
	}
	assert_true(l4 + l4_len <= len);
	ck = l4 + (t->l4_proto == IPPROTO_TCP ? 16 : 6);
	if (t->l4_proto == IPPROTO_UDP)
		assert_true(f[ck] | f[ck + 1]); /* 0 would mean "no checksum" */
	out->sport = (uint16_t)(f[l4] << 8 | f[l4 + 1]);
	out->dport = (uint16_t)(f[l4 + 2] << 8 | f[l4 + 3]);

	enum xp_stamp_place place = xp_stamp_place_of(v6, lay.payload_len);
	memset(st, 0, sizeof(st));
	if (place == XP_STAMP_AT_PAYLOAD) {
		memcpy(st, f + lay.payload_off, 8);
	} else if (place == XP_STAMP_AT_IPID) {
		memcpy(st, f + l3 + 4, 2);
		memcpy(st + 2, f + lay.payload_off, 6);
	}
	for (int k = 0; k < 8; k++)
		out->stamp = out->stamp << 8 | st[k];
	/* Its tag after it where the payload has room, under the test's key. */
	bool tagged = xp_stamp_tagged(place, lay.payload_len);
	if (tagged) {
		const uint8_t *tp = f + lay.payload_off + 8;
		uint32_t tag = (uint32_t)tp[0] << 24 | tp[1] << 16 | tp[2] << 8 | tp[3];
		if (tag != xp_stamp_tag(TAG_KEY[0], TAG_KEY[1], out->stamp))
			fail_msg("stamp %016llx: tag %08x, expected %08x", (unsigned long long)out->stamp, tag,
				 xp_stamp_tag(TAG_KEY[0], TAG_KEY[1], out->stamp));
	}

	s.sport = out->sport;
	s.dport = out->dport;
	assert_int_equal(frame_build(&s, want, sizeof(want), NULL), len);
	memcpy(a, f, len);
	/* Mask what the stamp may change: the stamp bytes and the checksums. */
	memset(a + ck, 0, 2);
	memset(want + ck, 0, 2);
	if (place != XP_STAMP_NONE) {
		size_t n = place == XP_STAMP_AT_IPID ? 6 : tagged ? 12 : 8;
		memset(a + lay.payload_off, 0, n);
		memset(want + lay.payload_off, 0, n);
	}
	if (place == XP_STAMP_AT_IPID) {
		memset(a + l3 + 4, 0, 2);
		memset(want + l3 + 4, 0, 2);
		memset(a + l3 + 10, 0, 2);
		memset(want + l3 + 10, 0, 2);
	}
	if (memcmp(a, want, len))
		fail_msg("captured stream frame differs from a fresh build of its ports beyond the stamp");
}

/*
 * A stamped stream test: nframes at pps on `queues` queues, captured on the
 * peer. Every frame carries stream STAMP_BASE + thread, seq 0, 1, 2... per
 * stream in arrival order (a frame rewritten before the kernel was done with
 * it would show as a repeated or missing seq), a send time between t0 and the
 * end of the run, non-decreasing per stream; the engine's sent_in of every
 * interval equals the frames captured with that interval's send times, and
 * all add up to the engine's count and the interface's.
 */
static void stream_stamp_case_clock(bool v6, uint8_t proto, size_t size, unsigned queues, double pps,
				    uint64_t nframes, enum xp_stamp_place place, bool tai)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	uint64_t next[4] = { 0 }, last[4] = { 0 }, cnt[8] = { 0 }, t0, t1, got;
	size_t n;
	char err[256] = "";

	stream_cfg(&c, v6, proto, size, queues);
	c.pps = pps;
	c.frames.stamp.tai = tai;
	capture_open();
	if (ops->create(&c, &eng, err, sizeof(err)))
		fail_msg("create: %s", err);
	t0 = clock_ticks(tai);
	ops->set_t0(eng, t0);
	ops->set_stamp_key(eng, TAG_KEY);
	if (ops->start(eng, err, sizeof(err)))
		fail_msg("start: %s", err);
	wait_tx(nframes, 30);
	ops->stop(eng);
	t1 = clock_ticks(tai);
	ops->read(eng, &st);
	n = capture_read_with(&c, caps, MAXCAP, st.tx.pkts, check_stream_frame);
	print_message("sent %llu stamped frames on %u queue(s) in %.3f s, captured %zu\n",
		      (unsigned long long)st.tx.pkts, queues, (double)((t1 - t0) << XP_STAMP_TICK_SHIFT) / 1e9, n);
	assert_int_equal(n, st.tx.pkts);
	assert_true(n >= nframes);
	assert_int_equal(st.tx.errors, 0);
	if (place == XP_STAMP_NONE) {
		assert_int_equal(ops->sent_in(eng, 0, &got), -EOPNOTSUPP);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t s = caps[i].stamp, ts = xp_stamp_ts_extend(t0, xp_stamp_ts32(s));
		unsigned q = xp_stamp_stream(s) - STAMP_BASE;

		assert_true(q < queues);
		if (xp_stamp_seq24(s) != (next[q] & XP_STAMP_SEQ_MASK))
			fail_msg("frame %zu: stream %u seq %u, expected %llu", i, q + STAMP_BASE, xp_stamp_seq24(s),
				 (unsigned long long)next[q]);
		next[q]++;
		assert_true(ts >= t0 && ts <= t1);
		assert_true(ts >= last[q]);
		last[q] = ts;
		uint64_t k = (ts - t0) / STAMP_IVAL;
		assert_true(k < 8);
		cnt[k]++;
	}
	for (unsigned q = 0; q < queues; q++)
		assert_true(next[q] > 0); /* every thread sent */
	uint64_t k_last = (t1 - t0) / STAMP_IVAL, sum = 0;
	for (uint64_t k = 0; k <= k_last && k < 8; k++) {
		int r = ops->sent_in(eng, k, &got);
		if (k + XP_IBINS <= k_last) {
			/* older than the ring: only a run slower than planned gets here */
			assert_true(r == -ENOENT || r == 0);
			continue;
		}
		assert_int_equal(r, 0);
		print_message("interval %llu: sent_in %llu, captured %llu\n", (unsigned long long)k,
			      (unsigned long long)got, (unsigned long long)cnt[k]);
		assert_int_equal(got, cnt[k]);
		sum += got;
	}
	if (k_last < XP_IBINS)
		assert_int_equal(sum, n);
}

static void stream_stamp_case(bool v6, uint8_t proto, size_t size, unsigned queues, double pps, uint64_t nframes,
			      enum xp_stamp_place place)
{
	stream_stamp_case_clock(v6, proto, size, queues, pps, nframes, place, false);
}

/* 64-byte IPv4/TCP: stamp in the IPv4 ID + 6 payload bytes. 20000 frames
 * through the 4096-frame UMEM: each frame rewritten about 5 times. */
static void test_stream_stamp_v4_tcp_64(void **state)
{
	stream_stamp_case(false, IPPROTO_TCP, 64, 1, 50000, 20000, XP_STAMP_AT_IPID);
}

static void test_stream_stamp_v4_udp_64_two_queues(void **state)
{
	stream_stamp_case(false, IPPROTO_UDP, 64, 2, 20000, 6000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v4_tcp_128(void **state)
{
	stream_stamp_case(false, IPPROTO_TCP, 128, 1, 20000, 5000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v4_udp_1518(void **state)
{
	stream_stamp_case(false, IPPROTO_UDP, 1518, 1, 20000, 5000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v6_tcp_86(void **state)
{
	stream_stamp_case(true, IPPROTO_TCP, 86, 1, 20000, 5000, XP_STAMP_AT_PAYLOAD);
}

/* --clock tai: send times of CLOCK_TAI, checked against it around the run. */
static void test_stream_stamp_v4_tcp_64_tai(void **state)
{
	stream_stamp_case_clock(false, IPPROTO_TCP, 64, 1, 20000, 3000, XP_STAMP_AT_IPID, true);
}

/*
 * Jumbo frames (issue 30): longer than a 4096-byte UMEM chunk, so each goes
 * out in 2 or 3 descriptors (multi-buffer AF_XDP); every byte arrives as
 * frame_build made it (the L4 checksum covers the chunks after the first),
 * counted once per frame, not per descriptor.
 */
static void test_stream_stamp_v4_tcp_4100(void **state)
{
	stream_stamp_case(false, IPPROTO_TCP, 4100, 1, 20000, 2000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v4_udp_9018_two_queues(void **state)
{
	stream_stamp_case(false, IPPROTO_UDP, 9018, 2, 10000, 2000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v6_tcp_9018(void **state)
{
	stream_stamp_case(true, IPPROTO_TCP, 9018, 1, 10000, 2000, XP_STAMP_AT_PAYLOAD);
}

/*
 * Every frame size from 64 to 9018 around the engine's boundaries (the
 * 2048-byte chunk, the 4096-byte chunk, two and three chunks): the engine
 * sets up, its UMEM takes the frame (under ASan: no write past a slot),
 * and 300 frames arrive whole, as many as the interface counted.
 */
static void test_stream_sizes_64_to_9018(void **state)
{
	static const size_t sizes[] = { 64, 65, 1518, 1790, 1791, 1792, 2048, 3412, 4096, 4099, 4100, 4101,
					5000, 8192, 8195, 8196, 8197, 9000, 9017, 9018 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		print_message("-l %zu\n", sizes[i]);
		stream_stamp_case(false, IPPROTO_UDP, sizes[i], 1, 30000, 300, XP_STAMP_AT_PAYLOAD);
		case_teardown(state);
	}
}

/* 78-byte IPv6/TCP: no room, no stamp, frames as prebuilt. */
static void test_stream_stamp_v6_tcp_78_none(void **state)
{
	stream_stamp_case(true, IPPROTO_TCP, 78, 1, 20000, 2000, XP_STAMP_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_64, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_udp_64_two_queues, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_128, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_udp_1518, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v6_tcp_86, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_64_tai, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v6_tcp_78_none, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_4100, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_udp_9018_two_queues, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v6_tcp_9018, case_teardown),
		cmocka_unit_test_teardown(test_stream_sizes_64_to_9018, case_teardown),
	};

	if (geteuid() != 0) {
		printf("test_xsk_stream: needs root (netns, veth, AF_XDP): run as root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
