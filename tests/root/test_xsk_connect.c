/*
 * The AF_XDP engine's connection tests (user/engine/xsk.c, kinds
 * XP_TEST_CONNECT and XP_TEST_HOLD) and its refusals of a configuration, on
 * a real veth pair, captured on the far end with an AF_PACKET socket:
 *
 *   netns xpxc-a:  xpxca0 (engine, AF_XDP, 2 queues) <--veth--> xpxcb0 (capture)
 *
 * No IP addresses and no IPv6 on either side: nothing answers, nothing else
 * is sent, the capture holds exactly what the engine sent. Every captured
 * frame is checked with csum.h and compared byte for byte with a fresh
 * frame_build of the tuple and sequence number it carries.
 *
 * The stamped stream frames are tested in test_xsk_stream.c; the namespace,
 * the engine configuration and the capture are in xsk_fixture.h.
 *
 * Needs root (exits 77 without it, which tests/run.sh counts as a failure). The namespace is removed at
 * the end, on a failed assertion, at exit and on SIGINT/SIGTERM/SIGALRM.
 */
#include "tests/root/xsk_fixture.h"

static void add_bind(struct xp_engine_cfg *c, const char *a)
{
	assert_int_equal(xp_addr_parse(a, &c->bind[c->nbind]), 0);
	c->nbind++;
}

static void start_engine(const struct xp_engine_cfg *c)
{
	char err[256] = "";

	if (ops->create(c, &eng, err, sizeof(err)))
		fail_msg("create: %s", err);
	if (ops->start(eng, err, sizeof(err)))
		fail_msg("start: %s", err);
}

/* The same for a TCP segment. */
static uint16_t ref_sum_tcp(const uint8_t *src, const uint8_t *dst, size_t alen, const uint8_t *seg, size_t len)
{
	return ref_sum_proto(src, dst, alen, IPPROTO_TCP, seg, len, true);
}


/*
 * Check one captured frame completely and extract its tuple: checksums with
 * csum.h, then byte for byte against frame_build of the template with that
 * tuple, seq and flags (a SYN: the template; an RST: no options, ack 0).
 */
static void check_frame(const struct xp_engine_cfg *c, const uint8_t *f, size_t len, struct cap *out)
{
	const struct frame_spec *t = &c->frames.tmpl;
	bool v6 = t->src.family == AF_INET6;
	size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), l4_len;
	uint8_t want[256];
	struct frame_spec s;
	uint32_t sum;

	assert_true(len >= 60);
	assert_memory_equal(f, mac_rx, 6);
	assert_memory_equal(f + 6, mac_tx, 6);
	assert_int_equal(f[12] << 8 | f[13], v6 ? ETH_P_IPV6 : ETH_P_IP);
	memset(out, 0, sizeof(*out));
	out->src.family = t->src.family;
	if (v6) {
		assert_int_equal(f[l3] >> 4, 6);
		assert_int_equal(f[l3 + 6], IPPROTO_TCP);
		l4_len = (size_t)(f[l3 + 4] << 8 | f[l3 + 5]);
		memcpy(&out->src.v6, f + l3 + 8, 16);
		assert_memory_equal(f + l3 + 24, &t->dst.v6, 16);
		assert_true(l4 + l4_len <= len);
		sum = csum_pseudo_v6(&out->src.v6, &t->dst.v6, IPPROTO_TCP, (uint32_t)l4_len, 0);
	} else {
		assert_int_equal(f[l3], 0x45);
		assert_int_equal(f[l3 + 9], IPPROTO_TCP);
		assert_int_equal(csum_ipv4_hdr(f + l3, 20), 0); /* IPv4 header checksum */
		l4_len = (size_t)(f[l3 + 2] << 8 | f[l3 + 3]) - 20;
		memcpy(&out->src.v4, f + l3 + 12, 4);
		assert_memory_equal(f + l3 + 16, &t->dst.v4, 4);
		assert_true(l4 + l4_len <= len);
		sum = csum_pseudo_v4(&out->src.v4, &t->dst.v4, IPPROTO_TCP, (uint32_t)l4_len, 0);
	}
	/* TCP checksum over pseudo-header, header and options: by csum.h and
	 * by the test's own RFC 1071 sum */
	assert_int_equal(csum_fold(csum_partial(f + l4, l4_len, sum)), 0);
	if (v6)
		assert_int_equal(ref_sum_tcp(f + l3 + 8, f + l3 + 24, 16, f + l4, l4_len), 0);
	else
		assert_int_equal(ref_sum_tcp(f + l3 + 12, f + l3 + 16, 4, f + l4, l4_len), 0);
	out->sport = (uint16_t)(f[l4] << 8 | f[l4 + 1]);
	out->dport = (uint16_t)(f[l4 + 2] << 8 | f[l4 + 3]);
	out->seq = (uint32_t)f[l4 + 4] << 24 | (uint32_t)f[l4 + 5] << 16 | (uint32_t)f[l4 + 6] << 8 | f[l4 + 7];
	out->flags = f[l4 + 13];
	assert_true(out->flags == TH_SYN || out->flags == TH_RST);

	s = *t;
	s.src = out->src;
	s.sport = out->sport;
	s.dport = out->dport;
	s.seq = out->seq;
	if (out->flags == TH_RST) {
		s.tcp_flags = TH_RST;
		s.tcp_syn_options = false;
		s.ack = 0;
	}
	size_t n = frame_build(&s, want, sizeof(want), NULL);
	assert_int_equal(n, len);
	if (memcmp(want, f, n))
		fail_msg("captured frame differs from a fresh build of its tuple");
}

static size_t capture_read(const struct xp_engine_cfg *c, struct cap *caps, size_t max, uint64_t want)
{
	return capture_read_with(c, caps, max, want, check_frame);
}

/* The tuple number of a captured frame, by the documented mapping (see
 * user/engine/tuples.h): address fastest, then destination port, then source. */
static uint64_t tuple_no(const struct xp_engine_cfg *c, const struct cap *k)
{
	uint64_t nd = c->dport_hi - c->dport_lo + 1u, na = c->nbind ? c->nbind : 1;
	uint64_t a = 0;

	for (unsigned i = 0; i < c->nbind; i++)
		if (xp_addr_eq(&c->bind[i], &k->src))
			a = i + 1;
	if (c->nbind)
		assert_true(a > 0); /* one of the bind addresses */
	else
		assert_true(xp_addr_eq(&c->frames.tmpl.src, &k->src));
	assert_true(k->sport >= c->sport_lo && k->sport <= c->sport_hi);
	assert_true(k->dport >= c->dport_lo && k->dport <= c->dport_hi);
	return (((uint64_t)(k->sport - c->sport_lo) * nd) + (k->dport - c->dport_lo)) * na + (a ? a - 1 : 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t tno[MAXCAP];

/* ---- cases ------------------------------------------------------------- */

/* A connect test at pps for secs on one queue, over 2 source addresses and
 * a tuple space (2 x 100 x 4 = 800) it wraps several times. */
static void connect_one_queue(bool v6, double pps, double secs)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	uint64_t space;
	size_t n, i, expect = (size_t)(pps * secs);
	double t0;

	base_cfg(&c, XP_TEST_CONNECT, v6);
	add_bind(&c, v6 ? "2001:2:0:220::10" : "198.18.220.10");
	add_bind(&c, v6 ? "2001:2:0:220::11" : "198.18.220.11");
	space = 2 * 100 * 4;
	c.pps = pps;
	capture_open();
	t0 = xp_now();
	start_engine(&c);
	/* Until `expect` SYNs are out: a count, not a sleep (the rate's accuracy
	 * is the bench's and 50_live's business, not a timed unit test's). */
	wait_tx(expect, 30);
	ops->stop(eng);
	t0 = xp_now() - t0;
	ops->read(eng, &st);
	n = capture_read(&c, caps, MAXCAP, st.tx.pkts);
	print_message("sent %llu SYNs (%llu bytes) in %.3f s, captured %zu\n", (unsigned long long)st.tx.pkts,
		      (unsigned long long)st.tx.bytes, t0, n);

	assert_int_equal(n, st.tx.pkts);
	assert_int_equal(st.tx.bytes, st.tx.pkts * (v6 ? 94 : 74));
	assert_int_equal(st.tx.rst_sent, 0);
	assert_int_equal(st.tx.errors, 0);
	assert_true(n >= expect);
	/* Paced, whatever the load: a machine can only be slower than asked,
	 * never faster (one burst of slack). */
	assert_true(n <= pps * t0 + 64);
	for (i = 0; i < n; i++) {
		assert_int_equal(caps[i].flags, TH_SYN);
		tno[i] = tuple_no(&c, &caps[i]);
		/* connection i: tuple i mod space, addresses round robin */
		assert_int_equal(tno[i], i % space);
		assert_true(xp_addr_eq(&caps[i].src, &c.bind[i % 2]));
		/* a tuple's next use is a new connection: another ISN */
		if (i >= space)
			assert_int_not_equal(caps[i].seq, caps[i - space].seq);
	}
	/* Distinct tuples among the first `space` SYNs, whatever the mapping. */
	qsort(tno, space, sizeof(tno[0]), cmp_u64);
	for (i = 1; i < space; i++)
		assert_true(tno[i] != tno[i - 1]);
}

static void test_connect_v4(void **state)
{
	connect_one_queue(false, 5000, 0.5);
}

static void test_connect_v6(void **state)
{
	connect_one_queue(true, 5000, 0.5);
}

/* 20000 SYNs through a 4096-frame UMEM: every frame is rewritten about 5
 * times, always after its completion. A frame rewritten too early would show
 * as a tuple out of sequence or a frame that is not a fresh build. */
static void test_connect_frame_reuse(void **state)
{
	connect_one_queue(false, 50000, 0.4);
}

/* Two queues, two threads: thread q sends connections q, q+2, q+4...; all
 * distinct in a large tuple space, and each thread's numbers contiguous. */
static void test_connect_two_queues(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	uint64_t cnt[2] = { 0, 0 }, max[2] = { 0, 0 };
	size_t n, i;

	base_cfg(&c, XP_TEST_CONNECT, false);
	c.sport_hi = 59999;
	c.dport_hi = 63015;
	c.frames.queues = 2;
	c.pps = 5000;
	capture_open();
	start_engine(&c);
	wait_tx(2000, 30);
	ops->stop(eng);
	ops->read(eng, &st);
	n = capture_read(&c, caps, MAXCAP, st.tx.pkts);
	print_message("sent %llu SYNs, captured %zu\n", (unsigned long long)st.tx.pkts, n);
	assert_int_equal(n, st.tx.pkts);
	assert_true(n >= 2000 && n < MAXCAP);
	for (i = 0; i < n; i++) {
		tno[i] = tuple_no(&c, &caps[i]);
		cnt[tno[i] % 2]++;
		if (tno[i] + 1 > max[tno[i] % 2])
			max[tno[i] % 2] = tno[i] + 1;
	}
	qsort(tno, n, sizeof(tno[0]), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(tno[i] != tno[i - 1]);
	/* thread 0: 0, 2, .. 2(cnt-1); thread 1: 1, 3, .. 2cnt-1 */
	assert_int_equal(max[0], cnt[0] ? 2 * cnt[0] - 1 : 0);
	assert_int_equal(max[1], 2 * cnt[1]);
	assert_true(cnt[0] > 0 && cnt[1] > 0);
}

/* Hold 300 connections: exactly 300 SYNs, then nothing until stop, then
 * exactly 300 RSTs, each on a SYN's tuple with seq = that SYN's ISN + 1. */
static void test_hold_300(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	static struct cap syn[300];
	size_t n, i, j, nsyn = 0;
	bool matched[300] = { false };

	base_cfg(&c, XP_TEST_HOLD, false);
	add_bind(&c, "198.18.220.10");
	add_bind(&c, "198.18.220.11");
	c.parallel = 300;
	c.frames.queues = 1;
	c.debug = 1;
	capture_open();
	start_engine(&c);
	wait_tx(300, 30);
	/* Held: nothing more may go out. An observation period, not a
	 * synchronisation: load can only hide an extra frame, never add one. */
	xp_sleep(0.3);
	ops->read(eng, &st);
	assert_int_equal(st.tx.pkts, 300);
	assert_int_equal(st.tx.rst_sent, 0);
	n = capture_read(&c, caps, MAXCAP, 300);
	assert_int_equal(n, 300);
	for (i = 0; i < n; i++) {
		assert_int_equal(caps[i].flags, TH_SYN);
		syn[nsyn++] = caps[i];
		tno[i] = tuple_no(&c, &caps[i]);
	}
	qsort(tno, n, sizeof(tno[0]), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(tno[i] != tno[i - 1]);

	double t = xp_now();
	ops->stop(eng);
	t = xp_now() - t;
	ops->read(eng, &st);
	print_message("stop took %.3f s; SYNs %llu, RSTs %llu\n", t, (unsigned long long)st.tx.pkts,
		      (unsigned long long)st.tx.rst_sent);
	assert_true(t < 2.5);
	assert_int_equal(st.tx.pkts, 300);
	assert_int_equal(st.tx.rst_sent, 300);
	n = capture_read(&c, caps, MAXCAP, 300);
	assert_int_equal(n, 300);
	for (i = 0; i < n; i++) {
		assert_int_equal(caps[i].flags, TH_RST);
		for (j = 0; j < nsyn; j++)
			if (caps[i].sport == syn[j].sport && caps[i].dport == syn[j].dport &&
			    xp_addr_eq(&caps[i].src, &syn[j].src))
				break;
		if (j == nsyn)
			fail_msg("RST %zu (%u -> %u) matches no SYN", i, caps[i].sport, caps[i].dport);
		assert_false(matched[j]);
		matched[j] = true;
		assert_int_equal(caps[i].seq, syn[j].seq + 1);
	}
}

/* A hold test stopped before it has sent everything closes what it sent. */
static void test_hold_stopped_early(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	size_t n, i, nsyn = 0, nrst = 0;

	base_cfg(&c, XP_TEST_HOLD, false);
	c.sport_hi = 59999;
	c.parallel = 100000;
	c.pps = 2000;
	capture_open();
	start_engine(&c);
	wait_tx(300, 30); /* some sent, far from all 100000 */
	ops->stop(eng);
	ops->read(eng, &st);
	n = capture_read(&c, caps, MAXCAP, st.tx.pkts + st.tx.rst_sent);
	for (i = 0; i < n; i++) {
		if (caps[i].flags == TH_SYN) {
			assert_int_equal(nrst, 0); /* every SYN before the first RST */
			nsyn++;
		} else {
			nrst++;
		}
	}
	print_message("SYNs %zu, RSTs %zu\n", nsyn, nrst);
	assert_true(nsyn >= 300 && nsyn < c.parallel);
	assert_int_equal(nsyn, st.tx.pkts);
	assert_int_equal(nrst, nsyn);
	assert_int_equal(st.tx.rst_sent, nrst);
}

static void test_config_errors(void **state)
{
	struct xp_engine_cfg c;
	char err[256] = "";

	base_cfg(&c, XP_TEST_HOLD, false);
	c.parallel = 401; /* 100 x 4 tuples */
	assert_int_equal(ops->create(&c, &eng, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "distinct tuples"));
	assert_null(eng);

	base_cfg(&c, XP_TEST_CONNECT, false);
	add_bind(&c, "2001:2:0:220::10");
	assert_int_equal(ops->create(&c, &eng, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "family"));

	base_cfg(&c, XP_TEST_CONNECT, false);
	c.frames.tmpl.l4_proto = IPPROTO_UDP;
	c.frames.tmpl.tcp_syn_options = false;
	c.frames.tmpl.tcp_flags = 0;
	assert_int_equal(ops->create(&c, &eng, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "TCP"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_config_errors, case_teardown),
		cmocka_unit_test_teardown(test_connect_v4, case_teardown),
		cmocka_unit_test_teardown(test_connect_v6, case_teardown),
		cmocka_unit_test_teardown(test_connect_frame_reuse, case_teardown),
		cmocka_unit_test_teardown(test_connect_two_queues, case_teardown),
		cmocka_unit_test_teardown(test_hold_300, case_teardown),
		cmocka_unit_test_teardown(test_hold_stopped_early, case_teardown),
	};

	if (geteuid() != 0) {
		printf("test_xsk_connect: needs root (netns, veth, AF_XDP): run as root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
