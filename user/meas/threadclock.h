/*
 * Where a sending thread's time went, for the engines' account of their
 * pacing (struct xp_pace_stats): its wall time, how long it waited runnable
 * for a CPU (/proc/thread-self/schedstat), and how its CPU's time split into
 * softirq and the rest (/proc/stat) while it ran. Read once at the thread's
 * start and once at its end, from the thread itself.
 */
#ifndef XP_THREADCLOCK_H
#define XP_THREADCLOCK_H

#include <stdint.h>

#include "meas/figures.h"

struct xp_thread_clock {
	int cpu;                  /* the CPU the thread is pinned to, -1: unknown */
	double t;                 /* xp_now() */
	uint64_t wait_ns;         /* schedstat: time runnable on a run queue */
	uint64_t softirq, total;  /* /proc/stat ticks of cpu */
};

void xp_thread_clock_start(struct xp_thread_clock *c, int cpu);
/* Add what happened since start to acc: wall, CPU wait, the CPU's ticks. Thread-safe only per acc. */
void xp_thread_clock_end(const struct xp_thread_clock *c, struct xp_pace_stats *acc);

/* acc += one thread's account. */
void xp_pace_add(struct xp_pace_stats *acc, const struct xp_pace_stats *one);

#endif
