// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The server's responder when the frame cannot be resized for its reply
 * (bpf/server.bpf.c, noroom: counted in noreply_room and dropped).
 *
 * A SYN without options is 54 bytes (IPv4) or 74 (IPv6); its SYN-ACK
 * carries MSS, 4 bytes more, so bpf_xdp_adjust_tail() must grow the frame.
 * BPF_PROG_RUN gives a linear frame a page's tailroom, so the grow always
 * succeeds there; on a NIC whose frames end in a full page fragment it
 * fails. BPF_PROG_RUN builds that frame too: with xdp_md.data_end shorter
 * than the data (Linux 6.18: the linear part is data_end bytes, the rest
 * goes into page fragments), the SYN's headers are the linear part and
 * 4096 bytes of Ethernet padding fill one fragment to its end, leaving no
 * tailroom. The same SYN in a linear frame is answered: the drop is the
 * room's, not the frame's.
 *
 * Frames are built by tests/lib/wire.h (no code shared with the program).
 * Needs root.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/server.skel.h"
#include "tests/lib/wire.h"

#define CTRL_PORT 5301
#define PORT      63120
#define SLOT      3
#define PAGE      4096u

static const uint8_t SRV_MAC[6] = { 0x02, 0x5e, 0, 0, 0, 0x02 };
static const uint8_t CLI_MAC[6] = { 0x02, 0xc1, 0, 0, 0, 0x01 };
#define CLI4 "198.18.231.1"
#define SRV4 "198.18.231.2"
#define CLI6 "2001:2:0:231::1"
#define SRV6 "2001:2:0:231::2"

static int ncpus;

static void addr_key(const char *a, uint32_t *family, uint32_t addr[4])
{
	memset(addr, 0, 16);
	if (strchr(a, ':')) {
		*family = XP_FAMILY_V6;
		assert_int_equal(inet_pton(AF_INET6, a, addr), 1);
	} else {
		*family = XP_FAMILY_V4;
		assert_int_equal(inet_pton(AF_INET, a, addr), 1);
	}
}

/* A responding slot on lo (where BPF_PROG_RUN runs) for CLI4 (peer) and
 * CLI6 (a --bind address), SRV4 and SRV6 the interface's own addresses. */
static int setup(void **state)
{
	struct server_bpf *s = server_bpf__open();
	struct xp_slot_cfg cfg = { .flags = XP_SLOT_ACTIVE | XP_SLOT_RESPOND, .protos = XP_PROTO_TCP,
				   .close_mode = XP_CLOSE_RST };
	struct xp_local_key lk = { .ifindex = if_nametoindex("lo") };
	struct xp_peer_key pk = { .slot = SLOT };
	uint32_t local = XP_LOCAL_UNICAST, one = 1, key = SLOT, val = SLOT + 1, port = PORT;

	if (!s)
		return -1;
	s->rodata->config.ctrl_port = CTRL_PORT;
	if (server_bpf__load(s)) {
		fprintf(stderr, "test_reply_room: server program load failed: %s\n", strerror(errno));
		server_bpf__destroy(s);
		return -1;
	}
	cfg.ifindex = lk.ifindex;
	memcpy(cfg.mac, SRV_MAC, 6);
	addr_key(CLI4, &cfg.peer_family, cfg.peer);
	cfg.npeers = 1;
	addr_key(CLI6, &pk.family, pk.addr);
	if (bpf_map_update_elem(bpf_map__fd(s->maps.slot_peers), &pk, &one, BPF_ANY))
		return -1;
	addr_key(SRV4, &lk.family, lk.addr);
	if (bpf_map_update_elem(bpf_map__fd(s->maps.local_addr), &lk, &local, BPF_ANY))
		return -1;
	addr_key(SRV6, &lk.family, lk.addr);
	if (bpf_map_update_elem(bpf_map__fd(s->maps.local_addr), &lk, &local, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->maps.port_slot), &port, &val, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(s->maps.slot_cfg), &key, &cfg, BPF_ANY))
		return -1;
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	server_bpf__destroy(*state);
	return 0;
}

/* A SYN without options from the client, Ethernet padding up to pad_to. */
static size_t syn(int v6, uint8_t *buf, size_t cap, size_t pad_to)
{
	struct wf f = { .l4 = IPPROTO_TCP, .sport = 40000, .dport = PORT, .flags = W_SYN, .seq = 1000,
			.pad_to = pad_to, .v6 = v6 };
	size_t len;

	memcpy(f.dmac, SRV_MAC, 6);
	memcpy(f.smac, CLI_MAC, 6);
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? CLI6 : CLI4, f.saddr), 1);
	assert_int_equal(inet_pton(v6 ? AF_INET6 : AF_INET, v6 ? SRV6 : SRV4, f.daddr), 1);
	len = w_build(&f, buf, cap);
	assert_true(len > 0);
	return len;
}

static struct xp_counters counters(struct server_bpf *s)
{
	struct xp_counters *v = calloc(ncpus, sizeof(*v)), sum = { 0 };
	uint32_t key = SLOT;

	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(s->maps.counters), &key, v), 0);
	for (int c = 0; c < ncpus; c++) {
		sum.pkts += v[c].pkts;
		sum.tcp_syn += v[c].tcp_syn;
		sum.synack_sent += v[c].synack_sent;
		sum.noreply_room += v[c].noreply_room;
		sum.noreply_other += v[c].noreply_other;
		sum.noreply_shape += v[c].noreply_shape;
		sum.noreply_addr += v[c].noreply_addr;
		sum.noreply_csum += v[c].noreply_csum;
	}
	free(v);
	return sum;
}

/* Run frame (len bytes, the first linear of them in the linear part; 0:
 * all). -1 with errno EINVAL when the kernel takes no linear size. */
static int run(struct server_bpf *s, const uint8_t *frame, size_t len, size_t linear, uint32_t *retval,
	       uint32_t *out_len)
{
	static uint8_t out[3 * PAGE];
	struct xdp_md md = { .data_end = (__u32)linear };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1, .ctx_in = linear ? &md : NULL,
		    .ctx_size_in = linear ? sizeof(md) : 0);

	if (bpf_prog_test_run_opts(bpf_program__fd(s->progs.xdp_server), &o))
		return -1;
	*retval = o.retval;
	*out_len = o.data_size_out;
	return 0;
}

/* The running kernel is older than MAJOR.MINOR (uname -r). */
static int kernel_before(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return 0; /* unknown: not an excuse to skip */
	return ma < major || (ma == major && mi < minor);
}

static void expect_no_room(void **state, int v6)
{
	struct server_bpf *s = *state;
	static uint8_t f[3 * PAGE];
	size_t hdr = v6 ? 14 + 40 + 20 : 14 + 20 + 20, len;
	uint32_t rv = 0, olen = 0;
	struct xp_counters c;

	/* Control: the SYN alone, linear, is answered with a 4-byte longer SYN-ACK. */
	len = syn(v6, f, sizeof(f), 0);
	assert_int_equal(len, hdr);
	assert_int_equal(run(s, f, len, 0, &rv, &olen), 0);
	assert_int_equal(rv, XDP_TX);
	assert_int_equal(olen, hdr + 4);
	c = counters(s);
	assert_int_equal(c.synack_sent, 1);
	assert_int_equal(c.noreply_room, 0);

	/* The same SYN, its headers linear, a full page of padding after them. */
	len = syn(v6, f, sizeof(f), hdr + PAGE);
	if (run(s, f, len, hdr, &rv, &olen)) {
		int e = errno;
		/* Before Linux 6.18 BPF_PROG_RUN takes no linear size. On 6.18 or
		 * later EINVAL is this test's or the program's fault: it fails. */
		if (e == EINVAL && kernel_before(6, 18)) {
			print_message("kernel lacks a feature: BPF_PROG_RUN with xdp_md.data_end < data_size_in "
				      "(linear size of a multi-buffer frame, Linux 6.18)\n");
			skip();
		}
		fail_msg("BPF_PROG_RUN: %s", strerror(e));
	}
	assert_int_equal(rv, XDP_DROP);
	c = counters(s);
	assert_int_equal(c.pkts, 2);
	assert_int_equal(c.tcp_syn, 2);
	assert_int_equal(c.synack_sent, 1); /* the control's only */
	assert_int_equal(c.noreply_room, 1);
	assert_int_equal(c.noreply_other + c.noreply_shape + c.noreply_addr + c.noreply_csum, 0);

	/* Ten more: counted one by one. */
	for (int i = 0; i < 10; i++) {
		assert_int_equal(run(s, f, len, hdr, &rv, &olen), 0);
		assert_int_equal(rv, XDP_DROP);
	}
	c = counters(s);
	assert_int_equal(c.noreply_room, 11);
	assert_int_equal(c.synack_sent, 1);
	assert_int_equal(c.pkts, 12);
}

static void test_ipv4_syn_without_tailroom(void **state) { expect_no_room(state, 0); }
static void test_ipv6_syn_without_tailroom(void **state) { expect_no_room(state, 1); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ipv4_syn_without_tailroom, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ipv6_syn_without_tailroom, setup, teardown),
	};

	if (geteuid() != 0) {
		fprintf(stderr, "test_reply_room: must run as root (loads BPF programs)\n");
		return 77;
	}
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return 1;
	return cmocka_run_group_tests_name("reply_room", tests, NULL, NULL);
}
