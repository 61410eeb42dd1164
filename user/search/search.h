/*
 * RFC 2544 bookkeeping as pure functions (no I/O, no clock): the verdict on
 * one trial, the throughput binary search (26.1) with the no-drop rate and,
 * from the same trials, the rate at a loss tolerance (NDR and PDR, as CSIT's
 * MLRsearch reports them), the frame loss rate steps (26.3), the
 * back-to-back burst search (26.4 as RFC 9004 updates it) and its buffer
 * times. The RFC 2544 suite (rfc2544/run.c) runs the trials these ask
 * for, and the connection searches (connsearch/search.h) build on the rate
 * search; a folder of its own below both, so that neither suite includes
 * the other. tests/unit/test_rfc2544.c drives them with made-up outcomes.
 */
#ifndef XP_RFC2544_SEARCH_H
#define XP_RFC2544_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

/* Latency of one trial, from the measurement core when it is there (issue 10). */
struct xp_rfc_latency {
	bool known;             /* false: this build has no per-frame latency */
	double min_us, mean_us, max_us, p50_us, p99_us, p999_us;
	uint64_t timed;         /* frames timed (every frame that arrived with a stamp) */
};

/*
 * --bidir (RFC 2544 section 14): the trial's other direction, B->A, sent by
 * the server's side at the same rate and size at the same time as A->B (the
 * trial's own figures below). on: the trial is bidirectional.
 */
struct xp_rfc_dir {
	bool on;
	double target_pps;         /* the rate B->A was asked for (its own search's: it may differ from A->B's) */
	uint64_t sent, received;
	double seconds, offered_pps;
	bool short_of_target;
	const char *held_back_by;  /* as xp_rfc_trial's */
	int error;                 /* it did not run */
};

/* One trial: what was asked, what the sender reached, what arrived. */
struct xp_rfc_trial {
	double target_pps;      /* the rate asked for (0: as fast as the sender goes) */
	unsigned burst;         /* back-to-back: the burst's frames, 0 for a paced trial */
	double seconds;         /* the trial's sending time */
	uint64_t sent, received;
	double offered_pps;     /* sent / seconds: the offered load actually reached */
	bool short_of_target;   /* the offered load fell short of target_pps by more than the tolerance */
	const char *held_back_by; /* when short: "sender", "path" or "kernel" (report/pace.c) */
	bool kernel_sleeps;     /* the engine's calls slept in the kernel: the load came in bursts */
	uint32_t max_catchup;   /* the largest catch-up after a stall, frames (0: none; at most 5 ms of them, or two units) */
	struct xp_rfc_latency lat;
	int error;              /* the trial did not run (the client's exit status); then nothing above counts */
	struct xp_rfc_dir rev;  /* --bidir: B->A; the fields above are then A->B's */
};

enum xp_rfc_verdict {
	XP_RFC_PASS = 0,        /* loss within the tolerance and the offered load on target */
	XP_RFC_LOSS,            /* frames lost beyond the tolerance */
	XP_RFC_SHORT,           /* the offered load fell short: no verdict on the device at this rate */
	XP_RFC_ERROR,           /* the trial did not run */
};

/* Lost frames in percent of those sent (received beyond sent count as none lost).
 * A bidirectional trial: its worse direction's (so "within the tolerance" holds for both). */
double xp_rfc_loss_pct(const struct xp_rfc_trial *t);
/* One direction's: A->B (rev false, the trial's own figures) or B->A. */
double xp_rfc_dir_loss_pct(const struct xp_rfc_trial *t, bool rev);
/*
 * A trial passes only if at most loss_tol_pct of its frames were lost AND
 * the offered load it reached was within the rate-control tolerance of its
 * target: in a veth lab a device that cannot keep up slows the sender
 * instead of dropping, so "no loss" alone proves nothing. Short beats loss:
 * a trial short of its target says nothing about its target rate.
 */
enum xp_rfc_verdict xp_rfc_judge(const struct xp_rfc_trial *t, double loss_tol_pct);
/*
 * --bidir: each direction is judged by the rule above on its own, and the
 * trial gets the worse verdict (error, then short, then loss, then pass):
 * it passes only if BOTH directions lost nothing (or at most the tolerance)
 * AND both reached their offered load. xp_rfc_judge does this for a trial
 * with rev.on; this is one direction's verdict alone.
 */
enum xp_rfc_verdict xp_rfc_judge_dir(const struct xp_rfc_trial *t, bool rev, double loss_tol_pct);
const char *xp_rfc_verdict_name(enum xp_rfc_verdict v);

/*
 * Throughput search between floor_pps and max_pps (the most the sender
 * reaches, or --line-rate's frame rate), to a resolution of res_pct percent
 * of the lowest failing rate. The first trial is at max_pps; a pass there ends the search.
 * Then it halves [lo, hi], lo the highest rate that passed (floor_pps until
 * one did), hi the lowest that did not, until hi - lo <= the resolution.
 * A short trial counts as a failure at that rate (the device, or the
 * sender, could not take it); which one is kept to say "sender-limited".
 */
struct xp_rfc_search {
	double floor_pps, max_pps;
	double res_pct;         /* done when hi - lo <= res_pct % of hi */
	double loss_tol_pct;    /* for the PDR: the highest tried rate that lost at most this much */
	double lo, hi;
	bool lo_tested;         /* some trial passed (lo is a measured rate, not the floor) */
	double ndr_pps;         /* highest passing rate so far (0: none) */
	double pdr_pps;         /* highest rate with loss <= loss_tol_pct and on target (0: none) */
	double ndr_offered;     /* the offered load of the trial that set ndr_pps */
	unsigned trials, shorts, sender_shorts;
	bool hi_by_sender;      /* the lowest failing rate failed because the sender fell short */
	bool done;
	/* xp_rfc_search_confirm(): a rate that lost frames runs again. */
	unsigned confirm;       /* runs again per rate, at most */
	unsigned left;          /* runs again left at the current rate */
	bool repeating;         /* the next trial runs the current rate again */
	struct xp_rfc_trial held; /* the current rate's run with the least loss so far */
	unsigned repeats;       /* runs again in the whole search */
	unsigned passed_on_repeat; /* rates that lost on their first run and passed on a later one */
};

void xp_rfc_search_init(struct xp_rfc_search *s, double floor_pps, double max_pps, double res_pct, double loss_tol_pct);
/*
 * A trial that lost frames runs again at its rate, up to n times; the rate
 * fails only if every run lost, and the search takes the run with the
 * least loss (a pass if there was one). In a lab whose CPUs are shared
 * (namespaces, VMs) one trial can lose frames to a moment the device was
 * not scheduled, and a binary search never returns above a rate it saw
 * fail: one such trial below the limit ends it low. A device that loses at
 * a rate loses on every run and the search is the same. A run short of
 * its target runs again too, whoever held it back: on a shared host the
 * account of who did (report/pace.c) counts other processes' packet work
 * as the path's, and a device that really pushes back does so on every
 * run. The run kept: a pass, else the least loss, else the first short
 * one. n = 0 (the default here): one trial per rate, RFC 2544's reading.
 */
void xp_rfc_search_confirm(struct xp_rfc_search *s, unsigned n);
/* The next trial (xp_rfc_search_next's rate) runs the last rate again. */
bool xp_rfc_search_repeating(const struct xp_rfc_search *s);
/* The next rate to try, or 0 when the search is over. */
double xp_rfc_search_next(const struct xp_rfc_search *s);
/* Account trial t, run at rate xp_rfc_search_next() gave. Returns its verdict (for NDR). */
enum xp_rfc_verdict xp_rfc_search_record(struct xp_rfc_search *s, const struct xp_rfc_trial *t);
/*
 * The search ended at the sender's own limit: the maximum passed and was
 * the sender's (max_is_sender: measured, and the sender or the kernel under
 * it held that measurement back, not the path), or the failure above the
 * result was the sender falling short, not loss or the path pushing back.
 * Then the result is not the device's throughput: "sender-limited".
 */
bool xp_rfc_search_sender_limited(const struct xp_rfc_search *s, bool max_is_sender);

/*
 * --bidir (RFC 2544 section 14 with each direction's own throughput): one
 * search per direction ([0] A->B, [1] B->A), both run in the same trials.
 * Each trial offers each direction its own search's next rate (the two may
 * differ), and each direction's verdict (zero loss AND its offered load
 * within the rate-control tolerance, xp_rfc_judge_dir) is recorded in its
 * own search only: a direction that lost frames at rate R lowers its own
 * upper bound, not the other's. So each ends with its own NDR, PDR and
 * "limited by". A direction whose search has ended keeps sending at its NDR
 * (held) while the other searches on, so every trial loads the device both
 * ways; its verdicts there are counted (held_trials, held_failed: the held
 * rate failed while the other direction ran higher) but do not move its
 * result. tests/unit/test_rfc2544_bidir.c drives it by hand.
 */
struct xp_rfc_search2 {
	struct xp_rfc_search d[2];
	unsigned trials;          /* bidirectional trials run (repeats too) */
	unsigned held_trials[2];  /* trials in which direction d was held at its NDR */
	unsigned held_failed[2];  /* of those, the ones in which it failed there */
};
/* max_pps[d]: each direction's own top (its sender's maximum measured with both sending, or the line rate). */
void xp_rfc_search2_init(struct xp_rfc_search2 *s, double floor_pps, const double max_pps[2], double res_pct,
			 double loss_tol_pct);
void xp_rfc_search2_confirm(struct xp_rfc_search2 *s, unsigned n);
/* The next trial's rate per direction, whole frames/s; false when both searches are over. */
bool xp_rfc_search2_next(const struct xp_rfc_search2 *s, double rate[2]);
/* Whether direction d's next rate runs its last rate again (--confirm-loss). */
bool xp_rfc_search2_repeating(const struct xp_rfc_search2 *s, int d);
/* Account a bidirectional trial run at xp_rfc_search2_next's rates (t: A->B, t->rev: B->A). */
void xp_rfc_search2_record(struct xp_rfc_search2 *s, const struct xp_rfc_trial *t);
/* One direction of a bidirectional trial as a one-way trial: its own target, counts and verdict. */
struct xp_rfc_trial xp_rfc_trial_dir(const struct xp_rfc_trial *t, int d);

/*
 * Frame loss rate (26.3): trials at 100 %, 90 %, ... of max_pps, until two
 * in a row lose nothing (or 10 % has been tried).
 */
struct xp_rfc_flr {
	double max_pps;
	unsigned step;          /* the next trial is at (10 - step) * 10 % */
	unsigned clean_in_row;
	bool done;
};
void xp_rfc_flr_init(struct xp_rfc_flr *f, double max_pps);
double xp_rfc_flr_next(const struct xp_rfc_flr *f); /* 0 when done */
void xp_rfc_flr_record(struct xp_rfc_flr *f, const struct xp_rfc_trial *t);

/*
 * Back-to-back (RFC 9004): binary search for the longest burst at the
 * maximum rate that loses nothing, between 1 and max_burst frames, to
 * res_frames; a burst that loses nothing at max_burst ends it (the device
 * buffered all of it: "at least max_burst").
 */
struct xp_rfc_b2b {
	uint64_t lo, hi, max_burst, res;
	bool lo_tested, done;
	unsigned trials;
};
void xp_rfc_b2b_init(struct xp_rfc_b2b *b, uint64_t max_burst, uint64_t res_frames);
uint64_t xp_rfc_b2b_next(const struct xp_rfc_b2b *b); /* 0 when done */
void xp_rfc_b2b_record(struct xp_rfc_b2b *b, const struct xp_rfc_trial *t);
/* The longest clean burst found (0: even a burst of 1 lost frames). */
uint64_t xp_rfc_b2b_result(const struct xp_rfc_b2b *b);

/*
 * RFC 9004's buffer times from the mean back-to-back burst B (frames), the
 * maximum theoretical frame rate R and the measured throughput T (frames/s):
 *   implied   = B / R
 *   corrected = (B / R) * (1 - T / R)   (the frames it forwarded during the burst left out; search.c)
 * Negative or undefined inputs give 0.
 */
double xp_rfc_implied_buffer_s(double b2b_frames, double max_rate);
double xp_rfc_corrected_buffer_s(double b2b_frames, double max_rate, double throughput);

/* L1 and L2 bits per second of pps frames of frame_len bytes (with FCS; a
 * frame mix: its mean, frame/mix.h). */
double xp_rfc_l2_bps(double pps, double frame_len);
double xp_rfc_l1_bps(double pps, double frame_len);
/* The frame rate of a link of line_bps bits/s (L1) at frame_len bytes. */
double xp_rfc_line_pps(double line_bps, double frame_len);

#endif
