// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * XP_MEAS_HWTS (issue 10 item 5): the server program's device-bound variant
 * (bpf/server_hwts.bpf.c), which may read the NIC's RX timestamp with
 * bpf_xdp_metadata_rx_timestamp. The kernel lets only a device-bound
 * program call that kfunc, and BPF_PROG_RUN refuses device-bound programs
 * (EINVAL), so this runs real frames over a veth pair in a private network
 * namespace (unshare, no name: it goes with the process): AF_PACKET on the
 * peer sends hand-built stamped frames, the server side's XDP sees them.
 *
 * What it can verify here: veth says it implements the kfunc (its answer
 * is the skb's hardware timestamp, which no hardware set: 0), the variant
 * loads and attaches for that interface only, shares the main program's
 * maps (the frames land in the same slot counters and bins), and a frame
 * without a NIC time falls back to the kernel's clock (hw_timed 0, latency
 * from the kernel clock). What it cannot: a frame timed by a NIC (no
 * timestamping NIC on this machine). Needs root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <sys/socket.h>
#include <linux/types.h>
#include <linux/if_ether.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/server.h"
#include "bpf/measure.h"
#include "bpf/server.skel.h"
#include "loader/server_hwts.h"
#include "loader/server_prog.h"
#include "net/netdev.h"
#include "meas/latency.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/stamped.h"
#include "tests/lib/veth.h"
#include "tests/lib/wire.h"

#define DEV     "xpht0"   /* the server's side */
#define PEER    "xpht1"   /* the client's side */
#define PORT    63600
#define CLI4    "198.18.236.2"
#define SRV4    "198.18.236.1"
#define SEC_TICKS 250000000ull

static unsigned ifi, peer_ifi;
static uint8_t dev_mac[6], peer_mac[6];

/* n stamped UDP frames (stream 0, seq 0..n-1, sent now) out of PEER. */
static void send_frames(unsigned n)
{
	int fd = socket(AF_PACKET, SOCK_RAW, 0);
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = (int)peer_ifi, .sll_halen = 6 };
	const struct xt_udp4_path path = { .smac = peer_mac, .dmac = dev_mac, .cli = CLI4, .srv = SRV4, .sport = 40000,
					   .dport = PORT };
	uint8_t buf[128];

	assert_true(fd >= 0);
	memcpy(to.sll_addr, dev_mac, 6);
	for (unsigned k = 0; k < n; k++) {
		size_t len = xt_udp4_stamped(&path, k, buf, sizeof(buf));

		assert_int_equal(sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	}
	close(fd);
	usleep(100 * 1000);
}

struct env {
	struct server_prog *rp;
	int slot;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	char err[256];

	if (!e || server_prog_open(&e->rp, 5303, false, err, sizeof(err))) {
		fprintf(stderr, "test_server_hwts: %s\n", e ? err : "out of memory");
		return -1;
	}
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	server_prog_close(e->rp);
	free(e);
	return 0;
}

/* Attach in mode, claim the slot, start a test with flags, send n frames;
 * the slot's bin 0 and meas_stats. */
static void measure(struct env *e, enum xp_xdp_mode mode, uint32_t flags, unsigned n, struct xp_lat_hist *h,
		    struct xp_meas_stats *ms)
{
	const char *m;
	char err[256];
	struct xp_addr cli;

	assert_int_equal(server_prog_attach(e->rp, (int)ifi, mode, &m, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse(CLI4, &cli), 0);
	e->slot = server_prog_slot_alloc(e->rp, PORT, PORT, XP_PROTO_UDP, 0, XP_CLOSE_NONE, (int)ifi, &cli, NULL, 0,
					 err, sizeof(err));
	assert_true(e->slot >= 0);
	struct xp_slot_meas sm = { .t0 = xt_now_ticks() - SEC_TICKS / 2, .ival = 10 * SEC_TICKS, .flags = flags };
	assert_int_equal(server_prog_meas_start(e->rp, e->slot, &sm), 0);
	uint64_t tx0 = xt_tx_packets(PEER);
	send_frames(n);
	assert_int_equal(xt_tx_packets(PEER) - tx0, n); /* the kernel's count of what left the peer */
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
	assert_int_equal(server_prog_read_ibin(e->rp, e->slot, 0, h), 0);
	assert_int_equal(server_prog_read_meas_stats(e->rp, e->slot, ms), 0);
	struct xp_counters c;
	assert_int_equal(server_prog_read(e->rp, e->slot, &c), 0);
	assert_int_equal(c.pkts, n);
}

/* veth's xdp-rx-metadata-features name the timestamp: the loader takes
 * the device-bound variant there, which counts into the same maps and,
 * veth having no hardware time (it answers 0), times by the kernel. */
static void test_device_bound_on_veth(void **state)
{
	struct env *e = *state;
	struct xp_lat_hist h;
	struct xp_meas_stats ms;

	if (!xp_hwts_driver_has((int)ifi)) {
		/* A kernel without the netdev family or veth's metadata ops
		 * (before 6.3): a kernel feature missing, the one reason to skip. */
		fprintf(stderr, "test_server_hwts: kernel lacks XDP RX timestamp metadata for veth (it reports none)\n");
		skip();
	}
	server_prog_set_hwts(e->rp, true);
	measure(e, XP_XDP_NATIVE, XP_MEAS_HWTS | XP_MEAS_ONEWAY, 20, &h, &ms);
	const char *why;
	assert_true(server_prog_hwts_on(e->rp, (int)ifi, &why));
	assert_int_equal(ms.stamped, 20);
	assert_int_equal(ms.hw_timed, 0);
	assert_int_equal(h.recv, 20);
	assert_int_equal(h.n, 20);  /* timed, by the kernel's clock */
	assert_int_equal(h.clock_neg, 0);
	assert_true(h.max < SEC_TICKS / 10); /* AF_PACKET to XDP on one host: well below 100 ms */
	fprintf(stderr, "figures: device-bound variant on veth: %llu frames, hw_timed %llu, latency %.1f..%.1f us\n",
		(unsigned long long)ms.stamped, (unsigned long long)ms.hw_timed, h.min * 4 / 1e3, h.max * 4 / 1e3);
	/* The last detach takes it away; the main program comes next time. */
	server_prog_slot_free(e->rp, e->slot);
	server_prog_detach(e->rp, (int)ifi);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	assert_int_equal(bpf_xdp_query((int)ifi, 0, &q), 0);
	assert_int_equal(q.prog_id, 0);
	server_prog_set_hwts(e->rp, false);
	measure(e, XP_XDP_NATIVE, XP_MEAS_HWTS | XP_MEAS_ONEWAY, 5, &h, &ms);
	assert_false(server_prog_hwts_on(e->rp, (int)ifi, &why));
	assert_non_null(strstr(why, "not asked"));
	assert_int_equal(ms.stamped, 5);
	assert_int_equal(ms.hw_timed, 0);
	server_prog_slot_free(e->rp, e->slot);
	server_prog_detach(e->rp, (int)ifi);
}

/* Off by default: the main program, whatever the driver. */
static void test_off_by_default(void **state)
{
	struct env *e = *state;
	struct xp_lat_hist h;
	struct xp_meas_stats ms;

	measure(e, XP_XDP_AUTO, XP_MEAS_HWTS | XP_MEAS_ONEWAY, 3, &h, &ms);
	assert_false(server_prog_hwts_on(e->rp, (int)ifi, NULL));
	assert_int_equal(h.n, 3);
	server_prog_slot_free(e->rp, e->slot);
	server_prog_detach(e->rp, (int)ifi);
}

/* Generic (skb) mode: whether the kernel takes a device-bound program
 * there or not, the interface ends up counting (the main program is the
 * fallback), and the test says which it was. */
static void test_skb_mode(void **state)
{
	struct env *e = *state;
	struct xp_lat_hist h;
	struct xp_meas_stats ms;

	server_prog_set_hwts(e->rp, true);
	measure(e, XP_XDP_SKB, XP_MEAS_HWTS | XP_MEAS_ONEWAY, 4, &h, &ms);
	const char *why;
	bool on = server_prog_hwts_on(e->rp, (int)ifi, &why);
	fprintf(stderr, "figures: skb mode: device-bound variant %s%s\n", on ? "attached" : "not used: ", on ? "" : why);
	assert_int_equal(ms.stamped, 4);
	assert_int_equal(ms.hw_timed, 0);
	assert_int_equal(h.n, 4);
	server_prog_slot_free(e->rp, e->slot);
	server_prog_detach(e->rp, (int)ifi);
}

static int group_setup(void **state)
{
	struct xt_veth v;

	(void)state;
	if (xt_veth_private("test_server_hwts", false, DEV, PEER, &v) || xp_netns("addr", "-", DEV, SRV4 "/24"))
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
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_device_bound_on_veth),
		T(test_off_by_default),
		T(test_skb_mode),
	};

	return cmocka_run_group_tests(tests, group_setup, NULL);
}
