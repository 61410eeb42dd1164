/*
 * Kernel TCP socket engine (client side): many connections through the
 * kernel's TCP stack, for firewall tests in the style of fireperf. Private
 * to it: engine/socket.c creates, starts, stops and reads it (its threads
 * and worker processes are a struct xp_group); socket_loop.c is the event
 * loop each thread runs.
 *
 * Scale is the point (six-figure connection counts), so there is no thread
 * per connection: `threads` event-loop threads, each pinned to a CPU, each
 * owning a fixed share of the `parallel` connection "slots". A slot is a
 * small struct that is either waiting to (re)connect, connecting, or open.
 * All sockets are non-blocking and live on the thread's epoll. Slots sit on
 * intrusive FIFO lists so that every per-event step is O(1):
 *   ready    - may open now (bounded by the in-flight limit)
 *   backoff  - failed recently, may reopen at slot->t
 *   connect  - connect() in flight since slot->t; since the connect timeout
 *              is a constant, start order is deadline order and the head is
 *              always the next to expire (no timer heap needed).
 *
 * Modes: STREAM keeps `parallel` connections open and writes as fast as it
 * can; CONNECT (-x) closes each connection as soon as it is established and
 * opens the next; HOLD (-k) keeps them open and idle, with keepalives.
 *
 * Counters: conn_reset counts every established connection the peer ended
 * (RST, FIN, or a write/keepalive error); conn_closed every one we closed,
 * including those still open at stop() or max_seconds, so at the end
 * conn_ok == conn_closed + conn_reset + open_now. A connect found complete at
 * stop (the handshake done, its event not yet seen) counts as established
 * and closed, as the server accepts it; the others count as in_flight.
 *
 * Past the open-file limit (one descriptor per connection), the threads are
 * spread over worker processes (struct xp_group, engine/workers.h): thread g of
 * G lives in process g / threads_per_proc, and nothing else changes: the same
 * slots, the same (port, source) sequence, counters in a MAP_SHARED array that
 * read() sums as before, and the stop flag and eventfd shared too. With one
 * process the threads simply run here.
 */
#ifndef XP_SOCKET_LOOP_H
#define XP_SOCKET_LOOP_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "engine/engine.h"
#include "engine/workers.h"

#define NIL UINT32_MAX
#define BUF_SIZE (128 * 1024)      /* one write in STREAM mode */
#define HOLD_INFLIGHT 1000         /* connects in flight per thread when ramping (hold, stream) */
#define BACKOFF_MIN 1e-3           /* retry delay after a failure (doubling up to BACKOFF_MAX) */
#define STOP_TAG UINT64_MAX

/* IDLE: no socket, on no list (only while being moved). OPEN: on no list. */
enum slot_state { ST_IDLE, ST_READY, ST_BACKOFF, ST_CONNECTING, ST_OPEN };

/* 32 bytes per connection in user space; the kernel's socket dwarfs it. */
struct slot {
	int fd;
	uint32_t gen;        /* bumped per socket: events of an older socket are ignored */
	uint32_t prev, next; /* links in the list its state names (none when open) */
	double t;            /* connecting: start time; backoff: when it may retry */
	uint8_t state;
	bool blocking;       /* STREAM: written with blocking, time-bounded sends (socket_loop.c) */
	bool polled;         /* its socket is on the thread's epoll (the fast path skips it) */
};

struct slist {
	uint32_t head, tail;
};

/* Counters written by the owning thread only, read by read() (relaxed);
 * each on its own cache line: no false sharing. The group keeps them, in
 * memory shared with the worker processes when there are any. */
struct wstats {
	uint64_t ok, fail, reset, timeout, closed, open, payload;
	uint64_t in_flight;  /* connects abandoned at stop */
	uint64_t full_at_ns; /* hold: ns after t0 when all this thread's slots were first open, 0: never */
} __attribute__((aligned(64)));

struct sock_worker {
	struct xp_engine *eng;
	unsigned id;
	int epfd;
	struct slot *slots;
	uint32_t nslots;
	struct slist ready, backoff, connecting;
	uint32_t inflight, max_inflight;
	uint64_t seq;        /* this thread's position in its walk over (dport, bind address) */
	double retry_delay;  /* current backoff: grows while only failures happen */
	double now;          /* time of the current loop turn (refreshed while opening) */
	double deadline;     /* t0 + max_seconds */
	uint32_t fast_tries, fast_hits; /* connect() asked twice, and found established (socket_loop.c) */
	uint32_t fast_skip;  /* opens left before the fast path is tried again */
	struct wstats *st;   /* xp_group_stats(&eng->grp, id) */
};

struct xp_engine {
	struct xp_engine_cfg cfg;
	struct sock_worker *w;       /* every thread of every process; slots only where it runs */
	struct xp_group grp;         /* the threads (grp.n over all processes), workers, stop, counters */
	double t0;
	struct sockaddr_storage dst; /* server address; the port is patched per connect */
	socklen_t dstlen;
	struct sockaddr_storage *src; /* bind addresses (port 0), nbind of them */
	socklen_t srclen;
	uint8_t *buf;                /* STREAM payload, BUF_SIZE bytes */
};

/* The thread function of one event loop (arg: its struct sock_worker). */
void *xp_sock_client_loop(void *arg);

#endif
