/*
 * Worker processes for the socket engine (client) and the socket server:
 * the way past a per-process open-file limit that cannot be raised.
 *
 * RLIMIT_NOFILE bounds every process's descriptor table, and raising the
 * hard limit needs CAP_SYS_RESOURCE, which root in a container often lacks
 * (CI: hard limit 20000). Holding 100 000 connections then takes several
 * descriptor tables, i.e. several processes. The engines plan with
 * xp_fd_plan(): if this process can hold everything (after raising the
 * limit as far as allowed) nothing changes, all runs in-process; otherwise
 * the work is split over N forked workers, each running the same
 * event-loop threads as the single-process case on its share.
 *
 * The parent keeps the engines' usual role: it creates shared counters
 * (xp_shm_alloc, MAP_SHARED before the fork), reads them, and ends the
 * workers. Workers never outlive it (PR_SET_PDEATHSIG), keep no inherited
 * descriptor but the ones named (so a worker never holds the parent's
 * control connection, listeners or BPF links), ignore the terminal's
 * SIGINT/SIGHUP and SIGTERM (the parent decides when they stop), and end
 * with _exit (no atexit handlers, no stdio flush of the parent's buffers).
 *
 * PR_SET_PDEATHSIG fires when the *thread* that forked dies, so call the
 * engines' start() from a thread that lives as long as the engine (the
 * main thread, as xdpperf does).
 *
 * Testing knobs (environment):
 *   XDPPERF_FD_LIMIT=N   plan as if the open-file limit were N, and give
 *                        every worker a soft limit of N, so the
 *                        multi-process path runs (and is held to its
 *                        budget) on any host;
 *   XDPPERF_SOCK_FAULT=K worker process K (0-based) starts with an
 *                        open-file limit of 0, so its setup fails for real
 *                        (EMFILE) and the error must reach the caller.
 */
#ifndef XP_WORKERS_H
#define XP_WORKERS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define XP_MAX_PROCS 64        /* beyond this the limit is the problem, not the design */
#define XP_NOFILE_MARGIN 100   /* per process: epoll, eventfd, stdio, the control connection... */

struct xp_fd_need {
	unsigned long conns;      /* connections over all processes */
	double headroom;          /* plan each process for conns * headroom / N of them */
	unsigned long per_thread; /* descriptors per event-loop thread besides connections (listeners) */
	unsigned threads;         /* event-loop threads wanted in total */
};

struct xp_fd_plan {
	unsigned nproc;            /* 1: everything in this process, as without this module */
	unsigned threads_per_proc; /* event-loop threads in each process (all of them when nproc is 1) */
	unsigned long limit;       /* the per-process open-file limit planned with */
	unsigned long forced;      /* XDPPERF_FD_LIMIT, 0 if not set: workers get it as their soft limit */
};

/*
 * In-process need: conns + threads * per_thread + XP_NOFILE_MARGIN. Raises
 * the limit as far as allowed (xp_raise_nofile); if that covers the need,
 * nproc is 1. Otherwise the smallest N (2..XP_MAX_PROCS) with
 *   ceil(conns * headroom / N) + ceil(threads / N) * per_thread + margin <= limit.
 * Returns 0, or -1 with a message starting "needs N open files but the
 * limit is L" (callers prefix what needs them).
 */
int xp_fd_plan(const struct xp_fd_need *n, struct xp_fd_plan *p, char *err, size_t errlen);

/* Zeroed anonymous memory, MAP_SHARED (survives fork as one copy) if `shared`. NULL on failure. */
void *xp_shm_alloc(size_t size, bool shared);
void xp_shm_free(void *p, size_t size);

struct xp_proc_ops {
	const char *name;   /* workers show as NAME-wK in ps (at most 9 characters) */
	/* In worker idx: open and start its part (threads). 0, or -1 with a one-line message. */
	int (*setup)(void *arg, unsigned idx, char *err, size_t errlen);
	/* In worker idx: return once its part has ended (stop or the engine's own deadline). */
	void (*wait)(void *arg, unsigned idx);
	/* In the parent: ask every part, in every worker, to end (shared flag, eventfd). */
	void (*tell_stop)(void *arg);
	/* In the parent: a number that keeps changing while worker idx makes
	 * progress (its counters: closing 20k sockets takes from 0.2 s to
	 * seconds on a busy machine). Only a worker that stalls is killed. */
	unsigned long long (*progress)(void *arg, unsigned idx);
	/* In the parent: worker idx ended without finishing (killed, crashed):
	 * the kernel closed what it held, so settle its counters. */
	void (*lost)(void *arg, unsigned idx);
};

struct xp_procs;

/*
 * Fork n workers and wait (at most 10 s) until each has run setup. `keep`
 * lists the inherited descriptors workers keep besides 0-2. fd_limit > 0
 * becomes each worker's soft RLIMIT_NOFILE. On any failure every worker is
 * ended and reaped, and err holds the first worker's message followed by
 * " (worker process K of N)".
 */
int xp_procs_start(struct xp_procs **out, unsigned n, const struct xp_proc_ops *ops, void *arg, const int *keep,
		   unsigned nkeep, unsigned long fd_limit, char *err, size_t errlen);

/*
 * tell_stop, then reap every worker. A worker whose progress() has not
 * changed for 2 s, or that is still there after 30 s, is SIGKILLed (then at
 * most 5 s more). Workers that did not finish are passed to lost(). Frees p
 * (NULL is fine).
 */
void xp_procs_stop(struct xp_procs *p);
/* How many workers xp_procs_stop has had to SIGKILL in this process (stuck: no progress for 2 s, or
 * still closing after 30 s), so that tests can assert a clean stop without timing it. */
unsigned long xp_procs_killed(void);

/* ---- event-loop threads, here or over worker processes ------------------ */

/*
 * What the socket engine and the socket server have in common, built on the
 * above: n event-loop threads, thread t pinned to CPU t of the allowed ones
 * (round robin), that run in this process when one process can hold
 * everything (xp_fd_plan) and otherwise in nproc forked workers, thread t in
 * worker t / tpp. The group owns the threads, the workers, a stop flag all of
 * them see, an eventfd that wakes every loop on stop, and each thread's
 * counters (stats_size bytes, shared with the workers when there are any).
 * The caller owns what each thread works on (epoll, sockets, slots).
 *
 * Use: xp_group_plan, xp_group_open, [xp_group_prepare], xp_group_start,
 * then xp_group_stop and xp_group_close (both also fine after a failed
 * start; close also after a failed open).
 */
struct xp_group_ops {
	const char *name;   /* worker processes show as NAME-wK in ps (at most 9 characters) */
	const char *what;   /* the threads, for messages: "cannot start WHAT: ..." */
	size_t stats_size;  /* each thread's counters (xp_group_stats), zeroed at open */
	/* In the process that runs thread t, before any of its threads starts:
	 * its epoll (with stopfd in it), listeners, slots. 0, or < 0 with a
	 * one-line message. Whatever it leaves behind on failure the caller frees. */
	int (*setup)(void *arg, unsigned t, char *err, size_t errlen);
	/* Thread t's function and its argument: a loop that ends once
	 * xp_group_stopping() (stopfd is readable then). */
	void *(*main)(void *targ);
	void *(*main_arg)(void *arg, unsigned t);
	/* In the parent, from thread t's counters (see struct xp_proc_ops): what
	 * keeps changing while it works or closes, and settling them when its
	 * worker ended without finishing. Either may be NULL. */
	unsigned long long (*progress)(void *arg, unsigned t);
	void (*lost)(void *arg, unsigned t);
	/* Leave the threads to the scheduler instead of pinning thread t to
	 * the t-th allowed CPU (the socket server's receivers: see listeners.c). */
	bool unpinned;
};

#define XP_GROUP_STATS_OFF 64 /* the stop flag's cache line, then the counters */

struct xp_group_thread {
	int cpu;
	bool running;      /* in the process that runs it */
	pthread_t thread;
};

struct xp_group {
	const struct xp_group_ops *ops;
	void *arg;
	unsigned n;                 /* threads over all processes */
	unsigned nproc, tpp;        /* worker processes (1: none, all here), threads in each */
	unsigned long limit;        /* the per-process open-file limit planned with */
	unsigned long fd_limit;     /* XDPPERF_FD_LIMIT for the workers, 0 if not forced */
	int stopfd;                 /* eventfd, readable once stopping: in every loop's epoll */
	int *stop;                  /* the stop flag, in shm */
	void *shm;                  /* the flag, then every thread's counters */
	size_t shm_size;
	struct xp_group_thread *th; /* n of them */
	bool prepared;              /* in-process: every thread set up */
	struct xp_procs *procs;     /* the workers while they run */
	struct xp_proc_ops proc_ops; /* how they run (named after ops->name) */
};

/*
 * Plan need->threads threads (clamped to max_threads unless that is 0) with
 * xp_fd_plan, and clear g; no resources yet (nothing to close on failure).
 * Sets n (nproc * tpp, but at most max_threads), nproc, tpp, limit, fd_limit.
 * 0, or -1 with xp_fd_plan's message.
 */
int xp_group_plan(struct xp_group *g, const struct xp_fd_need *need, unsigned max_threads, char *err,
		  size_t errlen);

/* The stop flag, eventfd, counters and thread table for the plan. 0 or -errno. */
int xp_group_open(struct xp_group *g, const struct xp_group_ops *ops, void *arg);

/* Thread t's counters: ops->stats_size bytes, shared with the workers. */
static inline void *xp_group_stats(const struct xp_group *g, unsigned t)
{
	return (char *)g->shm + XP_GROUP_STATS_OFF + (size_t)t * g->ops->stats_size;
}

static inline bool xp_group_stopping(const struct xp_group *g)
{
	return __atomic_load_n(g->stop, __ATOMIC_RELAXED);
}

/* In-process (nproc 1): set every thread up now rather than in start (so
 * create() reports what setup says). Workers set theirs up after the fork.
 * 0, or setup's error. */
int xp_group_prepare(struct xp_group *g, char *err, size_t errlen);

/*
 * In-process: set up what prepare has not, then start every thread; on
 * failure what was started is stopped again and setup's or pthread's error
 * (< 0) returned. Workers: xp_procs_start, -ECHILD on failure.
 */
int xp_group_start(struct xp_group *g, char *err, size_t errlen);

/* Stop every thread in every process; return once all are joined and the
 * workers reaped (their counters are final then). Idempotent. */
void xp_group_stop(struct xp_group *g);

/* Free what open made (after xp_group_stop: the counters go too). */
void xp_group_close(struct xp_group *g);

#endif
