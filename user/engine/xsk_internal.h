/*
 * The AF_XDP engine's parts shared by its two sending loops: the stream loop
 * (engine/xsk.c, with the engine's setup and the interface of engine.h) and
 * the connection-test loop (engine/xsk_conn.c, every SYN rewritten before it
 * is posted). Private to those two files.
 */
#ifndef XDPPERF_ENGINE_XSK_INTERNAL_H
#define XDPPERF_ENGINE_XSK_INTERNAL_H

#include <errno.h>
#include <inttypes.h>
#include <linux/if_xdp.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include "bpf/lib/stamp.h"
#include "engine/engine.h"
#include "engine/send_bins.h"
#include "net/frame_stamp.h"
#include "util/threadclock.h"
#include "engine/pacer.h"
#include "util/cpus.h"
#include "util/random.h"
#include "util/time.h"
#include "engine/tuples.h"
#include "engine/window.h"

#define NUM_FRAMES 4096
#define RING_SIZE 2048
#define BATCH 64
/* From <linux/if_xdp.h> of 6.17+, which Debian 12's headers predate. */
#define XP_XDP_MAX_TX_SKB_BUDGET 9
/* Hold tests: how long the RSTs at the end may take in all, and the time
 * they are spread over when a rate is set (never slower than that, so the
 * bound holds however low the rate). */
#define RST_MAX_SECONDS  2.0
#define RST_PACE_SECONDS 1.0

struct xsk_worker {
	struct xp_engine *eng;
	unsigned queue;
	void *area;
	size_t area_size;
	unsigned frame_sz;
	uint32_t frame_len;
	uint32_t nframes;     /* UMEM frames in use: NUM_FRAMES, a mix's whole patterns */
	struct xsk_umem *umem;
	struct xsk_ring_prod fq, tx;
	struct xsk_ring_cons cq;
	struct xsk_socket *xsk;
	pthread_t thread;
	bool running;
	/* written by the worker, read by the sampler */
	uint64_t done;
	uint64_t errors;
	int fatal; /* errno that stopped the worker, 0 if none */
	/* connection tests only */
	unsigned rank;        /* queue - first_queue: sends k = rank, rank+nw, ... */
	uint64_t *free;       /* UMEM addresses the kernel has completed */
	uint32_t nfree;
	uint64_t k, t;        /* next SYN's connection number and tuple number */
	uint64_t syn_posted, rst_posted;
	uint64_t rst_done;    /* RSTs completed; read by the sampler */
	/* its account for "who held the offered load back"; pace is written when it ends */
	int cpu;              /* the CPU it is pinned to */
	double waited;        /* seconds waiting for the schedule */
	uint64_t pushback;    /* TX ring or free frames exhausted, EBUSY/ENOBUFS from sendto */
	struct xp_pace_stats pace;
	/* stamps (stream tests): the next frame's seq, the send interval it
	 * counts into now and where that ends (ticks), and the bins, written
	 * by the worker and read by sent_in (relaxed atomics) */
	uint64_t seq;
	struct xp_send_bins bins;
};

struct xp_engine {
	struct xp_engine_cfg cfg;
	struct xsk_worker *w;
	unsigned nw;
	const char *mode;
	volatile bool stop;
	/* connection tests (cfg.kind != XP_TEST_STREAM) */
	bool conn;
	struct frame_layout lay;      /* of the SYN template */
	struct xp_tuples map;      /* points into cfg */
	uint8_t rst[128];             /* RST template, see xp_tuple_build_rst */
	struct frame_layout rst_lay;
	/* stream tests with stamps */
	enum xp_stamp_place place;    /* XP_STAMP_NONE: frames go out as prebuilt */
	struct frame_layout slay;     /* of the stream template */
	clockid_t clock;              /* CLOCK_MONOTONIC or CLOCK_TAI */
	/* mixed sizes (stream tests): each size's frame, layout and stamp place */
	const struct xp_mix *mix;     /* &cfg.mix, NULL: one size */
	uint8_t *mix_tmpl[XP_MIX_MAX_SIZES];
	struct frame_layout mix_lay[XP_MIX_MAX_SIZES];
	enum xp_stamp_place mix_place[XP_MIX_MAX_SIZES];
};

/* Mixed sizes: the size (index into mix) of UMEM frame i. */
static inline unsigned xsk_mix_k(const struct xp_engine *e, uint64_t i)
{
	return e->mix->pattern[i % e->mix->plen];
}

static inline uint32_t xsk_reap(struct xsk_worker *w)
{
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(&w->cq, RING_SIZE, &idx);
	if (n) {
		xsk_ring_cons__release(&w->cq, n);
		__atomic_store_n(&w->done, w->done + n, __ATOMIC_RELAXED);
	}
	return n;
}

/* Ask the kernel to transmit what is on the TX ring. 0, or errno if fatal. */
static inline int xsk_kick(struct xsk_worker *w)
{
	if (sendto(xsk_socket__fd(w->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	switch (errno) {
	case EBUSY: case ENOBUFS:
		w->pushback++; /* the driver or the completion queue is full: backpressure */
		return 0;
	case EAGAIN: case EINTR:
		return 0; /* EAGAIN: the per-call budget was used up, more to send (not backpressure) */
	default:
		__atomic_store_n(&w->errors, w->errors + 1, __ATOMIC_RELAXED);
		return errno == ENXIO || errno == ENETDOWN || errno == ENODEV ? errno : 0;
	}
}


/* Thread w's pacer (engine/pacer.h): its share of the rate, its phase among the threads. */
static inline void xsk_pacer_start(struct xp_pacer *pc, const struct xsk_worker *w, double pps, unsigned burst)
{
	struct xp_pacer_cfg c = { .pps = pps, .burst = burst, .thread = w->rank, .nthreads = w->eng->nw,
				  .unpaced = BATCH, .catchup_excess = w->eng->cfg.catchup_excess };
	xp_pacer_init(pc, &c, xp_now());
}

/* Frames to post now, at most one ring batch; 0 when not due yet (it slept: waiting, not busy). */
static inline uint32_t xsk_pacer_want(struct xsk_worker *w, struct xp_pacer *pc)
{
	double t = pc->pps > 0 ? xp_now() : 0;
	uint32_t n = xp_pacer_next(pc);
	if (!n)
		w->waited += xp_now() - t;
	return n < BATCH ? n : BATCH;
}

/* engine/xsk_conn.c: connection tests (kind XP_TEST_CONNECT / XP_TEST_HOLD). */
int xsk_conn_setup(struct xp_engine *e, const struct frame_layout *lay, char *err, size_t errlen);
void xsk_conn_main(struct xsk_worker *w);

#endif /* XDPPERF_ENGINE_XSK_INTERNAL_H */
