/*
 * Rate control of the sending engines (live frames and AF_XDP): one pacer per
 * sending thread, at that thread's share of the test's rate.
 *
 * Frames go out in units: a slice of about XP_PACE_SLICE_S seconds of frames
 * (at least 1), or with --burst N, N frames back to back. Units are scheduled
 * against CLOCK_MONOTONIC from the thread's start: unit j is due once
 * (now - t0) * pps reaches (j + 1) * unit, so the frames are spread evenly
 * over every second and the long-run rate is exact. Thread k of n starts k/n
 * of a unit's period late, so the threads' units interleave instead of going
 * out together. Ahead of schedule the thread sleeps (1 us timer slack) and
 * spins only the last XP_PACE_SPIN_S; behind it (a stall) it catches up back
 * to back, but never by more than XP_PACE_CATCHUP_S of frames (and at least
 * two units): a longer stall is forgiven, not bursted.
 *
 * Smooth catch-up (cfg->catchup_excess = e > 0, the RFC 2544 trials): a
 * device with a small burst allowance (a policer, nftables' limit with its
 * burst) drops a 20-ms catch-up burst that it would carry as a steady rate,
 * so the frames of a stall are made up at most e above the rate instead:
 * a second bucket, filled at (1 + e) * pps and holding at most
 * XP_PACE_SMOOTH_S of frames (at least two units), bounds every grant: a
 * short stall (a sleep's wake-up jitter, a few ms without a CPU on a shared
 * host) is made up at once, a longer one at e above the rate. Against a
 * token bucket of rate L and depth B the make-up of a stall of d seconds
 * (d <= the 20 ms cap) then goes beyond the bucket only when
 * rate * XP_PACE_SMOOTH_S + ((1 + e) * rate - L) * d / e > B: with e = 1 %,
 * rate 0.99 L (2 % from the limit is RFC 2544 tests' usual accuracy) and
 * 5 ms, never (nothing above L). A stall not yet made up at the end shows
 * as an offered load below the target.
 *
 * Time comes in as an argument (`now`, seconds of CLOCK_MONOTONIC as
 * xp_now() gives them) so the schedule can be driven by a fake clock;
 * xp_pacer_next() is the real-time wrapper the engines call. Callers should
 * set a 1 us timer slack (PR_SET_TIMERSLACK): the default 50 us would make
 * every pacing sleep late.
 *
 * Catch-up in one call (cfg->coalesce, the live engine): behind schedule by
 * two units or more, the pacer hands out everything due (whole units, up to
 * the cap) at once instead of one unit per call. Where each call has a fixed
 * cost that can be long (BPF_PROG_RUN with live frames waits for the kernel's
 * XDP dispatcher lock, which another process adding or removing an XDP
 * program holds for an RCU grace period, 10-30 ms), one unit per call would
 * make up a stall at one unit per wait: 9 frames per ~20 ms at 90 kpps, a
 * small fraction of the target, and fall further behind with every wait.
 *
 * A caller may send a unit in pieces (AF_XDP posts at most a ring batch at a
 * time, and the ring may take fewer): the pacer hands out the rest of the
 * current unit until all of it has been reported sent, and only then looks
 * at the clock for the next one.
 */
#ifndef XP_PACER_H
#define XP_PACER_H

#include <stdbool.h>
#include <stdint.h>

#define XP_PACE_SLICE_S   100e-6 /* paced: a unit is about 100 us of frames */
#define XP_PACE_SPIN_S    20e-6  /* sleep until this close to the due time, then spin */
#define XP_PACE_CATCHUP_S 20e-3  /* at most 20 ms of frames are made up after a stall */
#define XP_PACE_MAX_SLEEP 0.05   /* one sleep at most: stop() must not wait for a slow burst */
#define XP_PACE_SMOOTH_S  5e-3   /* smooth catch-up: at most 5 ms of frames back to back */

struct xp_pacer_cfg {
	double pps;          /* this thread's frames per second (the test's rate / threads); <= 0: unpaced */
	unsigned burst;      /* frames per unit, back to back; 0: slices of XP_PACE_SLICE_S */
	unsigned thread;     /* this thread's index (0..nthreads-1): its phase */
	unsigned nthreads;   /* threads sharing the rate (0 counts as 1) */
	uint32_t unpaced;    /* frames per unit when unpaced (at least 1) */
	bool coalesce;       /* behind schedule: hand out all that is due (up to the cap) at once */
	uint32_t max_grant;  /* coalesce: at most this many frames in one grant (0: the cap only) */
	double catchup_excess; /* > 0: smooth catch-up, at most this fraction above pps (0.01 = 1 %) */
};

struct xp_pacer {
	double pps;     /* 0: unpaced */
	double t0;      /* the schedule's start */
	double base;    /* frames due at t0: by time t, (t - t0) * pps + base are */
	double cap;     /* at most this many frames are due at once */
	uint64_t sent;  /* frames reported sent */
	uint32_t unit;  /* frames per unit */
	uint32_t left;  /* frames of the unit handed out that are not sent yet */
	bool coalesce;  /* see xp_pacer_cfg */
	uint32_t grant_limit; /* xp_pacer_cfg.max_grant */
	double excess;        /* smooth catch-up: xp_pacer_cfg.catchup_excess (0: off) */
	double allow;         /* its bucket: frames that may go back to back now */
	double allow_max;     /* ... at most */
	double t_allow;       /* when it was last filled */
	uint64_t catchups;    /* grants of more than one unit (coalesce) */
	uint32_t max_grant;   /* the largest grant so far */
};

/* Start the schedule at `now`: thread 0's first unit is due at once. */
void xp_pacer_init(struct xp_pacer *p, const struct xp_pacer_cfg *c, double now);

/*
 * Frames that may go now: the rest of the current unit, or a whole new unit
 * if it is due by `now` (after a stall, one unit per call back to back until
 * the schedule is met; with coalesce, all whole units due, up to the cap, in
 * one grant). 0 if the next unit is not due yet; then *wait (if
 * not NULL) is how long until it is. Unpaced: always the unpaced unit.
 */
uint32_t xp_pacer_poll(struct xp_pacer *p, double now, double *wait);

/* n frames of what xp_pacer_poll handed out went out. */
void xp_pacer_sent(struct xp_pacer *p, uint32_t n);

/*
 * xp_pacer_poll at xp_now() (the clock is read only when a new unit may be
 * due); when nothing is due, sleep towards the due time (at most
 * XP_PACE_MAX_SLEEP, leaving the last XP_PACE_SPIN_S to spinning) and return
 * 0: call again (calling again is the spin).
 */
uint32_t xp_pacer_next(struct xp_pacer *p);

#endif
