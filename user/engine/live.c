/*
 * XDP live-frames sending engine ("live"): the kernel itself makes and sends
 * the frames. Each thread calls BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES
 * on bpf/generator.bpf.c: for `repeat` runs the kernel takes a page_pool buffer,
 * runs the generator (which writes the next test frame into it) and
 * transmits the XDP_TX'd frame on cfg->ifindex through the driver's
 * ndo_xdp_xmit. No sockets, no UMEM, no copies through an skb on our side:
 * on veth ~7 Mpps per core into an XDP receiver, ~3x AF_XDP copy mode.
 *
 * Connection tests (kind XP_TEST_CONNECT, the XDP connection engine's -x):
 * the generator runs in SYN mode and makes every frame the SYN of the next
 * connection, with the tuple and ISN the AF_XDP engine would give it
 * (engine/tuples.h, bpf/lib/isn.h); pacing is the same, at cfg->pps SYNs/s. Hold
 * tests (XP_TEST_HOLD) are refused: they must reset every held connection
 * at the end, which the AF_XDP engine does (--syn-engine xsk).
 *
 * Threads: one per CPU, pinned before their first run, because the
 * generator keeps its state (frame counter, flow position) per CPU; at most
 * as many threads as CPUs the process may use.
 *
 * Rate control: each thread sends cfg->pps / threads. It sends in units of
 * `repeat` frames (one BPF_PROG_RUN call): a slice of about SLICE_S seconds
 * of frames (at least 1), or with --burst N (cfg->burst) N frames back to
 * back. Units are scheduled against
 * CLOCK_MONOTONIC from the thread's start: unit j is due when
 * (now - t0) * pps reaches (j + 1) * repeat, so the frames are spread evenly
 * over every second and the long-run rate is exact. Ahead of schedule the
 * thread sleeps (nanosleep, 1 us timer slack) and spins only the last
 * SPIN_S; behind it (a stall), it catches up back to back, but never by
 * more than CATCHUP_S of frames: a longer stall is forgiven, not bursted.
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
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "engine/engine.h"
#include "net/frame.h"
#include "bpf/generator.h"
#include "bpf/generator.skel.h"
#include "util/threadclock.h"
#include "util/time.h"
#include "engine/tuples.h"

#define SLICE_S    100e-6  /* paced: one call sends ~100 us of frames */
#define SPIN_S     20e-6   /* sleep until this close to the due time, then spin */
#define CATCHUP_S  20e-3   /* at most 20 ms of frames are made up after a stall */
#define CHUNK      16384   /* unpaced: frames per call (~1-10 ms) */
#define BATCH      64      /* frames per kernel batch (page_pool size, flush) */
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
	struct generator_bpf *skel;
	int prog_fd;
	uint8_t tmpl[XP_GEN_MAX_LEN];
	struct frame_layout lay;
	uint32_t in_len;   /* data_in bytes: lay.len, SYNs one more (see generator.bpf.c) */
	unsigned nw;
	unsigned burst;    /* 0: slices */
	struct live_worker *w;
	int hold_link;     /* bpf_link of the idle attachment, or -1 */
	int hold_ns;       /* the private namespace it lives in, or -1 */
	volatile bool stop;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a worker finished its first call */
	bool sync_init;
};

/* The way out when live frames do not work: the AF_XDP engine, which
 * connection tests (-x) pick with --syn-engine. */
static const char *xsk_way(bool syn)
{
	return syn ? "--syn-engine xsk" : "--engine xsk";
}

static int silent_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_WARN && getenv("XDPPERF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* What rules live frames out before anything is loaded: the probe, and xp_gen_load's first check. */
static int live_fits(const struct xp_engine_cfg *cfg, char *err, size_t errlen)
{
	struct frame_layout lay;
	const char *ferr = NULL;
	if (!frame_layout_of(&cfg->frames.tmpl, &lay, &ferr) && lay.len > XP_GEN_MAX_LEN) {
		snprintf(err, errlen, "%zu-byte frames are too large for XDP live frames (at most %u): use %s",
			 cfg->frames.tmpl.frame_size, XP_GEN_MAX_LEN + 4, xsk_way(cfg->kind != XP_TEST_STREAM));
		return -EMSGSIZE;
	}
	if (cfg->kind == XP_TEST_HOLD) {
		snprintf(err, errlen, "XDP live frames do not hold connections (-k must reset them at the end): "
			 "use --syn-engine xsk");
		return -EOPNOTSUPP;
	}
	return 0;
}

int xp_gen_load(const struct xp_engine_cfg *cfg, unsigned nthreads, struct generator_bpf **out, __u8 *tmpl,
		struct frame_layout *lay, char *err, size_t errlen)
{
	const char *ferr = NULL;
	size_t len = 0;

	*out = NULL;
	int r = live_fits(cfg, err, errlen);
	if (r)
		return r;
	if (!frame_layout_of(&cfg->frames.tmpl, lay, &ferr)) {
		len = frame_build(&cfg->frames.tmpl, tmpl, XP_GEN_MAX_LEN, &ferr);
	}
	if (!len) {
		snprintf(err, errlen, "cannot build the test frame: %s", ferr ? ferr : "invalid");
		return -EINVAL;
	}
	if (cfg->sport_hi < cfg->sport_lo || cfg->dport_hi < cfg->dport_lo) {
		snprintf(err, errlen, "empty port range %u:%u -> %u:%u", cfg->sport_lo, cfg->sport_hi,
			 cfg->dport_lo, cfg->dport_hi);
		return -EINVAL;
	}

	/* Connection tests: SYNs numbered as the AF_XDP engine numbers them
	 * (engine/tuples.h checks the template, bind[] and ranges alike). */
	struct xp_tuples conn = { 0 };
	uint64_t seed = 0;
	if (cfg->kind != XP_TEST_STREAM) {
		if (cfg->kind != XP_TEST_CONNECT) {
			snprintf(err, errlen, "XDP live frames do not run %s tests", xp_test_kind_name(cfg->kind));
			return -EINVAL;
		}
		/* A fresh ISN key per run: tuples repeat from one run to the next. */
		if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
			seed = (uint64_t)(xp_now() * 1e9) ^ ((uint64_t)getpid() << 32);
		r = xp_tuples_init(&conn, cfg, seed, err, errlen);
		if (r)
			return r;
		if (cfg->nbind > XP_GEN_MAX_BIND) {
			snprintf(err, errlen, "XDP live frames take at most %u source addresses", XP_GEN_MAX_BIND);
			return -EINVAL;
		}
	}

	libbpf_print_fn_t old = libbpf_set_print(silent_print);
	struct generator_bpf *skel = generator_bpf__open();
	if (!skel) {
		int e = errno;
		libbpf_set_print(old);
		snprintf(err, errlen, "cannot open the XDP live-frames generator: %s: use %s", strerror(e),
			 xsk_way(cfg->kind != XP_TEST_STREAM));
		return -e;
	}
	struct generator_bpf__rodata *ro = skel->rodata;
	ro->tmpl_len = (__u32)len;
	memcpy((void *)ro->tmpl, tmpl, len);
	ro->l4_off = lay->l4_off;
	ro->payload_off = lay->payload_off;
	ro->payload_len = lay->payload_len;
	ro->l4_proto = lay->l4_proto;
	/* Stamp only where it fits in the payload (not in 64-byte TCP frames:
	 * 6 bytes of payload); the receiver tells by the magic. */
	ro->stamp = lay->payload_len >= XP_STAMP_LEN;
	ro->sport_lo = cfg->sport_lo;
	ro->sport_hi = cfg->sport_hi;
	ro->dport_lo = cfg->dport_lo;
	ro->dport_hi = cfg->dport_hi;
	ro->nthreads = nthreads ? nthreads : 1;
	ro->seq0 = cfg->frames.tmpl.seq;
	ro->stream_base = 0;
	ro->tx_ifindex = (__u32)cfg->ifindex;
	if (cfg->kind == XP_TEST_CONNECT) {
		ro->syn_mode = 1;
		ro->stamp = 0;
		ro->is_v6 = cfg->frames.tmpl.src.family == AF_INET6;
		ro->l3_off = lay->l3_off;
		ro->nbind = cfg->nbind;
		ro->conn_space = conn.space;
		ro->seed = seed;
		for (unsigned i = 0; i < cfg->nbind; i++)
			memcpy((void *)ro->bind_addr[i], cfg->bind[i].family == AF_INET6 ? (const void *)&cfg->bind[i].v6
											     : (const void *)&cfg->bind[i].v4,
			       cfg->bind[i].family == AF_INET6 ? 16 : 4);
	}
	r = generator_bpf__load(skel);
	libbpf_set_print(old);
	if (r) {
		snprintf(err, errlen, "cannot load the XDP live-frames generator: %s%s%s", strerror(-r),
			 r == -EPERM ? " (run as root or with CAP_BPF and CAP_NET_ADMIN)" : ": use ",
			 r == -EPERM ? "" : xsk_way(cfg->kind != XP_TEST_STREAM));
		generator_bpf__destroy(skel);
		return r;
	}
	*out = skel;
	return 0;
}

int xp_gen_init_state(struct generator_bpf *skel, const unsigned *cpu_tid, unsigned ncpu_tid)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return -EINVAL;
	struct xp_gen_state *v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned c = 0; c < (unsigned)ncpus && c < ncpu_tid; c++)
		v[c].tid = cpu_tid[c];
	__u32 key = 0;
	int r = bpf_map__update_elem(skel->maps.gen_state, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0);
	free(v);
	return r;
}

__u64 xp_gen_sent(struct generator_bpf *skel)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return 0;
	struct xp_gen_state *v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return 0;
	__u32 key = 0;
	__u64 sum = 0;
	if (!bpf_map__lookup_elem(skel->maps.gen_state, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0))
		for (int c = 0; c < ncpus; c++)
			sum += v[c].sent;
	free(v);
	return sum;
}

struct hold_arg {
	int prog_fd;
	int link_fd, ns_fd, err;
};

static void *hold_main(void *arg)
{
	struct hold_arg *h = arg;
	/* Only this short-lived thread moves to the new namespace. */
	if (unshare(CLONE_NEWNET)) {
		h->err = errno;
		return NULL;
	}
	h->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (h->ns_fd < 0) {
		h->err = errno;
		return NULL;
	}
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_SKB_MODE);
	unsigned lo_index = if_nametoindex("lo");
	h->link_fd = bpf_link_create(h->prog_fd, lo_index ? (int)lo_index : 1, BPF_XDP, &lo);
	if (h->link_fd < 0)
		h->err = errno;
	return NULL;
}

int xp_gen_hold(struct generator_bpf *skel, int *link_fd, int *ns_fd, char *err, size_t errlen)
{
	struct hold_arg h = { .prog_fd = bpf_program__fd(skel->progs.xdp_generator), .link_fd = -1, .ns_fd = -1 };
	pthread_t t;
	int r = pthread_create(&t, NULL, hold_main, &h);
	if (r)
		h.err = r;
	else
		pthread_join(t, NULL);
	if (h.err) {
		if (h.link_fd >= 0)
			close(h.link_fd);
		if (h.ns_fd >= 0)
			close(h.ns_fd);
		snprintf(err, errlen, "cannot attach the XDP live-frames generator to a private loopback: %s%s%s",
			 strerror(h.err), h.err == EPERM ? " (needs CAP_SYS_ADMIN)" : ": use ",
			 h.err == EPERM ? "" : xsk_way(skel->rodata->syn_mode));
		return -h.err;
	}
	*link_fd = h.link_fd;
	*ns_fd = h.ns_fd;
	return 0;
}

/* One BPF_PROG_RUN call of n frames. 0 or -errno. */
static int run_frames(struct xp_engine *e, struct xdp_md *md, uint32_t n)
{
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
	double pps = e->cfg.pps > 0 ? e->cfg.pps / e->nw : 0;
	uint32_t unit = CHUNK;
	double cap = 0;
	if (pps > 0) {
		if (e->burst)
			unit = e->burst;
		else
			unit = pps * SLICE_S < 1 ? 1 : (uint32_t)(pps * SLICE_S + 0.5);
		cap = pps * CATCHUP_S;
		if (cap < 2.0 * unit)
			cap = 2.0 * unit;
	}
	double start = xp_now();
	double deadline = e->cfg.max_seconds > 0 ? start + e->cfg.max_seconds : 1e300;
	/* The first unit is due at once; thread idx is offset by idx/T of a
	 * unit's period so that the threads' units interleave evenly. */
	double t0 = pps > 0 ? start - (unit / pps) * (1.0 - (double)w->idx / e->nw) : start;
	uint64_t sent = 0; /* frames asked for so far */
	bool first = true;
	/* Its account for "who held the offered load back": time in BPF_PROG_RUN is busy, the rest waiting. */
	struct xp_thread_clock clk;
	double busy = 0;
	uint64_t early = 0;
	xp_thread_clock_start(&clk, w->cpu);

	while (!e->stop) {
		double now = xp_now();
		if (now > deadline)
			break;
		if (pps > 0) {
			double due = (now - t0) * pps - (double)sent;
			if (due > cap) { /* a long stall: forgive what is beyond the cap */
				t0 += (due - cap) / pps;
				due = cap;
			}
			if (due < unit) {
				double wait = (unit - due) / pps;
				if (wait > SPIN_S) /* at most 50 ms: stop() must not wait for a slow burst */
					xp_sleep(wait - SPIN_S < 0.05 ? wait - SPIN_S : 0.05);
				continue; /* spin: re-read the clock */
			}
		}
		double tr = xp_now();
		int rc = run_frames(e, &md, unit);
		busy += xp_now() - tr;
		if (first && rc == -EINVAL && md.rx_queue_index) {
			/* Fewer rx queues than tx queues: any existing queue does. */
			md.rx_queue_index = 0;
			rc = run_frames(e, &md, unit);
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
		sent += unit;
	}
	if (first) /* stopped before the first call */
		first_result(e, w, 0);
	xp_thread_clock_end(&clk, &w->pace);
	w->pace.wait_s = w->pace.wall_s > busy ? w->pace.wall_s - busy : 0;
	w->pace.pushback = early;
	return NULL;
}

/* The CPUs this process may run on, in order; returns how many. */
static unsigned allowed_cpus(int *cpus, unsigned max)
{
	cpu_set_t set;
	unsigned n = 0;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE && n < max; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	}
	if (!n) {
		long on = sysconf(_SC_NPROCESSORS_ONLN);
		for (long c = 0; c < on && n < max; c++)
			cpus[n++] = (int)c;
	}
	return n ? n : (cpus[0] = 0, 1);
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
	unsigned ncpu = allowed_cpus(cpus, CPU_SETSIZE);
	/* The generator's state is per CPU: one thread per CPU at most. */
	e->nw = cfg->frames.queues ? cfg->frames.queues : 1;
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
	e->in_len = e->lay.len + (e->skel->rodata->syn_mode ? 1 : 0);
	e->prog_fd = bpf_program__fd(e->skel->progs.xdp_generator);
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
	free(cpu_tid);
	if (r) {
		snprintf(err, errlen, "cannot initialise the generator's state: %s", strerror(-r));
		live_destroy(e);
		return r;
	}
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
				 e->cfg.ifname, strerror(-r), xsk_way(e->cfg.kind != XP_TEST_STREAM));
		else if (r == -ENODEV)
			snprintf(err, errlen, "interface %s (ifindex %d) is not in this network namespace",
				 e->cfg.ifname, e->cfg.ifindex);
		else
			snprintf(err, errlen, "XDP live frames failed on %s (BPF_PROG_RUN: %s): use %s",
				 e->cfg.ifname, strerror(-r), xsk_way(e->cfg.kind != XP_TEST_STREAM));
		return r;
	}
	return 0;
}

static void live_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->tx.pkts = xp_gen_sent(e->skel);
	st->tx.bytes = st->tx.pkts * e->lay.len;
	for (unsigned t = 0; t < e->nw; t++) {
		st->tx.errors += __atomic_load_n(&e->w[t].errors, __ATOMIC_RELAXED);
		if (!e->w[t].running)
			xp_pace_add(&st->pace, &e->w[t].pace); /* complete once the thread is joined */
	}
	st->mode = "live";
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
		generator_bpf__destroy(e->skel);
	if (e->sync_init) {
		pthread_mutex_destroy(&e->mu);
		pthread_cond_destroy(&e->cv);
	}
	free(e->w);
	free(e);
}

const struct xp_engine_ops xp_engine_live = {
	.name = "live",
	.tmpl = XP_TMPL_DATA,
	.nexthop = true,
	.figures = XP_FIGS_FRAMES,
	.probe = live_fits,
	.create = live_create,
	.start = live_start,
	.read = live_read,
	.stop = live_stop,
	.destroy = live_destroy,
};
