/*
 * livebench: the XDP live-frames engine against a veth peer in another
 * network namespace; prints what the peer's rx_packets counter saw each
 * second. A measuring aid, not a test; not built by make:
 *
 *   cc -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf -Ibuild \
 *      -o build/livebench tests/tools/livebench.c build/libxdpperf.a \
 *      -lxdp -lbpf -lelf -lz -ljson-c -lmnl -lpthread -lm
 *   ip netns exec NS_A build/livebench [-q threads] [-r pps] [-l bytes] [-t secs] [-b burst] [-6] [-u] \
 *      IF NS_B PEER_IF
 *
 * IF (in the current namespace) sends; PEER_IF in namespace NS_B (named, as
 * in /var/run/netns) receives and needs GRO on or an XDP program. With -r,
 * each line also gives the deviation of that second's count from the
 * target, and the end the worst one.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "timeutil.h"

extern const struct xp_engine_ops xp_engine_live;

/* rx_packets of ifname in the calling thread's namespace (netlink via
 * getifaddrs; sysfs would show the namespace it was mounted in). */
static int link_info(const char *ifname, uint64_t *rx, uint8_t mac[6])
{
	struct ifaddrs *ifa, *i;
	int r = -1;
	if (getifaddrs(&ifa))
		return -1;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_PACKET || strcmp(i->ifa_name, ifname))
			continue;
		if (rx && i->ifa_data)
			*rx = ((struct rtnl_link_stats *)i->ifa_data)->rx_packets;
		if (mac)
			memcpy(mac, ((struct sockaddr_ll *)i->ifa_addr)->sll_addr, 6);
		r = 0;
		break;
	}
	freeifaddrs(ifa);
	return r;
}

static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t, .tv_nsec = (long)((t - (time_t)t) * 1e9) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

int main(int argc, char **argv)
{
	unsigned q = 1, secs = 5, size = 64;
	double pps = 0;
	int v6 = 0, udp = 0, c;
	while ((c = getopt(argc, argv, "q:r:l:t:b:6u")) != -1) {
		switch (c) {
		case 'q': q = atoi(optarg); break;
		case 'r': pps = atof(optarg); break;
		case 'l': size = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		case 'b': setenv("XDPPERF_BURST", optarg, 1); break;
		case '6': v6 = 1; break;
		case 'u': udp = 1; break;
		default: return 2;
		}
	}
	if (argc - optind != 3) {
		fprintf(stderr, "usage: livebench [-q threads] [-r pps] [-l bytes] [-t secs] [-b burst] [-6] [-u] IF NS_B PEER_IF\n");
		return 2;
	}
	const char *ifname = argv[optind], *peer_ns = argv[optind + 1], *peer_if = argv[optind + 2];
	char path[256];
	snprintf(path, sizeof(path), "/var/run/netns/%s", peer_ns);
	int my_ns = open("/proc/self/ns/net", O_RDONLY), other_ns = open(path, O_RDONLY);
	if (my_ns < 0 || other_ns < 0) {
		fprintf(stderr, "livebench: cannot open the namespaces: %s\n", strerror(errno));
		return 1;
	}

	struct xp_engine_cfg cfg = { .sport_lo = 10000, .sport_hi = 59999, .dport_lo = 63000, .dport_hi = 63015,
				     .queues = q, .pps = pps, .max_seconds = secs + 1 };
	struct frame_spec *s = &cfg.tmpl;
	uint8_t peer_mac[6];
	uint64_t rx0;
	if (setns(other_ns, CLONE_NEWNET) || link_info(peer_if, &rx0, peer_mac) || setns(my_ns, CLONE_NEWNET) ||
	    link_info(ifname, NULL, s->src_mac)) {
		fprintf(stderr, "livebench: cannot find %s in %s or %s here\n", peer_if, peer_ns, ifname);
		return 1;
	}
	memcpy(s->dst_mac, peer_mac, 6);
	if (v6) {
		s->src.family = s->dst.family = AF_INET6;
		inet_pton(AF_INET6, "2001:2::1", &s->src.v6);
		inet_pton(AF_INET6, "2001:2::2", &s->dst.v6);
	} else {
		s->src.family = s->dst.family = AF_INET;
		inet_pton(AF_INET, "198.18.0.1", &s->src.v4);
		inet_pton(AF_INET, "198.18.0.2", &s->dst.v4);
	}
	s->l4_proto = udp ? IPPROTO_UDP : IPPROTO_TCP;
	s->tcp_flags = 0x18;
	s->seq = s->ack = 1;
	s->frame_size = size;
	cfg.ifindex = (int)if_nametoindex(ifname);
	snprintf(cfg.ifname, sizeof(cfg.ifname), "%s", ifname);

	char err[256];
	struct xp_engine *e;
	if (xp_engine_live.create(&cfg, &e, err, sizeof(err))) {
		fprintf(stderr, "livebench: %s\n", err);
		return 1;
	}
	setns(other_ns, CLONE_NEWNET);
	link_info(peer_if, &rx0, NULL);
	double t0 = xp_now();
	setns(my_ns, CLONE_NEWNET); /* the engine's threads inherit the namespace */
	if (xp_engine_live.start(e, err, sizeof(err))) {
		fprintf(stderr, "livebench: %s\n", err);
		xp_engine_live.destroy(e);
		return 1;
	}
	setns(other_ns, CLONE_NEWNET);
	printf("%u thread(s), %u-byte frames, %s/%s, target %s\n", q, size, udp ? "udp" : "tcp", v6 ? "IPv6" : "IPv4",
	       pps > 0 ? "paced" : "max");
	uint64_t prev = rx0, sent_prev = 0, total = 0;
	double worst = 0;
	for (unsigned i = 1; i <= secs; i++) {
		sleep_until(t0 + i);
		uint64_t rx;
		struct xp_engine_stats st;
		link_info(peer_if, &rx, NULL);
		xp_engine_live.read(e, &st);
		uint64_t d = (uint32_t)(rx - prev); /* rtnl_link_stats counters are 32-bit */
		prev = rx;
		total += d;
		printf("  %u s: received %10llu  sent %10llu", i, (unsigned long long)d,
		       (unsigned long long)(st.pkts - sent_prev));
		sent_prev = st.pkts;
		if (pps > 0) {
			double dev = (d - pps) / pps * 100;
			if (fabs(dev) > fabs(worst))
				worst = dev;
			printf("  %+7.3f %%", dev);
		}
		printf("\n");
	}
	xp_engine_live.stop(e);
	struct xp_engine_stats st;
	xp_engine_live.read(e, &st);
	printf("  mean %.3f Mpps received, engine sent %llu (errors %llu)", total / (double)secs / 1e6,
	       (unsigned long long)st.pkts, (unsigned long long)st.errors);
	if (pps > 0)
		printf(", worst second %+.3f %%", worst);
	printf("\n");
	xp_engine_live.destroy(e);
	return 0;
}
