/*
 * The RFC 2544 suite (xdpperf -c ADDR --rfc2544): per frame size, the
 * tests --tests chose, each a series of trials run through the client
 * (client.h, xp_client_trial) and judged by search/search.h; then the tables
 * (report.c), -J with every trial, and with --plot DIR the gnuplot plots and
 * a Markdown summary (plot.c).
 */
#ifndef XP_RFC2544_H
#define XP_RFC2544_H

#include <stdio.h>

#include "client/client.h"
#include "rfc2544/cfg.h"
#include "spec/spec.h"
#include "search/search.h"

#define XP_RFC_MAX_TRIALS 512

/* A test with flows as the suite's traffic (--flows FILE, flows.c): one flow's figures in one trial. */
struct xp_rfc_flow_fig {
	uint64_t sent, received;   /* the engine's count of it, the server's (duplicates once) */
	bool counted;              /* the server sent its figures of the flow */
	struct xp_rfc_latency lat; /* known: every frame of it timed one way */
};
/* One flow across the suite's pass: its share, and its latency over every frame of the latency trials. */
struct xp_rfc_flow {
	char name[64];             /* the flow file's name, or "flow N" */
	double share;              /* of the aggregate's frames (0..1): its rate's, kept in every trial */
	double mean;               /* its mean frame bytes */
	unsigned lat_n;            /* latency trials that timed it */
	struct xp_lat_hist lat_hist; /* every frame of it those trials timed */
};

/* One size's results. */
struct xp_rfc_size {
	unsigned len;              /* frame bytes with FCS; a mix: its largest (the template, the MTU check) */
	const struct xp_mix *mix;  /* --sizes imix / SIZE:WEIGHT,...: every trial sends it interleaved; NULL: len */
	double mean;               /* bytes per frame for the bit rates: len, or the mix's mean */
	char label[16];            /* the report's "bytes" column: "64", "imix", "mix", "flows" */
	/* --flows FILE: the one pass with the flows' own sizes; every trial's rate is the flows' aggregate,
	 * each flow at its share (client.h, xp_trial_flow_rates). len: the largest frame, mean: the aggregate's. */
	struct xp_rfc_flow *flow;  /* NULL: no flows */
	unsigned nflows;
	double max_pps;            /* the search's top: the line rate, or the sender's measured maximum */
	bool max_is_line;
	const char *max_held_by;   /* the calibration: who held the sender's maximum back */
	/* throughput */
	bool tp_run;
	double ndr_pps, pdr_pps;
	bool sender_limited;
	unsigned tp_trials;        /* the search's rates (repeats not counted) */
	unsigned tp_repeats;       /* --confirm-loss: runs again of a losing trial */
	unsigned tp_passed_on_repeat; /* rates that lost on a first run and passed on a repeat */
	/* latency at the throughput rate (RFC 2544 26.2) */
	bool lat_run;
	double lat_pps;            /* the rate the latency trials ran at */
	unsigned lat_n;            /* trials with latency figures */
	struct xp_rfc_latency lat; /* each figure's mean over those trials (timed: their sum) */
	struct xp_lat_hist lat_hist; /* every frame of those trials: the distribution plot, -J's buckets */
	char lat_why[160];         /* when no trial had figures: why */
	/* --bidir: B->A's latency at the throughput rate, as lat* above are A->B's */
	unsigned lat_rev_n;
	struct xp_rfc_latency lat_rev;
	struct xp_lat_hist lat_rev_hist;
	char lat_rev_why[160];
	/* --bidir: each direction's own search (search/search.h, xp_rfc_search2; [0] A->B, [1] B->A).
	 * ndr_pps/pdr_pps above are then the lower direction's; the combined
	 * throughput is dir_ndr[0] + dir_ndr[1]. */
	double dir_max[2];             /* each direction's top: its sender's maximum with both sending, or the line rate */
	const char *dir_max_held_by[2];
	double dir_ndr[2], dir_pdr[2];
	bool dir_sender_limited[2];
	unsigned dir_trials[2];        /* each search's rates (repeats not counted) */
	unsigned dir_repeats[2];
	unsigned dir_held[2], dir_held_failed[2]; /* trials held at its NDR while the other searched on; failed there */
	double lat_rev_pps;            /* the rate B->A's latency trials ran at (its NDR) */
	/* frame loss rate (--bidir: flr_* A->B, flr_rev_* B->A; flr_loss the worse) */
	unsigned flr_n;
	double flr_offered[10], flr_target[10], flr_loss[10];
	double flr_rev_offered[10], flr_rev_loss[10], flr_fwd_loss[10];
	/* back-to-back */
	bool b2b_run;
	const char *b2b_skip;      /* why it did not run at this size */
	double b2b_mean;           /* frames */
	bool b2b_at_max;           /* every search passed the largest burst: the figures are lower bounds */
	unsigned b2b_n;
	double implied_s, corrected_s;
};

/* A size's name in the tables ("64", "imix", "mix") and its bytes per frame for the bit rates. */
/* A size named by its label, not its bytes: a mix, or the flows. */
static inline bool xp_rfc_named(const struct xp_rfc_size *z)
{
	return z->mix || z->flow;
}

static inline const char *xp_rfc_label(const struct xp_rfc_size *z, char buf[16])
{
	if (xp_rfc_named(z))
		return z->label;
	snprintf(buf, 16, "%u", z->len);
	return buf;
}

static inline double xp_rfc_mean(const struct xp_rfc_size *z)
{
	return xp_rfc_named(z) ? z->mean : z->len;
}

struct xp_rfc_trial_rec {
	unsigned len;
	const struct xp_rfc_size *z; /* its size (label, mix) */
	const char *test;          /* "calibrate", "throughput", "latency", "loss", "b2b" */
	struct xp_rfc_trial t;
	enum xp_rfc_verdict v;
	unsigned repeat_of;        /* --confirm-loss: the number (progress line, 1-based) of the losing trial this runs again; 0: none */
	struct xp_rfc_latency rev_lat; /* --bidir: B->A's latency (t.rev has its counts) */
	double rev_target_pps;     /* --bidir: the rate B->A's sender paced to */
	struct xp_rfc_flow_fig *flows; /* --flows: each flow's figures in this trial (malloc'ed), NULL: none */
	unsigned nflows;
};

/* What the suite is asked to do: its base test (every trial is it at the trial's rate, size and length),
 * its own settings, how its trials run, and its report's form. */
struct xp_rfc_job {
	const struct xp_spec *spec; /* the caller's, read only */
	struct xp_rfc2544_cfg rfc;
	struct xp_run_opts ro;
	struct xp_report *rep;     /* where the suite reports: text or -J (report.h's suite events) */
};

/* bidir.c: --bidir's client side (the design: there and in server/reverse.c). */
struct xp_bidir {
	int pid;               /* the xdpperf server we run on our side for B->A (0: none) */
	int logfd;             /* its stdout and stderr */
	unsigned short port;   /* its control port: ours + 1 */
	struct xp_client_reverse *rv; /* the reverse trials' requests to the server (client.h; --auth-key's key) */
};
/* Start our server; 0, or -1 with a one-line err. */
int xp_bidir_open(const struct xp_rfc_job *o, struct xp_bidir *b, char *err, size_t errlen);
void xp_bidir_close(struct xp_bidir *b);
/* One trial both ways at once: A->B into *out (as xp_client_trial does), B->A into *rev; then req's settle. */
void xp_bidir_trial(struct xp_bidir *b, const struct xp_rfc_job *o, const struct xp_trial_req *req, double rev_pps,
		    struct xp_trial_out *out, struct xp_reverse_res *rev);

struct xp_rfc_run {
	const struct xp_rfc_job *o;
	struct xp_rfc_size sizes[XP_RFC_MAX_SIZES];
	unsigned nsizes;
	struct xp_rfc_trial_rec *trials;
	unsigned ntrials;
	double started, seconds;
	double settle_s;
	const char *error;
	char failed_at[16];        /* the size whose trial did not run ("" none): the label */
	bool bidir;                /* --bidir: every trial both ways at once */
	struct xp_bidir bd;
	struct xp_reverse_res *rev; /* the last trial's B->A figures (its latency histogram too) */
	unsigned next_repeat_of;   /* --confirm-loss: the trial the next one runs again (its record's repeat_of), 0 none */
};

/* The whole suite, reported into rep (text or -J, xp_report_init; the caller frees it); the exit status. */
int xp_rfc2544_run(const struct xp_spec *s, const struct xp_rfc2544_cfg *cfg, const struct xp_run_opts *ro,
		   struct xp_report *rep);

/* report.c: the parts the suite gives its report (report.h's suite events). The tables at the end;
 * -J's head (settings, sizes), a trial's record and the tail (seconds, error): new references. */
void xp_rfc_report_text(FILE *f, const struct xp_rfc_run *r);
struct json_object *xp_rfc_head_json(const struct xp_rfc_run *r);
struct json_object *xp_rfc_trial_json(const struct xp_rfc_trial_rec *t);
struct json_object *xp_rfc_tail_json(const struct xp_rfc_run *r);
/* json_figs.c: a figure as a member (null when not finite), a latency's members (frames_timed, min/mean/max/p50/p99/p99_9 in µs). */
void xp_rfc_add_d(struct json_object *o, const char *k, double v);
void xp_rfc_lat_json(struct json_object *o, const struct xp_rfc_latency *x);
/* The -J document of a finished run at once, through a -J sink as the run gives it (the unit tests). */
void xp_rfc_report_json(FILE *f, const struct xp_rfc_run *r);
/* flows.c: the suite with flows (--flows FILE). setup: the one pass's size (its label, the aggregate's mean,
 * each flow's share) from the spec; 0 or -1 without memory. trial: a trial's per-flow figures into rec (from
 * out's), and a latency trial's frames into each flow's histogram. The per-flow table after the suite's
 * tables; -J's per-flow objects of a size and of a trial (NULL without flows). free: what they hold. */
int xp_rfc_flows_setup(const struct xp_spec *s, struct xp_rfc_size *z);
void xp_rfc_flows_trial(struct xp_rfc_size *z, struct xp_rfc_trial_rec *rec, const struct xp_trial_out *out);
void xp_rfc_flows_text(FILE *f, const struct xp_rfc_run *r);
struct json_object *xp_rfc_flows_size_json(const struct xp_rfc_run *r, const struct xp_rfc_size *z);
struct json_object *xp_rfc_flows_trial_json(const struct xp_rfc_trial_rec *t);
void xp_rfc_flows_free(struct xp_rfc_run *r);
/* Loss in percent of a flow's figures in a trial (sent - received, of sent). */
double xp_rfc_flow_loss_pct(const struct xp_rfc_flow_fig *f);

/* plot.c: data, gnuplot SVG+PNG and summary.md in dir. 0 or -1 with err. */
int xp_rfc_plot(const struct xp_rfc_run *r, const char *dir, char *err, size_t errlen);

#endif
