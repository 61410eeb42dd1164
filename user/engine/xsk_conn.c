/*
 * The AF_XDP engine's connection tests (engine/xsk.c's header comment says
 * how they differ from stream tests): the tuple numbering and RST template
 * (xsk_conn_setup), and the sending loop that rewrites every SYN before it
 * is posted, takes frames from a free stack and closes held connections
 * with RSTs at the end (xsk_conn_main).
 */
#include "engine/xsk_internal.h"

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
			xp_tuple_write(m, f, &e->rst_lay, xp_tuple_num(m, k), xp_tuple_isn(m, k) + 1);
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
		xsk_kick(w);
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
	xsk_pacer_start(&pc, w, pps, 0);
	while (w->rst_posted < total && !w->fatal) {
		if (xp_now() > end)
			break;
		uint32_t want = xsk_pacer_want(w, &pc);
		if (!want) {
			conn_reap(w);
			continue;
		}
		if (want > total - w->rst_posted)
			want = (uint32_t)(total - w->rst_posted);
		uint64_t before = w->rst_posted;
		conn_post(w, want, true);
		xp_pacer_sent(&pc, (uint32_t)(w->rst_posted - before));
		int f = xsk_kick(w);
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
void xsk_conn_main(struct xsk_worker *w)
{
	struct xp_engine *e = w->eng;
	const struct xp_engine_cfg *c = &e->cfg;
	struct xp_pacer pc;
	xsk_pacer_start(&pc, w, c->pps > 0 ? c->pps / e->nw : 0, c->burst);
	/* Hold: this thread's share of k = 0 .. parallel-1. */
	uint64_t limit = UINT64_MAX;
	if (c->kind == XP_TEST_HOLD)
		limit = c->parallel > w->rank ? (c->parallel - w->rank + e->nw - 1) / e->nw : 0;
	double t0 = xp_now(), deadline = t0 + c->max_seconds;
	unsigned iter = 0;

	w->k = w->rank;
	w->t = xp_tuple_num(&e->map, w->rank);
	while (!e->stop) {
		if ((++iter & 1023) == 0 && xp_now() > deadline)
			break;
		if (w->syn_posted >= limit) {
			/* Hold: all sent. Idle until stopped, still reaping. */
			if (w->done < w->syn_posted)
				xsk_kick(w);
			conn_reap(w);
			if (xp_now() > deadline)
				break;
			xp_sleep(1e-3);
			continue;
		}
		uint32_t want = xsk_pacer_want(w, &pc);
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
		int f = xsk_kick(w);
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

/* Connection tests: the tuple numbering and the RST template. */
int xsk_conn_setup(struct xp_engine *e, const struct frame_layout *lay, char *err, size_t errlen)
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
