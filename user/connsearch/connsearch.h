/*
 * The connection searches (xdpperf -c ADDR --search rate|capacity|teardown):
 * series of trials through the client (client.h, xp_client_test), each
 * started from a drained device table, judged by search.h; reported into a
 * sink (report.h's suite events): a line per trial on stderr, then a table
 * (report.c) or -J with every trial.
 */
#ifndef XP_CONNSEARCH_H
#define XP_CONNSEARCH_H

#include <stdio.h>

#include "client/client.h"
#include "connsearch/cfg.h"
#include "connsearch/search.h"
#include "spec/spec.h"

#define XP_CS_MAX_TRIALS 256

/* What the search is asked to do: its base test (every trial is it at the trial's rate, window and length),
 * its own settings, how its trials run, and its report's form. */
struct xp_cs_job {
	const struct xp_spec *spec; /* the caller's, read only */
	struct xp_cs_cfg cs;
	struct xp_run_opts ro;
	struct xp_report *rep;        /* where the search reports: text or -J (report.h's suite events) */
};

struct xp_cs_rec {
	struct xp_cs_trial t;
	enum xp_rfc_verdict v;
};

struct xp_cs_run {
	const struct xp_cs_job *o;
	enum xp_cs_mode mode;
	struct xp_cs_rec *recs;       /* every trial and probe, in order */
	unsigned n;
	double ceiling;               /* rate, teardown: the top of the search */
	bool ceiling_measured;
	/* The calibration: SYNs the device left unanswered in it (a device that
	 * drops above its limit), and whether they filled even its large window,
	 * so that the top was set by drops, not by the sender. */
	uint64_t calib_lost;
	bool calib_window_full;
	/* the device table: how a drained start is detected */
	bool table;                   /* --device-netns: its conntrack count is read */
	uint64_t baseline;            /* its count before the first trial */
	/* The next test's first tuple (engine/tuples.h): each test starts past
	 * the last one's tuples, so that none of its SYNs reuses a tuple the
	 * device may still keep an entry of (a probe's, closed a moment ago). */
	uint64_t next_tuple;
	/* results */
	double rate;                  /* rate, teardown: the highest passing rate, 0 = none */
	bool sender_limited;          /* the search ended at the sender's own maximum */
	uint64_t capacity;            /* capacity: the most held whole, 0 = none */
	bool at_max;                  /* capacity: -P held whole: a lower bound */
	unsigned trials;
	double started, seconds;
	const char *error;
	char errbuf[320];
	char trial_error[512];        /* why the last trial did not run (its memory sink's error), "" if it did */
};

/* Runs the search, reporting into rep (text or -J, xp_report_init; the caller frees it); the exit status. */
int xp_connsearch_run(const struct xp_spec *s, const struct xp_cs_cfg *cfg, const struct xp_run_opts *ro,
		      struct xp_report *rep);

/* report.c: the parts the search gives its report (report.h's suite events). A trial's progress line
 * into buf; the table at the end; -J's trial record, the search's settings and its result (new references). */
#define XP_CS_LINE_LEN 1024
void xp_cs_line(char *buf, size_t len, const struct xp_cs_run *r, const struct xp_cs_rec *rec);
void xp_cs_report_text(FILE *f, const struct xp_cs_run *r);
struct json_object *xp_cs_trial_json(unsigned i, const struct xp_cs_rec *rec);
struct json_object *xp_cs_settings_json(const struct xp_cs_run *r);
struct json_object *xp_cs_result_json(const struct xp_cs_run *r);

#endif
