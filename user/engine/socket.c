/*
 * Kernel TCP socket engine (client side): many connections through the
 * kernel's TCP stack, for firewall tests in the style of fireperf. This file
 * is its lifecycle (create, start, stop, counters, worker processes); the
 * design and the event loop are in sock_client.h and sock_client.c.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "engine/socket_loop.h"
#include "net/sockutil.h"
#include "util/time.h"

/* ---- the threads of one process ------------------------------------------ */

/* Slots and epolls for threads [lo, hi), in the process that runs them. */
static int part_alloc(struct xp_engine *e, unsigned lo, unsigned hi, char *err, size_t errlen)
{
	for (unsigned t = lo; t < hi; t++) {
		struct sock_worker *w = &e->w[t];
		w->slots = calloc(w->nslots ? w->nslots : 1, sizeof(*w->slots)); /* calloc(0) may be NULL */
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		struct epoll_event ev = { .events = EPOLLIN, .data.u64 = STOP_TAG };
		if (!w->slots || w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, e->stopfd, &ev)) {
			snprintf(err, errlen, "socket engine: out of memory or descriptors (%s)", strerror(errno));
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < w->nslots; i++)
			w->slots[i] = (struct slot){ .fd = -1, .prev = NIL, .next = NIL, .state = ST_IDLE };
	}
	return 0;
}

static int part_run(struct xp_engine *e, unsigned lo, unsigned hi, char *err, size_t errlen)
{
	for (unsigned t = lo; t < hi; t++) {
		struct sock_worker *w = &e->w[t];
		pthread_attr_t attr;
		cpu_set_t set;
		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		/* Pinned from the first instruction: each loop's sockets then stay
		 * with one CPU's caches and softirq work. */
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		int r = pthread_create(&w->thread, &attr, xp_sock_client_loop, w);
		pthread_attr_destroy(&attr);
		if (r) {
			snprintf(err, errlen, "cannot start socket thread: %s", strerror(r));
			return -r;
		}
		w->running = true;
	}
	return 0;
}

static void part_join(struct xp_engine *e, unsigned lo, unsigned hi)
{
	for (unsigned t = lo; t < hi; t++) {
		if (e->w[t].running)
			pthread_join(e->w[t].thread, NULL);
		e->w[t].running = false;
	}
}

/* Worker process idx runs threads [idx * tpp, (idx + 1) * tpp). */
static void part_range(const struct xp_engine *e, unsigned idx, unsigned *lo, unsigned *hi)
{
	*lo = idx * e->tpp < e->nw ? idx * e->tpp : e->nw;
	*hi = *lo + e->tpp < e->nw ? *lo + e->tpp : e->nw;
}

static int proc_setup(void *arg, unsigned idx, char *err, size_t errlen)
{
	struct xp_engine *e = arg;
	unsigned lo, hi;
	part_range(e, idx, &lo, &hi);
	if (part_alloc(e, lo, hi, err, errlen) || part_run(e, lo, hi, err, errlen))
		return -1; /* the worker exits: its threads and sockets go with it */
	return 0;
}

static void proc_wait(void *arg, unsigned idx)
{
	struct xp_engine *e = arg;
	unsigned lo, hi;
	part_range(e, idx, &lo, &hi);
	part_join(e, lo, hi);
}

static void tell_stop(void *arg)
{
	struct xp_engine *e = arg;
	__atomic_store_n(&e->sh->stop, 1, __ATOMIC_RELAXED);
	uint64_t one = 1;
	if (write(e->stopfd, &one, sizeof(one)) < 0) {
		/* cannot fail on a fresh eventfd; the loops also poll the flag every 100 ms */
	}
}

/* Anything a worker's threads count moves while it works or closes. */
static unsigned long long proc_progress(void *arg, unsigned idx)
{
	struct xp_engine *e = arg;
	unsigned lo, hi;
	unsigned long long n = 0;
	part_range(e, idx, &lo, &hi);
	for (unsigned t = lo; t < hi; t++) {
		const struct wstats *s = &e->sh->st[t];
		n += __atomic_load_n(&s->ok, __ATOMIC_RELAXED) + __atomic_load_n(&s->fail, __ATOMIC_RELAXED) +
		     __atomic_load_n(&s->timeout, __ATOMIC_RELAXED) + __atomic_load_n(&s->closed, __ATOMIC_RELAXED) +
		     __atomic_load_n(&s->reset, __ATOMIC_RELAXED);
	}
	return n;
}

/* A worker died before closing everything: its exit closed the rest, so
 * they count as closed and ok == closed + reset + open_now still holds. */
static void proc_lost(void *arg, unsigned idx)
{
	struct xp_engine *e = arg;
	unsigned lo, hi;
	part_range(e, idx, &lo, &hi);
	for (unsigned t = lo; t < hi; t++) {
		struct wstats *s = &e->sh->st[t];
		__atomic_store_n(&s->closed, s->closed + s->open, __ATOMIC_RELAXED);
		__atomic_store_n(&s->open, 0, __ATOMIC_RELAXED);
	}
}

static const struct xp_proc_ops proc_ops = {
	.name = "xp-cli",
	.setup = proc_setup,
	.wait = proc_wait,
	.tell_stop = tell_stop,
	.progress = proc_progress,
	.lost = proc_lost,
};

/* ---- engine ops --------------------------------------------------------- */

static void free_engine(struct xp_engine *e)
{
	if (!e)
		return;
	if (e->w) {
		for (unsigned t = 0; t < e->nw; t++) {
			if (e->w[t].epfd >= 0)
				close(e->w[t].epfd);
			free(e->w[t].slots);
		}
	}
	if (e->stopfd >= 0)
		close(e->stopfd);
	xp_shm_free(e->sh, e->shsize);
	free(e->w);
	free(e->src);
	free(e->buf);
	free(e);
}

static int check_cfg(const struct xp_engine_cfg *c, char *err, size_t errlen)
{
	char a[INET6_ADDRSTRLEN];
	if (c->server.family != AF_INET && c->server.family != AF_INET6) {
		snprintf(err, errlen, "socket engine: no server address");
		return -EINVAL;
	}
	if (c->kind != XP_TEST_STREAM && c->kind != XP_TEST_CONNECT && c->kind != XP_TEST_HOLD) {
		snprintf(err, errlen, "socket engine: unknown test kind %d", (int)c->kind);
		return -EINVAL;
	}
	if (!c->dport_lo || c->dport_lo > c->dport_hi) {
		snprintf(err, errlen, "socket engine: bad destination ports %u-%u", c->dport_lo, c->dport_hi);
		return -EINVAL;
	}
	if (!(c->max_seconds > 0)) {
		snprintf(err, errlen, "socket engine: max_seconds must be positive");
		return -EINVAL;
	}
	if (c->nbind > XP_MAX_BIND) {
		snprintf(err, errlen, "socket engine: at most %d bind addresses", XP_MAX_BIND);
		return -EINVAL;
	}
	for (unsigned b = 0; b < c->nbind; b++) {
		if (c->bind[b].family != c->server.family) {
			snprintf(err, errlen, "bind address %s is not of the server's address family",
				 xp_addr_str(&c->bind[b], a, sizeof(a)));
			return -EINVAL;
		}
	}
	return 0;
}

static int sock_create(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen)
{
	int r = check_cfg(cfg, err, errlen);
	if (r)
		return r;
	unsigned parallel = cfg->parallel ? cfg->parallel : 1;
	int cpus[CPU_SETSIZE];
	int ncpu = xp_allowed_cpus(cpus, CPU_SETSIZE);
	unsigned threads = cfg->sock.threads ? cfg->sock.threads : (unsigned)ncpu;
	if (threads > parallel)
		threads = parallel; /* an event loop without connections is just overhead */

	/* One descriptor per connection plus a margin for everything else;
	 * beyond what one process may open, several processes. */
	char lim[200];
	struct xp_fd_need need = { .conns = parallel, .headroom = 1.0, .per_thread = 0, .threads = threads };
	struct xp_fd_plan plan;
	if (xp_fd_plan(&need, &plan, lim, sizeof(lim))) {
		snprintf(err, errlen, "-P %u %s", parallel, lim);
		return -EMFILE;
	}

	struct xp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	e->cfg.parallel = parallel;
	e->stopfd = -1;
	e->tpp = plan.threads_per_proc;
	e->nw = plan.nproc * e->tpp;
	if (e->nw > parallel)
		e->nw = parallel;
	e->nproc = (e->nw + e->tpp - 1) / e->tpp;
	e->fd_limit = plan.forced;
	if (cfg->debug && e->nproc > 1)
		fprintf(stderr, "socket engine: -P %u over %u processes x %u threads (open-file limit %lu)\n",
			parallel, e->nproc, e->tpp, plan.limit);

	e->dstlen = (socklen_t)xp_addr_to_sockaddr(&cfg->server, 0, &e->dst);
	if (cfg->nbind) {
		e->src = calloc(cfg->nbind, sizeof(*e->src));
		if (!e->src)
			goto nomem;
		for (unsigned b = 0; b < cfg->nbind; b++)
			e->srclen = (socklen_t)xp_addr_to_sockaddr(&cfg->bind[b], 0, &e->src[b]);
	}
	if (cfg->kind == XP_TEST_STREAM) {
		/* Generated once: random data keeps compressing middleboxes honest; -z sends zeroes. */
		e->buf = calloc(1, BUF_SIZE);
		if (!e->buf)
			goto nomem;
		if (!cfg->sock.zero && getrandom(e->buf, BUF_SIZE, 0) != BUF_SIZE) {
			uint64_t x = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(xp_now() * 1e9);
			for (size_t k = 0; k + 8 <= BUF_SIZE; k += 8) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				memcpy(e->buf + k, &x, 8);
			}
		}
	}
	e->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->w = calloc(e->nw, sizeof(*e->w));
	e->shsize = sizeof(*e->sh) + e->nw * sizeof(struct wstats);
	e->sh = xp_shm_alloc(e->shsize, e->nproc > 1);
	if (e->stopfd < 0 || !e->w || !e->sh)
		goto nomem;
	for (unsigned t = 0; t < e->nw; t++)
		e->w[t].epfd = -1;
	for (unsigned t = 0; t < e->nw; t++) {
		struct sock_worker *w = &e->w[t];
		w->eng = e;
		w->id = t;
		w->cpu = cpus[t % (unsigned)ncpu];
		w->st = &e->sh->st[t];
		w->nslots = parallel / e->nw + (t < parallel % e->nw);
		w->seq = t;
		w->retry_delay = BACKOFF_MIN;
		w->ready = w->backoff = w->connecting = (struct slist){ NIL, NIL };
		/* CONNECT measures connects in flight, so all of them may be; the
		 * others ramp up with a bounded number of SYNs outstanding. */
		w->max_inflight = cfg->kind == XP_TEST_CONNECT ? w->nslots : HOLD_INFLIGHT;
	}
	/* With workers, each allocates its own threads' slots after the fork. */
	if (e->nproc == 1 && (r = part_alloc(e, 0, e->nw, err, errlen))) {
		free_engine(e);
		return r;
	}
	*out = e;
	return 0;
nomem:
	snprintf(err, errlen, "socket engine: out of memory or descriptors (%s)", strerror(errno));
	free_engine(e);
	return -ENOMEM;
}

static void sock_stop(struct xp_engine *e)
{
	tell_stop(e);
	xp_procs_stop(e->procs); /* reaps the workers: their counters are final after this */
	e->procs = NULL;
	part_join(e, 0, e->nw);  /* the in-process threads, if any */
}

static int sock_start(struct xp_engine *e, char *err, size_t errlen)
{
	/* Before any fork: workers share the deadline t0 + max_seconds. */
	e->t0 = xp_now();
	if (e->nproc == 1) {
		int r = part_run(e, 0, e->nw, err, errlen);
		if (r)
			sock_stop(e);
		return r;
	}
	int keep[] = { e->stopfd };
	if (xp_procs_start(&e->procs, e->nproc, &proc_ops, e, keep, 1, e->fd_limit, err, errlen))
		return -ECHILD;
	return 0;
}

static void sock_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint64_t full_at = 0;
	bool all_full = e->cfg.kind == XP_TEST_HOLD;
	for (unsigned t = 0; t < e->nw; t++) {
		const struct wstats *s = &e->sh->st[t];
		uint64_t f = __atomic_load_n(&s->full_at_ns, __ATOMIC_RELAXED);
		all_full &= f > 0;
		if (f > full_at)
			full_at = f;
		st->sock.in_flight += __atomic_load_n(&s->in_flight, __ATOMIC_RELAXED);
		st->sock.conn_ok += __atomic_load_n(&s->ok, __ATOMIC_RELAXED);
		st->sock.conn_fail += __atomic_load_n(&s->fail, __ATOMIC_RELAXED);
		st->sock.conn_reset += __atomic_load_n(&s->reset, __ATOMIC_RELAXED);
		st->sock.conn_timeout += __atomic_load_n(&s->timeout, __ATOMIC_RELAXED);
		st->sock.conn_closed += __atomic_load_n(&s->closed, __ATOMIC_RELAXED);
		st->sock.open_now += __atomic_load_n(&s->open, __ATOMIC_RELAXED);
		st->sock.payload_bytes += __atomic_load_n(&s->payload, __ATOMIC_RELAXED);
	}
	/* All open at once: when the last thread had all of its own open. */
	st->hold.all_open_s = all_full ? full_at * 1e-9 : 0;
	st->hold.open = st->sock.open_now;
	st->mode = "tcp";
}

static void sock_destroy(struct xp_engine *e)
{
	if (!e)
		return;
	sock_stop(e);
	free_engine(e);
}

/* The server listens on the test's ports, and counts and passes the frames to its stack. */
static void sock_ask_server(const struct xp_engine_cfg *cfg, struct xp_test *t)
{
	t->pass = true;
	t->listen = true;
	t->parallel = cfg->parallel;
}

static const char *sock_verdict(const struct xp_engine_cfg *cfg, const struct xp_period *total, char *buf,
				size_t len)
{
	if (total->sock.conn_ok)
		return NULL;
	snprintf(buf, len, "no connection could be established (%llu failed, %llu timed out): is a firewall dropping them?",
		 (unsigned long long)total->sock.conn_fail, (unsigned long long)total->sock.conn_timeout);
	return buf;
}

const struct xp_engine_ops xp_engine_socket = {
	.name = "socket",
	.tmpl = XP_TMPL_NONE,
	.nexthop = false,
	.figures = XP_FIGS_SOCKETS,
	.ask_server = sock_ask_server,
	.verdict = sock_verdict,
	.create = sock_create,
	.start = sock_start,
	.read = sock_read,
	.stop = sock_stop,
	.destroy = sock_destroy,
};
