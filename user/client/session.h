/*
 * The client's state for one test, shared by the files that run it:
 * client.c (the test loop and its report), path.c (addresses, interface,
 * next hop), engine_cfg.c (the engine's configuration from the options),
 * request.c (the control conversation with the server).
 */
#ifndef XP_CLIENT_SESSION_H
#define XP_CLIENT_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "client/client.h"
#include "client/diag.h"
#include "client/measure.h"
#include "frame/flow_key.h"
#include "proto/auth.h"
#include "proto/channel.h"
#include "net/icmp_watch.h"
#include "net/netdev.h"

/* Cumulative figures at one moment. */
struct snap {
	struct xp_engine_stats eng;
	struct xp_counters rx;
	struct xp_sock_figs srv; /* server socket counts (s_* fields) */
	double t;                /* seconds since the start, for interval samples */
};

struct client {
	const struct xp_spec *spec;   /* the test: the client's own copy (xp_client_test) */
	const struct xp_run_opts *ro;
	struct xp_ctrl ctrl;
	struct xp_addr local, server;
	struct xp_netdev link;
	uint8_t nh_mac[6];
	const struct xp_engine_ops *ops; /* the engine's declarations; after create, the one that runs */
	struct xp_engine_cfg ec;
	struct xp_test req;         /* what we asked the server for */
	struct xp_report rep;
	struct xp_engine *eng;
	char server_dev[16], xdp_mode[16];
	struct snap last;           /* latest figures the server sent */
	struct snap good;           /* the last interval sample: both sides' counts at one moment */
	bool server_gone;           /* the control connection failed: the server's counts end at good */
	struct xp_auth_key key;     /* --auth-key */
	const char *error;          /* why the test ended early */
	char errbuf[512];
	bool no_server;             /* --peer kernel against a TCP server without xdpperf: no control channel */
	struct xp_diag_watch diag;  /* connection tests: readings for why SYNs went unanswered */
	struct xp_cmeas meas;       /* frame tests: the stamps, and interval lines waiting for their figures */
	struct xp_icmp_watch icmp;  /* frame streams: ICMP errors the path sends back for our frames */
	struct xp_engine_flow *flows; /* the test's flows for the engine (ec.frames.flows; flows.c), NULL: none */
	struct xp_flow_result *flow_res; /* per flow: sent and the server's count (request.c, client.c), NULL: none */
	struct xp_key_plan *keys; /* the flows without stamps' key (frame/flow_key.h; flows.c), NULL: none */
	bool flow_rx;               /* the server sent every flow's figures in its stop reply */
	/* Per-flow figures per interval (flows.c): the cumulative counts at the
	 * last interval sample, both ends', to take the next interval's
	 * differences from; flow_ask makes the next "sample" ask for them. */
	struct xp_flow_acct *flow_prev, *flow_cur;
	uint64_t *flow_tx_prev;     /* [0..n-1] frames, [n..2n-1] bytes the engine sent */
	bool flow_prev_ok, flow_cur_ok, flow_ask;
	double stopped_at;          /* xp_now() when the engine was stopped, 0 before (client.c) */
};

/* The client cannot go on: one line on stderr and, with -J, in the report. Returns rc. (fail.c) */
__attribute__((format(printf, 3, 4)))
int xp_client_fail(struct client *c, int rc, const char *fmt, ...);
/* What xp_client_last_error says from now on ("": nothing went wrong yet). Returns it. (fail.c) */
const char *xp_client_error_set(const char *msg);

/* Connect, learn addresses, and for frame engines the interface and next hop. Exit status or 0. (path.c) */
int xp_client_setup_path(struct client *c);
/* Without -p: the server hands out the test's ports (client/ports.c), before the engine opens. Exit status or 0. */
int xp_client_ask_ports(struct client *c, struct xp_spec *sp);
/* The engine's configuration from the options and the path. Exit status or 0. (engine_cfg.c) */
int xp_client_engine_cfg(struct client *c, struct xp_spec *sp);
/* Does the spec have flows (more than one stream, or one with headers of its own)? (flows.c) */
bool xp_client_has_flows(const struct xp_spec *sp);
/* ec.frames.flows from the spec's streams, every field the path gives filled in. Exit status or 0. (flows.c) */
int xp_client_flows(struct client *c, struct xp_spec *sp);
/* One interval sample of a test with flows (flows.c): the server's sample (into now, as
 * xp_client_server_sample) with every flow's figures, the engine's per-flow counts read before and
 * after (their midpoint), and each flow's differences since the last: *out (the caller frees it; NULL
 * for a test without flows). 0 or -errno. */
int xp_client_flows_sample(struct client *c, struct snap *now, struct xp_flow_ival **out);
/* The end (flows.c): the differences from the last interval sample to now (the engine stopped, the
 * frames in flight arrived) added into the last interval's figures, so the intervals sum to the end.
 * 0 or -errno. */
int xp_client_flows_last(struct client *c, struct xp_flow_ival *last);
void xp_client_flows_free(struct client *c);

/* request.c: the control conversation. */
/* Ask the server for the test; prints why it could not. Exit status or 0. */
int xp_client_request_test(struct client *c);
/* Ask the server for its counters; "sample" during the test, "stop" at the end. 0 or -errno. */
int xp_client_server_sample(struct client *c, const char *op, struct snap *out, double *cpu);
/* Check the first answer of a control request (e from xp_ctrl_recv, r its message): 0 if it is `want` or
 * "error" (r kept), else the failing line's exit status (r freed). closed_why ends the "closed without an
 * answer" line, err_prefix starts a control-channel error's. */
int xp_client_first_answer(struct client *c, const struct xp_spec *sp, int e, struct json_object *r,
			   const char *want, const char *closed_why, const char *err_prefix);
/* A control-channel error as a one-line reason. */
const char *xp_client_ctrl_errstr(struct client *c, int e);
/* Wait until time `until` watching the control connection: 0 at the deadline, 1 on a signal, -errno if the
 * server went away. */
int xp_client_wait_until(struct client *c, double until);

#endif
