/*
 * otgdrive: the OTG controller (user/otg/otg.h) driven as a snappi script
 * drives it, without HTTP, for the e2e tests (tests/e2e/107_otg_agents.sh):
 *
 *   otgdrive CONFIG.json [--auth-key FILE] [--stop-after SECS] [--timeout SECS] [--metrics-during SECS]
 *
 * set_config, start, then either wait until every flow stopped (--timeout,
 * default 60 s) or stop after SECS; prints one JSON object on stdout:
 * {"during": flow metrics SECS into the test (with --metrics-during),
 *  "flow": the flow metrics at the end, "port": the port metrics at the end}.
 * A refusal: the Error object on stdout, exit 1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "otg/otg.h"
#include "util/process.h"

static int fail(const struct xp_otg_err *e)
{
	struct json_object *o = json_object_new_object(), *a = json_object_new_array();
	json_object_object_add(o, "code", json_object_new_int(e->http));
	json_object_object_add(o, "kind", json_object_new_string(e->kind ? e->kind : "internal"));
	json_object_array_add(a, json_object_new_string(e->msg));
	json_object_object_add(o, "errors", a);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return 1;
}

static struct json_object *metrics(struct xp_otg *c, const char *choice, struct xp_otg_err *e)
{
	struct json_object *req = json_object_new_object();
	json_object_object_add(req, "choice", json_object_new_string(choice));
	struct json_object *m = xp_otg_metrics(c, req, e);
	json_object_put(req);
	return m;
}

static struct json_object *state(const char *s)
{
	char buf[200];
	snprintf(buf, sizeof(buf), "{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\","
		 "\"flow_transmit\":{\"state\":\"%s\"}}}", s);
	return json_tokener_parse(buf);
}

int main(int argc, char **argv)
{
	struct xp_otg_opts o = { 0 };
	double stop_after = 0, timeout = 60, during = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: otgdrive CONFIG.json [--auth-key FILE] [--stop-after S] [--timeout S] "
			"[--metrics-during S]\n");
		return 2;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--auth-key"))
			o.auth_key = argv[i + 1];
		else if (!strcmp(argv[i], "--stop-after"))
			stop_after = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--timeout"))
			timeout = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--metrics-during"))
			during = atof(argv[i + 1]);
		else {
			fprintf(stderr, "otgdrive: unknown %s\n", argv[i]);
			return 2;
		}
	}
	xp_install_signals();
	struct json_object *cfg = json_object_from_file(argv[1]);
	if (!cfg) {
		fprintf(stderr, "otgdrive: cannot read %s\n", argv[1]);
		return 2;
	}
	struct xp_otg *c = xp_otg_new(&o);
	struct xp_otg_err e = { 0 };
	struct json_object *w = NULL, *out = json_object_new_object(), *st = state("start");
	if (xp_otg_set_config(c, cfg, &w, &e) || (json_object_put(w), xp_otg_set_state(c, st, &w, &e))) {
		int rc = fail(&e);
		xp_otg_free(c);
		return rc;
	}
	json_object_put(w);
	json_object_put(st);
	if (during > 0) {
		usleep((useconds_t)(during * 1e6));
		json_object_object_add(out, "during", metrics(c, "flow", &e));
		/* A config while traffic runs: the 409 a snappi script would get. */
		struct xp_otg_err e2 = { 0 };
		int rc = xp_otg_set_config(c, cfg, NULL, &e2);
		json_object_object_add(out, "config_while_running", json_object_new_int(rc ? e2.http : 200));
	}
	if (stop_after > 0) {
		usleep((useconds_t)((stop_after - during > 0 ? stop_after - during : 0) * 1e6));
		st = state("stop");
		if (xp_otg_set_state(c, st, NULL, &e))
			return fail(&e);
		json_object_put(st);
	} else if (!xp_otg_wait_stopped(c, timeout)) {
		fprintf(stderr, "otgdrive: the flows did not stop in %g s\n", timeout);
	}
	json_object_object_add(out, "flow", metrics(c, "flow", &e));
	json_object_object_add(out, "port", metrics(c, "port", &e));
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN));
	json_object_put(out);
	json_object_put(cfg);
	xp_otg_free(c);
	return 0;
}
