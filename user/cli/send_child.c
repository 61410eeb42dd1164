/*
 * An OTG controller's sender on the agent's side (issue 27,
 * proto/send_msg.h): the server starts its own binary as `xdpperf
 * --send-test [KEYFILE]` with the controller's request on stdin (checked by
 * the server, read back here as strictly), and this runs it as one client
 * test toward the receiving agent the spec names, into a memory sink,
 * starting at the request's start time. Its figures (each flow's sent
 * count, the receiving agent's per-flow counts, the engine's start time on
 * this host's clock) go back as one JSON object on stdout, for the server
 * to relay. SIGINT (the controller's stop) ends the test early as Ctrl-C
 * does; the figures still come. Why a child: as --bidir's (reverse_child.c).
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
#include "proto/send_msg.h"
#include "util/process.h"

static int reply(const struct xp_send_res *r)
{
	struct json_object *o = xp_send_res_to_json(r);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(stdout);
	json_object_put(o);
	return r->rc;
}

int xp_send_child(const char *key_file)
{
	static struct xp_send_res res;
	static char in[XP_CTRL_MAX_MSG];
	char err[512];
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		return 1;
	size_t n = fread(in, 1, sizeof(in) - 1, stdin);
	in[n] = '\0';
	struct json_object *m = json_tokener_parse(in);
	struct xp_spec *sp = malloc(sizeof(*sp));
	uint64_t start_ns = 0;
	if (!sp || xp_send_req_from_json(m, sp, &start_ns, err, sizeof(err))) {
		json_object_put(m);
		res.rc = 2;
		snprintf(res.error, sizeof(res.error), "%.250s", sp ? err : "out of memory");
		free(sp);
		return reply(&res);
	}
	json_object_put(m);
	/* The agent's --auth-key answers the receiving agent's challenge (the agents share one key). */
	if (key_file)
		snprintf(sp->auth_key, sizeof(sp->auth_key), "%s", key_file);
	if (xp_check_privileges(err, sizeof(err))) {
		res.rc = 1;
		snprintf(res.error, sizeof(res.error), "%.250s", err);
		free(sp);
		return reply(&res);
	}
	xp_install_signals();
	struct xp_report rep;
	struct xp_summary sum;
	uint64_t started = 0;
	struct xp_run_opts ro = { .quiet = true, .start_ns = start_ns, .started_ns = &started };
	xp_report_init(&rep, XP_REPORT_MEMORY, NULL);
	memset(&sum, 0, sizeof(sum));
	res.rc = xp_client_test(sp, &ro, &rep, &sum);
	const char *why = rep.mem.error[0] ? rep.mem.error : xp_client_last_error();
	snprintf(res.error, sizeof(res.error), "%.250s", res.rc ? why : "");
	res.started_ns = started;
	res.interrupted = sum.interrupted;
	res.server_lost = sum.server_lost;
	res.lost_at = sum.server_lost_at;
	res.total = sum.total;
	res.nflows = rep.mem.nflows < XP_SEND_MAX_FLOWS ? rep.mem.nflows : XP_SEND_MAX_FLOWS;
	res.rx_known = res.nflows > 0;
	for (unsigned i = 0; i < res.nflows; i++) {
		res.flows[i] = rep.mem.flows[i];
		res.rx_known &= rep.mem.flows[i].rx_known;
	}
	xp_report_free(&rep);
	free(sp);
	return reply(&res);
}
