/*
 * flowlab: flows on the lab's wire before the test specification carries
 * them (issue 26), for tests/e2e/100_flows_vlan.sh. Two halves:
 *
 *   flowlab send IFNAME DSTMAC SRC DST PORT COUNT SIZE FLOW...
 *       Build COUNT frames per FLOW with user/frame's builder
 *       (frame_build_hdr, frame_put_stamp) and send them on IFNAME through
 *       an AF_PACKET socket, the flows interleaved frame by frame. Flow i
 *       is stream i of the stamp, its frame k seq k. UDP SRC:40000+i ->
 *       DST:PORT, SIZE bytes on the wire (FCS counted). FLOW is
 *         u[/DSCP]            untagged
 *         q:VID[/DSCP]        one 802.1Q tag
 *         ad:SVID:CVID[/DSCP] 802.1ad S-tag outside an 802.1Q C-tag (QinQ)
 *       Prints "sent=N" (frames the socket took).
 *
 *   flowlab serve IFNAME PORT CLIENT NFLOWS SECONDS
 *       Load the server's XDP program (the real loader) on IFNAME, claim
 *       a UDP slot for PORT from CLIENT, and start it with streams
 *       0..NFLOWS-1 counted as flows 0..NFLOWS-1 (stream_flow, flow_acct).
 *       Prints "ready", waits SECONDS (or until SIGINT/SIGTERM), prints
 *       "slot pkts=N bytes=N" and per flow "flow=I frames=N bytes=N recv=N
 *       expected=N dup=N reordered=N lat_n=N", detaches, exits.
 *
 * Exit status: 0, 1 runtime error, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf/lib/stamp.h"
#include "bpf/measure.h"
#include "bpf/server.h"
#include "frame/flow_hdr.h"
#include "frame/frame.h"
#include "frame/frame_stamp.h"
#include "loader/server_prog.h"
#include "loader/xdp_attach.h"
#include "util/values.h"

#include "flow_args.h"

#define MAX_FLOWS 64

static int usage(void)
{
	fprintf(stderr, "usage: flowlab send IFNAME DSTMAC SRC DST PORT COUNT SIZE FLOW...\n"
			"       flowlab serve IFNAME PORT CLIENT NFLOWS SECONDS\n"
			"  FLOW: u[/DSCP] | q:VID[/DSCP] | ad:SVID:CVID[/DSCP]\n");
	return 2;
}

static int do_send(int argc, char **argv)
{
	struct xp_flow_hdr h[MAX_FLOWS];
	struct frame_layout lay[MAX_FLOWS];
	uint8_t frames[MAX_FLOWS][2048], mac[6];
	unsigned nflows = (unsigned)argc - 7, port, count, size;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned long sent = 0;
	const char *err;
	char perr[128];
	int fd;

	if (argc < 8 || nflows > MAX_FLOWS)
		return usage();
	port = (unsigned)atoi(argv[4]);
	count = (unsigned)atoi(argv[5]);
	size = (unsigned)atoi(argv[6]);
	if (parse_mac(argv[1], mac, perr, sizeof(perr)) || !port || port > 65535 || !count || size < 64 || size > 2000)
		return usage();
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		fprintf(stderr, "flowlab: %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	sll.sll_ifindex = (int)if_nametoindex(argv[0]);
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, mac, 6);
	for (unsigned i = 0; i < nflows; i++) {
		memset(&h[i], 0, sizeof(h[i]));
		h[i].l4_proto = IPPROTO_UDP;
		h[i].sport = (uint16_t)(40000 + i);
		h[i].dport = (uint16_t)port;
		int r = flow_arg_hdr(&h[i], argv[0], mac, argv[2], argv[3], argv[7 + i]);
		if (r == -2) {
			fprintf(stderr, "flowlab: %s: %s\n", argv[0], strerror(errno));
			return 1;
		}
		if (r)
			return usage();
		if (frame_layout_hdr(&h[i], size, false, &lay[i], &err) ||
		    !frame_build_hdr(&h[i], size, false, 0, frames[i], sizeof(frames[i]), &err)) {
			fprintf(stderr, "flowlab: flow %u: %s\n", i, err);
			return 2;
		}
	}
	for (unsigned k = 0; k < count; k++) {
		for (unsigned i = 0; i < nflows; i++) {
			frame_put_stamp(frames[i], &lay[i], frame_stamp_place(&(struct frame_spec){ .src = h[i].src },
									      &lay[i]),
					xp_stamp_pack(i, k, flow_arg_now_ticks()), NULL);
			if (sendto(fd, frames[i], lay[i].len, 0, (struct sockaddr *)&sll, sizeof(sll)) ==
			    (ssize_t)lay[i].len)
				sent++;
		}
		/* A gentle pace (~20 k frames/s per flow): the e2e checks
		 * counts at both ends, not what a veth's queue drops. */
		if (k % 16 == 15)
			usleep(800);
	}
	printf("sent=%lu\n", sent);
	close(fd);
	return sent == (unsigned long)count * nflows ? 0 : 1;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

static int do_serve(int argc, char **argv)
{
	struct server_prog *rp;
	struct xp_addr cli;
	__u32 se[XP_STAMP_MAX_STREAMS] = { 0 };
	struct xp_slot_meas m = { .ival = 250000000ull, .flags = XP_MEAS_ONEWAY };
	struct xp_counters c;
	const char *mode;
	char err[256];
	int ifindex, slot, port, nflows, secs, rc = 1;

	if (argc != 5)
		return usage();
	ifindex = (int)if_nametoindex(argv[0]);
	port = atoi(argv[1]);
	nflows = atoi(argv[3]);
	secs = atoi(argv[4]);
	if (!ifindex || port <= 0 || port > 65535 || xp_addr_parse(argv[2], &cli) || nflows < 1 ||
	    nflows > (int)XP_STAMP_MAX_STREAMS || secs < 1)
		return usage();
	if (server_prog_open(&rp, 0, false, err, sizeof(err))) {
		fprintf(stderr, "flowlab: %s\n", err);
		return 1;
	}
	if (server_prog_attach(rp, ifindex, XP_XDP_AUTO, &mode, err, sizeof(err))) {
		fprintf(stderr, "flowlab: %s\n", err);
		goto out;
	}
	slot = server_prog_slot_alloc(rp, (uint16_t)port, (uint16_t)port, XP_PROTO_UDP, XP_SLOT_ACTIVE, XP_CLOSE_NONE,
				      ifindex, &cli, NULL, 0, err, sizeof(err));
	if (slot < 0) {
		fprintf(stderr, "flowlab: %s\n", err);
		goto detach;
	}
	for (int i = 0; i < nflows; i++)
		se[i] = (__u32)i + 1;
	m.t0 = flow_arg_now_ticks();
	if (server_prog_meas_start_flows(rp, slot, &m, se)) {
		fprintf(stderr, "flowlab: cannot start the flows\n");
		goto detach;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ready mode=%s\n", mode);
	fflush(stdout);
	for (int t = 0; t < secs * 10 && !stop; t++)
		usleep(100000);
	if (server_prog_read(rp, slot, &c))
		goto detach;
	printf("slot pkts=%llu bytes=%llu\n", (unsigned long long)c.pkts, (unsigned long long)c.bytes);
	for (int i = 0; i < nflows; i++) {
		struct xp_flow_acct f;

		if (server_prog_read_flow(rp, (unsigned)i, &f))
			goto detach;
		printf("flow=%d frames=%llu bytes=%llu recv=%llu expected=%llu dup=%llu reordered=%llu lat_n=%llu\n", i,
		       (unsigned long long)f.frames, (unsigned long long)f.bytes, (unsigned long long)f.recv,
		       (unsigned long long)f.expected, (unsigned long long)f.dup, (unsigned long long)f.reordered,
		       (unsigned long long)f.lat_n);
	}
	rc = 0;
detach:
	server_prog_detach(rp, ifindex);
out:
	server_prog_close(rp);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "send"))
		return do_send(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return do_serve(argc - 2, argv + 2);
	return usage();
}
