/*
 * The client's part of the measurement core (bpf/measure.h): the stamp
 * settings (t0, interval, clock) for the engine and the server, the frame
 * size that carries a stamp, and the interval lines held back until their
 * send interval is final, when the server's bins of it are read and the
 * engine says what it stamped into it.
 */
#ifndef XP_CLIENT_MEASURE_H
#define XP_CLIENT_MEASURE_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/lib/stamp.h"
#include "spec/spec.h"
#include "engine/engine.h"
#include "frame/frame.h"
#include "proto/messages.h"
#include "report/report.h"

/* Where frames of this spec (its frame_size) carry the stamp. */
enum xp_stamp_place xp_stamp_place_of_spec(const struct frame_spec *s);
/* The smallest frame_size of this spec's family and protocol that carries a
 * stamp (IPv4 TCP/UDP 64, IPv6 UDP 74, IPv6 TCP 86); 0 if none is valid. */
unsigned xp_stamp_min_frame(const struct frame_spec *s);
/* The grace after an interval's end before it is final: XP_LATE_AFTER_NS,
 * but at most 2 intervals, so the XP_IBINS-deep rings still hold it then. */
double xp_meas_grace(double interval);

/* One interval line waiting for its send intervals to be final. */
struct xp_meas_line {
	struct xp_period p;
	uint64_t first, last;     /* the send intervals it covers */
	uint64_t done;            /* how many of them are in p.meas */
};

struct xp_cmeas {
	bool on;                  /* frames stamped, engine counts them, server reads them */
	enum xp_stamp_place place;
	bool tai;                 /* --clock tai */
	uint64_t t0, ival;        /* ticks of the stamp clock */
	double t0_s, ival_s;      /* the same in xp_now() seconds */
	double grace;             /* s after an interval's end until it is final */
	double setup_s;           /* time from t0 until the engine started */
	bool oneway;              /* both ends share the clock */
	char note[200];           /* no stamps (why) / no one-way latency (why) */
	char rx_clock[128];       /* what times arrivals at the server (its "started" reply) */
	unsigned rx_ts;           /* --rx-timestamp: XP_RXTS_* */
	char rx_note[160];        /* the server's word on NIC timestamps: why not, or per frame */
	bool rx_counts;           /* the server sent rx_stamped / rx_nic (its final samples) */
	uint64_t rx_stamped, rx_nic; /* frames the server accounted, and of them timed by the NIC */
	uint64_t next;            /* the next send interval to read */
	struct xp_meas_line *q;   /* lines waiting, oldest first */
	unsigned qn, qcap;
	struct xp_meas_figs total;/* the whole test, summed over its intervals */
	double jitter_last_mean, jitter_last_max; /* the latest read (for a line) */
	unsigned streams_last;
	/* --rtt: the server reflects the stamped frames, this program (on the
	 * sending interface) times them; its bins replace the server's. */
	bool rtt, server_reflects;
	uint64_t key[2];        /* the stamps' tag key from the server's start reply (0, 0: none) */
	struct rtt_prog *rp;
};

struct rtt_prog;
/* --rtt, after the server's "started" and before the engine sends: load the
 * round-trip program for the test's addresses and ports (tmpl, the server's
 * ports port_lo..port_hi) and attach it to ifindex. 0 or exit status 1 with
 * err set. */
int xp_cmeas_rtt_start(struct xp_cmeas *m, const struct xp_spec *sp, const struct frame_spec *tmpl, int ifindex,
		       char *err, size_t errlen);

/* Decide the stamps for a frame test (after its template is built) and set
 * ec->frames.stamp; t0 is now. Exit status (2: --clock tai where it cannot
 * take effect) or 0. */
int xp_cmeas_setup(struct xp_cmeas *m, const struct xp_spec *sp, struct xp_engine_cfg *ec, char *err, size_t errlen);
/* After the engine opened: off if it does not stamp. Exit status or 0. */
int xp_cmeas_engine(struct xp_cmeas *m, const struct xp_spec *sp, const struct xp_engine_ops *ops, char *err,
		    size_t errlen);
/* Interval 0 starts now: just before the request, after the engine was made (ops->set_t0). */
void xp_cmeas_t0(struct xp_cmeas *m, const struct xp_engine_ops *ops, struct xp_engine *e);
/* The request's stamp settings. */
void xp_cmeas_request(const struct xp_cmeas *m, struct xp_test_stamp *st);
/* The server's "started": does it read them, and is the clock shared.
 * 0, or 1 with err (--rx-timestamp hw that the server did not take up). */
int xp_cmeas_started(struct xp_cmeas *m, const struct xp_spec *sp, struct json_object *reply, char *err,
		     size_t errlen);
/* After the summary: --rx-timestamp hw with no frame the NIC timed is a
 * failed run (1 with err), the rest 0. */
int xp_cmeas_verdict(const struct xp_cmeas *m, char *err, size_t errlen);
/* The report header's part. */
void xp_cmeas_info(const struct xp_cmeas *m, struct xp_report_info *i);
/* Now in the stamp clock, ticks. */
uint64_t xp_cmeas_now_ticks(const struct xp_cmeas *m);
/* When interval `next` is final (xp_now seconds). */
double xp_cmeas_due(const struct xp_cmeas *m);

/* Queue an interval line for [t0, t1] (seconds since t0_s, nominal). 0 or -ENOMEM. */
int xp_cmeas_queue(struct xp_cmeas *m, const struct xp_period *p, double t0, double t1);
/* Interval `next`'s figures: attach them to its line and the total; advance. */
void xp_cmeas_add(struct xp_cmeas *m, const struct xp_final_ival *f, int sent_rc, uint64_t sent);
/* The oldest line if it is complete (or `all`: every line, complete or not), else NULL; pop with _pop. */
struct xp_meas_line *xp_cmeas_ready(struct xp_cmeas *m, bool all);
void xp_cmeas_pop(struct xp_cmeas *m);
/* The end: send intervals up to `upto` belong to the last line. */
void xp_cmeas_extend(struct xp_cmeas *m, uint64_t upto);
/* The stop reply's per-stream figures into the total. */
void xp_cmeas_streams(struct xp_cmeas *m, const struct xp_stream_figs *s, unsigned n);
/* The whole test's figures into sum->total.meas. */
void xp_cmeas_summary(struct xp_cmeas *m, struct xp_period *total);
/* Ask the server for send interval `next`, now final, and the engine what it stamped into it; add them.
 * 0, or -errno (-EPROTO with the reason in err). */
struct xp_ctrl;
int xp_cmeas_fetch(struct xp_cmeas *m, struct xp_ctrl *ctrl, const struct xp_engine_ops *ops, struct xp_engine *e,
		   char *err, size_t errlen);
/* Print the lines whose send intervals are all in (all: every one left; one without all its figures
 * is printed without any). */
void xp_cmeas_flush(struct xp_cmeas *m, struct xp_report *rep, bool all);
/* The stop reply's "streams" into the total. 0 or -EPROTO with err. */
int xp_cmeas_streams_json(struct xp_cmeas *m, struct json_object *a, char *err, size_t errlen);
void xp_cmeas_free(struct xp_cmeas *m);

#endif
