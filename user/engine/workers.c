/* Worker processes past the open-file limit: planning, forking, ending; event-loop thread groups on top. See workers.h. */
#include "engine/workers.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/sockutil.h"
#include "util/cpus.h"
#include "util/time.h"

#define START_TIMEOUT 10.0  /* setup is a few epolls and listeners: seconds means something is wrong */
/* Stopping: a worker closing its sockets is slow, not stuck, and SIGKILL
 * would not help (the kernel then closes them itself, with FINs, which is
 * slower still) and would freeze its counters; so only a worker whose
 * counters stop moving is killed. Measured: 100k held connections over 6
 * workers close in 1.1-3.8 s on a busy 2-CPU machine. */
#define STOP_STALL 2.0      /* no progress this long: stuck, SIGKILL */
#define STOP_MAX 30.0       /* never wait longer than this before SIGKILL */
#define KILL_GRACE 5.0      /* after SIGKILL the kernel still closes the sockets before the reap */
#define POLL_SLEEP 0.0005   /* waitpid(WNOHANG) period: stop() latency, not a load */
#define MAX_KEEP 8

/* ---- planning ------------------------------------------------------------- */

/* A decimal environment variable; -1 if unset or not a number. */
static long env_num(const char *name)
{
	const char *s = getenv(name);
	if (!s || *s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	return errno || *end ? -1 : v;
}

static unsigned long soft_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 1024;
	return rl.rlim_cur == RLIM_INFINITY ? ULONG_MAX : (unsigned long)rl.rlim_cur;
}

int xp_fd_plan(const struct xp_fd_need *n, struct xp_fd_plan *p, char *err, size_t errlen)
{
	unsigned threads = n->threads ? n->threads : 1;
	unsigned long need = n->conns + threads * n->per_thread + XP_NOFILE_MARGIN;
	long f = env_num("XDPPERF_FD_LIMIT");
	unsigned long forced = f > 0 ? (unsigned long)f : 0;
	char lim[200] = "";

	/* Raise first even when forced: a single process still needs it, and
	 * workers inherit the raised limit. On failure it has still raised the
	 * soft limit to the hard one (and the hard one as far as allowed). */
	int r = xp_raise_nofile(need, lim, sizeof(lim));
	unsigned long limit = soft_limit();
	if (forced && forced < limit)
		limit = forced;
	memset(p, 0, sizeof(*p));
	p->limit = limit;
	p->forced = forced && forced <= limit ? forced : 0;
	if (need <= limit) {
		p->nproc = 1;
		p->threads_per_proc = threads;
		return 0;
	}
	for (unsigned k = 2; k <= XP_MAX_PROCS; k++) {
		unsigned tpp = (threads + k - 1) / k;
		unsigned long share = (unsigned long)ceil((double)n->conns * n->headroom / k);
		if (share + tpp * n->per_thread + XP_NOFILE_MARGIN <= limit) {
			p->nproc = k;
			p->threads_per_proc = tpp;
			return 0;
		}
	}
	if (r == 0 || forced)
		snprintf(lim, sizeof(lim), "needs %lu open files but the limit is %lu (%s)", need, limit,
			 forced ? "XDPPERF_FD_LIMIT" : "per process");
	snprintf(err, errlen, "%s, more than %d worker processes can hold", lim, XP_MAX_PROCS);
	return -1;
}

/* ---- shared memory -------------------------------------------------------- */

void *xp_shm_alloc(size_t size, bool shared)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1,
		       0);
	return p == MAP_FAILED ? NULL : p; /* anonymous mappings come zeroed */
}

void xp_shm_free(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

/* ---- workers -------------------------------------------------------------- */

enum { PS_STARTING, PS_READY, PS_FAILED, PS_DONE };

/* One per worker, in memory shared with it: how its setup went. */
struct proc_status {
	int state;
	char msg[240];
};

struct xp_procs {
	unsigned n;
	const struct xp_proc_ops *ops;
	void *arg;
	pid_t pid[XP_MAX_PROCS];
	bool reaped[XP_MAX_PROCS];
	struct proc_status *st; /* shared, n of them */
	size_t stsize;
};

static void close_range_compat(unsigned lo, unsigned hi)
{
	if (lo > hi || close_range(lo, hi, 0) == 0)
		return;
	/* Before Linux 5.9: one close() per possible descriptor, bounded by the limit. */
	unsigned long max = soft_limit();
	if (max > (1UL << 20))
		max = 1UL << 20;
	for (unsigned long fd = lo; fd <= hi && fd < max; fd++)
		close((int)fd);
}

/* Close every descriptor from 3 up except those in keep. */
static void close_except(const int *keep, unsigned nkeep)
{
	int k[MAX_KEEP];
	unsigned n = 0;
	for (unsigned i = 0; i < nkeep && n < MAX_KEEP; i++) {
		if (keep[i] < 3)
			continue;
		unsigned j = n++;
		while (j > 0 && k[j - 1] > keep[i]) { /* insertion sort: a handful of fds */
			k[j] = k[j - 1];
			j--;
		}
		k[j] = keep[i];
	}
	unsigned lo = 3;
	for (unsigned i = 0; i < n; i++) {
		if ((unsigned)k[i] > lo)
			close_range_compat(lo, (unsigned)k[i] - 1);
		if ((unsigned)k[i] + 1 > lo)
			lo = (unsigned)k[i] + 1;
	}
	close_range_compat(lo, ~0U);
}

static void __attribute__((noreturn))
child_main(struct xp_procs *p, unsigned idx, pid_t parent, const int *keep, unsigned nkeep, unsigned long fd_limit)
{
	struct proc_status *ps = &p->st[idx];

	/* Die with the parent, even by SIGKILL. The parent may already be gone
	 * by now (before prctl took effect): then we were reparented. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(1);
	/* Ctrl-C and hangups reach the whole process group; the parent handles
	 * them and stops us in order (RSTs, counters balanced). SIGTERM as well:
	 * `timeout` and service managers signal the group, and a worker dying
	 * on its own would leave its counters frozen. SIGKILL still works. */
	struct sigaction sa = { .sa_handler = SIG_IGN };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGPIPE, &sa, NULL);
	char name[16];
	snprintf(name, sizeof(name), "%.9s-w%u", p->ops->name, idx);
	prctl(PR_SET_NAME, name);
	/* Inherited descriptors would keep the parent's objects alive: its
	 * control connection would not close when it closes it, an XDP link
	 * would stay attached, another engine's listeners would keep taking
	 * connections. Keep only what this worker uses. */
	close_except(keep, nkeep);

	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		if (env_num("XDPPERF_SOCK_FAULT") == (long)idx)
			rl.rlim_cur = 0; /* test hook: every new descriptor fails with EMFILE */
		else if (fd_limit && (rl.rlim_cur == RLIM_INFINITY || fd_limit < rl.rlim_cur))
			rl.rlim_cur = fd_limit; /* XDPPERF_FD_LIMIT: hold the worker to its budget */
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	char err[sizeof(ps->msg)] = "";
	if (p->ops->setup(p->arg, idx, err, sizeof(err))) {
		memcpy(ps->msg, err, sizeof(ps->msg));
		ps->msg[sizeof(ps->msg) - 1] = '\0';
		__atomic_store_n(&ps->state, PS_FAILED, __ATOMIC_RELEASE);
		_exit(1);
	}
	__atomic_store_n(&ps->state, PS_READY, __ATOMIC_RELEASE);
	p->ops->wait(p->arg, idx);
	__atomic_store_n(&ps->state, PS_DONE, __ATOMIC_RELEASE);
	_exit(0);
}

/* Mark worker i reaped; one that did not finish has its counters settled. */
static void reaped(struct xp_procs *p, unsigned i)
{
	p->reaped[i] = true;
	if (__atomic_load_n(&p->st[i].state, __ATOMIC_ACQUIRE) != PS_DONE && p->ops->lost)
		p->ops->lost(p->arg, i);
}

static unsigned long procs_killed;

unsigned long xp_procs_killed(void)
{
	return __atomic_load_n(&procs_killed, __ATOMIC_RELAXED);
}

void xp_procs_stop(struct xp_procs *p)
{
	if (!p)
		return;
	p->ops->tell_stop(p->arg);
	double t0 = xp_now(), kill_end = 0;
	unsigned long long last[XP_MAX_PROCS];
	double moved[XP_MAX_PROCS];
	bool killed[XP_MAX_PROCS] = { false };
	for (unsigned i = 0; i < p->n; i++) {
		last[i] = p->ops->progress ? p->ops->progress(p->arg, i) : 0;
		moved[i] = t0;
	}
	for (;;) {
		bool all = true, all_killed = true;
		double now = xp_now();
		for (unsigned i = 0; i < p->n; i++) {
			if (p->reaped[i])
				continue;
			pid_t r = waitpid(p->pid[i], NULL, WNOHANG);
			if (r == p->pid[i] || (r < 0 && errno == ECHILD)) {
				/* ECHILD: SIGCHLD ignored by the caller, the kernel reaped it. */
				reaped(p, i);
				continue;
			}
			all = false;
			if (killed[i])
				continue;
			unsigned long long pr = p->ops->progress ? p->ops->progress(p->arg, i) : 0;
			if (pr != last[i]) {
				last[i] = pr;
				moved[i] = now;
			}
			if (now - moved[i] > STOP_STALL || now - t0 > STOP_MAX) {
				kill(p->pid[i], SIGKILL);
				killed[i] = true;
				__atomic_add_fetch(&procs_killed, 1, __ATOMIC_RELAXED);
				kill_end = now + KILL_GRACE;
			} else {
				all_killed = false;
			}
		}
		if (all)
			break;
		if (all_killed && now > kill_end) {
			fprintf(stderr, "socket workers: some did not exit %.0f s after SIGKILL\n", KILL_GRACE);
			break;
		}
		xp_sleep(POLL_SLEEP);
	}
	xp_shm_free(p->st, p->stsize);
	free(p);
}

/* A worker's setup result: PS_READY, PS_FAILED (message in err), or -1 if still starting. */
static int check_worker(struct xp_procs *p, unsigned i, char *err, size_t errlen)
{
	int s = __atomic_load_n(&p->st[i].state, __ATOMIC_ACQUIRE);
	if (s == PS_FAILED) {
		snprintf(err, errlen, "%s (worker process %u of %u)", p->st[i].msg, i + 1, p->n);
		return PS_FAILED;
	}
	if (s != PS_STARTING)
		return PS_READY;
	if (p->reaped[i])
		return -1;
	int status = 0;
	pid_t r = waitpid(p->pid[i], &status, WNOHANG);
	if (r != p->pid[i])
		return -1;
	reaped(p, i);
	/* It may have written its message just before exiting. */
	if (__atomic_load_n(&p->st[i].state, __ATOMIC_ACQUIRE) == PS_FAILED)
		return check_worker(p, i, err, errlen);
	if (WIFSIGNALED(status))
		snprintf(err, errlen, "socket worker process %u of %u died during setup (%s)", i + 1, p->n,
			 strsignal(WTERMSIG(status)));
	else
		snprintf(err, errlen, "socket worker process %u of %u exited during setup (status %d)", i + 1, p->n,
			 WEXITSTATUS(status));
	return PS_FAILED;
}

int xp_procs_start(struct xp_procs **out, unsigned n, const struct xp_proc_ops *ops, void *arg, const int *keep,
		   unsigned nkeep, unsigned long fd_limit, char *err, size_t errlen)
{
	if (n < 1 || n > XP_MAX_PROCS) {
		snprintf(err, errlen, "socket engine: %u worker processes (1 to %d)", n, XP_MAX_PROCS);
		return -1;
	}
	struct xp_procs *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "socket engine: out of memory");
		return -1;
	}
	p->n = 0;
	p->ops = ops;
	p->arg = arg;
	p->stsize = n * sizeof(*p->st);
	p->st = xp_shm_alloc(p->stsize, true);
	if (!p->st) {
		snprintf(err, errlen, "socket engine: cannot map shared memory: %s", strerror(errno));
		free(p);
		return -1;
	}
	pid_t self = getpid();
	for (unsigned i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			snprintf(err, errlen, "cannot start socket worker process %u of %u: %s", i + 1, n,
				 strerror(errno));
			xp_procs_stop(p);
			return -1;
		}
		if (pid == 0)
			child_main(p, i, self, keep, nkeep, fd_limit);
		p->pid[i] = pid;
		p->n = i + 1;
	}
	double end = xp_now() + START_TIMEOUT;
	for (;;) {
		bool all = true;
		for (unsigned i = 0; i < n; i++) {
			int s = check_worker(p, i, err, errlen);
			if (s == PS_FAILED) {
				xp_procs_stop(p);
				return -1;
			}
			if (s != PS_READY)
				all = false;
		}
		if (all)
			break;
		if (xp_now() >= end) {
			snprintf(err, errlen, "socket worker processes not ready after %.0f s", START_TIMEOUT);
			xp_procs_stop(p);
			return -1;
		}
		xp_sleep(POLL_SLEEP);
	}
	*out = p;
	return 0;
}

/* ---- event-loop threads, here or over worker processes ------------------ */

int xp_group_plan(struct xp_group *g, const struct xp_fd_need *need, unsigned max_threads, char *err,
		  size_t errlen)
{
	memset(g, 0, sizeof(*g));
	g->stopfd = -1;
	struct xp_fd_need nd = *need;
	if (max_threads && nd.threads > max_threads)
		nd.threads = max_threads; /* an event loop without work is just overhead */
	struct xp_fd_plan plan;
	if (xp_fd_plan(&nd, &plan, err, errlen))
		return -1;
	g->tpp = plan.threads_per_proc;
	g->n = plan.nproc * g->tpp;
	if (max_threads && g->n > max_threads)
		g->n = max_threads;
	g->nproc = (g->n + g->tpp - 1) / g->tpp;
	g->limit = plan.limit;
	g->fd_limit = plan.forced;
	return 0;
}

int xp_group_open(struct xp_group *g, const struct xp_group_ops *ops, void *arg)
{
	g->ops = ops;
	g->arg = arg;
	g->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (g->stopfd < 0)
		return -errno;
	g->shm_size = XP_GROUP_STATS_OFF + (size_t)g->n * ops->stats_size;
	g->shm = xp_shm_alloc(g->shm_size, g->nproc > 1);
	g->th = calloc(g->n, sizeof(*g->th));
	if (!g->shm || !g->th)
		return -ENOMEM;
	g->stop = g->shm;
	int cpus[CPU_SETSIZE];
	unsigned ncpu = (unsigned)xp_allowed_cpus(cpus, CPU_SETSIZE);
	for (unsigned t = 0; t < g->n; t++)
		g->th[t].cpu = cpus[t % ncpu];
	return 0;
}

static int setup_threads(struct xp_group *g, unsigned lo, unsigned hi, char *err, size_t errlen)
{
	for (unsigned t = lo; t < hi; t++) {
		int r = g->ops->setup(g->arg, t, err, errlen);
		if (r)
			return r < 0 ? r : -1;
	}
	return 0;
}

static int start_threads(struct xp_group *g, unsigned lo, unsigned hi, char *err, size_t errlen)
{
	for (unsigned t = lo; t < hi; t++) {
		struct xp_group_thread *th = &g->th[t];
		pthread_attr_t attr;
		cpu_set_t set;
		pthread_attr_init(&attr);
		CPU_ZERO(&set);
		CPU_SET(th->cpu, &set);
		/* Pinned from the first instruction: each loop's sockets then stay
		 * with one CPU's caches and softirq work. */
		if (!g->ops->unpinned)
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		int r = pthread_create(&th->thread, &attr, g->ops->main, g->ops->main_arg(g->arg, t));
		pthread_attr_destroy(&attr);
		if (r) {
			snprintf(err, errlen, "cannot start %s: %s", g->ops->what, strerror(r));
			return -r;
		}
		th->running = true;
	}
	return 0;
}

static void join_threads(struct xp_group *g, unsigned lo, unsigned hi)
{
	for (unsigned t = lo; t < hi; t++) {
		if (g->th[t].running)
			pthread_join(g->th[t].thread, NULL);
		g->th[t].running = false;
	}
}

/* Worker process idx runs threads [idx * tpp, (idx + 1) * tpp). */
static void worker_range(const struct xp_group *g, unsigned idx, unsigned *lo, unsigned *hi)
{
	*lo = idx * g->tpp < g->n ? idx * g->tpp : g->n;
	*hi = *lo + g->tpp < g->n ? *lo + g->tpp : g->n;
}

static int group_setup(void *arg, unsigned idx, char *err, size_t errlen)
{
	struct xp_group *g = arg;
	unsigned lo, hi;
	worker_range(g, idx, &lo, &hi);
	/* On failure the worker exits: its threads and sockets go with it. */
	if (setup_threads(g, lo, hi, err, errlen) || start_threads(g, lo, hi, err, errlen))
		return -1;
	return 0;
}

static void group_wait(void *arg, unsigned idx)
{
	struct xp_group *g = arg;
	unsigned lo, hi;
	worker_range(g, idx, &lo, &hi);
	join_threads(g, lo, hi);
}

static void group_tell_stop(void *arg)
{
	struct xp_group *g = arg;
	if (!g->stop)
		return; /* never opened */
	__atomic_store_n(g->stop, 1, __ATOMIC_RELAXED);
	uint64_t one = 1;
	if (write(g->stopfd, &one, sizeof(one)) < 0) {
		/* cannot fail on a fresh eventfd; the loops also poll the flag */
	}
}

static unsigned long long group_progress(void *arg, unsigned idx)
{
	struct xp_group *g = arg;
	unsigned lo, hi;
	unsigned long long n = 0;
	worker_range(g, idx, &lo, &hi);
	for (unsigned t = lo; t < hi && g->ops->progress; t++)
		n += g->ops->progress(g->arg, t);
	return n;
}

static void group_lost(void *arg, unsigned idx)
{
	struct xp_group *g = arg;
	unsigned lo, hi;
	worker_range(g, idx, &lo, &hi);
	for (unsigned t = lo; t < hi && g->ops->lost; t++)
		g->ops->lost(g->arg, t);
}

static const struct xp_proc_ops group_proc_ops = {
	.setup = group_setup,
	.wait = group_wait,
	.tell_stop = group_tell_stop,
	.progress = group_progress,
	.lost = group_lost,
};

int xp_group_prepare(struct xp_group *g, char *err, size_t errlen)
{
	if (g->nproc != 1 || g->prepared)
		return 0;
	int r = setup_threads(g, 0, g->n, err, errlen);
	if (!r)
		g->prepared = true;
	return r;
}

int xp_group_start(struct xp_group *g, char *err, size_t errlen)
{
	if (g->nproc == 1) {
		int r = xp_group_prepare(g, err, errlen);
		if (!r)
			r = start_threads(g, 0, g->n, err, errlen);
		if (r)
			xp_group_stop(g);
		return r;
	}
	/* The worker's name comes from the caller's ops; the rest is ours. */
	struct xp_proc_ops *po = &g->proc_ops;
	*po = group_proc_ops;
	po->name = g->ops->name;
	int keep[] = { g->stopfd };
	if (xp_procs_start(&g->procs, g->nproc, po, g, keep, 1, g->fd_limit, err, errlen))
		return -ECHILD;
	return 0;
}

void xp_group_stop(struct xp_group *g)
{
	group_tell_stop(g);
	xp_procs_stop(g->procs); /* reaps the workers: their counters are final after this */
	g->procs = NULL;
	if (g->th)
		join_threads(g, 0, g->n); /* the in-process threads, if any */
}

void xp_group_close(struct xp_group *g)
{
	if (g->stopfd >= 0)
		close(g->stopfd);
	g->stopfd = -1;
	xp_shm_free(g->shm, g->shm_size);
	g->shm = NULL;
	g->stop = NULL;
	free(g->th);
	g->th = NULL;
}
