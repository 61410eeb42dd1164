/*
 * The window's insides, for engine/window.c and the tests: the keeper's
 * scan takes the time as an argument and sends through a function pointer,
 * so a test can run it on a made-up clock and look at every frame.
 */
#ifndef XP_WINDOW_SCAN_H
#define XP_WINDOW_SCAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/tuples.h"
#include "engine/window_slots.h"
#include "frame/frame.h"

typedef int xp_win_send_fn(void *arg, const uint8_t *frame, size_t len);

struct xp_window {
	struct xp_engine_cfg cfg;   /* the test's (tuples point into it) */
	struct xp_tuples tuples;    /* connection number -> tuple, as the SYN senders number them */
	struct frame_spec spec;     /* the SYN template: addresses, MACs, VLAN */
	uint32_t mode;              /* XP_CC_MODE_* of the client program */
	bool hold;                  /* -k: slots are opened once, never reused */
	struct xp_win_maps maps;
	size_t slots_len, ctl_len, ring_len; /* mapped bytes */
	int pkt_fd;
	xp_win_send_fn *send;
	void *send_arg;
	pthread_t keeper;
	bool running, finished;
	volatile bool stop;
	struct {                    /* written by the scan, read by xp_window_read */
		uint64_t syn_retx, fin_retx, keepalives, fail_timeout, fin_timeout;
		uint64_t in_flight, open, rst_closed, send_errors;
	} ks;
};

/* One pass over the slots at time now_ns: retransmissions, give-ups, keepalives, counts. */
void xp_window_scan(struct xp_window *w, uint64_t now_ns);
/* The slots' counts (in flight, open) without sending anything. */
void xp_window_count(struct xp_window *w);
/* -k's end: an RST (seq = ISN + 1, as Linux aborts) for every connection not done, until deadline (xp_now()). */
void xp_window_reset_all(struct xp_window *w, double deadline);
/* The frame of the connection in slot s with these flags (TH_SYN: its SYN again). Returns its length, 0 on error. */
size_t xp_window_frame(const struct xp_window *w, const struct xp_win_slot *s, uint8_t flags, uint8_t *buf,
		       size_t len);

#endif
