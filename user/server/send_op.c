/*
 * Issue 27: an agent that sends on the OTG controller's request
 * (proto/send_msg.h). {"op":"time"} answers the controller's clock offset
 * exchange; {"op":"send"} runs a client test toward the receiving agent in
 * a child of our own binary (cli/send_child.c), started as --bidir's reverse
 * sender is (reverse.c: spawn, bounds, reaping), and relays its figures as
 * {"op":"sent"}. The controller half-closing its side stops the test: the
 * child gets SIGINT, ends its test as on Ctrl-C, and its figures still come.
 *
 * Not an open relay: the test's target must be the controller itself (the
 * control connection's address) or inside a network this server's --allow
 * names. Without --allow (every controller admitted), only the controller's
 * own address: an agent that admits anyone sends at no third party. The
 * server's other limits apply: --max-duration (the test's length, counted
 * from its start time), --max-tests, the start rate, and frame streams only.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "proto/send_msg.h"
#include "server/policy.h"
#include "server/state.h"
#include "util/time.h"

void srv_on_time(struct server *s, struct srv_client *c)
{
	(void)s;
	uint64_t t1 = xp_realtime_ns();
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("time"));
	json_object_object_add(o, "t1", json_object_new_uint64(t1));
	json_object_object_add(o, "t2", json_object_new_uint64(xp_realtime_ns()));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
}

/* The target the send request names: the controller's address, or one --allow admits. 0 or -1 with err. */
static int target_allowed(const struct xp_server_cfg *cfg, const struct srv_client *c, const struct xp_spec *sp,
			  char *err, size_t errlen)
{
	struct xp_addr t;
	if (xp_addr_parse(sp->host, &t)) {
		snprintf(err, errlen, "send: spec.host %.64s is not an address", sp->host);
		return -1;
	}
	if (xp_addr_eq(&t, &c->peer) || (cfg->nallow && xp_policy_peer_allowed(cfg, &t)))
		return 0;
	snprintf(err, errlen, "send: this agent sends only to the controller's own address or inside its --allow "
		 "networks, and %.64s is neither (start the agent with --allow NETWORK)", sp->host);
	return -1;
}

void srv_on_send(struct server *s, struct srv_client *c, struct json_object *m)
{
	const struct xp_server_cfg *cfg = s->cfg;
	char err[512];
	uint64_t start_ns;
	if (c->state != SRV_IDLE) {
		srv_refuse(s, c, "a test is already running on this connection", NULL);
		return;
	}
	struct xp_spec *sp = malloc(sizeof(*sp));
	if (!sp) {
		srv_refuse(s, c, "server out of memory", NULL);
		return;
	}
	int bad = xp_send_req_from_json(m, sp, &start_ns, err, sizeof(err));
	uint64_t now = xp_realtime_ns();
	double ahead = start_ns > now ? (double)(start_ns - now) / 1e9 : 0;
	if (!bad && start_ns > now + XP_SEND_START_AHEAD_MAX_NS) {
		snprintf(err, sizeof(err), "send: start_ns is %.1f s ahead of this agent's clock (at most %llu s)", ahead,
			 XP_SEND_START_AHEAD_MAX_NS / 1000000000ull);
		bad = -1;
	}
	if (!bad && sp->kind != XP_TEST_STREAM) {
		snprintf(err, sizeof(err), "send: only frame streams (OTG flows) are sent on a controller's request");
		bad = -1;
	}
	if (!bad && sp->duration > cfg->max_duration) {
		snprintf(err, sizeof(err), "send: a test of %g s is longer than this agent allows (%g s, --max-duration)",
			 sp->duration, cfg->max_duration);
		bad = -1;
	}
	if (!bad)
		bad = target_allowed(cfg, c, sp, err, sizeof(err));
	if (!bad && srv_tests_running(s) >= cfg->max_tests) {
		snprintf(err, sizeof(err), "server is running its maximum of %u tests (--max-tests); try again later",
			 cfg->max_tests);
		bad = -1;
	}
	if (!bad)
		bad = srv_start_rate(s, &c->peer, err, sizeof(err));
	if (bad) {
		free(sp);
		srv_refuse(s, c, err, err);
		return;
	}
	/* What we checked, not what came: the child reads it back as strictly. */
	c->rev_send = true;
	c->send_stopping = false;
	if (srv_child_start(s, c, xp_send_req_to_json(sp, start_ns), XP_CTRL_MAX_REPLY, err, sizeof(err))) {
		c->rev_send = false;
		free(sp);
		srv_refuse(s, c, err, err);
		return;
	}
	c->deadline = xp_now() + ahead + sp->duration + XP_SRV_REVERSE_MARGIN;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("sending"));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
	printf("[%s] send (OTG controller): %u flow(s) to %s port %u, %g s, starting in %.3f s\n", c->peer_s, sp->ntraffic,
	       sp->host, sp->control_port, sp->duration, ahead);
	fflush(stdout);
	free(sp);
}

void srv_send_stop(struct server *s, struct srv_client *c)
{
	(void)s;
	if (c->send_stopping)
		return;
	c->send_stopping = true;
	/* SIGINT: the child's test ends as on Ctrl-C and writes its figures (its deadline still bounds it). */
	if (c->rev_pid > 0)
		kill(c->rev_pid, SIGINT);
	printf("[%s] send: stopped by the controller\n", c->peer_s);
	fflush(stdout);
}

void srv_send_read(struct server *s, struct srv_client *c)
{
	int status;
	if (srv_child_collect(s, c, &status) != 1)
		return;
	struct xp_send_res *res = calloc(1, sizeof(*res));
	char err[256];
	if (!res) {
		srv_reverse_end(s, c);
		srv_reject(s, c, "server out of memory", "send: out of memory for its figures");
		return;
	}
	struct json_object *j = json_tokener_parse(c->rev_out);
	if (xp_send_res_from_json(j, res, err, sizeof(err))) {
		memset(res, 0, sizeof(*res));
		res->rc = status > 0 ? status : 1;
		snprintf(res->error, sizeof(res->error), "the sender ended without its figures (%.200s)", err);
	}
	json_object_put(j);
	srv_reverse_end(s, c);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("sent"));
	json_object_object_add(o, "result", xp_send_res_to_json(res));
	int r = xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
	xp_ctrl_flush(&c->ctrl);
	char why[320];
	if (res->rc && !res->interrupted)
		snprintf(why, sizeof(why), "send failed: %.280s", res->error);
	else
		snprintf(why, sizeof(why), "send done: %llu frames sent, %llu arrived", (unsigned long long)res->total.tx_pkts,
			 (unsigned long long)res->total.rx.pkts);
	free(res);
	srv_drop(s, c, r ? "controller does not read its replies, closing" : why);
}
