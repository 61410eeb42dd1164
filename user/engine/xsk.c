/*
 * AF_XDP sending engine: one TX-only AF_XDP socket and one pinned thread per
 * queue. Each socket's UMEM is filled once with prebuilt frames that differ
 * only in their ports (so the load spreads over flows and queues); the hot
 * loop then only posts descriptors, kicks the kernel and reaps completions.
 * No allocations. Stream tests with stamps (cfg->frames.stamp.ival != 0)
 * write the 8-byte stamp of bpf/lib/stamp.h into each frame before it is
 * posted (stream = stream_base + thread, seq = the thread's frame number,
 * the batch's send time; frame/frame_stamp.h fixes the checksums
 * incrementally) and count the frames per send interval (sent_in); a frame
 * is rewritten only once the kernel has completed its previous use.
 *
 * Mixed sizes (cfg->frames.mix, stream tests): UMEM frame i holds the
 * frame of pattern position i % plen, built at its size by frame_build, and
 * only the first nslots - nslots % plen frames are used, so going
 * round the UMEM keeps the pattern: the descriptors' lengths follow it, and
 * the stamp goes where each size has room for it.
 *
 * Jumbo frames (longer than a 4096-byte chunk, up to -l 9018): each slot is
 * several chunks and a frame goes out as one descriptor per chunk, chained
 * with XDP_PKT_CONTD on a socket bound with XDP_USE_SG (multi-buffer AF_XDP,
 * copy mode builds one skb from them). The UMEM keeps NUM_FRAMES chunks, so
 * it holds fewer slots; completions come one per descriptor and a frame
 * counts as done at its first (xsk_reap).
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
 * for days. The XDP programs (bpf/xdp_connect.bpf.c, bpf/server.bpf.c)
 * complete the handshakes; nothing here waits for an answer.
 */
#include "engine/xsk_internal.h"

/* The UMEM's shape for w (engine/xsk_internal.h): chunk, slots, frames in use. */
int xsk_slots_plan(const struct xp_engine *e, const struct frame_layout *lay, struct xsk_worker *w, char *err,
		   size_t errlen)
{
	/* The slot fits the longest frame (a mix's template is its largest size). */
	uint32_t maxlen = lay->len;
	for (unsigned k = 0; e->mix && k < e->mix->n; k++)
		maxlen = e->mix_lay[k].len > maxlen ? e->mix_lay[k].len : maxlen;
	w->frame_len = lay->len;
	if (maxlen <= XSK_CHUNK_MAX) {
		w->chunk = maxlen + XDP_PACKET_HEADROOM <= 2048 ? 2048 : XSK_CHUNK_MAX;
		w->segs = 1;
	} else {
		w->chunk = XSK_CHUNK_MAX;
		w->segs = (maxlen + XSK_CHUNK_MAX - 1) / XSK_CHUNK_MAX;
	}
	if (e->conn && w->segs > 1) {
		snprintf(err, errlen, "%u-byte frames are too long for the xsk engine's connection tests (at most %u)",
			 maxlen + 4, XSK_CHUNK_MAX + 4);
		return -EMSGSIZE;
	}
	w->frame_sz = w->chunk * w->segs;
	/* NUM_FRAMES chunks whatever the frame: a jumbo UMEM is no larger. */
	w->nslots = e->umem_chunks / w->segs;
	w->nframes = e->mix ? w->nslots - w->nslots % e->mix->plen : w->nslots;
	if (!w->nframes) {
		snprintf(err, errlen, "a %u-frame mix pattern of %u-byte frames does not fit the AF_XDP UMEM",
			 e->mix->plen, maxlen + 4);
		return -EMSGSIZE;
	}
	w->area_size = (size_t)w->nslots * w->frame_sz;
	return 0;
}

/* Prebuilds every slot's frame in w->area (area_size bytes, xsk_slots_plan's). */
int xsk_slots_fill(const struct xp_engine *e, struct xsk_worker *w, const uint8_t *tmpl, const struct frame_layout *lay,
		   char *err, size_t errlen)
{
	const struct xp_engine_cfg *c = &e->cfg;
	if (e->nflows)
		return 0; /* flows: frames are copied in per send, onto slots zero from mmap (engine/xsk_flows.c) */
	/* Queue q takes flows q, q+queues, q+2*queues... */
	for (uint64_t i = 0; i < w->nslots; i++) {
		uint8_t *f = (uint8_t *)w->area + i * w->frame_sz;
		uint16_t sp, dp;
		const struct frame_layout *fl = lay;
		if (e->mix)
			fl = &e->mix_lay[xsk_mix_k(e, i)];
		/* Never past the slot: its size came from these very lengths. */
		if (fl->len > w->frame_sz) {
			snprintf(err, errlen, "internal: a %u-byte frame in a %u-byte AF_XDP slot", fl->len, w->frame_sz);
			return -EMSGSIZE;
		}
		memcpy(f, e->mix ? e->mix_tmpl[xsk_mix_k(e, i)] : tmpl, fl->len);
		xp_flow_ports(c, (w->queue - c->frames.first_queue) + i * e->nw, &sp, &dp);
		frame_set_ports(f, fl, sp, dp);
	}
	return 0;
}

static int worker_setup(struct xp_engine *e, struct xsk_worker *w, const uint8_t *tmpl,
			const struct frame_layout *lay, char *err, size_t errlen)
{
	const struct xp_engine_cfg *c = &e->cfg;
	int r = xsk_slots_plan(e, lay, w, err, errlen);
	if (r)
		return r;
	w->area = mmap(NULL, w->area_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->area == MAP_FAILED) {
		w->area = NULL;
		snprintf(err, errlen, "cannot allocate %zu MiB for the AF_XDP UMEM", w->area_size >> 20);
		return -ENOMEM;
	}
	r = xsk_slots_fill(e, w, tmpl, lay, err, errlen);
	if (!r && e->nflows)
		r = xsk_flows_worker(e, w, err, errlen);
	if (r)
		return r;
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
		.frame_size = w->chunk,
		.frame_headroom = 0,
	};
	r = xsk_umem__create(&w->umem, w->area, w->area_size, &w->fq, &w->cq, &ucfg);
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
	/* Jumbo frames: several descriptors a frame (kernels since 6.6). */
	const __u16 sg = w->segs > 1 ? XDP_USE_SG : 0;
	/*
	 * Zero-copy where the driver has it, copy mode otherwise (veth).
	 * EBUSY right after an earlier socket on this queue was closed is
	 * transient: the kernel detaches its buffer pool from the queue in
	 * deferred work, ~20 ms later here. So engines created back to back
	 * (--compare, benchmarks, tests) retry for up to a second.
	 */
	double busy_end = xp_now() + 1.0;
	for (;;) {
		scfg.bind_flags = XDP_ZEROCOPY | sg;
		r = xsk_socket__create(&w->xsk, c->ifname, w->queue, w->umem, NULL, &w->tx, &scfg);
		if (r) {
			scfg.bind_flags = XDP_COPY | sg;
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
			 strerror(-r), r == -EBUSY ? " (another AF_XDP socket uses it: try --first-queue)"
				       : sg && r == -EINVAL ? " (frames over 4100 bytes need multi-buffer AF_XDP, "
							      "kernel 6.6 or later)" : "");
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
	xsk_flows_worker_free(w);
	w->xsk = NULL;
	w->umem = NULL;
	w->area = NULL;
}

/*
 * Posts want frames from slot *next on (round the nframes in use) and submits
 * them: their descriptors (one each, or a jumbo frame's chunks), with the
 * stamp written first where the engine stamps (send time ts). All or none:
 * the frames posted, want or 0 when the TX ring lacks room.
 */
uint32_t xsk_post_batch(struct xsk_worker *w, uint64_t *next, uint32_t want, uint64_t ts)
{
	struct xp_engine *e = w->eng;
	const bool stamp = e->place != XP_STAMP_NONE;
	const uint32_t stream = e->cfg.frames.stamp.stream_base + w->rank;
	uint32_t ndesc = want;
	if (w->segs > 1) {
		ndesc = 0;
		for (uint32_t i = 0; i < want; i++) {
			uint64_t slot = (*next + i) % w->nframes;
			ndesc += xsk_descs(w, e->mix ? e->mix_lay[xsk_mix_k(e, slot)].len : w->frame_len);
		}
	}
	uint32_t idx;
	if (!want || xsk_ring_prod__reserve(&w->tx, ndesc, &idx) != ndesc)
		return 0;
	for (uint32_t i = 0; i < want; i++) {
		uint64_t slot = (*next)++ % w->nframes;
		uint64_t addr = slot * w->frame_sz;
		const struct frame_layout *fl = &e->slay;
		enum xp_stamp_place place = e->place;
		if (e->mix) {
			/* The pattern position is the slot's (nframes: whole patterns). */
			unsigned k = xsk_mix_k(e, slot);
			fl = &e->mix_lay[k];
			place = e->mix_place[k];
		}
		if (stamp)
			frame_put_stamp((uint8_t *)w->area + addr, fl, place, xp_stamp_pack(stream, w->seq++, ts),
					e->cfg.frames.stamp.key);
		idx += xsk_post(w, idx, addr, e->mix ? fl->len : w->frame_len);
	}
	xsk_ring_prod__submit(&w->tx, ndesc);
	return want;
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
		xsk_conn_main(w);
	else if (e->nflows)
		xsk_flows_main(w);
	else
		stream_main(w);
	xp_thread_clock_end(&clk, &w->pace);
	w->pace.wait_s = w->waited;
	w->pace.pushback = w->pushback;
	return NULL;
}

static void stream_main(struct xsk_worker *w)
{
	struct xp_engine *e = w->eng;
	struct xp_pacer pc;
	xsk_pacer_start(&pc, w, e->cfg.pps > 0 ? e->cfg.pps / e->nw : 0, e->cfg.burst);
	uint64_t posted = 0, next = 0;
	double t0 = xp_now(), deadline = t0 + e->cfg.max_seconds;
	unsigned iter = 0;
	const bool stamp = e->place != XP_STAMP_NONE;

	while (!e->stop) {
		if ((++iter & 1023) == 0 && xp_now() > deadline)
			break;
		uint32_t want = xsk_pacer_want(w, &pc);
		if (!want) {
			xsk_reap(w);
			continue;
		}
		uint64_t ts = 0;
		if (stamp) {
			/* Stamps rewrite every slot: xsk_room's rule. */
			want = xsk_room(w, posted, want, xsk_reap);
			if (!want)
				continue;
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
		uint32_t n = xsk_post_batch(w, &next, want, ts);
		if (n < want)
			w->pushback++; /* TX ring full: the kernel has not taken what is on it */
		if (n && stamp)
			xp_send_bins_count(&w->bins, e->cfg.frames.stamp.t0, e->cfg.frames.stamp.ival, ts, n);
		posted += n;
		xp_pacer_sent(&pc, n);
		if (xsk_kick_reap(w, xsk_reap))
			break;
	}
	xsk_drain(w, posted, xsk_reap);
	/* Posted but never completed (the drain timed out): not sent. */
	if (stamp && w->done < posted)
		xp_send_bins_uncount(&w->bins, posted - w->done);
}

static void mix_free(struct xp_engine *e)
{
	for (unsigned k = 0; k < XP_MIX_MAX_SIZES; k++)
		free(e->mix_tmpl[k]);
}

/*
 * Mixed sizes: each size's frame built by frame_build and its stamp place.
 * With stamps on every size must carry one (as in the live engine:
 * engine/live_prog.c), or loss and latency would cover some sizes
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

/*
 * Everything of xsk_create before the sockets: the engine, its template
 * (tmpl, 9216 bytes) and layout, connection tests' tuples, stamps, the mix.
 * 0 with *out set, or -errno with err set and nothing left allocated.
 */
int xsk_prepare(const struct xp_engine_cfg *cfg, struct xp_engine **out, uint8_t *tmpl, struct frame_layout *lay,
		char *err, size_t errlen)
{
	struct xp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	e->umem_chunks = NUM_FRAMES;
	e->nw = cfg->frames.queues ? cfg->frames.queues : 1;
	e->w = calloc(e->nw, sizeof(*e->w));
	if (!e->w) {
		free(e);
		return -ENOMEM;
	}
	const char *ferr = NULL;
	size_t len = 0;
	if (!frame_layout_of(&cfg->frames.tmpl, lay, &ferr))
		len = frame_build(&cfg->frames.tmpl, tmpl, XSK_TMPL_MAX, &ferr);
	if (!len) {
		snprintf(err, errlen, "cannot build the test frame: %s", ferr ? ferr : "invalid");
		xsk_unprepare(e);
		return -EINVAL;
	}
	int r = xsk_conn_setup(e, lay, err, errlen);
	if (r) {
		xsk_unprepare(e);
		return r;
	}
	/* Stamps: stream tests that asked for them, where the frame has room. */
	e->slay = *lay;
	e->clock = cfg->frames.stamp.tai ? CLOCK_TAI : CLOCK_MONOTONIC;
	e->place = cfg->kind == XP_TEST_STREAM && cfg->frames.stamp.ival ? frame_stamp_place(&cfg->frames.tmpl, lay)
									    : XP_STAMP_NONE;
	if (cfg->frames.nflows) {
		/* Flows: each flow's frames and stamps of its own (engine/xsk_flows.c); the template is unused. */
		e->place = XP_STAMP_NONE;
		r = xsk_flows_prepare(e, err, errlen);
	} else if (cfg->kind == XP_TEST_STREAM && cfg->frames.mix.n) {
		r = mix_setup(e, err, errlen);
	}
	if (r) {
		xsk_unprepare(e);
		return r;
	}
	for (unsigned q = 0; q < e->nw; q++) {
		e->w[q].eng = e;
		e->w[q].queue = cfg->frames.first_queue + q;
		e->w[q].rank = q;
	}
	*out = e;
	return 0;
}

/* Frees what xsk_prepare allocated (the workers' UMEMs are theirs to free). */
void xsk_unprepare(struct xp_engine *e)
{
	if (!e)
		return;
	mix_free(e);
	xsk_flows_free(e);
	free(e->w);
	free(e);
}

static int xsk_create(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen)
{
	struct xp_engine *e;
	uint8_t tmpl[XSK_TMPL_MAX];
	struct frame_layout lay;
	int r = xsk_prepare(cfg, &e, tmpl, &lay, err, errlen);
	if (r)
		return r;
	if (e->nflows)
		lay.len = (uint16_t)e->flow_maxlen; /* the slots fit the longest frame of any flow */
	for (unsigned q = 0; q < e->nw; q++) {
		r = worker_setup(e, &e->w[q], tmpl, &lay, err, errlen);
		if (r) {
			for (unsigned j = 0; j <= q; j++)
				worker_teardown(&e->w[j]);
			xsk_unprepare(e);
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
		if (e->nflows)
			for (unsigned f = 0; e->w[q].fbytes && f < e->nflows; f++)
				st->tx.bytes += __atomic_load_n(&e->w[q].fbytes[f], __ATOMIC_RELAXED);
		else
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

static void xsk_set_stamp_key(struct xp_engine *e, const uint64_t key[2])
{
	/* Read by the threads, which start after this. */
	e->cfg.frames.stamp.key[0] = key[0];
	e->cfg.frames.stamp.key[1] = key[1];
}

static void xsk_destroy(struct xp_engine *e)
{
	if (!e)
		return;
	xsk_stop(e);
	for (unsigned q = 0; q < e->nw; q++)
		worker_teardown(&e->w[q]);
	xsk_unprepare(e);
}

const struct xp_engine_ops xp_engine_xsk = {
	.name = "xsk",
	.title = "the xsk engine",
	XP_FRAME_ENGINE,
	XP_ENGINE_LIFECYCLE(xsk),
	.read_flows = xsk_read_flows,
	.flow_frames_max = XP_FLOW_TABLE_MAX,
	.sent_in = xsk_sent_in,
	.set_t0 = xsk_set_t0,
	.set_stamp_key = xsk_set_stamp_key,
};
