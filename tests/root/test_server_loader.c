/*
 * The server's loader (user/loader/server_prog.c) binding a test's XDP slot
 * to its interface and client (issue 9), on a veth pair of its own:
 *
 *   a private network namespace (unshare, no name: it goes with the process)
 *   xpsl0 198.18.232.1/24 2001:2:0:232::1/64 <--veth--> xpsl1
 *
 *  - attach gives the program the interface's addresses (local_addr), a test
 *    start refreshes them, the last detach forgets them;
 *  - a slot is bound to the interface, its MAC, the client's address and its
 *    --bind addresses (each once); the program as attached answers a bound
 *    address's SYN arriving on the veth and passes a stranger's, and the same
 *    SYN arriving on another interface;
 *  - client addresses that are no host's (the subnet's broadcast, the limited
 *    broadcast, multicast, unspecified) are refused with an error naming
 *    them, and leave nothing behind;
 *  - a reused slot starts clean: counters, client addresses, slot_data_len
 *    (finding 6).
 *
 * Frames are built and judged with tests/lib/wire.h. Needs root (exits 77,
 * "skipped", without it).
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
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/server.h"
#include "bpf/server.skel.h"
#include "loader/server_prog.h"
#include "net/netdev.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/veth.h"
#include "tests/lib/wire.h"

#define DEV     "xpsl0"
#define PEER    "xpsl1"
#define PORT_LO 63300
#define PORT_HI 63309

static uint32_t ifi, lo_ifi;
static uint8_t mac[6];

static struct xp_addr xa(const char *s)
{
	struct xp_addr a;

	assert_int_equal(xp_addr_parse(s, &a), 0);
	return a;
}

static void key_of(const char *a, uint32_t *family, uint32_t addr[4])
{
	struct xp_addr x = xa(a);

	memset(addr, 0, 16);
	*family = x.family == AF_INET6 ? XP_FAMILY_V6 : XP_FAMILY_V4;
	memcpy(addr, x.family == AF_INET6 ? (void *)&x.v6 : (void *)&x.v4, x.family == AF_INET6 ? 16 : 4);
}

static int has_local(struct server_bpf *s, const char *a)
{
	struct xp_local_key k = { .ifindex = ifi };
	uint32_t v;

	key_of(a, &k.family, k.addr);
	return !bpf_map_lookup_elem(bpf_map__fd(s->maps.local_addr), &k, &v) && v == XP_LOCAL_UNICAST;
}

static int count_local(struct server_bpf *s)
{
	struct xp_local_key k, prev;
	int n = 0, first = 1;

	while (!bpf_map_get_next_key(bpf_map__fd(s->maps.local_addr), first ? NULL : &prev, &k)) {
		n += k.ifindex == ifi;
		prev = k;
		first = 0;
	}
	return n;
}

static int count_peers(struct server_bpf *s, uint32_t slot)
{
	struct xp_peer_key k, prev;
	int n = 0, first = 1;

	while (!bpf_map_get_next_key(bpf_map__fd(s->maps.slot_peers), first ? NULL : &prev, &k)) {
		n += k.slot == slot;
		prev = k;
		first = 0;
	}
	return n;
}

/* A SYN from src to dst, sent to the veth's MAC, through the attached
 * program as if it arrived on ingress: its verdict, the reply in out. */
static int syn_on(struct server_bpf *s, uint32_t ingress, const char *src, const char *dst, uint8_t *out,
		  size_t *olen)
{
	struct wf f = { .l4 = IPPROTO_TCP, .sport = 40000, .dport = PORT_LO + 3, .flags = W_SYN, .seq = 7 };
	uint8_t in[256];

	memcpy(f.dmac, mac, 6);
	memcpy(f.smac, (uint8_t[6]){ 0x02, 0xc1, 0, 0, 0, 1 }, 6);
	f.v6 = strchr(src, ':') != NULL;
	inet_pton(f.v6 ? AF_INET6 : AF_INET, src, f.saddr);
	inet_pton(f.v6 ? AF_INET6 : AF_INET, dst, f.daddr);
	size_t len = w_build(&f, in, sizeof(in));
	struct xdp_md md = { .data_end = (__u32)len, .ingress_ifindex = ingress };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = 512, .ctx_in = &md, .ctx_size_in = sizeof(md));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(s->progs.xdp_server), &o), 0);
	*olen = o.data_size_out;
	if (o.retval == XDP_TX) {
		struct wp r = w_parse(out, *olen);
		assert_true(r.ok && r.ip_csum_ok && r.l4_csum_ok);
		assert_memory_equal(out, f.smac, 6);
		assert_memory_equal(r.daddr, f.saddr, f.v6 ? 16 : 4);
		assert_memory_equal(r.saddr, f.daddr, f.v6 ? 16 : 4);
	} else {
		assert_int_equal(*olen, len);
		assert_memory_equal(out, in, len);
	}
	return (int)o.retval;
}

struct env {
	struct server_prog *rp;
	struct server_bpf *s;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	const char *mode;
	char err[256];

	if (!e || server_prog_open(&e->rp, 5301, false, err, sizeof(err))) {
		fprintf(stderr, "test_server_loader: %s\n", err);
		return -1;
	}
	e->s = server_prog_skel(e->rp);
	if (server_prog_attach(e->rp, (int)ifi, XP_XDP_AUTO, &mode, err, sizeof(err))) {
		fprintf(stderr, "test_server_loader: attach: %s\n", err);
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

static int alloc(struct env *e, const char *client, const char *const *bind, unsigned nbind, char *err)
{
	struct xp_addr c = xa(client), b[8];

	for (unsigned i = 0; i < nbind; i++)
		b[i] = xa(bind[i]);
	return server_prog_slot_alloc(e->rp, PORT_LO, PORT_HI, XP_PROTO_TCP, XP_SLOT_RESPOND, XP_CLOSE_RST, (int)ifi,
				      &c, b, nbind, err, 256);
}

static void test_attach_gives_the_addresses(void **state)
{
	struct env *e = *state;

	assert_true(has_local(e->s, "198.18.232.1"));
	assert_true(has_local(e->s, "2001:2:0:232::1"));
	/* The last detach forgets them. */
	server_prog_detach(e->rp, (int)ifi);
	assert_int_equal(count_local(e->s), 0);
}

static void test_test_start_refreshes_the_addresses(void **state)
{
	struct env *e = *state;
	char err[256];

	assert_int_equal(xp_netns("addr", "-", DEV, "198.18.232.5/24"), 0);
	assert_false(has_local(e->s, "198.18.232.5"));
	int slot = alloc(e, "198.18.232.2", NULL, 0, err);
	assert_true(slot >= 0);
	assert_true(has_local(e->s, "198.18.232.5"));
	server_prog_slot_free(e->rp, slot);
	assert_int_equal(system("ip addr del 198.18.232.5/24 dev " DEV), 0);
	slot = alloc(e, "198.18.232.2", NULL, 0, err);
	assert_true(slot >= 0);
	assert_false(has_local(e->s, "198.18.232.5"));
	assert_true(has_local(e->s, "198.18.232.1"));
	server_prog_slot_free(e->rp, slot);
}

static void test_refuses_addresses_of_no_host(void **state)
{
	struct env *e = *state;
	static const char *const bad[] = { "198.18.232.255", "255.255.255.255", "224.0.0.1", "239.255.0.1", "0.0.0.0",
					   "0.1.2.3", "240.0.0.9" };
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(alloc(e, "198.18.232.2", &bad[i], 1, err), -EINVAL);
		if (!strstr(err, bad[i]))
			fail_msg("the error for %s does not name it: %s", bad[i], err);
		assert_null(strchr(err, '\n'));
		printf("refused --bind %s: %s\n", bad[i], err);
	}
	static const char *const bad6[] = { "ff02::1", "::", "::ffff:198.18.232.2" };
	for (size_t i = 0; i < sizeof(bad6) / sizeof(bad6[0]); i++) {
		assert_int_equal(alloc(e, "2001:2:0:232::2", &bad6[i], 1, err), -EINVAL);
		assert_non_null(strstr(err, bad6[i]));
	}
	/* A broadcast client address itself (it could not have connected,
	 * but the loader does not take that for granted). */
	assert_int_equal(alloc(e, "198.18.232.255", NULL, 0, err), -EINVAL);
	/* Nothing left behind: the next test gets slot 0, with no peers. */
	assert_int_equal(count_peers(e->s, 0), 0);
	int slot = alloc(e, "198.18.232.2", NULL, 0, err);
	assert_int_equal(slot, 0);
	server_prog_slot_free(e->rp, slot);
}

static void test_binds_interface_mac_and_client(void **state)
{
	struct env *e = *state;
	static const char *const bind[] = { "198.18.232.10", "198.18.232.2", "198.18.232.11", "198.18.232.10" };
	uint8_t out[512];
	size_t olen;
	char err[256];
	struct xp_slot_cfg cfg;

	int slot = alloc(e, "198.18.232.2", bind, 4, err);
	assert_true(slot >= 0);
	uint32_t key = (uint32_t)slot;
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->s->maps.slot_cfg), &key, &cfg), 0);
	assert_int_equal(cfg.ifindex, ifi);
	assert_memory_equal(cfg.mac, mac, 6);
	assert_int_equal(cfg.peer_family, XP_FAMILY_V4);
	assert_int_equal(cfg.peer[0], htonl(0xc612e802)); /* 198.18.232.2 */
	/* The bind addresses other than the client's own, each once. */
	assert_int_equal(cfg.npeers, 2);
	assert_int_equal(count_peers(e->s, key), 2);

	assert_int_equal(syn_on(e->s, ifi, "198.18.232.2", "198.18.232.1", out, &olen), XDP_TX);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.11", "198.18.232.1", out, &olen), XDP_TX);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.12", "198.18.232.1", out, &olen), XDP_PASS);
	/* The client's SYN on another interface (loopback) is not the test's. */
	assert_int_equal(syn_on(e->s, lo_ifi, "198.18.232.2", "198.18.232.1", out, &olen), XDP_PASS);
	/* Nor one to an address the interface does not hold (issue 28: a
	 * frame this host would forward), from the client or a --bind one. */
	assert_false(cfg.flags & XP_SLOT_LOCAL);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.2", "198.18.99.9", out, &olen), XDP_PASS);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.11", "198.18.232.77", out, &olen), XDP_PASS);
	struct xp_counters c;
	assert_int_equal(server_prog_read(e->rp, slot, &c), 0);
	assert_int_equal(c.pkts, 2);
	assert_int_equal(c.synack_sent, 2);
	server_prog_slot_free(e->rp, slot);
	/* XP_SLOT_LOCAL is the device's to say (loopback), not the caller's. */
	struct xp_addr cl = xa("198.18.232.2");
	slot = server_prog_slot_alloc(e->rp, PORT_LO, PORT_HI, XP_PROTO_TCP, XP_SLOT_LOCAL, XP_CLOSE_NONE, (int)ifi,
				      &cl, NULL, 0, err, sizeof(err));
	assert_true(slot >= 0);
	key = (uint32_t)slot;
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->s->maps.slot_cfg), &key, &cfg), 0);
	assert_false(cfg.flags & XP_SLOT_LOCAL);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.2", "198.18.99.9", out, &olen), XDP_PASS);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.2", "198.18.232.1", out, &olen), XDP_DROP);
	assert_int_equal(server_prog_read(e->rp, slot, &c), 0);
	assert_int_equal(c.pkts, 1);
	server_prog_slot_free(e->rp, slot);
}

/* Finding 6: slot_data_len was not reset when a slot was reused. */
static void test_reused_slot_starts_clean(void **state)
{
	struct env *e = *state;
	static const char *const bind[] = { "198.18.232.10" };
	uint8_t out[512];
	size_t olen;
	char err[256];
	struct xp_slot_cfg cfg;
	struct xp_counters c;

	int slot = alloc(e, "198.18.232.2", bind, 1, err);
	assert_true(slot >= 0);
	uint32_t key = (uint32_t)slot, dl = 1000;
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.10", "198.18.232.1", out, &olen), XDP_TX);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->s->maps.slot_data_len), &key, &dl, BPF_ANY), 0);
	server_prog_slot_free(e->rp, slot);
	assert_int_equal(count_peers(e->s, key), 0);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->s->maps.slot_cfg), &key, &cfg), 0);
	assert_false(cfg.flags & XP_SLOT_ACTIVE);
	/* The bind address of the last test is nobody's now. */
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.10", "198.18.232.1", out, &olen), XDP_PASS);

	int again = alloc(e, "198.18.232.3", NULL, 0, err);
	assert_int_equal(again, slot);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->s->maps.slot_data_len), &key, &dl), 0);
	assert_int_equal(dl, 0);
	assert_int_equal(server_prog_read(e->rp, again, &c), 0);
	assert_int_equal(c.pkts, 0);
	assert_int_equal(syn_on(e->s, ifi, "198.18.232.10", "198.18.232.1", out, &olen), XDP_PASS);
	server_prog_slot_free(e->rp, again);
}

/* The whole run in a namespace of its own, which goes with the process. */
static int group_setup(void **state)
{
	struct xt_veth v;

	(void)state;
	if (xt_veth_private("test_server_loader", true, DEV, PEER, &v) ||
	    xp_netns("addr", "-", DEV, "198.18.232.1/24", "2001:2:0:232::1/64"))
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
		T(test_attach_gives_the_addresses),
		T(test_test_start_refreshes_the_addresses),
		T(test_refuses_addresses_of_no_host),
		T(test_binds_interface_mac_and_client),
		T(test_reused_slot_starts_clean),
#undef T
	};

	if (geteuid() != 0) {
		printf("test_server_loader: needs root (namespaces, BPF)\n");
		return 77;
	}
	return cmocka_run_group_tests_name("server_loader", tests, group_setup, NULL);
}
