// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Round-trip mode over a real veth pair (issue 10, hosts with different
 * clocks), in a private network namespace (unshare, no name: it goes with
 * the process): the server's program on one end in a slot with
 * XP_SLOT_REFLECT, the client's round-trip program (bpf/rtt.bpf.c) on the
 * other, attached through a bpf_link. AF_PACKET on the client's end sends
 * hand-built stamped frames with three sequence numbers left out; the
 * server reflects them with XDP_TX (which the veth delivers because the
 * client's end has an XDP program: the veth rule of
 * shared/notes/afxdp-on-this-kernel.md), the client's program times and
 * drops them.
 *
 * Checked against counters xdpperf did not write: the kernel's tx count of
 * the client's end (/proc/net/dev) for what was sent, and veth's own XDP
 * statistics (ethtool, SIOCETHTOOL): xdp_tx on the server's end for what
 * was reflected, xdp_drops on the client's end for what the round-trip
 * program took. The same through a router (three namespaces of this
 * test's own, xprt-*): the router's kernel forwards every frame both ways
 * and finds no bad IPv4 header (its ForwDatagrams / InHdrErrors /
 * InCsumErrors). Needs root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/types.h>
#include <linux/ethtool.h>
#include <linux/if_ether.h>
#include <linux/sockios.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/server.h"
#include "bpf/measure.h"
#include "bpf/rtt.h"
#include "loader/rtt_prog.h"
#include "loader/server_prog.h"
#include "net/netdev.h"
#include "meas/latency.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/stamped.h"
#include "tests/lib/veth.h"
#include "tests/lib/wire.h"

#define DEV     "xprt0"   /* the server's end */
#define PEER    "xprt1"   /* the client's end */
#define PORT    63700
#define CPORT   40000
#define CLI4    "198.18.237.2"
#define SRV4    "198.18.237.1"
#define SEC_TICKS 250000000ull
#define NSENT   200u      /* frames sent; seq 0..NSENT+2 without the three below */

static unsigned ifi, peer_ifi;
static uint8_t dev_mac[6], peer_mac[6];

/* One of the driver's statistics (ethtool -S) by name, through the
 * SIOCETHTOOL ioctl: veth's per-queue XDP counts. Summed over the names
 * that end in suffix (every queue). */
static uint64_t ethtool_stat(const char *dev, const char *suffix)
{
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr;
	struct {
		struct ethtool_sset_info hdr;
		__u32 len;
	} ss = { .hdr = { .cmd = ETHTOOL_GSSET_INFO, .sset_mask = 1ull << ETH_SS_STATS } };
	uint64_t sum = 0;

	assert_true(fd >= 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	ifr.ifr_data = (void *)&ss;
	assert_int_equal(ioctl(fd, SIOCETHTOOL, &ifr), 0);
	__u32 n = ss.len;
	struct ethtool_gstrings *gs = calloc(1, sizeof(*gs) + (size_t)n * ETH_GSTRING_LEN);
	struct ethtool_stats *st = calloc(1, sizeof(*st) + (size_t)n * sizeof(__u64));
	assert_non_null(gs);
	assert_non_null(st);
	gs->cmd = ETHTOOL_GSTRINGS;
	gs->string_set = ETH_SS_STATS;
	gs->len = n;
	ifr.ifr_data = (void *)gs;
	assert_int_equal(ioctl(fd, SIOCETHTOOL, &ifr), 0);
	st->cmd = ETHTOOL_GSTATS;
	st->n_stats = n;
	ifr.ifr_data = (void *)st;
	assert_int_equal(ioctl(fd, SIOCETHTOOL, &ifr), 0);
	for (__u32 k = 0; k < n; k++) {
		char name[ETH_GSTRING_LEN + 1];
		memcpy(name, gs->data + (size_t)k * ETH_GSTRING_LEN, ETH_GSTRING_LEN);
		name[ETH_GSTRING_LEN] = 0;
		size_t l = strlen(name), sl = strlen(suffix);
		if (l >= sl && !strcmp(name + l - sl, suffix))
			sum += st->data[k];
	}
	free(gs);
	free(st);
	close(fd);
	return sum;
}

/* Stamped UDP frames out of PEER: stream 0, seq 0..NSENT+2 except 50, 100
 * and 150, each sent now. */
static void send_frames(unsigned out_ifi, const uint8_t *smac, const uint8_t *dmac, const char *cli,
			const char *srv)
{
	int fd = socket(AF_PACKET, SOCK_RAW, 0);
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = (int)out_ifi, .sll_halen = 6 };
	const struct xt_udp4_path path = { .smac = smac, .dmac = dmac, .cli = cli, .srv = srv, .sport = CPORT, .dport = PORT };
	uint8_t buf[128];

	assert_true(fd >= 0);
	memcpy(to.sll_addr, dmac, 6);
	for (unsigned k = 0; k < NSENT + 3; k++) {
		if (k == 50 || k == 100 || k == 150)
			continue;
		size_t len = xt_udp4_stamped(&path, k, buf, sizeof(buf));

		assert_int_equal(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	}
	close(fd);
	usleep(200 * 1000);
}

static void round_trip(enum xp_xdp_mode mode)
{
	struct server_prog *sp = NULL;
	struct rtt_prog *rp = NULL;
	struct xp_addr cli;
	const char *m1, *m2;
	char err[256];

	assert_int_equal(server_prog_open(&sp, 5304, false, err, sizeof(err)), 0);
	assert_int_equal(server_prog_attach(sp, (int)ifi, mode, &m1, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse(CLI4, &cli), 0);
	int slot = server_prog_slot_alloc(sp, PORT, PORT, XP_PROTO_UDP, XP_SLOT_REFLECT, XP_CLOSE_NONE, (int)ifi, &cli,
					  NULL, 0, err, sizeof(err));
	assert_true(slot >= 0);
	uint64_t t0 = xt_now_ticks() - SEC_TICKS / 2;
	struct xp_slot_meas sm = { .t0 = t0, .ival = 10 * SEC_TICKS, .flags = 0 }; /* no shared clock */
	assert_int_equal(server_prog_meas_start(sp, slot, &sm), 0);

	struct rtt_prog_cfg rc = { .port_lo = PORT, .port_hi = PORT, .protos = XP_PROTO_UDP };
	assert_int_equal(xp_addr_parse(SRV4, &rc.server), 0);
	rc.client = cli;
	if (rtt_prog_open(&rc, &rp, err, sizeof(err)))
		fail_msg("rtt_prog_open: %s", err);
	if (rtt_prog_attach(rp, (int)peer_ifi, mode, &m2, err, sizeof(err)))
		fail_msg("rtt_prog_attach: %s", err);
	struct xp_slot_meas cm = { .t0 = t0, .ival = 10 * SEC_TICKS, .flags = XP_MEAS_ONEWAY };
	assert_int_equal(rtt_prog_meas_start(rp, &cm), 0);

	uint64_t tx0 = xt_tx_packets(PEER), xtx0 = ethtool_stat(DEV, "_xdp_tx"), xdrop0 = ethtool_stat(PEER, "_xdp_drops");
	uint64_t first = xt_now_ticks();
	send_frames(peer_ifi, peer_mac, dev_mac, CLI4, SRV4);
	uint64_t last = xt_now_ticks();
	uint64_t sent = xt_tx_packets(PEER) - tx0;
	uint64_t xdp_tx = ethtool_stat(DEV, "_xdp_tx") - xtx0, xdp_drops = ethtool_stat(PEER, "_xdp_drops") - xdrop0;

	struct xp_meas_stats ms, cs;
	assert_int_equal(server_prog_read_meas_stats(sp, slot, &ms), 0);
	assert_int_equal(rtt_prog_read_meas_stats(rp, &cs), 0);
	uint64_t st[XP_RTT_NSTATS];
	assert_int_equal(rtt_prog_read_stats(rp, st), 0);
	struct xp_lat_hist h;
	memset(&h, 0, sizeof(h));
	h.min = UINT64_MAX;
	assert_int_equal(rtt_prog_read_ibin(rp, 0, &h), 0);
	struct xp_stream_figs f[2];
	assert_int_equal(rtt_prog_read_streams(rp, f, 2), 1);

	fprintf(stderr,
		"figures: %s/%s mode: sent %llu (kernel tx %llu), server reflected %llu (veth xdp_tx %llu), client "
		"timed %llu (veth xdp_drops %llu), lost %llu, round trip %.1f..%.1f us mean %.1f us\n",
		m1, m2, (unsigned long long)NSENT, (unsigned long long)sent, (unsigned long long)ms.reflected,
		(unsigned long long)xdp_tx, (unsigned long long)st[XP_RTT_TIMED], (unsigned long long)xdp_drops,
		(unsigned long long)(f[0].next_exp - f[0].recv), h.min * 4 / 1e3, h.max * 4 / 1e3,
		h.n ? (double)h.sum / (double)h.n * 4 / 1e3 : 0.0);
	assert_int_equal(sent, NSENT);
	assert_int_equal(ms.stamped, NSENT);
	assert_int_equal(ms.reflected, NSENT);
	assert_int_equal(xdp_tx, NSENT);
	assert_int_equal(st[XP_RTT_TIMED], NSENT);
	assert_int_equal(cs.stamped, NSENT);
	assert_int_equal(xdp_drops, NSENT);
	assert_int_equal(f[0].recv, NSENT);
	assert_int_equal(f[0].next_exp, NSENT + 3); /* three left out: lost 3 */
	assert_int_equal(f[0].dup, 0);
	assert_int_equal(h.recv, NSENT);
	assert_int_equal(h.n, NSENT);
	assert_int_equal(h.clock_neg, 0);
	assert_true(h.max <= last - first); /* each round trip within the sending's span */

	/* The link goes with the program: nothing left on the client's end. */
	rtt_prog_close(rp);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	assert_int_equal(bpf_xdp_query((int)peer_ifi, 0, &q), 0);
	assert_int_equal(q.prog_id, 0);
	server_prog_slot_free(sp, slot);
	server_prog_detach(sp, (int)ifi);
	server_prog_close(sp);
}


/* ---- through a router ------------------------------------------------ */

/* Three named namespaces of this test's own (client -> router -> server),
 * removed at exit: the reflected frames cross a forwarding kernel, which
 * checks their IPv4 header checksum (a bad one is dropped and counted in
 * InHdrErrors / InCsumErrors) and counts what it forwards. */
#define NS_C "xprt-c"
#define NS_R "xprt-r"
#define NS_S "xprt-s"
#define RC4  "198.18.238.2"   /* client */
#define RR4A "198.18.238.1"   /* router, client side */
#define RR4B "198.18.239.1"   /* router, server side */
#define RS4  "198.18.239.2"   /* server */

static int home_fd = -1;

static void enter(const char *ns)
{
	char path[128];
	int fd;

	if (!ns) {
		assert_int_equal(setns(home_fd, CLONE_NEWNET), 0);
		return;
	}
	snprintf(path, sizeof(path), "/var/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(setns(fd, CLONE_NEWNET), 0);
	close(fd);
}

/* A counter of this namespace's /proc/net/snmp or /proc/net/netstat: the
 * line pair whose first word is group ("Ip:", "IpExt:"), the column name. */
static uint64_t proc_stat(const char *file, const char *group, const char *name)
{
	FILE *f = fopen(file, "r");
	char head[4096], vals[4096];
	uint64_t v = UINT64_MAX;

	assert_non_null(f);
	while (fgets(head, sizeof(head), f) && fgets(vals, sizeof(vals), f)) {
		if (strncmp(head, group, strlen(group)))
			continue;
		char *hs, *vs, *h = strtok_r(head, " \n", &hs), *x = strtok_r(vals, " \n", &vs);
		while ((h = strtok_r(NULL, " \n", &hs)) && (x = strtok_r(NULL, " \n", &vs)))
			if (!strcmp(h, name))
				v = strtoull(x, NULL, 10);
	}
	fclose(f);
	assert_true(v != UINT64_MAX);
	return v;
}

static int sh(const char *cmd)
{
	int r = system(cmd);

	if (r)
		fprintf(stderr, "test_rtt_veth: failed (%d): %s\n", r, cmd);
	return r;
}

static void test_round_trip_routed(void **state)
{
	struct server_prog *sp = NULL;
	struct rtt_prog *rp = NULL;
	struct xp_netdev d;
	struct xp_addr cli;
	const char *m1, *m2;
	char err[256];
	uint8_t cmac[6], rmac[6];

	(void)state;
	if (xp_netns("add", "--no-ipv6", NS_C, NS_R, NS_S))
		fail_msg("namespaces");
	xp_netns_remove_at_exit(NS_C);
	xp_netns_remove_at_exit(NS_R);
	xp_netns_remove_at_exit(NS_S);
	if (xp_netns("pair", NS_C, "xprtc0", NS_R, "xprtr0") || xp_netns("pair", NS_R, "xprtr1", NS_S, "xprts0") ||
	    xp_netns("addr", NS_C, "xprtc0", RC4 "/24") || xp_netns("addr", NS_R, "xprtr0", RR4A "/24") ||
	    xp_netns("addr", NS_R, "xprtr1", RR4B "/24") || xp_netns("addr", NS_S, "xprts0", RS4 "/24") ||
	    xp_netns("gro", NS_R, "xprtr0", "xprtr1") ||
	    sh("ip -n " NS_C " route add 198.18.239.0/24 via " RR4A) ||
	    sh("ip -n " NS_S " route add 198.18.238.0/24 via " RR4B) ||
	    sh("ip netns exec " NS_R " sysctl -qw net.ipv4.ip_forward=1") ||
	    /* The router's neighbours resolved before the burst: nothing waits
	     * in its ARP queue. */
	    sh("ip netns exec " NS_R " ping -q -c1 -W2 " RC4 " >/dev/null") ||
	    sh("ip netns exec " NS_R " ping -q -c1 -W2 " RS4 " >/dev/null"))
		fail_msg("lab setup");

	enter(NS_R);
	unsigned rin = if_nametoindex("xprtr0");
	assert_int_equal(xp_netdev_by_index((int)rin, &d), 0);
	memcpy(rmac, d.mac, 6);

	enter(NS_S);
	unsigned sifi = if_nametoindex("xprts0");
	/* reply_redirect, as the server runs connection tests on veth: an
	 * XDP_TX from a veth's native XDP wakes the peer's NAPI only when the
	 * peer has an XDP program (veth_xdp_flush); the router's end has GRO
	 * but none, so XDP_TX'd reflections sat in its ring (seen: server
	 * xdp_tx 200, router IpInReceives 0 of them). bpf_redirect's flush
	 * (ndo_xdp_xmit) wakes it. */
	assert_int_equal(server_prog_open(&sp, 5305, true, err, sizeof(err)), 0);
	assert_int_equal(server_prog_attach(sp, (int)sifi, XP_XDP_NATIVE, &m1, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse(RC4, &cli), 0);
	int slot = server_prog_slot_alloc(sp, PORT, PORT, XP_PROTO_UDP, XP_SLOT_REFLECT, XP_CLOSE_NONE, (int)sifi, &cli,
					  NULL, 0, err, sizeof(err));
	if (slot < 0)
		fail_msg("slot: %s", err);
	uint64_t t0 = xt_now_ticks() - SEC_TICKS / 2;
	struct xp_slot_meas sm = { .t0 = t0, .ival = 10 * SEC_TICKS, .flags = 0 };
	assert_int_equal(server_prog_meas_start(sp, slot, &sm), 0);

	enter(NS_C);
	unsigned cifi = if_nametoindex("xprtc0");
	assert_int_equal(xp_netdev_by_index((int)cifi, &d), 0);
	memcpy(cmac, d.mac, 6);
	struct rtt_prog_cfg rc = { .port_lo = PORT, .port_hi = PORT, .protos = XP_PROTO_UDP };
	assert_int_equal(xp_addr_parse(RS4, &rc.server), 0);
	rc.client = cli;
	if (rtt_prog_open(&rc, &rp, err, sizeof(err)) || rtt_prog_attach(rp, (int)cifi, XP_XDP_NATIVE, &m2, err,
									   sizeof(err)))
		fail_msg("rtt: %s", err);
	struct xp_slot_meas cm = { .t0 = t0, .ival = 10 * SEC_TICKS, .flags = XP_MEAS_ONEWAY };
	assert_int_equal(rtt_prog_meas_start(rp, &cm), 0);

	enter(NS_R);
	uint64_t fw0 = proc_stat("/proc/net/snmp", "Ip:", "ForwDatagrams");
	uint64_t he0 = proc_stat("/proc/net/snmp", "Ip:", "InHdrErrors");
	uint64_t ce0 = proc_stat("/proc/net/netstat", "IpExt:", "InCsumErrors");
	enter(NS_C);
	uint64_t tx0 = xt_tx_packets("xprtc0"), xd0 = ethtool_stat("xprtc0", "_xdp_drops");
	uint64_t first = xt_now_ticks();
	send_frames(cifi, cmac, rmac, RC4, RS4);
	uint64_t last = xt_now_ticks();
	uint64_t sent = xt_tx_packets("xprtc0") - tx0, xdrops = ethtool_stat("xprtc0", "_xdp_drops") - xd0;
	enter(NS_R);
	uint64_t fw = proc_stat("/proc/net/snmp", "Ip:", "ForwDatagrams") - fw0;
	uint64_t he = proc_stat("/proc/net/snmp", "Ip:", "InHdrErrors") - he0;
	uint64_t ce = proc_stat("/proc/net/netstat", "IpExt:", "InCsumErrors") - ce0;
	enter(NS_S);
	uint64_t xtx = ethtool_stat("xprts0", "_xdp_redirect");

	struct xp_meas_stats ms;
	assert_int_equal(server_prog_read_meas_stats(sp, slot, &ms), 0);
	uint64_t st[XP_RTT_NSTATS];
	assert_int_equal(rtt_prog_read_stats(rp, st), 0);
	struct xp_lat_hist h;
	memset(&h, 0, sizeof(h));
	h.min = UINT64_MAX;
	assert_int_equal(rtt_prog_read_ibin(rp, 0, &h), 0);
	struct xp_stream_figs f[2];
	memset(f, 0, sizeof(f));
	int nstreams = rtt_prog_read_streams(rp, f, 2);
	fprintf(stderr,
		"figures: routed, %s/%s: sent %llu (kernel tx %llu), router forwarded %llu (both ways; header "
		"errors %llu, checksum errors %llu), server reflected %llu (veth xdp_redirect %llu), client timed %llu "
		"(veth xdp_drops %llu), lost %llu, round trip %.1f..%.1f us mean %.1f us\n",
		m1, m2, (unsigned long long)NSENT, (unsigned long long)sent, (unsigned long long)fw,
		(unsigned long long)he, (unsigned long long)ce, (unsigned long long)ms.reflected,
		(unsigned long long)xtx, (unsigned long long)st[XP_RTT_TIMED], (unsigned long long)xdrops,
		(unsigned long long)(f[0].next_exp - f[0].recv), h.min * 4 / 1e3, h.max * 4 / 1e3,
		h.n ? (double)h.sum / (double)h.n * 4 / 1e3 : 0.0);
	assert_int_equal(nstreams, 1);
	assert_int_equal(sent, NSENT);
	assert_int_equal(fw, 2 * NSENT);
	assert_int_equal(he + ce, 0);
	assert_int_equal(ms.reflected, NSENT);
	assert_int_equal(xtx, NSENT);
	assert_int_equal(st[XP_RTT_TIMED], NSENT);
	assert_int_equal(xdrops, NSENT);
	assert_int_equal(f[0].recv, NSENT);
	assert_int_equal(f[0].next_exp, NSENT + 3);
	assert_int_equal(h.n, NSENT);
	assert_int_equal(h.clock_neg, 0);
	assert_true(h.max <= last - first);

	enter(NS_C);
	rtt_prog_close(rp);
	enter(NS_S);
	server_prog_slot_free(sp, slot);
	server_prog_detach(sp, (int)sifi);
	server_prog_close(sp);
	enter(NULL);
	xp_netns("del", NS_C, NS_R, NS_S);
}

static void test_round_trip_native(void **state) { (void)state; round_trip(XP_XDP_NATIVE); }

static int group_setup(void **state)
{
	struct xt_veth v;

	(void)state;
	home_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home_fd < 0)
		return -1;
	if (xt_veth_private("test_rtt_veth", false, DEV, PEER, &v) || xp_netns("addr", "-", DEV, SRV4 "/24") ||
	    xp_netns("addr", "-", PEER, CLI4 "/24"))
		return -1;
	ifi = v.ifi;
	peer_ifi = v.peer_ifi;
	memcpy(dev_mac, v.mac, 6);
	memcpy(peer_mac, v.peer_mac, 6);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_native),
		cmocka_unit_test(test_round_trip_routed),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
