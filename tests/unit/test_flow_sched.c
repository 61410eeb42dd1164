/*
 * Unit tests for the stamp's streams of flows (frame/flow_streams.c) and a
 * thread's order of its flows' frames (engine/flow_sched.c): every
 * (flow, thread) pair a stream of its own while they fit in 256, else one
 * thread per flow; each flow as often as its rate's share, spread out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "engine/flow_sched.h"
#include "frame/flow_streams.h"

static void test_streams(void **state)
{
	(void)state;
	/* 64 flows, 2 threads: 128 streams, f * 2 + t. */
	assert_int_equal(xp_flow_nstreams(64, 2), 128);
	assert_int_equal(xp_flow_stream_of(5, 1, 64, 2), 11);
	assert_int_equal(xp_flow_of_stream(11, 64, 2), 5);
	/* 256 flows, 2 threads: one thread each, stream = flow. */
	assert_int_equal(xp_flow_nstreams(256, 2), 256);
	assert_int_equal(xp_flow_stream_of(5, 1, 256, 2), 5);
	assert_int_equal(xp_flow_stream_of(5, 0, 256, 2), XP_FLOW_NO_STREAM);
	assert_int_equal(xp_flow_of_stream(200, 256, 2), 200);
	/* Every stream maps back to the flow that made it, and no two pairs share one. */
	unsigned nf[] = { 1, 3, 64, 128, 129, 256 }, nt[] = { 1, 2, 3, 4 };
	for (unsigned a = 0; a < 6; a++)
		for (unsigned b = 0; b < 4; b++) {
			unsigned char seen[256] = { 0 };
			for (unsigned f = 0; f < nf[a]; f++) {
				double share = 0;
				for (unsigned t = 0; t < nt[b]; t++) {
					unsigned s = xp_flow_stream_of(f, t, nf[a], nt[b]);
					share += xp_flow_share(f, t, nf[a], nt[b]);
					if (s == XP_FLOW_NO_STREAM)
						continue;
					assert_true(s < xp_flow_nstreams(nf[a], nt[b]));
					assert_int_equal(seen[s], 0);
					seen[s] = 1;
					assert_int_equal(xp_flow_of_stream(s, nf[a], nt[b]), f);
				}
				assert_true(share > 0.999 && share < 1.001);
			}
		}
}

static void test_sched_rates(void **state)
{
	(void)state;
	static struct xp_engine_flow fl[3];
	static struct xp_flow_sched s;
	char err[128];
	memset(fl, 0, sizeof(fl));
	/* EF at 10 % beside best effort at 150 %: 1 frame in 16. */
	fl[0].pps = 10000;
	fl[1].pps = 150000;
	assert_int_equal(xp_flow_sched_build(fl, 2, 0, 1, &s, err, sizeof(err)), 0);
	assert_int_equal(s.len, 16);
	assert_int_equal(s.count[0], 1);
	assert_int_equal(s.count[1], 15);
	assert_true(s.pps > 159999 && s.pps < 160001);
	/* Unpaced flows weigh alike and alternate. */
	fl[0].pps = fl[1].pps = fl[2].pps = 0;
	assert_int_equal(xp_flow_sched_build(fl, 3, 0, 1, &s, err, sizeof(err)), 0);
	assert_int_equal(s.len, 3);
	assert_true(s.flow[0] != s.flow[1] && s.flow[1] != s.flow[2] && s.flow[0] != s.flow[2]);
	/* Paced beside unpaced is refused. */
	fl[0].pps = 1000;
	assert_int_equal(xp_flow_sched_build(fl, 3, 0, 1, &s, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "give every flow a rate"));
}

static void test_sched_spread(void **state)
{
	(void)state;
	static struct xp_engine_flow fl[256];
	static struct xp_flow_sched s;
	char err[128];
	memset(fl, 0, sizeof(fl));
	/* 1:3 - no flow sent twice in a row more than the ratio needs. */
	fl[0].pps = 1;
	fl[1].pps = 3;
	int rc = xp_flow_sched_build(fl, 2, 0, 1, &s, err, sizeof(err));
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	assert_int_equal(s.len, 4);
	unsigned run = 0, maxrun = 0;
	for (unsigned k = 0; k < 2 * s.len; k++) {
		run = s.flow[k % s.len] == 1 ? run + 1 : 0;
		maxrun = run > maxrun ? run : maxrun;
	}
	assert_true(maxrun <= 3);
	/* 256 flows, 2 threads: each thread sends its 128 flows once per pattern. */
	fl[0].pps = fl[1].pps = 0;
	for (unsigned t = 0; t < 2; t++) {
		assert_int_equal(xp_flow_sched_build(fl, 256, t, 2, &s, err, sizeof(err)), 0);
		assert_int_equal(s.len, 128);
		for (unsigned k = 0; k < s.len; k++)
			assert_int_equal(s.flow[k] % 2, t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_streams),
		cmocka_unit_test(test_sched_rates),
		cmocka_unit_test(test_sched_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
