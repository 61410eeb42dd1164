/*
 * flowxsk: the AF_XDP engine sending flows, driven directly (issue 26), for
 * tests/e2e/103_flows_capture.sh until the command line names flows.
 *
 *   flowxsk IFNAME DSTMAC SRC DST PORT QUEUES PPS FRAMES0 FRAMES1
 *
 * Two UDP flows from SRC on IFNAME to next hop DSTMAC, each at PPS
 * frames/s (0: as fast as possible), FRAMES0 / FRAMES1 frames:
 *   flow 0: 128 bytes, destination DST + 0..99 (increment), destination
 *           port PORT + 0..9 (increment), source port random in
 *           20000..20999 (seed 11, 20 000 draws): period 20 000 frames;
 *   flow 1: 200 bytes, DSCP 46, DST:PORT from source port 30000.
 * Stamped (stream per flow and thread, frame/flow_streams.h). Prints per
 * flow "flow=I pkts=N bytes=N" (the engine's read_flows) and "tx pkts=N".
 * With FLOWXSK_ONE=1 in the environment the engine sends flow 1's frame as
 * one stream (nflows 0, today's path) until FRAMES0 + FRAMES1 went out: the
 * same engine's speed side by side ("rate_pps=" is frames over the time
 * from start to the last counted one).
 * Exit status: 0, 1 runtime error, 2 usage.
 */
#include <arpa/inet.h>
#include <linux/types.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/lib/stamp.h"
#include "engine/engine.h"
#include "frame/flow_pat.h"

static int mac_parse(const char *s, uint8_t m[6])
{
	unsigned v[6];
	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++)
		m[i] = (uint8_t)v[i];
	return 0;
}

static struct xp_engine_flow flows[2];
static struct xp_engine_cfg ec;

int main(int argc, char **argv)
{
	if (argc != 10) {
		fprintf(stderr, "usage: flowxsk IFNAME DSTMAC SRC DST PORT QUEUES PPS FRAMES0 FRAMES1\n");
		return 2;
	}
	struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP, .sport = 20000 };
	if (mac_parse(argv[2], h.dst_mac) || xp_addr_parse(argv[3], &h.src) || xp_addr_parse(argv[4], &h.dst) ||
	    h.src.family != AF_INET || h.dst.family != AF_INET) {
		fprintf(stderr, "flowxsk: bad MAC or IPv4 address\n");
		return 2;
	}
	h.dport = (uint16_t)atoi(argv[5]);
	unsigned queues = (unsigned)atoi(argv[6]);
	double pps = atof(argv[7]);
	snprintf(ec.ifname, sizeof(ec.ifname), "%s", argv[1]);
	ec.ifindex = (int)if_nametoindex(argv[1]);
	if (!ec.ifindex) {
		fprintf(stderr, "flowxsk: no interface %s\n", argv[1]);
		return 1;
	}
	/* flow 0 */
	xp_flow_pat_init(&flows[0].hdr, &h);
	struct xp_pattern *p = &flows[0].hdr.f[XP_FF_DST];
	*p = (struct xp_pattern){ .kind = XP_PAT_INCREMENT, .width = 32, .value = ntohl(h.dst.v4.s_addr), .step = 1,
				  .count = 100 };
	flows[0].hdr.f[XP_FF_DPORT] = (struct xp_pattern){ .kind = XP_PAT_INCREMENT, .width = 16, .value = h.dport,
							   .step = 1, .count = 10 };
	flows[0].hdr.f[XP_FF_SPORT] = (struct xp_pattern){ .kind = XP_PAT_RANDOM, .width = 16, .min = 20000,
							   .max = 20999, .seed = 11, .count = 20000 };
	flows[0].frame_size = 128;
	/* flow 1 */
	h.sport = 30000;
	h.dscp = 46;
	xp_flow_pat_init(&flows[1].hdr, &h);
	flows[1].frame_size = 200;
	for (int f = 0; f < 2; f++) {
		const char *err = NULL;
		if (xp_flow_pat_check(&flows[f].hdr, &err)) {
			fprintf(stderr, "flowxsk: flow %d: %s\n", f, err);
			return 2;
		}
		flows[f].pps = pps;
		flows[f].frames = strtoull(argv[8 + f], NULL, 10);
		flows[f].stamps = true;
	}
	/* The one-stream template must build too (the engine checks it): flow 1's frame. */
	ec.kind = XP_TEST_STREAM;
	ec.pps = 2 * pps;
	ec.max_seconds = 60;
	ec.frames.queues = queues;
	ec.frames.tmpl = (struct frame_spec){ .l4_proto = IPPROTO_UDP, .sport = 30000, .dport = h.dport,
					      .frame_size = 200, .src = h.src, .dst = h.dst };
	memcpy(ec.frames.tmpl.dst_mac, h.dst_mac, 6);
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ec.frames.stamp.t0 = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
	ec.frames.stamp.ival = 1000000000ull >> XP_STAMP_TICK_SHIFT;
	const char *one = getenv("FLOWXSK_ONE");
	if (!(one && *one == '1')) {
		ec.frames.flows = flows;
		ec.frames.nflows = 2;
	}
	const struct xp_engine_ops *ops;
	struct xp_engine *e;
	char err[256];
	if (xp_engine_open(XP_ENGINE_XSK, &ec, &ops, &e, err, sizeof(err))) {
		fprintf(stderr, "flowxsk: %s\n", err);
		return 1;
	}
	if (ops->start(e, err, sizeof(err))) {
		fprintf(stderr, "flowxsk: %s\n", err);
		ops->destroy(e);
		return 1;
	}
	struct xp_engine_stats st;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t want = flows[0].frames + flows[1].frames;
	for (int i = 0; i < 600; i++) { /* at most 60 s */
		usleep(100000);
		ops->read(e, &st);
		if (want && st.tx.pkts >= want)
			break;
	}
	ops->stop(e);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ops->read(e, &st);
	double el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
	uint64_t pk[2] = { 0 }, by[2] = { 0 };
	if (ec.frames.nflows)
		ops->read_flows(e, pk, by, 2);
	for (int f = 0; f < 2; f++)
		printf("flow=%d pkts=%llu bytes=%llu\n", f, (unsigned long long)pk[f], (unsigned long long)by[f]);
	printf("tx pkts=%llu bytes=%llu errors=%llu seconds=%.3f rate_pps=%.0f\n", (unsigned long long)st.tx.pkts,
	       (unsigned long long)st.tx.bytes, (unsigned long long)st.tx.errors, el, el > 0 ? (double)st.tx.pkts / el : 0);
	ops->destroy(e);
	return 0;
}
