/*
 * --bidir's sender on the server's side (proto/messages.h, xp_reverse_req):
 * the server starts its own binary as `xdpperf --reverse-trial ADDR [KEYFILE]` with
 * the client's request on stdin, and this runs it as one ordinary trial
 * (xp_client_trial) against the xdpperf server the client runs on its side
 * (ADDR: the address the request came from; the port: the request's). The
 * figures go back as one JSON object on stdout, for the server to relay.
 *
 * Why a child and not a thread of the server: the server is one event loop
 * that nothing may hold (server.c), a trial blocks for its whole length, and
 * a trial's engine and signal state are per process. A child is also easy
 * to bound: the server kills it at the trial's end + a margin, or when the
 * client goes away, and it dies with the server (PR_SET_PDEATHSIG). Every
 * XDP attach it makes is a bpf_link (the engines' own), gone when it exits.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "cli/opts.h"
#include "client/client.h"
#include "proto/channel.h"
#include "proto/messages.h"
#include "util/process.h"

static int reply(const struct xp_reverse_res *r)
{
	struct json_object *o = xp_reverse_res_to_json(r);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
	return r->rc;
}

static int fail(struct xp_reverse_res *r, int rc, const char *msg)
{
	r->rc = rc;
	snprintf(r->error, sizeof(r->error), "%s", msg);
	return reply(r);
}

int xp_reverse_child(const char *host, const char *key_file)
{
	struct xp_reverse_res res;
	memset(&res, 0, sizeof(res));
	/* Gone with the server, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;
	static char in[XP_CTRL_MAX_MSG];
	size_t n = fread(in, 1, sizeof(in) - 1, stdin);
	in[n] = '\0';
	struct json_object *m = json_tokener_parse(in);
	struct xp_reverse_req q;
	char err[512];
	if (xp_reverse_req_from_json(m, &q, err, sizeof(err))) {
		json_object_put(m);
		return fail(&res, 2, err);
	}
	json_object_put(m);
	/* The test as a user would type it: the same option rules. */
	char port[8], len[16];
	snprintf(port, sizeof(port), "%u", q.port);
	snprintf(len, sizeof(len), "%u", q.frame_size);
	char *argv[16];
	int argc = 0;
	argv[argc++] = "xdpperf";
	argv[argc++] = "-c";
	argv[argc++] = (char *)host;
	argv[argc++] = "--control-port";
	argv[argc++] = port;
	argv[argc++] = "--engine";
	argv[argc++] = (char *)q.engine;
	argv[argc++] = q.family == AF_INET6 ? "-6" : "-4";
	argv[argc++] = "-l";
	argv[argc++] = q.mix[0] ? q.mix : len;
	if (q.udp)
		argv[argc++] = "-u";
	if (q.no_stamps)
		argv[argc++] = "--no-stamps";
	if (key_file) {
		/* The server's --auth-key: the client's server (started with the client's key) takes only a sender that has it. */
		argv[argc++] = "--auth-key";
		argv[argc++] = (char *)key_file;
	}
	argv[argc] = NULL;
	static struct xp_opts o; /* megabytes with the spec's flows: not on the stack */
	int r = xp_opts_parse(argc, argv, &o, err, sizeof(err));
	if (r)
		return fail(&res, 2, r == 1 ? "the reverse trial's options printed help" : err);
	if (xp_check_privileges(err, sizeof(err)))
		return fail(&res, 1, err);
	xp_install_signals();
	struct xp_trial_req req = { .pps = q.pps, .frame_len = o.spec.traffic[0].frame_size, .mix = o.spec.traffic[0].mix.n ? &o.spec.traffic[0].mix : NULL,
				    .burst = q.burst, .seconds = q.seconds, .settle_s = 0 };
	static struct xp_trial_out out;
	struct xp_run_opts ro = { .debug = o.debug };
	xp_client_trial(&o.spec, &ro, &req, &out);
	if (out.rc)
		return fail(&res, out.rc, out.error);
	res.sent = out.sent;
	res.received = out.received;
	res.seconds = out.seconds;
	res.target_pps = out.target_pps;
	res.offered_pps = out.offered_pps;
	res.short_of_target = out.short_of_target;
	snprintf(res.held_back_by, sizeof(res.held_back_by), "%s", out.held_back_by ? out.held_back_by : "");
	res.kernel_sleeps = out.kernel_sleeps;
	res.max_catchup = out.max_catchup;
	res.lat_known = out.lat_known;
	res.lat_min_us = out.lat_min_us;
	res.lat_mean_us = out.lat_mean_us;
	res.lat_max_us = out.lat_max_us;
	res.lat_p50_us = out.lat_p50_us;
	res.lat_p99_us = out.lat_p99_us;
	res.lat_p999_us = out.lat_p999_us;
	res.lat_timed = out.lat_timed;
	res.lat_hist = out.lat_hist;
	snprintf(res.lat_why, sizeof(res.lat_why), "%s", out.lat_why);
	return reply(&res);
}
