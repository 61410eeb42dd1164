/*
 * The AF_XDP engine's stream tests with flows (issue 26; cfg.frames.nflows
 * > 0). Each flow's frames for one period of its patterns are built once
 * (engine/flow_table.h), shared by the threads. Thread t sends its flows in
 * the order of its schedule (engine/flow_sched.h): frame k of the thread is
 * of flow sched.flow[k % len]; its pacer paces the thread's total sched.pps.
 *
 * Numbering: the n-th frame thread t sends of flow f is stamped with stream
 * xp_flow_stream_of(f, t) (frame/flow_streams.h) and seq n, so every stream
 * counts 0, 1, 2... and the server's loss is exact per stream. Its headers
 * and size are those of the flow's frame number n * S + r, where S is the
 * number of threads that send f (T, or 1 when f has a thread of its own)
 * and r this thread's rank among them: the threads together send the
 * flow's frames 0, 1, 2... each once, so a capture of a flow shows its
 * declared sequences whatever T. A flow with a frame count F is sent by
 * thread r up to frame numbers below F; its positions in the schedule then
 * pass unused (the pacer counts them), so the other flows keep their rates.
 *
 * Posting copies the entry's prefix (headers and stamp area) into the slot
 * and writes the stamp, so a slot is rewritten on every use: as with stamps
 * of one stream, only once the kernel completed its previous use.
 * Completions name their slot, whose flow and length were noted at posting:
 * per-flow frames and bytes on the wire (read_flows).
 */
#include "engine/xsk_internal.h"

/* Flow tables and the longest frame. 0, or -errno with err. */
int xsk_flows_prepare(struct xp_engine *e, char *err, size_t errlen)
{
	const struct xp_engine_cfg *c = &e->cfg;
	char why[200];
	uint64_t left = XP_FLOW_TABLE_MAX;
	if (c->kind != XP_TEST_STREAM) {
		snprintf(err, errlen, "flows are for frame streams, not connection tests");
		return -EINVAL;
	}
	e->nflows = c->frames.nflows;
	e->ftab = calloc(e->nflows, sizeof(*e->ftab));
	if (!e->ftab)
		return -ENOMEM;
	for (unsigned f = 0; f < e->nflows; f++) {
		if (xp_flow_table_build(&c->frames.flows[f], left, c->frames.stamp.ival != 0, &e->ftab[f], why,
					sizeof(why))) {
			snprintf(err, errlen, "flow %u: %s%s", f + 1, why,
				 left < XP_FLOW_TABLE_MAX ? " (the xsk engine holds 65536 frames of all flows' periods)" : "");
			return -EINVAL;
		}
		left -= e->ftab[f].period;
		for (uint64_t n = 0; n < e->ftab[f].period; n++)
			if (e->ftab[f].e[n].lay.len > e->flow_maxlen)
				e->flow_maxlen = e->ftab[f].e[n].lay.len;
		if (e->ftab[f].e[0].place != XP_STAMP_NONE)
			e->place = XP_STAMP_AT_PAYLOAD; /* some frames stamped: sent_in counts them */
	}
	return 0;
}

void xsk_flows_free(struct xp_engine *e)
{
	for (unsigned f = 0; e->ftab && f < e->nflows; f++)
		xp_flow_table_free(&e->ftab[f]);
	free(e->ftab);
	e->ftab = NULL;
}

/* Thread w's schedule and per-flow state (after xsk_slots_plan). 0, or -errno with err. */
int xsk_flows_worker(struct xp_engine *e, struct xsk_worker *w, char *err, size_t errlen)
{
	const struct xp_engine_cfg *c = &e->cfg;
	unsigned T = e->nw, t = w->rank, nf = e->nflows;
	w->sched = calloc(1, sizeof(*w->sched));
	w->wf = calloc(nf, sizeof(*w->wf));
	w->slot = calloc(w->nslots, sizeof(*w->slot));
	w->fdone = calloc(nf, sizeof(*w->fdone));
	w->fbytes = calloc(nf, sizeof(*w->fbytes));
	if (!w->sched || !w->wf || !w->slot || !w->fdone || !w->fbytes)
		return -ENOMEM;
	if (xp_flow_sched_build(c->frames.flows, nf, t, T, w->sched, err, errlen))
		return -EINVAL;
	for (unsigned f = 0; f < nf; f++) {
		struct xsk_wflow *x = &w->wf[f];
		double share = xp_flow_share(f, t, nf, T);
		unsigned st = xp_flow_stream_of(f, t, nf, T);
		x->stream = (uint16_t)(st == XP_FLOW_NO_STREAM ? 0 : st);
		x->mul = share >= 1.0 ? 1 : T;
		x->off = share >= 1.0 ? 0 : t;
		x->limit = UINT64_MAX;
		if (c->frames.flows[f].frames) {
			uint64_t F = c->frames.flows[f].frames;
			x->limit = F > x->off ? (F - x->off + x->mul - 1) / x->mul : 0;
		}
		if (share <= 0)
			x->limit = 0;
	}
	return 0;
}

void xsk_flows_worker_free(struct xsk_worker *w)
{
	free(w->sched);
	free(w->wf);
	free(w->slot);
	free(w->fdone);
	free(w->fbytes);
	w->sched = NULL;
	w->wf = NULL;
	w->slot = NULL;
	w->fdone = w->fbytes = NULL;
}

/* Completions reaped (0: none), counted per flow by the slot they name. */
static uint32_t reap_flows(struct xsk_worker *w)
{
	uint32_t idx;
	uint32_t n = xsk_ring_cons__peek(&w->cq, RING_SIZE, &idx);
	if (!n)
		return 0;
	uint32_t frames = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t addr = *xsk_ring_cons__comp_addr(&w->cq, idx + i);
		if (addr % w->frame_sz)
			continue; /* a jumbo frame's later chunk: the frame counts at its first */
		const struct xsk_slot *s = &w->slot[(addr / w->frame_sz) % w->nslots];
		__atomic_store_n(&w->fdone[s->flow], w->fdone[s->flow] + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&w->fbytes[s->flow], w->fbytes[s->flow] + s->len, __ATOMIC_RELAXED);
		w->stamped_busy -= s->stamped;
		frames++;
	}
	xsk_ring_cons__release(&w->cq, n);
	__atomic_store_n(&w->done, w->done + frames, __ATOMIC_RELAXED);
	return n;
}

/*
 * Posts the frames of the next want schedule positions (those of flows not
 * yet done) from slot *next on, stamped with time ts. All or nothing: the
 * positions consumed (want, or 0 when the TX ring lacks room); *frames the
 * frames posted among them, *stamped those stamped.
 */
static uint32_t post_flows(struct xsk_worker *w, uint64_t *next, uint64_t *k, uint32_t want, uint64_t ts,
			   uint32_t *frames, uint32_t *stamped)
{
	struct xp_engine *e = w->eng;
	const struct xp_flow_sched *s = w->sched;
	uint32_t ndesc = 0, nfr = 0;
	/* First pass: which positions give a frame (each its flow's next number, taken now and given back if
	 * the ring lacks room), and their descriptors. */
	uint64_t sent[BATCH];
	for (uint32_t i = 0; i < want; i++) {
		unsigned f = s->flow[(*k + i) % s->len];
		struct xsk_wflow *x = &w->wf[f];
		sent[i] = x->sent < x->limit ? x->sent++ : UINT64_MAX;
		if (sent[i] == UINT64_MAX)
			continue;
		nfr++;
		if (w->segs > 1) {
			const struct xp_flow_table *tb = &e->ftab[f];
			ndesc += xsk_descs(w, tb->e[(sent[i] * x->mul + x->off) % tb->period].lay.len);
		} else {
			ndesc++;
		}
	}
	*frames = nfr;
	*stamped = 0;
	uint32_t idx = 0;
	if (nfr && xsk_ring_prod__reserve(&w->tx, ndesc, &idx) != ndesc) {
		for (uint32_t i = 0; i < want; i++)
			if (sent[i] != UINT64_MAX)
				w->wf[s->flow[(*k + i) % s->len]].sent--;
		return 0;
	}
	for (uint32_t i = 0; i < want; i++) {
		unsigned f = s->flow[(*k)++ % s->len];
		if (sent[i] == UINT64_MAX)
			continue;
		const struct xsk_wflow *x = &w->wf[f];
		uint64_t n = sent[i];
		const struct xp_flow_table *tb = &e->ftab[f];
		uint64_t m = n * x->mul + x->off; /* the flow-wide frame number */
		const struct xp_flow_entry *en = &tb->e[m % tb->period];
		uint64_t slot = (*next)++ % w->nframes;
		uint64_t addr = slot * w->frame_sz;
		uint8_t *p = (uint8_t *)w->area + addr;
		memcpy(p, en->pre, XP_FLOW_PRE);
		if (tb->seq_adv) /* a TCP data flow: its segment starts where the last one ended */
			frame_set_seq(p, &en->lay, xp_flow_seq_of(tb, m));
		if (en->place != XP_STAMP_NONE) {
			frame_put_stamp(p, &en->lay, (enum xp_stamp_place)en->place, xp_stamp_pack(x->stream, n, ts),
					e->cfg.frames.stamp.key);
			(*stamped)++;
		}
		w->slot[slot] = (struct xsk_slot){ .flow = (uint16_t)f, .len = en->lay.len,
						   .stamped = en->place != XP_STAMP_NONE };
		idx += xsk_post(w, idx, addr, en->lay.len);
	}
	if (nfr)
		xsk_ring_prod__submit(&w->tx, ndesc);
	return want;
}

/* Flows this thread still has to send (a limit not reached). */
static unsigned flows_left(const struct xsk_worker *w)
{
	unsigned left = 0;
	for (unsigned f = 0; f < w->eng->nflows; f++)
		left += w->sched->count[f] && w->wf[f].sent < w->wf[f].limit;
	return left;
}

void xsk_flows_main(struct xsk_worker *w)
{
	struct xp_engine *e = w->eng;
	struct xp_pacer pc;
	if (!w->sched->len)
		return; /* this thread sends no flow */
	xsk_pacer_start(&pc, w, w->sched->pps, e->cfg.burst);
	uint64_t posted = 0, next = 0, k = 0;
	double t0 = xp_now(), deadline = t0 + e->cfg.max_seconds;
	unsigned iter = 0, left = flows_left(w);
	const bool stamp = e->place != XP_STAMP_NONE;

	while (!e->stop && left) {
		if ((++iter & 1023) == 0 && xp_now() > deadline)
			break;
		uint32_t want = xsk_pacer_want(w, &pc);
		if (!want) {
			reap_flows(w);
			continue;
		}
		/* Every slot is rewritten: xsk_room's rule. */
		want = xsk_room(w, posted, want, reap_flows);
		if (!want)
			continue;
		uint64_t ts = stamp ? stamp_now(e->clock) : 0; /* one clock read a batch, as one stream's */
		uint32_t frames, stamped;
		uint32_t n = post_flows(w, &next, &k, want, ts, &frames, &stamped);
		if (n < want)
			w->pushback++; /* TX ring full */
		if (!n)
			frames = stamped = 0;
		if (stamped)
			xp_send_bins_count(&w->bins, e->cfg.frames.stamp.t0, e->cfg.frames.stamp.ival, ts, stamped);
		w->stamped_busy += stamped;
		posted += frames;
		xp_pacer_sent(&pc, n);
		if (frames < n)
			left = flows_left(w);
		if (xsk_kick_reap(w, reap_flows))
			break;
	}
	xsk_drain(w, posted, reap_flows);
	/* Stamped, posted but never completed (the drain timed out): not sent. */
	if (stamp && w->stamped_busy)
		xp_send_bins_uncount(&w->bins, w->stamped_busy);
}

void xsk_read_flows(struct xp_engine *e, uint64_t *pkts, uint64_t *bytes, unsigned n)
{
	for (unsigned f = 0; f < n; f++) {
		pkts[f] = bytes[f] = 0;
		for (unsigned q = 0; f < e->nflows && q < e->nw; q++) {
			if (!e->w[q].fdone)
				continue;
			pkts[f] += __atomic_load_n(&e->w[q].fdone[f], __ATOMIC_RELAXED);
			bytes[f] += __atomic_load_n(&e->w[q].fbytes[f], __ATOMIC_RELAXED);
		}
	}
}
