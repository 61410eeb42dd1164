/*
 * The traffic threads, one per sending port. A port of this host: its test run by the controller itself
 * (xp_client_test into a memory sink) in the controller's traffic thread.
 * The sink's hook follows the test: "started" when the engine is about to
 * send, each interval's counts while it runs, every flow's figures (the
 * summary's, copied: the client frees its own) when it ends. Another
 * port's: its agent sends (agent.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client.h"
#include "otg/ctl_internal.h"
#include "util/time.h"

struct run_ctx {
	struct xp_otg *c;
	unsigned g;
};

static void on_start(void *arg, const struct xp_report_info *i)
{
	struct run_ctx *x = arg;
	(void)i;
	pthread_mutex_lock(&x->c->mu);
	x->c->runs[x->g].started = true;
	pthread_cond_broadcast(&x->c->cv);
	pthread_mutex_unlock(&x->c->mu);
}

static void on_interval(void *arg, const struct xp_period *p)
{
	struct run_ctx *x = arg;
	struct otg_run *r = &x->c->runs[x->g];
	double secs = p->t1 - p->t0;
	pthread_mutex_lock(&x->c->mu);
	r->tx_frames += p->tx_pkts;
	r->tx_bytes += p->tx_bytes;
	r->rx_frames += p->rx.pkts;
	r->rx_bytes += p->rx.bytes;
	if (secs > 0) {
		r->tx_fps = (double)p->tx_pkts / secs;
		r->rx_fps = (double)p->rx.pkts / secs;
		r->tx_Bps = (double)p->tx_bytes / secs;
		r->rx_Bps = (double)p->rx.bytes / secs;
	}
	pthread_mutex_unlock(&x->c->mu);
}

static void on_end(void *arg, const struct xp_summary *s)
{
	struct run_ctx *x = arg;
	struct otg_run *r = &x->c->runs[x->g];
	struct xp_flow_result *f = s->nflows ? malloc(s->nflows * sizeof(*f)) : NULL;
	if (f)
		memcpy(f, s->flows, s->nflows * sizeof(*f));
	pthread_mutex_lock(&x->c->mu);
	free(r->flows);
	r->flows = f;
	r->nflows = f ? s->nflows : 0;
	r->total = s->total;
	r->have_total = true;
	r->rx_lost = s->server_lost;
	r->lost_at = s->server_lost_at;
	r->tx_fps = r->rx_fps = r->tx_Bps = r->rx_Bps = 0;
	pthread_mutex_unlock(&x->c->mu);
}

static const struct xp_run_opts *run_opts(struct xp_otg *c, unsigned g, uint64_t *started, struct xp_run_opts *ro)
{
	memset(ro, 0, sizeof(*ro));
	ro->debug = c->opts.debug;
	ro->quiet = true; /* the error goes back to the API caller (the run's error), not to stderr */
	ro->stop = &c->stop;
	ro->start_ns = c->runs[g].start_ns; /* 0 unless the start named a time (ctl.c) */
	ro->started_ns = started;
	return ro;
}

/* This host's sending port's test (config.c allows one), run here. */
static void run_local(struct xp_otg *c, unsigned g)
{
	struct run_ctx x = { c, g };
	uint64_t started = 0;
	struct xp_mem_hook hook = { on_start, on_interval, on_end, &x };
	struct xp_report rep;
	struct xp_summary sum;
	struct xp_run_opts ro;
	xp_report_init(&rep, XP_REPORT_MEMORY, NULL);
	rep.mem.hook = &hook;
	memset(&sum, 0, sizeof(sum));
	int rc = xp_client_test(c->plan.groups[g].spec, run_opts(c, g, &started, &ro), &rep, &sum);
	pthread_mutex_lock(&c->mu);
	struct otg_run *r = &c->runs[g];
	r->started_ns = started;
	const char *why = rep.mem.error[0] ? rep.mem.error : xp_client_last_error();
	/* A stop's interruption is the run's end, not its failure. */
	if (rc && !(c->stop && sum.interrupted)) {
		/* Which port stopped: the receiving one when its agent went away, else the sending one. */
		const struct otg_group *gr = &c->plan.groups[g];
		r->failed = true;
		if (sum.server_lost)
			snprintf(r->error, sizeof(r->error), "%s's agent at %.64s went away: %.360s", c->plan.ports[gr->rx].name,
				 c->plan.ports[gr->rx].loc.host, why[0] ? why : "the control connection closed");
		else
			snprintf(r->error, sizeof(r->error), "%s: %.440s", c->plan.ports[gr->tx].name,
				 why[0] ? why : "the test failed");
	}
	r->ended = true;
	if (c->opts.debug && r->failed)
		fprintf(stderr, "xdpperf: otg: %s\n", r->error);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	xp_report_free(&rep);
}

void *otg_run_thread(void *arg)
{
	const struct otg_targ *t = arg;
	if (t->c->plan.groups[t->g].remote)
		otg_agent_run(t->c, t->g);
	else
		run_local(t->c, t->g);
	return NULL;
}
