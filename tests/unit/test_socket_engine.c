/*
 * The socket engine (user/engine/socket.c) against the socket server
 * (user/server/listeners.c), both in this process, over loopback only.
 *
 * Ports: each test searches 61000-64999 (above the default ephemeral range,
 * so our own client sockets cannot be sitting on them) for a block where
 * the server can listen; xp_sock_server_start binds every port once without
 * SO_REUSEPORT first, so a port someone else uses is never shared.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "socket_engine_fixture.h"

/* ---- tests ---------------------------------------------------------------- */

static void test_raise_nofile(void **state)
{
	char err[256] = "";
	assert_int_equal(xp_raise_nofile(64, err, sizeof(err)), 0);
	assert_int_equal(xp_raise_nofile(4200, err, sizeof(err)), 0); /* what these tests need */
	assert_int_equal(xp_raise_nofile(1UL << 40, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "needs 1099511627776 open files"));
	assert_non_null(strstr(err, "limit is"));
}

static void test_create_errors(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine *e = NULL;
	char err[256] = "";
	base_cfg(&c, XP_TEST_CONNECT, "127.0.0.1", 1000, 1000, 1);
	c.server.family = 0;
	assert_int_not_equal(ops->create(&c, &e, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "server address"));

	base_cfg(&c, XP_TEST_CONNECT, "127.0.0.1", 1000, 1000, 1);
	c.nbind = 1;
	assert_int_equal(xp_addr_parse("::1", &c.bind[0]), 0);
	assert_int_not_equal(ops->create(&c, &e, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "bind address ::1"));

	/* Not even 64 worker processes hold that (the limit is pinned so the
	 * outcome does not depend on this host's nr_open and capabilities). */
	setenv("XDPPERF_FD_LIMIT", "20000", 1);
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", 1000, 1000, 2000000);
	assert_int_not_equal(ops->create(&c, &e, err, sizeof(err)), 0);
	unsetenv("XDPPERF_FD_LIMIT");
	print_message("%s\n", err);
	assert_non_null(strstr(err, "-P 2000000 needs 2000100 open files but the limit is 20000"));
	assert_non_null(strstr(err, "more than 64 worker processes"));
}

static void test_server_port_in_use(void **state)
{
	struct xp_sock_server *s1, *s2;
	char err[256] = "";
	uint16_t p = start_server(&s1);
	struct xp_sock_server_cfg c = { .port_lo = (uint16_t)(p + 1), .port_hi = (uint16_t)(p + 1), .threads = 1 };
	/* Same user, both with SO_REUSEPORT: must still refuse, not share. */
	assert_int_equal(xp_sock_server_start(&c, &s2, err, sizeof(err)), -1);
	char want[80];
	snprintf(want, sizeof(want), "cannot listen on port %u: Address already in use", p + 1);
	assert_string_equal(err, want);
	xp_sock_server_stop(s1);
}

static void run_connect(const char *server, unsigned nbind, const char *const *binds)
{
	run_connect_n(server, nbind, binds, 16, 5000, 0, 0);
}

static void test_connect_v4(void **state)
{
	run_connect("127.0.0.1", 0, NULL);
}

static void test_connect_v4_bind(void **state)
{
	/* All of 127/8 is local: two source addresses, round-robin, no fixed ports. */
	static const char *const binds[] = { "127.0.0.2", "127.0.0.3" };
	run_connect("127.0.0.1", 2, binds);
}

static void test_connect_v6(void **state)
{
	run_connect("::1", 0, NULL);
}

static void test_connect_v6_bind(void **state)
{
	static const char *const binds[] = { "::1" };
	run_connect("::1", 1, binds);
}

static void test_stream(void **state)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_STREAM, "127.0.0.1", p, (uint16_t)(p + NPORTS - 1), 4);
	struct xp_engine *e = start_engine(&c);
	struct xp_engine_stats st = engine_wait(e, 30.0, payload_at_least, 10 * 1000 * 1000 + 1);
	assert_int_equal(st.sock.open_now, 4);
	assert_true(timed_stop(e) < 5.0);
	ops->read(e, &st);
	print_message("stream: %.1f MB written\n", st.sock.payload_bytes / 1e6);
	assert_true(st.sock.payload_bytes > 10 * 1000 * 1000);
	assert_int_equal(st.sock.conn_ok, 4);
	assert_int_equal(st.sock.conn_fail, 0);
	assert_int_equal(st.sock.conn_reset, 0);
	assert_int_equal(st.sock.open_now, 0);
	assert_balanced(&st);
	/* Graceful close: everything written is delivered and read. */
	struct xp_sock_server_stats ss = server_wait(srv, WAIT_S, rx_at_least, st.sock.payload_bytes);
	assert_int_equal(ss.bytes_rx, st.sock.payload_bytes);
	ss = server_wait(srv, WAIT_S, open_is, 0);
	assert_int_equal(ss.accepted, 4);
	assert_int_equal(ss.closed, 4);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

static void test_hold(void **state)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", p, (uint16_t)(p + NPORTS - 1), 2000);
	struct xp_engine *e = start_engine(&c);
	double t0 = xp_now();
	struct xp_engine_stats st = wait_open(e, 2000, WAIT_S);
	print_message("hold: 2000 open after %.3f s\n", xp_now() - t0);
	assert_int_equal(st.sock.open_now, 2000);
	struct xp_sock_server_stats ss = server_wait(srv, WAIT_S, open_is, 2000);
	assert_int_equal(ss.open_now, 2000);
	/* Held means held: nothing reconnects, nothing is sent. */
	xp_sleep(0.3);
	ops->read(e, &st);
	xp_sock_server_read(srv, &ss);
	assert_int_equal(st.sock.conn_ok, 2000);
	assert_int_equal(st.sock.open_now, 2000);
	assert_int_equal(st.sock.conn_fail + st.sock.conn_reset + st.sock.conn_timeout, 0);
	assert_int_equal(st.sock.payload_bytes, 0);
	assert_int_equal(ss.accepted, 2000);
	assert_int_equal(ss.bytes_rx, 0);

	double took = timed_stop(e);
	print_message("hold: stop with 2000 open took %.3f s\n", took);
	assert_true(took < 5.0);
	ops->read(e, &st);
	assert_int_equal(st.sock.open_now, 0);
	assert_int_equal(st.sock.conn_closed, 2000);
	assert_balanced(&st);
	t0 = xp_now();
	ss = server_wait(srv, WAIT_S, open_is, 0);
	assert_int_equal(ss.open_now, 0);
	print_message("hold: server open_now 0 after %.3f s\n", xp_now() - t0);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

/* Established client sockets from src to 127.0.0.1:[lo, lo+n), per destination port. */
static void count_conns(const char *src, uint16_t lo, unsigned n, unsigned *per_port)
{
	char line[512];
	struct in_addr want;
	assert_int_equal(inet_pton(AF_INET, src, &want), 1);
	memset(per_port, 0, n * sizeof(*per_port));
	FILE *f = fopen("/proc/net/tcp", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned la, lp, ra, rp, st;
		/* addresses are the raw network-order words printed in host order */
		if (sscanf(line, " %*d: %8X:%4X %8X:%4X %2X", &la, &lp, &ra, &rp, &st) != 5)
			continue;
		if (st == 1 && la == want.s_addr && ra == htonl(INADDR_LOOPBACK) && rp >= lo && rp < lo + n)
			per_port[rp - lo]++;
	}
	fclose(f);
}

static void test_spread(void **state)
{
	/* 16 connections over 2 source addresses x 4 ports: 2 per pair. */
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", p, (uint16_t)(p + NPORTS - 1), 16);
	c.nbind = 2;
	assert_int_equal(xp_addr_parse("127.0.0.2", &c.bind[0]), 0);
	assert_int_equal(xp_addr_parse("127.0.0.3", &c.bind[1]), 0);
	struct xp_engine *e = start_engine(&c);
	struct xp_engine_stats st = wait_open(e, 16, WAIT_S);
	assert_int_equal(st.sock.open_now, 16);
	unsigned n2[NPORTS], n3[NPORTS];
	count_conns("127.0.0.2", p, NPORTS, n2);
	count_conns("127.0.0.3", p, NPORTS, n3);
	for (unsigned k = 0; k < NPORTS; k++) {
		assert_int_equal(n2[k], 2);
		assert_int_equal(n3[k], 2);
	}
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

static void test_hold_reconnect(void **state)
{
	/* The server goes away and comes back: held connections are counted
	 * as dropped, retried (refused meanwhile) and re-established. */
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", p, (uint16_t)(p + NPORTS - 1), 100);
	struct xp_engine *e = start_engine(&c);
	double t0 = xp_now();
	struct xp_engine_stats st = wait_open(e, 100, WAIT_S);
	assert_int_equal(st.sock.open_now, 100);

	xp_sock_server_stop(srv);
	st = engine_wait(e, WAIT_S, all_dropped, 100);
	assert_int_equal(st.sock.conn_reset, 100);
	assert_int_equal(st.sock.open_now, 0);
	assert_true(st.sock.conn_fail > 0);

	char err[256];
	struct xp_sock_server_cfg sc = { .port_lo = p, .port_hi = (uint16_t)(p + NPORTS - 1), .threads = 2 };
	if (xp_sock_server_start(&sc, &srv, err, sizeof(err)))
		fail_msg("restart: %s", err);
	t0 = xp_now();
	st = wait_open(e, 100, WAIT_S);
	print_message("reconnect: 100 open again after %.3f s (%llu failures meanwhile)\n", xp_now() - t0,
		      (unsigned long long)st.sock.conn_fail);
	assert_int_equal(st.sock.open_now, 100);
	assert_int_equal(st.sock.conn_ok, 200);
	assert_balanced(&st);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

static void test_refused(void **state)
{
	struct xp_engine_cfg c;
	uint16_t p = free_port();
	base_cfg(&c, XP_TEST_CONNECT, "127.0.0.1", p, p, 8);
	double t0 = xp_now();
	struct xp_engine *e = start_engine(&c);
	struct xp_engine_stats st = engine_wait(e, 30.0, fail_at_least, 50);
	double took = timed_stop(e);
	double ran = xp_now() - t0;
	ops->read(e, &st);
	print_message("refused: %llu failures in %.3f s, stop %.3f s\n", (unsigned long long)st.sock.conn_fail, ran,
		      took);
	assert_true(took < 5.0);
	assert_true(st.sock.conn_fail >= 50);
	assert_int_equal(st.sock.conn_ok, 0);
	assert_int_equal(st.sock.open_now, 0);
	/* Backoff: a slot waits at least 1 ms after each failure, so 8 slots
	 * fail at most 8 times per elapsed ms (plus the first try each). A
	 * slower machine only lowers the count: no timing window, and a spin
	 * (tens of failures per ms on loopback) still breaks the bound. */
	assert_true(st.sock.conn_fail <= 8 * (uint64_t)(ran * 1000.0 + 1.0));
	ops->destroy(e);
}

static void test_max_seconds(void **state)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", p, p, 50);
	c.max_seconds = 0.5;
	double t0 = xp_now();
	struct xp_engine *e = start_engine(&c);
	/* Nobody calls stop(): the loops end and close by themselves. Waited
	 * for as a condition (something was held, then nothing is open); how
	 * many of the 50 were open before the 0.5 s ran out depends on the load
	 * of this shared machine, so it is bounded, not fixed. */
	struct xp_engine_stats st = engine_wait(e, 30.0, none_open_after_ok, 1);
	double ended = xp_now() - t0;
	print_message("max_seconds: %llu held, all closed %.3f s after start\n",
		      (unsigned long long)st.sock.conn_ok, ended);
	assert_int_equal(st.sock.open_now, 0);
	assert_true(st.sock.conn_ok >= 1 && st.sock.conn_ok <= 50);
	assert_int_equal(st.sock.conn_closed, st.sock.conn_ok);
	assert_true(ended >= 0.5); /* not before its time: holds under any load */
	/* ended by itself: nothing reconnects after the deadline */
	xp_sleep(0.1);
	struct xp_engine_stats later;
	ops->read(e, &later);
	assert_int_equal(later.sock.conn_ok, st.sock.conn_ok);
	struct xp_sock_server_stats ss = server_wait(srv, WAIT_S, open_is, 0);
	assert_int_equal(ss.open_now, 0);
	assert_true(timed_stop(e) < 5.0);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

static void test_connect_timeout(void **state)
{
	/* A listener that never accepts, with the smallest backlog: once its
	 * queue is full the kernel drops further SYNs, so those connects hang
	 * until our 3-s timeout. */
	uint16_t p = free_port();
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(p), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 0), 0);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", p, p, 8);
	c.sock.threads = 1;
	double t0 = xp_now();
	struct xp_engine *e = start_engine(&c);
	/* Until all 8 slots have either been taken by the queue or timed out
	 * once: a condition, not a 3.6-s sleep that a loaded machine overruns. */
	struct xp_engine_stats st = engine_wait(e, 30.0, timed_out_at_least, 8);
	double waited = xp_now() - t0;
	assert_true(timed_stop(e) < 5.0);
	assert_true(waited >= 3.0); /* no connect gives up before its 3-s timeout */
	print_message("timeout: ok %llu timeout %llu fail %llu\n", (unsigned long long)st.sock.conn_ok,
		      (unsigned long long)st.sock.conn_timeout, (unsigned long long)st.sock.conn_fail);
	assert_true(st.sock.conn_ok >= 1 && st.sock.conn_ok <= 2); /* what the queue took */
	assert_true(st.sock.conn_timeout >= 8 - st.sock.conn_ok);
	assert_int_equal(st.sock.conn_fail, 0);
	ops->destroy(e);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raise_nofile),
		cmocka_unit_test_teardown(test_create_errors, unset_knobs),
		cmocka_unit_test(test_server_port_in_use),
		cmocka_unit_test(test_connect_v4),
		cmocka_unit_test(test_connect_v4_bind),
		cmocka_unit_test(test_connect_v6),
		cmocka_unit_test(test_connect_v6_bind),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_hold),
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_hold_reconnect),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_max_seconds),
		cmocka_unit_test(test_connect_timeout),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
