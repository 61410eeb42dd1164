// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the XDP live-frames generator (bpf/live.bpf.c) sending for
 * real, and of the live engine (user/engine/live.c). Needs root.
 *
 * Live tests run in a child in a private, unnamed network namespace
 * (unshare) with a veth pair whose receiving end has GRO on; the namespace
 * and its links vanish with the child whatever happens. They are skipped
 * when the kernel refuses live frames.
 *
 * The frames themselves are checked in test_live_stream.c (stream) and
 * test_live_syn.c (SYNs); what they share is in live_fixture.h.
 */
#include "tests/bpf/live_fixture.h"

/* ---------------------------------------------------------------------- */
/* Live frames, in a private namespace                                    */
/* ---------------------------------------------------------------------- */

#define LIVE_A "xplv-ta"
#define LIVE_B "xplv-tb"

static int link_info(const char *ifname, uint64_t *rx, uint8_t *mac)
{
	struct ifaddrs *ifa, *i;
	int r = -1;

	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET || strcmp(i->ifa_name, ifname))
			continue;
		if (rx && i->ifa_data)
			*rx = ((struct rtnl_link_stats *)i->ifa_data)->rx_packets;
		if (mac)
			memcpy(mac, ((struct sockaddr_ll *)i->ifa_addr)->sll_addr, 6);
		r = 0;
	}
	freeifaddrs(ifa);
	return r;
}

/* Wait (up to 1 s) until B's rx_packets reaches want; returns the count. */
static uint64_t rx_settle(uint64_t base, uint64_t want)
{
	uint64_t rx = 0;

	for (int k = 0; k < 100; k++) {
		if (link_info(LIVE_B, &rx, NULL))
			return 0;
		if ((uint32_t)(rx - base) >= want)
			break;
		usleep(10000);
	}
	return (uint32_t)(rx - base);
}

/* Exit codes of the child. SKIP only where the kernel lacks live frames
 * (EOPNOTSUPP/ENOTSUPP); missing privileges, tools or EINVAL fail. */
#define CHILD_OK   0
#define CHILD_SKIP 77

static int child_live(int engine)
{
	struct xp_engine_cfg c = make_cfg(AF_INET, IPPROTO_UDP, 128, 0, 10000, 10099, 63000, 63015);
	char err[256];
	uint64_t rx0;

	if (unshare(CLONE_NEWNET)) {
		printf("live: unshare(CLONE_NEWNET): %s (run as root)\n", strerror(errno));
		return 1;
	}
	/* No IPv6: its link-up chatter (DAD, router and MLD solicitations)
	 * would land in the peer's rx_packets beside our frames. */
	if (xp_netns("add", "--no-ipv6", "-") || xp_netns("pair", "-", LIVE_A, "-", LIVE_B) ||
	    xp_netns("gro", "-", LIVE_B)) {
		printf("live: cannot make a veth pair with GRO (ip, ethtool: run scripts/deps.sh)\n");
		return 1;
	}
	c.ifindex = (int)if_nametoindex(LIVE_A);
	snprintf(c.ifname, sizeof(c.ifname), LIVE_A);
	if (link_info(LIVE_B, &rx0, c.frames.tmpl.dst_mac) || link_info(LIVE_A, NULL, c.frames.tmpl.src_mac)) {
		printf("live: veth pair not found\n");
		return 1;
	}

	if (!engine) {
		/* One call of 10000 frames straight through the generator. */
		struct live_bpf *skel;
		struct frame_layout lay;
		static uint8_t tmpl[XP_GEN_MAX_LEN];
		unsigned tid0[1] = { 0 };

		if (xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err))) {
			printf("live: %s\n", err);
			return 1;
		}
		xp_gen_init_state(skel, tid0, 1);
		struct xdp_md md = { .data_end = lay.len, .ingress_ifindex = (__u32)c.ifindex };
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = tmpl, .data_size_in = lay.len, .ctx_in = &md,
			    .ctx_size_in = sizeof(md), .repeat = 10000, .batch_size = 64,
			    .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_live), &o)) {
			int e = errno;
			printf("live: BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES: %s\n", strerror(e));
			if (e == EOPNOTSUPP || e == 524) {
				printf("live: kernel lacks BPF_F_TEST_XDP_LIVE_FRAMES\n");
				return CHILD_SKIP;
			}
			return 1;
		}
		uint64_t got = rx_settle(rx0, 10000), sent = xp_gen_sent(skel);
		live_bpf__destroy(skel);
		printf("live: sent %llu, peer received %llu\n", (unsigned long long)sent,
		       (unsigned long long)got);
		return sent == 10000 && got == 10000 ? CHILD_OK : 1;
	}

	/* The engine: 20 kpps for 0.5 s; the peer gets exactly what it sent.
	 * Stamped, in 250-ms send intervals from t0 set after create (as the
	 * client does): the intervals' sent_in add up to what it sent. */
	struct xp_engine *e;
	struct xp_engine_stats st;
	c.pps = 20000;
	c.max_seconds = 5;
	c.frames.stamp.ival = 250000000ull >> XP_STAMP_TICK_SHIFT;
	if (xp_engine_live.create(&c, &e, err, sizeof(err))) {
		printf("live engine: %s\n", err);
		return 1;
	}
	uint64_t tk0 = now_ticks(false);
	xp_engine_live.set_t0(e, tk0);
	double t0 = xp_now();
	if (xp_engine_live.start(e, err, sizeof(err))) {
		printf("live engine: %s\n", err);
		xp_engine_live.destroy(e);
		return 1;
	}
	/* Until 7500 frames are out (a count, not a 0.5-s sleep whose yield
	 * depends on the load; 10 s is a hang deadline). */
	for (double end = t0 + 10; xp_now() < end; xp_sleep(0.005)) {
		xp_engine_live.read(e, &st);
		if (st.tx.pkts >= 7500)
			break;
	}
	xp_engine_live.stop(e);
	double secs = xp_now() - t0;
	uint64_t nival = ((now_ticks(false) - tk0) / c.frames.stamp.ival) + 1, in_ivals = 0;
	xp_engine_live.read(e, &st);
	for (uint64_t k = 0; k < nival; k++) {
		uint64_t n = 0;
		int r = xp_engine_live.sent_in(e, k, &n);
		printf("live engine: interval %llu sent_in %llu (%d)\n", (unsigned long long)k, (unsigned long long)n, r);
		if (r) {
			printf("live engine: sent_in(%llu): %s\n", (unsigned long long)k, strerror(-r));
			if (nival <= XP_IBINS)
				return 1;
		}
		in_ivals += n;
	}
	xp_engine_live.destroy(e);
	if (nival <= XP_IBINS && in_ivals != st.tx.pkts) {
		printf("live engine: the intervals hold %llu frames, it sent %llu\n", (unsigned long long)in_ivals,
		       (unsigned long long)st.tx.pkts);
		return 1;
	}
	uint64_t got = rx_settle(rx0, st.tx.pkts);
	printf("live engine: sent %llu in %.3f s at 20 kpps (mode %s), peer received %llu\n",
	       (unsigned long long)st.tx.pkts, secs, st.mode, (unsigned long long)got);
	if (got != st.tx.pkts || st.tx.errors || strcmp(st.mode, "live"))
		return 1;
	/* Never more than due over the engine's lifetime (plus the first
	 * 100 us slice, sent at once): a bound load cannot break. */
	return st.tx.pkts >= 7500 && st.tx.pkts <= 20000 * secs + 2 ? CHILD_OK : 1;
}

static void run_child(int engine)
{
	fflush(stdout);
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int rc = child_live(engine);
		fflush(stdout);
		_exit(rc);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == CHILD_SKIP)
		skip();
	assert_int_equal(WEXITSTATUS(status), CHILD_OK);
}

static void test_live_10000_frames(void **state)
{
	(void)state;
	run_child(0);
}

static void test_live_engine_paced(void **state)
{
	(void)state;
	run_child(1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_live_10000_frames),
		cmocka_unit_test(test_live_engine_paced),
	};

	if (gen_test_init("test_live_send", "loads BPF programs, makes a network namespace"))
		return 1;
	return cmocka_run_group_tests_name("gen", tests, NULL, NULL);
}
