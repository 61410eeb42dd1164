/*
 * XDP live-frames sending engine ("live"): the kernel itself makes and sends
 * the frames. Each thread calls BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES
 * on bpf/live.bpf.c: for `repeat` runs the kernel takes a page_pool buffer,
 * runs the generator (which writes the next test frame into it) and
 * transmits the XDP_TX'd frame on cfg->ifindex through the driver's
 * ndo_xdp_xmit. No sockets, no UMEM, no copies through an skb on our side:
 * on veth ~7 Mpps per core into an XDP receiver, ~3x AF_XDP copy mode.
 *
 * Stream tests stamp every frame that has room (bpf/lib/stamp.h: stream =
 * thread, seq, send time) and count them per send interval in the
 * generator's per-CPU bins (sent_in); cfg->frames.stamp.ival 0 turns both
 * off. The SYNs of connection tests carry no stamp.
 *
 * Connection tests (kind XP_TEST_CONNECT, the XDP connection engine's -x):
 * the generator runs in SYN mode and makes every frame the SYN of the next
 * connection, with the tuple and ISN the AF_XDP engine would give it
 * (engine/tuples.h, bpf/lib/isn.h); pacing is the same, at cfg->pps SYNs/s.
 * With the XDP connection engine's window (cfg->hs.win, engine/window.h)
 * each SYN takes a free slot and no call runs more frames than there are
 * free slots; hold tests (XP_TEST_HOLD) need the window, whose keeper
 * resets the held connections at the end.
 *
 * Flows (cfg->frames.nflows, issue 26): the generator sends up to 256 flows
 * from header blocks precomputed per flow (engine/live_flows.c,
 * bpf/live_flows.h), each thread in its schedule's order (engine/
 * flow_sched.h) and paced at the schedule's total; a thread whose flows all
 * have fixed frame counts stops after the run that sends the last of them.
 *
 * Threads: one per CPU, pinned before their first run, because the
 * generator keeps its state (frame counter, flow position) per CPU; at most
 * as many threads as CPUs the process may use.
 *
 * Rate control: each thread sends cfg->pps / threads, paced by
 * engine/pacer.h (as the AF_XDP engine is), in units of `repeat` frames (one
 * BPF_PROG_RUN call): a slice of about 100 us of frames (at least 1), or
 * with --burst N (cfg->burst) N frames back to back, scheduled against
 * CLOCK_MONOTONIC from the thread's start; a stall is made up by at most
 * 20 ms of frames, in one call (the pacer's coalesce): every call with
 * repeat > 1 takes the kernel's XDP dispatcher mutex, and while another
 * process changes the dispatcher (attaching or detaching an XDP program, or
 * test-running one that is attached nowhere) each call waits for that mutex
 * through an RCU grace period (10-30 ms). Catching up one 100 us unit per
 * call then sent 9 frames per wait at 90 kpps (444 pps, issue 11).
 * Calls that slept in the kernel are counted (pace.kernel_sleeps) so the
 * report can name the kernel, not the engine, when the load falls short.
 *
 * Holding the program in the XDP dispatcher: BPF_PROG_RUN with repeat > 1
 * adds the program to the kernel's XDP dispatcher for the call and removes
 * it afterwards, and each change waits for an RCU grace period: 15-30 ms of
 * sleep per call here, whatever `repeat` is (repeat 1 skips it: 12 us per
 * call). Paced slices would be impossible. While the program is attached to
 * some netdev the dispatcher already holds it and a call costs ~12 us plus
 * the frames. So create() attaches it (generic mode, bpf_link) to the
 * loopback device of a private network namespace made for nothing else: lo
 * is down there and sees no traffic, nothing is named or left behind (the
 * namespace lives only as long as the engine's fd to it, the process
 * included), and the program passes anything not run on cfg->ifindex.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "engine/pacer.h"
#include "frame/frame.h"
#include "bpf/live.h"
#include "bpf/live.skel.h"
#include "engine/live_prog.h"
#include "engine/live_flows.h"
#include "loader/percpu.h"
#include "util/cpus.h"
#include "util/random.h"
#include "meas/threadclock.h"
#include "util/time.h"
#include "engine/tuples.h"
#include "engine/window.h"

#define CHUNK      16384   /* unpaced: frames per call (~1-10 ms) */
#define BATCH      XP_GEN_BATCH /* frames per kernel batch (page_pool size, flush; the stamp's clock read) */
#define MAX_BURST  (1u << 20)
#define FIRST_WAIT_S 2.0   /* start() waits this long for every thread's first call */

struct live_worker {
	struct xp_engine *eng;
	unsigned idx;      /* thread index: flows idx, idx + T, idx + 2T... */
	int cpu;
	unsigned rxq;      /* rx_queue_index in the ctx */
	pthread_t thread;
	bool running;
	/* written by the worker */
	uint64_t errors;   /* failed calls */
	int first_rc;      /* 0 or -errno of the first call; valid once first_done */
	bool first_done;
	int fatal;         /* errno that stopped the worker, 0 if none */
	struct xp_pace_stats pace; /* written when it ends */
};

struct xp_engine {
	struct xp_engine_cfg cfg;
	struct live_bpf *skel;
	int prog_fd;
	uint8_t tmpl[XP_GEN_MAX_LEN];
	struct frame_layout lay;
	uint32_t in_len;   /* data_in bytes: lay.len, SYNs one more (see live.bpf.c) */
	unsigned nw;
	unsigned burst;    /* 0: slices */
	struct live_worker *w;
	int hold_link;     /* bpf_link of the idle attachment, or -1 */
	int hold_ns;       /* the private namespace it lives in, or -1 */
	volatile bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a worker finished its first call */
	bool sync_init;
	/* Flows (cfg.frames.nflows): each thread's schedule and its runs until
	 * its flows' fixed frame counts are out (UINT64_MAX: no end). */
	struct xp_flow_sched *sched;
	uint64_t *runs;
};

/* One BPF_PROG_RUN call of n frames by thread tid. 0 or -errno. */
static int run_frames(struct xp_engine *e, unsigned tid, struct xdp_md *md, uint32_t n)
{
	xp_gen_new_call(e->skel, tid); /* the stamp: a new call, new batches */
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = e->tmpl,
		.data_size_in = e->in_len,
		.ctx_in = md,
		.ctx_size_in = sizeof(*md),
		.repeat = n,
		.batch_size = n < BATCH ? n : BATCH,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	return bpf_prog_test_run_opts(e->prog_fd, &o) ? -errno : 0;
}

/* This thread's voluntary context switches so far (it slept: a lock, a wait). */
static long vol_switches(void)
{
	struct rusage ru;
	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nvcsw;
}

static void first_result(struct xp_engine *e, struct live_worker *w, int rc)
{
	pthread_mutex_lock(&e->mu);
	w->first_rc = rc;
	w->first_done = true;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

static void *worker_main(void *arg)
{
	struct live_worker *w = arg;
	struct xp_engine *e = w->eng;
	/* 1 us: the default 50 us slack would make every pacing sleep late. */
	prctl(PR_SET_TIMERSLACK, 1000UL);

	/* data_end must equal the data size (no metadata); the queue only has
	 * to exist: live mode runs the program on a fake rxq (queue 0). */
	struct xdp_md md = {
		.data = 0,
		.data_end = e->in_len,
		.ingress_ifindex = (__u32)e->cfg.ifindex,
		.rx_queue_index = w->rxq,
	};
	/* coalesce: a call has a fixed cost that can be long (see pacer.h): catch up in one call. */
	/* Flows: the thread's total, its schedule's (engine/flow_sched.h). */
	double pps = e->cfg.pps > 0 ? e->cfg.pps / e->nw : 0;
	uint64_t runs_left = UINT64_MAX;
	if (e->sched) {
		if (e->sched[w->idx].pps > 0)
			pps = e->sched[w->idx].pps;
		runs_left = e->sched[w->idx].len ? e->runs[w->idx] : 0;
	}
	struct xp_pacer_cfg pcfg = { .pps = pps, .burst = e->burst,
				     .thread = w->idx, .nthreads = e->nw, .unpaced = CHUNK, .coalesce = true,
				     .max_grant = CHUNK, .catchup_excess = e->cfg.catchup_excess };
	struct xp_pacer pc;
	double start = xp_now();
	double deadline = e->cfg.max_seconds > 0 ? start + e->cfg.max_seconds : 1e300;
	xp_pacer_init(&pc, &pcfg, start);
	bool first = true;
	/* Its account for "who held the offered load back": time in BPF_PROG_RUN is busy, the rest waiting. */
	struct xp_thread_clock clk;
	double busy = 0;
	uint64_t early = 0;
	xp_thread_clock_start(&clk, w->cpu);

	while (!e->stop && runs_left) {
		double now = xp_now();
		if (now > deadline)
			break;
		uint32_t unit = xp_pacer_next(&pc);
		if (!unit)
			continue; /* not due yet (it slept): ask again */
		if (unit > runs_left)
			unit = (uint32_t)runs_left; /* flows of fixed frame counts: no run past their end */
		const struct xp_win_maps *win = &e->cfg.hs.win;
		uint64_t taken0 = 0;
		if (win->size) {
			/* The window (-P): no more runs than free slots, as a run
			 * that finds none sends nothing. Full: wait for replies
			 * (or, -k, for the end). */
			uint64_t avail = xp_win_avail(win);
			if (!avail) {
				xp_sleep(e->cfg.kind == XP_TEST_HOLD ? 1e-3 : 2e-5);
				continue;
			}
			if (unit > avail)
				unit = (uint32_t)avail;
			taken0 = __atomic_load_n(&win->ctl->taken, __ATOMIC_RELAXED);
		}
		/* A voluntary context switch inside the call is the kernel putting
		 * us to sleep (the XDP dispatcher's mutex, see pacer.h): counted
		 * apart, for the account of who held the load back. */
		long sw0 = vol_switches();
		double tr = xp_now();
		int rc = run_frames(e, w->idx, &md, unit);
		double dt = xp_now() - tr;
		busy += dt;
		if (dt > w->pace.longest_call_s)
			w->pace.longest_call_s = dt;
		if (vol_switches() != sw0) {
			w->pace.kernel_sleeps++;
			w->pace.kernel_sleep_s += dt;
		}
		if (first && rc == -EINVAL && md.rx_queue_index) {
			/* Fewer rx queues than tx queues: any existing queue does. */
			md.rx_queue_index = 0;
			rc = run_frames(e, w->idx, &md, unit);
		}
		if (first) {
			first = false;
			first_result(e, w, rc);
			if (rc)
				break;
		}
		if (rc == -EINTR || rc == -EAGAIN) {
			early++;
			continue; /* the kernel stopped early; the counter knows how far */
		}
		if (rc) {
			__atomic_store_n(&w->errors, w->errors + 1, __ATOMIC_RELAXED);
			w->fatal = -rc;
			break;
		}
		if (win->size) {
			/* What went out (other threads' SYNs included: a bound). */
			uint64_t got = __atomic_load_n(&win->ctl->taken, __ATOMIC_RELAXED) - taken0;
			unit = got < unit ? (uint32_t)got : unit;
		}
		xp_pacer_sent(&pc, unit);
		if (runs_left != UINT64_MAX)
			runs_left -= unit;
	}
	if (first) /* stopped before the first call */
		first_result(e, w, 0);
	xp_thread_clock_end(&clk, &w->pace);
	w->pace.wait_s = w->pace.wall_s > busy ? w->pace.wall_s - busy : 0;
	w->pace.pushback = early;
	w->pace.catchups = pc.catchups;
	w->pace.max_grant = pc.max_grant;
	return NULL;
}

static void live_set_stamp_key(struct xp_engine *e, const uint64_t key[2])
{
	e->cfg.frames.stamp.key[0] = key[0];
	e->cfg.frames.stamp.key[1] = key[1];
	xp_gen_set_key(e->skel, key);
}

static void live_destroy(struct xp_engine *e);

static int live_create(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen)
{
	struct xp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cfg = *cfg;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	e->sync_init = true;
	e->hold_link = e->hold_ns = -1;
	if (cfg->ifindex <= 0) {
		snprintf(err, errlen, "no interface to send on (ifindex %d)", cfg->ifindex);
		live_destroy(e);
		return -EINVAL;
	}

	int cpus[CPU_SETSIZE];
	unsigned ncpu = (unsigned)xp_allowed_cpus(cpus, CPU_SETSIZE);
	/* The generator's state is per CPU: one thread per CPU at most. */
	e->nw = cfg->frames.queues ? cfg->frames.queues : 1;
	if (cfg->frames.nflows && e->nw > ncpu) {
		/* The server maps stamp streams to flows by the queues given
		 * (frame/flow_streams.h): fewer threads would leave streams out. */
		snprintf(err, errlen, "--queues %u with flows needs a sending thread per queue, and the live engine "
			 "has %u CPUs to pin them on: give --queues %u at most", e->nw, ncpu, ncpu);
		live_destroy(e);
		return -EINVAL;
	}
	if (e->nw > ncpu)
		e->nw = ncpu;
	if (cfg->burst > MAX_BURST) {
		snprintf(err, errlen, "--burst %u is too large (at most %u frames)", cfg->burst, MAX_BURST);
		live_destroy(e);
		return -EINVAL;
	}
	e->burst = cfg->burst;
	int r = xp_gen_load(cfg, e->nw, &e->skel, e->tmpl, &e->lay, err, errlen);
	if (r) {
		live_destroy(e);
		return r;
	}
	/* tmpl has room: SYNs are far shorter than XP_GEN_MAX_LEN. */
	e->in_len = xp_gen_in_len(e->skel, &e->lay);
	e->prog_fd = bpf_program__fd(e->skel->progs.xdp_live);
	r = xp_gen_hold(e->skel, &e->hold_link, &e->hold_ns, err, errlen);
	if (r) {
		live_destroy(e);
		return r;
	}
	e->w = calloc(e->nw, sizeof(*e->w));
	int ncpus = libbpf_num_possible_cpus();
	unsigned *cpu_tid = calloc(ncpus > 0 ? (size_t)ncpus : 1, sizeof(*cpu_tid));
	if (!e->w || !cpu_tid) {
		free(cpu_tid);
		live_destroy(e);
		return -ENOMEM;
	}
	for (unsigned t = 0; t < e->nw; t++) {
		struct live_worker *w = &e->w[t];
		w->eng = e;
		w->idx = t;
		w->rxq = cfg->frames.first_queue + t;
		/* Same placement as the AF_XDP engine: queue q on CPU q mod n. */
		w->cpu = cpus[(cfg->frames.first_queue + t) % ncpu];
		if (w->cpu < ncpus)
			cpu_tid[w->cpu] = t;
	}
	r = xp_gen_init_state(e->skel, cpu_tid, ncpus > 0 ? (unsigned)ncpus : 0);
	if (r) {
		free(cpu_tid);
		snprintf(err, errlen, "cannot initialise the generator's state: %s", strerror(-r));
		live_destroy(e);
		return r;
	}
	if (cfg->frames.nflows) {
		e->sched = calloc(e->nw, sizeof(*e->sched));
		e->runs = calloc(e->nw, sizeof(*e->runs));
		r = !e->sched || !e->runs ? -ENOMEM
					  : xp_gen_flows_init(e->skel, cfg, e->nw, cpu_tid,
							      ncpus > 0 ? (unsigned)ncpus : 0, e->sched, e->runs, err,
							      errlen);
		if (r) {
			if (r == -ENOMEM)
				snprintf(err, errlen, "out of memory for the flows' schedules");
			free(cpu_tid);
			live_destroy(e);
			return r;
		}
	}
	free(cpu_tid);
	*out = e;
	return 0;
}

static void live_stop(struct xp_engine *e)
{
	e->stop = true;
	for (unsigned t = 0; t < e->nw && e->w; t++) {
		if (e->w[t].running)
			pthread_join(e->w[t].thread, NULL);
		e->w[t].running = false;
	}
}

static int live_start(struct xp_engine *e, char *err, size_t errlen)
{
	sigset_t all, old;
	sigfillset(&all);
	/* Workers block every signal: the kernel ends a run early when one is
	 * pending, and Ctrl-C belongs to the main thread anyway. */
	pthread_sigmask(SIG_BLOCK, &all, &old);
	int r = 0;
	for (unsigned t = 0; t < e->nw && !r; t++) {
		struct live_worker *w = &e->w[t];
		pthread_attr_t attr;
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_attr_init(&attr);
		/* Pinned from birth: the first run must already use its CPU's state. */
		pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		r = pthread_create(&w->thread, &attr, worker_main, w);
		pthread_attr_destroy(&attr);
		if (r)
			snprintf(err, errlen, "cannot start a sender thread on CPU %d: %s", w->cpu, strerror(r));
		else
			w->running = true;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		live_stop(e);
		return -r;
	}

	/* Wait for every thread's first call: that is where a kernel without
	 * live frames (or with a frame it will not take) says no. */
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)FIRST_WAIT_S;
	pthread_mutex_lock(&e->mu);
	for (unsigned t = 0; t < e->nw; t++) {
		while (!e->w[t].first_done)
			if (pthread_cond_timedwait(&e->cv, &e->mu, &until) == ETIMEDOUT)
				break;
		if (e->w[t].first_done && e->w[t].first_rc && !r)
			r = e->w[t].first_rc;
	}
	pthread_mutex_unlock(&e->mu);
	if (r) {
		live_stop(e);
		if (r == -EINVAL || r == -EOPNOTSUPP || r == -524 /* ENOTSUPP */)
			snprintf(err, errlen, "the kernel refused XDP live frames on %s (BPF_PROG_RUN: %s): use %s",
				 e->cfg.ifname, strerror(-r), xp_gen_way_out(e->cfg.kind != XP_TEST_STREAM));
		else if (r == -ENODEV)
			snprintf(err, errlen, "interface %s (ifindex %d) is not in this network namespace",
				 e->cfg.ifname, e->cfg.ifindex);
		else
			snprintf(err, errlen, "XDP live frames failed on %s (BPF_PROG_RUN: %s): use %s",
				 e->cfg.ifname, strerror(-r), xp_gen_way_out(e->cfg.kind != XP_TEST_STREAM));
		return r;
	}
	return 0;
}

static void live_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tx.pkts = xp_gen_sent(e->skel);
#if defined(XP_MUTATE) && XP_MUTATE == 2
	st->tx.pkts += st->tx.pkts > 0; /* scripts/mutate.sh: one frame too many */
#endif
	/* Mixed sizes: per CPU, from its count and the pattern (the same
	 * read as the count's, a moment later: at most a batch apart while
	 * running, exact once stopped). */
	st->tx.bytes = e->skel->rodata->config.mix_plen ? xp_gen_sent_bytes(e->skel, &e->cfg.frames.mix)
							: st->tx.pkts * e->lay.len;
	if (e->cfg.frames.nflows) {
		/* Flows: the per-flow counts, a moment after the frame count. */
		uint64_t pk[XP_GEN_MAX_FLOWS], by[XP_GEN_MAX_FLOWS];
		xp_gen_read_flows(e->skel, pk, by, e->cfg.frames.nflows);
		st->tx.bytes = 0;
		for (unsigned f = 0; f < e->cfg.frames.nflows; f++)
			st->tx.bytes += by[f];
	}
	for (unsigned t = 0; t < e->nw; t++) {
		st->tx.errors += __atomic_load_n(&e->w[t].errors, __ATOMIC_RELAXED);
		if (!e->w[t].running)
			xp_pace_add(&st->pace, &e->w[t].pace); /* complete once the thread is joined */
	}
	st->mode = "live";
}

/* Stamped frames of send interval i: the generator's per-CPU bins. */
static int live_sent_in(struct xp_engine *e, uint64_t interval, uint64_t *sent)
{
	__u64 n = 0;
	int r = xp_gen_sent_in(e->skel, interval, &n);

	*sent = n;
	return r;
}

/* Per flow, frames and bytes sent: the generator's per-CPU counts summed. */
static void live_read_flows(struct xp_engine *e, uint64_t *pkts, uint64_t *bytes, unsigned n)
{
	xp_gen_read_flows(e->skel, pkts, bytes, n);
}

static void live_set_t0(struct xp_engine *e, uint64_t t0)
{
	e->cfg.frames.stamp.t0 = t0;
	xp_gen_set_meas(e->skel, t0, e->cfg.frames.stamp.ival);
}

static void live_destroy(struct xp_engine *e)
{
	if (!e)
		return;
	live_stop(e);
	if (e->hold_link >= 0)
		close(e->hold_link); /* detach first, then let the namespace go */
	if (e->hold_ns >= 0)
		close(e->hold_ns);
	if (e->skel)
		live_bpf__destroy(e->skel);
	if (e->sync_init) {
		pthread_mutex_destroy(&e->mu);
		pthread_cond_destroy(&e->cv);
	}
	free(e->w);
	free(e->sched);
	free(e->runs);
	free(e);
}

const struct xp_engine_ops xp_engine_live = {
	.name = "live",
	.title = "the live engine",
	XP_FRAME_ENGINE,
	.probe = xp_gen_check,
	XP_ENGINE_LIFECYCLE(live),
	.read_flows = live_read_flows,
	.sent_in = live_sent_in,
	.set_t0 = live_set_t0,
	.set_stamp_key = live_set_stamp_key,
};
