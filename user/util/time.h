/* Monotonic time in seconds, sleeping, and process CPU time. */
#ifndef XP_TIME_H
#define XP_TIME_H

#include <sys/resource.h>
#include <time.h>

static inline double xp_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* CLOCK_REALTIME in ns: an instant another host can be told (the OTG agents' start time). */
static inline unsigned long long xp_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static inline void xp_sleep(double secs)
{
	if (secs <= 0)
		return;
	struct timespec ts = { .tv_sec = (time_t)secs, .tv_nsec = (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
}

/*
 * User + system CPU seconds used by this process (all threads) and by the
 * worker processes it has reaped (the socket engine forks workers past the
 * open-file limit; their time counts once they are waited for).
 */
static inline double xp_cpu_seconds(void)
{
	struct rusage ru, ch;
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_CHILDREN, &ch);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6 +
	       ch.ru_utime.tv_sec + ch.ru_utime.tv_usec * 1e-6 + ch.ru_stime.tv_sec + ch.ru_stime.tv_usec * 1e-6;
}

#endif
