/* The socket engine's event loop: one per thread, see socket_loop.h for the design. */
#include "engine/socket_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/time.h"

#define CONNECT_TIMEOUT 3.0        /* seconds until a connect counts as timed out */
#define BACKOFF_MAX 64e-3          /* retry delay cap while nothing succeeds */
#define MAX_WAIT_MS 100            /* epoll sleeps at most this: max_seconds is checked */
#define EV_BATCH 256
#define OPEN_BATCH 4096            /* opens per loop turn, so events keep being served */
#define OPEN_TURN_S 5e-3           /* and at most this long: the fast path below can open without end */
/*
 * The fast path. On veth (and loopback) the whole handshake runs inside the
 * connect() call: the SYN, the router's forwarding, the server's SYN-ACK and
 * our ACK are all processed in the softirq that the transmit raises on this
 * CPU, and the SYN-ACK waits in the socket's backlog until connect() releases
 * the socket. A non-blocking connect() still answers EINPROGRESS (it looked
 * before the release), but the socket is established when it returns. A
 * second connect() says so at once (0; EALREADY while the SYN is really in
 * flight; the error if it was refused), which saves the epoll_ctl(ADD), the
 * getsockopt(SO_ERROR) and a share of an epoll_wait (and its sleep) per
 * connection. Measured (docs/socket-mode.md): 6 -> 5 system calls per
 * connection, the same as a blocking connect/close loop's. On a real
 * network the SYN-ACK takes a round trip and the second call is wasted, so
 * it is asked only while it pays: over each FAST_WINDOW tries at least one in
 * FAST_MIN_HITS must find the socket established, else the next FAST_PAUSE
 * opens go straight to epoll before it is tried again.
 */
#define FAST_WINDOW 256
#define FAST_MIN_HITS 4
#define FAST_PAUSE 4096
#define WRITES_PER_EVENT 4         /* 512 KiB per writable event, then the next socket */
/*
 * STREAM sockets of a thread with at most BLOCKING_MAX_SLOTS connections are
 * written with blocking send()s (one 128 KiB write per EPOLLOUT, like
 * iperf3's select-then-write loop), each bounded by SO_SNDTIMEO. Measured in
 * a routed veth lab (2 cores), 4 connections from one thread, wire bytes
 * into the server, quiet rounds: blocking writes after select() 29.6 and
 * 21.4 Gbit/s, MSG_DONTWAIT writes after epoll (this loop before) 14.3 and
 * 15.6; blocking writes after epoll 22.5 and 17.9 vs 15.0 and 11.6; and
 * xdpperf -P 4 itself 12-43 % faster than with MSG_DONTWAIT in six paired
 * rounds. Why, as far as we can tell: a MSG_DONTWAIT write gives up the
 * moment the send buffer is full and the thread sleeps in epoll until a
 * third of it is free, while a blocking send() releases the socket lock
 * inside the kernel, processes the ACKs queued meanwhile and goes on copying
 * into the space they freed, so the sender's TCP output (and, on veth, the
 * forwarding and the receiver's input behind it) stays in the writer's
 * context. The timeout bounds how long one write may hold the loop (a
 * socket is only written when epoll says it has room, so a write blocks only
 * while its send buffer is small); with more connections per thread such
 * stalls would add up, so those stay non-blocking.
 */
#define BLOCKING_MAX_SLOTS 64
#define BLOCKING_SNDTIMEO_US 10000 /* 10 ms */

/* ---- slot lists --------------------------------------------------------- */

static struct slist *list_of(struct sock_worker *w, uint8_t state)
{
	switch (state) {
	case ST_READY: return &w->ready;
	case ST_BACKOFF: return &w->backoff;
	case ST_CONNECTING: return &w->connecting;
	default: return NULL;
	}
}

static void list_push(struct sock_worker *w, uint32_t i)
{
	struct slist *l = list_of(w, w->slots[i].state);
	struct slot *s = &w->slots[i];
	s->next = NIL;
	s->prev = l->tail;
	if (l->tail != NIL)
		w->slots[l->tail].next = i;
	else
		l->head = i;
	l->tail = i;
}

static void list_unlink(struct sock_worker *w, uint32_t i)
{
	struct slist *l = list_of(w, w->slots[i].state);
	struct slot *s = &w->slots[i];
	if (!l)
		return;
	if (s->prev != NIL)
		w->slots[s->prev].next = s->next;
	else
		l->head = s->next;
	if (s->next != NIL)
		w->slots[s->next].prev = s->prev;
	else
		l->tail = s->prev;
	s->prev = s->next = NIL;
}

/* Move slot i to `state` (and its list, if that state has one). */
static void set_state(struct sock_worker *w, uint32_t i, uint8_t state, double t)
{
	list_unlink(w, i);
	w->slots[i].state = state;
	w->slots[i].t = t;
	if (list_of(w, state))
		list_push(w, i);
}

static inline void bump(uint64_t *c, int64_t d)
{
	__atomic_store_n(c, *c + (uint64_t)d, __ATOMIC_RELAXED);
}

/* ---- opening and closing ------------------------------------------------ */

static void setopt(int fd, int level, int name, int v)
{
	/* Failures only lose a tuning knob; the connection still works. */
	(void)setsockopt(fd, level, name, &v, sizeof(v));
}

/* Make the coming close() send a RST and skip TIME_WAIT. */
static void rst_on_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
}

/* Close slot i's socket. The caller decides what the slot does next. */
static void slot_close(struct sock_worker *w, uint32_t i)
{
	struct slot *s = &w->slots[i];
	if (s->state == ST_CONNECTING)
		w->inflight--;
	if (s->state == ST_OPEN)
		bump(&w->st->open, -1);
	/* close() also removes it from epoll (we never dup the fd). */
	close(s->fd);
	s->fd = -1;
}

/* A failed attempt: retry after the backoff delay, which doubles while
 * nothing succeeds (a dead server costs a few hundred attempts per second,
 * not a spinning core) and drops back to 1 ms on the next success. */
static void slot_failed(struct sock_worker *w, uint32_t i)
{
	set_state(w, i, ST_BACKOFF, w->now + w->retry_delay);
	w->retry_delay = w->retry_delay * 2 > BACKOFF_MAX ? BACKOFF_MAX : w->retry_delay * 2;
}

static void slot_established(struct sock_worker *w, uint32_t i);

/* Whether to ask connect() a second time (see FAST_WINDOW). */
static bool fast_worth(struct sock_worker *w)
{
	if (w->fast_skip) {
		w->fast_skip--;
		return false;
	}
	if (w->fast_tries >= FAST_WINDOW) {
		if (w->fast_hits * FAST_MIN_HITS < w->fast_tries)
			w->fast_skip = FAST_PAUSE; /* it does not pay: epoll alone for a while */
		w->fast_tries = w->fast_hits = 0;
		return !w->fast_skip;
	}
	return true;
}

/* Watch slot i's socket for `events` (on the epoll already, or not yet). */
static void slot_poll(struct sock_worker *w, uint32_t i, uint32_t events)
{
	struct slot *s = &w->slots[i];
	struct epoll_event ev = { .events = events, .data.u64 = (uint64_t)s->gen << 32 | i };
	if (!epoll_ctl(w->epfd, s->polled ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, s->fd, &ev))
		s->polled = true;
}

/* Open a socket for slot i (IDLE, on no list) and start connecting. */
static void slot_open(struct sock_worker *w, uint32_t i)
{
	struct xp_engine *e = w->eng;
	const struct xp_engine_cfg *c = &e->cfg;
	struct slot *s = &w->slots[i];

	int fd = socket(e->dst.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0) {
		bump(&w->st->fail, 1); /* EMFILE, ENOBUFS...: same treatment as a refusal */
		slot_failed(w, i);
		return;
	}
	s->fd = fd;
	s->gen++;
	s->blocking = false;
	s->polled = false;
	if (c->sock.bind_dev && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, c->ifname, (socklen_t)strlen(c->ifname) + 1)) {
		bump(&w->st->fail, 1);
		close(fd);
		s->fd = -1;
		slot_failed(w, i);
		return;
	}

	/* The source address varies fastest, then the destination port, so every
	 * (source, port) pair is used even when the counts share factors. Each
	 * thread walks all the pairs itself, from its own offset (sock_create):
	 * with threads taking t, t+n, t+2n... of one sequence, as they did, a
	 * thread of 64 over 16 ports kept one port and 4 of 16 sources, and
	 * what the first connections covered depended on which threads ran first;
	 * now any thread's first nbind connections use every source. */
	uint32_t nd = (uint32_t)c->dport_hi - c->dport_lo + 1;
	uint32_t nb = c->nbind ? c->nbind : 1;
	uint64_t k = w->seq++;
	struct sockaddr_storage dst = e->dst;
	uint16_t port = htons((uint16_t)(c->dport_lo + (k / nb) % nd));
	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = port;
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = port;

	if (c->nbind) {
		/* Without IP_BIND_ADDRESS_NO_PORT, bind(port 0) must pick a port
		 * unique for the address alone, so one source address would cap
		 * us at ~28k connections; with it the port is chosen at connect()
		 * time per 4-tuple, which lets every destination port reuse them. */
		setopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1);
		if (bind(fd, (struct sockaddr *)&e->src[k % nb], e->srclen)) {
			bump(&w->st->fail, 1);
			close(fd);
			s->fd = -1;
			slot_failed(w, i);
			return;
		}
	}
	if (c->kind == XP_TEST_HOLD) {
		/* Idle connections: keepalives every 10 s keep a firewall's
		 * conntrack entry established (and find dead peers in 25 s). */
		setopt(fd, SOL_SOCKET, SO_KEEPALIVE, 1);
		setopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, 10);
		setopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, 5);
		setopt(fd, IPPROTO_TCP, TCP_KEEPCNT, 3);
	}

	if (connect(fd, (struct sockaddr *)&dst, e->dstlen) == 0) {
		slot_established(w, i); /* possible on loopback */
		return;
	}
	if (errno == EINPROGRESS && fast_worth(w)) {
		w->fast_tries++;
		if (connect(fd, (struct sockaddr *)&dst, e->dstlen) == 0 || errno == EISCONN) {
			w->fast_hits++;
			slot_established(w, i);
			return;
		}
		if (errno == EALREADY || errno == EINTR)
			errno = EINPROGRESS; /* in flight: epoll tells */
	}
	if (errno != EINPROGRESS) {
		/* ECONNREFUSED, ENETUNREACH, EADDRNOTAVAIL (no free source port)... */
		bump(&w->st->fail, 1);
		close(fd);
		s->fd = -1;
		slot_failed(w, i);
		return;
	}
	struct epoll_event ev = { .events = EPOLLOUT, .data.u64 = (uint64_t)s->gen << 32 | i };
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		bump(&w->st->fail, 1);
		close(fd);
		s->fd = -1;
		slot_failed(w, i);
		return;
	}
	s->polled = true;
	w->inflight++;
	set_state(w, i, ST_CONNECTING, w->now);
}

static void stream_write(struct sock_worker *w, uint32_t i);

static void slot_established(struct sock_worker *w, uint32_t i)
{
	struct xp_engine *e = w->eng;
	struct slot *s = &w->slots[i];
	if (s->state == ST_CONNECTING)
		w->inflight--;
	set_state(w, i, ST_OPEN, 0);
	bump(&w->st->ok, 1);
	w->retry_delay = BACKOFF_MIN;

	switch (e->cfg.kind) {
	case XP_TEST_CONNECT:
		/*
		 * Close with RST (SO_LINGER {1,0}), not FIN. A plain close() makes
		 * us the active closer, so every connection leaves a TIME_WAIT
		 * socket for 60 s holding its 4-tuple. Measured over loopback,
		 * -P 64, one destination port, in a private netns:
		 *   close(), tcp_tw_reuse=0 (what a real NIC gets, since the
		 *     default tcp_tw_reuse=2 recycles TIME_WAIT on loopback only):
		 *     14.6k conn/s for 1 s, then ~900/s at 97 % CPU: connect()
		 *     scans a port range that is mostly in TIME_WAIT, and with
		 *     all ~28k ports of a (source, destination, port) in
		 *     TIME_WAIT it fails with EADDRNOTAVAIL: ~470 conn/s per
		 *     such triple in the long run;
		 *   close(), tcp_tw_reuse=2 on loopback: 14.3k conn/s;
		 *   RST, either setting: 41k-46k conn/s, no TIME_WAIT left.
		 * The firewall still sees a complete handshake per connection,
		 * which is what a connection-rate test measures, and the RST
		 * frees its conntrack entry sooner than a FIN would.
		 */
		bump(&w->st->closed, 1);
		rst_on_close(s->fd);
		close(s->fd);
		s->fd = -1;
		set_state(w, i, ST_READY, 0);
		return;
	case XP_TEST_HOLD:
		bump(&w->st->open, 1);
		if (!w->st->full_at_ns && w->st->open == w->nslots)
			__atomic_store_n(&w->st->full_at_ns, (uint64_t)((w->now - e->t0) * 1e9) + 1, __ATOMIC_RELAXED);
		/* Only drops matter now: RDHUP/HUP/ERR and the odd byte from the peer. */
		slot_poll(w, i, EPOLLIN | EPOLLRDHUP);
		return;
	case XP_TEST_STREAM:
	default:
		bump(&w->st->open, 1);
		if (w->nslots <= BLOCKING_MAX_SLOTS) {
			/* See BLOCKING_MAX_SLOTS. If either call fails the socket
			 * stays non-blocking (MSG_DONTWAIT then), which still works. */
			struct timeval tv = { .tv_sec = 0, .tv_usec = BLOCKING_SNDTIMEO_US };
			int fl = fcntl(s->fd, F_GETFL);
			if (fl >= 0 && !setsockopt(s->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) &&
			    !fcntl(s->fd, F_SETFL, fl & ~O_NONBLOCK))
				s->blocking = true;
		}
		/* EPOLLOUT (level) stays on: the socket is written whenever it has room. */
		slot_poll(w, i, EPOLLOUT);
		stream_write(w, i);
		return;
	}
}

/* An established connection died under us (reset, EOF, write error). */
static void slot_dropped(struct sock_worker *w, uint32_t i)
{
	bump(&w->st->reset, 1);
	slot_close(w, i);
	/* Back off: a server that accepts and resets at once must not make us spin. */
	slot_failed(w, i);
}

static void stream_write(struct sock_worker *w, uint32_t i)
{
	struct slot *s = &w->slots[i];
	/* The payload carries no meaning, so partial writes need no offset:
	 * every send starts at the beginning of the buffer. */
	if (s->blocking) {
		/* One write: it returns once all of it is queued, or after
		 * SO_SNDTIMEO with what was (EAGAIN if nothing). */
		ssize_t n = send(s->fd, w->eng->buf, BUF_SIZE, MSG_NOSIGNAL);
		if (n > 0)
			bump(&w->st->payload, n);
		else if (!(n < 0 && (errno == EAGAIN || errno == EINTR)))
			slot_dropped(w, i); /* EPIPE, ECONNRESET, ETIMEDOUT... */
		return;
	}
	for (int k = 0; k < WRITES_PER_EVENT; k++) {
		ssize_t n = send(s->fd, w->eng->buf, BUF_SIZE, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			bump(&w->st->payload, n);
			if (n < BUF_SIZE)
				return; /* the socket buffer is full */
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		slot_dropped(w, i); /* EPIPE, ECONNRESET, ETIMEDOUT... */
		return;
	}
}

static void hold_event(struct sock_worker *w, uint32_t i)
{
	char scratch[512];
	/* Servers send nothing; drain whatever comes (bounded) and look for EOF/errors. */
	for (int k = 0; k < 16; k++) {
		ssize_t n = recv(w->slots[i].fd, scratch, sizeof(scratch), MSG_DONTWAIT);
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		slot_dropped(w, i); /* 0 = the peer closed; <0 = reset, keepalive timeout */
		return;
	}
}

static void handle_event(struct sock_worker *w, const struct epoll_event *ev)
{
	uint32_t i = (uint32_t)ev->data.u64;
	uint32_t gen = (uint32_t)(ev->data.u64 >> 32);
	if (i >= w->nslots)
		return;
	struct slot *s = &w->slots[i];
	if (s->fd < 0 || s->gen != gen)
		return; /* stale: that socket is gone */

	if (s->state == ST_CONNECTING) {
		/* Writable without an error or a hangup is connected (a refused or
		 * reset connect has EPOLLHUP, and EPOLLERR while sk_err is set):
		 * no getsockopt(SO_ERROR) needed to tell. */
		if ((ev->events & EPOLLOUT) && !(ev->events & (EPOLLERR | EPOLLHUP))) {
			slot_established(w, i);
			return;
		}
		int soerr = 0;
		socklen_t len = sizeof(soerr);
		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &soerr, &len))
			soerr = errno;
		if (!soerr && !(ev->events & (EPOLLERR | EPOLLHUP)))
			return; /* spurious */
		bump(&w->st->fail, 1);
		slot_close(w, i);
		slot_failed(w, i);
		return;
	}
	if (s->state != ST_OPEN)
		return;
	if (w->eng->cfg.kind == XP_TEST_STREAM)
		stream_write(w, i);
	else
		hold_event(w, i);
}

/* ---- the event loop ----------------------------------------------------- */

/* Connects older than the timeout: the list is in start order, so only its head is checked. */
static void expire(struct sock_worker *w)
{
	while (w->connecting.head != NIL) {
		uint32_t i = w->connecting.head;
		if (w->now - w->slots[i].t < CONNECT_TIMEOUT)
			break;
		bump(&w->st->timeout, 1);
		slot_close(w, i);
		set_state(w, i, ST_READY, 0); /* it already waited 3 s: retry at once */
	}
}

static void open_some(struct sock_worker *w)
{
	/* Due retries join the ready list (in order; see slot_failed for why
	 * the backoff list is only roughly sorted). */
	while (w->backoff.head != NIL && w->slots[w->backoff.head].t <= w->now)
		set_state(w, w->backoff.head, ST_READY, 0);
	double turn_end = w->now + OPEN_TURN_S;
	for (int n = 0; n < OPEN_BATCH && w->ready.head != NIL && w->inflight < w->max_inflight; n++) {
		/* The fast path closes and readies slots within this loop: the
		 * clock moves on (connect start times, the deadline, the stop). */
		if ((n & 15) == 15) {
			w->now = xp_now();
			if (w->now >= turn_end || w->now >= w->deadline)
				break;
		}
		uint32_t i = w->ready.head;
		set_state(w, i, ST_IDLE, 0);
		slot_open(w, i);
	}
}

/* How long epoll may sleep: until the next retry, timeout or MAX_WAIT_MS. */
static int wait_ms(struct sock_worker *w, double deadline)
{
	double until = w->now + MAX_WAIT_MS * 1e-3;
	if (w->ready.head != NIL && w->inflight < w->max_inflight)
		return 0;
	if (w->backoff.head != NIL && w->slots[w->backoff.head].t < until)
		until = w->slots[w->backoff.head].t;
	if (w->connecting.head != NIL && w->slots[w->connecting.head].t + CONNECT_TIMEOUT < until)
		until = w->slots[w->connecting.head].t + CONNECT_TIMEOUT;
	if (deadline < until)
		until = deadline;
	double ms = (until - w->now) * 1e3;
	return ms <= 0 ? 0 : (int)ms + 1; /* round up: waking early just spins */
}

/* A connect in flight at stop whose handshake is already done (its event not yet handled)? */
static bool connected(int fd)
{
	int soerr = 0;
	socklen_t len = sizeof(soerr);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	return !getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) && !soerr &&
	       !getpeername(fd, (struct sockaddr *)&ss, &sl);
}

static void close_all(struct sock_worker *w)
{
	/* Closing the epoll first spares each socket close its epoll unlink. */
	close(w->epfd);
	w->epfd = -1;
	for (uint32_t i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		if (s->fd < 0)
			continue;
		if (s->state == ST_CONNECTING) {
			/* The server accepts a completed one: count it, so the two sides agree. */
			if (connected(s->fd)) {
				bump(&w->st->ok, 1);
				bump(&w->st->closed, 1);
				if (w->eng->cfg.kind != XP_TEST_STREAM)
					rst_on_close(s->fd);
			} else {
				bump(&w->st->in_flight, 1);
			}
		}
		if (s->state == ST_OPEN)
			bump(&w->st->closed, 1); /* so ok == closed + reset + open_now at the end */
		/* HOLD ends with RSTs: a FIN close would leave every held
		 * connection in TIME_WAIT here for 60 s (and in the firewall's
		 * conntrack for 120 s), and that many TIME_WAIT sockets slow the
		 * next run's connect() port search to a crawl (measured: 14k/s
		 * -> 900/s). Stop takes as long either way (~10 us per socket
		 * on loopback). STREAM closes gracefully so its last bytes arrive. */
		if (w->eng->cfg.kind == XP_TEST_HOLD)
			rst_on_close(s->fd);
		slot_close(w, i);
		set_state(w, i, ST_IDLE, 0);
	}
	w->inflight = 0;
}

void *xp_sock_client_loop(void *arg)
{
	struct sock_worker *w = arg;
	struct xp_engine *e = w->eng;
	struct epoll_event evs[EV_BATCH];
	double deadline = e->t0 + e->cfg.max_seconds;
	w->deadline = deadline;

	for (uint32_t i = 0; i < w->nslots; i++)
		set_state(w, i, ST_READY, 0);
	while (!xp_group_stopping(&e->grp)) {
		w->now = xp_now();
		if (w->now >= deadline)
			break;
		expire(w);
		open_some(w);
		int n = epoll_wait(w->epfd, evs, EV_BATCH, wait_ms(w, deadline));
		if (n < 0 && errno != EINTR)
			break;
		w->now = xp_now();
		for (int k = 0; k < n; k++)
			if (evs[k].data.u64 != STOP_TAG)
				handle_event(w, &evs[k]);
	}
	close_all(w);
	return NULL;
}

