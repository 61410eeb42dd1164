/*
 * --metrics [ADDR]:PORT (issue 29): the figures of the last tests as a
 * Prometheus text endpoint (GET /metrics), for dashboards of soak tests.
 *
 * metrics.c holds the store: one record per test (the last
 * XP_METRICS_TESTS, older ones forgotten: bounded cardinality), behind one
 * mutex. The client fills it from its report's events (a tap on the sinks:
 * start, interval, end), the server from its samples (each "sample" and
 * "stop" of a test). Both are once-an-interval paths: no frame ever takes
 * the lock. metrics_fmt.c writes a copy of the records as Prometheus text,
 * metrics_http.c serves it with libmicrohttpd from a thread of its own.
 * The names and labels: docs/metrics.md.
 */
#ifndef XP_REPORT_METRICS_H
#define XP_REPORT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>

#include "bpf/server.h"
#include "meas/latency.h"
#include "util/addr.h"

#define XP_METRICS_TESTS 16 /* tests kept (running or ended), the oldest dropped first */
/*
 * The histogram's upper bounds: every 8th edge of the measurement core's
 * buckets (bpf/lib/latency.h), from 64 ticks (256 ns) to 2^32 ticks (17.2 s):
 * four bounds an octave, each an exact edge, so a bound's cumulative count
 * is exact (a fine bucket lies wholly below it or not).
 */
#define XP_METRICS_LE_FIRST 64u  /* the first bound's fine bucket */
#define XP_METRICS_LE_STEP 8u    /* fine buckets between bounds */
#define XP_METRICS_LE ((XP_LAT_BUCKETS - XP_METRICS_LE_FIRST) / XP_METRICS_LE_STEP + 1) /* 105 */

/*
 * A client's test with flows (issue 26): each flow's figures, labelled
 * flow="NAME" (its name, or "flow N"; a name used twice in a test gets " #N"):
 * at most XP_METRICS_FLOWS a test, so XP_METRICS_TESTS * XP_METRICS_FLOWS
 * label sets a family at most. No histogram per flow: 105 buckets each would
 * be 400 000 series.
 */
#define XP_METRICS_FLOWS 256
struct xp_metrics_flow {
	char name[64];
	uint64_t tx_frames, tx_bytes;
	bool counted;             /* the server counted it */
	uint64_t rx_frames, rx_bytes;
	int64_t lost;             /* sent - received so far (frames in flight in it); the end's once ended */
};

/* One test's figures, as served. Counts are the test's so far (the whole test once ended). */
struct xp_metrics_test {
	uint64_t seq;             /* order of start, 0: free record */
	uint64_t id;              /* the test's number: the server's own, the client's count of its tests */
	char role[8];             /* "client" / "server" */
	char engine[16], kind[16];
	char peer[64];            /* the other end's address */
	bool running;
	double start_time;        /* Unix time */
	bool sends;               /* sent figures known (the client) */
	uint64_t tx_frames, tx_bytes;
	bool receives;            /* received figures known (a server's counters) */
	uint64_t rx_frames, rx_bytes;
	bool loss_known;
	int64_t lost;             /* frames lost (the report's figure; revised at the end: a gauge) */
	bool conns;               /* a connection test */
	uint64_t conn_opened, conn_failed, conn_held;
	uint64_t conn_reset;      /* the client's XDP engine: held connections reset so far (not served) */
	double target_pps;        /* 0: none */
	double offered_pps;       /* the last interval's, the whole test's once ended; < 0: unknown */
	bool lat;                 /* latency figures */
	uint64_t lat_bucket[XP_METRICS_LE]; /* timed frames below bound i and at or above bound i-1 (not cumulative) */
	uint64_t lat_count;
	double lat_sum_s;
	unsigned nflows;          /* a client's test with flows: flows[0..nflows-1] */
	struct xp_metrics_flow flows[XP_METRICS_FLOWS];
};

/* The fine buckets of h added to t's histogram (metrics_fmt.c). */
void xp_metrics_lat_add(struct xp_metrics_test *t, const struct xp_lat_hist *h);
/* Bound i in seconds. */
double xp_metrics_le_s(unsigned i);
/* Prometheus text (format 0.0.4) of n records (free ones skipped) into f; 0 or -1 on a write error. */
int xp_metrics_format(const struct xp_metrics_test *t, unsigned n, FILE *f);

/* ---- the store (metrics.c) ---- */
/* A copy of the records, for the endpoint. */
void xp_metrics_snapshot(struct xp_metrics_test out[XP_METRICS_TESTS]);
/* Starts the client's tap on its reports' events. */
void xp_metrics_client_tap(void);
/* The server's tests: their start, each sample's counters (accepted: a socket test's accepts so far), a final
 * interval's latency, the end. */
void xp_metrics_server_start(uint64_t id, const char *engine, const char *kind, const char *peer);
void xp_metrics_server_counts(uint64_t id, const struct xp_counters *c, uint64_t accepted);
void xp_metrics_server_lat(uint64_t id, const struct xp_lat_hist *h);
void xp_metrics_server_end(uint64_t id);
/* Forget every record (the unit tests). */
void xp_metrics_reset(void);

/* ---- the endpoint (metrics_http.c) ---- */
/* "[ADDR]:PORT", ":PORT" or "PORT" (ADDR 127.0.0.1 when not given; IPv6 in brackets): 0, or -1 with err. */
int xp_metrics_parse(const char *s, struct xp_addr *a, unsigned short *port, char *err, size_t errlen);
/* Binds and listens now (before privileges are dropped): 0, or -1 with err. */
int xp_metrics_open(const struct xp_addr *a, unsigned short port, char *err, size_t errlen);
/* Serves the socket opened by xp_metrics_open from a thread of its own; nothing if none. 0, or -1 with err. */
int xp_metrics_run(char *err, size_t errlen);
void xp_metrics_stop(void);

#endif
