/*
 * A client's connection and test coming to an end, which the loop
 * (server.c), the tests (session.c), the reverse trials (reverse.c) and the
 * port requests (ports_op.c) all do: an error line, a refusal, the drop, and
 * the release of the test's slot, counting program and listeners. Kept here,
 * below those files, so that none of them calls back into another.
 */
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/messages.h"
#include "report/metrics.h"
#include "server/state.h"
#include "util/time.h"

/* What the client sent us, fit for our log: no terminal escapes. */
static const char *printable(const char *in, char *out, size_t len)
{
	xp_msg_printable(in, out, len);
	return out;
}

void srv_send_error(struct srv_client *c, const char *msg)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("error"));
	json_object_object_add(o, "msg", json_object_new_string(msg));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
}

void srv_drop(struct server *s, struct srv_client *c, const char *why)
{
	if (c->state == SRV_FREE)
		return;
	if (why)
		printf("[%s] %s\n", c->peer_s, why);
	srv_release(s, c);
	close(c->ctrl.fd);
	xp_ctrl_free(&c->ctrl);
	c->state = SRV_FREE;
	fflush(stdout);
}

/*
 * The last word: one error line, then no more input is taken. Closing with
 * unread input would send a RST that can destroy the error line before the
 * client reads it, so shut down for writing and discard input a moment first.
 */
void srv_reject(struct server *s, struct srv_client *c, const char *msg, const char *log)
{
	char buf[300];
	srv_send_error(c, msg);
	if (log)
		printf("[%s] %s\n", c->peer_s, printable(log, buf, sizeof(buf)));
	srv_release(s, c);
	c->ctrl.len = 0; /* whatever else it sent is not read */
	xp_ctrl_flush(&c->ctrl);
	shutdown(c->ctrl.fd, SHUT_WR);
	c->state = SRV_DRAINING;
	c->deadline = xp_now() + XP_SRV_DRAIN_TIME;
	fflush(stdout);
}

void srv_refuse(struct server *s, struct srv_client *c, const char *msg, const char *log)
{
	char buf[300];
	if (++c->refused >= XP_SRV_MAX_REFUSED) {
		srv_reject(s, c, msg, "too many refused requests, closing");
		return;
	}
	srv_send_error(c, msg);
	if (log) {
		printf("[%s] refused: %s\n", c->peer_s, printable(log, buf, sizeof(buf)));
		fflush(stdout);
	}
}

/* The counting program off the interface again (the last reference detaches
 * it). After a test that ran, the XDP program's last reference lingers a few
 * seconds (churn.c); a start that failed leaves nothing behind. */
void srv_detach_counter(struct server *s, struct srv_client *c, bool ran)
{
	if (c->counted_tc)
		server_prog_detach_tc(s->rp, c->ifindex);
	else if (ran)
		srv_xdp_release(s, c->ifindex);
	else
		server_prog_detach(s->rp, c->ifindex);
}

void srv_release(struct server *s, struct srv_client *c)
{
	srv_reverse_end(s, c); /* a --bidir reverse trial's sender, if any */
	if (c->ss && c->ss_owned) {
		struct srv_closing *k = NULL;
		for (int i = 0; i < XP_SRV_MAX_CLIENTS && !k; i++)
			if (!s->closing[i].used)
				k = &s->closing[i];
		/* One per client slot at most per test; a full table only loses the port bookkeeping. */
		if (k)
			*k = (struct srv_closing){ .used = true, .id = c->test_id,
						   .ports = { c->test.port_lo, c->test.port_hi },
						   .parallel = c->test.parallel };
		xp_sockjobs_close(s->jobs, c->test_id, c->ss);
	}
	c->ss = NULL;
	c->ss_owned = false;
	if (c->slot >= 0) {
		server_prog_slot_free(s->rp, c->slot);
		/* A STARTING test (its listeners not open yet) never ran. */
		srv_detach_counter(s, c, c->state == SRV_RUNNING);
		xp_metrics_server_end(c->test_id);
		c->slot = -1;
		s->tests_done++;
	}
	srv_meas_flows_free(s, c); /* its flow entries, if any */
	xp_test_release(&c->test); /* its spec */
	/* A STARTING test's listeners arrive later and are closed then (on_opened). */
	c->state = SRV_IDLE;
}
