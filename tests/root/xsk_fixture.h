/*
 * What the AF_XDP engine's veth tests share (test_xsk_connect.c,
 * test_xsk_stream.c): the namespace with its veth pair, made once per binary
 * by group_setup and removed by group_teardown, at exit and on
 * SIGINT/SIGTERM/SIGALRM; the engine configuration every case starts from;
 * the AF_PACKET capture on the far end, checked against DEV_RX's own
 * rx_packets counter. Both binaries use the same fixed names: run them one
 * at a time, under the shared lock (tests/run.sh runs them in turn).
 * Functions are static inline: not every test file uses every one.
 *
 *   netns xpxc-a:  xpxca0 (engine, AF_XDP, 2 queues) <--veth--> xpxcb0 (capture)
 */
#ifndef XDPPERF_TESTS_XSK_FIXTURE_H
#define XDPPERF_TESTS_XSK_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <linux/if_link.h>
#include <poll.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
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
#include <time.h>
#include <unistd.h>

#include "bpf/lib/stamp.h"
#include "bpf/measure.h"
#include "frame/csum.h"
#include "engine/engine.h"
#include "frame/frame.h"
#include "util/time.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/ref_sum.h"

#define NS      "xpxc-a"
#define DEV_TX  "xpxca0"
#define DEV_RX  "xpxcb0"
#define MAXCAP  40000

static const struct xp_engine_ops *ops = &xp_engine_xsk;

static uint8_t mac_tx[6], mac_rx[6];
static int ifindex_tx, ifindex_rx;
static int orig_ns = -1;

/* The engine and capture socket of the running case, for teardown. */
static struct xp_engine *eng;
static int cap_fd = -1;
/* DEV_RX's rx_packets when the case's capture opened: the kernel's own count
 * of what arrived, a yardstick neither the engine nor the capture wrote. */
static uint64_t rx_base;

/* ---- namespace ------------------------------------------------------- */
/* Made by tests/lib/netns.sh (xp_netns), removed at exit and on
 * SIGINT/SIGTERM/SIGALRM (xp_netns_remove_at_exit) or by group_teardown. */

static inline int dev_info(const char *dev, uint8_t mac[6], int *ifindex)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r = -1;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	*ifindex = (int)if_nametoindex(dev);
	if (s >= 0 && *ifindex && !ioctl(s, SIOCGIFHWADDR, &ifr)) {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		r = 0;
	}
	if (s >= 0)
		close(s);
	return r;
}

static inline int dev_set_mtu(const char *dev, int mtu)
{
	struct ifreq ifr = { .ifr_mtu = mtu };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	r = s >= 0 ? ioctl(s, SIOCSIFMTU, &ifr) : -1;
	if (r)
		print_error("cannot set the MTU of %s to %d: %s\n", dev, mtu, strerror(errno));
	if (s >= 0)
		close(s);
	return r;
}

static inline bool dev_running(const char *dev)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bool up;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", dev);
	up = s >= 0 && !ioctl(s, SIOCGIFFLAGS, &ifr) && (ifr.ifr_flags & IFF_RUNNING);
	if (s >= 0)
		close(s);
	return up;
}

static inline int group_setup(void **state)
{
	int fd;

	xp_netns_remove_at_exit(NS);
	/* (A leftover of an earlier, killed run is deleted first.) IPv6 off
	 * before the links exist: no ND/MLD frames in the capture. Two queues
	 * each side, both ends up. */
	if (xp_netns("add", "--no-ipv6", NS) || xp_netns("pair", NS, DEV_TX, NS, DEV_RX, "2"))
		return -1;
	orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	fd = open("/var/run/netns/" NS, O_RDONLY | O_CLOEXEC);
	/* The whole process moves: the engine's sockets and threads (created
	 * later, by this thread) live in the namespace. */
	if (orig_ns < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		print_error("cannot enter netns %s: %s\n", NS, strerror(errno));
		return -1;
	}
	close(fd);
	if (dev_info(DEV_TX, mac_tx, &ifindex_tx) || dev_info(DEV_RX, mac_rx, &ifindex_rx))
		return -1;
	/* Jumbo frames (up to -l 9018) fit both ends. */
	if (dev_set_mtu(DEV_TX, 9000) || dev_set_mtu(DEV_RX, 9000))
		return -1;
	for (double end = xp_now() + 10; !(dev_running(DEV_TX) && dev_running(DEV_RX));) {
		if (xp_now() > end) {
			print_error("veth not running after 10 s\n");
			return -1;
		}
		xp_sleep(0.02);
	}
	return 0;
}

static inline int group_teardown(void **state)
{
	if (orig_ns >= 0)
		setns(orig_ns, CLONE_NEWNET);
	xp_netns_unlink(NS);
	return 0;
}

static inline int case_teardown(void **state)
{
	if (eng) {
		ops->destroy(eng);
		eng = NULL;
	}
	if (cap_fd >= 0)
		close(cap_fd);
	cap_fd = -1;
	return 0;
}

/* ---- engine configuration -------------------------------------------- */

static inline void base_cfg(struct xp_engine_cfg *c, enum xp_test_kind kind, bool v6)
{
	struct frame_spec *t = &c->frames.tmpl;

	memset(c, 0, sizeof(*c));
	c->kind = kind;
	memcpy(t->src_mac, mac_tx, 6);
	memcpy(t->dst_mac, mac_rx, 6);
	assert_int_equal(xp_addr_parse(v6 ? "2001:2:0:220::1" : "198.18.220.1", &t->src), 0);
	assert_int_equal(xp_addr_parse(v6 ? "2001:2:0:220::2" : "198.18.220.2", &t->dst), 0);
	t->l4_proto = IPPROTO_TCP;
	t->tcp_flags = TH_SYN;
	t->tcp_syn_options = true;
	t->no_payload = true;
	t->window = 64240;
	t->seq = 0x01020304;
	c->sport_lo = 10000;
	c->sport_hi = 10099;
	c->dport_lo = 63000;
	c->dport_hi = 63003;
	t->sport = c->sport_lo;
	t->dport = c->dport_lo;
	snprintf(c->ifname, sizeof(c->ifname), "%s", DEV_TX);
	c->ifindex = ifindex_tx;
	c->frames.queues = 1;
	c->max_seconds = 10;
	c->server = t->dst;
}

/* ---- capture ----------------------------------------------------------- */

struct cap {
	struct xp_addr src;
	uint16_t sport, dport;
	uint32_t seq;
	uint8_t flags;
	uint64_t stamp;   /* stream tests: the stamp read back (xp_stamp_pack layout) */
};

/* DEV_RX's interface counter, through getifaddrs (the netlink link stats of
 * the namespace this process is in). */
static inline uint64_t dev_rx_packets(void)
{
	struct ifaddrs *ifa, *i;
	uint64_t n = UINT64_MAX;

	assert_int_equal(getifaddrs(&ifa), 0);
	for (i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && i->ifa_addr->sa_family == AF_PACKET && i->ifa_data && !strcmp(i->ifa_name, DEV_RX))
			n = ((struct rtnl_link_stats *)i->ifa_data)->rx_packets;
	freeifaddrs(ifa);
	assert_true(n != UINT64_MAX);
	return n;
}

/* The tests' one RFC 1071 reference (tests/lib/ref_sum.h), independent of
 * user/frame/csum.c under test, over the pseudo-header's addresses (with
 * pseudo: proto and len too) and the segment; 0 when the checksum in the
 * segment is right. For an IPv4 header: alen 0, proto 0, no pseudo, seg =
 * the header. */
static inline uint16_t ref_sum_proto(const uint8_t *src, const uint8_t *dst, size_t alen, uint8_t proto, const uint8_t *seg,
			      size_t len, bool pseudo)
{
	uint32_t sum = ref_sum_add(dst, alen, ref_sum_add(src, alen, pseudo ? proto + (uint32_t)len : 0));

	return (uint16_t)~ref_sum_add(seg, len, sum);
}

static inline void capture_open(void)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = ifindex_rx };
	int sz = 64 << 20;

	cap_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	assert_true(cap_fd >= 0);
	/* Everything stays queued until the case reads it after stop(). */
	assert_int_equal(setsockopt(cap_fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)), 0);
	assert_int_equal(bind(cap_fd, (struct sockaddr *)&sll, sizeof(sll)), 0);
	rx_base = dev_rx_packets();
}

/* Read the capture: wait (poll, 10-s deadline for a hang) until `want`
 * frames are in, the engine's count, then take whatever else is already
 * queued, so a frame too many still shows. The test frames, in arrival
 * order; returns how many, after checking them against DEV_RX's own
 * rx_packets counter. */
typedef void check_fn(const struct xp_engine_cfg *c, const uint8_t *f, size_t len, struct cap *out);

static inline size_t capture_read_with(const struct xp_engine_cfg *c, struct cap *caps, size_t max, uint64_t want,
				check_fn *check)
{
	uint8_t buf[9216]; /* a jumbo frame whole (-l 9018) */
	size_t n = 0;
	double end = xp_now() + 10;

	for (;;) {
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t r = recvfrom(cap_fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
		if (r < 0) {
			assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
			if (n >= want || xp_now() > end)
				break;
			struct pollfd pfd = { .fd = cap_fd, .events = POLLIN };
			poll(&pfd, 1, 100);
			continue;
		}
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		assert_true(n < max);
		check(c, buf, (size_t)r, &caps[n++]);
	}
	/* The capture itself lost nothing: counts below are the engine's. */
	struct tpacket_stats ps;
	socklen_t pl = sizeof(ps);
	assert_int_equal(getsockopt(cap_fd, SOL_PACKET, PACKET_STATISTICS, &ps, &pl), 0);
	assert_int_equal(ps.tp_drops, 0);
	/* The interface counted as many frames as were captured (and
	 * captures consumed so far in this case). */
	uint64_t rx = dev_rx_packets();
	print_message("DEV_RX rx_packets +%llu, captured %zu\n", (unsigned long long)(rx - rx_base), n);
	assert_int_equal(rx - rx_base, n);
	rx_base = rx;
	return n;
}

/* Poll the engine until it has sent n frames; fails after secs (a hang). */
static inline void wait_tx(uint64_t n, double secs)
{
	struct xp_engine_stats st;
	double end = xp_now() + secs;

	for (;;) {
		ops->read(eng, &st);
		if (st.tx.pkts >= n)
			return;
		if (xp_now() > end)
			fail_msg("%llu frames sent after %.0f s, waiting for %llu", (unsigned long long)st.tx.pkts, secs,
				 (unsigned long long)n);
		xp_sleep(0.005);
	}
}

static struct cap caps[MAXCAP];

#endif
