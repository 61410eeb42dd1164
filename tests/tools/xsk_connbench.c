/*
 * xsk_connbench: maximum SYN rate of the AF_XDP engine's connection test
 * (user/engine_xsk.c, kind XP_TEST_CONNECT) next to its 64-byte stream rate,
 * side by side in one run, on 1 and 2 queues. A measurement, not a test.
 * Not built by make:
 *
 *   cc -O2 -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf -Ibuild \
 *      -o build/tests/xsk_connbench tests/tools/xsk_connbench.c build/libxdpperf.a \
 *      -lxdp -lbpf -lelf -lz -ljson-c -lmnl -lpthread -lm
 *   build/tests/xsk_connbench [-t SECS] [-r ROUNDS]      (root)
 *
 * Topology, made and removed by the tool (also on SIGINT/SIGTERM):
 *
 *   netns xpxm-a:  xpxma0 (engine, 2 queues) <--veth--> xpxmb0 (XDP_DROP, native)
 *
 * The peer drops every frame in a two-instruction XDP program, so its stack
 * costs nothing; the peer's count is its rx_packets (veth counts frames its
 * XDP program saw there). Each line is one run of SECS seconds after 0.3 s
 * of warm-up: rates from the engine's completions and from the peer's count.
 * Rounds interleave the variants, since this shared 2-core machine's rates
 * swing by +-20 %: compare within a round.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "engine.h"
#include "timeutil.h"

#define NS     "xpxm-a"
#define DEV_TX "xpxma0"
#define DEV_RX "xpxmb0"

static void ns_remove(void)
{
	umount2("/var/run/netns/" NS, MNT_DETACH);
	unlink("/var/run/netns/" NS);
}

static void on_signal(int sig)
{
	ns_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void die(const char *msg)
{
	fprintf(stderr, "xsk_connbench: %s: %s\n", msg, strerror(errno));
	exit(1);
}

static void sh(const char *cmd)
{
	if (system(cmd) != 0) {
		fprintf(stderr, "xsk_connbench: failed: %s\n", cmd);
		exit(1);
	}
}

static void dev_mac(const char *dev, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
		die(dev);
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
}

/* rx_packets of dev in this namespace (netlink, through getifaddrs). */
static uint64_t rx_packets(const char *dev)
{
	struct ifaddrs *ifa, *i;
	uint64_t n = 0;

	if (getifaddrs(&ifa))
		die("getifaddrs");
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET && !strcmp(i->ifa_name, dev) &&
		    i->ifa_data)
			n = ((struct rtnl_link_stats *)i->ifa_data)->rx_packets;
	freeifaddrs(ifa);
	return n;
}

/* r0 = XDP_DROP; exit */
static void attach_drop(int ifindex)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xp_drop", "GPL", insns, 2, NULL);

	if (fd < 0)
		die("loading the XDP_DROP program");
	if (bpf_xdp_attach(ifindex, fd, XDP_FLAGS_DRV_MODE, NULL))
		die("attaching the XDP_DROP program (native)");
}

struct variant {
	const char *name;
	enum xp_test_kind kind;
	unsigned queues;
	unsigned nbind;
};

static struct xp_engine_cfg base;

static void run(const struct variant *v, double secs)
{
	const struct xp_engine_ops *ops = &xp_engine_xsk;
	struct xp_engine_cfg c = base;
	struct xp_engine_stats a, b;
	struct xp_engine *e = NULL;
	char err[256] = "";

	c.kind = v->kind;
	c.queues = v->queues;
	c.max_seconds = secs + 5;
	if (v->kind == XP_TEST_STREAM) {
		c.tmpl.tcp_flags = TH_ACK | TH_PUSH;
		c.tmpl.frame_size = 64;
	} else {
		c.tmpl.tcp_flags = TH_SYN;
		c.tmpl.tcp_syn_options = true;
		c.tmpl.no_payload = true;
		c.tmpl.window = 64240;
		for (unsigned i = 0; i < v->nbind; i++) {
			char s[32];

			snprintf(s, sizeof(s), "198.18.230.%u", 10 + i);
			xp_addr_parse(s, &c.bind[i]);
		}
		c.nbind = v->nbind;
	}
	if (ops->create(&c, &e, err, sizeof(err)) || ops->start(e, err, sizeof(err))) {
		fprintf(stderr, "xsk_connbench: %s: %s\n", v->name, err);
		exit(1);
	}
	xp_sleep(0.3);
	ops->read(e, &a);
	uint64_t ra = rx_packets(DEV_RX);
	double t = xp_now();
	xp_sleep(secs);
	ops->read(e, &b);
	uint64_t rb = rx_packets(DEV_RX);
	t = xp_now() - t;
	ops->stop(e);
	ops->destroy(e);
	printf("%-24s %6u %10.3f %10.3f  %5.1f B\n", v->name, v->queues, (b.pkts - a.pkts) / t / 1e6,
	       (rb - ra) / t / 1e6, b.pkts ? (double)b.bytes / b.pkts : 0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	static const struct variant V[] = {
		{ "stream 64 B", XP_TEST_STREAM, 1, 0 },
		{ "connect SYN", XP_TEST_CONNECT, 1, 0 },
		{ "connect SYN, 16 addrs", XP_TEST_CONNECT, 1, 16 },
		{ "stream 64 B", XP_TEST_STREAM, 2, 0 },
		{ "connect SYN", XP_TEST_CONNECT, 2, 0 },
		{ "connect SYN, 16 addrs", XP_TEST_CONNECT, 2, 16 },
	};
	double secs = 3;
	int rounds = 2, opt, fd;

	while ((opt = getopt(argc, argv, "t:r:")) != -1) {
		if (opt == 't')
			secs = atof(optarg);
		else if (opt == 'r')
			rounds = atoi(optarg);
		else
			return 2;
	}
	atexit(ns_remove);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ns_remove();
	sh("ip netns add " NS);
	sh("ip netns exec " NS " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1");
	sh("ip -n " NS " link add " DEV_TX " numtxqueues 2 numrxqueues 2 type veth peer name " DEV_RX
	   " numtxqueues 2 numrxqueues 2");
	sh("ip -n " NS " link set " DEV_TX " up && ip -n " NS " link set " DEV_RX " up");
	fd = open("/var/run/netns/" NS, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("entering " NS);
	close(fd);
	attach_drop((int)if_nametoindex(DEV_RX));
	xp_sleep(0.2);

	dev_mac(DEV_TX, base.tmpl.src_mac);
	dev_mac(DEV_RX, base.tmpl.dst_mac);
	xp_addr_parse("198.18.230.1", &base.tmpl.src);
	xp_addr_parse("198.18.230.2", &base.tmpl.dst);
	base.tmpl.l4_proto = IPPROTO_TCP;
	base.sport_lo = 10000;
	base.sport_hi = 59999;
	base.dport_lo = 63000;
	base.dport_hi = 63015;
	base.tmpl.sport = base.sport_lo;
	base.tmpl.dport = base.dport_lo;
	snprintf(base.ifname, sizeof(base.ifname), DEV_TX);
	base.ifindex = (int)if_nametoindex(DEV_TX);

	printf("%-24s %6s %10s %10s  %s\n", "variant", "queues", "sent Mpps", "recv Mpps", "frame");
	for (int r = 0; r < rounds; r++) {
		printf("-- round %d\n", r + 1);
		for (size_t i = 0; i < sizeof(V) / sizeof(V[0]); i++)
			run(&V[i], secs);
	}
	return 0;
}
