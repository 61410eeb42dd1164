/*
 * Socket-test listeners. Each of `threads` event-loop threads owns one
 * listener per port, all in one SO_REUSEPORT group per port, so the kernel
 * spreads new connections over the threads by 4-tuple hash and no accept
 * lock is shared. Listeners are dual-stack IPv6 sockets (one socket serves
 * IPv4 and IPv6 clients). Accepted connections are non-blocking and stay on
 * their thread's epoll: data is read and discarded, EOF or an error closes
 * them, and idle (held) connections cost nothing but kernel memory.
 *
 * A late reader for fast streams (SO_RCVLOWAT). A connection that delivers
 * at least LOWAT_PROMOTE x its low-water mark within one sweep window
 * (SWEEP_S) gets SO_RCVLOWAT raised (cfg.rcvlowat, XP_SOCK_RCVLOWAT by
 * default), so epoll wakes its reader only when that much waits (or at FIN,
 * an error, or when the kernel sees its window or memory run out). Measured
 * in the routed veth lab, xdpperf -P 4 against the same server reading at
 * once: +9.5 % median over 20 paired rounds with 256 KiB (512 KiB and 1 MiB
 * gained less); as built here, +12.5 % median over 40 paired rounds (ahead
 * in 30). It also makes the kernel ACK sooner: while less than the mark is
 * unread, a second full segment is ACKed at once (__tcp_ack_snd_check), and
 * the server sent 4.8-6.9 segments per MB received instead of 3.0-3.8
 * (nstat TcpOutSegs). So that nothing is held late, every SWEEP_S the
 * thread reads what waits on each such connection regardless of the mark,
 * and one that delivered less than its mark in that window (a slow or
 * paused stream) goes back to SO_RCVLOWAT 1: a byte is read at the latest
 * one sweep after it arrived. Slow streams, held and connection-rate connections never reach
 * the threshold: they are read as they arrive, as before, and the sweep
 * walks only the raised connections.
 *
 * Past the open-file limit the threads are spread over worker processes
 * (struct xp_group, engine/workers.h). Each worker opens its own listeners on every port, in the
 * same SO_REUSEPORT group (same user): the kernel spreads connections over
 * all listeners of the group, across processes too. That hash is not
 * load-aware, so each process is planned for 25 % more than its share.
 * Counters and the stop flag are in MAP_SHARED memory, summed as before.
 */
#include "server/listeners.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "engine/workers.h"
#include "util/cpus.h"
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
#define SWEEP_S 0.1            /* read every raised connection at least this often */
#define LOWAT_PROMOTE 4        /* raise after this many marks' worth in one sweep window */
#define REUSEPORT_HEADROOM 1.25 /* per worker process: its share of max_conns plus 25 % */

struct srv_conn {
	int fd;
	bool listener;
	bool lowat_tried;             /* raising failed once: read it as it arrives */
	int lowat;                    /* SO_RCVLOWAT as read back (0: not raised, the kernel's 1) */
	unsigned epoch;               /* the sweep window win_bytes counts in */
	uint64_t win_bytes;           /* read in that window */
	struct srv_conn *prev, *next; /* the thread's list of accepted connections */
	struct srv_conn *fprev, *fnext; /* the thread's list of raised ones (lowat > 0) */
};

/* Written by the owning thread only, read by xp_sock_server_read() (relaxed);
 * each on its own cache line: no false sharing. The group keeps them, shared
 * with the worker processes when there are any. */
struct srv_stats {
	uint64_t accepted, closed, resets, open, bytes;
} __attribute__((aligned(64)));

struct srv_worker {
	struct xp_sock_server *srv;
	int epfd;
	struct srv_conn *listeners; /* one per port */
	struct srv_conn *conns;     /* accepted, doubly linked */
	struct srv_conn *fast;      /* of them, those with SO_RCVLOWAT raised */
	unsigned epoch;             /* sweeps so far: the windows of win_bytes */
	double next_sweep;
	uint64_t raised, lowered;   /* for --debug: how often a mark went up and down */
	char *buf;
	double paused_until;        /* > 0: listeners disabled after EMFILE */
	bool emfile_told;
	struct srv_stats *st;       /* xp_group_stats(&srv->grp, this thread) */
};

struct xp_sock_server {
	struct xp_sock_server_cfg cfg;
	unsigned nports;
	struct xp_group grp;       /* the threads (grp.n over all processes), workers, stop, counters */
	unsigned long capacity;    /* connections it has room for (xp_sock_server_capacity) */
	int family;
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

static void fast_unlink(struct srv_worker *w, struct srv_conn *c)
{
	if (c->fprev)
		c->fprev->fnext = c->fnext;
	else
		w->fast = c->fnext;
	if (c->fnext)
		c->fnext->fprev = c->fprev;
	c->fprev = c->fnext = NULL;
}

static void conn_close(struct srv_worker *w, struct srv_conn *c, bool reset)
{
	bump(reset ? &w->st->resets : &w->st->closed, 1);
	bump(&w->st->open, -1);
	if (c->lowat)
		fast_unlink(w, c);
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
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->listener = false;
		c->epoch = w->epoch;
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

/* Raise c's low-water mark. The kernel caps it at half of what the receive
 * buffer may grow to (tcp_rmem[2], or SO_RCVBUF when set) and grows the
 * buffer to hold it: read both back and keep what it took. */
static void lowat_raise(struct srv_worker *w, struct srv_conn *c)
{
	int v = (int)w->srv->cfg.rcvlowat, got = 0, rb = 0;
	socklen_t l = sizeof(got), lb = sizeof(rb);
	c->lowat_tried = true;
	if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof(v)))
		return;
	if (getsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &got, &l) ||
	    getsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rb, &lb) || got <= 1 || got > rb / 2) {
		/* Not seen on Linux. A mark we cannot read back would never be
		 * swept; one the buffer cannot hold twice over would leave the
		 * reader waiting on the kernel's window-full wakeup: back to 1. */
		int one = 1;
		setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
		return;
	}
	c->lowat = got;
	c->fprev = NULL;
	c->fnext = w->fast;
	if (w->fast)
		w->fast->fprev = c;
	w->fast = c;
	w->raised++;
}

static void lowat_lower(struct srv_worker *w, struct srv_conn *c)
{
	int one = 1;
	setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	fast_unlink(w, c);
	c->lowat = 0;
	c->lowat_tried = false; /* it may speed up again */
	w->lowered++;
}

/* Read what waits (a non-blocking recv returns it even below the mark).
 * false: c was closed and freed. */
static bool do_read(struct srv_worker *w, struct srv_conn *c)
{
	if (c->epoch != w->epoch) {
		c->epoch = w->epoch;
		c->win_bytes = 0;
	}
	for (int k = 0; k < READS_PER_EVENT; k++) {
		ssize_t n = recv(c->fd, w->buf, RX_BUF, MSG_DONTWAIT);
		if (n > 0) {
			bump(&w->st->bytes, n);
			c->win_bytes += (uint64_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		conn_close(w, c, n < 0 && errno == ECONNRESET);
		return false;
	}
	if (!c->lowat && !c->lowat_tried && w->srv->cfg.rcvlowat > 1 &&
	    c->win_bytes >= (uint64_t)LOWAT_PROMOTE * w->srv->cfg.rcvlowat)
		lowat_raise(w, c);
	return true;
}

/* Every SWEEP_S: read each raised connection whatever its mark, and lower the
 * mark of one that delivered less than it in the window now ending. */
static void sweep(struct srv_worker *w)
{
	struct srv_conn *c = w->fast, *next;
	for (; c; c = next) {
		next = c->fnext;
		if (!do_read(w, c))
			continue;
		if (c->win_bytes < (uint64_t)c->lowat)
			lowat_lower(w, c);
	}
	w->epoch++;
}

/* ---- threads -------------------------------------------------------------- */

static void *srv_main(void *arg)
{
	struct srv_worker *w = arg;
	struct xp_sock_server *s = w->srv;
	struct epoll_event evs[EV_BATCH];

	w->next_sweep = xp_now() + SWEEP_S;
	while (!xp_group_stopping(&s->grp)) {
		double now = xp_now();
		if (now >= w->next_sweep) {
			sweep(w);
			w->next_sweep = now + SWEEP_S;
		}
		int to = MAX_WAIT_MS;
		if (w->fast)
			to = (int)((w->next_sweep - now) * 1e3) + 1;
		if (w->paused_until > 0) {
			double left = w->paused_until - xp_now();
			if (left <= 0) {
				w->paused_until = 0;
				listeners_enable(w, true);
			} else if ((int)(left * 1e3) + 1 < to) {
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
	if (s->cfg.debug && w->raised)
		fprintf(stderr, "socket server: SO_RCVLOWAT %u raised %lu times, lowered %lu times on this thread\n",
			s->cfg.rcvlowat, (unsigned long)w->raised, (unsigned long)w->lowered);
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
		for (unsigned t = 0; t < s->grp.n; t++) {
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
	free(s->w);
	xp_group_close(&s->grp); /* last: conn_close above still counts into its counters */
	free(s);
}

void xp_sock_server_stop(struct xp_sock_server *s)
{
	if (!s)
		return;
	xp_group_stop(&s->grp); /* reaps any workers: their counters are final after this */
	free_server(s);
}

/* ---- the threads (struct xp_group runs them, here or in workers) ---------- */

/* Thread t's epoll and its listener on every port, in the process that runs it. */
static int thread_setup(void *arg, unsigned t, char *err, size_t errlen)
{
	struct xp_sock_server *s = arg;
	struct srv_worker *w = &s->w[t];
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
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, s->grp.stopfd, &ev)) {
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

static void *thread_arg(void *arg, unsigned t)
{
	struct xp_sock_server *s = arg;
	return &s->w[t];
}

/* Anything a thread counts moves while it works or closes. */
static unsigned long long thread_progress(void *arg, unsigned t)
{
	struct xp_sock_server *s = arg;
	const struct srv_stats *w = s->w[t].st;
	return __atomic_load_n(&w->accepted, __ATOMIC_RELAXED) + __atomic_load_n(&w->closed, __ATOMIC_RELAXED) +
	       __atomic_load_n(&w->resets, __ATOMIC_RELAXED);
}

/* Its worker died before closing everything: the exit closed the rest. */
static void thread_lost(void *arg, unsigned t)
{
	struct xp_sock_server *s = arg;
	struct srv_stats *w = s->w[t].st;
	__atomic_store_n(&w->closed, w->closed + w->open, __ATOMIC_RELAXED);
	__atomic_store_n(&w->open, 0, __ATOMIC_RELAXED);
}

static const struct xp_group_ops group_ops = {
	.name = "xp-srv",
	.what = "socket server thread",
	.stats_size = sizeof(struct srv_stats),
	.setup = thread_setup,
	.main = srv_main,
	.main_arg = thread_arg,
	.progress = thread_progress,
	.lost = thread_lost,
	/* Not pinned: a receiver copies out what the sender's CPU just
	 * queued, and the scheduler may run it there (iperf3's server is not
	 * pinned either). Measured in a routed veth lab, 4 streams from one
	 * blocking writer, 3 rounds: 11.9/12.7/12.7 Gbit/s with the two
	 * receivers pinned, 15.6/15.6/16.2 unpinned. */
	.unpinned = true,
};

int xp_sock_server_start(const struct xp_sock_server_cfg *c, struct xp_sock_server **out, char *err,
			 size_t errlen)
{
	if (!c->port_lo || c->port_lo > c->port_hi) {
		snprintf(err, errlen, "socket server: bad port range %u-%u", c->port_lo, c->port_hi);
		return -1;
	}
	unsigned threads = c->threads ? c->threads : (unsigned)xp_allowed_cpu_count();
	unsigned nports = (unsigned)c->port_hi - c->port_lo + 1;

	struct xp_sock_server *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "socket server: out of memory");
		return -1;
	}
	/* A descriptor per connection and per listener (one per port and
	 * thread), plus a margin; beyond one process's limit, several. */
	char lim[200];
	struct xp_fd_need need = { .conns = c->max_conns, .headroom = REUSEPORT_HEADROOM, .per_thread = nports,
				   .threads = threads };
	if (xp_group_plan(&s->grp, &need, 0, lim, sizeof(lim))) {
		snprintf(err, errlen, "the socket server (%lu connections, %u listeners) %s", c->max_conns,
			 threads * nports, lim);
		free(s);
		return -1;
	}
	if (c->cap_procs && s->grp.nproc > 1 && s->grp.nproc > c->max_procs) {
		snprintf(err, errlen,
			 "%lu connections on %u ports need %u worker processes (open-file limit %lu); the server allows %u%s (%s)",
			 c->max_conns, nports, s->grp.nproc, s->grp.limit, c->max_procs,
			 c->cap_is_total ? " more now" : "", c->cap_is_total ? "--max-workers-total" : "--max-workers");
		free(s);
		return -1;
	}
	s->cfg = *c;
	if (!s->cfg.rcvlowat)
		s->cfg.rcvlowat = XP_SOCK_RCVLOWAT;
	s->nports = nports;
	/* Each process: its open-file limit less its listeners and the margin. */
	unsigned long per_proc = s->grp.limit > (unsigned long)s->grp.tpp * nports + XP_NOFILE_MARGIN
					 ? s->grp.limit - (unsigned long)s->grp.tpp * nports - XP_NOFILE_MARGIN : 0;
	s->capacity = per_proc * s->grp.nproc;
	if (s->capacity < c->max_conns)
		s->capacity = c->max_conns;
	if (c->debug && s->grp.nproc > 1)
		fprintf(stderr, "socket server: %lu connections over %u processes x %u threads (open-file limit %lu)\n",
			c->max_conns, s->grp.nproc, s->grp.tpp, s->grp.limit);
	s->w = calloc(s->grp.n, sizeof(*s->w));
	for (unsigned t = 0; s->w && t < s->grp.n; t++)
		s->w[t].epfd = -1;
	if (!s->w || xp_group_open(&s->grp, &group_ops, s)) {
		snprintf(err, errlen, "socket server: out of memory or descriptors");
		free_server(s);
		return -1;
	}
	for (unsigned t = 0; t < s->grp.n; t++) {
		s->w[t].srv = s;
		s->w[t].st = xp_group_stats(&s->grp, t);
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
	/* Here (when one process holds it all) or in the workers after the fork. */
	if (xp_group_start(&s->grp, err, errlen)) {
		free_server(s);
		return -1;
	}
	*out = s;
	return 0;
}

unsigned long xp_sock_server_capacity(const struct xp_sock_server *s)
{
	return s->capacity;
}

unsigned xp_sock_server_procs(const struct xp_sock_server *s)
{
	return s->grp.nproc;
}

void xp_sock_server_read(struct xp_sock_server *s, struct xp_sock_server_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned t = 0; t < s->grp.n; t++) {
		const struct srv_stats *w = s->w[t].st;
		st->accepted += __atomic_load_n(&w->accepted, __ATOMIC_RELAXED);
		st->closed += __atomic_load_n(&w->closed, __ATOMIC_RELAXED);
		st->resets += __atomic_load_n(&w->resets, __ATOMIC_RELAXED);
		st->open_now += __atomic_load_n(&w->open, __ATOMIC_RELAXED);
		st->bytes_rx += __atomic_load_n(&w->bytes, __ATOMIC_RELAXED);
	}
}
