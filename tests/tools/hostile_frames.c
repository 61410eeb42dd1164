/*
 * Send the frames a hostile peer on the server's link would send at a
 * running XDP connection test (issue 9, finding 5), from an interface with
 * an AF_PACKET socket, for tests/e2e/70_xdp_strict.sh:
 *
 *   build/tests/tools/hostile_frames --dev DEV --dst-mac MAC --client ADDR
 *       --stranger ADDR --server ADDR --dport PORT [-n N]
 *
 * N frames of each kind (source port: the kind's base below + i, so a
 * capture tells them apart; all above the client's default --cport range):
 *   60000 stranger_syn     SYN from --stranger (not the test's client)
 *   60100 stranger_finack  ACK|FIN from --stranger, no handshake before it
 *   60200 bad_csum         SYN from --client with a wrong TCP checksum
 *   60300 bcast_dst        SYN from --client to ff:ff:ff:ff:ff:ff / the
 *                          subnet's broadcast address (--server's /24)
 *   60400 foreign_dst      SYN from --client to --server's MAC but to an
 *                          address that is not the server's (.50 of its /24)
 *   60500 bcast_src_mac    SYN from --client with source MAC ff:ff:ff:ff:ff:ff
 *   60600 good_syn         SYN from --client, as a TCP stack sends it: the
 *                          control, which the server answers
 * IPv4 only (the e2e test's family). Frames are built by tests/lib/wire.h.
 * Exit 0 when every frame was sent, 1 otherwise, 2 for bad arguments.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/lib/wire.h"

static int usage(const char *why)
{
	fprintf(stderr, "hostile_frames: %s (see the comment at the top of tests/tools/hostile_frames.c)\n", why);
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "dev", required_argument, 0, 'd' },      { "dst-mac", required_argument, 0, 'm' },
		{ "client", required_argument, 0, 'c' },   { "stranger", required_argument, 0, 's' },
		{ "server", required_argument, 0, 'S' },   { "dport", required_argument, 0, 'p' },
		{ 0, 0, 0, 0 },
	};
	const char *dev = NULL;
	uint8_t dmac[6], smac[6], cli[16] = { 0 }, str[16] = { 0 }, srv[16] = { 0 };
	int have = 0, opt, n = 10;
	unsigned dport = 0;

	while ((opt = getopt_long(argc, argv, "n:", lo, NULL)) != -1) {
		switch (opt) {
		case 'd': dev = optarg; have |= 1; break;
		case 'm':
			if (sscanf(optarg, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &dmac[0], &dmac[1], &dmac[2], &dmac[3],
				   &dmac[4], &dmac[5]) != 6)
				return usage("--dst-mac: want xx:xx:xx:xx:xx:xx");
			have |= 2;
			break;
		case 'c': if (inet_pton(AF_INET, optarg, cli) != 1) return usage("--client: an IPv4 address"); have |= 4; break;
		case 's': if (inet_pton(AF_INET, optarg, str) != 1) return usage("--stranger: an IPv4 address"); have |= 8; break;
		case 'S': if (inet_pton(AF_INET, optarg, srv) != 1) return usage("--server: an IPv4 address"); have |= 16; break;
		case 'p': dport = (unsigned)atoi(optarg); have |= 32; break;
		case 'n': n = atoi(optarg); break;
		default: return usage("unknown option");
		}
	}
	if (have != 63 || !dport || dport > 65535 || n < 1 || n > 99)
		return usage("need --dev --dst-mac --client --stranger --server --dport, -n 1..99");

	int ifindex = (int)if_nametoindex(dev);
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	if (!ifindex || fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, "hostile_frames: %s: %s\n", dev, strerror(errno));
		return 1;
	}
	memcpy(smac, ifr.ifr_hwaddr.sa_data, 6);
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_halen = 6 };

	static const uint8_t SYN_OPTS[20] = { 2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7 };
	static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	int sent = 0;
	for (int kind = 0; kind < 7; kind++) {
		for (int i = 0; i < n; i++) {
			struct wf f = { .l4 = IPPROTO_TCP, .sport = (uint16_t)(60000 + 100 * kind + i),
					.dport = (uint16_t)dport, .flags = W_SYN, .seq = 0x10000u * (unsigned)(kind + 1) + (unsigned)i,
					.tcp_opt = SYN_OPTS, .tcp_opt_len = sizeof(SYN_OPTS) };
			uint8_t buf[256];

			memcpy(f.dmac, dmac, 6);
			memcpy(f.smac, smac, 6);
			memcpy(f.saddr, cli, 4);
			memcpy(f.daddr, srv, 4);
			switch (kind) {
			case 0: memcpy(f.saddr, str, 4); break;
			case 1:
				memcpy(f.saddr, str, 4);
				f.flags = W_ACK | W_FIN;
				f.ack = 0x5000;
				f.tcp_opt_len = 0;
				break;
			case 2: f.bad_l4_csum = 1; break;
			case 3: memcpy(f.dmac, BCAST, 6); f.daddr[3] = 255; break;
			case 4: f.daddr[3] = 50; break;
			case 5: memcpy(f.smac, BCAST, 6); break;
			default: break;
			}
			size_t len = w_build(&f, buf, sizeof(buf));
			memcpy(sll.sll_addr, f.dmac, 6);
			if (len && sendto(fd, buf, len, 0, (struct sockaddr *)&sll, sizeof(sll)) == (ssize_t)len)
				sent++;
			usleep(1000);
		}
	}
	close(fd);
	printf("hostile_frames: sent %d of %d frames on %s\n", sent, 7 * n, dev);
	return sent == 7 * n ? 0 : 1;
}
