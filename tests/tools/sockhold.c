/*
 * sockhold: hold many connections between two network namespaces, the
 * server (xp_sock_server) in one and the client engine (HOLD, -k) in the
 * other, and measure what it costs. A measuring aid, not a test; not built
 * by make:
 *
 *   cc -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf -Ibuild \
 *      -o build/sockhold tests/tools/sockhold.c user/engine_socket.c user/sock_client.c \
 *      user/sock_server.c user/sock_proc.c user/sockutil.c user/addr.c -lpthread -lm
 *   build/sockhold CLIENT_NS SERVER_NS SERVER_ADDR PORT_LO:PORT_HI PARALLEL BIND_ADDR...
 *
 * e.g. (namespaces made by hand, veth between them, the client holding the
 * bind addresses):
 *   build/sockhold xpsk-a xpsk-b 198.18.200.1 63000:63010 100000 198.18.200.{10..25}
 *
 * The server runs in a forked process that joins SERVER_NS and answers
 * commands on a socketpair; this process joins CLIENT_NS and runs the
 * client. Reported: ramp time, open_now on both sides, RSS and PSS summed
 * over each side's process and its worker processes, the growth of the
 * kernel's Slab (and of "used" as free(1) computes it) while everything is
 * open, and how long each side's stop takes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "sock_server.h"
#include "timeutil.h"

static long meminfo_kb(const char *key)
{
	char line[256];
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && line[strlen(key)] == ':')
			v = atol(line + strlen(key) + 1);
	if (f)
		fclose(f);
	return v;
}

/* "used" as free(1) computes it: total - free - buffers - cache - reclaimable slab. */
static long used_kb(void)
{
	return meminfo_kb("MemTotal") - meminfo_kb("MemFree") - meminfo_kb("Buffers") - meminfo_kb("Cached") -
	       meminfo_kb("SReclaimable");
}

static long proc_kb(int pid, const char *file, const char *key)
{
	char path[64], line[256];
	long v = 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			v = atol(line + strlen(key));
	if (f)
		fclose(f);
	return v;
}

/* Bytes held by each slab cache (its slabs' pages), from /proc/slabinfo. */
#define MAX_CACHES 512
struct slabs {
	unsigned n;
	char name[MAX_CACHES][32];
	long bytes[MAX_CACHES];
};

static void read_slabs(struct slabs *s)
{
	char line[512];
	s->n = 0;
	FILE *f = fopen("/proc/slabinfo", "r");
	while (f && fgets(line, sizeof(line), f) && s->n < MAX_CACHES) {
		long slabs, pages;
		char *sd = strstr(line, "slabdata");
		const char *pp = strchr(line, ':');
		if (!sd || !pp || sscanf(line, "%31s", s->name[s->n]) != 1)
			continue;
		/* name active num objsize objperslab pagesperslab : ... : slabdata active_slabs num_slabs */
		long a, b, c, d;
		if (sscanf(line, "%*s %ld %ld %ld %ld %ld", &a, &b, &c, &d, &pages) != 5 ||
		    sscanf(sd, "slabdata %*d %ld", &slabs) != 1)
			continue;
		s->bytes[s->n++] = slabs * pages * 4096;
	}
	if (f)
		fclose(f);
}

/* The caches that grew most between a and b, per connection. */
static void print_slab_growth(const struct slabs *a, const struct slabs *b, double conns)
{
	long d[MAX_CACHES];
	for (unsigned i = 0; i < b->n; i++) {
		d[i] = b->bytes[i];
		for (unsigned j = 0; j < a->n; j++)
			if (!strcmp(a->name[j], b->name[i]))
				d[i] -= a->bytes[j];
	}
	printf("  largest slab caches growth (B/conn):");
	for (int k = 0; k < 9; k++) {
		unsigned best = 0;
		for (unsigned i = 1; i < b->n; i++)
			if (d[i] > d[best])
				best = i;
		if (d[best] <= 0)
			break;
		printf(" %s %.0f", b->name[best], d[best] / conns);
		d[best] = 0;
	}
	printf("\n");
}

struct side_mem {
	long rss_kb, pss_kb;
	unsigned procs; /* this one and its children */
};

/* RSS and PSS of process pid plus its children (the worker processes) but `skip`. */
static struct side_mem side_mem(int pid, int skip)
{
	struct side_mem m = { proc_kb(pid, "status", "VmRSS:"), proc_kb(pid, "smaps_rollup", "Pss:"), 1 };
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		char path[300], buf[512];
		int cpid = atoi(de->d_name), ppid;
		if (cpid <= 0 || cpid == skip)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", cpid);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		char *close_paren = strrchr(buf, ')'), state;
		if (!close_paren || sscanf(close_paren + 1, " %c %d", &state, &ppid) != 2 || ppid != pid)
			continue;
		m.rss_kb += proc_kb(cpid, "status", "VmRSS:");
		m.pss_kb += proc_kb(cpid, "smaps_rollup", "Pss:");
		m.procs++;
	}
	if (d)
		closedir(d);
	return m;
}

static int join_netns(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "/run/netns/%s", name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET)) {
		fprintf(stderr, "cannot join network namespace %s: %s\n", name, strerror(errno));
		return -1;
	}
	close(fd);
	return 0;
}

/* ---- the server process ----------------------------------------------------- */

static void reply(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reply(int fd, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(fd, buf, (size_t)n) != n)
		_exit(1);
}

static void __attribute__((noreturn)) server_main(int fd, const char *ns, uint16_t lo, uint16_t hi, unsigned long max)
{
	char err[256], cmd[64];
	if (join_netns(ns))
		_exit(1);
	struct side_mem m0 = side_mem(getpid(), 0);
	struct xp_sock_server_cfg c = { .port_lo = lo, .port_hi = hi, .max_conns = max, .debug = 1 };
	struct xp_sock_server *s;
	if (xp_sock_server_start(&c, &s, err, sizeof(err))) {
		reply(fd, "err %s\n", err);
		_exit(1);
	}
	reply(fd, "ok %ld %ld\n", m0.rss_kb, m0.pss_kb);
	for (;;) {
		ssize_t n = read(fd, cmd, sizeof(cmd) - 1);
		if (n <= 0)
			break; /* the driver is gone: stop */
		cmd[n] = '\0';
		struct xp_sock_server_stats st;
		xp_sock_server_read(s, &st);
		if (!strncmp(cmd, "stats", 5)) {
			struct side_mem m = side_mem(getpid(), 0);
			reply(fd, "%llu %llu %llu %ld %ld %u\n", (unsigned long long)st.accepted,
			      (unsigned long long)st.open_now, (unsigned long long)(st.closed + st.resets), m.rss_kb,
			      m.pss_kb, m.procs);
		} else {
			break;
		}
	}
	double t = xp_now();
	xp_sock_server_stop(s);
	reply(fd, "%.3f\n", xp_now() - t);
	_exit(0);
}

static int ask(int fd, const char *cmd, char *ans, size_t len)
{
	if (write(fd, cmd, strlen(cmd)) != (ssize_t)strlen(cmd))
		return -1;
	ssize_t n = read(fd, ans, len - 1);
	if (n <= 0)
		return -1;
	ans[n] = '\0';
	return 0;
}

/* ---- the driver (client side) ---------------------------------------------- */

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: %s CLIENT_NS SERVER_NS SERVER_ADDR PORT_LO:PORT_HI PARALLEL BIND_ADDR...\n",
			argv[0]);
		return 2;
	}
	unsigned lo, hi;
	if (sscanf(argv[4], "%u:%u", &lo, &hi) != 2)
		return 2;
	unsigned parallel = (unsigned)atoi(argv[5]);
	struct xp_engine_cfg ec;
	memset(&ec, 0, sizeof(ec));
	ec.kind = XP_TEST_HOLD;
	if (xp_addr_parse(argv[3], &ec.server))
		return 2;
	ec.dport_lo = (uint16_t)lo;
	ec.dport_hi = (uint16_t)hi;
	ec.parallel = parallel;
	ec.max_seconds = 600;
	ec.debug = 1;
	for (int i = 6; i < argc && ec.nbind < XP_MAX_BIND; i++)
		if (xp_addr_parse(argv[i], &ec.bind[ec.nbind++]))
			return 2;

	setvbuf(stdout, NULL, _IOLBF, 0); /* progress lines as they happen, even into a file */
	long slab0 = meminfo_kb("Slab"), used0 = used_kb(), unrec0 = meminfo_kb("SUnreclaim");
	static struct slabs sl0, sl1;
	read_slabs(&sl0);
	int sp[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp))
		return 1;
	pid_t spid = fork();
	if (spid == 0) {
		close(sp[0]);
		server_main(sp[1], argv[2], (uint16_t)lo, (uint16_t)hi, parallel);
	}
	close(sp[1]);
	char ans[512], err[256];
	ssize_t n = read(sp[0], ans, sizeof(ans) - 1);
	if (n <= 0 || strncmp(ans, "ok", 2)) {
		fprintf(stderr, "server: %.*s", n > 0 ? (int)n : 0, ans);
		return 1;
	}
	ans[n] = '\0';
	long srss0, spss0;
	sscanf(ans + 3, "%ld %ld", &srss0, &spss0);

	if (join_netns(argv[1]))
		return 1;
	struct side_mem c0 = side_mem(getpid(), spid); /* the server process is our child too */
	struct xp_engine *e;
	if (xp_engine_socket.create(&ec, &e, err, sizeof(err)) || xp_engine_socket.start(e, err, sizeof(err))) {
		fprintf(stderr, "client: %s\n", err);
		return 1;
	}
	double t0 = xp_now(), ramp = -1, next = 1;
	struct xp_engine_stats st;
	unsigned long long sacc = 0, sopen = 0, sgone = 0;
	long srss = 0, spss = 0;
	unsigned sprocs = 0;
	/* Ramp: until the client holds them all (at most 120 s), then until the server has them too. */
	while (xp_now() - t0 < 120) {
		xp_sleep(0.01);
		xp_engine_socket.read(e, &st);
		if (ramp < 0 && st.open_now >= parallel)
			ramp = xp_now() - t0;
		if (xp_now() - t0 >= next || ramp >= 0) {
			if (ask(sp[0], "stats\n", ans, sizeof(ans)) ||
			    sscanf(ans, "%llu %llu %llu %ld %ld %u", &sacc, &sopen, &sgone, &srss, &spss, &sprocs) != 6)
				return 1;
			printf("%5.1f s  client open %6llu ok %6llu fail %llu timeout %llu | server accepted %6llu open %6llu\n",
			       xp_now() - t0, (unsigned long long)st.open_now, (unsigned long long)st.conn_ok,
			       (unsigned long long)st.conn_fail, (unsigned long long)st.conn_timeout, sacc, sopen);
			fflush(stdout);
			next += 1;
			if (ramp >= 0 && sopen >= parallel)
				break;
		}
	}
	/* Let stragglers (accept queues, lazily freed memory) settle, then measure. */
	xp_sleep(2.0);
	xp_engine_socket.read(e, &st);
	if (ask(sp[0], "stats\n", ans, sizeof(ans)) ||
	    sscanf(ans, "%llu %llu %llu %ld %ld %u", &sacc, &sopen, &sgone, &srss, &spss, &sprocs) != 6)
		return 1;
	struct side_mem c1 = side_mem(getpid(), spid);
	long slab1 = meminfo_kb("Slab"), used1 = used_kb(), unrec1 = meminfo_kb("SUnreclaim");
	read_slabs(&sl1);
	double P = parallel;
	printf("\nramp to %u: %.3f s\n", parallel, ramp);
	printf("open_now: client %llu (ok %llu fail %llu timeout %llu reset %llu), server %llu (accepted %llu)\n",
	       (unsigned long long)st.open_now, (unsigned long long)st.conn_ok, (unsigned long long)st.conn_fail,
	       (unsigned long long)st.conn_timeout, (unsigned long long)st.conn_reset, sopen, sacc);
	printf("client user space: %u processes, RSS %ld KiB = %.0f B/conn (PSS %ld KiB = %.0f B/conn); "
	       "before start: RSS %ld KiB\n",
	       c1.procs, c1.rss_kb, c1.rss_kb * 1024.0 / P, c1.pss_kb, c1.pss_kb * 1024.0 / P, c0.rss_kb);
	printf("server user space: %u processes, RSS %ld KiB = %.0f B/conn (PSS %ld KiB = %.0f B/conn); "
	       "before start: RSS %ld KiB\n",
	       sprocs, srss, srss * 1024.0 / P, spss, spss * 1024.0 / P, srss0);
	printf("kernel: Slab +%ld KiB = %.0f B/conn (client + server socket; of which SUnreclaim +%.0f B/conn); "
	       "used +%ld KiB = %.0f B/conn (free(1): both sides, user + kernel, without reclaimable slab)\n",
	       slab1 - slab0, (slab1 - slab0) * 1024.0 / P, (unrec1 - unrec0) * 1024.0 / P, used1 - used0,
	       (used1 - used0) * 1024.0 / P);
	print_slab_growth(&sl0, &sl1, P);

	double t = xp_now();
	xp_engine_socket.stop(e);
	double cstop = xp_now() - t;
	xp_engine_socket.read(e, &st);
	printf("client stop(): %.3f s; after: open %llu closed %llu (ok %llu)\n", cstop,
	       (unsigned long long)st.open_now, (unsigned long long)st.conn_closed, (unsigned long long)st.conn_ok);
	t = xp_now();
	do {
		xp_sleep(0.01);
		if (ask(sp[0], "stats\n", ans, sizeof(ans)) ||
		    sscanf(ans, "%llu %llu %llu %ld %ld %u", &sacc, &sopen, &sgone, &srss, &spss, &sprocs) != 6)
			return 1;
	} while (sopen && xp_now() - t < 10);
	printf("server saw all closed after %.3f s (open %llu)\n", xp_now() - t, sopen);
	if (ask(sp[0], "stop\n", ans, sizeof(ans)))
		return 1;
	printf("server stop: %.3f s\n", atof(ans));
	xp_engine_socket.destroy(e);
	waitpid(spid, NULL, 0);
	return 0;
}
