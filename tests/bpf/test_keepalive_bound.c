// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The bound on the server's keepalive check (bpf/server.bpf.c,
 * xp_is_keepalive; bpf/server.h, struct xp_ka_steps and xp_ka_budget), on
 * the loaded program with BPF_PROG_RUN:
 *  - a SYN-ACK notes its cookie's step (and the slot's first) in ka_steps;
 *  - a real keepalive of a connection opened N steps ago is counted, one
 *    from before the slot's first cookie is not;
 *  - a flood of 10000 forged pure ACKs (random seq and ack) counts no
 *    keepalive (exactly as many as the reference cookie says match: with
 *    at most 2 MACs each, 2^-27 a MAC, that is 0 but once in ~6700 runs)
 *    and costs exactly the MACs the bound allows: one per noted step of its
 *    3-bit class, not 512 (ka_budget.macs, the programs' own count of them,
 *    checked against a model of the rule over the map's contents);
 *  - over the per-CPU budget, pure ACKs land in keepalive_unchecked, not
 *    in keepalives or cookie_invalid, and a real keepalive is counted
 *    again once the budget has refilled.
 * The cookies come from tests/bpf/ref_cookie.h (the design written out
 * again), with the key the test loads. Needs root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "frame/frame.h"
#include "bpf/server.skel.h"
#include "tests/bpf/ref_cookie.h"

#define CTRL_PORT  5301
#define PORT       63100
#define SLOT       5
#define ISN        0x12345678u
#define STEP_SHIFT 26 /* bpf/lib/syncookie.h */
#define F_SYN      0x02
#define F_ACK      0x10
#define F_PSH      0x08

static const uint64_t KEY[2] = { 0x1716151413121110ULL, 0x1f1e1d1c1b1a1918ULL };
static const uint8_t CLIENT_MAC[6] = { 0x02, 0xc1, 0, 0, 0, 0x11 };
static const uint8_t SERVER_MAC[6] = { 0x02, 0x5e, 0, 0, 0, 0x12 };
static const char *CADDR = "198.18.211.1", *SADDR = "198.18.211.2";

static int ncpus;

static uint32_t now_step(void)
{
	struct timespec ts;

	/* The server's step is the coarse clock's (bpf_ktime_get_coarse_ns):
	 * CLOCK_MONOTONIC_COARSE is the same value. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint32_t)(((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> STEP_SHIFT);
}

/* The server program with a keepalive budget (0 = its default), one
 * XP_SLOT_RESPOND slot with close mode NONE (a hold test's) on port PORT,
 * bound to lo, SERVER_MAC and the client CADDR. */
static struct server_bpf *load(uint32_t budget)
{
	struct server_bpf *s = server_bpf__open();
	struct xp_slot_cfg cfg = { .flags = XP_SLOT_ACTIVE | XP_SLOT_RESPOND, .protos = XP_PROTO_TCP,
				   .close_mode = XP_CLOSE_NONE, .peer_family = XP_FAMILY_V4 };
	struct xp_local_key lk = { .ifindex = if_nametoindex("lo"), .family = XP_FAMILY_V4 };
	uint32_t key = SLOT, val = SLOT + 1, port = PORT, local = XP_LOCAL_UNICAST;
	struct xp_addr a;

	assert_non_null(s);
	s->rodata->config.cookie_key[0] = KEY[0];
	s->rodata->config.cookie_key[1] = KEY[1];
	s->rodata->config.ctrl_port = CTRL_PORT;
	s->rodata->config.ka_mac_budget = budget;
	if (server_bpf__load(s))
		fail_msg("server program load: %s", strerror(errno));
	cfg.ifindex = lk.ifindex;
	memcpy(cfg.mac, SERVER_MAC, 6);
	assert_int_equal(xp_addr_parse(CADDR, &a), 0);
	memcpy(cfg.peer, &a.v4, 4);
	assert_int_equal(xp_addr_parse(SADDR, &a), 0);
	memcpy(lk.addr, &a.v4, 4);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.local_addr), &lk, &local, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.slot_cfg), &key, &cfg, BPF_ANY), 0);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.port_slot), &port, &val, BPF_ANY), 0);
	return s;
}

static struct flow flow_of(uint16_t sport)
{
	struct flow f = { 0 };
	struct xp_addr c, s;

	assert_int_equal(xp_addr_parse(CADDR, &c), 0);
	assert_int_equal(xp_addr_parse(SADDR, &s), 0);
	memcpy(f.saddr, &c.v4, 4);
	memcpy(f.daddr, &s.v4, 4);
	f.sport = htons(sport);
	f.dport = htons(PORT);
	return f;
}

static size_t frame(uint8_t flags, uint16_t sport, uint32_t seq, uint32_t ack, size_t payload, uint8_t *buf)
{
	struct frame_spec s = { 0 };
	const char *err = NULL;
	size_t len;

	memcpy(s.src_mac, CLIENT_MAC, 6);
	memcpy(s.dst_mac, SERVER_MAC, 6);
	assert_int_equal(xp_addr_parse(CADDR, &s.src), 0);
	assert_int_equal(xp_addr_parse(SADDR, &s.dst), 0);
	s.l4_proto = IPPROTO_TCP;
	s.sport = sport;
	s.dport = PORT;
	s.tcp_flags = flags;
	s.seq = seq;
	s.ack = ack;
	s.tcp_syn_options = flags == F_SYN;
	if (payload) {
		s.frame_size = 14 + 20 + 20 + payload + 4;
		s.payload_fill = 0x5a;
	} else {
		s.no_payload = true;
	}
	len = frame_build(&s, buf, 2048, &err);
	if (!len)
		fail_msg("frame_build: %s", err);
	return len;
}

static uint32_t run(struct server_bpf *s, const uint8_t *in, size_t len, uint8_t *out)
{
	static uint8_t scratch[2048];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len,
		    .data_out = out ? out : scratch, .data_size_out = 2048, .repeat = 1);

	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.xdp_server), &o))
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	return o.retval;
}

static struct xp_counters counters(struct server_bpf *s)
{
	struct xp_counters *v = calloc((size_t)ncpus, sizeof(*v)), sum = { 0 };
	uint32_t key = SLOT;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.counters), &key, v), 0);
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < sizeof(sum) / 8; f++)
			((__u64 *)&sum)[f] += ((__u64 *)&v[c])[f];
	free(v);
	return sum;
}

/* MACs the keepalive searches computed, all CPUs. */
static uint64_t macs(struct server_bpf *s)
{
	struct xp_ka_budget *v = calloc((size_t)ncpus, sizeof(*v));
	uint32_t key = 0;
	uint64_t n = 0;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ka_budget), &key, v), 0);
	for (int c = 0; c < ncpus; c++)
		n += v[c].macs;
	free(v);
	return n;
}

static struct xp_ka_steps *steps_read(struct server_bpf *s)
{
	struct xp_ka_steps *ks = calloc(1, sizeof(*ks));
	uint32_t key = SLOT;

	assert_non_null(ks);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.ka_steps), &key, ks), 0);
	return ks;
}

/* What the server's SYN-ACKs would have noted in steps lo..hi (a test that
 * opened connections then): their steps, and the first if older. */
static void steps_note(struct server_bpf *s, uint32_t lo, uint32_t hi)
{
	struct xp_ka_steps *ks = steps_read(s);
	uint32_t key = SLOT;

	for (uint32_t t = lo; (int32_t)(hi - t) >= 0; t++)
		ks->step[t % XP_KA_STEPS] = t;
	if (!ks->first || (int32_t)(lo - (uint32_t)ks->first) < 0)
		ks->first = (1ull << 32) | lo;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.ka_steps), &key, ks, BPF_ANY), 0);
	free(ks);
}

/* A noted step without moving the first: only the search's bound keeps a
 * step before the slot's first cookie (+ the one round of slack) out. */
static void steps_set_raw(struct server_bpf *s, uint32_t t)
{
	struct xp_ka_steps *ks = steps_read(s);
	uint32_t key = SLOT;

	ks->step[t % XP_KA_STEPS] = t;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(s->maps.ka_steps), &key, ks, BPF_ANY), 0);
	free(ks);
}

/*
 * The rule, as a model: a pure ACK (seq, ack) costs one MAC per noted step
 * of its cookie's 3-bit class, from one round before the slot's first
 * cookie up to now, oldest first, until one matches (*found). Every step a
 * test notes lies in that window, whenever in the test it is run.
 */
static unsigned model_macs(const struct xp_ka_steps *ks, uint16_t sport, uint32_t seq, uint32_t ack, int *found)
{
	struct flow f = flow_of(sport);
	uint32_t cookie = ack - 1, lo = (cookie >> 2) & 7, first = (uint32_t)ks->first, now = now_step();
	unsigned n = 0;

	*found = 0;
	if (!ks->first)
		return 0;
	/* Oldest first: from first - 8 up to now. */
	for (uint32_t t = first - 8; (int32_t)(now - t) >= 0; t++) {
		if ((t & 7) != lo || ks->step[t % XP_KA_STEPS] != t)
			continue;
		n++;
		if (ref_cookie_key(KEY, &f, seq, t, cookie & 3) == cookie) {
			*found = 1;
			break;
		}
	}
	return n;
}

/* A SYN-ACK notes its step and the slot's first; its connection's
 * keepalive is counted for one MAC (the one noted step of its class). */
static void test_synack_notes_its_step(void **state)
{
	struct server_bpf *s = load(0);
	struct flow f = flow_of(40000);
	uint8_t buf[2048], out[2048];
	uint32_t t0 = now_step(), t1, cookie, tc;
	size_t len = frame(F_SYN, 40000, ISN, 0, 0, buf);
	struct xp_ka_steps *ks;
	struct xp_counters c;
	unsigned noted = 0;

	(void)state;
	assert_int_equal(run(s, buf, len, out), XDP_TX);
	t1 = now_step();
	cookie = (uint32_t)out[38] << 24 | (uint32_t)out[39] << 16 | (uint32_t)out[40] << 8 | out[41];
	/* The step of the cookie: the one of t0..t1 whose cookie it is. */
	tc = 0;
	for (uint32_t t = t0; t <= t1; t++)
		if (ref_cookie_key(KEY, &f, ISN, t, 3) == cookie)
			tc = t;
	if (!tc)
		fail_msg("SYN-ACK seq %#x is no cookie of steps %u..%u", cookie, t0, t1);
	ks = steps_read(s);
	assert_true(ks->first == ((1ull << 32) | tc));
	for (uint32_t i = 0; i < XP_KA_STEPS; i++)
		noted += ks->step[i] != 0;
	assert_int_equal(noted, 1);
	assert_int_equal(ks->step[tc % XP_KA_STEPS], tc);
	free(ks);

	len = frame(F_ACK, 40000, ISN, cookie + 1, 0, buf);
	assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
	c = counters(s);
	assert_int_equal(c.keepalives, 1);
	assert_int_equal(c.cookie_invalid, 0);
	assert_int_equal(c.keepalive_unchecked, 0);
	assert_int_equal(macs(s), 1);
	server_bpf__destroy(s);
}

/*
 * Connections opened long ago: a test that opened its connections over
 * 1 s, 10 s ago (steps t-150..t-136), and one cookie 268 s old (t-4000,
 * the slot's first). Keepalives of each are counted, each for the MACs the
 * model says (a few, not hundreds); one whose cookie is from before the
 * slot's first (t-4010), a correct MAC, even with its step in the record,
 * is not: the test had not begun.
 */
static void test_keepalive_of_old_connections(void **state)
{
	struct server_bpf *s = load(0);
	uint32_t t = now_step();
	struct flow f = flow_of(40001);
	struct {
		uint32_t step;
		int counted;
	} rows[] = { { t - 143, 1 }, { t - 150, 1 }, { t - 136, 1 }, { t - 4000, 1 }, { t - 4010, 0 } };
	uint8_t buf[2048];
	uint64_t m0 = 0;

	(void)state;
	steps_note(s, t - 150, t - 136);
	steps_note(s, t - 4000, t - 4000);
	steps_set_raw(s, t - 4010);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t cookie = ref_cookie_key(KEY, &f, ISN, rows[i].step, 3);
		struct xp_ka_steps *ks = steps_read(s);
		struct xp_counters before = counters(s), after;
		int found;
		unsigned want = model_macs(ks, 40001, ISN, cookie + 1, &found);
		size_t len = frame(F_ACK, 40001, ISN, cookie + 1, 0, buf);

		free(ks);
		assert_int_equal(found, rows[i].counted);
		assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
		after = counters(s);
		if (after.keepalives - before.keepalives != (uint64_t)rows[i].counted)
			fail_msg("row %zu (cookie of step t-%u): keepalives +%llu, want +%d", i, t - rows[i].step,
				 (unsigned long long)(after.keepalives - before.keepalives), rows[i].counted);
		assert_int_equal(after.cookie_invalid - before.cookie_invalid, !rows[i].counted);
		assert_int_equal(after.keepalive_unchecked, 0);
		assert_true(want <= 3); /* 16 noted steps: at most 3 of one class */
		if (macs(s) - m0 != want)
			fail_msg("row %zu: %llu MACs, the rule allows %u", i, (unsigned long long)(macs(s) - m0), want);
		m0 = macs(s);
	}
	server_bpf__destroy(s);
}

/*
 * 10000 forged pure ACKs (random seq and ack, xorshift from a fixed seed)
 * at a slot that opened a hold over 1 s, 10 s ago, and one connection now:
 * no keepalive counted (exactly the reference's matches, 0 in all but
 * ~1 in 6700 runs), every one an invalid cookie, and exactly the MACs the
 * rule allows, at most 3 each (16 noted steps, 8 classes), where the
 * search before this bound took 512 for every one of them.
 */
static void test_forged_ack_flood(void **state)
{
	struct server_bpf *s = load(0);
	uint32_t t = now_step();
	uint8_t buf[2048];
	uint64_t x = 0x9e3779b97f4a7c15ull, want_macs = 0, want_found = 0;
	struct xp_ka_steps *ks;
	struct xp_counters c;
	size_t len = frame(F_SYN, 40002, ISN, 0, 0, buf);
	const unsigned n = 10000;

	(void)state;
	steps_note(s, t - 150, t - 136);
	assert_int_equal(run(s, buf, len, NULL), XDP_TX); /* the connection of now */
	ks = steps_read(s);
	for (unsigned i = 0; i < n; i++) {
		uint32_t seq, ack;
		int found;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		seq = (uint32_t)x;
		ack = (uint32_t)(x >> 32);
		want_macs += model_macs(ks, 40002, seq, ack, &found);
		want_found += (uint64_t)found;
		len = frame(F_ACK, 40002, seq, ack, 0, buf);
		assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
	}
	free(ks);
	c = counters(s);
	print_message("    %u forged pure ACKs: %llu MACs (%.2f each; 512 each before the bound), "
		      "%llu keepalives (the reference: %llu)\n", n, (unsigned long long)macs(s),
		      (double)macs(s) / n, (unsigned long long)c.keepalives, (unsigned long long)want_found);
	assert_true(want_found <= 1);
	assert_int_equal(c.keepalives, want_found);
	assert_int_equal(c.cookie_invalid, n - want_found);
	assert_int_equal(c.keepalive_unchecked, 0);
	assert_int_equal(macs(s), want_macs);
	assert_true(want_macs <= 3ull * n);
	server_bpf__destroy(s);
}

/*
 * The per-CPU budget (config.ka_mac_budget = 2000 MACs a second, a burst
 * of as many): a slot that issued cookies in every step of the last 274 s
 * (a long connection test), so a forged ACK needs 512 MACs. Of 300 forged
 * ACKs the first few are checked (invalid), the rest are unchecked; the
 * MACs stay within the budget for the time taken. A real keepalive while
 * the budget is spent is unchecked too (not invalid); once it has refilled
 * (0.6 s: 1200 MACs, a search here needs at most 512 + 512/4) it is counted.
 * Pinned to one CPU: the budget is per CPU.
 */
static void test_budget_spent_is_unchecked(void **state)
{
	const uint32_t budget = 2000;
	struct server_bpf *s = load(budget);
	uint32_t t = now_step(), cookie;
	struct flow f = flow_of(40003);
	struct timespec a, b;
	uint64_t x = 0x2545f4914f6cdd1dull;
	uint8_t buf[2048];
	struct xp_counters c;
	cpu_set_t set;
	double secs;
	size_t len;
	const unsigned n = 300;

	(void)state;
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu(), &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	steps_note(s, t - (XP_KA_STEPS - 9), t);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		len = frame(F_ACK, 40003, (uint32_t)x, (uint32_t)(x >> 32), 0, buf);
		assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	c = counters(s);
	print_message("    budget %u MACs/s: %llu of %u forged ACKs checked, %llu unchecked, %llu MACs in %.3f s\n",
		      budget, (unsigned long long)c.cookie_invalid, n, (unsigned long long)c.keepalive_unchecked,
		      (unsigned long long)macs(s), secs);
	assert_int_equal(c.keepalives, 0);
	assert_int_equal(c.cookie_invalid + c.keepalive_unchecked, n);
	assert_true(c.keepalive_unchecked >= n - 10);
	assert_true(c.cookie_invalid >= 1);
	assert_true((double)macs(s) <= budget * (1.0 + secs) + 1);

	/* A real keepalive (a cookie of 20 steps ago) while the budget is spent. */
	cookie = ref_cookie_key(KEY, &f, ISN, t - 20, 3);
	len = frame(F_ACK, 40003, ISN, cookie + 1, 0, buf);
	assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
	c = counters(s);
	assert_int_equal(c.keepalives, 0);
	assert_int_equal(c.cookie_invalid + c.keepalive_unchecked, n + 1);
	uint64_t unchecked = c.keepalive_unchecked, invalid = c.cookie_invalid;
	assert_true(unchecked >= n - 9);

	usleep(600 * 1000);
	assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
	c = counters(s);
	assert_int_equal(c.keepalives, 1);
	assert_int_equal(c.keepalive_unchecked, unchecked);
	assert_int_equal(c.cookie_invalid, invalid);
	CPU_ZERO(&set);
	for (int i = 0; i < ncpus; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
	server_bpf__destroy(s);
}

/* A pure ACK with data is never a keepalive, and costs no search. */
static void test_data_is_no_keepalive(void **state)
{
	struct server_bpf *s = load(0);
	uint32_t t = now_step();
	struct flow f = flow_of(40004);
	uint8_t buf[2048];
	uint32_t cookie = ref_cookie_key(KEY, &f, ISN, t - 30, 3);
	size_t len;
	struct xp_counters c;

	(void)state;
	steps_note(s, t - 30, t - 30);
	len = frame(F_ACK | F_PSH, 40004, ISN, cookie + 1, 100, buf);
	assert_int_equal(run(s, buf, len, NULL), XDP_DROP);
	c = counters(s);
	assert_int_equal(c.keepalives, 0);
	assert_int_equal(c.cookie_invalid, 1);
	assert_int_equal(macs(s), 0);
	server_bpf__destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_synack_notes_its_step),
		cmocka_unit_test(test_keepalive_of_old_connections),
		cmocka_unit_test(test_forged_ack_flood),
		cmocka_unit_test(test_budget_spent_is_unchecked),
		cmocka_unit_test(test_data_is_no_keepalive),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_keepalive_bound: must run as root (loads BPF programs, BPF_PROG_RUN)\n");
		return 1;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "test_keepalive_bound: libbpf_num_possible_cpus: %d\n", ncpus);
		return 1;
	}
	return cmocka_run_group_tests_name("keepalive_bound", tests, NULL, NULL);
}
