/*
 * Kernel TCP socket engine (client side): many connections through the
 * kernel's TCP stack, for firewall tests in the style of fireperf. This file
 * is its lifecycle (create, start, stop, counters); the design and the event
 * loop are in socket_loop.h and socket_loop.c, the threads and worker
 * processes in engine/workers.h (struct xp_group).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "engine/socket_loop.h"
#include "util/cpus.h"
#include "util/random.h"
#include "util/time.h"

#define CONNECT_THREADS_PER_CPU 32 /* -x's default event loops (see sock_create) */

/* ---- the threads (struct xp_group runs them, here or in workers) -------- */

/* Thread t's slots and epoll, in the process that runs it. */
static int thread_setup(void *arg, unsigned t, char *err, size_t errlen)
{
	struct xp_engine *e = arg;
	struct sock_worker *w = &e->w[t];
	w->slots = calloc(w->nslots ? w->nslots : 1, sizeof(*w->slots)); /* calloc(0) may be NULL */
	w->epfd = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = STOP_TAG };
	if (!w->slots || w->epfd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, e->grp.stopfd, &ev)) {
		snprintf(err, errlen, "socket engine: out of memory or descriptors (%s)", strerror(errno));
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < w->nslots; i++)
		w->slots[i] = (struct slot){ .fd = -1, .prev = NIL, .next = NIL, .state = ST_IDLE };
	return 0;
}

static void *thread_arg(void *arg, unsigned t)
{
	struct xp_engine *e = arg;
	return &e->w[t];
}

/* Anything a thread counts moves while it works or closes. */
static unsigned long long thread_progress(void *arg, unsigned t)
{
	struct xp_engine *e = arg;
	const struct wstats *s = e->w[t].st;
	return __atomic_load_n(&s->ok, __ATOMIC_RELAXED) + __atomic_load_n(&s->fail, __ATOMIC_RELAXED) +
	       __atomic_load_n(&s->timeout, __ATOMIC_RELAXED) + __atomic_load_n(&s->closed, __ATOMIC_RELAXED) +
	       __atomic_load_n(&s->reset, __ATOMIC_RELAXED);
}

/* Its worker died before closing everything: the exit closed the rest, so
 * they count as closed and ok == closed + reset + open_now still holds. */
static void thread_lost(void *arg, unsigned t)
{
	struct xp_engine *e = arg;
	struct wstats *s = e->w[t].st;
	__atomic_store_n(&s->closed, s->closed + s->open, __ATOMIC_RELAXED);
	__atomic_store_n(&s->open, 0, __ATOMIC_RELAXED);
}

static const struct xp_group_ops group_ops = {
	.name = "xp-cli",
	.what = "socket thread",
	.stats_size = sizeof(struct wstats),
	.setup = thread_setup,
	.main = xp_sock_client_loop,
	.main_arg = thread_arg,
	.progress = thread_progress,
	.lost = thread_lost,
};

/* ---- engine ops --------------------------------------------------------- */

static void free_engine(struct xp_engine *e)
{
	if (!e)
		return;
	if (e->w) {
		for (unsigned t = 0; t < e->grp.n; t++) {
			if (e->w[t].epfd >= 0)
				close(e->w[t].epfd);
			free(e->w[t].slots);
		}
	}
	xp_group_close(&e->grp);
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
	unsigned threads = cfg->sock.threads ? cfg->sock.threads : (unsigned)xp_allowed_cpu_count();
	if (!cfg->sock.threads && cfg->kind == XP_TEST_CONNECT) {
		/*
		 * -x: an event loop per connection, up to CONNECT_THREADS_PER_CPU
		 * per CPU, as a blocking connect/close loop lays itself out. With
		 * the fast path (socket_loop.c) each loop's connect() completes
		 * its handshake in place, so a loop never sleeps, and one loop per
		 * CPU then shares its CPU with whatever else runs there: where the
		 * server shares the host (the lab), its listener thread woke for
		 * every few accepts and preempted the loop (10 k context switches
		 * a second against connloop's 300). Measured in the routed lab,
		 * -x -P 64 side by side: 30.5 k conn/s with 2 loops, 46.1 k with
		 * 64, connloop -R -a 44.1 k and 39.0 k (docs/socket-mode.md).
		 */
		unsigned most = threads * CONNECT_THREADS_PER_CPU;
		threads = parallel < most ? parallel : most;
	}

	struct xp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	/* One descriptor per connection plus a margin for everything else;
	 * beyond what one process may open, several processes. No more threads
	 * than connections: an event loop without any is just overhead. */
	char lim[200];
	struct xp_fd_need need = { .conns = parallel, .headroom = 1.0, .per_thread = 0, .threads = threads };
	if (xp_group_plan(&e->grp, &need, parallel, lim, sizeof(lim))) {
		snprintf(err, errlen, "-P %u %s", parallel, lim);
		free(e);
		return -EMFILE;
	}
	e->cfg = *cfg;
	e->cfg.parallel = parallel;
	unsigned nw = e->grp.n;
	if (cfg->debug && e->grp.nproc > 1)
		fprintf(stderr, "socket engine: -P %u over %u processes x %u threads (open-file limit %lu)\n",
			parallel, e->grp.nproc, e->grp.tpp, e->grp.limit);

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
		if (!cfg->sock.zero)
			xp_random_fill(e->buf, BUF_SIZE, true);
	}
	e->w = calloc(nw, sizeof(*e->w));
	if (!e->w)
		goto nomem;
	for (unsigned t = 0; t < nw; t++)
		e->w[t].epfd = -1;
	if (xp_group_open(&e->grp, &group_ops, e))
		goto nomem; /* errno says why */
	for (unsigned t = 0; t < nw; t++) {
		struct sock_worker *w = &e->w[t];
		w->eng = e;
		w->id = t;
		w->st = xp_group_stats(&e->grp, t);
		w->nslots = parallel / nw + (t < parallel % nw);
		/* Its start in the (port, source) walk (socket_loop.c): the threads spread over it. */
		w->seq = (uint64_t)t * ((uint64_t)(cfg->dport_hi - cfg->dport_lo + 1) * (cfg->nbind ? cfg->nbind : 1)) / nw;
		w->retry_delay = BACKOFF_MIN;
		w->ready = w->backoff = w->connecting = (struct slist){ NIL, NIL };
		/* CONNECT measures connects in flight, so all of them may be; the
		 * others ramp up with a bounded number of SYNs outstanding. */
		w->max_inflight = cfg->kind == XP_TEST_CONNECT ? w->nslots : HOLD_INFLIGHT;
	}
	/* With workers, each allocates its own threads' slots after the fork. */
	if ((r = xp_group_prepare(&e->grp, err, errlen))) {
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
	xp_group_stop(&e->grp); /* reaps any workers: their counters are final after this */
}

static int sock_start(struct xp_engine *e, char *err, size_t errlen)
{
	/* Before any fork: workers share the deadline t0 + max_seconds. */
	e->t0 = xp_now();
	return xp_group_start(&e->grp, err, errlen);
}

static void sock_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint64_t full_at = 0;
	bool all_full = e->cfg.kind == XP_TEST_HOLD;
	for (unsigned t = 0; t < e->grp.n; t++) {
		const struct wstats *s = e->w[t].st;
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
#if defined(XP_MUTATE) && XP_MUTATE == 3
	st->sock.conn_ok += st->sock.conn_ok > 0; /* scripts/mutate.sh: one connection too many */
#endif
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
	.title = "the socket engine",
	.tmpl = XP_TMPL_NONE,
	.nexthop = false,
	.figures = XP_FIGS_SOCKETS,
	.kinds = XP_TEST_BIT(XP_TEST_STREAM) | XP_TEST_BIT(XP_TEST_CONNECT) | XP_TEST_BIT(XP_TEST_HOLD),
	/* The kernel's TCP: connections from its own ports and addresses, as fast as they go. */
	.caps = XP_CAP_BIT(XP_CAP_DEV) | XP_CAP_BIT(XP_CAP_THREADS) | XP_CAP_BIT(XP_CAP_CONNS) |
		XP_CAP_BIT(XP_CAP_BIND) | XP_CAP_BIT(XP_CAP_PAYLOAD) | XP_CAP_BIT(XP_CAP_COMPARE),
	.lacks = { [XP_CAP_RATE] = "it has no rate limit (for an exact offered load use --engine live or xsk)",
		   [XP_CAP_BURST] = "it has no rate limit to shape",
		   [XP_CAP_FRAME_SIZE] = "TCP sizes its segments (the MSS)",
		   [XP_CAP_STAMPS] = "its segments carry no stamp", [XP_CAP_UDP] = "it tests TCP only",
		   [XP_CAP_ETH] = "the kernel writes its Ethernet headers",
		   [XP_CAP_LATENCY] = "its segments carry no stamp",
		   [XP_CAP_XDP_MODE] = "the server's --xdp-mode sets how it counts",
		   [XP_CAP_SPORTS] = "the kernel picks its source ports",
		   [XP_CAP_QUEUES] = "its event loops are --threads",
		   [XP_CAP_LOSS] = "TCP retransmits what is lost (see the failed and timed-out connections)",
		   [XP_CAP_STALL] = "its connections time out and say so",
		   [XP_CAP_RATE_CHECK] = "it has no target rate",
		   [XP_CAP_CPS] = "it has no rate limit",
		   [XP_CAP_SYN_RETRIES] = "the kernel retransmits (net.ipv4.tcp_syn_retries)",
		   [XP_CAP_KEEPALIVES] = "its connections use the kernel's keepalives",
		   [XP_CAP_SEARCH] = "the searches need the XDP connection engine's per-connection counts: --engine xdp",
		   [XP_CAP_RFC2544] = "the suite needs exact offered loads: --engine live or xsk",
		   [XP_CAP_FLOWS] = "the kernel writes its segments' headers (flows: --engine live or xsk)" },
	.ask_server = sock_ask_server,
	.verdict = sock_verdict,
	XP_ENGINE_LIFECYCLE(sock),
	/* No stamps: the kernel's TCP makes the segments, there is no frame of
	 * ours to put one in (the report says so instead of a loss figure). */
	.sent_in = NULL,
};
