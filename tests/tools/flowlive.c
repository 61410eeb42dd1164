/*
 * flowlive: flows sent by the live engine (XDP live frames, issue 26) before
 * the command line carries them, for tests/e2e/104_flows_live.sh:
 *
 *   flowlive IFNAME DSTMAC SRC DST PORT COUNT SIZE PPS FLOW...
 *
 * Creates the live engine (its real ops: create, start, read_flows, stop)
 * on IFNAME with one flow per FLOW (flowlab's syntax, tests/tools/flow_args.h:
 * u[/DSCP], q:VID[/DSCP], ad:SVID:CVID[/DSCP]), each COUNT frames of SIZE
 * bytes (FCS counted), UDP SRC:sport -> DST:PORT, flow i's source port
 * counting 40000 + 100 * i .. + 3 over its frames (a pattern of 4), stamped
 * (flow i is stream i: one thread). PPS is the sum of the flows' rates
 * (split evenly), 0 as fast as possible. Waits until every flow's frames
 * are out (at most 30 s), then prints per flow "flow=I sent=N bytes=N"
 * (the engine's read_flows) and "total pkts=N bytes=N" (its read).
 * PORT as tcp:PORT: TCP data segments (ACK|PSH) instead of UDP.
 * COUNT as Ns (e.g. 5s): no frame count, the flows run N seconds
 * (scripts/bench/flows.sh's runs).
 * Exit status: 0, 1 runtime error, 2 usage.
 */
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>

#include "bpf/lib/stamp.h"
#include "engine/engine.h"
#include "frame/flow_pat.h"
#include "util/time.h"
#include "util/values.h"

#include "flow_args.h"

#define MAX_FLOWS 64

static int usage(void)
{
	fprintf(stderr, "usage: flowlive IFNAME DSTMAC SRC DST [tcp:]PORT COUNT[s] SIZE PPS FLOW...\n"
			"  FLOW: u[/DSCP] | q:VID[/DSCP] | ad:SVID:CVID[/DSCP]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static struct xp_engine_flow flows[MAX_FLOWS];
	static struct xp_engine_cfg c;
	unsigned nflows = argc > 9 ? (unsigned)argc - 9 : 0, port, count, size;
	uint8_t dmac[6];
	char err[256];

	if (argc < 10 || nflows > MAX_FLOWS)
		return usage();
	bool tcp = !strncmp(argv[5], "tcp:", 4);
	port = (unsigned)atoi(argv[5] + (tcp ? 4 : 0));
	count = (unsigned)atoi(argv[6]);
	double secs = 0;
	if (argv[6][strlen(argv[6]) - 1] == 's') {
		secs = atof(argv[6]);
		count = secs > 0 && secs <= 600 ? 1 : 0;
	}
	size = (unsigned)atoi(argv[7]);
	double pps = atof(argv[8]);
	if (parse_mac(argv[2], dmac, err, sizeof(err)) || !port || port > 65535 || !count || size < 64 ||
	    size > 3000 || pps < 0)
		return usage();
	for (unsigned i = 0; i < nflows; i++) {
		struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP, .sport = (uint16_t)(40000 + 100 * i),
					 .dport = (uint16_t)port };
		const char *perr = NULL;

		if (tcp) {
			h.l4_proto = IPPROTO_TCP;
			h.tcp_flags = 0x18; /* ACK|PSH */
			h.seq = h.ack = 1;
			h.window = 65535;
		}
		int r = flow_arg_hdr(&h, argv[1], dmac, argv[3], argv[4], argv[9 + i]);
		if (r == -2) {
			perror("flowlive: SIOCGIFHWADDR");
			return 1;
		}
		if (r)
			return usage();
		xp_flow_pat_init(&flows[i].hdr, &h);
		struct xp_pattern *sp = &flows[i].hdr.f[XP_FF_SPORT];
		sp->kind = XP_PAT_INCREMENT;
		sp->step = 1;
		sp->count = 4;
		if (xp_flow_pat_check(&flows[i].hdr, &perr)) {
			fprintf(stderr, "flowlive: flow %u: %s\n", i, perr);
			return 2;
		}
		flows[i].frame_size = size;
		flows[i].pps = pps / nflows;
		flows[i].frames = secs > 0 ? 0 : count;
		flows[i].stamps = true;
	}
	c.kind = XP_TEST_STREAM;
	snprintf(c.ifname, sizeof(c.ifname), "%s", argv[1]);
	c.ifindex = (int)if_nametoindex(argv[1]);
	c.pps = pps;
	c.max_seconds = secs > 0 ? secs : 30;
	c.frames.queues = 1;
	c.frames.flows = flows;
	c.frames.nflows = nflows;
	c.frames.stamp.t0 = flow_arg_now_ticks();
	c.frames.stamp.ival = (250000000ull >> XP_STAMP_TICK_SHIFT) + 1;

	const struct xp_engine_ops *ops = &xp_engine_live;
	struct xp_engine *e = NULL;
	if (ops->create(&c, &e, err, sizeof(err)) || ops->start(e, err, sizeof(err))) {
		fprintf(stderr, "flowlive: %s\n", err);
		if (e)
			ops->destroy(e);
		return 1;
	}
	uint64_t pk[MAX_FLOWS], by[MAX_FLOWS], sum = 0;
	double until = xp_now() + (secs > 0 ? secs : 30);
	while (xp_now() < until) {
		ops->read_flows(e, pk, by, nflows);
		sum = 0;
		for (unsigned i = 0; i < nflows; i++)
			sum += pk[i];
		if (!secs && sum >= (uint64_t)count * nflows)
			break;
		xp_sleep(0.01);
	}
	ops->stop(e);
	struct xp_engine_stats st;
	ops->read(e, &st);
	ops->read_flows(e, pk, by, nflows);
	for (unsigned i = 0; i < nflows; i++)
		printf("flow=%u sent=%llu bytes=%llu\n", i, (unsigned long long)pk[i], (unsigned long long)by[i]);
	printf("total pkts=%llu bytes=%llu errors=%llu\n", (unsigned long long)st.tx.pkts,
	       (unsigned long long)st.tx.bytes, (unsigned long long)st.tx.errors);
	ops->destroy(e);
	return 0;
}
