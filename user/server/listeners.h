/*
 * The server's side of socket tests: TCP listeners on a port range that
 * accept everything, read and discard, and hold idle connections open.
 */
#ifndef XP_LISTENERS_H
#define XP_LISTENERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct xp_sock_server_cfg {
	uint16_t port_lo, port_hi; /* listen on every port of this range */
	unsigned threads;          /* event-loop threads, 0 = one per CPU */
	unsigned long max_conns;   /* connections to plan open files for (0 = just raise soft to hard) */
	int debug;
	/* A cap on the worker processes past the open-file limit (the server's --max-workers). */
	bool cap_procs;
	unsigned max_procs;        /* with cap_procs: at most this many (0: all in this process) */
	bool cap_is_total;         /* the cap is what is left of --max-workers-total: say so */
	/* SO_RCVLOWAT for connections that stream fast (listeners.c says when and
	 * why): 0 = XP_SOCK_RCVLOWAT, 1 = never raised. */
	unsigned rcvlowat;
};

/* 256 KiB: the best of 256 KiB, 512 KiB and 1 MiB in paired lab rounds. */
#define XP_SOCK_RCVLOWAT (256u * 1024)

struct xp_sock_server_stats {
	uint64_t accepted; /* connections accepted */
	uint64_t closed;   /* ended by the peer's FIN, an error other than a reset, or stop */
	uint64_t resets;   /* ended by ECONNRESET */
	uint64_t open_now; /* accepted - closed - resets */
	uint64_t bytes_rx; /* payload read and discarded */
};

struct xp_sock_server;

/*
 * Listen and start the threads. 0, or -1 with a one-line message in err.
 * When max_conns does not fit under this process's open-file limit (even
 * raised), the threads run in forked worker processes instead (engine/workers.h):
 * call it from a thread that outlives the server (workers get SIGKILL when
 * the forking thread dies); XDPPERF_FD_LIMIT=N forces that path for tests.
 */
int xp_sock_server_start(const struct xp_sock_server_cfg *c, struct xp_sock_server **out, char *err,
			 size_t errlen);
/* About how many connections it can hold at once: its processes' open-file
 * limits less its listeners and a margin (not less than max_conns). */
unsigned long xp_sock_server_capacity(const struct xp_sock_server *s);
/* Cumulative counters (safe while running). */
void xp_sock_server_read(struct xp_sock_server *s, struct xp_sock_server_stats *st);
/* Worker processes it runs in (1: none, all in this process). */
unsigned xp_sock_server_procs(const struct xp_sock_server *s);
/* Closes everything, joins the threads, frees s. */
void xp_sock_server_stop(struct xp_sock_server *s);

#endif
