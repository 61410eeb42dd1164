// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Random and mutated frames (tests/bpf/fuzz_frames.h: VLAN and QinQ, IPv4
 * options and fragments, IPv6 extension headers, TCP options, truncated and
 * forged headers) through BPF_PROG_RUN of every XDP program, each judged
 * against a model written here from the programs' documented behaviour and
 * tests/bpf/wire.h's RFC parser and checksums (no code shared with bpf/):
 *
 *  server (bpf/server.bpf.c; responding, counting and passing slots bound
 *  to a client): a frame that is not the test's passes unchanged and
 *  uncounted; a test frame is counted exactly (every counter field) and
 *  dropped or passed unchanged, or answered; every reply is well formed,
 *  both checksums verify, it goes to the frame's source (MACs, addresses
 *  and ports swapped, VLAN tags kept) and answers a frame a TCP stack would
 *  answer (sent to our MAC and address, from a unicast source, with a valid
 *  checksum); every TCP frame of a responding slot is answered or counted
 *  as not; the global counts add up. Handshakes are completed now and then
 *  (SYN, then the ACK with the real cookie, mutated or not), so the cookie
 *  paths are fuzzed too. A reflecting slot (round trip) sends each
 *  stamped frame with unicast MACs and addresses back as exactly that frame
 *  turned around, and drops the rest untouched.
 *
 *  round trip (bpf/rtt.bpf.c, an IPv4 and an IPv6 test; fuzz_rtt.h): a
 *  stamped frame from the server's test address and ports to ours is
 *  dropped and in its stream once, every other frame passes unchanged,
 *  every frame is counted once.
 *
 *  client (bpf/xdp_connect.bpf.c, RST and data modes): the same for its test
 *  flows (server port -> client port): non-test frames pass unchanged, every
 *  reply is well formed and goes to the source, every frame is counted once.
 *
 *  generator (bpf/live.bpf.c): on an interface it does not send on,
 *  every frame passes unchanged; where it sends, whatever frame it is handed,
 *  it returns a well-formed test frame with valid checksums, or aborts only
 *  when handed fewer bytes than its template.
 *
 * XP_FUZZ_FRAMES (default 50000) frames per program and configuration,
 * XP_FUZZ_SEED (a number, or "random"; default fixed) seeds the generator:
 * `make fuzz` runs many more with a fresh seed. A failure prints the seed, the frame number and
 * the frame. Needs root.
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
#include <sys/random.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/measure.h"
#include "bpf/xdp_connect.h"
#include "bpf/live.h"
#include "bpf/server.skel.h"
#include "bpf/xdp_connect.skel.h"
#include "bpf/live.skel.h"
#include "engine/engine.h"
#include "engine/live_prog.h"
#include "frame/frame.h"
#include "fuzz_frames.h"

#define CTRL_PORT 5301
#define CPORT_LO  40000
#define CPORT_HI  40100
#define MAXF      4096

static const uint8_t SRV_MAC[6] = { 0x02, 0x5e, 0, 0, 0, 0x02 };
static const uint8_t CLI_MAC[6] = { 0x02, 0xc1, 0, 0, 0, 0x01 };
static const char *const SRV4[] = { "198.18.250.2" }, *const SRV6[] = { "2001:2:0:250::2" };
static const char *const CLI4[] = { "198.18.250.1", "198.18.250.10" }, *const CLI6[] = { "2001:2:0:250::1" };

/* The server program's slots: what each does with its frames. */
struct sdef {
	uint32_t slot;
	uint16_t lo, hi;
	uint32_t protos, flags, close_mode;
};
static const struct sdef SLOTS[] = {
	{ 1, 63200, 63209, XP_PROTO_TCP, XP_SLOT_RESPOND, XP_CLOSE_RST },
	{ 2, 63210, 63219, XP_PROTO_TCP, XP_SLOT_RESPOND | XP_SLOT_PASS, XP_CLOSE_NONE },
	{ 3, 63220, 63229, XP_PROTO_TCP | XP_PROTO_UDP, 0, 0 },
	{ 5, 63230, 63239, XP_PROTO_TCP | XP_PROTO_UDP, XP_SLOT_PASS, 0 },
	{ 6, 63240, 63249, XP_PROTO_TCP | XP_PROTO_UDP, XP_SLOT_REFLECT, 0 }, /* round trip */
};
#define NSLOTS (sizeof(SLOTS) / sizeof(SLOTS[0]))
#define PORTS_LO 63200
#define PORTS_HI 63249

static int ncpus;
static unsigned long nframes = 50000;
static uint64_t seed = 0x5eedf00dULL;
static uint32_t lo_ifindex;

/* What one program's run saw, for the closing figures. */
struct figs {
	unsigned long frames, test, replies, passed, dropped, aborted;
};

static void report(const char *what, const struct figs *f)
{
	printf("figures: %s: %lu frames (seed %#llx): %lu the test's, %lu replies checked, %lu passed, %lu dropped, %lu aborted\n",
	       what, f->frames, (unsigned long long)seed, f->test, f->replies, f->passed, f->dropped, f->aborted);
}

/* A failed check names the frame: enough to replay it. */
static unsigned long cur_frame;
static const uint8_t *cur_buf;
static size_t cur_len;
#define FZ_CHECK(cond, ...) do { if (!(cond)) {                                              \
		print_error("frame %lu (seed %#llx, len %zu): ", cur_frame,                     \
			    (unsigned long long)seed, cur_len);                                \
		print_error(__VA_ARGS__);                                                         \
		print_error("\n");                                                                \
		for (size_t _i = 0; _i < cur_len && _i < 128; _i++)                               \
			print_error("%02x%s", cur_buf[_i], _i % 32 == 31 ? "\n" : "");                \
		print_error("\n");                                                                \
		fail_msg("invariant broken: %s", #cond); } } while (0)

static int run_prog(int fd, const uint8_t *in, size_t len, uint8_t *out, size_t *olen, uint32_t ifindex)
{
	struct xdp_md md = { .data_end = (__u32)len, .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len, .data_out = out,
		    .data_size_out = MAXF, .ctx_in = &md, .ctx_size_in = sizeof(md));

	if (bpf_prog_test_run_opts(fd, &o))
		fail_msg("BPF_PROG_RUN (len %zu): %s", len, strerror(errno));
	*olen = o.data_size_out;
	return (int)o.retval;
}

static void percpu_sum(int map_fd, uint32_t key, size_t vsize, void *sum)
{
	uint8_t v[ncpus * vsize];

	assert_int_equal(bpf_map_lookup_elem(map_fd, &key, v), 0);
	memset(sum, 0, vsize);
	for (int c = 0; c < ncpus; c++)
		for (size_t f = 0; f < vsize / 8; f++)
			((__u64 *)sum)[f] += ((__u64 *)(v + c * vsize))[f];
}

/* The reply out to the frame in: well formed, both checksums verify, the
 * frame's MACs, addresses and ports swapped, its VLAN tags kept. */
static struct wp check_reply(const uint8_t *in, size_t ilen, const uint8_t *out, size_t olen)
{
	struct wp a = w_parse(in, ilen), b = w_parse(out, olen);

	FZ_CHECK(a.ok, "a reply to a frame that is not TCP/IP");
	FZ_CHECK(b.ok && b.proto == IPPROTO_TCP, "reply not a well-formed TCP segment");
	FZ_CHECK(b.ip_csum_ok, "reply's IPv4 checksum wrong");
	FZ_CHECK(b.l4_csum_ok, "reply's TCP checksum wrong");
	FZ_CHECK(b.tail == 0, "reply has %zu bytes after its datagram", b.tail);
	FZ_CHECK(!memcmp(out, in + 6, 6) && !memcmp(out + 6, in, 6), "reply not to the frame's source MAC");
	FZ_CHECK(b.v6 == a.v6 && !memcmp(b.daddr, a.saddr, a.v6 ? 16 : 4) &&
		 !memcmp(b.saddr, a.daddr, a.v6 ? 16 : 4), "reply not to the frame's source address");
	FZ_CHECK(b.sport == a.dport && b.dport == a.sport, "reply's ports not swapped");
	FZ_CHECK(b.nvlan == a.nvlan, "VLAN tags %d -> %d", a.nvlan, b.nvlan);
	for (int i = 0; i < a.nvlan; i++)
		FZ_CHECK(b.tci[i] == a.tci[i] && b.tpid[i] == a.tpid[i], "VLAN tag %d changed", i);
	FZ_CHECK(b.ttl == 64, "reply TTL %u", b.ttl);
	FZ_CHECK(b.urg == 0, "reply urgent pointer");
	return b;
}

#include "fuzz_server.h"
#include "fuzz_client.h"
#include "fuzz_rtt.h"

/* ==== generator ====================================================== */

/* The SYN mode's source addresses (--bind): the template's and one more. */
static const char *const GEN_BIND6[] = { "2001:2:0:250::1", "2001:2:0:250::10" };

static struct xp_engine_cfg gen_cfg(int syn, int v6, uint8_t proto, size_t size, int ifindex)
{
	struct xp_engine_cfg c;
	struct frame_spec *s = &c.frames.tmpl;

	memset(&c, 0, sizeof(c));
	c.kind = syn ? XP_TEST_CONNECT : XP_TEST_STREAM;
	c.sport_lo = CPORT_LO;
	c.sport_hi = CPORT_HI;
	c.dport_lo = 63200;
	c.dport_hi = 63209;
	c.ifindex = ifindex;
	c.frames.queues = 1;
	memcpy(s->src_mac, CLI_MAC, 6);
	memcpy(s->dst_mac, SRV_MAC, 6);
	s->src.family = s->dst.family = v6 ? AF_INET6 : AF_INET;
	inet_pton(s->src.family, v6 ? CLI6[0] : CLI4[0], &s->src.v6);
	inet_pton(s->dst.family, v6 ? SRV6[0] : SRV4[0], &s->dst.v6);
	s->l4_proto = proto;
	s->sport = CPORT_LO;
	s->dport = 63200;
	s->tcp_flags = syn ? 0x02 : 0x18;
	s->seq = 1;
	s->ack = syn ? 0 : 1;
	s->frame_size = size;
	s->payload_fill = 0xa5;
	if (syn) {
		s->tcp_syn_options = true;
		s->no_payload = true;
		s->window = 64240;
		s->frame_size = (unsigned)frame_min_size(s);
		c.nbind = 2;
		c.bind[0] = s->src;
		xp_addr_parse(v6 ? GEN_BIND6[1] : CLI4[1], &c.bind[1]);
	}
	return c;
}

static void gen_run(int syn, int v6, uint8_t proto, size_t size)
{
	struct live_bpf *g[2];
	struct frame_layout lay;
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	uint8_t buf[MAXF], out[MAXF], opt[40];
	char err[256];
	struct figs figs = { 0 };
	struct fz_world wd = { .our_mac = SRV_MAC, .peer_mac = CLI_MAC, .our4 = SRV4, .n_our4 = 1,
			       .our6 = SRV6, .n_our6 = 1, .peer4 = CLI4, .n_peer4 = 2, .peer6 = CLI6,
			       .n_peer6 = 1, .dport_lo = 63200, .dport_hi = 63209,
			       .sport_lo = CPORT_LO, .sport_hi = CPORT_HI, .ctrl_port = CTRL_PORT };
	unsigned tid0[512] = { 0 };
	unsigned long tx = 0;

	/* g[0] sends on loopback (where BPF_PROG_RUN runs), g[1] elsewhere. */
	for (int k = 0; k < 2; k++) {
		struct xp_engine_cfg c = gen_cfg(syn, v6, proto, size, k ? (int)lo_ifindex + 1000 : (int)lo_ifindex);
		if (xp_gen_load(&c, 1, &g[k], tmpl, &lay, err, sizeof(err)))
			fail_msg("xp_gen_load: %s", err);
		assert_int_equal(xp_gen_init_state(g[k], tid0, (unsigned)ncpus < 512 ? (unsigned)ncpus : 512), 0);
	}
	fz_state = seed ^ (0x100u * (unsigned)syn + 0x10u * (unsigned)v6 + proto);
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len, olen;
		int r;

		/* Frames of any shape and length, the template among them. */
		if (fz_pct(30)) {
			memcpy(buf, tmpl, lay.len);
			len = fz_pct(50) ? lay.len : fz_mutate(buf, lay.len, 2048);
		} else {
			len = fz_frame(&wd, buf, 2048, opt);
			if (fz_pct(40))
				len = fz_mutate(buf, len, 2048);
		}
		cur_buf = buf;
		cur_len = len;
		figs.frames++;
		/* Where it does not send: untouched. */
		r = run_prog(bpf_program__fd(g[1]->progs.xdp_live), buf, len, out, &olen, lo_ifindex);
		FZ_CHECK(r == XDP_PASS && olen == len && !memcmp(buf, out, len), "generator touched a frame it does not send");
		figs.passed++;
		/* Where it sends: a test frame, or abort when handed too little. */
		r = run_prog(bpf_program__fd(g[0]->progs.xdp_live), buf, len, out, &olen, lo_ifindex);
		if (r == XDP_ABORTED) {
			FZ_CHECK(!syn && len < lay.len, "generator aborted on a %zu-byte frame (template %u)", len,
				 lay.len);
			figs.aborted++;
			continue;
		}
		FZ_CHECK(r == XDP_TX, "generator verdict %d", r);
		FZ_CHECK(syn ? olen == lay.len : olen >= lay.len, "generator sent %zu bytes (template %u)", olen,
			 lay.len);
		struct wp b = w_parse(out, lay.len);
		FZ_CHECK(b.ok && b.tail == 0 && b.ip_csum_ok && b.l4_csum_ok, "generator frame malformed or checksum wrong");
		FZ_CHECK(!memcmp(out, tmpl, 12), "generator frame's MACs");
		FZ_CHECK(b.proto == (syn ? IPPROTO_TCP : proto), "generator frame's protocol");
		FZ_CHECK(b.sport >= CPORT_LO && b.sport <= CPORT_HI && b.dport >= 63200 && b.dport <= 63209,
			 "generator ports %u -> %u out of range", b.sport, b.dport);
		if (syn)
			FZ_CHECK(b.flags == W_SYN && in_list(b.saddr, v6, v6 ? GEN_BIND6 : CLI4, 2),
				 "generator SYN's flags or source");
		figs.replies++;
		tx++;
	}
	FZ_CHECK(xp_gen_sent(g[0]) == tx && xp_gen_sent(g[1]) == 0, "generator counted %llu/%llu frames sent, %lu seen",
		 (unsigned long long)xp_gen_sent(g[0]), (unsigned long long)xp_gen_sent(g[1]), tx);
	char name[64];
	snprintf(name, sizeof(name), "generator (%s, IPv%d, %zu bytes)", syn ? "SYN" : proto == IPPROTO_TCP ? "TCP" : "UDP",
		 v6 ? 6 : 4, syn ? (size_t)lay.len : size);
	report(name, &figs);
	live_bpf__destroy(g[0]);
	live_bpf__destroy(g[1]);
}

static void test_live_udp_small(void **state) { (void)state; gen_run(0, 0, IPPROTO_UDP, 64); }
static void test_live_tcp_large(void **state) { (void)state; gen_run(0, 1, IPPROTO_TCP, 1518); }
static void test_live_syn(void **state) { (void)state; gen_run(1, 0, IPPROTO_TCP, 0); }
static void test_live_syn_v6(void **state) { (void)state; gen_run(1, 1, IPPROTO_TCP, 0); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_client_rst),
		cmocka_unit_test(test_client_data),
		cmocka_unit_test(test_client_tc),
		cmocka_unit_test(test_rtt),
		cmocka_unit_test(test_live_udp_small),
		cmocka_unit_test(test_live_tcp_large),
		cmocka_unit_test(test_live_syn),
		cmocka_unit_test(test_live_syn_v6),
	};
	const char *e;

	if (geteuid() != 0) {
		fprintf(stderr, "test_frame_fuzz: must run as root (BPF_PROG_RUN)\n");
		return 1;
	}
	if ((e = getenv("XP_FUZZ_FRAMES")) && *e)
		nframes = strtoul(e, NULL, 0);
	if ((e = getenv("XP_FUZZ_SEED")) && !strcmp(e, "random")) {
		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			return 1;
	} else if (e && *e) {
		seed = strtoull(e, NULL, 0);
	}
	ncpus = libbpf_num_possible_cpus();
	lo_ifindex = if_nametoindex("lo");
	if (ncpus <= 0 || !lo_ifindex || !nframes)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("frame_fuzz", tests, NULL, NULL);
}
