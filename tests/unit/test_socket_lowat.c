/*
 * The socket server's late reader (user/server/listeners.c): a connection
 * that streams fast gets SO_RCVLOWAT raised so that epoll wakes its reader
 * only when XP_SOCK_RCVLOWAT bytes wait; every sweep (100 ms) reads what
 * waits regardless, and a connection that went slow goes back to 1. What is
 * checked here, over loopback with real sockets against the real server:
 * the mark is set and read back on the accepted connection (and never above
 * half its receive buffer); bytes written after a pause are read while the
 * connection stays open, not only at close; a slow writer's bytes are read
 * as they come, its mark never raised; the count at FIN equals the bytes
 * written, to the byte. Every wait is a hang bound (10 s), the assertion is
 * on the condition, never on how long it took (timings are printed only).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/listeners.h"
#include "util/time.h"

#define BOUND_S 10.0
#define CHUNK (64 * 1024)

/* A one-port server with 2 threads, SO_RCVLOWAT as given (0: the default). */
static uint16_t start_server(struct xp_sock_server **srv, unsigned rcvlowat)
{
	char err[256] = "";
	for (unsigned p = 61003; p < 65000; p += 17) {
		struct xp_sock_server_cfg c = { .port_lo = (uint16_t)p, .port_hi = (uint16_t)p, .threads = 2,
						.max_conns = 16, .rcvlowat = rcvlowat };
		if (!xp_sock_server_start(&c, srv, err, sizeof(err)))
			return (uint16_t)p;
	}
	fail_msg("no free port for the server: %s", err);
	return 0;
}

/* Segments of a 1500-byte MTU, as in the lab: on loopback's 64 KiB MSS the
 * kernel wakes the reader below the mark whenever less than one segment of
 * window is left (tcp_epollin_ready), which would hide a missing deadline. */
static int connect_to(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	int mss = 1448;
	assert_int_equal(setsockopt(fd, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)), 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static uint16_t port_of(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

/* The server's accepted end of client socket cfd (same process): local port
 * = the server's, peer port = the client's own. Waits for the accept. */
static int accepted_fd(int cfd, uint16_t sport)
{
	struct sockaddr_storage me;
	socklen_t ml = sizeof(me);
	assert_int_equal(getsockname(cfd, (struct sockaddr *)&me, &ml), 0);
	uint16_t cport = port_of(&me);
	double end = xp_now() + BOUND_S;
	do {
		DIR *d = opendir("/proc/self/fd");
		assert_non_null(d);
		struct dirent *de;
		int found = -1;
		while ((de = readdir(d)) && found < 0) {
			int fd = atoi(de->d_name);
			struct stat sb;
			if (de->d_name[0] == '.' || fd == dirfd(d) || fd == cfd || fstat(fd, &sb) ||
			    !S_ISSOCK(sb.st_mode))
				continue;
			struct sockaddr_storage l, r;
			socklen_t ll = sizeof(l), rl = sizeof(r);
			if (getsockname(fd, (struct sockaddr *)&l, &ll) || getpeername(fd, (struct sockaddr *)&r, &rl))
				continue;
			if (port_of(&l) == sport && port_of(&r) == cport)
				found = fd;
		}
		closedir(d);
		if (found >= 0)
			return found;
		xp_sleep(0.01);
	} while (xp_now() < end);
	fail_msg("the server did not accept the connection within %.0f s", BOUND_S);
	return -1;
}

static int rcvlowat_of(int fd)
{
	int v = -1;
	socklen_t l = sizeof(v);
	assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &v, &l), 0);
	return v;
}

static uint64_t server_bytes(struct xp_sock_server *srv)
{
	struct xp_sock_server_stats st;
	xp_sock_server_read(srv, &st);
	return st.bytes_rx;
}

/* Until the server has read want bytes (or the bound): the seconds it took, or -1. */
static double wait_bytes(struct xp_sock_server *srv, uint64_t want)
{
	double t0 = xp_now();
	while (server_bytes(srv) < want && xp_now() - t0 < BOUND_S)
		xp_sleep(0.002);
	return server_bytes(srv) == want ? xp_now() - t0 : -1;
}

/* What the kernel allows: half of the most the receive buffer may grow to. */
static int expected_lowat(void)
{
	FILE *f = fopen("/proc/sys/net/ipv4/tcp_rmem", "r");
	long lo = 0, def = 0, max = 0;
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld %ld %ld", &lo, &def, &max), 3);
	fclose(f);
	return (long)XP_SOCK_RCVLOWAT < max / 2 ? (int)XP_SOCK_RCVLOWAT : (int)(max / 2);
}

/* A blocking writer: CHUNK at a time until told to stop (or the bound), or
 * exactly `limit` bytes when limit > 0; counts what it wrote. */
struct writer {
	int fd;
	uint64_t limit;
	uint64_t written;
	int stop;
	pthread_t th;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	static char buf[CHUNK];
	double end = xp_now() + BOUND_S * 2;
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED) && xp_now() < end) {
		size_t n = CHUNK;
		if (w->limit) {
			if (w->written >= w->limit)
				break;
			if (w->limit - w->written < n)
				n = (size_t)(w->limit - w->written);
		}
		ssize_t k = send(w->fd, buf, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		__atomic_store_n(&w->written, w->written + (uint64_t)k, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void writer_start(struct writer *w, int fd, uint64_t limit)
{
	memset(w, 0, sizeof(*w));
	w->fd = fd;
	w->limit = limit;
	assert_int_equal(pthread_create(&w->th, NULL, writer_main, w), 0);
}

static uint64_t writer_join(struct writer *w)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_join(w->th, NULL);
	return w->written;
}

static void send_all(int fd, size_t n)
{
	char buf[4096];
	memset(buf, 'x', sizeof(buf));
	while (n > 0) {
		size_t k = n < sizeof(buf) ? n : sizeof(buf);
		ssize_t s = send(fd, buf, k, MSG_NOSIGNAL);
		assert_true(s > 0);
		n -= (size_t)s;
	}
}

/*
 * A fast stream: the accepted connection's SO_RCVLOWAT goes to the default
 * (read back as the kernel took it) and its receive buffer holds twice that.
 * When the writer pauses, the tail below the mark is read while the
 * connection stays open and the mark goes back to 1; 1000 more bytes after
 * the pause are read the same way, not at close.
 */
static void test_fast_stream_raised_then_deadline(void **state)
{
	struct xp_sock_server *srv;
	uint16_t port = start_server(&srv, 0);
	int cfd = connect_to(port);
	int afd = accepted_fd(cfd, port);
	assert_int_equal(rcvlowat_of(afd), 1);

	struct writer w;
	writer_start(&w, cfd, 0);
	int want = expected_lowat(), got = 1;
	double end = xp_now() + BOUND_S;
	while ((got = rcvlowat_of(afd)) != want && xp_now() < end)
		xp_sleep(0.005);
	int rb = 0;
	socklen_t rl = sizeof(rb);
	assert_int_equal(getsockopt(afd, SOL_SOCKET, SO_RCVBUF, &rb, &rl), 0);
	uint64_t written = writer_join(&w);
	print_message("raised: SO_RCVLOWAT %d (want %d), SO_RCVBUF %d, %.1f MB written\n", got, want, rb,
		      written / 1e6);
	assert_int_equal(got, want);
	assert_true(rb >= 2 * got);

	/* The writer paused: everything written is read, the connection still open. */
	double took = wait_bytes(srv, written);
	print_message("after the pause: %llu of %llu bytes read in %.3f s, connection open\n",
		      (unsigned long long)server_bytes(srv), (unsigned long long)written, took);
	assert_int_equal(server_bytes(srv), written);
	end = xp_now() + BOUND_S;
	while (rcvlowat_of(afd) != 1 && xp_now() < end)
		xp_sleep(0.005);
	assert_int_equal(rcvlowat_of(afd), 1);

	/* A slow write after the pause: read as it comes. */
	send_all(cfd, 1000);
	took = wait_bytes(srv, written + 1000);
	print_message("1000 bytes more: read in %.3f s, connection open\n", took);
	assert_int_equal(server_bytes(srv), written + 1000);

	struct xp_sock_server_stats st;
	xp_sock_server_read(srv, &st);
	assert_int_equal(st.open_now, 1);
	assert_int_equal(st.closed, 0);
	close(cfd);
	xp_sock_server_stop(srv);
}

/* A slow writer (1000 bytes every 20 ms): each write is read while the
 * connection is open, and its mark is never raised. */
static void test_slow_writer_never_raised(void **state)
{
	struct xp_sock_server *srv;
	uint16_t port = start_server(&srv, 0);
	int cfd = connect_to(port);
	int afd = accepted_fd(cfd, port);
	uint64_t total = 0;
	double worst = 0;
	for (int k = 0; k < 20; k++) {
		send_all(cfd, 1000);
		total += 1000;
		double took = wait_bytes(srv, total);
		assert_int_equal(server_bytes(srv), total);
		if (took > worst)
			worst = took;
		assert_int_equal(rcvlowat_of(afd), 1);
		xp_sleep(0.02);
	}
	print_message("slow writer: 20 x 1000 bytes, each read within %.3f s, SO_RCVLOWAT stayed 1\n", worst);
	close(cfd);
	xp_sock_server_stop(srv);
}

/* The end of a test: 4 fast streams of odd lengths, then FIN. The server's
 * count equals the bytes written, to the byte, and every connection closed. */
static void test_fin_count_exact(void **state)
{
	struct xp_sock_server *srv;
	uint16_t port = start_server(&srv, 0);
	enum { N = 4 };
	int cfd[N];
	struct writer w[N];
	uint64_t want = 0;
	for (int i = 0; i < N; i++) {
		cfd[i] = connect_to(port);
		uint64_t len = 24ull * 1024 * 1024 + 333u * (unsigned)(i + 1);
		writer_start(&w[i], cfd[i], len);
		want += len;
	}
	for (int i = 0; i < N; i++) {
		pthread_join(w[i].th, NULL);
		assert_int_equal(w[i].written, w[i].limit);
		close(cfd[i]);
	}
	struct xp_sock_server_stats st;
	double end = xp_now() + BOUND_S;
	do {
		xp_sleep(0.005);
		xp_sock_server_read(srv, &st);
	} while ((st.bytes_rx < want || st.closed < N) && xp_now() < end);
	print_message("FIN: %llu of %llu bytes read, %llu of %d closed\n", (unsigned long long)st.bytes_rx,
		      (unsigned long long)want, (unsigned long long)st.closed, N);
	assert_int_equal(st.bytes_rx, want);
	assert_int_equal(st.closed, N);
	assert_int_equal(st.resets, 0);
	xp_sock_server_stop(srv);
}

/* rcvlowat = 1: the mark is never raised, however fast the stream. */
static void test_rcvlowat_off(void **state)
{
	struct xp_sock_server *srv;
	uint16_t port = start_server(&srv, 1);
	int cfd = connect_to(port);
	int afd = accepted_fd(cfd, port);
	struct writer w;
	writer_start(&w, cfd, 64ull * 1024 * 1024);
	int worst = 1;
	double end = xp_now() + BOUND_S;
	while (__atomic_load_n(&w.written, __ATOMIC_RELAXED) < w.limit && xp_now() < end) {
		int v = rcvlowat_of(afd);
		if (v > worst)
			worst = v;
		xp_sleep(0.005);
	}
	pthread_join(w.th, NULL);
	assert_int_equal(w.written, w.limit);
	assert_int_equal(worst, 1);
	assert_true(wait_bytes(srv, w.written) >= 0);
	close(cfd);
	xp_sock_server_stop(srv);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_stream_raised_then_deadline),
		cmocka_unit_test(test_slow_writer_never_raised),
		cmocka_unit_test(test_fin_count_exact),
		cmocka_unit_test(test_rcvlowat_off),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
