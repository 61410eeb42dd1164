/*
 * The AF_XDP engine's connection tests (user/engine/xsk.c, kinds
 * XP_TEST_CONNECT and XP_TEST_HOLD) and its stamped stream frames on a real
 * veth pair, captured on the far end with an AF_PACKET socket:
 *
 *   netns xpxc-a:  xpxca0 (engine, AF_XDP, 2 queues) <--veth--> xpxcb0 (capture)
 *
 * No IP addresses and no IPv6 on either side: nothing answers, nothing else
 * is sent, the capture holds exactly what the engine sent. Every captured
 * frame is checked with csum.h and compared byte for byte with a fresh
 * frame_build of the tuple and sequence number it carries.
 *
 * Needs root (exits 77 without it, which tests/run.sh counts as a failure). The namespace is removed at
 * the end, on a failed assertion, at exit and on SIGINT/SIGTERM/SIGALRM.
 */
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
#include "net/csum.h"
#include "engine/engine.h"
#include "net/frame.h"
#include "util/time.h"
#include "tests/lib/netns_helper.h"

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

static int dev_info(const char *dev, uint8_t mac[6], int *ifindex)
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

static bool dev_running(const char *dev)
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

static int group_setup(void **state)
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
	for (double end = xp_now() + 10; !(dev_running(DEV_TX) && dev_running(DEV_RX));) {
		if (xp_now() > end) {
			print_error("veth not running after 10 s\n");
			return -1;
		}
		xp_sleep(0.02);
	}
	return 0;
}

static int group_teardown(void **state)
{
	if (orig_ns >= 0)
		setns(orig_ns, CLONE_NEWNET);
	xp_netns_unlink(NS);
	return 0;
}

static int case_teardown(void **state)
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

static void base_cfg(struct xp_engine_cfg *c, enum xp_test_kind kind, bool v6)
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

static void add_bind(struct xp_engine_cfg *c, const char *a)
{
	assert_int_equal(xp_addr_parse(a, &c->bind[c->nbind]), 0);
	c->nbind++;
}

static void start_engine(const struct xp_engine_cfg *c)
{
	char err[256] = "";

	if (ops->create(c, &eng, err, sizeof(err)))
		fail_msg("create: %s", err);
	if (ops->start(eng, err, sizeof(err)))
		fail_msg("start: %s", err);
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
static uint64_t dev_rx_packets(void)
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

/* RFC 1071 sum written out here, independent of user/net/csum.c under test:
 * over the pseudo-header words (with pseudo: proto and len too) and the
 * segment, folded; 0 when the checksum in the segment is right. For an IPv4
 * header: alen 0, proto 0, no pseudo, seg = the header. */
static uint16_t ref_sum_proto(const uint8_t *src, const uint8_t *dst, size_t alen, uint8_t proto, const uint8_t *seg,
			      size_t len, bool pseudo)
{
	uint64_t sum = 0;
	size_t k;

	for (k = 0; k < alen; k += 2)
		sum += (uint32_t)(src[k] << 8 | src[k + 1]) + (uint32_t)(dst[k] << 8 | dst[k + 1]);
	if (pseudo)
		sum += proto + len;
	for (k = 0; k + 1 < len; k += 2)
		sum += (uint32_t)(seg[k] << 8 | seg[k + 1]);
	if (len & 1)
		sum += (uint32_t)seg[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The same for a TCP segment. */
static uint16_t ref_sum(const uint8_t *src, const uint8_t *dst, size_t alen, const uint8_t *seg, size_t len)
{
	return ref_sum_proto(src, dst, alen, IPPROTO_TCP, seg, len, true);
}

static void capture_open(void)
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

/*
 * Check one captured frame completely and extract its tuple: checksums with
 * csum.h, then byte for byte against frame_build of the template with that
 * tuple, seq and flags (a SYN: the template; an RST: no options, ack 0).
 */
static void check_frame(const struct xp_engine_cfg *c, const uint8_t *f, size_t len, struct cap *out)
{
	const struct frame_spec *t = &c->frames.tmpl;
	bool v6 = t->src.family == AF_INET6;
	size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), l4_len;
	uint8_t want[256];
	struct frame_spec s;
	uint32_t sum;

	assert_true(len >= 60);
	assert_memory_equal(f, mac_rx, 6);
	assert_memory_equal(f + 6, mac_tx, 6);
	assert_int_equal(f[12] << 8 | f[13], v6 ? ETH_P_IPV6 : ETH_P_IP);
	memset(out, 0, sizeof(*out));
	out->src.family = t->src.family;
	if (v6) {
		assert_int_equal(f[l3] >> 4, 6);
		assert_int_equal(f[l3 + 6], IPPROTO_TCP);
		l4_len = (size_t)(f[l3 + 4] << 8 | f[l3 + 5]);
		memcpy(&out->src.v6, f + l3 + 8, 16);
		assert_memory_equal(f + l3 + 24, &t->dst.v6, 16);
		assert_true(l4 + l4_len <= len);
		sum = csum_pseudo_v6(&out->src.v6, &t->dst.v6, IPPROTO_TCP, (uint32_t)l4_len, 0);
	} else {
		assert_int_equal(f[l3], 0x45);
		assert_int_equal(f[l3 + 9], IPPROTO_TCP);
		assert_int_equal(csum_ipv4_hdr(f + l3, 20), 0); /* IPv4 header checksum */
		l4_len = (size_t)(f[l3 + 2] << 8 | f[l3 + 3]) - 20;
		memcpy(&out->src.v4, f + l3 + 12, 4);
		assert_memory_equal(f + l3 + 16, &t->dst.v4, 4);
		assert_true(l4 + l4_len <= len);
		sum = csum_pseudo_v4(&out->src.v4, &t->dst.v4, IPPROTO_TCP, (uint32_t)l4_len, 0);
	}
	/* TCP checksum over pseudo-header, header and options: by csum.h and
	 * by the test's own RFC 1071 sum */
	assert_int_equal(csum_fold(csum_partial(f + l4, l4_len, sum)), 0);
	if (v6)
		assert_int_equal(ref_sum(f + l3 + 8, f + l3 + 24, 16, f + l4, l4_len), 0);
	else
		assert_int_equal(ref_sum(f + l3 + 12, f + l3 + 16, 4, f + l4, l4_len), 0);
	out->sport = (uint16_t)(f[l4] << 8 | f[l4 + 1]);
	out->dport = (uint16_t)(f[l4 + 2] << 8 | f[l4 + 3]);
	out->seq = (uint32_t)f[l4 + 4] << 24 | (uint32_t)f[l4 + 5] << 16 | (uint32_t)f[l4 + 6] << 8 | f[l4 + 7];
	out->flags = f[l4 + 13];
	assert_true(out->flags == TH_SYN || out->flags == TH_RST);

	s = *t;
	s.src = out->src;
	s.sport = out->sport;
	s.dport = out->dport;
	s.seq = out->seq;
	if (out->flags == TH_RST) {
		s.tcp_flags = TH_RST;
		s.tcp_syn_options = false;
		s.ack = 0;
	}
	size_t n = frame_build(&s, want, sizeof(want), NULL);
	assert_int_equal(n, len);
	if (memcmp(want, f, n))
		fail_msg("captured frame differs from a fresh build of its tuple");
}

/* Read the capture: wait (poll, 10-s deadline for a hang) until `want`
 * frames are in, the engine's count, then take whatever else is already
 * queued, so a frame too many still shows. The test frames, in arrival
 * order; returns how many, after checking them against DEV_RX's own
 * rx_packets counter. */
typedef void check_fn(const struct xp_engine_cfg *c, const uint8_t *f, size_t len, struct cap *out);

static size_t capture_read_with(const struct xp_engine_cfg *c, struct cap *caps, size_t max, uint64_t want,
				check_fn *check)
{
	uint8_t buf[2048];
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

static size_t capture_read(const struct xp_engine_cfg *c, struct cap *caps, size_t max, uint64_t want)
{
	return capture_read_with(c, caps, max, want, check_frame);
}

/* The tuple number of a captured frame, by the documented mapping (see
 * user/engine/tuples.h): address fastest, then destination port, then source. */
static uint64_t tuple_no(const struct xp_engine_cfg *c, const struct cap *k)
{
	uint64_t nd = c->dport_hi - c->dport_lo + 1u, na = c->nbind ? c->nbind : 1;
	uint64_t a = 0;

	for (unsigned i = 0; i < c->nbind; i++)
		if (xp_addr_eq(&c->bind[i], &k->src))
			a = i + 1;
	if (c->nbind)
		assert_true(a > 0); /* one of the bind addresses */
	else
		assert_true(xp_addr_eq(&c->frames.tmpl.src, &k->src));
	assert_true(k->sport >= c->sport_lo && k->sport <= c->sport_hi);
	assert_true(k->dport >= c->dport_lo && k->dport <= c->dport_hi);
	return (((uint64_t)(k->sport - c->sport_lo) * nd) + (k->dport - c->dport_lo)) * na + (a ? a - 1 : 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Poll the engine until it has sent n frames; fails after secs (a hang). */
static void wait_tx(uint64_t n, double secs)
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
static uint64_t tno[MAXCAP];

/* ---- cases ------------------------------------------------------------- */

/* A connect test at pps for secs on one queue, over 2 source addresses and
 * a tuple space (2 x 100 x 4 = 800) it wraps several times. */
static void connect_one_queue(bool v6, double pps, double secs)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	uint64_t space;
	size_t n, i, expect = (size_t)(pps * secs);
	double t0;

	base_cfg(&c, XP_TEST_CONNECT, v6);
	add_bind(&c, v6 ? "2001:2:0:220::10" : "198.18.220.10");
	add_bind(&c, v6 ? "2001:2:0:220::11" : "198.18.220.11");
	space = 2 * 100 * 4;
	c.pps = pps;
	capture_open();
	t0 = xp_now();
	start_engine(&c);
	/* Until `expect` SYNs are out: a count, not a sleep (the rate's accuracy
	 * is the bench's and 50_live's business, not a timed unit test's). */
	wait_tx(expect, 30);
	ops->stop(eng);
	t0 = xp_now() - t0;
	ops->read(eng, &st);
	n = capture_read(&c, caps, MAXCAP, st.tx.pkts);
	print_message("sent %llu SYNs (%llu bytes) in %.3f s, captured %zu\n", (unsigned long long)st.tx.pkts,
		      (unsigned long long)st.tx.bytes, t0, n);

	assert_int_equal(n, st.tx.pkts);
	assert_int_equal(st.tx.bytes, st.tx.pkts * (v6 ? 94 : 74));
	assert_int_equal(st.tx.rst_sent, 0);
	assert_int_equal(st.tx.errors, 0);
	assert_true(n >= expect);
	/* Paced, whatever the load: a machine can only be slower than asked,
	 * never faster (one burst of slack). */
	assert_true(n <= pps * t0 + 64);
	for (i = 0; i < n; i++) {
		assert_int_equal(caps[i].flags, TH_SYN);
		tno[i] = tuple_no(&c, &caps[i]);
		/* connection i: tuple i mod space, addresses round robin */
		assert_int_equal(tno[i], i % space);
		assert_true(xp_addr_eq(&caps[i].src, &c.bind[i % 2]));
		/* a tuple's next use is a new connection: another ISN */
		if (i >= space)
			assert_int_not_equal(caps[i].seq, caps[i - space].seq);
	}
	/* Distinct tuples among the first `space` SYNs, whatever the mapping. */
	qsort(tno, space, sizeof(tno[0]), cmp_u64);
	for (i = 1; i < space; i++)
		assert_true(tno[i] != tno[i - 1]);
}

static void test_connect_v4(void **state)
{
	connect_one_queue(false, 5000, 0.5);
}

static void test_connect_v6(void **state)
{
	connect_one_queue(true, 5000, 0.5);
}

/* 20000 SYNs through a 4096-frame UMEM: every frame is rewritten about 5
 * times, always after its completion. A frame rewritten too early would show
 * as a tuple out of sequence or a frame that is not a fresh build. */
static void test_connect_frame_reuse(void **state)
{
	connect_one_queue(false, 50000, 0.4);
}

/* Two queues, two threads: thread q sends connections q, q+2, q+4...; all
 * distinct in a large tuple space, and each thread's numbers contiguous. */
static void test_connect_two_queues(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	uint64_t cnt[2] = { 0, 0 }, max[2] = { 0, 0 };
	size_t n, i;

	base_cfg(&c, XP_TEST_CONNECT, false);
	c.sport_hi = 59999;
	c.dport_hi = 63015;
	c.frames.queues = 2;
	c.pps = 5000;
	capture_open();
	start_engine(&c);
	wait_tx(2000, 30);
	ops->stop(eng);
	ops->read(eng, &st);
	n = capture_read(&c, caps, MAXCAP, st.tx.pkts);
	print_message("sent %llu SYNs, captured %zu\n", (unsigned long long)st.tx.pkts, n);
	assert_int_equal(n, st.tx.pkts);
	assert_true(n >= 2000 && n < MAXCAP);
	for (i = 0; i < n; i++) {
		tno[i] = tuple_no(&c, &caps[i]);
		cnt[tno[i] % 2]++;
		if (tno[i] + 1 > max[tno[i] % 2])
			max[tno[i] % 2] = tno[i] + 1;
	}
	qsort(tno, n, sizeof(tno[0]), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(tno[i] != tno[i - 1]);
	/* thread 0: 0, 2, .. 2(cnt-1); thread 1: 1, 3, .. 2cnt-1 */
	assert_int_equal(max[0], cnt[0] ? 2 * cnt[0] - 1 : 0);
	assert_int_equal(max[1], 2 * cnt[1]);
	assert_true(cnt[0] > 0 && cnt[1] > 0);
}

/* Hold 300 connections: exactly 300 SYNs, then nothing until stop, then
 * exactly 300 RSTs, each on a SYN's tuple with seq = that SYN's ISN + 1. */
static void test_hold_300(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	static struct cap syn[300];
	size_t n, i, j, nsyn = 0;
	bool matched[300] = { false };

	base_cfg(&c, XP_TEST_HOLD, false);
	add_bind(&c, "198.18.220.10");
	add_bind(&c, "198.18.220.11");
	c.parallel = 300;
	c.frames.queues = 1;
	c.debug = 1;
	capture_open();
	start_engine(&c);
	wait_tx(300, 30);
	/* Held: nothing more may go out. An observation period, not a
	 * synchronisation: load can only hide an extra frame, never add one. */
	xp_sleep(0.3);
	ops->read(eng, &st);
	assert_int_equal(st.tx.pkts, 300);
	assert_int_equal(st.tx.rst_sent, 0);
	n = capture_read(&c, caps, MAXCAP, 300);
	assert_int_equal(n, 300);
	for (i = 0; i < n; i++) {
		assert_int_equal(caps[i].flags, TH_SYN);
		syn[nsyn++] = caps[i];
		tno[i] = tuple_no(&c, &caps[i]);
	}
	qsort(tno, n, sizeof(tno[0]), cmp_u64);
	for (i = 1; i < n; i++)
		assert_true(tno[i] != tno[i - 1]);

	double t = xp_now();
	ops->stop(eng);
	t = xp_now() - t;
	ops->read(eng, &st);
	print_message("stop took %.3f s; SYNs %llu, RSTs %llu\n", t, (unsigned long long)st.tx.pkts,
		      (unsigned long long)st.tx.rst_sent);
	assert_true(t < 2.5);
	assert_int_equal(st.tx.pkts, 300);
	assert_int_equal(st.tx.rst_sent, 300);
	n = capture_read(&c, caps, MAXCAP, 300);
	assert_int_equal(n, 300);
	for (i = 0; i < n; i++) {
		assert_int_equal(caps[i].flags, TH_RST);
		for (j = 0; j < nsyn; j++)
			if (caps[i].sport == syn[j].sport && caps[i].dport == syn[j].dport &&
			    xp_addr_eq(&caps[i].src, &syn[j].src))
				break;
		if (j == nsyn)
			fail_msg("RST %zu (%u -> %u) matches no SYN", i, caps[i].sport, caps[i].dport);
		assert_false(matched[j]);
		matched[j] = true;
		assert_int_equal(caps[i].seq, syn[j].seq + 1);
	}
}

/* A hold test stopped before it has sent everything closes what it sent. */
static void test_hold_stopped_early(void **state)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	size_t n, i, nsyn = 0, nrst = 0;

	base_cfg(&c, XP_TEST_HOLD, false);
	c.sport_hi = 59999;
	c.parallel = 100000;
	c.pps = 2000;
	capture_open();
	start_engine(&c);
	wait_tx(300, 30); /* some sent, far from all 100000 */
	ops->stop(eng);
	ops->read(eng, &st);
	n = capture_read(&c, caps, MAXCAP, st.tx.pkts + st.tx.rst_sent);
	for (i = 0; i < n; i++) {
		if (caps[i].flags == TH_SYN) {
			assert_int_equal(nrst, 0); /* every SYN before the first RST */
			nsyn++;
		} else {
			nrst++;
		}
	}
	print_message("SYNs %zu, RSTs %zu\n", nsyn, nrst);
	assert_true(nsyn >= 300 && nsyn < c.parallel);
	assert_int_equal(nsyn, st.tx.pkts);
	assert_int_equal(nrst, nsyn);
	assert_int_equal(st.tx.rst_sent, nrst);
}

/* ---- stream tests with stamps ------------------------------------------ */

#define STAMP_BASE 9
#define STAMP_IVAL (250000000ull >> XP_STAMP_TICK_SHIFT) /* 250 ms */

static uint64_t clock_ticks(bool tai)
{
	struct timespec ts;

	clock_gettime(tai ? CLOCK_TAI : CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

static void stream_cfg(struct xp_engine_cfg *c, bool v6, uint8_t proto, size_t size, unsigned queues)
{
	struct frame_spec *t = &c->frames.tmpl;

	base_cfg(c, XP_TEST_STREAM, v6);
	t->l4_proto = proto;
	t->tcp_flags = TH_ACK | TH_PUSH;
	t->tcp_syn_options = false;
	t->no_payload = false;
	t->window = 0;
	t->seq = 1;
	t->ack = 1;
	t->frame_size = size;
	t->payload_fill = 0x5a;
	c->frames.queues = queues;
	c->frames.stamp.ival = STAMP_IVAL;
	c->frames.stamp.stream_base = STAMP_BASE;
}

/*
 * A captured stream frame: IPv4 header and L4 checksums by the test's own
 * RFC 1071 sum and by csum.h; every byte but the stamp and the checksums
 * equal to a fresh frame_build with the frame's ports; the stamp read back
 * from where lib/stamp.h puts it (payload, or IPv4 ID + payload).
 */
static void check_stream_frame(const struct xp_engine_cfg *c, const uint8_t *f, size_t len, struct cap *out)
{
	const struct frame_spec *t = &c->frames.tmpl;
	bool v6 = t->src.family == AF_INET6;
	size_t l3 = 14, l4 = l3 + (v6 ? 40 : 20), l4_len, ck;
	uint8_t want[2048], a[2048], st[8];
	struct frame_spec s = *t;
	struct frame_layout lay;

	assert_int_equal(len, t->frame_size - 4);
	assert_int_equal(frame_layout_of(t, &lay, NULL), 0);
	memset(out, 0, sizeof(*out));
	if (v6) {
		l4_len = (size_t)(f[l3 + 4] << 8 | f[l3 + 5]);
		assert_int_equal(ref_sum_proto(f + l3 + 8, f + l3 + 24, 16, t->l4_proto, f + l4, l4_len, true), 0);
	} else {
		assert_int_equal(ref_sum_proto(NULL, NULL, 0, 0, f + l3, 20, false), 0);
		assert_int_equal(csum_ipv4_hdr(f + l3, 20), 0);
		l4_len = (size_t)(f[l3 + 2] << 8 | f[l3 + 3]) - 20;
		assert_int_equal(ref_sum_proto(f + l3 + 12, f + l3 + 16, 4, t->l4_proto, f + l4, l4_len, true), 0);
	}
	assert_true(l4 + l4_len <= len);
	ck = l4 + (t->l4_proto == IPPROTO_TCP ? 16 : 6);
	if (t->l4_proto == IPPROTO_UDP)
		assert_true(f[ck] | f[ck + 1]); /* 0 would mean "no checksum" */
	out->sport = (uint16_t)(f[l4] << 8 | f[l4 + 1]);
	out->dport = (uint16_t)(f[l4 + 2] << 8 | f[l4 + 3]);

	enum xp_stamp_place place = xp_stamp_place_of(v6, lay.payload_len);
	memset(st, 0, sizeof(st));
	if (place == XP_STAMP_AT_PAYLOAD) {
		memcpy(st, f + lay.payload_off, 8);
	} else if (place == XP_STAMP_AT_IPID) {
		memcpy(st, f + l3 + 4, 2);
		memcpy(st + 2, f + lay.payload_off, 6);
	}
	for (int k = 0; k < 8; k++)
		out->stamp = out->stamp << 8 | st[k];

	s.sport = out->sport;
	s.dport = out->dport;
	assert_int_equal(frame_build(&s, want, sizeof(want), NULL), len);
	memcpy(a, f, len);
	/* Mask what the stamp may change: the stamp bytes and the checksums. */
	memset(a + ck, 0, 2);
	memset(want + ck, 0, 2);
	if (place != XP_STAMP_NONE) {
		size_t n = place == XP_STAMP_AT_IPID ? 6 : 8;
		memset(a + lay.payload_off, 0, n);
		memset(want + lay.payload_off, 0, n);
	}
	if (place == XP_STAMP_AT_IPID) {
		memset(a + l3 + 4, 0, 2);
		memset(want + l3 + 4, 0, 2);
		memset(a + l3 + 10, 0, 2);
		memset(want + l3 + 10, 0, 2);
	}
	if (memcmp(a, want, len))
		fail_msg("captured stream frame differs from a fresh build of its ports beyond the stamp");
}

/*
 * A stamped stream test: nframes at pps on `queues` queues, captured on the
 * peer. Every frame carries stream STAMP_BASE + thread, seq 0, 1, 2... per
 * stream in arrival order (a frame rewritten before the kernel was done with
 * it would show as a repeated or missing seq), a send time between t0 and the
 * end of the run, non-decreasing per stream; the engine's sent_in of every
 * interval equals the frames captured with that interval's send times, and
 * all add up to the engine's count and the interface's.
 */
static void stream_stamp_case_clock(bool v6, uint8_t proto, size_t size, unsigned queues, double pps,
				    uint64_t nframes, enum xp_stamp_place place, bool tai)
{
	struct xp_engine_cfg c;
	struct xp_engine_stats st;
	uint64_t next[4] = { 0 }, last[4] = { 0 }, cnt[8] = { 0 }, t0, t1, got;
	size_t n;
	char err[256] = "";

	stream_cfg(&c, v6, proto, size, queues);
	c.pps = pps;
	c.frames.stamp.tai = tai;
	capture_open();
	if (ops->create(&c, &eng, err, sizeof(err)))
		fail_msg("create: %s", err);
	t0 = clock_ticks(tai);
	ops->set_t0(eng, t0);
	if (ops->start(eng, err, sizeof(err)))
		fail_msg("start: %s", err);
	wait_tx(nframes, 30);
	ops->stop(eng);
	t1 = clock_ticks(tai);
	ops->read(eng, &st);
	n = capture_read_with(&c, caps, MAXCAP, st.tx.pkts, check_stream_frame);
	print_message("sent %llu stamped frames on %u queue(s) in %.3f s, captured %zu\n",
		      (unsigned long long)st.tx.pkts, queues, (double)((t1 - t0) << XP_STAMP_TICK_SHIFT) / 1e9, n);
	assert_int_equal(n, st.tx.pkts);
	assert_true(n >= nframes);
	assert_int_equal(st.tx.errors, 0);
	if (place == XP_STAMP_NONE) {
		assert_int_equal(ops->sent_in(eng, 0, &got), -EOPNOTSUPP);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t s = caps[i].stamp, ts = xp_stamp_ts_extend(t0, xp_stamp_ts32(s));
		unsigned q = xp_stamp_stream(s) - STAMP_BASE;

		assert_true(q < queues);
		if (xp_stamp_seq24(s) != (next[q] & XP_STAMP_SEQ_MASK))
			fail_msg("frame %zu: stream %u seq %u, expected %llu", i, q + STAMP_BASE, xp_stamp_seq24(s),
				 (unsigned long long)next[q]);
		next[q]++;
		assert_true(ts >= t0 && ts <= t1);
		assert_true(ts >= last[q]);
		last[q] = ts;
		uint64_t k = (ts - t0) / STAMP_IVAL;
		assert_true(k < 8);
		cnt[k]++;
	}
	for (unsigned q = 0; q < queues; q++)
		assert_true(next[q] > 0); /* every thread sent */
	uint64_t k_last = (t1 - t0) / STAMP_IVAL, sum = 0;
	for (uint64_t k = 0; k <= k_last && k < 8; k++) {
		int r = ops->sent_in(eng, k, &got);
		if (k + XP_IBINS <= k_last) {
			/* older than the ring: only a run slower than planned gets here */
			assert_true(r == -ENOENT || r == 0);
			continue;
		}
		assert_int_equal(r, 0);
		print_message("interval %llu: sent_in %llu, captured %llu\n", (unsigned long long)k,
			      (unsigned long long)got, (unsigned long long)cnt[k]);
		assert_int_equal(got, cnt[k]);
		sum += got;
	}
	if (k_last < XP_IBINS)
		assert_int_equal(sum, n);
}

static void stream_stamp_case(bool v6, uint8_t proto, size_t size, unsigned queues, double pps, uint64_t nframes,
			      enum xp_stamp_place place)
{
	stream_stamp_case_clock(v6, proto, size, queues, pps, nframes, place, false);
}

/* 64-byte IPv4/TCP: stamp in the IPv4 ID + 6 payload bytes. 20000 frames
 * through the 4096-frame UMEM: each frame rewritten about 5 times. */
static void test_stream_stamp_v4_tcp_64(void **state)
{
	stream_stamp_case(false, IPPROTO_TCP, 64, 1, 50000, 20000, XP_STAMP_AT_IPID);
}

static void test_stream_stamp_v4_udp_64_two_queues(void **state)
{
	stream_stamp_case(false, IPPROTO_UDP, 64, 2, 20000, 6000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v4_tcp_128(void **state)
{
	stream_stamp_case(false, IPPROTO_TCP, 128, 1, 20000, 5000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v4_udp_1518(void **state)
{
	stream_stamp_case(false, IPPROTO_UDP, 1518, 1, 20000, 5000, XP_STAMP_AT_PAYLOAD);
}

static void test_stream_stamp_v6_tcp_86(void **state)
{
	stream_stamp_case(true, IPPROTO_TCP, 86, 1, 20000, 5000, XP_STAMP_AT_PAYLOAD);
}

/* --clock tai: send times of CLOCK_TAI, checked against it around the run. */
static void test_stream_stamp_v4_tcp_64_tai(void **state)
{
	stream_stamp_case_clock(false, IPPROTO_TCP, 64, 1, 20000, 3000, XP_STAMP_AT_IPID, true);
}

/* 78-byte IPv6/TCP: no room, no stamp, frames as prebuilt. */
static void test_stream_stamp_v6_tcp_78_none(void **state)
{
	stream_stamp_case(true, IPPROTO_TCP, 78, 1, 20000, 2000, XP_STAMP_NONE);
}

static void test_config_errors(void **state)
{
	struct xp_engine_cfg c;
	char err[256] = "";

	base_cfg(&c, XP_TEST_HOLD, false);
	c.parallel = 401; /* 100 x 4 tuples */
	assert_int_equal(ops->create(&c, &eng, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "distinct tuples"));
	assert_null(eng);

	base_cfg(&c, XP_TEST_CONNECT, false);
	add_bind(&c, "2001:2:0:220::10");
	assert_int_equal(ops->create(&c, &eng, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "family"));

	base_cfg(&c, XP_TEST_CONNECT, false);
	c.frames.tmpl.l4_proto = IPPROTO_UDP;
	c.frames.tmpl.tcp_syn_options = false;
	c.frames.tmpl.tcp_flags = 0;
	assert_int_equal(ops->create(&c, &eng, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "TCP"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_config_errors, case_teardown),
		cmocka_unit_test_teardown(test_connect_v4, case_teardown),
		cmocka_unit_test_teardown(test_connect_v6, case_teardown),
		cmocka_unit_test_teardown(test_connect_frame_reuse, case_teardown),
		cmocka_unit_test_teardown(test_connect_two_queues, case_teardown),
		cmocka_unit_test_teardown(test_hold_300, case_teardown),
		cmocka_unit_test_teardown(test_hold_stopped_early, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_64, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_udp_64_two_queues, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_128, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_udp_1518, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v6_tcp_86, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v4_tcp_64_tai, case_teardown),
		cmocka_unit_test_teardown(test_stream_stamp_v6_tcp_78_none, case_teardown),
	};

	if (geteuid() != 0) {
		printf("test_xsk_engine: needs root (netns, veth, AF_XDP): run as root\n");
		return 77;
	}
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
