// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for bpf/live.bpf.c in SYN mode (the connection tests): each SYN
 * the generator sends, run with plain BPF_PROG_RUN from garbage input, is
 * compared byte for byte with the SYN of its connection built independently
 * (see syn_case), and checked as a receiver would. Needs root. The stream
 * frames are tested in test_live_stream.c; what they share is in
 * live_fixture.h.
 */
#include "tests/bpf/live_fixture.h"

/* ---------------------------------------------------------------------- */
/* SYN mode (connection tests)                                            */
/* ---------------------------------------------------------------------- */

/* The XDP connection engine's SYN template (as the client's
 * build_syn_template), with nbind source addresses. */
static struct xp_engine_cfg make_syn_cfg(int family, uint16_t vlan, unsigned nbind, uint16_t slo, uint16_t shi,
					 uint16_t dlo, uint16_t dhi)
{
	struct xp_engine_cfg c = make_cfg(family, IPPROTO_TCP, 64, vlan, slo, shi, dlo, dhi);
	struct frame_spec *s = &c.frames.tmpl;

	c.kind = XP_TEST_CONNECT;
	s->tcp_flags = 0x02;
	s->ack = 0;
	s->seq = 0;
	s->tcp_syn_options = true;
	s->no_payload = true;
	s->window = 64240;
	s->frame_size = frame_min_size(s);
	c.nbind = nbind;
	for (unsigned i = 0; i < nbind; i++) {
		char a[64];

		c.bind[i].family = family;
		if (family == AF_INET) {
			snprintf(a, sizeof(a), "198.18.1.%u", 10 + i);
			inet_pton(AF_INET, a, &c.bind[i].v4);
		} else {
			snprintf(a, sizeof(a), "2001:2:0:1::%x", 0x10 + i);
			inet_pton(AF_INET6, a, &c.bind[i].v6);
		}
	}
	return c;
}

/* splitmix64's finaliser, written out again: the ISN both engines give k. */
static uint32_t want_isn(uint64_t seed, uint64_t k)
{
	uint64_t z = seed + (k + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(z ^ (z >> 31));
}

/* A receiver's checks on a SYN, with the addresses the frame carries. */
static void verify_syn_checksums(const struct gen *g, const uint8_t *f)
{
	const struct frame_layout *l = &g->lay;
	size_t l4len = (size_t)l->payload_off - l->l4_off;
	uint32_t sum;

	assert_int_equal(l->payload_len, 0);
	if (g->cfg.frames.tmpl.src.family == AF_INET) {
		struct in_addr sa, da;

		assert_int_equal(csum_ipv4_hdr(f + l->l3_off, 20), 0);
		memcpy(&sa, f + l->l3_off + 12, 4);
		memcpy(&da, f + l->l3_off + 16, 4);
		sum = csum_pseudo_v4(&sa, &da, IPPROTO_TCP, (uint32_t)l4len, 0);
	} else {
		struct in6_addr sa, da;

		memcpy(&sa, f + l->l3_off + 8, 16);
		memcpy(&da, f + l->l3_off + 24, 16);
		sum = csum_pseudo_v6(&sa, &da, IPPROTO_TCP, (uint32_t)l4len, 0);
	}
	assert_int_equal(csum_fold(csum_partial(f + l->l4_off, l4len, sum)), 0);
}

/*
 * n SYNs of thread tid of nthreads, run from garbage input like the stream
 * frames, each compared byte for byte with the SYN of its connection
 * k = j * nthreads + tid built independently: the template rewritten by
 * frame_set_saddr/ports/seq (user/frame/frame.h) with the tuple of k
 * (t = (first + k) mod space, address t mod nbind, ports xp_flow_ports(t / nbind))
 * and ISN splitmix64(seed, k). The AF_XDP engine's rewrite
 * (xp_tuple_write) must give the same bytes: both engines agree.
 */
static void syn_case_from(int family, uint16_t vlan, unsigned nbind, uint16_t slo, uint16_t shi, uint16_t dlo,
			  uint16_t dhi, unsigned nthreads, unsigned tid, unsigned n, uint64_t first)
{
	struct xp_engine_cfg c = make_syn_cfg(family, vlan, nbind, slo, shi, dlo, dhi);
	c.hs.first_tuple = first;
	struct gen g;
	struct xp_tuples m;
	char err[256];
	uint8_t in[XP_GEN_MAX_LEN], out[XP_GEN_MAX_LEN], want[XP_GEN_MAX_LEN], x[XP_GEN_MAX_LEN];
	unsigned naddr = nbind ? nbind : 1;
	uint64_t space = (uint64_t)naddr * (shi - slo + 1u) * (dhi - dlo + 1u);

	gen_load(&g, &c, nthreads, tid);
	const struct frame_layout *l = &g.lay;
	uint64_t seed = g.skel->rodata->config.seed;
	assert_int_equal(g.skel->rodata->config.syn_mode, 1);
	assert_int_equal(g.skel->rodata->config.stamp, XP_STAMP_NONE);
	assert_int_equal(g.skel->rodata->config.conn_space, space);
	assert_int_equal(g.skel->rodata->config.conn_first, first % space);
	assert_int_equal(l->len, frame_min_size(&c.frames.tmpl) - 4);
	assert_int_equal(xp_tuples_init(&m, &g.cfg, seed, err, sizeof(err)), 0);

	for (unsigned j = 0; j < n; j++) {
		uint64_t k = (uint64_t)j * nthreads + tid, t = (first % space + k) % space;
		uint16_t sport, dport;

		/* The engine hands in one byte more than the SYN (see
		 * live.bpf.c: the program trims it); shorter and exact inputs
		 * come out right too. */
		uint32_t in_len = l->len + (j % 3 == 0 ? 1 : j % 3 == 1 ? 0 : -10u);
		for (unsigned b = 0; b < in_len; b++)
			in[b] = (uint8_t)(j * 13 + b * 5 + 1);
		gen_run_len(&g, in, in_len, out);
		verify_syn_checksums(&g, out);

		memcpy(want, g.tmpl, l->len);
		xp_flow_ports(&g.cfg, t / naddr, &sport, &dport);
		frame_set_ports(want, l, sport, dport);
		if (nbind)
			assert_int_equal(frame_set_saddr(want, l, &g.cfg.bind[t % naddr]), 0);
		frame_set_seq(want, l, want_isn(seed, k));

		memcpy(x, g.tmpl, l->len);
		assert_int_equal(xp_tuple_num(&m, k), t);
		xp_tuple_write(&m, x, l, t, xp_tuple_isn(&m, k));
		assert_memory_equal(x, want, l->len);

		if (memcmp(want, out, l->len)) {
			for (unsigned b = 0; b < l->len; b++)
				if (want[b] != out[b])
					fail_msg("SYN %u (k %llu): byte %u is 0x%02x, expected 0x%02x (l3 at %u, l4 at %u)",
						 j, (unsigned long long)k, b, out[b], want[b], l->l3_off, l->l4_off);
		}
	}
	assert_int_equal(xp_gen_sent(g.skel), n);
	live_bpf__destroy(g.skel);
}

static void syn_case(int family, uint16_t vlan, unsigned nbind, uint16_t slo, uint16_t shi, uint16_t dlo,
		     uint16_t dhi, unsigned nthreads, unsigned tid, unsigned n)
{
	syn_case_from(family, vlan, nbind, slo, shi, dlo, dhi, nthreads, tid, n, 0);
}

/* 2 addresses x 3 sports x 4 dports = 24 tuples: 60 SYNs wrap twice and
 * more, each round with new ISNs. */
static void test_syn_v4_2bind(void **state)
{
	(void)state;
	syn_case(AF_INET, 0, 2, 10000, 10002, 63000, 63003, 1, 0, 60);
}

static void test_syn_v6_2bind(void **state)
{
	(void)state;
	syn_case(AF_INET6, 0, 2, 10000, 10002, 63000, 63003, 1, 0, 60);
}

/* Second of two threads (k = 1, 3, 5...), odd space, VLAN tag. */
static void test_syn_v4_2bind_thread_vlan(void **state)
{
	(void)state;
	syn_case(AF_INET, 100, 2, 20000, 20002, 63000, 63002, 2, 1, 60);
}

static void test_syn_v6_2bind_thread(void **state)
{
	(void)state;
	syn_case(AF_INET6, 0, 2, 20000, 20001, 63000, 63002, 2, 1, 40);
}

/* No --bind: the template's address, only ports and ISN change. One
 * address: always bind[0]. Wide ranges (the client's defaults). */
static void test_syn_v4_no_bind(void **state)
{
	(void)state;
	syn_case(AF_INET, 0, 0, 10000, 59999, 63000, 63015, 1, 0, 40);
}

static void test_syn_v6_one_bind(void **state)
{
	(void)state;
	syn_case(AF_INET6, 0, 1, 10000, 59999, 63000, 63015, 1, 0, 40);
}

/* A connection search's later test (hs.first_tuple, connsearch/run.c): its
 * connection 0 takes tuple number first mod space, and the numbering wraps
 * from there: 24 tuples, first 1000003 (tuple 19), 2 threads, 60 SYNs. */
static void test_syn_first_tuple(void **state)
{
	(void)state;
	syn_case_from(AF_INET, 0, 2, 10000, 10002, 63000, 63003, 2, 1, 60, 1000003);
	syn_case_from(AF_INET6, 0, 0, 10000, 59999, 63000, 63015, 1, 0, 40, 800000 * 16 - 7);
}

/* Hold tests stay on AF_XDP; a non-TCP template is refused like there. */
static void test_syn_refusals(void **state)
{
	struct xp_engine_cfg c = make_syn_cfg(AF_INET, 0, 2, 1, 1, 2, 2);
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	char err[256] = "";

	(void)state;
	c.kind = XP_TEST_HOLD;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "--syn-engine xsk"));
	assert_null(strchr(err, '\n'));
	c.kind = XP_TEST_CONNECT;
	c.bind[1].family = AF_INET6;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	c = make_syn_cfg(AF_INET, 0, 0, 1, 1, 2, 2);
	c.frames.tmpl.l4_proto = IPPROTO_UDP;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_syn_v4_2bind),
		cmocka_unit_test(test_syn_v6_2bind),
		cmocka_unit_test(test_syn_v4_2bind_thread_vlan),
		cmocka_unit_test(test_syn_v6_2bind_thread),
		cmocka_unit_test(test_syn_v4_no_bind),
		cmocka_unit_test(test_syn_v6_one_bind),
		cmocka_unit_test(test_syn_first_tuple),
		cmocka_unit_test(test_syn_refusals),
	};

	if (gen_test_init("test_live_syn", "loads BPF programs"))
		return 1;
	return cmocka_run_group_tests_name("gen", tests, NULL, NULL);
}
