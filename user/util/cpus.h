/* The CPUs this process may run on: where the engines and the socket server pin their threads. */
#ifndef XP_CPUS_H
#define XP_CPUS_H

/*
 * The CPUs in this process's affinity mask (so taskset is honoured), in
 * increasing order, at most max of them. If the mask cannot be read, the
 * online CPUs 0..N-1 instead, and CPU 0 if even that is unknown. Returns
 * how many were written: at least 1 when max > 0.
 */
int xp_allowed_cpus(int *cpus, int max);

/* How many CPUs xp_allowed_cpus() lists (at least 1). */
int xp_allowed_cpu_count(void);

#endif
