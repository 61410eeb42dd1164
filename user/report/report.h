/*
 * Reports: human text lines (like iperf3's), one JSON document (-J), a JSON
 * stream of start/interval/end objects (--json-stream), or nothing printed
 * (memory: a suite's trial). Rates are given in frames/s and in bits/s both
 * on the wire (L1: with preamble, inter-frame gap and FCS, as RFC 2544
 * counts) and at L2 (frame with FCS).
 *
 * sink.c holds the four sinks behind one interface (start, interval, end,
 * error), report.c the JSON, lines.c what the text of every kind shares; the
 * text lines of each kind of figures (meas/figures.h) live in their own
 * module: frames.c, sockets.c, handshakes.c.
 */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>

#include "meas/figures.h"
#include "util/units.h" /* xp_fmt_rate, xp_fmt_secs, xp_fmt_ns: the report's numbers in words */

enum xp_report_format { XP_REPORT_TEXT = 0, XP_REPORT_JSON, XP_REPORT_JSON_STREAM, XP_REPORT_MEMORY };

struct xp_sink;

struct xp_report {
	enum xp_report_format fmt;
	const struct xp_sink *sink;    /* where the results go (sink.c), by fmt */
	FILE *out;                     /* NULL for memory */
	FILE *log;                     /* a suite's progress lines: stderr (suite.c) */
	struct json_object *doc;       /* -J: the document being built */
	struct json_object *intervals; /* -J: its "intervals" array */
	unsigned lines;
	bool keep_doc;                 /* -J: xp_report_end leaves the document in doc instead of printing */
	enum xp_figures figures;       /* which line format (from the start info) */
	bool peer_kernel;              /* handshakes answered by the server's TCP stack */
	bool started, ended;           /* xp_report_start / _end were called */
	bool tcp;                      /* the frames are TCP (stateful-firewall hints) */
	bool client_only;              /* no xdpperf on the server: the client's counters only */
	struct {                       /* memory: what came, for the caller to read */
		unsigned intervals;
		struct xp_period last;     /* the last interval */
		char error[512];           /* the error that stopped the test, "" if none */
		/* A caller that follows the test as it runs (the OTG controller,
		 * otg/run.c): called from the test's thread, in the sink's events;
		 * NULL: none. The summary's pointers live only for the call. */
		const struct xp_mem_hook *hook;
		struct xp_flow_result *flows; /* a test with flows: each flow's figures at the end (a copy; freed
					       * by xp_report_free unless the caller takes it), NULL: none */
		unsigned nflows;
	} mem;
	uint64_t tap_id;               /* xp_report_tap's record of this report's test */
};

/* The memory sink's listener (mem.hook): arg is the caller's. */
struct xp_mem_hook {
	void (*start)(void *arg, const struct xp_report_info *i);
	void (*interval)(void *arg, const struct xp_period *p);
	void (*end)(void *arg, const struct xp_summary *s);
	void *arg;
};

/*
 * A second listener of every report's events, whatever the sink: the
 * --metrics store (report/metrics.c) when the endpoint runs, else NULL.
 */
struct xp_report_tap {
	void (*start)(struct xp_report *r, const struct xp_report_info *i);
	void (*interval)(struct xp_report *r, const struct xp_period *p);
	void (*end)(struct xp_report *r, const struct xp_summary *s);
	void (*error)(struct xp_report *r, const char *msg);
};
extern const struct xp_report_tap *xp_report_tap;

void xp_report_init(struct xp_report *r, enum xp_report_format fmt, FILE *out);
void xp_report_start(struct xp_report *r, const struct xp_report_info *info);
void xp_report_interval(struct xp_report *r, const struct xp_period *p);
void xp_report_end(struct xp_report *r, const struct xp_summary *s);
void xp_report_free(struct xp_report *r);
/*
 * An error that stops the client, in the report's format: with -J a
 * {"error": msg} document on the report's stream when none is printed at the
 * end (iperf3 does the same), with --json-stream an "error" event; nothing
 * for text (the message is on stderr).
 */
void xp_report_error(struct xp_report *r, const char *msg);

/*
 * A suite's report (suite.c): the RFC 2544 suite and the connection searches
 * report into the same sink. A progress line (printf format) on r->log in
 * every format but memory; a trial: its progress line (or NULL) and its -J
 * record (taken over: joins the document's "trials" array); an error that
 * ends the suite ("xdpperf: MSG" on r->log, kept in r->mem.error); the end:
 * the text (printed as is) or -J's document: head's members, "trials": [...],
 * tail's members, in that order (both objects taken over, either NULL).
 */
void xp_report_suite_line(struct xp_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void xp_report_suite_trial(struct xp_report *r, const char *line, struct json_object *trial);
void xp_report_suite_error(struct xp_report *r, const char *msg);
void xp_report_suite_end(struct xp_report *r, struct json_object *head, const char *text, struct json_object *tail);

/* Figures derived from a period, shared by the text and JSON forms. */
struct xp_rates {
	double secs;
	double tx_pps, tx_l1, tx_l2;
	double rx_pps, rx_l1, rx_l2;
	int64_t lost;
	double loss_pct;
	bool lost_known;   /* false: an interval without stamps, whose count straddles its ends */
};
void xp_rates_of(const struct xp_period *p, struct xp_rates *r);

/* The summary's first lines: the separator, first (if not NULL: the kind's own most important
 * line), then what makes its figures other than they seem (the target not reached, the server gone). */
void xp_report_head(struct xp_report *r, const struct xp_summary *s, const char *first);
/* The summary's closing lines: CPU use, interruption, early end. */
void xp_report_tail(struct xp_report *r, const struct xp_summary *s);
/*
 * Fill p's verdict from the engine's account st, once p->target_pps and
 * p->reached_pps are set: short of the target by more than the rate
 * control's tolerance, and if so held back by the sender (its CPU, or
 * other processes on it) or by the path (backpressure, or its work on the
 * sender's CPU). pace.c.
 */
void xp_pace_judge(const struct xp_pace_stats *st, struct xp_pace_figs *p);

/* ICMP errors that came back (icmp.c): the summary's first line into buf, or NULL when none came; the
 * "icmp_errors" JSON object (new reference). */
#define XP_ICMP_TEXT_LEN 1024
const char *xp_icmp_text(const struct xp_icmp_figs *f, char *buf, size_t len);
struct json_object *xp_icmp_json(const struct xp_icmp_figs *f);

/* Socket figures: socket tests (sockets.c). */
void xp_report_sock_start(struct xp_report *r, const struct xp_report_info *i);
void xp_report_sock_line(struct xp_report *r, const char *tag, const struct xp_period *p);
void xp_report_sock_end(struct xp_report *r, const struct xp_summary *s);
struct json_object *xp_sock_figs_json(const struct xp_sock_figs *f, double secs);
/* Hold tests' summary lines (sockets.c, also for handshakes). */
void xp_report_hold_lines(struct xp_report *r, const struct xp_hold_figs *h);

/* The summary's line when the server's keepalive search ran out of budget
 * (p->rx.keepalive_unchecked): into buf, or NULL when there is none (handshakes.c). */
#define XP_KA_NOTE_LEN 224
const char *xp_keepalive_note(const struct xp_period *p, char *buf, size_t len);

/* Handshake figures: XDP connection tests (handshakes.c). */
void xp_report_hs_start(struct xp_report *r, const struct xp_report_info *i);
void xp_report_hs_line(struct xp_report *r, const char *tag, const struct xp_period *p);
void xp_report_hs_end(struct xp_report *r, const struct xp_summary *s);
struct json_object *xp_hs_figs_json(const struct xp_period *p, double secs);

/* Frame figures: stream tests of the frame engines (frames.c). */
void xp_report_frames_start(struct xp_report *r, const struct xp_report_info *i);
void xp_report_frames_line(struct xp_report *r, const char *tag, const struct xp_period *p);
void xp_report_frames_end(struct xp_report *r, const struct xp_summary *s);
/* Adds lost_packets and loss_percent to a period's JSON object o. */
void xp_frames_add_loss(struct json_object *o, const struct xp_period *p);
/* Received-only figures: what an outside generator delivered (frames.c). */
void xp_report_recv_start(struct xp_report *r, const struct xp_report_info *i);
void xp_report_recv_line(struct xp_report *r, const char *tag, const struct xp_period *p);
void xp_report_recv_end(struct xp_report *r, const struct xp_summary *s);

/* The stamps' figures (measure.c): a line under an interval line, the summary's block, the header's line. */
void xp_report_meas_start(struct xp_report *r, const struct xp_report_info *i);
void xp_report_meas_line(struct xp_report *r, const struct xp_meas_figs *m);
void xp_report_meas_end(struct xp_report *r, const struct xp_period *total);
struct json_object *xp_meas_json(const struct xp_meas_figs *m);
struct json_object *xp_stamps_info_json(const struct xp_report_info *i);

/* JSON encodings (new references), exposed for tests. */
struct json_object *xp_report_info_json(const struct xp_report_info *info);
struct json_object *xp_period_json(const struct xp_period *p);
struct json_object *xp_summary_json(const struct xp_summary *s);
/* A test with flows (flows.c): every flow as JSON (the end object's "flows"),
 * and the text table after the summary (nothing without flows). */
struct json_object *xp_flows_json(const struct xp_summary *s);
/* Flows without stamps sent where the server takes none: not counted (the summary's first line says how many). */
unsigned xp_flows_uncounted(const struct xp_summary *s);
void xp_report_flows_text(struct xp_report *r, const struct xp_summary *s);
/* An interval's per-flow figures (p->flows): as JSON (the interval's "flows"),
 * and in text a table under its line (most loss in the interval first,
 * p->flow_top rows, the rest summed); nothing without flows. */
struct json_object *xp_flows_ival_json(const struct xp_period *p);
void xp_report_flows_ival_text(struct xp_report *r, const struct xp_period *p);
struct json_object *xp_hold_json(const struct xp_hold_figs *h);
struct json_object *xp_pace_json(const struct xp_pace_figs *p);
/* What each byte and bit count includes. */
struct json_object *xp_units_json(void);

#endif
