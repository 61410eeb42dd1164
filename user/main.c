/* xdpperf: network benchmark with XDP counters and AF_XDP senders. */
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "cli/opts.h"
#include "client/client.h"
#include "rfc2544/rfc2544.h"
#include "connsearch/connsearch.h"
#include "otg/http.h"
#include "otg/run_file.h"
#include "probe/probe.h"
#include "report/metrics.h"
#include "server/server.h"

/*
 * With -J (or --json-stream), a usage error is a JSON object on stdout too, as
 * iperf3 does. The option may come after the one that failed, so argv is
 * looked at as well as what was parsed.
 */
static void usage_error_json(int argc, char **argv, const struct xp_opts *o, const char *err)
{
	bool json = o->json, stream = o->json_stream;
	for (int i = 1; i < argc; i++) {
		json |= !strcmp(argv[i], "-J") || !strcmp(argv[i], "--json");
		stream |= !strcmp(argv[i], "--json-stream");
	}
	if (!json && !stream)
		return;
	struct json_object *m = json_object_new_object();
	if (json) {
		json_object_object_add(m, "error", json_object_new_string(err));
	} else {
		json_object_object_add(m, "event", json_object_new_string("error"));
		json_object_object_add(m, "data", json_object_new_string(err));
	}
	printf("%s\n", json_object_to_json_string_ext(m, (json ? JSON_C_TO_STRING_PRETTY : JSON_C_TO_STRING_PLAIN) | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(m);
}

int main(int argc, char **argv)
{
	static struct xp_opts o; /* megabytes with the spec's flows: not on the stack */
	char err[512] = "";

	/* The server's child for --bidir (cli/reverse_child.c), never typed by a user. */
	if ((argc == 3 || argc == 4) && !strcmp(argv[1], XP_REVERSE_CHILD_ARG))
		return xp_reverse_child(argv[2], argc == 4 ? argv[3] : NULL); /* argv[3]: the server's --auth-key file */

	/* The server's child for an OTG controller's send request (cli/send_child.c), never typed by a user either. */
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], XP_SEND_CHILD_ARG))
		return xp_send_child(argc == 3 ? argv[2] : NULL); /* argv[2]: the server's --auth-key file */

	int r = xp_opts_parse(argc, argv, &o, err, sizeof(err));
	if (r == 1)
		return 0;
	if (r) {
		fprintf(stderr, "xdpperf: %s\n", err);
		usage_error_json(argc, argv, &o, err);
		return XP_EXIT_USAGE;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.role == XP_ROLE_PROBE)
		return xp_probe_run(o.spec.dev, o.debug, o.json);
	/* The OTG front ends (issue 27): one controller, its agents reached with the control port and key given. */
	if (o.role == XP_ROLE_OTG || o.role == XP_ROLE_CONFIG) {
		/* --metrics: the controller's sending runs are client tests: the client's tap gives their per-flow
		 * series, served from before the first config to the exit (otg/serve.c, otg/run_file.c). */
		if (o.metrics_port && (xp_metrics_open(&o.metrics_addr, o.metrics_port, err, sizeof(err)) ||
				       xp_metrics_run(err, sizeof(err)))) {
			fprintf(stderr, "xdpperf: %s\n", err);
			return XP_EXIT_RUNTIME;
		}
		if (o.metrics_port)
			xp_metrics_client_tap();
		struct xp_otg_opts co = { .auth_key = o.spec.auth_key[0] ? o.spec.auth_key : NULL,
					  .control_port = o.spec.control_port, .debug = o.debug,
					  .line_bps = o.spec.line_bps };
		r = o.role == XP_ROLE_OTG ? xp_otg_serve(&co, &o.otg.listen) : xp_otg_run_file(&co, o.otg.config, o.json);
		xp_metrics_stop();
		return r;
	}
	/* --metrics: bound now; served from here on by the client, by the server once it dropped its capabilities. */
	if (o.metrics_port && (xp_metrics_open(&o.metrics_addr, o.metrics_port, err, sizeof(err)) ||
			       (o.role == XP_ROLE_CLIENT && xp_metrics_run(err, sizeof(err))))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return XP_EXIT_RUNTIME;
	}
	if (o.metrics_port && o.role == XP_ROLE_CLIENT)
		xp_metrics_client_tap();
	/* The client's front ends: each runs the test o.spec, the suites as the base of their trials. */
	struct xp_run_opts ro = { .debug = o.debug };
	if (o.role == XP_ROLE_SERVER)
		r = xp_server_run(&o.srv);
	else if (o.rfc2544 || o.cs.mode) {
		/* The suites report into a sink as a test does: text or -J (--json-stream is a test's only). */
		struct xp_report rep;
		xp_report_init(&rep, o.json ? XP_REPORT_JSON : XP_REPORT_TEXT, stdout);
		r = o.rfc2544 ? xp_rfc2544_run(&o.spec, &o.rfc, &ro, &rep) : xp_connsearch_run(&o.spec, &o.cs, &ro, &rep);
		xp_report_free(&rep);
	}
	else {
		enum xp_report_format fmt = o.json ? XP_REPORT_JSON : o.json_stream ? XP_REPORT_JSON_STREAM : XP_REPORT_TEXT;
		r = xp_client_run(&o.spec, &ro, fmt, o.compare ? &o.compare_engine : NULL);
	}
	xp_metrics_stop();
	return r;
}
