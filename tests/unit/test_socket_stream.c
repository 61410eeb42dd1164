/*
 * How the socket engine writes STREAM connections (user/engine/socket_loop.c,
 * BLOCKING_MAX_SLOTS): with few connections per thread each socket is
 * switched to blocking sends bounded by a 10 ms SO_SNDTIMEO once it is
 * established; with more than 64 per thread they stay non-blocking; and a
 * peer that never reads cannot make stop() hang. Loopback only, against the
 * socket server (user/server/listeners.c) or a listener that never reads.
 * (Throughput belongs in scripts/bench.sh, not here.)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "server/listeners.h"
#include "util/time.h"
#include "tests/unit/sock_engine.h"

#define NPORTS 4

static const struct xp_engine_ops *ops = &xp_engine_socket;

/* A server on NPORTS free ports (tests/unit/sock_engine.h); the first port. */
static uint16_t start_server(struct xp_sock_server **srv)
{
	return xpt_sock_server(srv, NPORTS, 5000);
}

static void base_cfg(struct xp_engine_cfg *c, uint16_t lo, uint16_t hi, unsigned parallel)
{
	xpt_sock_cfg(c, XP_TEST_STREAM, "127.0.0.1", lo, hi, parallel);
}

static struct xp_engine *start_engine(const struct xp_engine_cfg *c)
{
	return xpt_sock_start(ops, c);
}

/* Poll until n connections are open (a hang bound, not a measurement). */
static void wait_open(struct xp_engine *e, uint64_t n, double secs)
{
	struct xp_engine_stats st;
	double end = xp_now() + secs;
	do {
		xp_sleep(0.01);
		ops->read(e, &st);
	} while (st.sock.open_now < n && xp_now() < end);
	assert_int_equal(st.sock.open_now, n);
}

struct modes {
	unsigned conns;       /* this process's sockets connected to 127.0.0.1:[lo, lo+NPORTS) */
	unsigned blocking;    /* of them: O_NONBLOCK clear */
	unsigned timeo_10ms;  /* of them: SO_SNDTIMEO 10 ms (read back in jiffies: 10-20 ms) */
};

/* Look at every descriptor of this process: the engine's client sockets are
 * the ones whose peer is one of the server's ports (the server's accepted
 * sockets have an ephemeral peer port, its listeners none). */
static struct modes client_modes(uint16_t lo)
{
	struct modes m = { 0 };
	DIR *d = opendir("/proc/self/fd");
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);
		struct stat sb;
		if (de->d_name[0] == '.' || fd == dirfd(d) || fstat(fd, &sb) || !S_ISSOCK(sb.st_mode))
			continue;
		struct sockaddr_in a;
		socklen_t al = sizeof(a);
		if (getpeername(fd, (struct sockaddr *)&a, &al) || a.sin_family != AF_INET ||
		    a.sin_addr.s_addr != htonl(INADDR_LOOPBACK) || ntohs(a.sin_port) < lo ||
		    ntohs(a.sin_port) >= lo + NPORTS)
			continue;
		m.conns++;
		int fl = fcntl(fd, F_GETFL);
		assert_true(fl >= 0);
		if (!(fl & O_NONBLOCK))
			m.blocking++;
		struct timeval tv;
		socklen_t tl = sizeof(tv);
		assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl), 0);
		if (tv.tv_sec == 0 && tv.tv_usec >= 10000 && tv.tv_usec <= 20000)
			m.timeo_10ms++;
	}
	closedir(d);
	return m;
}

/* -P 4 over 2 threads: 2 connections per thread, all written with blocking, time-bounded sends. */
static void test_few_blocking(void **state)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, p, (uint16_t)(p + NPORTS - 1), 4);
	struct xp_engine *e = start_engine(&c);
	wait_open(e, 4, 10.0);
	struct modes m = client_modes(p);
	print_message("-P 4: %u connections, %u blocking, %u with a 10 ms SO_SNDTIMEO\n", m.conns, m.blocking,
		      m.timeo_10ms);
	assert_int_equal(m.conns, 4);
	assert_int_equal(m.blocking, 4);
	assert_int_equal(m.timeo_10ms, 4);
	ops->stop(e);
	struct xp_engine_stats st;
	ops->read(e, &st);
	assert_true(st.sock.payload_bytes > 0);
	assert_int_equal(st.sock.conn_reset, 0);
	/* Graceful close after blocking writes: the server reads every byte written. */
	struct xp_sock_server_stats ss;
	double end = xp_now() + 5.0;
	do {
		xp_sleep(0.01);
		xp_sock_server_read(srv, &ss);
	} while (ss.bytes_rx < st.sock.payload_bytes && xp_now() < end);
	assert_int_equal(ss.bytes_rx, st.sock.payload_bytes);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

/* -P 130 over 2 threads: 65 per thread, more than BLOCKING_MAX_SLOTS (64): all stay non-blocking. */
static void test_many_nonblocking(void **state)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server(&srv);
	struct xp_engine_cfg c;
	base_cfg(&c, p, (uint16_t)(p + NPORTS - 1), 130);
	struct xp_engine *e = start_engine(&c);
	wait_open(e, 130, 20.0);
	struct modes m = client_modes(p);
	print_message("-P 130: %u connections, %u blocking\n", m.conns, m.blocking);
	assert_int_equal(m.conns, 130);
	assert_int_equal(m.blocking, 0);
	assert_int_equal(m.timeo_10ms, 0);
	ops->destroy(e);
	xp_sock_server_stop(srv);
}

/* A peer that accepts nothing and reads nothing: the kernel completes the
 * handshakes into the listen backlog, the windows fill and close. Blocking
 * sends must not hold the threads: stop() returns (hang bound 5 s) and the
 * connections end closed, not reset or failed. */
static void test_stalled_peer_stop(void **state)
{
	int l = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(l >= 0);
	uint16_t port = 0;
	for (unsigned pp = 64101; pp < 65000 && !port; pp += 7) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)pp),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (!bind(l, (struct sockaddr *)&a, sizeof(a)))
			port = (uint16_t)pp;
	}
	assert_true(port != 0);
	assert_int_equal(listen(l, 16), 0);
	struct xp_engine_cfg c;
	base_cfg(&c, port, port, 4);
	struct xp_engine *e = start_engine(&c);
	wait_open(e, 4, 10.0);
	/* Until nothing more fits: the writes stop moving. */
	struct xp_engine_stats st;
	uint64_t last = 0;
	for (int k = 0; k < 100; k++) {
		xp_sleep(0.05);
		ops->read(e, &st);
		if (k > 4 && st.sock.payload_bytes == last)
			break;
		last = st.sock.payload_bytes;
	}
	struct modes m = client_modes(port);
	assert_int_equal(m.blocking, 4);
	double t = xp_now();
	ops->stop(e);
	double took = xp_now() - t;
	ops->read(e, &st);
	print_message("stalled peer: %.1f MB queued, stop took %.3f s\n", st.sock.payload_bytes / 1e6, took);
	assert_true(took < 5.0);
	assert_true(st.sock.payload_bytes > 0);
	assert_int_equal(st.sock.conn_ok, 4);
	assert_int_equal(st.sock.conn_reset, 0);
	assert_int_equal(st.sock.conn_fail, 0);
	assert_int_equal(st.sock.conn_closed, 4);
	ops->destroy(e);
	close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_few_blocking),
		cmocka_unit_test(test_many_nonblocking),
		cmocka_unit_test(test_stalled_peer_stop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
