/*
 * The server's TC ingress program (bpf/server_tc.bpf.c) and its loader
 * (user/loader/server_tc.c, through server_prog), which count socket tests
 * (issue 10 point 6), on a veth pair of its own:
 *
 *   a private network namespace (unshare, no name: it goes with the process)
 *   xpst0 198.18.233.1/24 2001:2:0:233::1/64 <--veth--> xpst1
 *
 *  - a GSO packet counts as its gso_segs segments, its bytes as those
 *    segments carry them (headers repeated), its SYN/FIN once; a frame that
 *    is not GSO as itself (skb->len, padding included, like XDP);
 *  - into the XDP program's own counters (server_prog_read reads them), and
 *    the XDP program passes an XP_SLOT_TC slot's frames uncounted: a frame
 *    test's XDP program beside a socket test counts nothing twice;
 *  - only XP_SLOT_TC slots, on their interface, from their client, never the
 *    control port; the verdict is always TC_ACT_UNSPEC (the next decides);
 *  - attached as a tcx link (reference counted, gone at the last detach), or
 *    with XDPPERF_TC_HOOK=1 as a clsact filter whose qdisc goes with it,
 *    unless another program's filter came onto it meanwhile (that one and the
 *    qdisc stay); a filter a crashed run left at our handle is replaced.
 *
 * Frames are built with tests/lib/wire.h. Needs root (exits 77 without it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/server.h"
#include "bpf/server.skel.h"
#include "bpf/server_tc.skel.h"
#include "loader/server_prog.h"
#include "net/netdev.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/veth.h"
#include "tests/lib/wire.h"

#define DEV       "xpst0"
#define PEER      "xpst1"
#define PORT_LO   63400
#define PORT_HI   63409
#define CTRL_PORT 5301
#define CLIENT    "198.18.233.2"
#define TCX_INGRESS 46 /* BPF_TCX_INGRESS (Linux 6.6; newer than the UAPI headers here) */
#define TC_UNSPEC (-1)

static uint32_t ifi, lo_ifi;
static uint8_t mac[6];

struct env {
	struct server_prog *rp;
	struct server_bpf *x;
	struct server_tc_bpf *t;
};

static struct xp_addr xa(const char *s)
{
	struct xp_addr a;

	assert_int_equal(xp_addr_parse(s, &a), 0);
	return a;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	char err[256];

	if (!e || server_prog_open(&e->rp, CTRL_PORT, false, err, sizeof(err))) {
		fprintf(stderr, "test_server_tc: %s\n", err);
		return -1;
	}
	e->x = server_prog_skel(e->rp);
	e->t = server_prog_tc_skel(e->rp);
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;

	server_prog_close(e->rp);
	free(e);
	unsetenv("XDPPERF_TC_HOOK");
	return 0;
}

static int slot_of(struct env *e, uint32_t flags, const char *client)
{
	struct xp_addr c = xa(client);
	char err[256];
	int s = server_prog_slot_alloc(e->rp, PORT_LO, PORT_HI, XP_PROTO_TCP, flags, XP_CLOSE_NONE, (int)ifi, &c, NULL,
				       0, err, sizeof(err));
	if (s < 0)
		fail_msg("slot_alloc: %s", err);
	return s;
}

/* A TCP frame from src to one of the test's ports (or dport), payload bytes. */
static size_t tcp_frame(uint8_t *buf, size_t cap, const char *src, uint16_t dport, uint8_t flags, size_t payload,
			size_t pad_to)
{
	struct wf f = { .l4 = IPPROTO_TCP, .sport = 40000, .dport = dport, .flags = flags, .seq = 7,
			.payload = payload, .pad_to = pad_to };

	memcpy(f.dmac, mac, 6);
	memcpy(f.smac, (uint8_t[6]){ 0x02, 0xc1, 0, 0, 0, 1 }, 6);
	f.v6 = strchr(src, ':') != NULL;
	inet_pton(f.v6 ? AF_INET6 : AF_INET, src, f.saddr);
	inet_pton(f.v6 ? AF_INET6 : AF_INET, f.v6 ? "2001:2:0:233::1" : "198.18.233.1", f.daddr);
	size_t len = w_build(&f, buf, cap);
	assert_true(len > 0);
	return len > pad_to ? len : pad_to;
}

/* The TC program on a frame as if it arrived on ingress with gso_segs. */
static int run_tc(struct env *e, const uint8_t *frame, size_t len, uint32_t ingress, uint32_t gso_segs,
		  uint32_t gso_size)
{
	struct __sk_buff sk = { .ingress_ifindex = ingress, .gso_segs = gso_segs, .gso_size = gso_size };
	uint8_t out[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &sk, .ctx_size_in = sizeof(sk));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(e->t->progs.tc_server), &o), 0);
	/* It only counts: the frame comes out as it went in. */
	assert_int_equal(o.data_size_out, len);
	assert_memory_equal(out, frame, len);
	return (int)o.retval;
}

static int run_xdp(struct env *e, const uint8_t *frame, size_t len, uint32_t ingress)
{
	struct xdp_md md = { .data_end = (__u32)len, .ingress_ifindex = ingress };
	uint8_t out[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = sizeof(out), .ctx_in = &md, .ctx_size_in = sizeof(md));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(e->x->progs.xdp_server), &o), 0);
	return (int)o.retval;
}

static struct xp_counters counters(struct env *e, int slot)
{
	struct xp_counters c;

	assert_int_equal(server_prog_read(e->rp, slot, &c), 0);
	return c;
}

static void test_gso_packet_counts_as_its_segments(void **state)
{
	struct env *e = *state;
	uint8_t f[4096];
	int slot = slot_of(e, XP_SLOT_PASS | XP_SLOT_TC, CLIENT);

	/* 3 x 1000 payload bytes in one GSO packet: Ethernet 14 + IPv4 20 + TCP 20. */
	size_t len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO + 1, W_ACK | W_PSH, 3000, 0);
	assert_int_equal(len, 54 + 3000);
	assert_int_equal(run_tc(e, f, len, ifi, 3, 1000), TC_UNSPEC);
	struct xp_counters c = counters(e, slot);
	assert_int_equal(c.pkts, 3);
	assert_int_equal(c.data_pkts, 3);
	assert_int_equal(c.data_bytes, 3000);
	assert_int_equal(c.bytes, 3000 + 3 * 54); /* each segment with its own headers */
	assert_int_equal(c.ipv4_pkts, 3);
	assert_int_equal(c.tcp_ack_only, 0);

	/* Not GSO (gso_segs 0): one frame, its length. A SYN counts once. */
	len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_SYN, 0, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	/* A padded pure ACK (an Ethernet minimum of 60): the padding counts, as in XDP. */
	size_t plen = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_ACK, 0, 60);
	assert_int_equal(plen, 60);
	assert_int_equal(run_tc(e, f, plen, ifi, 1, 0), TC_UNSPEC);
	/* The last segment of a stream: FIN once, however many segments. */
	size_t flen = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_ACK | W_FIN, 2000, 0);
	assert_int_equal(run_tc(e, f, flen, ifi, 2, 1000), TC_UNSPEC);
	c = counters(e, slot);
	assert_int_equal(c.pkts, 3 + 1 + 1 + 2);
	assert_int_equal(c.tcp_syn, 1);
	assert_int_equal(c.tcp_ack_only, 1);
	assert_int_equal(c.tcp_fin, 1);
	assert_int_equal(c.data_pkts, 5);
	assert_int_equal(c.data_bytes, 5000);
	assert_int_equal(c.bytes, 3000 + 3 * 54 + len + 60 + 2000 + 2 * 54);
	server_prog_slot_free(e->rp, slot);
}

static void test_ipv6_gso(void **state)
{
	struct env *e = *state;
	uint8_t f[4096];
	int slot = slot_of(e, XP_SLOT_PASS | XP_SLOT_TC, "2001:2:0:233::2");

	size_t len = tcp_frame(f, sizeof(f), "2001:2:0:233::2", PORT_HI, W_ACK, 2800, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 4, 700), TC_UNSPEC);
	struct xp_counters c = counters(e, slot);
	assert_int_equal(c.pkts, 4);
	assert_int_equal(c.ipv6_pkts, 4);
	assert_int_equal(c.ipv4_pkts, 0);
	assert_int_equal(c.data_bytes, 2800);
	assert_int_equal(c.bytes, 2800 + 4 * (14 + 40 + 20));
	server_prog_slot_free(e->rp, slot);
}

/* A frame test's XDP program on the same interface passes a TC slot's frames
 * uncounted, and the TC program leaves an XDP slot's alone. */
static void test_each_slot_counted_by_one_program(void **state)
{
	struct env *e = *state;
	uint8_t f[4096];
	int slot = slot_of(e, XP_SLOT_PASS | XP_SLOT_TC, CLIENT);
	size_t len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_ACK, 1000, 0);

	assert_int_equal(run_xdp(e, f, len, ifi), XDP_PASS);
	assert_int_equal(counters(e, slot).pkts, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	assert_int_equal(counters(e, slot).pkts, 1);
	server_prog_slot_free(e->rp, slot);

	/* The same ports as an XDP slot (a socket test the XDP program counts). */
	slot = slot_of(e, XP_SLOT_PASS, CLIENT);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	assert_int_equal(counters(e, slot).pkts, 0);
	assert_int_equal(run_xdp(e, f, len, ifi), XDP_PASS);
	assert_int_equal(counters(e, slot).pkts, 1);
	server_prog_slot_free(e->rp, slot);
}

static void test_only_the_tests_frames(void **state)
{
	struct env *e = *state;
	uint8_t f[4096];
	int slot = slot_of(e, XP_SLOT_PASS | XP_SLOT_TC, CLIENT);
	size_t len;

	/* Another source, another interface, another port, the control port. */
	len = tcp_frame(f, sizeof(f), "198.18.233.3", PORT_LO, W_ACK, 100, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_ACK, 100, 0);
	assert_int_equal(run_tc(e, f, len, lo_ifi, 0, 0), TC_UNSPEC);
	len = tcp_frame(f, sizeof(f), CLIENT, PORT_HI + 1, W_ACK, 100, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	len = tcp_frame(f, sizeof(f), CLIENT, CTRL_PORT, W_ACK, 100, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	/* Truncated: Ethernet, the IPv4 header and half a TCP header. */
	len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_ACK, 100, 0);
	assert_int_equal(run_tc(e, f, 44, ifi, 0, 0), TC_UNSPEC);
	assert_int_equal(counters(e, slot).pkts, 0);
	/* And the test's own does count. */
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	assert_int_equal(counters(e, slot).pkts, 1);
	server_prog_slot_free(e->rp, slot);
}

/* UDP datagrams (a GSO one as its segments), a SYN-ACK and a RST, each in
 * its own counter and nowhere else (issue 15: every increment of the
 * program is checked by some case, see scripts/mutate.sh). */
static void test_udp_synack_rst(void **state)
{
	struct env *e = *state;
	struct xp_addr c = xa(CLIENT);
	uint8_t f[4096];
	char err[256];
	int slot = server_prog_slot_alloc(e->rp, PORT_LO, PORT_HI, XP_PROTO_TCP | XP_PROTO_UDP,
					  XP_SLOT_PASS | XP_SLOT_TC, XP_CLOSE_NONE, (int)ifi, &c, NULL, 0, err,
					  sizeof(err));
	struct wf u = { .l4 = IPPROTO_UDP, .sport = 40000, .dport = PORT_LO + 2, .payload = 1200 };
	size_t len;

	if (slot < 0)
		fail_msg("slot_alloc: %s", err);
	memcpy(u.dmac, mac, 6);
	memcpy(u.smac, (uint8_t[6]){ 0x02, 0xc1, 0, 0, 0, 1 }, 6);
	inet_pton(AF_INET, CLIENT, u.saddr);
	inet_pton(AF_INET, "198.18.233.1", u.daddr);
	len = w_build(&u, f, sizeof(f));
	assert_int_equal(len, 14 + 20 + 8 + 1200);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	/* A UDP GSO packet of 3 x 400 payload bytes. */
	assert_int_equal(run_tc(e, f, len, ifi, 3, 400), TC_UNSPEC);
	len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_SYN | W_ACK, 0, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);
	len = tcp_frame(f, sizeof(f), CLIENT, PORT_LO, W_RST, 0, 0);
	assert_int_equal(run_tc(e, f, len, ifi, 0, 0), TC_UNSPEC);

	struct xp_counters k = counters(e, slot);
	assert_int_equal(k.udp_pkts, 1 + 3);
	assert_int_equal(k.pkts, 1 + 3 + 1 + 1);
	assert_int_equal(k.ipv4_pkts, 6);
	assert_int_equal(k.tcp_synack, 1);
	assert_int_equal(k.tcp_syn, 0);
	assert_int_equal(k.tcp_rst, 1);
	assert_int_equal(k.tcp_fin, 0);
	assert_int_equal(k.tcp_ack_only, 0);
	assert_int_equal(k.data_pkts, 4);
	assert_int_equal(k.data_bytes, 2400);
	assert_int_equal(k.bytes, (14 + 20 + 8 + 1200) + (1200 + 3 * (14 + 20 + 8)) + 2 * 54);
	server_prog_slot_free(e->rp, slot);
}

/* Programs on ifindex's tcx ingress (BPF_PROG_QUERY). */
static unsigned tcx_count(void)
{
	__u32 ids[8], cnt = 8, flags = 0;

	if (bpf_prog_query((int)ifi, TCX_INGRESS, 0, &flags, ids, &cnt))
		return 0;
	return cnt;
}

static void test_tcx_link_reference_counted(void **state)
{
	struct env *e = *state;
	const char *how = NULL;
	char err[256];

	assert_int_equal(tcx_count(), 0);
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	assert_string_equal(how, "tcx");
	assert_int_equal(tcx_count(), 1);
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	assert_int_equal(tcx_count(), 1);
	server_prog_detach_tc(e->rp, (int)ifi);
	assert_int_equal(tcx_count(), 1);
	server_prog_detach_tc(e->rp, (int)ifi);
	assert_int_equal(tcx_count(), 0);
	/* No XDP went on meanwhile. */
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	assert_int_equal(bpf_xdp_query((int)ifi, 0, &q), 0);
	assert_int_equal(q.prog_id, 0);
	/* Closing the loader detaches what is still attached. */
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	server_prog_close(e->rp);
	assert_int_equal(tcx_count(), 0);
	assert_int_equal(server_prog_open(&e->rp, CTRL_PORT, false, err, sizeof(err)), 0);
}

static int has_clsact(void)
{
	return system("tc qdisc show dev " DEV " | grep -q clsact") == 0;
}

static void test_clsact_fallback_removed(void **state)
{
	struct env *e = *state;
	const char *how = NULL;
	char err[256];

	setenv("XDPPERF_TC_HOOK", "1", 1);
	assert_false(has_clsact());
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	assert_string_equal(how, "tc");
	assert_true(has_clsact());
	assert_int_equal(system("tc filter show dev " DEV " ingress | grep -q 'tc_server.*direct-action'"), 0);
	assert_int_equal(tcx_count(), 0);
	server_prog_detach_tc(e->rp, (int)ifi);
	assert_false(has_clsact());

	/* A clsact qdisc that was there first stays; only our filter goes. */
	assert_int_equal(system("tc qdisc add dev " DEV " clsact"), 0);
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	server_prog_close(e->rp);
	e->rp = NULL;
	assert_true(has_clsact());
	assert_int_not_equal(system("tc filter show dev " DEV " ingress | grep -q tc_server"), 0);
	assert_int_equal(system("tc qdisc del dev " DEV " clsact"), 0);
	assert_int_equal(server_prog_open(&e->rp, CTRL_PORT, false, err, sizeof(err)), 0);
}

/* Another program's TC filter: returns TC_ACT_UNSPEC; at handle 1, priority 1 of the ingress hook. */
static int other_filter(int *prog_fd)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = -1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	*prog_fd = bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "other_tc", "GPL", insns, 2, NULL);
	if (*prog_fd < 0)
		return *prog_fd;
	LIBBPF_OPTS(bpf_tc_hook, h, .ifindex = (int)ifi, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = *prog_fd, .handle = 1, .priority = 1);
	return bpf_tc_attach(&h, &o);
}

static int ours_count(void)
{
	return system("exit $(tc filter show dev " DEV " ingress | grep -c 'tc_server.*direct-action')") >> 8;
}

/* Issue 28 point 7: our detach takes our filter only, and a stale one of ours does not block the attach. */
static void test_clsact_fallback_only_ours(void **state)
{
	struct env *e = *state;
	const char *how = NULL;
	char err[256];
	int other;

	setenv("XDPPERF_TC_HOOK", "1", 1);
	assert_false(has_clsact());
	/* On the qdisc we made, another program adds a filter meanwhile. */
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	assert_string_equal(how, "tc");
	assert_int_equal(other_filter(&other), 0);
	server_prog_detach_tc(e->rp, (int)ifi);
	assert_true(has_clsact());
	assert_int_equal(ours_count(), 0);
	assert_int_equal(system("tc filter show dev " DEV " ingress | grep -q other_tc"), 0);
	assert_int_equal(system("tc qdisc del dev " DEV " clsact"), 0);
	close(other);

	/* A run that died attached (a child that exits without detaching): its filter stays in the kernel. */
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)) ? 1 : 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(ours_count(), 1);
	/* The next run's attach replaces it (no EEXIST) and its detach removes it. */
	assert_int_equal(server_prog_attach_tc(e->rp, (int)ifi, &how, err, sizeof(err)), 0);
	assert_int_equal(ours_count(), 1);
	server_prog_detach_tc(e->rp, (int)ifi);
	assert_int_equal(ours_count(), 0);
	assert_int_equal(system("tc qdisc del dev " DEV " clsact"), 0);
	unsetenv("XDPPERF_TC_HOOK");
}

/* The whole run in a namespace of its own, which goes with the process. */
static int group_setup(void **state)
{
	struct xt_veth v;

	(void)state;
	if (xt_veth_private("test_server_tc", true, DEV, PEER, &v) ||
	    xp_netns("addr", "-", DEV, "198.18.233.1/24", "2001:2:0:233::1/64"))
		return -1;
	ifi = v.ifi;
	lo_ifi = if_nametoindex("lo");
	if (!lo_ifi)
		return -1;
	memcpy(mac, v.mac, 6);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_gso_packet_counts_as_its_segments),
		T(test_ipv6_gso),
		T(test_each_slot_counted_by_one_program),
		T(test_only_the_tests_frames),
		T(test_udp_synack_rst),
		T(test_tcx_link_reference_counted),
		T(test_clsact_fallback_removed),
		T(test_clsact_fallback_only_ours),
#undef T
	};

	if (geteuid() != 0) {
		printf("test_server_tc: needs root (namespaces, BPF)\n");
		return 77;
	}
	return cmocka_run_group_tests_name("server_tc", tests, group_setup, NULL);
}
