/*
 * The client's side of the control conversation (proto/messages.h): the
 * start request (answering --auth-key's challenge first), the server's
 * counter samples, and the watch on the connection while the test runs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "client/session.h"
#include "proto/flow_figs.h"
#include "util/process.h"
#include "util/time.h"

/* Ask the server for its counters; "sample" during the test, "stop" at the end. */
int xp_client_server_sample(struct client *c, const char *op, struct snap *out, double *cpu)
{
	if (c->no_server) /* nobody to ask: the server's figures stay zero, and the report says why */
		return 0;
	struct json_object *m = json_object_new_object(), *r = NULL, *v;
	json_object_object_add(m, "op", json_object_new_string(op));
	if (c->flow_ask) /* an interval of a test with flows: every flow's cumulative figures too */
		json_object_object_add(m, "flows", json_object_new_boolean(true));
	c->flow_cur_ok = false;
	int e = xp_ctrl_send(&c->ctrl, m);
	json_object_put(m);
	if (e)
		return e;
	do {
		e = xp_ctrl_recv(&c->ctrl, 3000, &r);
	} while (e == -EINTR);
	if (e <= 0)
		return e == 0 ? -ECONNRESET : e;
	if (!strcmp(xp_json_str(r, "op", ""), "error")) {
		char msg[200];
		xp_msg_printable(xp_json_str(r, "msg", "?"), msg, sizeof(msg));
		snprintf(c->errbuf, sizeof(c->errbuf), "server: %s", msg);
		json_object_put(r);
		return -EPROTO;
	}
	if (!json_object_object_get_ex(r, "counters", &v)) {
		json_object_put(r);
		return -EPROTO;
	}
	xp_counters_from_json(v, &out->rx);
	if (json_object_object_get_ex(r, "sockets", &v)) {
		struct xp_sock_counts sc;
		xp_sock_counts_from_json(v, &sc);
		out->srv.s_accepted = sc.accepted;
		out->srv.s_closed = sc.closed;
		out->srv.s_resets = sc.resets;
		out->srv.s_open_now = sc.open_now;
		out->srv.s_bytes_rx = sc.bytes_rx;
		out->srv.s_listen_overflows = sc.listen_overflows;
		out->srv.s_listen_drops = sc.listen_drops;
		out->srv.s_embryonic_rsts = sc.embryonic_rsts;
	}
	if (cpu)
		*cpu = xp_json_double(r, "cpu_percent", -1);
	c->last.rx = out->rx;
	c->last.srv = out->srv;
	/* The stop reply of a test with stamps: its per-stream figures. */
	e = json_object_object_get_ex(r, "streams", &v) ? xp_cmeas_streams_json(&c->meas, v, c->errbuf, sizeof(c->errbuf)) : 0;
	/* An interval sample that asked for them: each flow's cumulative figures (none sent: none known). */
	if (!e && c->flow_ask && c->flow_cur && json_object_object_get_ex(r, "flows", &v)) {
		if (xp_flow_acct_from_compact(v, c->flow_cur, c->req.flows.nflows, c->errbuf, sizeof(c->errbuf)))
			e = -EPROTO;
		else
			c->flow_cur_ok = true;
	}
	/* A test with flows: the server's count of each, read strictly (a server that sent none: none known). */
	if (!e && !strcmp(op, "stop") && c->req.flows.nflows && c->flow_res && json_object_object_get_ex(r, "flows", &v)) {
		unsigned n = c->req.flows.nflows;
		struct xp_flow_acct *f = calloc(n, sizeof(*f));
		if (!f) {
			snprintf(c->errbuf, sizeof(c->errbuf), "out of memory for %u flows' figures", n);
			e = -EPROTO;
		} else if (xp_flow_acct_from_json(v, f, n, c->errbuf, sizeof(c->errbuf))) {
			e = -EPROTO;
		} else {
			for (unsigned i = 0; i < n; i++) {
				c->flow_res[i].rx = f[i];
				/* Sent where the server takes no unstamped frame: its entry counts nothing of it. */
				c->flow_res[i].rx_known = !c->flow_res[i].uncountable;
			}
			c->flow_rx = true;
		}
		free(f);
	}
	json_object_put(r);
	return e;
}

const char *xp_client_ctrl_errstr(struct client *c, int e)
{
	if (e == -EPROTO && c->errbuf[0])
		return c->errbuf;
	if (e == -ECONNRESET || e == -EPIPE)
		return "the server closed the control connection";
	if (e == -ETIMEDOUT)
		return "the server stopped answering";
	snprintf(c->errbuf, sizeof(c->errbuf), "control channel: %s", strerror(-e));
	return c->errbuf;
}

/*
 * The first answer on the control connection tells an xdpperf server from
 * whatever else listens on the port: an xdpperf server always answers `want`
 * or "error". Shared by the port-range request (ports.c) and the start
 * (below) so both name a stranger the same way.
 */
int xp_client_first_answer(struct client *c, const struct xp_spec *sp, int e, struct json_object *r,
			   const char *want, const char *closed_why, const char *err_prefix)
{
	const char *op = e > 0 ? xp_json_str(r, "op", "") : "";
	if (e == -EPROTO || (e == 0 && c->ctrl.len) || (e > 0 && strcmp(op, want) && strcmp(op, "error"))) {
		json_object_put(r);
		return xp_client_fail(c, 1, "%s port %u answered with something that is not xdpperf's control protocol: is that "
			    "an xdpperf server? (check the address and --control-port)", sp->host, sp->control_port);
	}
	if (e == 0)
		return xp_client_fail(c, 1, "%s port %u closed the control connection without an answer: %s",
				      sp->host, sp->control_port, closed_why);
	if (e == -ETIMEDOUT)
		return xp_client_fail(c, 1, "%s port %u took the control connection but did not answer within 10 s: not an "
			    "xdpperf server?", sp->host, sp->control_port);
	if (e < 0)
		return xp_client_fail(c, 1, "%s%s", err_prefix, xp_client_ctrl_errstr(c, e));
	return 0;
}

/*
 * Send the start request; with --auth-key, first answer the server's
 * challenge: the MAC covers the request line exactly as sent. 0 or -errno
 * (-EPROTO with the reason in errbuf).
 */
static int send_request(struct client *c, struct json_object *m)
{
	const char *line = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	return xp_auth_send_line(&c->ctrl, &c->key, line, c->errbuf, sizeof(c->errbuf));
}

int xp_client_request_test(struct client *c)
{
	const struct xp_spec *sp = c->spec;
	struct xp_test *t = &c->req;
	*t = (struct xp_test){
		.version = XP_PROTO_VERSION,
		.kind = c->ec.kind,
		.engine = c->ops->name,
		.family = c->local.family,
		.udp = sp->traffic[0].udp,
		.port_lo = sp->traffic[0].port_lo,
		.port_hi = sp->traffic[0].port_hi,
		.duration = sp->duration,
		.frame_size = c->ops->tmpl != XP_TMPL_NONE ? sp->traffic[0].frame_size : 0,
	};
	/* The server counts our frames from our addresses only: the control
	 * connection's, and these. */
	_Static_assert(XP_MAX_BIND_OPT <= XP_TEST_MAX_BIND, "every --bind address fits a start request");
	t->nbind = sp->nbind;
	memcpy(t->bind, sp->bind, sizeof(t->bind[0]) * sp->nbind);
	/* The engine's part: count, count and pass, answer handshakes, listen. */
	if (c->ops->ask_server)
		c->ops->ask_server(&c->ec, t);
	xp_cmeas_request(&c->meas, &t->stamp);
	/* Flows (issue 26): the server counts stream s into flow
	 * xp_flow_of_stream(s, nflows, T); it needs only these two. Only a
	 * stamped test's flows can be told apart. */
	if (c->ec.frames.nflows && t->stamp.ival) {
		t->flows.nflows = c->ec.frames.nflows;
		t->flows.threads = c->ec.frames.queues > 1 ? c->ec.frames.queues : 1;
		/* The flows without stamps: the fields and each flow's keys (flows.c's choose_keys). */
		if (c->keys && c->keys->mask && (t->flows.keys = calloc(c->keys->n, sizeof(*t->flows.keys)))) {
			t->flows.key_mask = c->keys->mask;
			t->flows.nkeys = c->keys->n;
			for (unsigned i = 0; i < c->keys->n; i++) {
				const struct xp_flow_key *k = &c->keys->key[i];
				t->flows.keys[i] = (struct xp_test_key){ .flow = c->keys->flow[i],
									 .vid = { k->vid[0], k->vid[1] },
									 .dscp = k->dscp, .sport = k->sport,
									 .dport = k->dport, .src = ntohl(k->src) };
			}
		} else if (c->keys && c->keys->mask) {
			return xp_client_fail(c, 1, "out of memory for %u keys", c->keys->n);
		}
	}
	/* What the test is, beside the resolved part above: the server keeps it for its log. */
	t->spec = xp_spec_to_wire_json(sp);
	struct json_object *m = xp_test_to_json(t), *r = NULL;
	xp_test_release(t); /* m holds it now */
	int e = send_request(c, m);
	json_object_put(m);
	if (!e)
		e = xp_ctrl_recv(&c->ctrl, 10000, &r);
	/* The first answer tells an xdpperf server from whatever else listens on the port (xp_client_first_answer). */
	if ((e = xp_client_first_answer(c, sp, e, r, "started", "not an xdpperf server, or one that dropped us (see its log)", "")))
		return e;
	const char *op = xp_json_str(r, "op", "");
	if (strcmp(op, "started")) {
		char msg[200];
		xp_msg_printable(xp_json_str(r, "msg", "no reason given"), msg, sizeof(msg));
		xp_client_fail(c, 1, "server refused the test: %s", msg);
		json_object_put(r);
		return 1;
	}
	/* Printed in the report: nothing from the other end reaches the terminal raw. */
	xp_msg_printable(xp_json_str(r, "dev", "?"), c->server_dev, sizeof(c->server_dev));
	xp_msg_printable(xp_json_str(r, "xdp_mode", "?"), c->xdp_mode, sizeof(c->xdp_mode));
	char err[256];
	if (xp_cmeas_started(&c->meas, sp, r, err, sizeof(err))) {
		json_object_put(r);
		return xp_client_fail(c, 1, "%s", err);
	}
	json_object_put(r);
	/* The stamps' tag, before the engine sends its first frame. */
	if (c->meas.on && c->ops->set_stamp_key && c->eng)
		c->ops->set_stamp_key(c->eng, c->meas.key);
	/* --rtt: the program that times the returning frames, attached before
	 * the engine sends the first one. */
	if (xp_cmeas_rtt_start(&c->meas, sp, &c->ec.frames.tmpl, c->link.ifindex, err, sizeof(err)))
		return xp_client_fail(c, 1, "%s", err);
	return 0;
}

/*
 * Wait until time `until` while watching the control connection: returns 0 at
 * the deadline, 1 on a signal, -errno if the server went away.
 */
int xp_client_wait_until(struct client *c, double until)
{
	for (;;) {
		if (xp_signalled || (c->ro->stop && *c->ro->stop))
			return 1;
		double left = until - xp_now();
		if (left <= 0)
			return 0;
		if (c->ro->stop && left > 0.05)
			left = 0.05; /* another thread's stop is a flag, not a signal that ends poll() */
		struct pollfd p = { .fd = c->ctrl.fd, .events = POLLIN };
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r > 0) {
			/* The server only speaks when asked: anything now is a close or an error. */
			char b;
			ssize_t n = recv(c->ctrl.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN))
				return -ECONNRESET;
			if (p.revents & (POLLHUP | POLLERR))
				return -ECONNRESET;
			xp_sleep(0.001);
		}
	}
}
