/*
 * connloop: the connections/s baseline for scripts/bench.sh. A plain blocking
 * connect/close loop, the way a user would write one, with the same
 * parallelism as `xdpperf -x -P N`: N threads, each doing
 *
 *     fd = socket(); connect(fd, ADDR:port); close(fd);
 *
 * in a loop for SECS seconds, the destination port going round robin over
 * the range. close() is plain (no SO_LINGER) by default: the client is the
 * active closer and keeps a TIME_WAIT socket per connection, as such a loop
 * does. -R closes the way xdpperf -x does, with a reset (SO_LINGER 0, no
 * TIME_WAIT), and -a pins thread i to the i-th allowed CPU, round robin, as
 * xdpperf pins its workers: with both, the loop pays what xdpperf pays.
 * Built by make (build/tests/tools/connloop):
 *
 *   build/tests/tools/connloop [-R] [-a] [-P N] [-t SECS] [-p PORT[:PORT]] ADDR
 *
 * Prints one line: connections=N seconds=S cps=X (connections established
 * before the deadline, the time from start to deadline, their ratio) and,
 * on stderr, the failures if there were any. Exit status: 0 ok, 1 no
 * connection succeeded, 2 usage error.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static struct sockaddr_storage g_addr;
static socklen_t g_addrlen;
static int g_family;
static unsigned g_port_lo = 63000, g_port_hi = 63015;
static double g_deadline;
static atomic_bool g_stop;
static bool g_reset, g_pin;

struct worker {
	pthread_t tid;
	unsigned idx;
	unsigned long ok, fail;
	int first_errno;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void set_port(struct sockaddr_storage *sa, unsigned port)
{
	if (sa->ss_family == AF_INET)
		((struct sockaddr_in *)sa)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)sa)->sin6_port = htons(port);
}

static void *loop(void *arg)
{
	struct worker *w = arg;
	struct sockaddr_storage sa = g_addr;
	unsigned nports = g_port_hi - g_port_lo + 1;
	unsigned k = w->idx % nports;
	/* A connect that hangs (SYNs dropped) gives up after a second instead of
	 * the kernel's two minutes, so the loop still ends on time. */
	struct timeval tmo = { .tv_sec = 1 };

	while (!atomic_load_explicit(&g_stop, memory_order_relaxed)) {
		set_port(&sa, g_port_lo + k);
		k = (k + 1) % nports;
		int fd = socket(g_family, SOCK_STREAM, 0);
		if (fd < 0) {
			if (!w->first_errno)
				w->first_errno = errno;
			w->fail++;
			usleep(1000);
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tmo, sizeof(tmo));
		if (g_reset) {
			struct linger lg = { .l_onoff = 1, .l_linger = 0 };
			setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		}
		int r = connect(fd, (struct sockaddr *)&sa, g_addrlen);
		int err = errno;
		close(fd);
		/* Count what completed before the deadline, like the timed test. */
		if (now() > g_deadline)
			break;
		if (r == 0) {
			w->ok++;
		} else {
			if (!w->first_errno)
				w->first_errno = err;
			w->fail++;
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: connloop [-R] [-a] [-P N] [-t SECS] [-p PORT[:PORT]] ADDR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned parallel = 1;
	double secs = 10;
	int o;
	while ((o = getopt(argc, argv, "RaP:t:p:h")) != -1) {
		char *end;
		switch (o) {
		case 'R':
			g_reset = true;
			break;
		case 'a':
			g_pin = true;
			break;
		case 'P':
			parallel = strtoul(optarg, &end, 10);
			if (*end || !parallel || parallel > 100000)
				usage();
			break;
		case 't':
			secs = strtod(optarg, &end);
			if (*end || !(secs > 0))
				usage();
			break;
		case 'p':
			g_port_lo = strtoul(optarg, &end, 10);
			g_port_hi = g_port_lo;
			if (*end == ':')
				g_port_hi = strtoul(end + 1, &end, 10);
			if (*end || !g_port_lo || g_port_hi > 65535 || g_port_lo > g_port_hi)
				usage();
			break;
		default:
			usage();
		}
	}
	if (optind != argc - 1)
		usage();

	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int r = getaddrinfo(argv[optind], NULL, &hints, &ai);
	if (r) {
		fprintf(stderr, "connloop: %s: %s\n", argv[optind], gai_strerror(r));
		return 2;
	}
	memcpy(&g_addr, ai->ai_addr, ai->ai_addrlen);
	g_addrlen = ai->ai_addrlen;
	g_family = ai->ai_family;
	freeaddrinfo(ai);

	struct worker *w = calloc(parallel, sizeof(*w));
	if (!w) {
		perror("connloop: calloc");
		return 1;
	}
	double t0 = now();
	g_deadline = t0 + secs;
	unsigned started = 0, ncpu = 0;
	int cpus[CPU_SETSIZE];
	cpu_set_t allowed;
	if (g_pin && !sched_getaffinity(0, sizeof(allowed), &allowed))
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &allowed))
				cpus[ncpu++] = c;
	for (unsigned i = 0; i < parallel; i++) {
		pthread_attr_t attr;
		pthread_attr_init(&attr);
		if (ncpu) {
			cpu_set_t one;
			CPU_ZERO(&one);
			CPU_SET(cpus[i % ncpu], &one);
			pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		}
		w[i].idx = i;
		int cr = pthread_create(&w[i].tid, &attr, loop, &w[i]);
		pthread_attr_destroy(&attr);
		if (cr) {
			fprintf(stderr, "connloop: only %u threads started\n", started);
			break;
		}
		started++;
	}
	while (now() < g_deadline) {
		double left = g_deadline - now();
		usleep(left > 0.05 ? 50000 : (useconds_t)(left * 1e6) + 1);
	}
	atomic_store(&g_stop, true);

	unsigned long ok = 0, fail = 0;
	int first_errno = 0;
	for (unsigned i = 0; i < started; i++) {
		pthread_join(w[i].tid, NULL);
		ok += w[i].ok;
		fail += w[i].fail;
		if (!first_errno)
			first_errno = w[i].first_errno;
	}
	if (fail)
		fprintf(stderr, "connloop: %lu connects failed (first: %s)\n", fail, strerror(first_errno));
	printf("connections=%lu seconds=%.3f cps=%.1f\n", ok, secs, ok / secs);
	free(w);
	return ok ? 0 : 1;
}
