/*
 * xdpconn: smoke-test driver of the XDP connection engine, for
 * tests/e2e/40_xdp_connect_smoke.sh. Built by make (build/tests/tools/xdpconn):
 *
 *   build/tests/tools/xdpconn --server NS:DEV --client NS:DEV --src ADDR --dst ADDR \
 *      [-n N] [--mode rst|fin] [--wait-ms MS] [--next-hop-mac MAC] [--redirect]
 *
 * In one process, with the project's loaders (user/loader/server_prog.c,
 * xdp_connect_prog.c): loads bpf/server.bpf.c with one XP_SLOT_RESPOND slot on
 * ports 63000:63015 and attaches it (bpf_link) to the server's interface in
 * its namespace; loads bpf/xdp_connect.bpf.c (client ports 10000:59999) and
 * attaches it to the client's interface; then sends N raw SYNs (user/frame/frame.c,
 * Linux-like options) from the client's interface with an AF_PACKET socket,
 * one flow each (to the server's MAC, or --next-hop-mac when a router sits
 * in between; --redirect then makes both programs answer with a redirect to
 * the ingress interface, which a router veth without XDP program needs),
 * waits until the server has counted N connections (or the
 * wait expires) and prints both programs' counters as key=value lines:
 *
 *   server xdp_mode=native tcp_syn=N synack_sent=N conn_established=N ...
 *   client xdp_mode=native synack_seen=N acks_sent=N ...
 *
 * The links go when the process exits, so nothing stays attached.
 * Exit status: 0 when it ran (the script judges the numbers), 1 on errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpf/server.h"
#include "bpf/xdp_connect.h"
#include "loader/xdp_connect_prog.h"
#include "loader/server_prog.h"
#include "frame/frame.h"

#define PORT_LO  63000
#define PORT_HI  63015
#define CPORT_LO 10000
#define CPORT_HI 59999

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "xdpconn: ");
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
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		die("setns %s: %s", ns, strerror(errno));
	close(fd);
}

/* ifindex and MAC of dev in the current namespace. */
static int dev_info(const char *dev, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ifindex = (int)if_nametoindex(dev);

	if (!ifindex || s < 0)
		die("no interface %s: %s", dev, strerror(errno));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (ioctl(s, SIOCGIFHWADDR, &ifr))
		die("SIOCGIFHWADDR %s: %s", dev, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(s);
	return ifindex;
}

/* "NS:DEV" */
static void split(char *arg, char **ns, char **dev)
{
	char *c = strchr(arg, ':');

	if (!c)
		die("'%s': want NAMESPACE:DEVICE", arg);
	*c = 0;
	*ns = arg;
	*dev = c + 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "server", required_argument, 0, 'S' },
		{ "client", required_argument, 0, 'C' },
		{ "src", required_argument, 0, 's' },
		{ "dst", required_argument, 0, 'd' },
		{ "mode", required_argument, 0, 'm' },
		{ "wait-ms", required_argument, 0, 'w' },
		{ "next-hop-mac", required_argument, 0, 'g' },
		{ "redirect", no_argument, 0, 'r' },
		{ 0, 0, 0, 0 },
	};
	char *sns = NULL, *sdev = NULL, *cns = NULL, *cdev = NULL;
	const char *src = NULL, *dst = NULL, *mode = "rst", *smode, *cmode;
	long n = 1000, wait_ms = 2000;
	struct server_prog *srv;
	struct xdp_connect_prog *cli;
	uint8_t smac[6], cmac[6], gw[6];
	int sif, cif, opt, fin, fd, slot, have_gw = 0, redirect = 0;
	struct frame_spec fs = { 0 };
	struct xp_counters sc;
	struct xp_cc_counters cc;
	char err[256];
	long sent = 0;
	double t0;

	while ((opt = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		switch (opt) {
		case 'S': split(optarg, &sns, &sdev); break;
		case 'C': split(optarg, &cns, &cdev); break;
		case 's': src = optarg; break;
		case 'd': dst = optarg; break;
		case 'm': mode = optarg; break;
		case 'w': wait_ms = atol(optarg); break;
		case 'n': n = atol(optarg); break;
		case 'r': redirect = 1; break;
		case 'g':
			if (sscanf(optarg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &gw[0], &gw[1], &gw[2],
				   &gw[3], &gw[4], &gw[5]) != 6)
				die("--next-hop-mac: want xx:xx:xx:xx:xx:xx");
			have_gw = 1;
			break;
		default: die("usage: see the comment at the top of tests/tools/xdpconn.c");
		}
	}
	if (!sns || !cns || !src || !dst || n <= 0 || n > 1000000)
		die("need --server NS:DEV --client NS:DEV --src ADDR --dst ADDR, -n 1..1000000");
	if (strcmp(mode, "rst") && strcmp(mode, "fin"))
		die("--mode rst|fin");
	fin = !strcmp(mode, "fin");
	if (xp_addr_parse(src, &fs.src) || xp_addr_parse(dst, &fs.dst) ||
	    fs.src.family != fs.dst.family)
		die("bad --src/--dst");

	/* The server's program (the project's loader: a random cookie key),
	 * attached in the server's namespace, with one RESPOND slot. */
	enter_ns(sns);
	sif = dev_info(sdev, smac);
	if (server_prog_open(&srv, 0, redirect, err, sizeof(err)))
		die("%s", err);
	if (server_prog_attach(srv, sif, XP_XDP_AUTO, &smode, err, sizeof(err)))
		die("%s (%s in %s)", err, sdev, sns);
	/* Bound, as the server binds a test's slot, to the interface and to
	 * the client's address (--src). */
	slot = server_prog_slot_alloc(srv, PORT_LO, PORT_HI, XP_PROTO_TCP, XP_SLOT_RESPOND, XP_CLOSE_RST, sif,
				      &fs.src, NULL, 0, err, sizeof(err));
	if (slot < 0)
		die("%s", err);

	/* The client's program, loaded and attached in the client's namespace. */
	enter_ns(cns);
	cif = dev_info(cdev, cmac);
	{
		struct xdp_connect_prog_cfg cfg = {
			.ifindex = cif,
			.family = fs.src.family,
			.cport_lo = CPORT_LO, .cport_hi = CPORT_HI,
			.dport_lo = PORT_LO, .dport_hi = PORT_HI,
			.mode = fin ? XP_CC_MODE_FIN : XP_CC_MODE_RST,
			.reply_redirect = redirect,
			.xdp_mode = XP_XDP_AUTO,
		};

		if (xdp_connect_prog_open(&cfg, &cli, &cmode, err, sizeof(err)))
			die("%s (%s in %s)", err, cdev, cns);
	}

	/* N SYNs, one flow each, from the client's interface. */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("AF_PACKET socket: %s", strerror(errno));
	{
		struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = cif,
					   .sll_protocol = 0 };

		if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)))
			die("bind AF_PACKET: %s", strerror(errno));
	}
	memcpy(fs.src_mac, cmac, 6);
	memcpy(fs.dst_mac, have_gw ? gw : smac, 6);
	fs.l4_proto = IPPROTO_TCP;
	fs.tcp_flags = 0x02; /* SYN */
	fs.tcp_syn_options = true;
	fs.no_payload = true;
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		uint8_t frame[128];
		const char *err = NULL;
		size_t len;

		fs.sport = (uint16_t)(CPORT_LO + i % (CPORT_HI - CPORT_LO + 1));
		fs.dport = (uint16_t)(PORT_LO + i % (PORT_HI - PORT_LO + 1));
		fs.seq = (uint32_t)random();
		len = frame_build(&fs, frame, sizeof(frame), &err);
		if (!len)
			die("frame_build: %s", err);
		if (send(fd, frame, len, 0) != (ssize_t)len)
			die("send: %s", strerror(errno));
		sent++;
		/* Let the handshakes drain now and then: the veth rings hold
		 * 256 frames. */
		if (i % 64 == 63)
			usleep(200);
	}
	close(fd);

	/* Wait for the server's count to settle. */
	for (;;) {
		if (server_prog_read(srv, slot, &sc))
			die("reading the server's counters: %s", strerror(errno));
		if ((long)sc.conn_established >= n || now_s() - t0 > wait_ms / 1e3)
			break;
		usleep(10000);
	}
	usleep(100000); /* the last RSTs / final ACKs */
	if (server_prog_read(srv, slot, &sc) || xdp_connect_prog_read(cli, &cc))
		die("reading the counters: %s", strerror(errno));

	printf("sent=%ld family=%d mode=%s\n", sent, fs.src.family == AF_INET6 ? 6 : 4, mode);
	printf("server xdp_mode=%s pkts=%llu tcp_syn=%llu tcp_ack_only=%llu tcp_fin=%llu "
	       "synack_sent=%llu conn_established=%llu cookie_invalid=%llu fin_answered=%llu "
	       "rst_sent=%llu\n", smode,
	       (unsigned long long)sc.pkts, (unsigned long long)sc.tcp_syn,
	       (unsigned long long)sc.tcp_ack_only, (unsigned long long)sc.tcp_fin,
	       (unsigned long long)sc.synack_sent, (unsigned long long)sc.conn_established,
	       (unsigned long long)sc.cookie_invalid, (unsigned long long)sc.fin_answered,
	       (unsigned long long)sc.rst_sent);
	printf("client xdp_mode=%s synack_seen=%llu acks_sent=%llu fins_sent=%llu rst_seen=%llu "
	       "finack_answered=%llu passed=%llu\n", cmode,
	       (unsigned long long)cc.synack_seen, (unsigned long long)cc.acks_sent,
	       (unsigned long long)cc.fins_sent, (unsigned long long)cc.rst_seen,
	       (unsigned long long)cc.finack_answered, (unsigned long long)cc.passed);

	xdp_connect_prog_close(cli);
	server_prog_close(srv);
	return 0;
}
