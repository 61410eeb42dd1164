/*
 * Reports: human text lines (like iperf3's), one JSON document (-J), or a
 * JSON stream of start/interval/end objects (--json-stream). Rates are given
 * in frames/s and in bits/s both on the wire (L1: with preamble, inter-frame
 * gap and FCS, as RFC 2544 counts) and at L2 (frame with FCS).
 */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>

#include "xdpperf.h"

struct xp_report_info {
	char client[64], server[64];
	char dev[16], server_dev[16];
	const char *engine;       /* "xsk" */
	const char *engine_mode;  /* "copy" / "zerocopy" */
	const char *server_xdp_mode;
	const char *test;         /* "stream" */
	const char *proto;        /* "tcp" / "udp" */
	int family;               /* 4 or 6 */
	unsigned frame_size;      /* incl. FCS */
	unsigned queues;
	uint16_t port_lo, port_hi, cport_lo, cport_hi;
	double duration, interval;
	double target_pps;        /* 0 = unlimited */
};

/* One interval's (or the whole test's) deltas. */
struct xp_period {
	double t0, t1;            /* seconds since the start */
	uint64_t tx_pkts, tx_bytes; /* client: frames sent, L2 bytes without FCS */
	struct xp_counters rx;    /* server: XDP counters */
};

struct xp_summary {
	struct xp_period total;
	double client_cpu_pct;    /* process CPU / wall time, 100 = one core */
	double server_cpu_pct;    /* -1 when unknown */
	uint64_t tx_errors;
	bool interrupted;         /* stopped by a signal */
	const char *error;        /* why the test ended early, NULL if it did not */
};

enum xp_report_format { XP_REPORT_TEXT = 0, XP_REPORT_JSON, XP_REPORT_JSON_STREAM };

struct xp_report {
	enum xp_report_format fmt;
	FILE *out;
	struct json_object *doc;       /* -J: the document being built */
	struct json_object *intervals; /* -J: its "intervals" array */
	unsigned lines;
};

void xp_report_init(struct xp_report *r, enum xp_report_format fmt, FILE *out);
void xp_report_start(struct xp_report *r, const struct xp_report_info *info);
void xp_report_interval(struct xp_report *r, const struct xp_period *p);
void xp_report_end(struct xp_report *r, const struct xp_summary *s);
void xp_report_free(struct xp_report *r);

/* JSON encodings (new references), exposed for tests. */
struct json_object *xp_report_info_json(const struct xp_report_info *info);
struct json_object *xp_period_json(const struct xp_period *p);
struct json_object *xp_summary_json(const struct xp_summary *s);

#endif
