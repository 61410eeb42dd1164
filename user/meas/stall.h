/*
 * A test that stalls: what it completes per interval (connections, or
 * frames received) falls to a fraction of its own running peak while the
 * test goes on. The window of the XDP connection engine caps the unanswered
 * SYNs at -P, so a device that stops answering (a full table, a crashed
 * process) leaves the share of failed SYNs small while the rate collapses;
 * a frame test into a path that stops forwarding keeps sending into nothing.
 * Both must be the summary's first line, not a lower average (issue 30).
 */
#ifndef XDPPERF_REPORT_STALL_H
#define XDPPERF_REPORT_STALL_H

#include <stdbool.h>

/* Intervals shorter than this (a test's last, cut short) are not judged. */
#define XP_STALL_MIN_SECS 0.5

struct xp_stall {
	double pct;           /* the threshold: percent of the running peak */
	bool conn;            /* connections completed (else frames received) */
	double peak;          /* the highest rate of the intervals so far, per second */
	double peak_sent;     /* frames: the highest send rate so far */
	bool stalled;
	double t0, t1;        /* the first stalled interval */
	double rate;          /* its rate, per second */
	double before;        /* the running peak before it */
	unsigned intervals;   /* stalled intervals in all */
	char text[512];       /* the summary's first line once stalled (xp_stall_text) */
};

void xp_stall_init(struct xp_stall *s, double pct, bool conn);
/*
 * One interval t0..t1: done completions (connections, or frames received)
 * and sent (SYNs or frames sent) in it. For frames a stall also needs the
 * sending to have gone on (at least pct % of its own peak); a connection
 * engine's sending stops when its window fills, so there it is not asked.
 */
void xp_stall_feed(struct xp_stall *s, double t0, double t1, double done, double sent);
/* The summary's first line (no newline) of a stalled test: "WARNING: stalled ...". */
void xp_stall_text(const struct xp_stall *s, const char *why, char *buf, unsigned long len);

#endif
