/*
 * The OTG controller (otg.h): the config taken, traffic started and stopped
 * in its own thread, the state every call reads under one lock. A start
 * returns once the sending port's engine is about to send, or with the
 * error that kept it from starting (nothing then runs: the test's own
 * cleanup has ended it); a stop returns once the test ended and its figures
 * are final.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "otg/ctl_internal.h"
#include "util/time.h"
#include "util/version.h"

struct xp_otg *xp_otg_new(const struct xp_otg_opts *o)
{
	struct xp_otg *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (o)
		c->opts = *o;
	if (c->opts.auth_key) {
		if (strlen(c->opts.auth_key) >= sizeof(c->auth_key)) {
			free(c);
			errno = ENAMETOOLONG;
			return NULL;
		}
		snprintf(c->auth_key, sizeof(c->auth_key), "%s", c->opts.auth_key);
		c->opts.auth_key = c->auth_key; /* ours: the caller's string may go */
	}
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
}

static void free_runs(struct xp_otg *c)
{
	for (unsigned g = 0; c->runs && g < c->plan.ngroups; g++) {
		struct otg_run *r = &c->runs[g];
		free(r->flows);
		if (r->ctrl) {
			close(r->ctrl->fd);
			xp_ctrl_free(r->ctrl);
			free(r->ctrl);
		}
	}
	free(c->runs);
	c->runs = NULL;
}

/* The traffic threads joined (they ended or were told to stop). Called with c->mu held; drops it meanwhile. */
static void join_traffic(struct xp_otg *c)
{
	if (!c->have_thread)
		return;
	pthread_t *t = c->threads;
	unsigned n = c->nthreads;
	c->have_thread = false;
	c->threads = NULL;
	c->nthreads = 0;
	pthread_mutex_unlock(&c->mu);
	for (unsigned i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	pthread_mutex_lock(&c->mu);
	c->running = false;
	pthread_cond_broadcast(&c->cv);
}

static bool all_ended(const struct xp_otg *c)
{
	for (unsigned g = 0; g < c->plan.ngroups; g++)
		if (!c->runs[g].ended)
			return false;
	return true;
}

void xp_otg_free(struct xp_otg *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	c->stop = 1;
	join_traffic(c);
	pthread_mutex_unlock(&c->mu);
	free_runs(c);
	free(c->targs);
	if (c->key) {
		xp_auth_key_clear(c->key);
		free(c->key);
	}
	otg_plan_free(&c->plan);
	json_object_put(c->cfg);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static struct json_object *no_warnings(void)
{
	struct json_object *w = json_object_new_object();
	if (w)
		json_object_object_add(w, "warnings", json_object_new_array());
	return w;
}

int xp_otg_set_config(struct xp_otg *c, struct json_object *cfg, struct json_object **warnings,
		      struct xp_otg_err *err)
{
	struct otg_plan plan;
	struct json_object *copy = NULL;
	if (warnings)
		*warnings = NULL;
	pthread_mutex_lock(&c->mu);
	/* A test that ended on its own leaves its thread to join: that is not traffic running. */
	if (c->running && all_ended(c))
		join_traffic(c);
	if (c->running) {
		pthread_mutex_unlock(&c->mu);
		return otg_fail(err, 409, "traffic runs: stop it (control/state flow_transmit stop) before a new config");
	}
	pthread_mutex_unlock(&c->mu);
	/* Checked outside the lock: it connects to the agents, and metrics of the last run stay readable. */
	if (otg_plan_make(cfg, &c->opts, &plan, err))
		return -1;
	if (json_object_deep_copy(cfg, &copy, NULL) || !copy) {
		otg_plan_free(&plan);
		return otg_fail(err, 500, "out of memory");
	}
	pthread_mutex_lock(&c->mu);
	if (c->running) { /* a start came in meanwhile */
		pthread_mutex_unlock(&c->mu);
		otg_plan_free(&plan);
		json_object_put(copy);
		return otg_fail(err, 409, "traffic runs: stop it (control/state flow_transmit stop) before a new config");
	}
	free_runs(c);
	otg_plan_free(&c->plan);
	c->plan = plan;
	json_object_put(c->cfg);
	c->cfg = copy;
	pthread_mutex_unlock(&c->mu);
	if (warnings)
		*warnings = no_warnings();
	return 0;
}

struct json_object *xp_otg_get_config(struct xp_otg *c)
{
	pthread_mutex_lock(&c->mu);
	struct json_object *r = c->cfg ? json_object_get(c->cfg) : json_object_new_object();
	pthread_mutex_unlock(&c->mu);
	return r;
}

struct json_object *xp_otg_version(void)
{
	struct json_object *v = json_object_new_object();
	if (!v)
		return NULL;
	json_object_object_add(v, "api_spec_version", json_object_new_string(XP_OTG_API_VERSION));
	json_object_object_add(v, "sdk_version", json_object_new_string(""));
	json_object_object_add(v, "app_version", json_object_new_string(xp_version()));
	return v;
}

/*
 * Several senders, or an agent's: one instant for all, OTG_START_AHEAD_NS
 * from now on our clock, told to each agent on its own clock (our instant
 * plus its offset, otg_agent_connect). Long enough for an agent to start its
 * sender (a child process, the engine's set-up, the receiving agent's
 * start request) and short enough not to be felt.
 */
#define OTG_START_AHEAD_NS 400000000ull

static bool any_remote(const struct xp_otg *c)
{
	for (unsigned g = 0; g < c->plan.ngroups; g++)
		if (c->plan.groups[g].remote)
			return true;
	return false;
}

/* The sending agents connected and their clocks measured, the start's instant set. 0 or -1 with err. */
static int prepare(struct xp_otg *c, struct xp_otg_err *err)
{
	char why[400];
	c->timed = c->plan.ngroups > 1 || any_remote(c);
	c->start_ns = 0;
	if (!c->timed)
		return 0;
	if (c->opts.auth_key && !c->key) {
		c->key = calloc(1, sizeof(*c->key));
		if (!c->key)
			return otg_fail(err, 500, "out of memory");
		if (xp_auth_key_load(c->opts.auth_key, c->key, why, sizeof(why))) {
			free(c->key);
			c->key = NULL;
			return otg_fail(err, 400, "--auth-key: %s", why);
		}
	}
	for (unsigned g = 0; g < c->plan.ngroups; g++)
		if (c->plan.groups[g].remote && otg_agent_connect(c, g, why, sizeof(why)))
			return otg_fail(err, 400, "start: %s", why);
	c->start_ns = xp_realtime_ns() + OTG_START_AHEAD_NS;
	for (unsigned g = 0; g < c->plan.ngroups; g++)
		c->runs[g].start_ns = c->start_ns + (uint64_t)c->runs[g].offset_ns;
	return 0;
}

static int first_failed(const struct xp_otg *c)
{
	for (unsigned g = 0; g < c->plan.ngroups; g++)
		if (c->runs[g].failed)
			return (int)g;
	return -1;
}

static bool all_started(const struct xp_otg *c)
{
	for (unsigned g = 0; g < c->plan.ngroups; g++)
		if (!c->runs[g].started && !c->runs[g].ended)
			return false;
	return true;
}

/* Start every flow: under c->mu. 0, or -1 with err and nothing left running. */
static int start(struct xp_otg *c, struct xp_otg_err *err)
{
	unsigned n = c->plan.ngroups;
	if (c->running && all_ended(c))
		join_traffic(c);
	if (c->running)
		return otg_fail(err, 409, "traffic runs already: stop it first");
	if (!n)
		return otg_fail(err, 400, "no flows to start: set a config with flows first");
	free_runs(c);
	free(c->targs);
	c->runs = calloc(n, sizeof(*c->runs));
	c->targs = calloc(n, sizeof(*c->targs));
	c->threads = calloc(n, sizeof(*c->threads));
	if (!c->runs || !c->targs || !c->threads) {
		free(c->threads);
		c->threads = NULL;
		free_runs(c);
		return otg_fail(err, 500, "out of memory");
	}
	c->stop = 0;
	if (prepare(c, err)) {
		free(c->threads);
		c->threads = NULL;
		free_runs(c); /* closes the agents' connections: nothing was asked of them yet */
		return -1;
	}
	c->started_at = xp_now();
	c->nthreads = 0;
	for (unsigned g = 0; g < n; g++) {
		c->targs[g] = (struct otg_targ){ c, g };
		if (pthread_create(&c->threads[g], NULL, otg_run_thread, &c->targs[g])) {
			int e = errno;
			c->stop = 1;
			c->have_thread = c->nthreads > 0;
			join_traffic(c);
			free(c->threads);
			c->threads = NULL;
			free_runs(c);
			return otg_fail(err, 500, "cannot start the traffic's threads: %s", strerror(e));
		}
		c->nthreads++;
	}
	c->have_thread = true;
	c->running = true;
	/* Until every engine is about to send (an agent: it accepted), or a test ended (it could not start). */
	while (!all_started(c))
		pthread_cond_wait(&c->cv, &c->mu);
	int f = first_failed(c);
	if (f >= 0) {
		char why[sizeof(c->runs[0].error)];
		snprintf(why, sizeof(why), "%s", c->runs[f].error);
		c->stop = 1; /* the others stop: a start that fails leaves nothing started */
		join_traffic(c);
		/* A port the test could not use is the config's fault as far as the caller can tell: 400. */
		return otg_fail(err, 400, "start: %s", why);
	}
	return 0;
}

static int stop(struct xp_otg *c)
{
	c->stop = 1;
	join_traffic(c);
	return 0;
}

/* flow_names: none or every configured flow (they run as one test per sending port). */
static int check_names(struct xp_otg *c, struct json_object *ft, struct xp_otg_err *err)
{
	struct json_object *names;
	if (!json_object_object_get_ex(ft, "flow_names", &names))
		return 0;
	if (!json_object_is_type(names, json_type_array))
		return otg_fail(err, 400, "traffic.flow_transmit.flow_names: not an array");
	size_t n = json_object_array_length(names);
	for (size_t i = 0; i < n; i++) {
		const char *s = json_object_get_string(json_object_array_get_idx(names, i));
		unsigned k;
		for (k = 0; k < c->plan.nflows && strcmp(c->plan.flows[k].name, s ? s : ""); k++)
			;
		if (k == c->plan.nflows)
			return otg_fail(err, 400, "traffic.flow_transmit.flow_names[%zu]: no flow %s", i, s ? s : "");
	}
	if (n && n < c->plan.nflows)
		return otg_fail(err, 400, "traffic.flow_transmit.flow_names: the flows start and stop together (one test "
				"per sending port): give none or all %u", c->plan.nflows);
	return 0;
}

int xp_otg_set_state(struct xp_otg *c, struct json_object *state, struct json_object **warnings,
		     struct xp_otg_err *err)
{
	struct json_object *v, *tr, *ft;
	if (warnings)
		*warnings = NULL;
	if (!state || !json_object_is_type(state, json_type_object))
		return otg_fail(err, 400, "control state: not a JSON object");
	if (!json_object_object_get_ex(state, "choice", &v) || strcmp(json_object_get_string(v), "traffic"))
		return otg_fail(err, 400, "choice: %s is not supported (only traffic)",
				v ? json_object_get_string(v) : "missing");
	if (!json_object_object_get_ex(state, "traffic", &tr) || !json_object_is_type(tr, json_type_object))
		return otg_fail(err, 400, "traffic: missing");
	if (!json_object_object_get_ex(tr, "choice", &v) || strcmp(json_object_get_string(v), "flow_transmit"))
		return otg_fail(err, 400, "traffic.choice: only flow_transmit");
	if (!json_object_object_get_ex(tr, "flow_transmit", &ft) || !json_object_is_type(ft, json_type_object))
		return otg_fail(err, 400, "traffic.flow_transmit: missing");
	json_object_object_foreach(ft, key, val) {
		(void)val;
		if (strcmp(key, "state") && strcmp(key, "flow_names"))
			return otg_fail(err, 400, "traffic.flow_transmit.%s: not supported", key);
	}
	if (!json_object_object_get_ex(ft, "state", &v) || !json_object_is_type(v, json_type_string))
		return otg_fail(err, 400, "traffic.flow_transmit.state: missing (start or stop)");
	const char *st = json_object_get_string(v);
	int rc;
	pthread_mutex_lock(&c->mu);
	if (check_names(c, ft, err))
		rc = -1;
	else if (!strcmp(st, "start"))
		rc = start(c, err);
	else if (!strcmp(st, "stop"))
		rc = stop(c);
	else if (!strcmp(st, "pause") || !strcmp(st, "resume"))
		rc = otg_fail(err, 400, "traffic.flow_transmit.state: %s is not supported (the engines cannot pause a "
			      "test): stop and start", st);
	else
		rc = otg_fail(err, 400, "traffic.flow_transmit.state: %s is not start, stop, pause or resume", st);
	pthread_mutex_unlock(&c->mu);
	if (!rc && warnings)
		*warnings = no_warnings();
	return rc;
}

struct json_object *xp_otg_metrics(struct xp_otg *c, struct json_object *req, struct xp_otg_err *err)
{
	pthread_mutex_lock(&c->mu);
	struct json_object *r = otg_metrics(c, req, err);
	pthread_mutex_unlock(&c->mu);
	return r;
}

bool xp_otg_wait_stopped(struct xp_otg *c, double timeout_s)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	double until = (double)ts.tv_sec + ts.tv_nsec / 1e9 + timeout_s;
	ts.tv_sec = (time_t)until;
	ts.tv_nsec = (long)((until - (double)ts.tv_sec) * 1e9);
	pthread_mutex_lock(&c->mu);
	while (c->runs && !all_ended(c))
		if (pthread_cond_timedwait(&c->cv, &c->mu, &ts) == ETIMEDOUT)
			break;
	bool done = !c->runs || all_ended(c);
	if (done && c->running)
		join_traffic(c);
	pthread_mutex_unlock(&c->mu);
	return done;
}
