/*
 * The socket engine (user/engine_socket.c) against the socket server
 * (user/sock_server.c), both in this process, over loopback only.
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

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine.h"
#include "sock_server.h"
#include "sockutil.h"
#include "timeutil.h"

#define NPORTS 4

static const struct xp_engine_ops *ops = &xp_engine_socket;

/* A server on NPORTS free ports; returns the first port. */
static uint16_t start_server(struct xp_sock_server **srv)
{
	char err[256] = "";
	for (unsigned base = 61000; base + NPORTS <= 65000; base += 16) {
		struct xp_sock_server_cfg c = { .port_lo = (uint16_t)base, .port_hi = (uint16_t)(base + NPORTS - 1),
						.threads = 2, .max_conns = 5000 };
		if (!xp_sock_server_start(&c, srv, err, sizeof(err)))
			return (uint16_t)base;
	}
	fail_msg("no free port block for the server: %s", err);
	return 0;
}

/* A TCP port nobody listens on (bound once to be sure it is free). */
static uint16_t free_port(void)
{
	for (unsigned p = 64001; p < 65000; p += 7) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		int ok = fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof(a));
		if (fd >= 0)
			close(fd);
		if (ok)
			return (uint16_t)p;
	}
	fail_msg("no free port");
	return 0;
}

static void base_cfg(struct xp_engine_cfg *c, enum xp_test_kind kind, const char *server, uint16_t lo,
		     uint16_t hi, unsigned parallel)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	assert_int_equal(xp_addr_parse(server, &c->server), 0);
	c->dport_lo = lo;
	c->dport_hi = hi;
	c->parallel = parallel;
	c->threads = 2;
	c->max_seconds = 20;
}

static struct xp_engine *start_engine(const struct xp_engine_cfg *c)
{
	struct xp_engine *e = NULL;
	char err[256] = "";
	if (ops->create(c, &e, err, sizeof(err)))
		fail_msg("create: %s", err);
	if (ops->start(e, err, sizeof(err)))
		fail_msg("start: %s", err);
	return e;
}

/* Stop and return how long stop() took. */
static double timed_stop(struct xp_engine *e)
{
	double t = xp_now();
	ops->stop(e);
	return xp_now() - t;
}

/* Poll the server until pred holds or `secs` pass; returns the last reading. */
static struct xp_sock_server_stats server_wait(struct xp_sock_server *s, double secs,
					       int (*pred)(const struct xp_sock_server_stats *, uint64_t), uint64_t arg)
{
	struct xp_sock_server_stats st;
	double end = xp_now() + secs;
	do {
		xp_sock_server_read(s, &st);
		if (pred(&st, arg))
			break;
		xp_sleep(0.01);
	} while (xp_now() < end);
	return st;
}

static int accepted_at_least(const struct xp_sock_server_stats *s, uint64_t n) { return s->accepted >= n; }
static int open_is(const struct xp_sock_server_stats *s, uint64_t n) { return s->open_now == n; }
static int rx_at_least(const struct xp_sock_server_stats *s, uint64_t n) { return s->bytes_rx >= n; }

/* Every established connection is closed by us, dropped, or still open. */
static void assert_balanced(const struct xp_engine_stats *st)
{
	assert_int_equal(st->conn_ok, st->conn_closed + st->conn_reset + st->open_now);
}

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

	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", 1000, 1000, 2000000);
	assert_int_not_equal(ops->create(&c, &e, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "-P 2000000 needs 2000100 open files but the limit is"));
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
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_CONNECT, server, p, (uint16_t)(p + NPORTS - 1), 16);
	c.nbind = nbind;
	for (unsigned b = 0; b < nbind; b++)
		assert_int_equal(xp_addr_parse(binds[b], &c.bind[b]), 0);
	struct xp_engine *e = start_engine(&c);
	xp_sleep(1.0);
	assert_true(timed_stop(e) < 0.5);
	struct xp_engine_stats st;
	ops->read(e, &st);
	print_message("connect %s (%u bind): ok %llu fail %llu timeout %llu\n", server, nbind,
		      (unsigned long long)st.conn_ok, (unsigned long long)st.conn_fail,
		      (unsigned long long)st.conn_timeout);
	assert_true(st.conn_ok > 100);
	assert_int_equal(st.conn_fail, 0);
	assert_int_equal(st.conn_timeout, 0);
	assert_int_equal(st.conn_reset, 0);
	assert_int_equal(st.open_now, 0);
	assert_int_equal(st.conn_closed, st.conn_ok);
	/* Everything the client saw established reaches the server's accept();
	 * connects in flight at stop may add at most `parallel` more. */
	struct xp_sock_server_stats ss = server_wait(srv, 1.0, accepted_at_least, st.conn_ok);
	assert_true(ss.accepted >= st.conn_ok);
	assert_true(ss.accepted <= st.conn_ok + 16);
	/* The client closes with RST (see engine_socket.c): the server sees resets. */
	ss = server_wait(srv, 1.0, open_is, 0);
	assert_int_equal(ss.open_now, 0);
	assert_int_equal(ss.accepted, ss.closed + ss.resets);
	ops->destroy(e);
	xp_sock_server_stop(srv);
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
	xp_sleep(1.0);
	struct xp_engine_stats st;
	ops->read(e, &st);
	assert_int_equal(st.open_now, 4);
	assert_true(timed_stop(e) < 0.5);
	ops->read(e, &st);
	print_message("stream: %.1f MB written\n", st.payload_bytes / 1e6);
	assert_true(st.payload_bytes > 10 * 1000 * 1000);
	assert_int_equal(st.conn_ok, 4);
	assert_int_equal(st.conn_fail, 0);
	assert_int_equal(st.conn_reset, 0);
	assert_int_equal(st.open_now, 0);
	assert_balanced(&st);
	/* Graceful close: everything written is delivered and read. */
	struct xp_sock_server_stats ss = server_wait(srv, 2.0, rx_at_least, st.payload_bytes);
	assert_int_equal(ss.bytes_rx, st.payload_bytes);
	ss = server_wait(srv, 1.0, open_is, 0);
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
	struct xp_engine_stats st;
	double t0 = xp_now();
	do {
		xp_sleep(0.01);
		ops->read(e, &st);
	} while (st.open_now < 2000 && xp_now() - t0 < 3.0);
	print_message("hold: 2000 open after %.3f s\n", xp_now() - t0);
	assert_int_equal(st.open_now, 2000);
	struct xp_sock_server_stats ss = server_wait(srv, 1.0, open_is, 2000);
	assert_int_equal(ss.open_now, 2000);
	/* Held means held: nothing reconnects, nothing is sent. */
	xp_sleep(0.3);
	ops->read(e, &st);
	xp_sock_server_read(srv, &ss);
	assert_int_equal(st.conn_ok, 2000);
	assert_int_equal(st.open_now, 2000);
	assert_int_equal(st.conn_fail + st.conn_reset + st.conn_timeout, 0);
	assert_int_equal(st.payload_bytes, 0);
	assert_int_equal(ss.accepted, 2000);
	assert_int_equal(ss.bytes_rx, 0);

	double took = timed_stop(e);
	print_message("hold: stop with 2000 open took %.3f s\n", took);
	assert_true(took < 1.0);
	ops->read(e, &st);
	assert_int_equal(st.open_now, 0);
	assert_int_equal(st.conn_closed, 2000);
	assert_balanced(&st);
	t0 = xp_now();
	ss = server_wait(srv, 1.0, open_is, 0);
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
	struct xp_engine_stats st;
	double t0 = xp_now();
	do {
		xp_sleep(0.01);
		ops->read(e, &st);
	} while (st.open_now < 16 && xp_now() - t0 < 3.0);
	assert_int_equal(st.open_now, 16);
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
	struct xp_engine_stats st;
	double t0 = xp_now();
	do {
		xp_sleep(0.01);
		ops->read(e, &st);
	} while (st.open_now < 100 && xp_now() - t0 < 3.0);
	assert_int_equal(st.open_now, 100);

	xp_sock_server_stop(srv);
	xp_sleep(0.3);
	ops->read(e, &st);
	assert_int_equal(st.conn_reset, 100);
	assert_int_equal(st.open_now, 0);
	assert_true(st.conn_fail > 0);

	char err[256];
	struct xp_sock_server_cfg sc = { .port_lo = p, .port_hi = (uint16_t)(p + NPORTS - 1), .threads = 2 };
	if (xp_sock_server_start(&sc, &srv, err, sizeof(err)))
		fail_msg("restart: %s", err);
	t0 = xp_now();
	do {
		xp_sleep(0.01);
		ops->read(e, &st);
	} while (st.open_now < 100 && xp_now() - t0 < 3.0);
	print_message("reconnect: 100 open again after %.3f s (%llu failures meanwhile)\n", xp_now() - t0,
		      (unsigned long long)st.conn_fail);
	assert_int_equal(st.open_now, 100);
	assert_int_equal(st.conn_ok, 200);
	assert_balanced(&st);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

static void test_refused(void **state)
{
	struct xp_engine_cfg c;
	uint16_t p = free_port();
	base_cfg(&c, XP_TEST_CONNECT, "127.0.0.1", p, p, 8);
	struct xp_engine *e = start_engine(&c);
	xp_sleep(1.0);
	double took = timed_stop(e);
	struct xp_engine_stats st;
	ops->read(e, &st);
	print_message("refused: %llu failures in 1 s, stop %.3f s\n", (unsigned long long)st.conn_fail, took);
	assert_true(took < 0.5);
	assert_true(st.conn_fail > 0);
	assert_int_equal(st.conn_ok, 0);
	assert_int_equal(st.open_now, 0);
	/* Backoff: 8 slots retrying at 1..64 ms is a few hundred, not a spin. */
	assert_true(st.conn_fail < 2000);
	ops->destroy(e);
}

static void test_max_seconds(void **state)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_HOLD, "127.0.0.1", p, p, 50);
	c.max_seconds = 0.5;
	struct xp_engine *e = start_engine(&c);
	xp_sleep(0.3);
	struct xp_engine_stats st;
	ops->read(e, &st);
	assert_int_equal(st.open_now, 50);
	/* Nobody calls stop(): the loops end and close by themselves. */
	xp_sleep(0.6);
	ops->read(e, &st);
	assert_int_equal(st.open_now, 0);
	assert_int_equal(st.conn_closed, 50);
	struct xp_sock_server_stats ss = server_wait(srv, 1.0, open_is, 0);
	assert_int_equal(ss.open_now, 0);
	assert_true(timed_stop(e) < 0.1);
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
	c.threads = 1;
	struct xp_engine *e = start_engine(&c);
	xp_sleep(3.6);
	struct xp_engine_stats st;
	ops->read(e, &st);
	assert_true(timed_stop(e) < 0.5);
	print_message("timeout: ok %llu timeout %llu fail %llu\n", (unsigned long long)st.conn_ok,
		      (unsigned long long)st.conn_timeout, (unsigned long long)st.conn_fail);
	assert_true(st.conn_ok >= 1 && st.conn_ok <= 2); /* what the queue took */
	assert_true(st.conn_timeout >= 8 - st.conn_ok);
	assert_int_equal(st.conn_fail, 0);
	ops->destroy(e);
	close(lfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raise_nofile),
		cmocka_unit_test(test_create_errors),
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
