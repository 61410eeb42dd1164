/*
 * xskconn: the XDP connection engine end to end with the AF_XDP sender
 * (user/engine_xsk.c, kinds connect and hold) instead of xdpconn's AF_PACKET
 * loop. Not built by make:
 *
 *   cc -O2 -Wall -Wextra -std=gnu11 -D_GNU_SOURCE -Iuser -Ibpf -Ibuild \
 *      -o build/tests/xskconn tests/tools/xskconn.c build/libxdpperf.a \
 *      -lxdp -lbpf -lelf -lz -ljson-c -lmnl -lpthread -lm
 *   build/tests/xskconn --server NS:DEV --client NS:DEV --src ADDR --dst ADDR
 *      --kind connect|hold [-P N] [--pps R] [-t SECS] [--bind ADDR[-ADDR]]
 *      [--queues N] [--cport LO:HI] [--next-hop-mac MAC] [--redirect] [--during CMD]
 *
 * Loads bpf/rx_count.bpf.c with one XP_SLOT_RESPOND slot on ports
 * 63000:63015 on the server's interface (connect: XP_CLOSE_RST, hold:
 * XP_CLOSE_NONE) and bpf/conn_client.bpf.c on the client's (connect:
 * XP_CC_MODE_RST, hold: XP_CC_MODE_KEEPALIVE), client ports 10000:59999
 * (the engine uses --cport, within those; a small range makes tuples repeat).
 * Then runs the xsk engine from the client's interface: connect for SECS
 * seconds (at R SYNs/s, 0 = as fast as it goes); hold: N connections, waits
 * until the server counts N (or SECS pass), runs CMD (sh -c, e.g. a
 * conntrack listing in a router namespace), then stops the engine, which
 * sends the RSTs. Prints key=value lines: the engine's counters and both
 * programs'. The links go when the process exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "xdpperf.h"
#include "conn_client.h"
#include "engine.h"
#include "timeutil.h"
#include "rx_count.skel.h"
#include "conn_client.skel.h"

#define PORT_LO  63000
#define PORT_HI  63015
#define CPORT_LO 10000
#define CPORT_HI 59999
#define SLOT     0

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "xskconn: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void enter_ns(const char *ns)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		die("cannot enter netns %s: %s", ns, strerror(errno));
	close(fd);
}

static int dev_info(const char *dev, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ifindex = (int)if_nametoindex(dev);

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (!ifindex || s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr))
		die("no interface %s: %s", dev, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
	return ifindex;
}

static void split(char *arg, char **ns, char **dev)
{
	char *c = strchr(arg, ':');

	if (!c)
		die("'%s': want NAMESPACE:DEVICE", arg);
	*c = 0;
	*ns = arg;
	*dev = c + 1;
}

/* Sum a per-CPU array value of n __u64 fields. */
static void sum_u64(int map_fd, __u32 key, int ncpus, size_t n, __u64 *out)
{
	__u64 v[ncpus * n];

	memset(out, 0, n * 8);
	if (bpf_map_lookup_elem(map_fd, &key, v))
		die("reading counters: %s", strerror(errno));
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < n; f++)
			out[f] += v[c * n + f];
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", required_argument, 0, 'S' }, { "client", required_argument, 0, 'C' },
		{ "src", required_argument, 0, 's' },    { "dst", required_argument, 0, 'd' },
		{ "kind", required_argument, 0, 'k' },   { "pps", required_argument, 0, 'p' },
		{ "bind", required_argument, 0, 'b' },   { "queues", required_argument, 0, 'q' },
		{ "next-hop-mac", required_argument, 0, 'g' },
		{ "redirect", no_argument, 0, 'r' },     { "during", required_argument, 0, 'D' },
		{ "cport", required_argument, 0, 'c' },
		{ 0, 0, 0, 0 },
	};
	char *sns = NULL, *sdev = NULL, *cns = NULL, *cdev = NULL, err[256] = "";
	const char *src = NULL, *dst = NULL, *during = NULL;
	static struct xp_engine_cfg c;
	struct xp_engine_stats st;
	struct xp_engine *e = NULL;
	struct xp_counters sc;
	struct xp_cc_counters cc;
	uint8_t smac[6], cmac[6], gw[6];
	int sif, cif, opt, ncpus, have_gw = 0, redirect = 0, hold = 0;
	double secs = 2;
	unsigned cport_lo = CPORT_LO, cport_hi = CPORT_HI;
	uint64_t key[2];

	c.queues = 1;
	while ((opt = getopt_long(argc, argv, "P:t:", lo, NULL)) != -1) {
		switch (opt) {
		case 'S': split(optarg, &sns, &sdev); break;
		case 'C': split(optarg, &cns, &cdev); break;
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'k': hold = !strcmp(optarg, "hold"); break;
		case 'p': c.pps = atof(optarg); break;
		case 'P': c.parallel = (unsigned)atol(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'q': c.queues = (unsigned)atoi(optarg); break;
		case 'r': redirect = 1; break;
		case 'D': during = optarg; break;
		case 'c':
			if (sscanf(optarg, "%u:%u", &cport_lo, &cport_hi) != 2 || cport_lo < CPORT_LO ||
			    cport_hi > CPORT_HI || cport_hi < cport_lo)
				die("--cport: want LO:HI within %u:%u", CPORT_LO, CPORT_HI);
			break;
		case 'b': {
			int n = xp_parse_addr_range(optarg, c.bind, XP_MAX_BIND, err, sizeof(err));
			if (n < 0)
				die("--bind: %s", err);
			c.nbind = (unsigned)n;
			break;
		}
		case 'g':
			if (sscanf(optarg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &gw[0], &gw[1], &gw[2], &gw[3],
				   &gw[4], &gw[5]) != 6)
				die("--next-hop-mac: want xx:xx:xx:xx:xx:xx");
			have_gw = 1;
			break;
		default: die("usage: see the comment at the top of tests/tools/xskconn.c");
		}
	}
	if (!sns || !cns || !src || !dst)
		die("need --server NS:DEV --client NS:DEV --src ADDR --dst ADDR");
	if (xp_addr_parse(src, &c.tmpl.src) || xp_addr_parse(dst, &c.tmpl.dst) ||
	    c.tmpl.src.family != c.tmpl.dst.family)
		die("bad --src/--dst");
	ncpus = libbpf_num_possible_cpus();

	struct rx_count_bpf *srv = rx_count_bpf__open();
	if (!srv || getrandom(key, sizeof(key), 0) != sizeof(key))
		die("open rx_count: %s", strerror(errno));
	srv->rodata->cookie_key[0] = key[0];
	srv->rodata->cookie_key[1] = key[1];
	srv->rodata->reply_redirect = (__u8)redirect;
	if (rx_count_bpf__load(srv))
		die("load rx_count: %s", strerror(errno));
	struct xp_slot_cfg scfg = { .flags = XP_SLOT_ACTIVE | XP_SLOT_RESPOND, .protos = XP_PROTO_TCP,
				    .close_mode = hold ? XP_CLOSE_NONE : XP_CLOSE_RST };
	__u32 k = SLOT, v = SLOT + 1;
	for (__u32 p = PORT_LO; p <= PORT_HI; p++)
		if (bpf_map_update_elem(bpf_map__fd(srv->maps.port_slot), &p, &v, 0))
			die("port_slot: %s", strerror(errno));
	if (bpf_map_update_elem(bpf_map__fd(srv->maps.slot_cfg), &k, &scfg, 0))
		die("slot_cfg: %s", strerror(errno));

	struct conn_client_bpf *cli = conn_client_bpf__open();
	if (!cli)
		die("open conn_client: %s", strerror(errno));
	cli->rodata->cc_family = c.tmpl.src.family == AF_INET6 ? 6 : 4;
	cli->rodata->cc_cport_lo = CPORT_LO;
	cli->rodata->cc_cport_hi = CPORT_HI;
	cli->rodata->cc_dport_lo = PORT_LO;
	cli->rodata->cc_dport_hi = PORT_HI;
	cli->rodata->cc_mode = hold ? XP_CC_MODE_KEEPALIVE : XP_CC_MODE_RST;
	cli->rodata->cc_reply_redirect = (__u8)redirect;
	if (conn_client_bpf__load(cli))
		die("load conn_client: %s", strerror(errno));

	enter_ns(sns);
	sif = dev_info(sdev, smac);
	if (!bpf_program__attach_xdp(srv->progs.xdp_rx_count, sif))
		die("attach rx_count: %s", strerror(errno));
	enter_ns(cns);
	cif = dev_info(cdev, cmac);
	if (!bpf_program__attach_xdp(cli->progs.xdp_conn_client, cif))
		die("attach conn_client: %s", strerror(errno));

	c.kind = hold ? XP_TEST_HOLD : XP_TEST_CONNECT;
	memcpy(c.tmpl.src_mac, cmac, 6);
	memcpy(c.tmpl.dst_mac, have_gw ? gw : smac, 6);
	c.tmpl.l4_proto = IPPROTO_TCP;
	c.tmpl.tcp_flags = TH_SYN;
	c.tmpl.tcp_syn_options = true;
	c.tmpl.no_payload = true;
	c.tmpl.window = 64240;
	c.sport_lo = c.tmpl.sport = (uint16_t)cport_lo;
	c.sport_hi = (uint16_t)cport_hi;
	c.dport_lo = c.tmpl.dport = PORT_LO;
	c.dport_hi = PORT_HI;
	snprintf(c.ifname, sizeof(c.ifname), "%s", cdev);
	c.ifindex = cif;
	c.max_seconds = secs + 30;
	c.debug = 1;
	if (xp_engine_xsk.create(&c, &e, err, sizeof(err)) || xp_engine_xsk.start(e, err, sizeof(err)))
		die("engine: %s", err);
	double t0 = xp_now();
	if (hold) {
		do {
			xp_sleep(0.01);
			sum_u64(bpf_map__fd(srv->maps.counters), SLOT, ncpus, sizeof(sc) / 8, (__u64 *)&sc);
		} while (sc.conn_established < c.parallel && xp_now() - t0 < secs);
		xp_sleep(0.1);
		if (during) {
			fflush(stdout);
			if (system(during) != 0)
				fprintf(stderr, "xskconn: --during command failed\n");
		}
	} else {
		xp_sleep(secs);
	}
	double t = xp_now() - t0;
	xp_engine_xsk.stop(e);
	xp_engine_xsk.read(e, &st);
	xp_sleep(0.2); /* the last handshakes */
	sum_u64(bpf_map__fd(srv->maps.counters), SLOT, ncpus, sizeof(sc) / 8, (__u64 *)&sc);
	sum_u64(bpf_map__fd(cli->maps.cc_counters), 0, ncpus, sizeof(cc) / 8, (__u64 *)&cc);
	printf("engine syn_sent=%llu rst_sent=%llu errors=%llu secs=%.3f rate=%.0f\n",
	       (unsigned long long)st.pkts, (unsigned long long)st.conn_closed,
	       (unsigned long long)st.errors, t, st.pkts / t);
	printf("server tcp_syn=%llu synack_sent=%llu conn_established=%llu cookie_invalid=%llu "
	       "tcp_rst=%llu rst_sent=%llu\n", (unsigned long long)sc.tcp_syn,
	       (unsigned long long)sc.synack_sent, (unsigned long long)sc.conn_established,
	       (unsigned long long)sc.cookie_invalid, (unsigned long long)sc.tcp_rst,
	       (unsigned long long)sc.rst_sent);
	printf("client synack_seen=%llu acks_sent=%llu rst_seen=%llu\n",
	       (unsigned long long)cc.synack_seen, (unsigned long long)cc.acks_sent,
	       (unsigned long long)cc.rst_seen);
	xp_engine_xsk.destroy(e);
	return 0;
}
