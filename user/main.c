/* xdpperf: network benchmark with XDP counters and AF_XDP senders. */
#include <stdio.h>

#include "cli/opts.h"
#include "client/client.h"
#include "probe/probe.h"
#include "server/server.h"

int main(int argc, char **argv)
{
	struct xp_opts o;
	char err[512] = "";

	int r = xp_opts_parse(argc, argv, &o, err, sizeof(err));
	if (r == 1)
		return 0;
	if (r) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (o.role == XP_ROLE_PROBE)
		return xp_probe_run(&o);
	return o.role == XP_ROLE_SERVER ? xp_server_run(&o) : xp_client_run(&o);
}
