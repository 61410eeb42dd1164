/*
 * The OTG controller's insides (otg.h), shared by its files:
 *   config.c   a config checked into a plan (ports, flows, one test per sending port)
 *   ctl.c      the controller object: config, start and stop, the traffic's thread
 *   run.c      one sending port's test run here (xp_client_test, a memory sink)
 *   metrics.c  MetricsRequest -> MetricsResponse from the runs' figures
 */
#ifndef XP_OTG_CTL_INTERNAL_H
#define XP_OTG_CTL_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "meas/figures.h"
#include "proto/auth.h"
#include "proto/channel.h"
#include "otg/location.h"
#include "otg/otg.h"
#include "spec/spec.h"

struct otg_port {
	char name[64];
	char location[320];        /* as configured (port metrics give it back) */
	struct xp_otg_loc loc;
	bool local;                /* this host's and no control port named: the controller sends from it itself;
				    * any other sending port's agent sends on the controller's request */
};

struct otg_flow {
	char name[64];
	unsigned tx, rx;           /* ports[] */
	unsigned group, slot;      /* the test that sends it, and its stream there */
};

/* One test: a sending port's flows toward one receiving port's agent. */
struct otg_group {
	unsigned tx, rx;
	bool remote;               /* sent by tx's agent ({"op":"send"}, proto/send_msg.h), not here */
	struct xp_spec *spec;      /* the test (heap: megabytes) */
};

struct otg_plan {
	struct otg_port *ports;
	unsigned nports;
	struct otg_flow *flows;
	unsigned nflows;
	struct otg_group *groups;
	unsigned ngroups;
};

/* A group's run: what its test gave so far (under the controller's lock). */
struct otg_run {
	bool started, ended;       /* the engine started; the test is over */
	bool failed;               /* it ended with an error (error[]) */
	char error[512];
	/* while it runs: sums of the memory sink's intervals and the last one's rates */
	uint64_t tx_frames, tx_bytes, rx_frames, rx_bytes;
	double tx_fps, rx_fps, tx_Bps, rx_Bps;
	/* once it ended: each flow's figures (the summary's flows, copied) */
	struct xp_flow_result *flows;
	unsigned nflows;
	bool have_total;
	struct xp_period total;    /* the whole test (the summary's) */
	/* The receiving port's agent went away during the test: the figures cover 0..lost_at s (the port
	 * metrics say so in its location and link). */
	bool rx_lost;
	double lost_at;
	/* The start (issue 27): the agent's clock offset from ours (there minus here) by the exchange of the
	 * smallest round trip, when its engine is to start (its clock) and when it did (its clock; 0: not known). */
	struct xp_ctrl *ctrl;      /* a remote group's control connection to its sending agent */
	int64_t offset_ns, rtt_ns;
	uint64_t start_ns, started_ns;
};

/* Check cfg against the models and this controller: a plan (heap), or -1 with err (400, path). */
int otg_plan_make(struct json_object *cfg, const struct xp_otg_opts *o, struct otg_plan *p, struct xp_otg_err *err);
void otg_plan_free(struct otg_plan *p);

struct xp_otg {
	struct xp_otg_opts opts;
	char auth_key[256];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct json_object *cfg;   /* the config taken (NULL: none) */
	struct otg_plan plan;
	struct otg_run *runs;      /* plan.ngroups, while traffic ran or runs */
	bool running;              /* a start's threads are not joined yet */
	bool have_thread;
	pthread_t *threads;        /* one per group */
	struct otg_targ *targs;
	unsigned nthreads;
	struct xp_auth_key *key;   /* opts.auth_key loaded, for the sending agents (NULL: none) */
	bool timed;                /* the start named a time (several senders, or an agent's) */
	uint64_t start_ns;         /* that instant, our CLOCK_REALTIME */
	volatile int stop;         /* stop asked: the client's test ends early */
	double started_at;         /* xp_now() of the start */
};

/* A traffic thread's argument: its controller and group. */
struct otg_targ {
	struct xp_otg *c;
	unsigned g;
};
/* The traffic threads (run.c): one per group, a local group's test run here, a remote one's asked of its
 * sending agent (otg_agent_connect made its connection and measured its clock); each marks its run. */
void *otg_run_thread(void *arg);
/* A remote group's sending agent: connected, its clock offset measured (OTG_CLOCK_EXCHANGES). 0 or -1 with why. */
#define OTG_CLOCK_EXCHANGES 5
int otg_agent_connect(struct xp_otg *c, unsigned g, char *why, size_t len);
/* A remote group's run (agent.c): the send request, its acceptance ("started"), its figures when it ends;
 * the controller's stop half-closes the connection, and the figures still come. */
void otg_agent_run(struct xp_otg *c, unsigned g);
/* The start's skew (ns, our clock): the spread of the groups' actual starts; false until every start is known. */
bool otg_start_skew(const struct xp_otg *c, int64_t *skew_ns);
/* MetricsResponse's xdpperf extension (docs/otg.md): the start time, offsets and skew, each receiving port's
 * merged latency histogram. Added to resp only for a timed start (so one local sender's stays the schema's). */
void otg_metrics_ext(const struct xp_otg *c, struct json_object *resp);
/* merge.c: flow b's figures added into a (counts summed, latency histograms merged bucket-wise, min/max kept). */
void otg_flow_merge(struct xp_flow_result *a, const struct xp_flow_result *b);
/* The metrics (metrics.c), under c->mu. */
struct json_object *otg_metrics(struct xp_otg *c, struct json_object *req, struct xp_otg_err *err);

/* err filled: http 400 "validation" (or 409 / 500 as given). Returns -1. */
int otg_fail(struct xp_otg_err *err, int http, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
