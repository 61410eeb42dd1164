/*
 * The Open Traffic Generator controller (issue 27): an OTG config's ports
 * and flows run as xdpperf tests. A port's location names an xdpperf agent
 * (`xdpperf -s`) and, optionally, its interface: "HOST[:CONTROL_PORT][;IFACE]"
 * (docs/otg.md). A flow from port p1 to p2: p1's agent sends, p2's agent
 * counts with its XDP program; both over the control protocol.
 *
 * Two front ends drive this one controller:
 * - otg/http.c: `xdpperf --otg [ADDR]:PORT`, the OTG REST API (libmicrohttpd);
 * - cli: `xdpperf --config FILE.json`, one run from the command line.
 *
 * The bodies are json-c objects shaped as the OTG OpenAPI schema of models
 * v1.61.0 gives them (Config, ControlState, MetricsRequest, MetricsResponse,
 * Warning). Every call is thread safe: the HTTP server calls them from its
 * connection threads while traffic runs in the controller's own thread.
 */
#ifndef XP_OTG_H
#define XP_OTG_H

#include <stdbool.h>
#include <stddef.h>

struct json_object;

#define XP_OTG_API_VERSION "1.61.0" /* the models release followed (README) */

/* OTG's Error object: {"code": http, "kind": kind, "errors": [msg]}. */
struct xp_otg_err {
	int http;          /* the HTTP status the spec gives: 400 bad request, 409 conflict, 500 internal */
	const char *kind;  /* "validation" or "internal" */
	char msg[512];     /* one line; a bad field named by its JSON path, e.g. "flows[0].packet[2].gre: ..." */
};

/* The controller's own settings (the front end's options). */
struct xp_otg_opts {
	const char *auth_key;   /* --auth-key FILE for the agents (NULL: none) */
	int control_port;       /* agents' control port when a location names none (0: the default) */
	int debug;              /* -d */
	double line_bps;        /* --line-rate: every port's L1 bit rate (0: each sending interface's known speed) */
};

struct xp_otg;

/* A controller with no config yet; NULL with errno on failure. */
struct xp_otg *xp_otg_new(const struct xp_otg_opts *o);
/* Stops traffic that runs, waits for it, frees everything. NULL is fine. */
void xp_otg_free(struct xp_otg *c);

/*
 * POST /config: cfg replaces the config (cfg is only read; the controller
 * keeps a copy). Checks every port and flow before taking it: anything
 * unsupported is refused by its JSON path (400), traffic that runs 409.
 * 0 with *warnings (a Warning object, the caller's to put) or -1 with *err.
 */
int xp_otg_set_config(struct xp_otg *c, struct json_object *cfg, struct json_object **warnings,
		      struct xp_otg_err *err);
/* GET /config: a new reference to the config taken (an empty Config if none). */
struct json_object *xp_otg_get_config(struct xp_otg *c);
/*
 * POST /control/state: a ControlState. traffic.flow_transmit start (returns
 * once every sender has started; the traffic then runs in the controller's
 * thread), stop (returns when it has stopped and the figures are final),
 * pause/resume refused (400) unless the engines can. 0 with *warnings, or
 * -1 with *err; a start that fails leaves nothing started.
 */
int xp_otg_set_state(struct xp_otg *c, struct json_object *state, struct json_object **warnings,
		     struct xp_otg_err *err);
/* POST /monitor/metrics: a MetricsRequest (flow or port) -> a MetricsResponse, or NULL with *err. */
struct json_object *xp_otg_metrics(struct xp_otg *c, struct json_object *req, struct xp_otg_err *err);
/* GET /capabilities/version: a Version object. */
struct json_object *xp_otg_version(void);
/*
 * `--config FILE`: wait until every flow's transmit state is "stopped" (the
 * flows' durations ran out, or a stop) or timeout_s passed. true if stopped.
 */
bool xp_otg_wait_stopped(struct xp_otg *c, double timeout_s);

#endif
