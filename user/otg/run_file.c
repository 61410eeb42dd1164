/*
 * `xdpperf --config FILE.json` (otg/run_file.h): the same calls an API
 * client makes, in the order a snappi script makes them: set_config, the
 * ControlState that starts every flow, wait until every flow stopped (its
 * frames or its time ran out), then the flow and port metrics. SIGINT or
 * SIGTERM stops the traffic early; the figures then say so on their first
 * line, and so does a port whose agent went away.
 */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "otg/run_file.h"
#include "spec/spec.h" /* XP_EXIT_* */
#include "util/units.h"

/* A ControlState (or MetricsRequest) as snappi sends it: {"choice": X, X: {KEY: VAL...}}. */
static struct json_object *state_body(const char *state)
{
	return json_tokener_parse(strcmp(state, "start") ?
		"{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\",\"flow_transmit\":{\"state\":\"stop\"}}}" :
		"{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\",\"flow_transmit\":{\"state\":\"start\"}}}");
}

static struct json_object *metrics(struct xp_otg *c, const char *choice, struct xp_otg_err *e)
{
	struct json_object *req = json_tokener_parse(strcmp(choice, "flow") ? "{\"choice\":\"port\",\"port\":{\"port_names\":[]}}"
									     : "{\"choice\":\"flow\",\"flow\":{\"flow_names\":[]}}");
	struct json_object *r = req ? xp_otg_metrics(c, req, e) : NULL;
	json_object_put(req);
	return r;
}

static const char *s_of(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
												 : NULL;
}

static double d_of(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) ? json_object_get_double(v) : NAN;
}

static unsigned long long u_of(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) ? (unsigned long long)json_object_get_uint64(v) : 0;
}

static struct json_object *list_of(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_array) ? v : NULL;
}

/* What went wrong, for the first line: a port whose agent is not up, a flow still sending. */
static void problems(struct json_object *fm, struct json_object *pm, int sig, char *buf, size_t len)
{
	buf[0] = '\0';
	if (sig)
		snprintf(buf, len, "stopped by %s before the flows ended: the figures are those up to the stop",
			 sig == SIGINT ? "SIGINT" : "SIGTERM");
	struct json_object *ports = list_of(pm, "port_metrics");
	for (size_t i = 0; !buf[0] && ports && i < json_object_array_length(ports); i++) {
		struct json_object *p = json_object_array_get_idx(ports, i);
		const char *link = s_of(p, "link");
		if (link && strcmp(link, "up"))
			snprintf(buf, len, "port %s (%s) is %s: its figures stop where its agent stopped",
				 s_of(p, "name") ? s_of(p, "name") : "?", s_of(p, "location") ? s_of(p, "location") : "?",
				 link);
	}
	struct json_object *flows = list_of(fm, "flow_metrics");
	for (size_t i = 0; !buf[0] && flows && i < json_object_array_length(flows); i++) {
		struct json_object *f = json_object_array_get_idx(flows, i);
		const char *t = s_of(f, "transmit");
		if (t && strcmp(t, "stopped"))
			snprintf(buf, len, "flow %s is still %s", s_of(f, "name") ? s_of(f, "name") : "?", t);
	}
}

static void print_text(const char *path, struct json_object *fm, struct json_object *pm, const char *bad)
{
	char a[24], b[24], c[24];
	struct json_object *flows = list_of(fm, "flow_metrics"), *ports = list_of(pm, "port_metrics");
	size_t nf = flows ? json_object_array_length(flows) : 0;
	if (bad[0])
		printf("FAILED: %s\n", bad);
	printf("OTG config %s: %zu flow%s\n", path, nf, nf == 1 ? "" : "s");
	printf("  %-20s %-13s %12s %12s %12s %9s %10s %10s %10s\n", "flow", "ports", "sent", "received", "lost",
	       "loss", "min", "avg", "max");
	for (size_t i = 0; i < nf; i++) {
		struct json_object *f = json_object_array_get_idx(flows, i), *lat = NULL;
		char pp[64];
		unsigned long long tx = u_of(f, "frames_tx"), rx = u_of(f, "frames_rx");
		snprintf(pp, sizeof(pp), "%s->%s", s_of(f, "port_tx") ? s_of(f, "port_tx") : "?",
			 s_of(f, "port_rx") ? s_of(f, "port_rx") : "?");
		json_object_object_get_ex(f, "latency", &lat);
		double loss = d_of(f, "loss");
		char ls[24];
		if (isnan(loss))
			snprintf(ls, sizeof(ls), "-");
		else
			snprintf(ls, sizeof(ls), "%.3f%%", loss);
		printf("  %-20.20s %-13.13s %12llu %12llu %12llu %9s %10s %10s %10s\n", s_of(f, "name") ? s_of(f, "name") : "?",
		       pp, tx, rx, tx > rx ? tx - rx : 0, ls, xp_fmt_ns(lat ? d_of(lat, "minimum_ns") : NAN, a, sizeof(a)),
		       xp_fmt_ns(lat ? d_of(lat, "average_ns") : NAN, b, sizeof(b)),
		       xp_fmt_ns(lat ? d_of(lat, "maximum_ns") : NAN, c, sizeof(c)));
	}
	size_t np = ports ? json_object_array_length(ports) : 0;
	if (np)
		printf("  %-20s %-29s %-5s %12s %12s\n", "port", "location", "link", "frames sent", "received");
	for (size_t i = 0; i < np; i++) {
		struct json_object *p = json_object_array_get_idx(ports, i);
		printf("  %-20.20s %-29.29s %-5.5s %12llu %12llu\n", s_of(p, "name") ? s_of(p, "name") : "?",
		       s_of(p, "location") ? s_of(p, "location") : "-", s_of(p, "link") ? s_of(p, "link") : "-",
		       u_of(p, "frames_tx"), u_of(p, "frames_rx"));
	}
}

/* A refusal: one line on stderr; with -J also OTG's Error object on stdout. */
static int refuse(bool json, int code, const char *kind, const char *what, const char *msg)
{
	fprintf(stderr, "xdpperf: --config %s: %s\n", what, msg);
	if (json) {
		struct json_object *e = json_object_new_object(), *a = json_object_new_array();
		json_object_object_add(e, "code", json_object_new_int(code));
		json_object_object_add(e, "kind", json_object_new_string(kind));
		json_object_array_add(a, json_object_new_string(msg));
		json_object_object_add(e, "errors", a);
		printf("%s\n", json_object_to_json_string_ext(e, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(e);
	}
	return code == 400 ? XP_EXIT_USAGE : XP_EXIT_RUNTIME;
}

static int refuse_ctl(bool json, const char *what, const struct xp_otg_err *e)
{
	int code = e->http ? e->http : 500;
	return refuse(json, code, e->kind ? e->kind : code >= 500 ? "internal" : "validation", what, e->msg);
}

/* Waits for the flows to stop, or for SIGINT/SIGTERM (then stops them): the signal taken, or 0. */
static int wait_flows(struct xp_otg *c, const sigset_t *set, struct xp_otg_err *e, int *stop_failed)
{
	const struct timespec now = { 0, 0 };
	while (!xp_otg_wait_stopped(c, 0.2)) {
		int sig = sigtimedwait(set, NULL, &now);
		if (sig <= 0)
			continue;
		struct json_object *st = state_body("stop"), *w = NULL;
		*stop_failed = !st || xp_otg_set_state(c, st, &w, e);
		json_object_put(st);
		json_object_put(w);
		return sig;
	}
	return 0;
}

int xp_otg_run_file(const struct xp_otg_opts *co, const char *path, bool json)
{
	struct xp_otg_err e = { 0 };
	if (access(path, R_OK)) {
		char msg[256];
		snprintf(msg, sizeof(msg), "cannot read it: %s", strerror(errno));
		return refuse(json, 400, "validation", path, msg);
	}
	struct json_object *cfg = json_object_from_file(path);
	if (!cfg) {
		char msg[512];
		const char *why = json_util_get_last_err();
		/* json-c's word for a document cut short is its tokener's state, "continue". */
		snprintf(msg, sizeof(msg), "not a JSON file: %s",
			 !why ? "unreadable" : strstr(why, "failed: continue") ? "it ends early" : why);
		msg[strcspn(msg, "\n")] = '\0';
		return refuse(json, 400, "validation", path, msg);
	}
	/* SIGINT and SIGTERM blocked before the controller's threads start: only wait_flows takes them. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);
	int r = XP_EXIT_OK, sig = 0, stop_failed = 0;
	struct json_object *w = NULL, *st = NULL, *fm = NULL, *pm = NULL;
	struct xp_otg *c = xp_otg_new(co);
	if (!c) {
		char msg[256];
		snprintf(msg, sizeof(msg), "cannot set up the controller: %s", strerror(errno));
		r = refuse(json, 500, "internal", path, msg);
		goto out;
	}
	if (xp_otg_set_config(c, cfg, &w, &e)) {
		r = refuse_ctl(json, path, &e);
		goto out;
	}
	json_object_put(w);
	w = NULL;
	st = state_body("start");
	if (!st || xp_otg_set_state(c, st, &w, &e)) {
		r = st ? refuse_ctl(json, path, &e) : refuse(json, 500, "internal", path, "out of memory");
		goto out;
	}
	sig = wait_flows(c, &set, &e, &stop_failed);
	if (stop_failed) {
		r = refuse_ctl(json, path, &e);
		goto out;
	}
	if (!(fm = metrics(c, "flow", &e)) || !(pm = metrics(c, "port", &e))) {
		r = refuse_ctl(json, path, &e);
		goto out;
	}
	char bad[512];
	problems(fm, pm, sig, bad, sizeof(bad));
	if (json)
		printf("%s\n", json_object_to_json_string_ext(fm, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	else
		print_text(path, fm, pm, bad);
	if (bad[0]) {
		if (json)
			fprintf(stderr, "xdpperf: --config %s: %s\n", path, bad);
		r = XP_EXIT_RUNTIME;
	}
out:
	json_object_put(fm);
	json_object_put(pm);
	json_object_put(st);
	json_object_put(w);
	json_object_put(cfg);
	xp_otg_free(c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}
