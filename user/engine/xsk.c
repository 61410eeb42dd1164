/*
 * AF_XDP sending engine: one TX-only AF_XDP socket and one pinned thread per
 * queue. Each socket's UMEM is filled once with prebuilt frames that differ
 * only in their ports (so the load spreads over flows and queues); the hot
 * loop then only posts descriptors, kicks the kernel and reaps completions.
 * No allocations. Stream tests with stamps (cfg->frames.stamp.ival != 0)
 * write the 8-byte stamp of bpf/lib/stamp.h into each frame before it is
 * posted (stream = stream_base + thread, seq = the thread's frame number,
 * the batch's send time; net/frame_stamp.h fixes the checksums
 * incrementally) and count the frames per send interval (sent_in); a frame
 * is rewritten only once the kernel has completed its previous use.
 *
 * Mixed sizes (cfg->frames.mix, stream tests): UMEM frame i holds the
 * frame of pattern position i % plen, built at its size by frame_build, and
 * only the first NUM_FRAMES - NUM_FRAMES % plen frames are used, so going
 * round the UMEM keeps the pattern: the descriptors' lengths follow it, and
 * the stamp goes where each size has room for it.
 *
 * Connection tests (kind XP_TEST_CONNECT / XP_TEST_HOLD) cannot reuse a
 * frame as is: every SYN opens a new connection, with its own 4-tuple and
 * ISN (see engine/tuples.h for the numbering). There each frame is rewritten
 * before it is posted (ports, source address, seq; incremental checksum
 * updates), and so may only be taken once the kernel has handed it back on
 * the completion ring: frames go round through a free stack instead of
 * round robin. A hold test sends cfg->parallel SYNs, idles, and at the end
 * closes every connection with an RST (seq = ISN + 1) so that a connection
 * tracker under test frees its entries instead of keeping them ESTABLISHED
 * for days. The XDP programs (bpf/client.bpf.c, bpf/server.bpf.c)
 * complete the handshakes; nothing here waits for an answer.
 */
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
static unsigned mix_k(const struct xp_engine *e, uint64_t i)
{
	return e->mix->pattern[i % e->mix->plen];
}

static int worker_setup(struct xp_engine *e, struct xsk_worker *w, const uint8_t *tmpl,
			const struct frame_layout *lay, char *err, size_t errlen)
{
	const struct xp_engine_cfg *c = &e->cfg;
	w->frame_len = lay->len;
	w->nframes = e->mix ? NUM_FRAMES - NUM_FRAMES % e->mix->plen : NUM_FRAMES;
	w->frame_sz = lay->len + XDP_PACKET_HEADROOM <= 2048 ? 2048 : 4096;
	w->area_size = (size_t)NUM_FRAMES * w->frame_sz;
	w->area = mmap(NULL, w->area_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->area == MAP_FAILED) {
		w->area = NULL;
		snprintf(err, errlen, "cannot allocate %zu MiB for the AF_XDP UMEM", w->area_size >> 20);
		return -ENOMEM;
	}
	/* Prebuild every frame: queue q takes flows q, q+queues, q+2*queues... */
	for (uint64_t i = 0; i < NUM_FRAMES; i++) {
		uint8_t *f = (uint8_t *)w->area + i * w->frame_sz;
		uint16_t sp, dp;
		const struct frame_layout *fl = lay;
		if (e->mix) {
			unsigned k = mix_k(e, i);
			fl = &e->mix_lay[k];
			memcpy(f, e->mix_tmpl[k], fl->len);
		} else {
			memcpy(f, tmpl, lay->len);
		}
		xp_flow_ports(c, (w->queue - c->frames.first_queue) + i * e->nw, &sp, &dp);
		frame_set_ports(f, fl, sp, dp);
	}
	if (e->conn) {
		/* Every frame starts free; pushed in reverse so frame 0 goes first. */
		w->free = malloc(NUM_FRAMES * sizeof(*w->free));
		if (!w->free) {
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < NUM_FRAMES; i++)
			w->free[i] = (uint64_t)(NUM_FRAMES - 1 - i) * w->frame_sz;
		w->nfree = NUM_FRAMES;
	}
	struct xsk_umem_config ucfg = {
		.fill_size = RING_SIZE,
		.comp_size = RING_SIZE,
		.frame_size = w->frame_sz,
		.frame_headroom = 0,
	};
	int r = xsk_umem__create(&w->umem, w->area, w->area_size, &w->fq, &w->cq, &ucfg);
	if (r) {
		snprintf(err, errlen, "cannot create the AF_XDP UMEM: %s%s", strerror(-r),
			 r == -ENOBUFS || r == -EPERM ? " (needs root / CAP_IPC_LOCK for locked memory)" : "");
		return r;
	}
	struct xsk_socket_config scfg = {
		.rx_size = RING_SIZE,
		.tx_size = RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_ZEROCOPY,
	};
	/*
	 * Zero-copy where the driver has it, copy mode otherwise (veth).
	 * EBUSY right after an earlier socket on this queue was closed is
	 * transient: the kernel detaches its buffer pool from the queue in
	 * deferred work, ~20 ms later here. So engines created back to back
	 * (--compare, benchmarks, tests) retry for up to a second.
	 */
	double busy_end = xp_now() + 1.0;
	for (;;) {
		scfg.bind_flags = XDP_ZEROCOPY;
		r = xsk_socket__create(&w->xsk, c->ifname, w->queue, w->umem, NULL, &w->tx, &scfg);
		if (r) {
			scfg.bind_flags = XDP_COPY;
			r = xsk_socket__create(&w->xsk, c->ifname, w->queue, w->umem, NULL, &w->tx, &scfg);
			e->mode = "copy";
		} else {
			e->mode = "zerocopy";
		}
		if (r != -EBUSY || xp_now() > busy_end)
			break;
		xp_sleep(0.005);
	}
	if (r) {
		snprintf(err, errlen, "cannot open an AF_XDP socket on %s queue %u: %s%s", c->ifname, w->queue,
			 strerror(-r), r == -EBUSY ? " (another AF_XDP socket uses it: try --first-queue)" : "");
		return r;
	}
	/*
	 * Copy mode sends at most max_tx_budget (32 by default) frames per
	 * sendto(); kernels since 6.17 let a socket raise that, which saves
	 * syscalls. Older kernels refuse the option: keep their default.
	 */
	int budget = BATCH * 4;
	setsockopt(xsk_socket__fd(w->xsk), SOL_XDP, XP_XDP_MAX_TX_SKB_BUDGET, &budget, sizeof(budget));
	return 0;
}

static void worker_teardown(struct xsk_worker *w)
{
	if (w->xsk)
		xsk_socket__delete(w->xsk);
	if (w->umem)
		xsk_umem__delete(w->umem);
	if (w->area)
		munmap(w->area, w->area_size);
	free(w->free);
	w->free = NULL;
	w->xsk = NULL;
	w->umem = NULL;
	w->area = NULL;
}

static inline uint32_t reap(struct xsk_worker *w)
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
static inline int kick(struct xsk_worker *w)
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
static void pacer_start(struct xp_pacer *pc, const struct xsk_worker *w, double pps, unsigned burst)
{
	struct xp_pacer_cfg c = { .pps = pps, .burst = burst, .thread = w->rank, .nthreads = w->eng->nw,
				  .unpaced = BATCH, .catchup_excess = w->eng->cfg.catchup_excess };
	xp_pacer_init(pc, &c, xp_now());
}

/* Frames to post now, at most one ring batch; 0 when not due yet (it slept: waiting, not busy). */
static inline uint32_t pacer_want(struct xsk_worker *w, struct xp_pacer *pc)
{
	double t = pc->pps > 0 ? xp_now() : 0;
	uint32_t n = xp_pacer_next(pc);
	if (!n)
		w->waited += xp_now() - t;
	return n < BATCH ? n : BATCH;
}

/* ---- connection tests ------------------------------------------------- */

/*
 * Reap completions into the free stack. In copy mode the kernel copies a
 * frame into an skb inside sendto() but completes it only when that skb is
 * freed, which on a veth can be later, in the peer's NAPI poll: only a
 * completed frame may be rewritten. LIFO, so the frame completed last, still
 * in cache, goes out next.
 */
static inline uint32_t conn_reap(struct xsk_worker *w)
{
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(&w->cq, RING_SIZE, &idx);
	if (!n)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		w->free[w->nfree++] = *xsk_ring_cons__comp_addr(&w->cq, idx + i);
	xsk_ring_cons__release(&w->cq, n);
	/* Every SYN is posted before the first RST: completions count as SYNs
	 * (pkts, as in stream tests) until all posted SYNs are accounted for. */
	uint64_t syn = w->syn_posted - w->done;
	if (syn > n)
		syn = n;
	if (syn)
		__atomic_store_n(&w->done, w->done + syn, __ATOMIC_RELAXED);
	if (n > syn)
		__atomic_store_n(&w->rst_done, w->rst_done + (n - syn), __ATOMIC_RELAXED);
	return n;
}

/* Post up to want SYNs (rst: RSTs) of this thread's next connections, as
 * many as there are free frames. Returns how many were posted. */
static uint32_t conn_post(struct xsk_worker *w, uint32_t want, bool rst)
{
	struct xp_engine *e = w->eng;
	const struct xp_tuples *m = &e->map;
	uint32_t idx, n;

	const struct xp_win_maps *win = &e->cfg.hs.win;
	uint32_t slots[BATCH], nslots = 0;

	if (want > w->nfree) {
		want = w->nfree;
		w->pushback++; /* frames not yet completed by the kernel */
	}
	if (!rst && win->size) {
		/* The window (-P): one free slot per SYN, or no SYN. */
		if (want > BATCH)
			want = BATCH;
		while (nslots < want && !xp_win_pop(win, &slots[nslots]))
			nslots++;
		want = nslots;
	}
	if (!want || !(n = xsk_ring_prod__reserve(&w->tx, want, &idx))) {
		while (nslots)
			xp_win_unpop(win, slots[--nslots]);
		return 0;
	}
	if (n < want)
		w->pushback++; /* TX ring full */
	while (nslots > n)
		xp_win_unpop(win, slots[--nslots]);
	for (uint32_t i = 0; i < n; i++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&w->tx, idx + i);
		uint64_t addr = w->free[--w->nfree];
		uint8_t *f = (uint8_t *)w->area + addr;

		d->addr = addr;
		if (rst) {
			/* Connection k of this thread's j-th SYN, recomputed: the
			 * SYN consumed one sequence number. Not a hot path. */
			uint64_t k = w->rank + w->rst_posted++ * e->nw;
			memcpy(f, e->rst, e->rst_lay.len);
			xp_tuple_write(m, f, &e->rst_lay, k % m->space, xp_tuple_isn(m, k) + 1);
			d->len = e->rst_lay.len;
		} else {
			/* The frame holds an older SYN (or the template): only
			 * ports, address and seq change. */
			uint32_t isn = xp_tuple_isn(m, w->k);
			if (win->size) {
				uint16_t sp, dp;
				unsigned a;
				xp_tuple_of(m, w->t, &sp, &dp, &a);
				isn = xp_win_record(win, slots[i], w->k, sp, dp, isn);
			}
			xp_tuple_write(m, f, &e->lay, w->t, isn);
			w->k += e->nw;
			w->t += e->nw;
			if (w->t >= m->space)
				w->t %= m->space;
			d->len = w->frame_len;
		}
	}
	if (!rst)
		w->syn_posted += n;
	xsk_ring_prod__submit(&w->tx, n);
	return n;
}

/* Wait (secs at most) for the kernel to complete what was posted. */
static void conn_drain(struct xsk_worker *w, uint64_t posted, const uint64_t *done, double secs)
{
	double end = xp_now() + secs;
	while (*done < posted && xp_now() < end && !w->fatal) {
		kick(w);
		if (!conn_reap(w))
			xp_sleep(1e-4);
	}
}

/* Hold tests, at the end: one RST per SYN this thread sent, within
 * RST_MAX_SECONDS. Paced when the test is (at the test's rate, or faster if
 * that would not finish in RST_PACE_SECONDS), as fast as possible if not. */
static void conn_close_all(struct xsk_worker *w)
{
	const struct xp_engine_cfg *c = &w->eng->cfg;
	uint64_t total = w->syn_posted;
	double t0 = xp_now(), end = t0 + RST_MAX_SECONDS;
	double pps = 0;

	if (c->pps > 0) {
		pps = c->pps / w->eng->nw;
		if (pps < total / RST_PACE_SECONDS)
			pps = total / RST_PACE_SECONDS;
	}
	struct xp_pacer pc;
	pacer_start(&pc, w, pps, 0);
	while (w->rst_posted < total && !w->fatal) {
		if (xp_now() > end)
			break;
		uint32_t want = pacer_want(w, &pc);
		if (!want) {
			conn_reap(w);
			continue;
		}
		if (want > total - w->rst_posted)
			want = (uint32_t)(total - w->rst_posted);
		uint64_t before = w->rst_posted;
		conn_post(w, want, true);
		xp_pacer_sent(&pc, (uint32_t)(w->rst_posted - before));
		int f = kick(w);
		conn_reap(w);
		if (f)
			w->fatal = f;
	}
	conn_drain(w, w->rst_posted, &w->rst_done, end - xp_now());
	if (c->debug)
		fprintf(stderr, "xsk queue %u: %" PRIu64 " SYNs sent, %" PRIu64 " of %" PRIu64
			" RSTs sent in %.3f s\n", w->queue, w->done, w->rst_done, total, xp_now() - t0);
}

/*
 * The sending loop of connection tests: the stream loop (worker_main) with
 * per-frame rewrites, free-frame accounting and, in hold tests, a limit.
 * Paced the same way; kept apart so the stream loop stays free of per-frame
 * work.
 */
static void conn_main(struct xsk_worker *w)
{
	struct xp_engine *e = w->eng;
	const struct xp_engine_cfg *c = &e->cfg;
	struct xp_pacer pc;
	pacer_start(&pc, w, c->pps > 0 ? c->pps / e->nw : 0, c->burst);
	/* Hold: this thread's share of k = 0 .. parallel-1. */
	uint64_t limit = UINT64_MAX;
	if (c->kind == XP_TEST_HOLD)
		limit = c->parallel > w->rank ? (c->parallel - w->rank + e->nw - 1) / e->nw : 0;
	double t0 = xp_now(), deadline = t0 + c->max_seconds;
	unsigned iter = 0;

	w->k = w->rank;
	w->t = w->rank % e->map.space;
	while (!e->stop) {
		if ((++iter & 1023) == 0 && xp_now() > deadline)
			break;
		if (w->syn_posted >= limit) {
			/* Hold: all sent. Idle until stopped, still reaping. */
			if (w->done < w->syn_posted)
				kick(w);
			conn_reap(w);
			if (xp_now() > deadline)
				break;
			xp_sleep(1e-3);
			continue;
		}
		uint32_t want = pacer_want(w, &pc);
		if (!want) {
			conn_reap(w);
			continue;
		}
		if (want > limit - w->syn_posted)
			want = (uint32_t)(limit - w->syn_posted);
		uint64_t before = w->syn_posted;
		if (!conn_post(w, want, false) && c->hs.win.size)
			xp_sleep(2e-5); /* the window is full: replies (or the end of -k) free it */
		xp_pacer_sent(&pc, (uint32_t)(w->syn_posted - before));
		int f = kick(w);
		conn_reap(w);
		if (f) {
			w->fatal = f;
			break;
		}
	}
	conn_drain(w, w->syn_posted, &w->done, 0.2);
	/* Stopped, or past max_seconds: either way the held connections end
	 * (with a window its keeper resets them, from their state). */
	if (c->kind == XP_TEST_HOLD && !w->fatal && !c->hs.win.size)
		conn_close_all(w);
}

static void stream_main(struct xsk_worker *w);

static void *worker_main(void *arg)
{
	struct xsk_worker *w = arg;
	struct xp_engine *e = w->eng;
	struct xp_thread_clock clk;
	prctl(PR_SET_TIMERSLACK, 1000UL); /* 1 us: pacing sleeps must not overshoot by 50 us */
	xp_thread_clock_start(&clk, w->cpu);
	if (e->conn)
		conn_main(w);
	else
		stream_main(w);
	xp_thread_clock_end(&clk, &w->pace);
	w->pace.wait_s = w->waited;
	w->pace.pushback = w->pushback;
	return NULL;
}

/* The stamp clock now, in ticks (ns >> XP_STAMP_TICK_SHIFT). */
static inline uint64_t stamp_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

static void stream_main(struct xsk_worker *w)
{
	struct xp_engine *e = w->eng;
	struct xp_pacer pc;
	pacer_start(&pc, w, e->cfg.pps > 0 ? e->cfg.pps / e->nw : 0, e->cfg.burst);
	uint64_t posted = 0, next = 0;
	double t0 = xp_now(), deadline = t0 + e->cfg.max_seconds;
	unsigned iter = 0;
	const bool stamp = e->place != XP_STAMP_NONE;
	const uint32_t stream = e->cfg.frames.stamp.stream_base + w->rank;

	while (!e->stop) {
		if ((++iter & 1023) == 0 && xp_now() > deadline)
			break;
		uint32_t want = pacer_want(w, &pc);
		if (!want) {
			reap(w);
			continue;
		}
		uint64_t ts = 0;
		if (stamp) {
			/* A frame is rewritten only after the kernel completed its
			 * previous use: at most NUM_FRAMES in flight. (The TX ring
			 * is consumed in order, so done completions mean the
			 * oldest done frames are free.) */
			uint64_t busy = posted - __atomic_load_n(&w->done, __ATOMIC_RELAXED);
			if (busy + want > w->nframes) {
				want = busy < w->nframes ? (uint32_t)(w->nframes - busy) : 0;
				w->pushback++;
				if (!want) {
					kick(w);
					reap(w);
					continue;
				}
			}
			/* One clock read per batch, and every frame of the batch
			 * gets that time. The frames leave one after another
			 * inside the one sendto() below (copy mode transmits in
			 * the syscall), so frame k of a batch goes out up to k
			 * frame times after its stamp (64 frames at 1.5 Mpps:
			 * ~43 us; at paced rates batches are a few frames). A
			 * read per frame, all of them before the kick, would not
			 * follow that: it would spread the stamps over the
			 * posting loop's ~2 us, not the ~43 us of sending, and it
			 * cost 3 % more in bench.sh stamp (0.97x vs 1.06x of the
			 * unstamped rate; noisy, separate runs). */
			ts = stamp_now(e->clock);
		}
		uint32_t idx;
		uint32_t n = xsk_ring_prod__reserve(&w->tx, want, &idx);
		if (n < want)
			w->pushback++; /* TX ring full: the kernel has not taken what is on it */
		for (uint32_t i = 0; i < n; i++) {
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&w->tx, idx + i);
			uint64_t slot = next++ % w->nframes;
			d->addr = slot * w->frame_sz;
			if (e->mix) {
				/* The pattern position is the slot's (nframes: whole patterns). */
				unsigned k = mix_k(e, slot);
				d->len = e->mix_lay[k].len;
				if (stamp)
					frame_put_stamp((uint8_t *)w->area + d->addr, &e->mix_lay[k], e->mix_place[k],
							xp_stamp_pack(stream, w->seq++, ts));
				continue;
			}
			d->len = w->frame_len;
			if (stamp)
				frame_put_stamp((uint8_t *)w->area + d->addr, &e->slay, e->place,
						xp_stamp_pack(stream, w->seq++, ts));
		}
		if (n) {
			xsk_ring_prod__submit(&w->tx, n);
			if (stamp)
				xp_send_bins_count(&w->bins, e->cfg.frames.stamp.t0, e->cfg.frames.stamp.ival, ts, n);
		}
		posted += n;
		xp_pacer_sent(&pc, n);
		int f = kick(w);
		reap(w);
		if (f) {
			w->fatal = f;
			break;
		}
	}
	/* Let what is on the ring go out and be counted (bounded: 200 ms). */
	double end = xp_now() + 0.2;
	while (w->done < posted && xp_now() < end && !w->fatal) {
		kick(w);
		if (!reap(w))
			xp_sleep(1e-4);
	}
	/* Posted but never completed (the drain timed out): not sent. */
	if (stamp && w->done < posted)
		xp_send_bins_uncount(&w->bins, posted - w->done);
}

/* Connection tests: the tuple numbering and the RST template. */
static int conn_setup(struct xp_engine *e, const struct frame_layout *lay, char *err, size_t errlen)
{
	const struct xp_engine_cfg *c = &e->cfg;
	const char *ferr = NULL;
	uint64_t seed;

	if (c->kind == XP_TEST_STREAM)
		return 0;
	if (c->kind != XP_TEST_CONNECT && c->kind != XP_TEST_HOLD) {
		snprintf(err, errlen, "the xsk engine does not run %s tests", xp_test_kind_name(c->kind));
		return -EINVAL;
	}
	/* A fresh ISN key per run: tuples repeat from one run to the next. */
	seed = xp_random_seed();
	int r = xp_tuples_init(&e->map, c, seed, err, errlen);
	if (r)
		return r;
	if (!xp_tuple_build_rst(&c->frames.tmpl, e->rst, sizeof(e->rst), &e->rst_lay, &ferr)) {
		snprintf(err, errlen, "cannot build the RST frame: %s", ferr ? ferr : "invalid");
		return -EINVAL;
	}
	e->lay = *lay;
	e->conn = true;
	return 0;
}

static void mix_free(struct xp_engine *e)
{
	for (unsigned k = 0; k < XP_MIX_MAX_SIZES; k++)
		free(e->mix_tmpl[k]);
}

/*
 * Mixed sizes: each size's frame built by frame_build and its stamp place.
 * With stamps on every size must carry one (as in the live engine:
 * loader/generator_prog.c), or loss and latency would cover some sizes
 * only. 0, or -errno with err set.
 */
static int mix_setup(struct xp_engine *e, char *err, size_t errlen)
{
	const struct xp_mix *m = &e->cfg.frames.mix;
	for (unsigned k = 0; k < m->n; k++) {
		struct frame_spec s = e->cfg.frames.tmpl;
		const char *ferr = NULL;
		size_t len = 0;
		s.frame_size = m->size[k];
		e->mix_tmpl[k] = malloc(s.frame_size);
		if (!e->mix_tmpl[k])
			return -ENOMEM;
		if (!frame_layout_of(&s, &e->mix_lay[k], &ferr))
			len = frame_build(&s, e->mix_tmpl[k], s.frame_size, &ferr);
		if (!len) {
			snprintf(err, errlen, "cannot build the %u-byte frame of the mix: %s", m->size[k],
				 ferr ? ferr : "invalid");
			return -EINVAL;
		}
		e->mix_place[k] = e->place != XP_STAMP_NONE ? frame_stamp_place(&s, &e->mix_lay[k]) : XP_STAMP_NONE;
		if (e->place != XP_STAMP_NONE && e->mix_place[k] == XP_STAMP_NONE) {
			snprintf(err, errlen, "%u-byte frames of this mix carry no stamp (no loss or latency for them): "
				 "give sizes from %u up", m->size[k], m->size[k] + XP_STAMP_BYTES);
			return -EINVAL;
		}
	}
	e->mix = m;
	return 0;
}

static int xsk_create(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen)
{
	struct xp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	e->nw = cfg->frames.queues ? cfg->frames.queues : 1;
	e->w = calloc(e->nw, sizeof(*e->w));
	if (!e->w) {
		free(e);
		return -ENOMEM;
	}
	uint8_t tmpl[9216];
	const char *ferr = NULL;
	struct frame_layout lay;
	size_t len = 0;
	if (!frame_layout_of(&cfg->frames.tmpl, &lay, &ferr))
		len = frame_build(&cfg->frames.tmpl, tmpl, sizeof(tmpl), &ferr);
	if (!len) {
		snprintf(err, errlen, "cannot build the test frame: %s", ferr ? ferr : "invalid");
		free(e->w);
		free(e);
		return -EINVAL;
	}
	int r = conn_setup(e, &lay, err, errlen);
	if (r) {
		free(e->w);
		free(e);
		return r;
	}
	/* Stamps: stream tests that asked for them, where the frame has room. */
	e->slay = lay;
	e->clock = cfg->frames.stamp.tai ? CLOCK_TAI : CLOCK_MONOTONIC;
	e->place = cfg->kind == XP_TEST_STREAM && cfg->frames.stamp.ival ? frame_stamp_place(&cfg->frames.tmpl, &lay)
									    : XP_STAMP_NONE;
	if (cfg->kind == XP_TEST_STREAM && cfg->frames.mix.n)
		r = mix_setup(e, err, errlen);
	if (r) {
		mix_free(e);
		free(e->w);
		free(e);
		return r;
	}
	for (unsigned q = 0; q < e->nw; q++) {
		e->w[q].eng = e;
		e->w[q].queue = cfg->frames.first_queue + q;
		e->w[q].rank = q;
		r = worker_setup(e, &e->w[q], tmpl, &lay, err, errlen);
		if (r) {
			for (unsigned j = 0; j <= q; j++)
				worker_teardown(&e->w[j]);
			mix_free(e);
			free(e->w);
			free(e);
			return r;
		}
	}
	*out = e;
	return 0;
}

static int xsk_start(struct xp_engine *e, char *err, size_t errlen)
{
	int cpus[CPU_SETSIZE];
	unsigned ncpu = (unsigned)xp_allowed_cpus(cpus, CPU_SETSIZE);
	for (unsigned q = 0; q < e->nw; q++) {
		struct xsk_worker *w = &e->w[q];
		w->cpu = cpus[w->queue % ncpu]; /* before it runs: its account reads this CPU's times */
		int r = pthread_create(&w->thread, NULL, worker_main, w);
		if (r) {
			snprintf(err, errlen, "cannot start sender thread: %s", strerror(r));
			e->stop = true;
			return -r;
		}
		w->running = true;
		/* Pinned threads: unpinned rates swing by +-20 % here. */
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(w->thread, sizeof(set), &set);
	}
	return 0;
}

static void xsk_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned q = 0; q < e->nw; q++) {
		uint64_t d = __atomic_load_n(&e->w[q].done, __ATOMIC_RELAXED);
		st->tx.pkts += d;
		/* Completions come in posting order: the first d frames of the pattern. */
		st->tx.bytes += e->mix ? xp_mix_bytes(e->mix, d) : d * e->w[q].frame_len;
		st->tx.errors += __atomic_load_n(&e->w[q].errors, __ATOMIC_RELAXED);
		/* Hold tests: the RSTs that closed the held connections. */
		st->tx.rst_sent += __atomic_load_n(&e->w[q].rst_done, __ATOMIC_RELAXED);
		if (!e->w[q].running)
			xp_pace_add(&st->pace, &e->w[q].pace); /* complete once the thread is joined */
	}
#if defined(XP_MUTATE) && XP_MUTATE == 1
	st->tx.pkts += st->tx.pkts > 0; /* scripts/mutate.sh: one frame too many */
#endif
	st->mode = e->mode;
}

static void xsk_stop(struct xp_engine *e)
{
	e->stop = true;
	for (unsigned q = 0; q < e->nw; q++) {
		if (e->w[q].running)
			pthread_join(e->w[q].thread, NULL);
		e->w[q].running = false;
	}
}

/* Stamped frames of send interval i, all threads (engine/send_bins.h). */
static int xsk_sent_in(struct xp_engine *e, uint64_t interval, uint64_t *sent)
{
	int r = 0;

	*sent = 0;
	if (e->place == XP_STAMP_NONE)
		return -EOPNOTSUPP;
	for (unsigned q = 0; q < e->nw && !r; q++)
		r = xp_send_bins_read(&e->w[q].bins, interval, sent);
	if (r)
		*sent = 0;
	return r;
}

static void xsk_set_t0(struct xp_engine *e, uint64_t t0)
{
	e->cfg.frames.stamp.t0 = t0; /* the threads read it once started */
}

static void xsk_destroy(struct xp_engine *e)
{
	if (!e)
		return;
	xsk_stop(e);
	for (unsigned q = 0; q < e->nw; q++)
		worker_teardown(&e->w[q]);
	mix_free(e);
	free(e->w);
	free(e);
}

const struct xp_engine_ops xp_engine_xsk = {
	.name = "xsk",
	XP_FRAME_ENGINE,
	XP_ENGINE_LIFECYCLE(xsk),
	.sent_in = xsk_sent_in,
	.set_t0 = xsk_set_t0,
};
