/*
 * Socket-test listeners. Each of `threads` event-loop threads owns one
 * listener per port, all in one SO_REUSEPORT group per port, so the kernel
 * spreads new connections over the threads by 4-tuple hash and no accept
 * lock is shared. Listeners are dual-stack IPv6 sockets (one socket serves
 * IPv4 and IPv6 clients). Accepted connections are non-blocking and stay on
 * their thread's epoll: data is read and discarded, EOF or an error closes
 * them, and idle (held) connections cost nothing but kernel memory.
 *
 * Past the open-file limit the threads are spread over worker processes
 * (sock_proc.c). Each worker opens its own listeners on every port, in the
 * same SO_REUSEPORT group (same user): the kernel spreads connections over
 * all listeners of the group, across processes too. That hash is not
 * load-aware, so each process is planned for 25 % more than its share.
 * Counters and the stop flag are in a MAP_SHARED array, summed as before.
 */
#include "server/listeners.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/workers.h"
#include "net/sockutil.h"
#include "util/time.h"

/* The kernel caps the backlog at net.core.somaxconn (4096 by default since
 * 5.4). We deliberately do not change sysctls from here; raise it by hand
 * for connection-rate tests beyond what that queue absorbs. */
#define BACKLOG 4096
#define RX_BUF (256 * 1024)
#define EV_BATCH 256
#define ACCEPTS_PER_EVENT 64   /* then serve other events: fairness */
#define READS_PER_EVENT 8      /* 2 MiB per readable event at most */
#define MAX_WAIT_MS 100
#define EMFILE_PAUSE 0.01      /* out of descriptors: stop accepting this long */
#define REUSEPORT_HEADROOM 1.25 /* per worker process: its share of max_conns plus 25 % */

struct srv_conn {
	int fd;
	bool listener;
	struct srv_conn *prev, *next; /* the thread's list of accepted connections */
};

/* Written by the owning thread only, read by xp_sock_server_read() (relaxed);
 * each on its own cache line: no false sharing. */
struct srv_stats {
	uint64_t accepted, closed, resets, open, bytes;
} __attribute__((aligned(64)));

/* Shared with the worker processes (MAP_SHARED) when there are any. */
struct srv_shared {
	int stop;              /* set by stop(): every loop in every process ends */
	struct srv_stats st[]; /* one per event-loop thread, over all processes */
};

struct srv_worker {
	struct xp_sock_server *srv;
	int cpu;
	int epfd;
	struct srv_conn *listeners; /* one per port */
	struct srv_conn *conns;     /* accepted, doubly linked */
	char *buf;
	double paused_until;        /* > 0: listeners disabled after EMFILE */
	bool emfile_told;
	pthread_t thread;
	bool running;
	struct srv_stats *st;       /* &srv->sh->st[this thread] */
};

struct xp_sock_server {
	struct xp_sock_server_cfg cfg;
	unsigned nports, nw;       /* nw: threads over all processes */
	unsigned nproc, tpp;       /* worker processes (1: none, all here), threads in each */
	unsigned long fd_limit;    /* XDPPERF_FD_LIMIT for the workers, 0 if not forced */
	unsigned long capacity;    /* connections it has room for (xp_sock_server_capacity) */
	struct xp_procs *procs;    /* the workers while they run */
	int family;
	int stopfd;                /* eventfd in every thread's epoll: wakes them on stop */
	struct srv_shared *sh;     /* stop flag and counters */
	size_t shsize;
	struct srv_worker *w;
};

static inline void bump(uint64_t *c, int64_t d)
{
	__atomic_store_n(c, *c + (uint64_t)d, __ATOMIC_RELAXED);
}

/* ---- listeners ------------------------------------------------------------ */

/* A socket bound to [::]:port (or 0.0.0.0:port); reuseport for the real listeners. */
static int bind_port(int family, uint16_t port, bool reuseport)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return -1;
	int one = 1, zero = 0;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (reuseport)
		setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
	struct sockaddr_storage ss;
	memset(&ss, 0, sizeof(ss));
	socklen_t len;
	if (family == AF_INET6) {
		/* Dual stack even where net.ipv6.bindv6only=1. */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
		a->sin6_family = AF_INET6;
		a->sin6_addr = in6addr_any;
		a->sin6_port = htons(port);
		len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)&ss;
		a->sin_family = AF_INET;
		a->sin_addr.s_addr = htonl(INADDR_ANY);
		a->sin_port = htons(port);
		len = sizeof(*a);
	}
	if (bind(fd, (struct sockaddr *)&ss, len)) {
		int eno = errno;
		close(fd);
		errno = eno;
		return -1;
	}
	return fd;
}

/* Every listener of one thread becomes readable or not at once. */
static void listeners_enable(struct srv_worker *w, bool on)
{
	for (unsigned p = 0; p < w->srv->nports; p++) {
		struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.ptr = &w->listeners[p] };
		epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->listeners[p].fd, &ev);
	}
}

/* ---- connections ---------------------------------------------------------- */

static void conn_close(struct srv_worker *w, struct srv_conn *c, bool reset)
{
	bump(reset ? &w->st->resets : &w->st->closed, 1);
	bump(&w->st->open, -1);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	close(c->fd);
	free(c);
}

static void do_accept(struct srv_worker *w, struct srv_conn *l)
{
	for (int k = 0; k < ACCEPTS_PER_EVENT; k++) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
				/* The connection stays queued and the level-triggered
				 * listener would wake us forever: mute the listeners a
				 * moment instead of spinning. */
				if (w->srv->cfg.debug && !w->emfile_told)
					fprintf(stderr, "socket server: cannot accept: %s (pausing)\n",
						strerror(errno));
				w->emfile_told = true;
				w->paused_until = xp_now() + EMFILE_PAUSE;
				listeners_enable(w, false);
			}
			/* EAGAIN, or ECONNABORTED & co (that one is gone): next event. */
			return;
		}
		struct srv_conn *c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			return;
		}
		c->fd = fd;
		c->listener = false;
		c->prev = NULL;
		c->next = w->conns;
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.ptr = c };
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		if (w->conns)
			w->conns->prev = c;
		w->conns = c;
		bump(&w->st->accepted, 1);
		bump(&w->st->open, 1);
	}
}

static void do_read(struct srv_worker *w, struct srv_conn *c)
{
	for (int k = 0; k < READS_PER_EVENT; k++) {
		ssize_t n = recv(c->fd, w->buf, RX_BUF, MSG_DONTWAIT);
		if (n > 0) {
			bump(&w->st->bytes, n);
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		conn_close(w, c, n < 0 && errno == ECONNRESET);
		return;
	}
}

/* ---- threads -------------------------------------------------------------- */

static void *srv_main(void *arg)
{
	struct srv_worker *w = arg;
	struct xp_sock_server *s = w->srv;
	struct epoll_event evs[EV_BATCH];

	while (!__atomic_load_n(&s->sh->stop, __ATOMIC_RELAXED)) {
		int to = MAX_WAIT_MS;
		if (w->paused_until > 0) {
			double left = w->paused_until - xp_now();
			if (left <= 0) {
				w->paused_until = 0;
				listeners_enable(w, true);
			} else {
				to = (int)(left * 1e3) + 1;
			}
		}
		int n = epoll_wait(w->epfd, evs, EV_BATCH, to);
		if (n < 0 && errno != EINTR)
			break;
		for (int k = 0; k < n; k++) {
			struct srv_conn *c = evs[k].data.ptr;
			if (!c)
				continue; /* the stop eventfd */
			if (c->listener)
				do_accept(w, c);
			else
				do_read(w, c);
		}
	}
	/* Listeners first (no more accepts), then everything we hold. The epoll
	 * goes before the sockets so each close skips its epoll unlink. */
	close(w->epfd);
	w->epfd = -1;
	for (unsigned p = 0; p < s->nports; p++) {
		close(w->listeners[p].fd);
		w->listeners[p].fd = -1;
	}
	while (w->conns)
		conn_close(w, w->conns, false);
	return NULL;
}

static void free_server(struct xp_sock_server *s)
{
	if (s->w) {
		for (unsigned t = 0; t < s->nw; t++) {
			struct srv_worker *w = &s->w[t];
			if (w->listeners)
				for (unsigned p = 0; p < s->nports; p++)
					if (w->listeners[p].fd >= 0)
						close(w->listeners[p].fd);
			while (w->conns)
				conn_close(w, w->conns, false);
			if (w->epfd >= 0)
				close(w->epfd);
			free(w->listeners);
			free(w->buf);
		}
	}
	if (s->stopfd >= 0)
		close(s->stopfd);
	free(s->w);
	xp_shm_free(s->sh, s->shsize); /* last: conn_close above still counts into it */
	free(s);
}

static void tell_stop(void *arg)
{
	struct xp_sock_server *s = arg;
	__atomic_store_n(&s->sh->stop, 1, __ATOMIC_RELAXED);
	uint64_t one = 1;
	if (write(s->stopfd, &one, sizeof(one)) < 0) {
		/* cannot fail on a fresh eventfd; the loops also poll the flag */
	}
}

static void part_join(struct xp_sock_server *s, unsigned lo, unsigned hi)
{
	for (unsigned t = lo; t < hi; t++) {
		if (s->w[t].running)
			pthread_join(s->w[t].thread, NULL);
		s->w[t].running = false;
	}
}

void xp_sock_server_stop(struct xp_sock_server *s)
{
	if (!s)
		return;
	tell_stop(s);
	xp_procs_stop(s->procs); /* reaps the workers: their counters are final after this */
	s->procs = NULL;
	part_join(s, 0, s->nw);  /* the in-process threads, if any */
	free_server(s);
}

/* Set up thread t's epoll and its listener on every port. */
static int worker_setup(struct xp_sock_server *s, struct srv_worker *w, char *err, size_t errlen)
{
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	w->buf = malloc(RX_BUF);
	w->listeners = calloc(s->nports, sizeof(*w->listeners));
	if (w->epfd < 0 || !w->buf || !w->listeners) {
		snprintf(err, errlen, "socket server: out of memory or descriptors (%s)", strerror(errno));
		return -1;
	}
	for (unsigned p = 0; p < s->nports; p++)
		w->listeners[p].fd = -1;
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = NULL };
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s->stopfd, &ev)) {
		snprintf(err, errlen, "socket server: epoll: %s", strerror(errno));
		return -1;
	}
	for (unsigned p = 0; p < s->nports; p++) {
		uint16_t port = (uint16_t)(s->cfg.port_lo + p);
		struct srv_conn *l = &w->listeners[p];
		l->listener = true;
		l->fd = bind_port(s->family, port, true);
		if (l->fd < 0 || listen(l->fd, BACKLOG)) {
			snprintf(err, errlen, "cannot listen on port %u: %s", port, strerror(errno));
			return -1;
		}
		ev = (struct epoll_event){ .events = EPOLLIN, .data.ptr = l };
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, l->fd, &ev)) {
			snprintf(err, errlen, "socket server: epoll: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* Listeners and threads for threads [lo, hi), in the process that runs them. */
static int part_setup(struct xp_sock_server *s, unsigned lo, unsigned hi, char *err, size_t errlen)
{
	for (unsigned t = lo; t < hi; t++)
		if (worker_setup(s, &s->w[t], err, errlen))
			return -1;
	for (unsigned t = lo; t < hi; t++) {
		struct srv_worker *w = &s->w[t];
		pthread_attr_t attr;
		cpu_set_t set;
		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		int r = pthread_create(&w->thread, &attr, srv_main, w);
		pthread_attr_destroy(&attr);
		if (r) {
			snprintf(err, errlen, "cannot start socket server thread: %s", strerror(r));
			return -1;
		}
		w->running = true;
	}
	return 0;
}

/* Worker process idx runs threads [idx * tpp, (idx + 1) * tpp). */
static void part_range(const struct xp_sock_server *s, unsigned idx, unsigned *lo, unsigned *hi)
{
	*lo = idx * s->tpp < s->nw ? idx * s->tpp : s->nw;
	*hi = *lo + s->tpp < s->nw ? *lo + s->tpp : s->nw;
}

static int proc_setup(void *arg, unsigned idx, char *err, size_t errlen)
{
	struct xp_sock_server *s = arg;
	unsigned lo, hi;
	part_range(s, idx, &lo, &hi);
	/* On failure the worker exits: its threads and listeners go with it. */
	return part_setup(s, lo, hi, err, errlen);
}

static void proc_wait(void *arg, unsigned idx)
{
	struct xp_sock_server *s = arg;
	unsigned lo, hi;
	part_range(s, idx, &lo, &hi);
	part_join(s, lo, hi);
}

/* Anything a worker's threads count moves while it works or closes. */
static unsigned long long proc_progress(void *arg, unsigned idx)
{
	struct xp_sock_server *s = arg;
	unsigned lo, hi;
	unsigned long long n = 0;
	part_range(s, idx, &lo, &hi);
	for (unsigned t = lo; t < hi; t++) {
		const struct srv_stats *w = &s->sh->st[t];
		n += __atomic_load_n(&w->accepted, __ATOMIC_RELAXED) + __atomic_load_n(&w->closed, __ATOMIC_RELAXED) +
		     __atomic_load_n(&w->resets, __ATOMIC_RELAXED);
	}
	return n;
}

/* A worker died before closing everything: its exit closed the rest. */
static void proc_lost(void *arg, unsigned idx)
{
	struct xp_sock_server *s = arg;
	unsigned lo, hi;
	part_range(s, idx, &lo, &hi);
	for (unsigned t = lo; t < hi; t++) {
		struct srv_stats *w = &s->sh->st[t];
		__atomic_store_n(&w->closed, w->closed + w->open, __ATOMIC_RELAXED);
		__atomic_store_n(&w->open, 0, __ATOMIC_RELAXED);
	}
}

static const struct xp_proc_ops proc_ops = {
	.name = "xp-srv",
	.setup = proc_setup,
	.wait = proc_wait,
	.tell_stop = tell_stop,
	.progress = proc_progress,
	.lost = proc_lost,
};

int xp_sock_server_start(const struct xp_sock_server_cfg *c, struct xp_sock_server **out, char *err,
			 size_t errlen)
{
	if (!c->port_lo || c->port_lo > c->port_hi) {
		snprintf(err, errlen, "socket server: bad port range %u-%u", c->port_lo, c->port_hi);
		return -1;
	}
	int cpus[CPU_SETSIZE];
	int ncpu = xp_allowed_cpus(cpus, CPU_SETSIZE);
	unsigned threads = c->threads ? c->threads : (unsigned)ncpu;
	unsigned nports = (unsigned)c->port_hi - c->port_lo + 1;

	/* A descriptor per connection and per listener (one per port and
	 * thread), plus a margin; beyond one process's limit, several. */
	char lim[200];
	struct xp_fd_need need = { .conns = c->max_conns, .headroom = REUSEPORT_HEADROOM, .per_thread = nports,
				   .threads = threads };
	struct xp_fd_plan plan;
	if (xp_fd_plan(&need, &plan, lim, sizeof(lim))) {
		snprintf(err, errlen, "the socket server (%lu connections, %u listeners) %s", c->max_conns,
			 threads * nports, lim);
		return -1;
	}

	struct xp_sock_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "socket server: out of memory");
		return -1;
	}
	s->cfg = *c;
	s->nproc = plan.nproc;
	s->tpp = plan.threads_per_proc;
	s->nw = s->nproc * s->tpp;
	s->fd_limit = plan.forced;
	s->nports = nports;
	/* Each process: its open-file limit less its listeners and the margin. */
	unsigned long per_proc = plan.limit > (unsigned long)s->tpp * nports + XP_NOFILE_MARGIN
					 ? plan.limit - (unsigned long)s->tpp * nports - XP_NOFILE_MARGIN : 0;
	s->capacity = per_proc * s->nproc;
	if (s->capacity < c->max_conns)
		s->capacity = c->max_conns;
	if (c->debug && s->nproc > 1)
		fprintf(stderr, "socket server: %lu connections over %u processes x %u threads (open-file limit %lu)\n",
			c->max_conns, s->nproc, s->tpp, plan.limit);
	s->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->w = calloc(s->nw, sizeof(*s->w));
	s->shsize = sizeof(*s->sh) + s->nw * sizeof(struct srv_stats);
	s->sh = xp_shm_alloc(s->shsize, s->nproc > 1);
	if (s->stopfd < 0 || !s->w || !s->sh) {
		snprintf(err, errlen, "socket server: out of memory or descriptors");
		free_server(s);
		return -1;
	}
	for (unsigned t = 0; t < s->nw; t++) {
		s->w[t].srv = s;
		s->w[t].epfd = -1;
		s->w[t].cpu = cpus[t % (unsigned)ncpu];
		s->w[t].st = &s->sh->st[t];
	}

	/* Dual-stack IPv6 where the host has IPv6, plain IPv4 otherwise. */
	s->family = AF_INET6;
	int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		s->family = AF_INET;
	else
		close(probe);

	/* SO_REUSEPORT would silently join another listener of the same user
	 * (say, a second xdpperf) and split its connections with it. Binding
	 * each port once without it first turns that into a clear error. */
	for (unsigned p = 0; p < nports; p++) {
		uint16_t port = (uint16_t)(c->port_lo + p);
		int fd = bind_port(s->family, port, false);
		if (fd < 0) {
			snprintf(err, errlen, "cannot listen on port %u: %s", port, strerror(errno));
			free_server(s);
			return -1;
		}
		close(fd);
	}
	if (s->nproc == 1) {
		if (part_setup(s, 0, s->nw, err, errlen)) {
			xp_sock_server_stop(s);
			return -1;
		}
	} else {
		int keep[] = { s->stopfd };
		if (xp_procs_start(&s->procs, s->nproc, &proc_ops, s, keep, 1, s->fd_limit, err, errlen)) {
			free_server(s);
			return -1;
		}
	}
	*out = s;
	return 0;
}

unsigned long xp_sock_server_capacity(const struct xp_sock_server *s)
{
	return s->capacity;
}

void xp_sock_server_read(struct xp_sock_server *s, struct xp_sock_server_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned t = 0; t < s->nw; t++) {
		const struct srv_stats *w = &s->sh->st[t];
		st->accepted += __atomic_load_n(&w->accepted, __ATOMIC_RELAXED);
		st->closed += __atomic_load_n(&w->closed, __ATOMIC_RELAXED);
		st->resets += __atomic_load_n(&w->resets, __ATOMIC_RELAXED);
		st->open_now += __atomic_load_n(&w->open, __ATOMIC_RELAXED);
		st->bytes_rx += __atomic_load_n(&w->bytes, __ATOMIC_RELAXED);
	}
}
