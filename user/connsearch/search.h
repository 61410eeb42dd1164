/*
 * The connection searches (--search, RFC 3511 5.2-5.4, RFC 9411 7.2-7.3,
 * RFC 9693) as pure functions: no I/O, no clock. run.c runs the trials these
 * ask for; tests/unit/test_connsearch.c drives them with made-up outcomes.
 *
 *   rate      the highest connection rate (--cps) with no failed connection
 *             over a trial: the RFC 2544 suite's binary search
 *             (search/search.h) on the rate, a trial's "frames" being its
 *             connections and "received" those the server completed;
 *   teardown  the same with FIN close: a connection counts only once its
 *             close completed (the server's FIN answered);
 *   capacity  the most connections the device holds at once: hold tests
 *             (-k) of N connections opened at --cps, a binary search on N
 *             that jumps to the count a failed trial reached.
 */
#ifndef XP_CONNSEARCH_SEARCH_H
#define XP_CONNSEARCH_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "search/search.h"

enum xp_cs_mode {
	XP_CS_NONE = 0,
	XP_CS_RATE,
	XP_CS_CAPACITY,
	XP_CS_TEARDOWN,
};

const char *xp_cs_mode_name(enum xp_cs_mode m);
/* "rate", "capacity", "teardown": 0, or -1 for anything else. */
int xp_cs_mode_parse(const char *s, enum xp_cs_mode *m);

/* One trial's outcome, from the client's and the server's counts. */
struct xp_cs_trial {
	enum xp_cs_mode mode;
	const char *what;          /* "trial", "probe" or "calibrate" */
	double target_cps;         /* the rate asked for (capacity: the opening rate); 0: as fast as it goes */
	uint64_t want;             /* capacity: connections to hold (-P); else 0 */
	double seconds;            /* the test's length */
	uint64_t started;          /* first SYNs sent */
	uint64_t established;      /* handshakes the server completed */
	uint64_t closed;           /* teardown: closes completed (the server's FIN answered) */
	uint64_t held;             /* capacity: connections open at the end */
	uint64_t fail_timeout, fail_reset, fail_unreach, in_flight, fin_timeout, syn_retx;
	uint64_t fins;             /* ACK|FINs the client sent, first and again */
	double wall_start;         /* CLOCK_REALTIME seconds when the test was started: for captures and samplers */
	double offered_cps;        /* SYNs sent per second */
	bool short_of_target;      /* the offered rate fell short of target_cps */
	const char *held_back_by;  /* then: "sender", "path" or "kernel" */
	/* The device table when the trial started (--device-netns), and how the start was found drained. */
	bool table_known;
	uint64_t table_at_start;
	unsigned probes;           /* probes at the floor rate before it (the path accepted connections) */
	double drain_s;            /* seconds waited for the device to drain before it */
	int error;                 /* the test did not run (its exit status) */
};

/* Connections that count as done: established (rate), closed (teardown), held (capacity). */
uint64_t xp_cs_ok(const struct xp_cs_trial *t);
/* Connections that failed: those asked for (capacity: want; else started) less xp_cs_ok. */
uint64_t xp_cs_failed(const struct xp_cs_trial *t);

/* As the RFC 2544 suite's verdicts: pass, loss (some connection failed), short, error. */
enum xp_rfc_verdict xp_cs_judge(const struct xp_cs_trial *t);
/* The trial as the RFC 2544 search takes it: connections as frames, the good ones as received. */
struct xp_rfc_trial xp_cs_as_rfc(const struct xp_cs_trial *t);

/* Capacity: binary search on N in [1, max] to res_pct percent of the lowest failing N. */
struct xp_cs_cap {
	uint64_t lo, hi, max;      /* lo: the largest N held whole (0: none yet); hi: the smallest that failed */
	double res_pct;
	uint64_t hint;             /* what the last failing trial reached: the likely capacity, tried next */
	bool hint_passed;          /* the last trial, at the hint, held all: try just above it */
	bool lo_tested, done;
	unsigned trials;
};
void xp_cs_cap_init(struct xp_cs_cap *c, uint64_t max, double res_pct);
/* The next N to try, 0 when done. */
uint64_t xp_cs_cap_next(const struct xp_cs_cap *c);
/* Account a trial of t->want connections run at xp_cs_cap_next()'s N. */
void xp_cs_cap_record(struct xp_cs_cap *c, const struct xp_cs_trial *t);
/* The capacity found (0: not even one trial held all); *at_max: every trial held all, -P is a lower bound. */
uint64_t xp_cs_cap_result(const struct xp_cs_cap *c, bool *at_max);

/*
 * A trial starts from a drained table: with the device's table readable
 * (--device-netns), once it holds at most XP_CS_DRAIN_SLACK entries more
 * than before the search began (the control connection, a probe's last
 * few). Without it nothing but the probe can tell.
 */
#define XP_CS_DRAIN_SLACK 64u
bool xp_cs_drained(uint64_t table_now, uint64_t baseline);

/* A trial's length for capacity: long enough to open want at cps, then 2 s (a lost SYN's timeout and the hold). */
double xp_cs_cap_seconds(uint64_t want, double cps, double trial_s);

#endif
