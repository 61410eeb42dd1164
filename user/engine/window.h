/*
 * The XDP connection engine's window (-P), userspace side: the shared maps
 * of bpf/window.h, created here and handed to the SYN sender and the
 * client's XDP program, and the keeper, a thread that scans the slots every
 * XP_WIN_SCAN_S and
 *   - sends a SYN again when it has gone unanswered for its retransmission
 *     timeout (1 s, then doubling, RFC 6298 5.5 and Linux), --syn-retries
 *     times, then gives the connection up (its slot freed, counted as timed
 *     out); --fin's ACK|FIN likewise, while the server's FIN is missing;
 *   - sends held connections (-k) a keepalive (seq = ISN, ack = the
 *     server's next, no data: what Linux sends) every --keepalive-interval;
 *   - when the test ends (-k), resets every connection of the window from
 *     its state.
 * It sends through an AF_PACKET socket on the test interface: these are a
 * few frames per connection at most, far below the SYN sender's rate.
 */
#ifndef XP_WINDOW_H
#define XP_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/window_slots.h"

#define XP_WIN_SCAN_S     0.01 /* the keeper's period: retransmissions are this late at most (xp_win_rto) */

/* What the window saw, cumulative (xp_window_read). */
struct xp_win_stats {
	uint64_t taken;        /* connections started (first SYNs) */
	uint64_t syn_retx;     /* SYNs sent again */
	uint64_t fin_retx;     /* --fin: ACK|FINs sent again */
	uint64_t keepalives;   /* -k: keepalives sent */
	uint64_t fail_timeout; /* SYNs given up after the retries */
	uint64_t fail_reset;   /* SYNs (or -k: held connections) answered by a reset */
	uint64_t fail_unreach; /* SYNs answered by ICMP destination unreachable */
	uint64_t fin_timeout;  /* --fin: closes given up (no FIN from the server after the retries) */
	uint64_t synack_dup;   /* SYN-ACKs answered again (retransmitted SYNs both answered) */
	uint64_t stale;        /* SYN-ACKs of given-up connections, answered with RST */
	uint64_t fin_dup;      /* --fin: server FINs answered again (our last ACK lost) */
	uint64_t in_flight;    /* at the last scan: SYNs waiting for their SYN-ACK */
	uint64_t open;         /* at the last scan: -k connections established; --fin: closes waiting */
	uint64_t rst_closed;   /* -k: connections reset at the end */
	uint64_t send_errors;  /* frames the keeper could not send */
};

struct xp_window;

/*
 * The window of cfg->parallel slots for cfg (connect or hold) and mode
 * (XP_CC_MODE_*): maps created, every slot free, maps described in *maps
 * for the SYN sender's and client program's cfg. 0, or -errno with err.
 */
int xp_window_open(const struct xp_engine_cfg *cfg, uint32_t mode, struct xp_window **out,
		   struct xp_win_maps *maps, char *err, size_t errlen);
int xp_window_start(struct xp_window *w, char *err, size_t errlen);
void xp_window_read(struct xp_window *w, struct xp_win_stats *st);
/* Stop the keeper: nothing is sent again from now on. */
void xp_window_halt(struct xp_window *w);
/* Once the last replies are in: the final counts (in flight, open); -k:
 * reset every connection of the window (bounded: 2 s). Halts first if needed. */
void xp_window_finish(struct xp_window *w);
void xp_window_close(struct xp_window *w);

#endif
