/*
 * A sending port whose agent sends (issue 27, proto/send_msg.h): its
 * control connection, its clock's offset from ours measured as NTP does
 * (OTG_CLOCK_EXCHANGES request/reply exchanges, the one with the smallest
 * round trip), the send request with the start time on its clock, and its
 * figures when its test ends. Then the start's skew: each sender's actual
 * start brought to our clock by its offset, the spread of those instants.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "otg/ctl_internal.h"
#include "proto/messages.h"
#include "proto/send_msg.h"
#include "util/time.h"

/* The figures come within the test's length and this (the agent's own bound is 20 s past it). */
#define OTG_AGENT_MARGIN_S 30.0
/* After a stop, the figures within this. */
#define OTG_AGENT_STOP_S 10.0

static unsigned short port_of(const struct xp_otg *c, const struct otg_port *pt)
{
	return pt->loc.port ? pt->loc.port : c->opts.control_port > 0 ? (unsigned short)c->opts.control_port
									: XP_SPEC_CONTROL_PORT;
}

int otg_agent_connect(struct xp_otg *c, unsigned g, char *why, size_t len)
{
	const struct otg_port *pt = &c->plan.ports[c->plan.groups[g].tx];
	struct otg_run *r = &c->runs[g];
	char err[256];
	int fd = xp_ctrl_connect(pt->loc.host, port_of(c, pt), 0, 3000, err, sizeof(err));
	if (fd < 0) {
		snprintf(why, len, "%s's agent: %.200s", pt->name, err);
		return -1;
	}
	r->ctrl = calloc(1, sizeof(*r->ctrl));
	if (!r->ctrl) {
		close(fd);
		snprintf(why, len, "out of memory");
		return -1;
	}
	xp_ctrl_init(r->ctrl, fd);
	xp_ctrl_set_max_msg(r->ctrl, XP_CTRL_MAX_REPLY); /* the figures of its flows */
	struct xp_clock_sample smp[OTG_CLOCK_EXCHANGES];
	unsigned n = 0;
	for (unsigned i = 0; i < OTG_CLOCK_EXCHANGES; i++) {
		struct json_object *q = json_object_new_object(), *a = NULL;
		json_object_object_add(q, "op", json_object_new_string("time"));
		int64_t t0 = (int64_t)xp_realtime_ns();
		int e = xp_ctrl_send(r->ctrl, q);
		json_object_put(q);
		if (!e)
			e = xp_ctrl_recv(r->ctrl, 2000, &a);
		int64_t t3 = (int64_t)xp_realtime_ns();
		if (e <= 0 || strcmp(xp_json_str(a, "op", ""), "time")) {
			char msg[160];
			xp_msg_printable(a ? xp_json_str(a, "msg", "") : "", msg, sizeof(msg));
			snprintf(why, len, "%s's agent does not answer the clock exchange (%s)%s%s: an xdpperf agent "
				 "of this version?", pt->name, e == 0 ? "it closed the connection" : e < 0 ? strerror(-e)
				 : "another reply", msg[0] ? ": " : "", msg);
			json_object_put(a);
			return -1;
		}
		smp[n] = (struct xp_clock_sample){ t0, xp_json_int(a, "t1", 0), xp_json_int(a, "t2", 0), t3 };
		json_object_put(a);
		/* A reply whose times are not in order is not an exchange: left out. */
		if (smp[n].t2 >= smp[n].t1 && smp[n].t1 > 0)
			n++;
	}
	if (xp_clock_best(smp, n, &r->offset_ns, &r->rtt_ns) < 0) {
		snprintf(why, len, "%s's agent gave no usable clock readings", pt->name);
		return -1;
	}
	if (c->opts.debug)
		fprintf(stderr, "xdpperf: otg: %s's agent: clock offset %+.3f ms (round trip %.3f ms)\n", pt->name,
			r->offset_ns / 1e6, r->rtt_ns / 1e6);
	return 0;
}

static void mark(struct xp_otg *c, unsigned g, const char *fmt, const char *a)
{
	struct otg_run *r = &c->runs[g];
	pthread_mutex_lock(&c->mu);
	r->failed = true;
	snprintf(r->error, sizeof(r->error), fmt, c->plan.ports[c->plan.groups[g].tx].name, a);
	pthread_mutex_unlock(&c->mu);
}

/* The agent's figures into the run (under c->mu). */
static void take(struct xp_otg *c, unsigned g, const struct xp_send_res *res)
{
	struct otg_run *r = &c->runs[g];
	const struct otg_group *gr = &c->plan.groups[g];
	struct xp_flow_result *f = res->nflows ? calloc(res->nflows, sizeof(*f)) : NULL;
	if (f)
		memcpy(f, res->flows, res->nflows * sizeof(*f));
	free(r->flows);
	r->flows = f;
	r->nflows = f ? res->nflows : 0;
	r->total = res->total;
	r->have_total = true;
	r->rx_lost = res->server_lost;
	r->lost_at = res->lost_at;
	r->started_ns = res->started_ns;
	if (res->rc && !(c->stop && res->interrupted)) {
		r->failed = true;
		if (res->server_lost)
			snprintf(r->error, sizeof(r->error), "%s's agent at %.64s went away: %.360s", c->plan.ports[gr->rx].name,
				 c->plan.ports[gr->rx].loc.host, res->error[0] ? res->error : "the control connection closed");
		else
			snprintf(r->error, sizeof(r->error), "%s: %.440s", c->plan.ports[gr->tx].name,
				 res->error[0] ? res->error : "the agent's test failed");
	}
}

void otg_agent_run(struct xp_otg *c, unsigned g)
{
	struct otg_run *r = &c->runs[g];
	const struct xp_spec *sp = c->plan.groups[g].spec;
	struct json_object *q = xp_send_req_to_json(sp, r->start_ns), *a = NULL;
	char err[256] = "";
	int e = q ? xp_auth_send_line(r->ctrl, c->key, json_object_to_json_string_ext(q, JSON_C_TO_STRING_PLAIN), err,
				      sizeof(err)) : -ENOMEM;
	json_object_put(q);
	if (!e)
		e = xp_ctrl_recv(r->ctrl, 5000, &a);
	if (e <= 0 || strcmp(xp_json_str(a, "op", ""), "sending")) {
		char msg[240];
		if (e > 0)
			xp_msg_printable(xp_json_str(a, "msg", "an unexpected reply"), msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "%s", e == 0 ? "it closed the connection" : err[0] ? err : strerror(-e));
		mark(c, g, "%s's agent refused to send: %.400s", msg);
		json_object_put(a);
		goto out;
	}
	json_object_put(a);
	a = NULL;
	pthread_mutex_lock(&c->mu);
	r->started = true;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	double ahead = r->start_ns ? ((double)r->start_ns - (double)xp_realtime_ns() - (double)r->offset_ns) / 1e9 : 0;
	double until = xp_now() + (ahead > 0 ? ahead : 0) + sp->duration + OTG_AGENT_MARGIN_S;
	bool stopped = false;
	for (;;) {
		e = xp_ctrl_recv(r->ctrl, 50, &a);
		if (e == -ETIMEDOUT || e == -EAGAIN) {
			if (c->stop && !stopped) {
				/* The stop: our half of the connection closed; the agent's test ends, its figures follow. */
				shutdown(r->ctrl->fd, SHUT_WR);
				stopped = true;
				if (until > xp_now() + OTG_AGENT_STOP_S)
					until = xp_now() + OTG_AGENT_STOP_S;
			}
			if (xp_now() > until) {
				mark(c, g, "%s's agent: %s", "no figures in time");
				break;
			}
			continue;
		}
		if (e <= 0) {
			mark(c, g, "%s's agent: %s", e == 0 ? "it closed the connection without its figures" : strerror(-e));
			break;
		}
		if (!strcmp(xp_json_str(a, "op", ""), "sent")) {
			struct xp_send_res *res = malloc(sizeof(*res));
			struct json_object *v = NULL;
			json_object_object_get_ex(a, "result", &v);
			if (!res || xp_send_res_from_json(v, res, err, sizeof(err))) {
				mark(c, g, "%s's agent sent bad figures: %s", res ? err : "out of memory");
			} else {
				pthread_mutex_lock(&c->mu);
				take(c, g, res);
				pthread_mutex_unlock(&c->mu);
			}
			free(res);
			break;
		}
		char msg[240];
		xp_msg_printable(xp_json_str(a, "msg", "an unexpected message"), msg, sizeof(msg));
		mark(c, g, "%s's agent: %s", msg);
		break;
	}
	json_object_put(a);
out:
	pthread_mutex_lock(&c->mu);
	r->ended = true;
	if (c->opts.debug && r->failed)
		fprintf(stderr, "xdpperf: otg: %s\n", r->error);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

bool otg_start_skew(const struct xp_otg *c, int64_t *skew_ns)
{
	int64_t lo = 0, hi = 0;
	if (!c->runs || !c->timed)
		return false;
	for (unsigned g = 0; g < c->plan.ngroups; g++) {
		const struct otg_run *r = &c->runs[g];
		if (!r->started_ns)
			return false;
		int64_t at = (int64_t)r->started_ns - r->offset_ns; /* on our clock */
		if (!g || at < lo)
			lo = at;
		if (!g || at > hi)
			hi = at;
	}
	*skew_ns = hi - lo;
	return true;
}

void otg_metrics_ext(const struct xp_otg *c, struct json_object *resp)
{
	if (!c->runs || !c->timed || !resp)
		return;
	struct json_object *x = json_object_new_object(), *snd = json_object_new_array(), *rxp = json_object_new_array();
	int64_t skew;
	json_object_object_add(x, "start_ns", json_object_new_uint64(c->start_ns));
	if (otg_start_skew(c, &skew))
		json_object_object_add(x, "start_skew_ns", json_object_new_int64(skew));
	for (unsigned g = 0; g < c->plan.ngroups; g++) {
		const struct otg_run *r = &c->runs[g];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "port", json_object_new_string(c->plan.ports[c->plan.groups[g].tx].name));
		json_object_object_add(o, "agent", json_object_new_boolean(c->plan.groups[g].remote));
		json_object_object_add(o, "clock_offset_ns", json_object_new_int64(r->offset_ns));
		json_object_object_add(o, "clock_rtt_ns", json_object_new_int64(r->rtt_ns));
		if (r->started_ns)
			json_object_object_add(o, "start_late_ns",
					       json_object_new_int64((int64_t)r->started_ns - r->offset_ns - (int64_t)c->start_ns));
		json_object_array_add(snd, o);
	}
	json_object_object_add(x, "senders", snd);
	/* Each receiving port: its flows from every sender as one (counts summed, histograms merged). */
	for (unsigned p = 0; p < c->plan.nports; p++) {
		struct xp_flow_result all;
		bool any = false;
		memset(&all, 0, sizeof(all));
		for (unsigned i = 0; i < c->plan.nflows; i++) {
			const struct otg_flow *fl = &c->plan.flows[i];
			const struct otg_run *r = &c->runs[fl->group];
			if (fl->rx != p || !r->flows || fl->slot >= r->nflows)
				continue;
			otg_flow_merge(&all, &r->flows[fl->slot]);
			any = true;
		}
		if (!any)
			continue;
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "port", json_object_new_string(c->plan.ports[p].name));
		json_object_object_add(o, "frames_tx", json_object_new_uint64(all.tx_frames));
		if (all.rx_known) {
			struct xp_lat_hist h;
			json_object_object_add(o, "frames_rx", json_object_new_uint64(all.rx.recv));
			xp_flow_acct_hist(&all.rx, &h);
			if (h.n)
				json_object_object_add(o, "latency", xp_lat_to_json(&h));
		}
		json_object_array_add(rxp, o);
	}
	json_object_object_add(x, "rx_ports", rxp);
	json_object_object_add(resp, "xdpperf", x);
}
