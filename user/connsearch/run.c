/*
 * The connection searches' driver (connsearch.h). Each trial is a test of
 * its own (xp_client_test: its own control session, the server counting
 * from zero) with the report thrown away; only the counts search.h judges
 * come back.
 *
 * A drained start, detected: before every trial (and the calibration)
 *   1. probes: a 2-s -x test at --search-floor (RST close), again every
 *      second until no connection fails: the path accepts new connections
 *      again (a full table, or a device still recovering, fails it; this is
 *      what a client can see of a remote device);
 *   2. the table: with --device-netns, its live conntrack entries (client/device_table.c) counted until it has
 *      been back within XP_CS_DRAIN_SLACK of what it was before the search
 *      for SETTLED_S (the probes' and the last trial's entries gone); without it, --search-settle
 *      seconds (the time the device keeps closed entries, which a client
 *      cannot see) and a last probe.
 * The table's count at each trial's start is in its line and in -J. The
 * entries left within the slack are a probe's closed connections: every test
 * (probe or trial) uses tuples no test before it used (r->next_tuple), so a
 * trial's SYN never lands on one of them (a firewall would take it for the
 * old connection, not a new one, and a connection limit would not count it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "client/client.h"
#include "connsearch/connsearch.h"
#include "util/process.h"
#include "util/time.h"

#define PROBE_S        2.0   /* a lost SYN times out after 1 s: a probe sees it */
#define PROBE_TRIES    60    /* one a second at most: a minute for the device to recover */
#define DRAIN_MAX_S    180.0 /* TIME_WAIT is 120 s in Linux's conntrack: beyond that it is not draining */
#define CALIBRATE_S    3.0
/*
 * The calibration's window: SYNs the device drops wait out their timeout
 * (1 s, no retries in the calibration) in the window, so a window of the
 * user's -P (1024 by default) caps the sender at about -P a second against a
 * device that limits new connections, and the search's top would be that
 * (2232/s against a limit of tens of thousands, "sender-limited"). With
 * 262144 slots the sender's own maximum through a firewall (~300 k/s here)
 * fits a second of drops.
 */
#define CALIBRATE_WINDOW 262144u
/* Drained means drained for this long, every count in it within the slack: a
 * table emptying at a probe's rate (1000 closed entries leaving a second)
 * passes the slack between two counts, and a trial started there would start
 * beside ~100 entries that were still leaving. */
#define SETTLED_S      0.5
#define TABLE_POLL_S   0.1

/* One test of the search's kind: rate/teardown -x at cps (0: unlimited) with
 * the user's window, capacity -k of want at cps. */
static void run_test(struct xp_cs_run *r, enum xp_cs_mode mode, const char *what, double cps, uint64_t want,
		     double secs, struct xp_cs_trial *t)
{
	/* The base test at the trial's rate, window and length. */
	struct xp_spec *o = xp_spec_dup(r->o->spec); /* megabytes: not on the stack */
	memset(t, 0, sizeof(*t));
	if (!o) {
		snprintf(r->trial_error, sizeof(r->trial_error), "out of memory");
		t->error = 1;
		return;
	}
	t->mode = mode;
	t->what = what;
	t->target_cps = cps;
	t->want = mode == XP_CS_CAPACITY ? want : 0;
	o->require_rate = false;
	o->max_loss = -1;
	o->duration = secs;
	o->interval = secs;
	o->cps = cps;
	o->first_tuple = r->next_tuple;
	o->kind = mode == XP_CS_CAPACITY ? XP_TEST_HOLD : XP_TEST_CONNECT;
	o->fin = mode == XP_CS_TEARDOWN;
	if (mode == XP_CS_CAPACITY)
		o->parallel = want;
	else if (mode != r->mode) /* a probe of a capacity search: its own small window */
		o->parallel = 1024;
	if (!strcmp(what, "calibrate")) {
		/* The sender's rate, not the device's drops' timeouts (CALIBRATE_WINDOW). */
		o->syn_retries = 0;
		if (o->parallel < CALIBRATE_WINDOW)
			o->parallel = CALIBRATE_WINDOW;
	}

	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	t->wall_start = (double)ts.tv_sec + ts.tv_nsec / 1e9;
	/* Reported into memory: the search prints its own line per trial. */
	struct xp_report rep;
	struct xp_summary sum;
	memset(&sum, 0, sizeof(sum));
	xp_report_init(&rep, XP_REPORT_MEMORY, NULL);
	int rc = xp_client_test(o, &r->o->ro, &rep, &sum);
	/* Why it did not run, from the memory sink (its error, or its verdict against the test's limits). */
	snprintf(r->trial_error, sizeof(r->trial_error), "%s", sum.error ? sum.error : rep.mem.error);
	xp_report_free(&rep);
	free(o);
	/* Past every tuple this test may have used: its first SYNs, and a margin
	 * for connections numbered but not sent when it stopped (each sending
	 * thread numbers its own: k = n x threads + thread). */
	uint64_t used = sum.total.hs.syn_sent;
	r->next_tuple += used + used / 8 + 1024;
	if (rc || sum.error) {
		t->error = rc ? rc : 1;
		return;
	}
	const struct xp_period *p = &sum.total;
	const struct xp_handshake_figs *x = &p->hs;
	t->seconds = p->t1 - p->t0;
	t->started = x->syn_sent;
	t->established = xp_period_established(p);
	t->closed = x->finack_answered;
	t->held = mode == XP_CS_CAPACITY ? sum.hold.open_at_end : 0;
	t->fail_timeout = x->fail_timeout;
	t->fail_reset = x->fail_reset;
	t->fail_unreach = x->fail_unreach;
	t->in_flight = x->in_flight;
	t->fin_timeout = x->fin_timeout;
	t->syn_retx = x->syn_retx;
	t->fins = x->fins_sent + x->fin_retx;
	/* The pacer's own figure over the sending time (the period also covers the wait for the last replies). */
	t->offered_cps = cps > 0 && sum.pace.reached_pps > 0 ? sum.pace.reached_pps
			 : secs > 0 ? (double)x->syn_sent / secs : 0;
	t->short_of_target = cps > 0 && sum.pace.short_of_target;
	t->held_back_by = t->short_of_target ? sum.pace.held_back_by : NULL;
}

static struct xp_cs_rec *record(struct xp_cs_run *r, const struct xp_cs_trial *t)
{
	if (r->n >= XP_CS_MAX_TRIALS)
		return NULL;
	struct xp_cs_rec *rec = &r->recs[r->n++];
	rec->t = *t;
	rec->v = xp_cs_judge(t);
	char line[XP_CS_LINE_LEN];
	xp_cs_line(line, sizeof(line), r, rec);
	xp_report_suite_trial(r->o->rep, line, xp_cs_trial_json(r->n, rec));
	return rec;
}

static int table_count(struct xp_cs_run *r, uint64_t *count)
{
	char err[200];
	if (xp_client_device_table(r->o->spec->device_netns, count, err, sizeof(err))) {
		snprintf(r->errbuf, sizeof(r->errbuf), "--device-netns %s: %s", r->o->spec->device_netns, err);
		r->error = r->errbuf;
		return -1;
	}
	return 0;
}

/* Probes at the floor rate until one fails no connection: the device takes new ones again. */
static int probe_until_clean(struct xp_cs_run *r, unsigned *probes)
{
	for (unsigned i = 0; i < PROBE_TRIES && !xp_signalled; i++) {
		struct xp_cs_trial t;
		run_test(r, r->mode == XP_CS_TEARDOWN ? XP_CS_TEARDOWN : XP_CS_RATE, "probe", r->o->cs.floor, 0,
			 PROBE_S, &t);
		(*probes)++;
		struct xp_cs_rec *rec = record(r, &t);
		if (!rec || t.error) {
			if (rec)
				snprintf(r->errbuf, sizeof(r->errbuf), "a probe did not run: %.297s",
					 r->trial_error[0] ? r->trial_error : "the test failed");
			r->error = rec ? r->errbuf : "too many trials";
			return -1;
		}
		if (rec->v == XP_RFC_PASS || rec->v == XP_RFC_SHORT)
			return 0;
		xp_sleep(1);
	}
	if (!xp_signalled) {
		snprintf(r->errbuf, sizeof(r->errbuf), "the device did not accept new connections at %.0f/s (--search-floor) "
			 "for %u probes: it is not recovering, or the floor is above what it takes", r->o->cs.floor,
			 PROBE_TRIES);
		r->error = r->errbuf;
	}
	return -1;
}

/* Before a trial: the path accepts connections, then the table is back to its baseline. */
static int drain(struct xp_cs_run *r, struct xp_cs_trial *next)
{
	double t0 = xp_now();
	unsigned probes = 0;
	if (probe_until_clean(r, &probes))
		return -1;
	if (r->table) {
		uint64_t c = 0;
		double drained_since = -1;
		for (;;) {
			if (table_count(r, &c))
				return -1;
			if (!xp_cs_drained(c, r->baseline))
				drained_since = -1;
			else if (drained_since < 0)
				drained_since = xp_now();
			if (drained_since >= 0 && xp_now() - drained_since >= SETTLED_S)
				break;
			if (xp_now() - t0 > DRAIN_MAX_S || xp_signalled) {
				snprintf(r->errbuf, sizeof(r->errbuf), "the device's table did not drain: %llu entries after "
					 "%.0f s (%llu before the search)", (unsigned long long)c, xp_now() - t0,
					 (unsigned long long)r->baseline);
				r->error = r->errbuf;
				return -1;
			}
			xp_sleep(TABLE_POLL_S);
		}
		next->table_known = true;
		next->table_at_start = c;
	} else if (r->o->cs.settle_s > 0) {
		/* The device's closed entries cannot be seen from here: wait their life, then probe once more. */
		xp_sleep(r->o->cs.settle_s);
		if (probe_until_clean(r, &probes))
			return -1;
	}
	next->probes = probes;
	next->drain_s = xp_now() - t0;
	return 0;
}

static struct xp_cs_rec *trial(struct xp_cs_run *r, const char *what, double cps, uint64_t want)
{
	struct xp_cs_trial pre = { 0 }, t;
	if (drain(r, &pre))
		return NULL;
	double secs = r->mode == XP_CS_CAPACITY ? xp_cs_cap_seconds(want, cps, r->o->cs.trial_s)
		      : !strcmp(what, "calibrate") ? CALIBRATE_S : r->o->cs.trial_s;
	run_test(r, r->mode, what, cps, want, secs, &t);
	t.table_known = pre.table_known;
	t.table_at_start = pre.table_at_start;
	t.probes = pre.probes;
	t.drain_s = pre.drain_s;
	struct xp_cs_rec *rec = record(r, &t);
	if (rec && t.error)
		r->error = r->trial_error[0] ? r->trial_error : "a trial did not run";
	else if (rec)
		r->trials++;
	else
		r->error = "too many trials";
	return rec && !t.error ? rec : NULL;
}

static int search_rate(struct xp_cs_run *r)
{
	const struct xp_cs_job *o = r->o;
	r->ceiling = o->cs.ceiling;
	if (!(r->ceiling > 0)) {
		/* The sender's maximum with this window: a trial as fast as it goes. */
		struct xp_cs_rec *c = trial(r, "calibrate", 0, 0);
		if (!c)
			return -1;
		r->ceiling = floor(c->t.offered_cps);
		r->ceiling_measured = true;
		r->calib_lost = xp_cs_failed(&c->t);
		/* Unanswered SYNs leave the window after their 1-s timeout: a
		 * window's worth of them a second kept it full, and the sender
		 * may have been held to what the timeouts freed. */
		r->calib_window_full = c->t.seconds > 0 &&
				       (double)r->calib_lost / c->t.seconds >= 0.9 * CALIBRATE_WINDOW;
		if (r->calib_lost)
			xp_report_suite_line(o->rep, "      calibration: the device left %llu of %llu SYNs unanswered; the top is the sender's "
				"rate with a window of %u%s\n", (unsigned long long)r->calib_lost,
				(unsigned long long)c->t.started, CALIBRATE_WINDOW,
				r->calib_window_full ? ", which the drops kept full: if the search ends at the top, the "
						      "top was the drops' (give --search-ceiling)" : "");
		if (r->ceiling <= o->cs.floor) {
			snprintf(r->errbuf, sizeof(r->errbuf), "the sender reached only %.0f connections/s, not above "
				 "--search-floor %.0f", r->ceiling, o->cs.floor);
			r->error = r->errbuf;
			return -1;
		}
	}
	struct xp_rfc_search s;
	xp_rfc_search_init(&s, o->cs.floor, r->ceiling, o->cs.res_pct, 0);
	double rate;
	while ((rate = xp_rfc_search_next(&s)) > 0 && !xp_signalled) {
		struct xp_cs_rec *rec = trial(r, "trial", floor(rate), 0);
		if (!rec)
			return -1;
		struct xp_rfc_trial rt = xp_cs_as_rfc(&rec->t);
		xp_rfc_search_record(&s, &rt);
	}
	r->rate = s.ndr_pps;
	/* A measured top that passed is the sender's; a given one is the user's. */
	r->sender_limited = xp_rfc_search_sender_limited(&s, r->ceiling_measured && !r->calib_window_full);
	return 0;
}

static int search_capacity(struct xp_cs_run *r)
{
	struct xp_cs_cap c;
	xp_cs_cap_init(&c, r->o->spec->parallel, r->o->cs.res_pct);
	uint64_t want;
	while ((want = xp_cs_cap_next(&c)) > 0 && !xp_signalled) {
		struct xp_cs_rec *rec = trial(r, "trial", r->o->spec->cps, want);
		if (!rec)
			return -1;
		xp_cs_cap_record(&c, &rec->t);
	}
	r->capacity = xp_cs_cap_result(&c, &r->at_max);
	return 0;
}

/* The table into a string, for the sink's end (NULL without memory). */
static char *table_text(const struct xp_cs_run *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	xp_cs_report_text(f, r);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}

int xp_connsearch_run(const struct xp_spec *s, const struct xp_cs_cfg *cfg, const struct xp_run_opts *ro,
		      struct xp_report *rep)
{
	struct xp_cs_job job = { .spec = s, .cs = *cfg, .ro = ro ? *ro : (struct xp_run_opts){ 0 }, .rep = rep };
	const struct xp_cs_job *o = &job;
	struct xp_cs_run r = { .o = o, .mode = (enum xp_cs_mode)o->cs.mode };
	char perr[256];
	if (xp_check_privileges(perr, sizeof(perr))) {
		xp_report_suite_error(rep, perr);
		return 1;
	}
	r.recs = calloc(XP_CS_MAX_TRIALS, sizeof(*r.recs));
	if (!r.recs) {
		xp_report_suite_error(rep, "out of memory");
		return 1;
	}
	xp_install_signals();
	r.table = o->spec->device_netns[0] != 0;
	int rc = 0;
	if (r.table && table_count(&r, &r.baseline))
		rc = 1;
	if (!rc) {
		xp_report_suite_line(rep, "Connection search (%s) against %s: trials of %g s, from a drained table (%s)\n",
				     xp_cs_mode_name(r.mode), o->spec->host, o->cs.trial_s,
				     r.table ? "probes, then the device's conntrack count" : "probes and --search-settle");
		r.started = xp_now();
		rc = (r.mode == XP_CS_CAPACITY ? search_capacity(&r) : search_rate(&r)) ? 1 : 0;
		r.seconds = xp_now() - r.started;
	}
	if (xp_signalled && !r.error)
		r.error = "interrupted";
	if (r.error)
		rc = 1;
	if (r.error) {
		char msg[sizeof(r.trial_error) + 64];
		snprintf(msg, sizeof(msg), "--search %s: %s", xp_cs_mode_name(r.mode), r.error);
		xp_report_suite_error(rep, msg);
	}
	char *text = rep->fmt == XP_REPORT_TEXT ? table_text(&r) : NULL;
	struct json_object *head = json_object_new_object(), *tail = json_object_new_object();
	json_object_object_add(head, "search", xp_cs_settings_json(&r));
	json_object_object_add(tail, "result", xp_cs_result_json(&r));
	xp_report_suite_end(rep, head, text, tail);
	free(text);
	free(r.recs);
	return rc;
}
