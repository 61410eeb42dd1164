/*
 * What the socket engine's loopback tests share (test_socket_engine.c,
 * test_socket_multiproc.c): a server on NPORTS free ports, the engine started
 * or the test failed, waits on a condition with a hang bound, the worker
 * processes of this process, and one CONNECT run checked end to end.
 * Header only, included after <cmocka.h>; the functions are static inline so
 * that a test file may use only some of them.
 */
#ifndef XP_TESTS_SOCKET_ENGINE_FIXTURE_H
#define XP_TESTS_SOCKET_ENGINE_FIXTURE_H

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/workers.h"
#include "server/listeners.h"
#include "net/sockutil.h"
#include "util/time.h"
#include "tests/unit/sock_engine.h"
#include "net/netstat.h"

#define NPORTS 4

static const struct xp_engine_ops *ops = &xp_engine_socket;

static inline uint16_t start_server_for(struct xp_sock_server **srv, unsigned long max_conns)
{
	return xpt_sock_server(srv, NPORTS, max_conns);
}

static inline uint16_t start_server(struct xp_sock_server **srv)
{
	return start_server_for(srv, 5000);
}

/* A TCP port nobody listens on (bound once to be sure it is free). */
static inline uint16_t free_port(void)
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

static inline void base_cfg(struct xp_engine_cfg *c, enum xp_test_kind kind, const char *server, uint16_t lo,
		     uint16_t hi, unsigned parallel)
{
	xpt_sock_cfg(c, kind, server, lo, hi, parallel);
}

static inline struct xp_engine *start_engine(const struct xp_engine_cfg *c)
{
	return xpt_sock_start(ops, c);
}

/* Stop and return how long stop() took. */
/* Stop bounds below only catch hangs: speed belongs in benchmarks, and this machine is shared and noisy. */
static inline double timed_stop(struct xp_engine *e)
{
	double t = xp_now();
	ops->stop(e);
	return xp_now() - t;
}

/* The deadline of every wait for a condition below: it only catches a hang
 * (the waits return as soon as the condition holds), so a loaded shared
 * machine cannot fail a test by being slow. Timing is the bench's. */
#define WAIT_S 30.0

/* Poll the server until pred holds or `secs` pass; returns the last reading. */
static inline struct xp_sock_server_stats server_wait(struct xp_sock_server *s, double secs,
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

/* Poll the engine until n connections are open or `secs` pass; returns the last reading. */
static inline struct xp_engine_stats wait_open(struct xp_engine *e, uint64_t n, double secs)
{
	struct xp_engine_stats st;
	double end = xp_now() + secs;
	do {
		xp_sleep(0.01);
		ops->read(e, &st);
	} while (st.sock.open_now < n && xp_now() < end);
	return st;
}

/* Poll the engine until pred holds or `secs` pass (a deadline for a hang,
 * never a measurement); returns the last reading. */
static inline struct xp_engine_stats engine_wait(struct xp_engine *e, double secs,
					  int (*pred)(const struct xp_engine_stats *, uint64_t), uint64_t arg)
{
	struct xp_engine_stats st;
	double end = xp_now() + secs;
	for (;;) {
		ops->read(e, &st);
		if (pred(&st, arg) || xp_now() >= end)
			return st;
		xp_sleep(0.005);
	}
}

static inline int ok_at_least(const struct xp_engine_stats *s, uint64_t n) { return s->sock.conn_ok >= n; }
static inline int fail_at_least(const struct xp_engine_stats *s, uint64_t n) { return s->sock.conn_fail >= n; }
static inline int payload_at_least(const struct xp_engine_stats *s, uint64_t n)
{
	return s->sock.open_now == 4 && s->sock.payload_bytes >= n;
}
static inline int all_dropped(const struct xp_engine_stats *s, uint64_t n)
{
	return s->sock.conn_reset >= n && s->sock.open_now == 0 && s->sock.conn_fail > 0;
}
static inline int timed_out_at_least(const struct xp_engine_stats *s, uint64_t n)
{
	return s->sock.conn_ok && s->sock.conn_timeout + s->sock.conn_ok >= n;
}
static inline int none_open_after_ok(const struct xp_engine_stats *s, uint64_t n)
{
	return s->sock.conn_ok >= n && s->sock.open_now == 0;
}

static inline int accepted_at_least(const struct xp_sock_server_stats *s, uint64_t n) { return s->accepted >= n; }
static inline int open_is(const struct xp_sock_server_stats *s, uint64_t n) { return s->open_now == n; }
static inline int rx_at_least(const struct xp_sock_server_stats *s, uint64_t n) { return s->bytes_rx >= n; }

/* Every established connection is closed by us, dropped, or still open. */
static inline void assert_balanced(const struct xp_engine_stats *st)
{
	assert_int_equal(st->sock.conn_ok, st->sock.conn_closed + st->sock.conn_reset + st->sock.open_now);
}

/* Children of this process whose name starts with prefix: how many, and
 * up to max of their pids. */
static inline unsigned find_children(const char *prefix, pid_t *pids, unsigned max)
{
	unsigned n = 0;
	DIR *d = opendir("/proc");
	assert_non_null(d);
	struct dirent *de;
	while ((de = readdir(d))) {
		char path[300], buf[512];
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* pid (comm) state ppid ...: comm may hold spaces, so parse after the last ')' */
		char *open = strchr(buf, '('), *close = strrchr(buf, ')');
		int ppid;
		char state;
		if (!open || !close || sscanf(close + 1, " %c %d", &state, &ppid) != 2 || ppid != getpid())
			continue;
		*close = '\0';
		if (strncmp(open + 1, prefix, strlen(prefix)))
			continue;
		if (n < max)
			pids[n] = (pid_t)atoi(de->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static inline unsigned count_children(const char *prefix)
{
	return find_children(prefix, NULL, 0);
}

/* Teardown: a failed test must not leave its knobs to the next one. */
static inline int unset_knobs(void **state)
{
	unsetenv("XDPPERF_FD_LIMIT");
	unsetenv("XDPPERF_SOCK_FAULT");
	return 0;
}

/* True once every child of ours has been reaped (WNOWAIT: looking reaps none). */
static inline bool no_children(void)
{
	siginfo_t si;
	return waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 && errno == ECHILD;
}

/* CONNECT for 1 s, `parallel` in flight, against a server planned for
 * max_conns; want_cli, want_srv: worker processes expected (0: in-process). */
static inline void run_connect_n(const char *server, unsigned nbind, const char *const *binds, unsigned parallel,
			  unsigned long max_conns, unsigned want_cli, unsigned want_srv)
{
	struct xp_sock_server *srv;
	uint16_t p = start_server_for(&srv, max_conns);
	struct xp_engine_cfg c;
	base_cfg(&c, XP_TEST_CONNECT, server, p, (uint16_t)(p + NPORTS - 1), parallel);
	c.nbind = nbind;
	for (unsigned b = 0; b < nbind; b++)
		assert_int_equal(xp_addr_parse(binds[b], &c.bind[b]), 0);
	struct xp_tcpext t0 = { 0 }, t1 = { 0 };
	xp_tcpext_read(&t0);
	struct xp_engine *e = start_engine(&c);
	/* Until 100 connections have been made, however long the shared machine
	 * takes (the deadline only catches a hang). */
	struct xp_engine_stats st = engine_wait(e, 30.0, ok_at_least, 101);
	unsigned ncli = count_children("xp-cli-w"), nsrv = count_children("xp-srv-w");
	double took = timed_stop(e);
	ops->read(e, &st);
	print_message("connect %s (%u bind, -P %u, %u+%u worker processes): ok %llu fail %llu timeout %llu, "
		      "stop %.3f s\n", server, nbind, parallel, ncli, nsrv, (unsigned long long)st.sock.conn_ok,
		      (unsigned long long)st.sock.conn_fail, (unsigned long long)st.sock.conn_timeout, took);
	assert_int_equal(ncli, want_cli);
	assert_int_equal(nsrv, want_srv);
	assert_true(took < 5.0);
	assert_true(st.sock.conn_ok > 100);
	assert_int_equal(st.sock.conn_fail, 0);
	assert_int_equal(st.sock.conn_timeout, 0);
	assert_int_equal(st.sock.conn_reset, 0);
	assert_int_equal(st.sock.open_now, 0);
	assert_int_equal(st.sock.conn_closed, st.sock.conn_ok);
	/* Everything the client saw established reaches the server's accept(),
	 * except handshakes whose RST overtook their ACK (the engine closes each
	 * with an RST at once; loopback queues the two on different CPUs): the
	 * kernel resets those in SYN_RECV and counts them as EmbryonicRsts (issue
	 * 14; namespace-wide, so others' tests can only add to it). Connects in
	 * flight at stop may add at most `parallel` more. */
	struct xp_sock_server_stats ss = server_wait(srv, 1.0, accepted_at_least, st.sock.conn_ok);
	xp_tcpext_read(&t1);
	uint64_t embryonic = t1.embryonic_rsts - t0.embryonic_rsts;
	if (ss.accepted < st.sock.conn_ok)
		print_message("accepted %llu of %llu established; %llu embryonic resets\n", (unsigned long long)ss.accepted,
			      (unsigned long long)st.sock.conn_ok, (unsigned long long)embryonic);
	assert_true(ss.accepted + embryonic >= st.sock.conn_ok);
	assert_true(ss.accepted <= st.sock.conn_ok + parallel);
	/* The client closes with RST (see sock_client.c): the server sees resets. */
	ss = server_wait(srv, WAIT_S, open_is, 0);
	assert_int_equal(ss.open_now, 0);
	assert_int_equal(ss.accepted, ss.closed + ss.resets);
	ops->destroy(e);
	xp_sock_server_stop(srv);
	assert_true(no_children());
}

#endif
