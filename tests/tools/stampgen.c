/*
 * stampgen: the cost of the stamp, for scripts/bench.sh's `stamp` section.
 * Runs one of xdpperf's frame engines (live or xsk, the same code the client
 * drives, from libxdpperf.a) unpaced for SECS seconds, with the stamp of
 * bpf/lib/stamp.h on (every frame stamped and counted into its send
 * interval, as in a test) or off (ival 0: the same build, frames as the
 * template), so the two can be compared side by side:
 *
 *   build/tests/tools/stampgen -i IFNAME -s SRCMAC -d DSTMAC -S SRCIP -D DSTIP
 *                              [-e live|xsk] [-l SIZE] [-q QUEUES] [-t SECS] on|off
 *
 * Frames: TCP ACK|PSH, SIZE bytes on the wire (default 64: the stamp goes
 * into the IPv4 ID and the 6 payload bytes), ports 10000-59999 ->
 * 63000-63015 like xdpperf's defaults. Prints one line: "sent=N seconds=S
 * pps=X stamped=N" (the engine's own counts; the bench's figure is the
 * receiving interface's counter). Exit status: 0 ok, 1 runtime error, 2 usage.
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>

#include "bpf/lib/stamp.h"
#include "engine/engine.h"
#include "util/addr.h"
#include "util/time.h"

static int usage(const char *why)
{
	fprintf(stderr, "stampgen: %s (usage: stampgen -i IFNAME -s SRCMAC -d DSTMAC -S SRCIP -D DSTIP "
		"[-e live|xsk] [-l SIZE] [-q QUEUES] [-t SECS] on|off)\n", why);
	return 2;
}

static int parse_mac(const char *s, uint8_t m[6])
{
	unsigned v[6];

	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6)
		return -1;
	for (int i = 0; i < 6; i++) {
		if (v[i] > 255)
			return -1;
		m[i] = (uint8_t)v[i];
	}
	return 0;
}

static uint64_t mono_ticks(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

int main(int argc, char **argv)
{
	struct xp_engine_cfg c;
	struct frame_spec *t = &c.frames.tmpl;
	const struct xp_engine_ops *ops = &xp_engine_live;
	const char *ifname = NULL;
	double secs = 5;
	int o, have = 0;

	memset(&c, 0, sizeof(c));
	t->frame_size = 64;
	c.frames.queues = 1;
	while ((o = getopt(argc, argv, "i:s:d:S:D:e:l:q:t:")) != -1) {
		switch (o) {
		case 'i': ifname = optarg; break;
		case 's': if (parse_mac(optarg, t->src_mac)) return usage("bad -s MAC"); have |= 1; break;
		case 'd': if (parse_mac(optarg, t->dst_mac)) return usage("bad -d MAC"); have |= 2; break;
		case 'S': if (xp_addr_parse(optarg, &t->src)) return usage("bad -S address"); have |= 4; break;
		case 'D': if (xp_addr_parse(optarg, &t->dst)) return usage("bad -D address"); have |= 8; break;
		case 'e':
			if (!strcmp(optarg, "live"))
				ops = &xp_engine_live;
			else if (!strcmp(optarg, "xsk"))
				ops = &xp_engine_xsk;
			else
				return usage("-e takes live or xsk");
			break;
		case 'l': t->frame_size = strtoul(optarg, NULL, 10); break;
		case 'q': c.frames.queues = (unsigned)strtoul(optarg, NULL, 10); break;
		case 't': secs = strtod(optarg, NULL); break;
		default: return usage("unknown option");
		}
	}
	if (!ifname || have != 15 || optind != argc - 1)
		return usage("-i, -s, -d, -S, -D and on|off are required");
	if (strcmp(argv[optind], "on") && strcmp(argv[optind], "off"))
		return usage("the last argument is on or off");
	if (secs <= 0 || secs > 600 || c.frames.queues < 1 || c.frames.queues > 64)
		return usage("-t takes 0..600 s, -q 1..64");
	bool on = !strcmp(argv[optind], "on");

	c.kind = XP_TEST_STREAM;
	snprintf(c.ifname, sizeof(c.ifname), "%s", ifname);
	c.ifindex = (int)if_nametoindex(ifname);
	if (!c.ifindex) {
		fprintf(stderr, "stampgen: no interface %s here\n", ifname);
		return 1;
	}
	c.sport_lo = 10000;
	c.sport_hi = 59999;
	c.dport_lo = 63000;
	c.dport_hi = 63015;
	t->l4_proto = IPPROTO_TCP;
	t->tcp_flags = 0x18; /* ACK|PSH */
	t->seq = 1;
	t->ack = 1;
	t->sport = c.sport_lo;
	t->dport = c.dport_lo;
	c.max_seconds = secs + 5; /* a hard stop should the timer below fail */
	/* On: one send interval longer than the run, so that the bins must
	 * hold exactly every frame sent (stamped == sent checks the stamps
	 * really were on). Off: ival 0, no stamp, no bins. */
	c.frames.stamp.ival = on ? (uint64_t)((secs + 10) * 1e9) >> XP_STAMP_TICK_SHIFT : 0;

	struct xp_engine *e;
	struct xp_engine_stats st;
	char err[256] = "";
	if (ops->create(&c, &e, err, sizeof(err))) {
		fprintf(stderr, "stampgen: %s engine: %s\n", ops->name, err);
		return 1;
	}
	uint64_t t0 = mono_ticks();
	ops->set_t0(e, t0);
	double start = xp_now();
	if (ops->start(e, err, sizeof(err))) {
		fprintf(stderr, "stampgen: %s engine: %s\n", ops->name, err);
		ops->destroy(e);
		return 1;
	}
	xp_sleep(secs);
	ops->stop(e);
	double took = xp_now() - start;
	ops->read(e, &st);
	uint64_t stamped = 0;
	int r = ops->sent_in(e, 0, &stamped);
	if (on && r)
		fprintf(stderr, "stampgen: sent_in: %s\n", strerror(-r));
	ops->destroy(e);
	printf("sent=%llu seconds=%.3f pps=%.0f stamped=%llu\n", (unsigned long long)st.tx.pkts, took,
	       st.tx.pkts / took, (unsigned long long)stamped);
	if (st.tx.errors) {
		fprintf(stderr, "stampgen: %llu send errors\n", (unsigned long long)st.tx.errors);
		return 1;
	}
	return 0;
}
