/*
 * The frame size with no -l (issue 10, item 7): the smallest valid frame of
 * the family and protocol that carries the 8-byte stamp, from the frame
 * builder's minimum and bpf/lib/stamp.h's rule, and where the stamp goes at
 * each size; and the client's interval lines by send interval
 * (client/measure.c): which intervals a line covers, loss never negative,
 * unknown bins, the whole test's loss with late frames.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "client/measure.h"

static void spec(struct frame_spec *s, bool v6, int proto, unsigned size)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(xp_addr_parse(v6 ? "2001:2::1" : "198.18.0.1", &s->src), 0);
	assert_int_equal(xp_addr_parse(v6 ? "2001:2::2" : "198.18.0.2", &s->dst), 0);
	s->l4_proto = (uint8_t)proto;
	s->sport = 10000;
	s->dport = 63000;
	s->tcp_flags = 0x18;
	s->frame_size = size;
}

static void test_default_sizes(void **state)
{
	static const struct { bool v6; int proto; unsigned want; } cases[] = {
		/* 14 + 20 + 20 = 54 header bytes + FCS: 64 leaves 6 payload bytes, the IPv4 ID takes 2 */
		{ false, IPPROTO_TCP, 64 },
		/* 14 + 20 + 8: 18 payload bytes at the Ethernet minimum */
		{ false, IPPROTO_UDP, 64 },
		/* 14 + 40 + 8 + 8 + 4 */
		{ true, IPPROTO_UDP, 74 },
		/* 14 + 40 + 20 + 8 + 4: no IPv6 header field a stateful path leaves alone */
		{ true, IPPROTO_TCP, 86 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct frame_spec s;
		spec(&s, cases[i].v6, cases[i].proto, 64);
		assert_int_equal(xp_stamp_min_frame(&s), cases[i].want);
		s.frame_size = cases[i].want;
		assert_int_not_equal(xp_stamp_place_of_spec(&s), XP_STAMP_NONE);
		/* one byte less: still a valid frame above the header minimum, but no stamp */
		if (cases[i].want > 64) {
			s.frame_size = cases[i].want - 1;
			assert_int_equal(xp_stamp_place_of_spec(&s), XP_STAMP_NONE);
		}
	}
}

static void test_places(void **state)
{
	struct frame_spec s;
	spec(&s, false, IPPROTO_TCP, 64);
	assert_int_equal(xp_stamp_place_of_spec(&s), XP_STAMP_AT_IPID);
	s.frame_size = 66; /* 8 payload bytes */
	assert_int_equal(xp_stamp_place_of_spec(&s), XP_STAMP_AT_PAYLOAD);
	spec(&s, true, IPPROTO_TCP, 80); /* the IPv6 TCP: 2 payload bytes */
	assert_int_equal(xp_stamp_place_of_spec(&s), XP_STAMP_NONE);
	spec(&s, true, IPPROTO_TCP, 70); /* below the headers: not a frame at all */
	assert_int_equal(xp_stamp_place_of_spec(&s), XP_STAMP_NONE);
}

static void test_grace(void **state)
{
	assert_true(xp_meas_grace(1.0) == 1.0);   /* XP_LATE_AFTER_NS */
	assert_true(xp_meas_grace(0.5) == 1.0);
	assert_true(fabs(xp_meas_grace(0.1) - 0.2) < 1e-12); /* 2 intervals: the rings of 4 still hold it */
}

/* One interval's reply: recv frames, late frames of older intervals. */
static struct xp_final_ival *reply(uint64_t i, uint64_t recv, uint64_t late, bool unknown)
{
	struct xp_final_ival *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->index = i;
	f->unknown = unknown;
	xp_lat_init(&f->lat);
	f->lat.recv = recv;
	f->lat.late = late;
	f->lat.n = recv;
	f->lat.sum = recv * 100;
	f->lat.min = f->lat.max = recv ? 100 : UINT64_MAX;
	if (!recv)
		f->lat.max = 0;
	f->lat.b[xp_lat_bucket(100)] = recv;
	return f;
}

static void test_lines_by_send_interval(void **state)
{
	struct xp_cmeas *m = calloc(1, sizeof(*m));
	struct xp_period *p = calloc(1, sizeof(*p));
	assert_non_null(m);
	assert_non_null(p);
	m->on = true, m->oneway = true, m->ival_s = 1.0, m->ival = 250000000;
	xp_lat_init(&m->total.lat);
	/* lines 0-1, 1-2, and a last one stretched to 3.2 s: send intervals 0, 1, 2-3 */
	assert_int_equal(xp_cmeas_queue(m, p, 0, 1), 0);
	assert_int_equal(xp_cmeas_queue(m, p, 1, 2), 0);
	assert_int_equal(xp_cmeas_queue(m, p, 2, 3.2), 0);
	assert_int_equal(m->q[0].first, 0);
	assert_int_equal(m->q[0].last, 0);
	assert_int_equal(m->q[1].first, 1);
	assert_int_equal(m->q[2].first, 2);
	assert_int_equal(m->q[2].last, 3);
	assert_null(xp_cmeas_ready(m, false));
	/* interval 0: 1000 sent, 990 arrived */
	struct xp_final_ival *f = reply(0, 990, 0, false);
	xp_cmeas_add(m, f, 0, 1000);
	free(f);
	struct xp_meas_line *l = xp_cmeas_ready(m, false);
	assert_non_null(l);
	assert_int_equal(l->p.meas.sent, 1000);
	assert_int_equal(l->p.meas.lost, 10);
	xp_cmeas_pop(m);
	/* interval 1: 1000 sent, all arrived, and 4 late frames of interval 0 came then */
	f = reply(1, 1000, 4, false);
	xp_cmeas_add(m, f, 0, 1000);
	free(f);
	l = xp_cmeas_ready(m, false);
	assert_non_null(l);
	assert_int_equal(l->p.meas.lost, 0); /* never negative: late frames are not this interval's */
	assert_int_equal(l->p.meas.lat.late, 4);
	xp_cmeas_pop(m);
	/* the end: the last line takes intervals 2..4 (frames sent while stopping, late ones after) */
	xp_cmeas_extend(m, 4);
	f = reply(2, 500, 0, false);
	xp_cmeas_add(m, f, 0, 500);
	free(f);
	assert_null(xp_cmeas_ready(m, false)); /* not before 3 and 4 are in */
	f = reply(3, 0, 0, true);              /* the server's bins of 3 were reused */
	xp_cmeas_add(m, f, 0, 20);
	free(f);
	f = reply(4, 0, 0, false);
	xp_cmeas_add(m, f, -ENOENT, 0);         /* and the engine's of 4 */
	free(f);
	l = xp_cmeas_ready(m, false);
	assert_non_null(l);
	assert_true(l->p.meas.unknown);
	assert_int_equal(l->p.meas.first, 2);
	assert_int_equal(l->p.meas.last, 4);
	xp_cmeas_pop(m);
	assert_null(xp_cmeas_ready(m, true));
	/* the whole test: 2520 stamped, 2490 arrived, 4 late (arrived, not lost): 26 lost; unknown parts said so */
	xp_cmeas_summary(m, p);
	assert_true(p->meas.valid);
	assert_int_equal(p->meas.sent, 2520);
	assert_int_equal(p->meas.lat.recv, 2490);
	assert_int_equal(p->meas.lost, 26);
	assert_true(p->meas.unknown);
	assert_int_equal(p->meas.lat.n, 2490);
	assert_int_equal(p->meas.last, 4);
	xp_cmeas_free(m);
	free(m);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_sizes),
		cmocka_unit_test(test_places),
		cmocka_unit_test(test_grace),
		cmocka_unit_test(test_lines_by_send_interval),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
