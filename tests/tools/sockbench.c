/*
 * sockbench: the socket engine against the socket server, both in this one
 * process, over loopback. A measuring aid, not a test; not built by make:
 *
 *   cc -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf -Ibuild \
 *      -o build/sockbench tests/tools/sockbench.c build/libxdpperf.a \
 *      -lxdp -lbpf -lelf -lz -ljson-c -lmnl -lpthread -lm
 *   build/sockbench connect|stream|hold [-P n] [-t secs] [-p port] [-n nports] [-6] [-T threads] [-F procs]
 *
 * Prints per-second client/server counters, then for hold: user-space RSS
 * and kernel Slab before and with the connections open, per connection
 * (both ends of each connection live on this host, so the Slab figure is
 * client + server socket).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "sock_server.h"
#include "sockutil.h"
#include "timeutil.h"

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	if (f)
		fclose(f);
	return v;
}

static long rss_kb(void)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			v = atol(line + 6);
	if (f)
		fclose(f);
	return v;
}

/*
 * hold -F k: k processes, each with its own server (ports port+i*nports...)
 * and P/k held connections, so P can exceed one process's open-file limit
 * (this sandbox: hard 20000 and no CAP_SYS_RESOURCE to raise it). Each
 * child reports its RSS before/after; the parent reads Slab once all are
 * open, then stops them all at once and reports the slowest stop().
 */
static int hold_forked(unsigned parallel, unsigned k, int port, unsigned nports, unsigned threads)
{
	int up[2], down[2];
	if (pipe(up) || pipe(down))
		return 1;
	long slab0 = meminfo_kb("Slab:");
	for (unsigned i = 0; i < k; i++) {
		if (fork() == 0) {
			char err[256];
			unsigned share = parallel / k + (i < parallel % k);
			long rss0 = rss_kb();
			uint16_t lo = (uint16_t)(port + i * nports);
			struct xp_sock_server_cfg sc = { .port_lo = lo, .port_hi = (uint16_t)(lo + nports - 1),
							 .threads = threads, .max_conns = share };
			struct xp_sock_server *srv;
			struct xp_engine_cfg ec;
			struct xp_engine *e;
			memset(&ec, 0, sizeof(ec));
			ec.kind = XP_TEST_HOLD;
			xp_addr_parse("127.0.0.1", &ec.server);
			ec.dport_lo = lo;
			ec.dport_hi = sc.port_hi;
			ec.parallel = share;
			ec.threads = threads;
			ec.max_seconds = 60;
			if (xp_raise_nofile(2UL * share + 1000, err, sizeof(err)) ||
			    xp_sock_server_start(&sc, &srv, err, sizeof(err)) ||
			    xp_engine_socket.create(&ec, &e, err, sizeof(err)) ||
			    xp_engine_socket.start(e, err, sizeof(err))) {
				fprintf(stderr, "child %u: %s\n", i, err);
				_exit(1);
			}
			struct xp_engine_stats st;
			double t0 = xp_now();
			do {
				xp_sleep(0.05);
				xp_engine_socket.read(e, &st);
			} while (st.open_now < share && xp_now() - t0 < 20);
			xp_sleep(0.5); /* let the server side settle too */
			char msg[128];
			int n = snprintf(msg, sizeof(msg), "%llu %ld %ld %.3f\n", (unsigned long long)st.open_now,
					 rss0, rss_kb(), xp_now() - t0);
			if (write(up[1], msg, (size_t)n) != n)
				_exit(1);
			char go;
			if (read(down[0], &go, 1) != 1)
				_exit(1);
			double ts = xp_now();
			xp_engine_socket.stop(e);
			double tstop = xp_now() - ts;
			ts = xp_now();
			xp_sock_server_stop(srv);
			n = snprintf(msg, sizeof(msg), "%.3f %.3f\n", tstop, xp_now() - ts);
			if (write(up[1], msg, (size_t)n) != n)
				_exit(1);
			_exit(0);
		}
	}
	FILE *f = fdopen(up[0], "r");
	unsigned long long open = 0;
	long drss = 0;
	double ramp = 0;
	for (unsigned i = 0; i < k; i++) {
		unsigned long long o;
		long r0, r1;
		double t;
		if (fscanf(f, "%llu %ld %ld %lf", &o, &r0, &r1, &t) != 4)
			return 1;
		open += o;
		drss += r1 - r0;
		ramp = t > ramp ? t : ramp;
	}
	long slab1 = meminfo_kb("Slab:");
	printf("hold %llu in %u processes (ramp %.2f s): RSS +%ld KiB = %.0f B/conn (client+server user space); "
	       "Slab +%ld KiB = %.0f B/conn (both kernel sockets)\n",
	       open, k, ramp, drss, drss * 1024.0 / open, slab1 - slab0, (slab1 - slab0) * 1024.0 / open);
	double t0 = xp_now();
	if (write(down[1], "gggggggggggggggggggggggggggggggg", k) != (ssize_t)k)
		return 1;
	double worst = 0, worst_srv = 0;
	for (unsigned i = 0; i < k; i++) {
		double a, b;
		if (fscanf(f, "%lf %lf", &a, &b) != 2)
			return 1;
		worst = a > worst ? a : worst;
		worst_srv = b > worst_srv ? b : worst_srv;
	}
	printf("stop: slowest client stop() %.3f s, slowest server stop %.3f s, all done %.3f s\n", worst, worst_srv,
	       xp_now() - t0);
	while (wait(NULL) > 0)
		;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s connect|stream|hold [-P n] [-t s] [-p port] [-n nports] [-6] [-T threads]\n",
			argv[0]);
		return 2;
	}
	struct xp_engine_cfg ec;
	memset(&ec, 0, sizeof(ec));
	ec.kind = !strcmp(argv[1], "connect") ? XP_TEST_CONNECT
		  : !strcmp(argv[1], "hold")  ? XP_TEST_HOLD
					      : XP_TEST_STREAM;
	unsigned parallel = 64, threads = 0, nports = 1, procs = 1;
	double secs = 3;
	int port = 61000, v6 = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-P") && i + 1 < argc)
			parallel = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			nports = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-6"))
			v6 = 1;
		else if (!strcmp(argv[i], "-F") && i + 1 < argc)
			procs = (unsigned)atoi(argv[++i]);
	}
	if (procs > 1 && ec.kind == XP_TEST_HOLD)
		return hold_forked(parallel, procs > 32 ? 32 : procs, port, nports, threads);
	char err[256];
	/* client and server descriptors share this process's limit */
	if (xp_raise_nofile(2UL * parallel + 1000, err, sizeof(err))) {
		fprintf(stderr, "client+server %s\n", err);
		return 1;
	}
	long rss0 = rss_kb(), slab0 = meminfo_kb("Slab:");

	struct xp_sock_server_cfg sc = { .port_lo = (uint16_t)port, .port_hi = (uint16_t)(port + nports - 1),
					 .threads = threads, .max_conns = parallel };
	struct xp_sock_server *srv;
	if (xp_sock_server_start(&sc, &srv, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	xp_addr_parse(v6 ? "::1" : "127.0.0.1", &ec.server);
	ec.dport_lo = (uint16_t)port;
	ec.dport_hi = (uint16_t)(port + nports - 1);
	ec.parallel = parallel;
	ec.threads = threads;
	ec.max_seconds = secs + 5;
	struct xp_engine *e;
	if (xp_engine_socket.create(&ec, &e, err, sizeof(err)) || xp_engine_socket.start(e, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct xp_engine_stats st, prev;
	memset(&prev, 0, sizeof(prev));
	double t0 = xp_now(), cpu0 = xp_cpu_seconds();
	long rss1 = 0, slab1 = 0;
	for (int s = 1; xp_now() - t0 < secs; s++) {
		xp_sleep(t0 + s - xp_now());
		struct xp_sock_server_stats ss;
		xp_engine_socket.read(e, &st);
		xp_sock_server_read(srv, &ss);
		printf("%2ds ok %8llu/s fail %llu reset %llu timeout %llu open %llu  %.2f Gbit/s | srv acc %llu open %llu\n",
		       s, (unsigned long long)(st.conn_ok - prev.conn_ok), (unsigned long long)st.conn_fail,
		       (unsigned long long)st.conn_reset, (unsigned long long)st.conn_timeout,
		       (unsigned long long)st.open_now, (st.payload_bytes - prev.payload_bytes) * 8e-9,
		       (unsigned long long)ss.accepted, (unsigned long long)ss.open_now);
		prev = st;
		rss1 = rss_kb();
		slab1 = meminfo_kb("Slab:");
	}
	double el = xp_now() - t0, cpu = xp_cpu_seconds() - cpu0;
	xp_engine_socket.read(e, &st);
	printf("total: %.0f conn/s, %.2f Gbit/s over %.2f s, CPU %.2f s (%.0f%% of %ld CPUs)\n",
	       st.conn_ok / el, st.payload_bytes * 8e-9 / el, el, cpu, 100 * cpu / el / sysconf(_SC_NPROCESSORS_ONLN),
	       sysconf(_SC_NPROCESSORS_ONLN));
	if (ec.kind == XP_TEST_HOLD && st.open_now)
		printf("hold %llu: RSS %ld -> %ld KiB (%.0f B/conn, client+server); Slab %ld -> %ld KiB (%.0f B/conn)\n",
		       (unsigned long long)st.open_now, rss0, rss1, (rss1 - rss0) * 1024.0 / st.open_now, slab0, slab1,
		       (slab1 - slab0) * 1024.0 / st.open_now);
	double ts = xp_now();
	xp_engine_socket.stop(e);
	double tstop = xp_now() - ts;
	xp_engine_socket.read(e, &st);
	ts = xp_now();
	xp_sock_server_stop(srv);
	printf("client stop %.3f s, server stop %.3f s; ok %llu = closed %llu + reset %llu + open %llu\n", tstop,
	       xp_now() - ts, (unsigned long long)st.conn_ok, (unsigned long long)st.conn_closed,
	       (unsigned long long)st.conn_reset, (unsigned long long)st.open_now);
	xp_engine_socket.destroy(e);
	return 0;
}
