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

#include "bpf/server.h"

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
	unsigned parallel;        /* socket tests: -P */
	bool peer_kernel;         /* XDP connection tests answered by the server's TCP stack */
	double target_cps;        /* XDP connection tests: --cps, 0 = unlimited */
	const char *client_xdp_mode; /* XDP connection tests: the client program's attach mode */
};

/* Socket tests: the client engine's and the server's socket counts (deltas; open_* are gauges). */
/* In a whole-test summary, open_now and s_open_now are the peaks seen at interval ends. */
struct xp_sock_figs {
	uint64_t conn_ok, conn_fail, conn_reset, conn_timeout, conn_closed, open_now, payload_bytes;
	uint64_t s_accepted, s_closed, s_resets, s_open_now, s_bytes_rx;
};

/* XDP connection tests: what the client's AF_XDP engine and XDP program did (deltas). */
struct xp_xconn_figs {
	uint64_t syn_sent;        /* SYNs the engine sent */
	uint64_t synack_seen;     /* SYN-ACKs the client's XDP program saw */
	uint64_t acks_sent;       /* handshake-completing ACKs it sent */
	uint64_t fins_sent;       /* of those, ACK|FIN (--fin) */
	uint64_t rst_seen;        /* resets from the server */
	uint64_t finack_answered; /* server FIN-ACKs answered with the last ACK */
	uint64_t rst_closed;      /* -k: held connections reset at the end */
};

/* One interval's (or the whole test's) deltas. */
struct xp_period {
	double t0, t1;            /* seconds since the start */
	uint64_t tx_pkts, tx_bytes; /* client: frames sent, L2 bytes without FCS */
	struct xp_counters rx;    /* server: XDP counters */
	bool has_sock;            /* a socket test: sock is filled, tx_* are not */
	struct xp_sock_figs sock; /* also the server's s_* counts with --peer kernel */
	bool has_xconn;           /* an XDP connection test: xconn is filled */
	struct xp_xconn_figs xconn;
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
	bool keep_doc;                 /* -J: xp_report_end leaves the document in doc instead of printing */
	bool sock;                     /* socket test: socket line format */
	bool xconn;                    /* XDP connection test: its line format */
	bool peer_kernel;              /* ... answered by the server's TCP stack */
};

void xp_report_init(struct xp_report *r, enum xp_report_format fmt, FILE *out);
void xp_report_start(struct xp_report *r, const struct xp_report_info *info);
void xp_report_interval(struct xp_report *r, const struct xp_period *p);
void xp_report_end(struct xp_report *r, const struct xp_summary *s);
void xp_report_free(struct xp_report *r);

/* The summary's closing lines: CPU use, interruption, early end. */
void xp_report_tail(struct xp_report *r, const struct xp_summary *s);
/* "1.23 Mpps" style: SI value + unit. Returns buf. */
const char *xp_fmt_rate(double v, const char *unit, char *buf, size_t len);

/* Text form of a socket test's interval/summary (report_sock.c). */
void xp_report_sock_line(struct xp_report *r, const char *tag, const struct xp_period *p);
void xp_report_sock_end(struct xp_report *r, const struct xp_summary *s);
struct json_object *xp_sock_figs_json(const struct xp_sock_figs *f, double secs);

/* XDP connection tests (report_xconn.c). */
void xp_report_xconn_line(struct xp_report *r, const char *tag, const struct xp_period *p);
void xp_report_xconn_end(struct xp_report *r, const struct xp_summary *s);
struct json_object *xp_xconn_json(const struct xp_period *p, double secs);
/* Connections the server completed: its XDP program's count, or with --peer kernel its accepts. */
uint64_t xp_period_established(const struct xp_period *p);

/* JSON encodings (new references), exposed for tests. */
struct json_object *xp_report_info_json(const struct xp_report_info *info);
struct json_object *xp_period_json(const struct xp_period *p);
struct json_object *xp_summary_json(const struct xp_summary *s);

#endif
