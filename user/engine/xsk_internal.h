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
#include "engine/flow_sched.h"
#include "engine/flow_table.h"
#include "engine/send_bins.h"
#include "frame/frame_stamp.h"
#include "meas/threadclock.h"
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
/* Multi-buffer AF_XDP (kernels since 6.6; Debian 12's headers predate it):
 * the bind flag, and the descriptor option "the frame goes on in the next
 * descriptor". */
#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif
/* The largest UMEM chunk (one page): a frame longer than this is sent in
 * several chunks, one descriptor each (jumbo frames). */
#define XSK_CHUNK_MAX 4096u
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
	/* A frame lives in one slot of frame_sz bytes, from the slot's start.
	 * Frames up to one chunk: the slot is the UMEM chunk (2048 or 4096)
	 * and a frame is one descriptor. Longer (jumbo) frames: the slot is
	 * segs chunks of 4096 and a frame is one descriptor per chunk it
	 * covers, chained with XDP_PKT_CONTD (the socket binds XDP_USE_SG). */
	unsigned frame_sz;
	unsigned chunk;       /* the UMEM's chunk size */
	unsigned segs;        /* chunks per slot: 1, or a jumbo frame's */
	uint32_t nslots;      /* slots in the UMEM (NUM_FRAMES chunks in all) */
	uint32_t frame_len;
	uint32_t nframes;     /* slots in use: nslots, a mix's whole patterns */
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
	/* flows (cfg.frames.nflows > 0; engine/xsk_flows.c) */
	struct xp_flow_sched *sched;  /* this thread's order of its flows' frames */
	struct xsk_wflow *wf;         /* per flow: what this thread sends of it */
	struct xsk_slot *slot;        /* per UMEM slot: the frame posted in it last */
	uint64_t *fdone, *fbytes;     /* per flow: frames and bytes completed; read by read_flows */
	uint64_t stamped_busy;        /* stamped frames posted, not completed */
};

/* What thread t sends of flow f: its frame n is the flow's frame n * mul + off (the pattern index; every
 * thread of the flow its own residue), stamped stream `stream`, seq n. */
struct xsk_wflow {
	uint64_t sent;      /* n of the next frame */
	uint64_t limit;     /* frames this thread sends of it in all, UINT64_MAX: until stopped */
	uint32_t mul, off;
	uint16_t stream;
};

struct xsk_slot {
	uint16_t flow;
	uint16_t len;
	uint8_t stamped;
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
	uint32_t umem_chunks;         /* chunks in each UMEM: NUM_FRAMES (a fuzzer sets fewer) */
	/* mixed sizes (stream tests): each size's frame, layout and stamp place */
	const struct xp_mix *mix;     /* &cfg.mix, NULL: one size */
	uint8_t *mix_tmpl[XP_MIX_MAX_SIZES];
	struct frame_layout mix_lay[XP_MIX_MAX_SIZES];
	enum xp_stamp_place mix_place[XP_MIX_MAX_SIZES];
	/* flows (engine/xsk_flows.c): each one's frames for one period, shared by the threads */
	unsigned nflows;
	struct xp_flow_table *ftab;
	uint32_t flow_maxlen;         /* the longest frame of any flow, no FCS */
};

/* Mixed sizes: the size (index into mix) of UMEM frame i. */
static inline unsigned xsk_mix_k(const struct xp_engine *e, uint64_t i)
{
	return e->mix->pattern[i % e->mix->plen];
}

/* Completions reaped (0: none); w->done counts the frames among them. */
static inline uint32_t xsk_reap(struct xsk_worker *w)
{
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(&w->cq, RING_SIZE, &idx);
	if (n) {
		uint32_t frames = n;
		if (w->segs > 1) {
			/* One completion per descriptor, in posting order: a
			 * frame's first descriptor is the one at its slot's start. */
			frames = 0;
			for (uint32_t i = 0; i < n; i++)
				frames += *xsk_ring_cons__comp_addr(&w->cq, idx + i) % w->frame_sz == 0;
		}
		xsk_ring_cons__release(&w->cq, n);
		__atomic_store_n(&w->done, w->done + frames, __ATOMIC_RELAXED);
	}
	return n;
}

/* TX descriptors a frame of len bytes takes. */
static inline uint32_t xsk_descs(const struct xsk_worker *w, uint32_t len)
{
	return w->segs > 1 ? (len + w->chunk - 1) / w->chunk : 1;
}

/* Writes the descriptors of the frame of len bytes at UMEM address addr from
 * TX ring position idx on; returns how many (xsk_descs). */
static inline uint32_t xsk_post(struct xsk_worker *w, uint32_t idx, uint64_t addr, uint32_t len)
{
	uint32_t k = 0;
	struct xdp_desc *d;
	while (len > w->chunk) {
		d = xsk_ring_prod__tx_desc(&w->tx, idx + k++);
		d->addr = addr;
		d->len = w->chunk;
		d->options = XDP_PKT_CONTD;
		addr += w->chunk;
		len -= w->chunk;
	}
	d = xsk_ring_prod__tx_desc(&w->tx, idx + k++);
	d->addr = addr;
	d->len = len;
	d->options = 0;
	return k;
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


/*
 * The send loops' ring steps, one copy for one stream (engine/xsk.c) and
 * flows (engine/xsk_flows.c), each with its own reap (completions counted
 * its way). Static inline with a constant reap: the compiler calls it
 * directly, as before.
 */
typedef uint32_t (*xsk_reap_fn)(struct xsk_worker *w);

/*
 * Of want frames, those whose slots are free now: a slot is rewritten only
 * after the kernel completed its previous use, so at most nframes are in
 * flight (the TX ring is consumed in order, so done completions mean the
 * oldest slots are free). Fewer than want is pushback; none: the ring is
 * kicked and reaped, and the caller tries again.
 */
static inline uint32_t xsk_room(struct xsk_worker *w, uint64_t posted, uint32_t want, xsk_reap_fn reap)
{
	uint64_t busy = posted - __atomic_load_n(&w->done, __ATOMIC_RELAXED);
	if (busy + want <= w->nframes)
		return want;
	want = busy < w->nframes ? (uint32_t)(w->nframes - busy) : 0;
	w->pushback++;
	if (!want) {
		xsk_kick(w);
		reap(w);
	}
	return want;
}

/* After posting: kick and reap. 0, or the fatal errno (also in w->fatal). */
static inline int xsk_kick_reap(struct xsk_worker *w, xsk_reap_fn reap)
{
	int f = xsk_kick(w);
	reap(w);
	if (f)
		w->fatal = f;
	return f;
}

/* At the end: let what is on the ring go out and be counted (bounded: 200 ms). */
static inline void xsk_drain(struct xsk_worker *w, uint64_t posted, xsk_reap_fn reap)
{
	double end = xp_now() + 0.2;
	while (w->done < posted && xp_now() < end && !w->fatal) {
		xsk_kick(w);
		if (!reap(w))
			xp_sleep(1e-4);
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

/* The stamp clock now, in ticks (ns >> XP_STAMP_TICK_SHIFT). */
static inline uint64_t stamp_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

/* The largest template: -l 9018 less the FCS, with room to spare. */
#define XSK_TMPL_MAX 9216u

/* engine/xsk.c, apart for the engine configuration's fuzzer
 * (tests/fuzz/fuzz_engine_cfg.c), which runs them without a socket:
 * the engine before its sockets, its undoing, a worker's UMEM shape and its
 * prebuilt frames, and the posting of a batch onto the TX ring. */
int xsk_prepare(const struct xp_engine_cfg *cfg, struct xp_engine **out, uint8_t *tmpl, struct frame_layout *lay,
		char *err, size_t errlen);
void xsk_unprepare(struct xp_engine *e);
int xsk_slots_plan(const struct xp_engine *e, const struct frame_layout *lay, struct xsk_worker *w, char *err,
		   size_t errlen);
int xsk_slots_fill(const struct xp_engine *e, struct xsk_worker *w, const uint8_t *tmpl, const struct frame_layout *lay,
		   char *err, size_t errlen);
uint32_t xsk_post_batch(struct xsk_worker *w, uint64_t *next, uint32_t want, uint64_t ts);

/* engine/xsk_flows.c: stream tests with flows. */
int xsk_flows_prepare(struct xp_engine *e, char *err, size_t errlen);
int xsk_flows_worker(struct xp_engine *e, struct xsk_worker *w, char *err, size_t errlen);
void xsk_flows_worker_free(struct xsk_worker *w);
void xsk_flows_free(struct xp_engine *e);
void xsk_flows_main(struct xsk_worker *w);
void xsk_read_flows(struct xp_engine *e, uint64_t *pkts, uint64_t *bytes, unsigned n);

/* engine/xsk_conn.c: connection tests (kind XP_TEST_CONNECT / XP_TEST_HOLD). */
int xsk_conn_setup(struct xp_engine *e, const struct frame_layout *lay, char *err, size_t errlen);
void xsk_conn_main(struct xsk_worker *w);

#endif /* XDPPERF_ENGINE_XSK_INTERNAL_H */
