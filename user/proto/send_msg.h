/*
 * Issue 27: an agent that sends on the OTG controller's request. The
 * controller asks an agent (`xdpperf -s`) for a client test of its own:
 *
 *   {"op":"time"}  -> {"op":"time","t1":NS,"t2":NS}
 *       the agent's CLOCK_REALTIME when the request came (t1) and when the
 *       reply left (t2): the controller's NTP-style offset (xp_clock_offset).
 *   {"op":"send","spec":{...},"start_ns":NS}  -> {"op":"sending"}, later
 *   {"op":"sent","result":{...}}
 *       spec: the test as a start request carries it (xp_spec_to_wire_json),
 *       toward the receiving agent (its host, a numeric address, and its
 *       control_port); start_ns: when to start sending, the agent's
 *       CLOCK_REALTIME (0: at once). The controller half-closes its side
 *       to stop the test early; the figures come all the same.
 *
 * Like --bidir's reverse trial, the agent runs the test in a child of its
 * own binary (cli/send_child.c), which writes the result object.
 */
#ifndef XP_PROTO_SEND_MSG_H
#define XP_PROTO_SEND_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meas/figures.h"
#include "spec/spec.h"

struct json_object;

/* A start time at most this far ahead of the agent's clock: beyond it the request is refused. */
#define XP_SEND_START_AHEAD_MAX_NS (10ull * 1000000000ull)
/* Most flows a send reply carries (one reply line, XP_CTRL_MAX_REPLY). */
#define XP_SEND_MAX_FLOWS 64

/* The request: s filled from "spec" (heap: a spec is megabytes), *start_ns. */
struct json_object *xp_send_req_to_json(const struct xp_spec *s, uint64_t start_ns);
/*
 * Strict (the controller may be hostile): members op, spec, start_ns only;
 * spec as xp_spec_from_json reads it and xp_spec_validate accepts it, its
 * host a numeric IPv4 or IPv6 address (names are not resolved by an agent),
 * at most XP_SEND_MAX_FLOWS flows; start_ns a non-negative integer. 0, or -1
 * with a one-line err naming the member.
 */
int xp_send_req_from_json(struct json_object *o, struct xp_spec *s, uint64_t *start_ns, char *err, size_t errlen);

/* What the sending agent's test gave. */
struct xp_send_res {
	int rc;                   /* the test's exit status (0: it ran) */
	char error[256];
	uint64_t started_ns;      /* the agent's CLOCK_REALTIME as its engine started (0: it never did) */
	bool interrupted;         /* stopped early (the controller's stop) */
	bool server_lost;         /* the receiving agent went away: figures up to lost_at s */
	double lost_at;
	struct xp_period total;   /* tx_pkts, tx_bytes, rx.pkts, rx.bytes, t1 only */
	unsigned nflows;
	bool rx_known;            /* flows[].rx hold the receiving agent's per-flow counts */
	struct xp_flow_result flows[XP_SEND_MAX_FLOWS];
};
struct json_object *xp_send_res_to_json(const struct xp_send_res *r);
/* Strict too (the agent may be hostile). 0, or -1 with err. */
int xp_send_res_from_json(struct json_object *o, struct xp_send_res *r, char *err, size_t errlen);

/*
 * The clock offset of one NTP-style exchange: t0 the request left here, t1
 * it arrived there, t2 the reply left there, t3 it arrived here (ns, each
 * side's own clock). offset = ((t1 - t0) + (t2 - t3)) / 2 (there minus
 * here), rtt = (t3 - t0) - (t2 - t1).
 */
struct xp_clock_sample {
	int64_t t0, t1, t2, t3;
};
void xp_clock_offset(const struct xp_clock_sample *s, int64_t *offset_ns, int64_t *rtt_ns);
/* Of n exchanges, the one with the smallest round trip (the least queueing): its index, -1 if n is 0. */
int xp_clock_best(const struct xp_clock_sample *s, unsigned n, int64_t *offset_ns, int64_t *rtt_ns);

#endif
