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
 *  paths are fuzzed too.
 *
 *  client (bpf/client.bpf.c, RST and data modes): the same for its test
 *  flows (server port -> client port): non-test frames pass unchanged, every
 *  reply is well formed and goes to the source, every frame is counted once.
 *
 *  generator (bpf/generator.bpf.c): on an interface it does not send on,
 *  every frame passes unchanged; where it sends, whatever frame it is handed,
 *  it returns a well-formed test frame with valid checksums, or aborts only
 *  when handed fewer bytes than its template.
 *
  * XP_FUZZ_FRAMES (default 50000) frames per program and configuration,
 * XP_FUZZ_SEED (default fixed) seeds the generator: `make fuzz` runs many
 * more with a fresh seed. A failure prints the seed, the frame number and
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
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/server.h"
#include "bpf/client.h"
#include "bpf/generator.h"
#include "bpf/server.skel.h"
#include "bpf/client.skel.h"
#include "bpf/generator.skel.h"
#include "engine/engine.h"
#include "loader/generator_prog.h"
#include "net/frame.h"
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
};
#define NSLOTS (sizeof(SLOTS) / sizeof(SLOTS[0]))
#define PORTS_LO 63200
#define PORTS_HI 63239

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
	printf("%s: %lu frames (seed %#llx): %lu the test's, %lu replies checked, %lu passed, %lu dropped, %lu aborted\n",
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

/* ==== server ========================================================= */

enum cls { C_MALFORMED, C_PASS, C_FRAG, C_FOREIGN, C_TEST };

struct sframe {
	enum cls cls;
	const struct sdef *sd;
	int v6, tcp, ihl_opts;
	size_t l3, l4, l4len, hlen, payload;
	uint8_t flags, saddr[16], daddr[16];
};

static int in_list(const uint8_t *a, int v6, const char *const *l, unsigned n)
{
	uint8_t b[16];

	for (unsigned i = 0; i < n; i++) {
		memset(b, 0, 16);
		inet_pton(v6 ? AF_INET6 : AF_INET, l[i], b);
		if (!memcmp(a, b, v6 ? 16 : 4))
			return 1;
	}
	return 0;
}

/* The server's view of a frame, from its documentation (server.bpf.c,
 * parsing.h): malformed, passed, fragment, foreign or the test's. */
static struct sframe classify_server(const uint8_t *f, size_t len)
{
	struct sframe s = { .cls = C_MALFORMED };
	size_t off = 12;
	uint16_t et, sport, dport;
	uint8_t proto;
	int tags = 0;

	if (len < 14)
		return s;
	et = w_get16(f + 12);
	while (tags < 2 && (et == W_ETH_8021Q || et == W_ETH_8021AD)) {
		if (len < off + 6)
			return s;
		et = w_get16(f + off + 4);
		off += 4;
		tags++;
	}
	s.l3 = off + 2;
	s.cls = C_PASS;
	if (et == W_ETH_IP) {
		const uint8_t *p = f + s.l3;
		size_t hdr, tot;

		s.cls = C_MALFORMED;
		if (len < s.l3 + 20 || p[0] >> 4 != 4 || (hdr = (p[0] & 15) * 4u) < 20 || s.l3 + hdr > len)
			return s;
		tot = w_get16(p + 2);
		if (tot < hdr || s.l3 + tot > len)
			return s;
		s.cls = C_FRAG;
		if (w_get16(p + 6) & 0x3fff)
			return s;
		s.cls = C_PASS;
		proto = p[9];
		s.l4 = s.l3 + hdr;
		s.l4len = tot - hdr;
		s.ihl_opts = hdr > 20;
		memcpy(s.saddr, p + 12, 4);
		memcpy(s.daddr, p + 16, 4);
	} else if (et == W_ETH_IPV6) {
		const uint8_t *p = f + s.l3;

		s.cls = C_MALFORMED;
		if (len < s.l3 + 40 || p[0] >> 4 != 6 || s.l3 + 40 + w_get16(p + 4) > len)
			return s;
		s.cls = C_PASS;
		s.v6 = 1;
		proto = p[6];
		s.l4 = s.l3 + 40;
		s.l4len = w_get16(p + 4);
		memcpy(s.saddr, p + 8, 16);
		memcpy(s.daddr, p + 24, 16);
	} else {
		return s;
	}
	if (proto == IPPROTO_TCP) {
		s.cls = C_MALFORMED;
		if (len < s.l4 + 20)
			return s;
		s.hlen = (f[s.l4 + 12] >> 4) * 4u;
		if (s.hlen < 20 || s.hlen > s.l4len)
			return s;
		s.cls = C_PASS;
		sport = w_get16(f + s.l4);
		dport = w_get16(f + s.l4 + 2);
		if (sport == CTRL_PORT || dport == CTRL_PORT)
			return s;
		s.tcp = 1;
		s.flags = f[s.l4 + 13];
	} else if (proto == IPPROTO_UDP) {
		s.cls = C_MALFORMED;
		if (len < s.l4 + 8 || s.l4len < 8)
			return s;
		s.cls = C_PASS;
		s.hlen = 8;
		dport = w_get16(f + s.l4 + 2);
	} else {
		return s;
	}
	s.payload = s.l4len - s.hlen;
	for (size_t i = 0; i < NSLOTS; i++)
		if (dport >= SLOTS[i].lo && dport <= SLOTS[i].hi)
			s.sd = &SLOTS[i];
	if (!s.sd || !(s.sd->protos & (s.tcp ? XP_PROTO_TCP : XP_PROTO_UDP)))
		return s;
	s.cls = in_list(s.saddr, s.v6, s.v6 ? CLI6 : CLI4, s.v6 ? 1 : 2) ? C_TEST : C_FOREIGN;
	return s;
}

/* A TCP stack would answer it at all: to our MAC and address, from a
 * unicast MAC and a unicast address that is not ours (bpf/lib/addr.h's
 * rules, restated), with a valid checksum (*csum_ok). */
static int addressed_to_us(const uint8_t *f, const struct sframe *s)
{
	const uint8_t *a = s->saddr;

	if (memcmp(f, SRV_MAC, 6) || (f[6] & 1))
		return 0;
	if (!in_list(s->daddr, s->v6, s->v6 ? SRV6 : SRV4, 1) || in_list(a, s->v6, s->v6 ? SRV6 : SRV4, 1))
		return 0;
	if (!s->v6)
		return a[0] != 0 && a[0] != 127 && a[0] < 224;
	static const uint8_t zero[16], one[16] = { [15] = 1 }, mapped[12] = { [10] = 0xff, [11] = 0xff };
	return a[0] != 0xff && memcmp(a, zero, 16) && memcmp(a, one, 16) && memcmp(a, mapped, 12);
}

struct srv {
	struct server_bpf *s;
	int fd;
	struct xp_counters model[NSLOTS];
	uint64_t g[XP_G_NSTATS];
	struct figs figs;
	uint32_t cookie_seen[2];      /* a SYN-ACK's cookie and our ISN, for the next ACK */
	uint8_t hs[MAXF];             /* the SYN it answered */
	size_t hs_len;
};

static void srv_load(struct srv *v)
{
	uint32_t one = 1, local = XP_LOCAL_UNICAST;

	memset(v, 0, sizeof(*v));
	v->s = server_bpf__open();
	assert_non_null(v->s);
	v->s->rodata->config.ctrl_port = CTRL_PORT;
	v->s->rodata->config.cookie_key[0] = fz_next();
	v->s->rodata->config.cookie_key[1] = fz_next();
	assert_int_equal(server_bpf__load(v->s), 0);
	v->fd = bpf_program__fd(v->s->progs.xdp_server);
	for (size_t i = 0; i < NSLOTS; i++) {
		const struct sdef *d = &SLOTS[i];
		struct xp_slot_cfg cfg = { .flags = d->flags | XP_SLOT_ACTIVE, .protos = d->protos,
					   .close_mode = d->close_mode, .ifindex = lo_ifindex,
					   .peer_family = XP_FAMILY_V4, .npeers = 2 };
		struct xp_peer_key k = { .slot = d->slot };
		uint32_t val = d->slot + 1;

		memcpy(cfg.mac, SRV_MAC, 6);
		inet_pton(AF_INET, CLI4[0], cfg.peer);
		k.family = XP_FAMILY_V4;
		inet_pton(AF_INET, CLI4[1], k.addr);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_peers), &k, &one, 0), 0);
		memset(k.addr, 0, 16);
		k.family = XP_FAMILY_V6;
		inet_pton(AF_INET6, CLI6[0], k.addr);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_peers), &k, &one, 0), 0);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_cfg), &d->slot, &cfg, 0), 0);
		for (uint32_t p = d->lo; p <= d->hi; p++)
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.port_slot), &p, &val, 0), 0);
	}
	struct xp_local_key lk = { .ifindex = lo_ifindex, .family = XP_FAMILY_V4 };
	inet_pton(AF_INET, SRV4[0], lk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.local_addr), &lk, &local, 0), 0);
	memset(lk.addr, 0, 16);
	lk.family = XP_FAMILY_V6;
	inet_pton(AF_INET6, SRV6[0], lk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.local_addr), &lk, &local, 0), 0);
}

/* The model's counters against the program's, every field. */
static void srv_compare(struct srv *v, size_t i)
{
	struct xp_counters got;

	percpu_sum(bpf_map__fd(v->s->maps.counters), SLOTS[i].slot, sizeof(got), &got);
	for (size_t k = 0; k < sizeof(got) / 8; k++)
		FZ_CHECK(((__u64 *)&got)[k] == ((__u64 *)&v->model[i])[k],
			 "slot %u counter %zu: %llu, model %llu", SLOTS[i].slot, k,
			 (unsigned long long)((__u64 *)&got)[k], (unsigned long long)((__u64 *)&v->model[i])[k]);
}

static void srv_compare_all(struct srv *v)
{
	uint64_t g;
	struct xp_counters z;

	for (size_t i = 0; i < NSLOTS; i++)
		srv_compare(v, i);
	for (uint32_t s = 0; s < XP_MAX_SLOTS; s++) {
		int ours = 0;
		for (size_t i = 0; i < NSLOTS; i++)
			ours |= SLOTS[i].slot == s;
		if (ours)
			continue;
		percpu_sum(bpf_map__fd(v->s->maps.counters), s, sizeof(z), &z);
		for (size_t k = 0; k < sizeof(z) / 8; k++)
			FZ_CHECK(((__u64 *)&z)[k] == 0, "slot %u (no test) counted", s);
	}
	for (uint32_t k = 0; k < XP_G_NSTATS; k++) {
		percpu_sum(bpf_map__fd(v->s->maps.gstats), k, sizeof(g), &g);
		FZ_CHECK(g == v->g[k], "global stat %u: %llu, model %llu", k, (unsigned long long)g,
			 (unsigned long long)v->g[k]);
	}
	/* SEEN == counted in slots + PASSED + MALFORMED; sub-counts fit. */
	uint64_t counted = 0;
	for (size_t i = 0; i < NSLOTS; i++) {
		struct xp_counters *c = &v->model[i];
		counted += c->pkts;
		if (SLOTS[i].flags & XP_SLOT_RESPOND)
			FZ_CHECK(c->pkts - c->udp_pkts == c->synack_sent + c->fin_answered + c->rst_sent +
				 c->noreply_addr + c->noreply_shape + c->noreply_csum + c->noreply_room +
				 c->noreply_other, "slot %u: answered + not answered != TCP frames", SLOTS[i].slot);
		FZ_CHECK(c->cookie_invalid <= c->noreply_other, "cookie_invalid > noreply_other");
	}
	FZ_CHECK(v->g[XP_G_SEEN] == counted + v->g[XP_G_PASSED] + v->g[XP_G_MALFORMED], "global counts do not add up");
	FZ_CHECK(v->g[XP_G_FOREIGN] + v->g[XP_G_FRAGMENT] <= v->g[XP_G_PASSED], "sub-counts exceed PASSED");
}

/* One frame through the server, checked against the model. */
static void srv_one(struct srv *v, const uint8_t *in, size_t len)
{
	uint8_t out[MAXF];
	size_t olen;
	struct sframe s = classify_server(in, len);
	int r = run_prog(v->fd, in, len, out, &olen, lo_ifindex);

	cur_buf = in;
	cur_len = len;
	v->figs.frames++;
	v->g[XP_G_SEEN]++;
	FZ_CHECK(r == XDP_PASS || r == XDP_DROP || r == XDP_TX, "verdict %d", r);
	if (s.cls != C_TEST) {
		FZ_CHECK(r == XDP_PASS, "not the test's (class %d) but verdict %d", s.cls, r);
		FZ_CHECK(olen == len && !memcmp(in, out, len), "not the test's but changed");
		v->g[s.cls == C_MALFORMED ? XP_G_MALFORMED : XP_G_PASSED]++;
		if (s.cls == C_FRAG)
			v->g[XP_G_FRAGMENT]++;
		if (s.cls == C_FOREIGN)
			v->g[XP_G_FOREIGN]++;
		v->figs.passed++;
		return;
	}
	v->figs.test++;
	size_t i = (size_t)(s.sd - SLOTS);
	struct xp_counters *c = &v->model[i];
	c->pkts++;
	c->bytes += len;
	if (s.v6)
		c->ipv6_pkts++;
	else
		c->ipv4_pkts++;
	if (!s.tcp) {
		c->udp_pkts++;
	} else {
		if (s.flags & W_SYN) {
			if (s.flags & W_ACK)
				c->tcp_synack++;
			else
				c->tcp_syn++;
		}
		if (s.flags & W_FIN)
			c->tcp_fin++;
		if (s.flags & W_RST)
			c->tcp_rst++;
		if ((s.flags & (W_ACK | W_SYN | W_FIN | W_RST)) == W_ACK && !s.payload)
			c->tcp_ack_only++;
	}
	if (s.payload) {
		c->data_pkts++;
		c->data_bytes += s.payload;
	}
	int other = s.sd->flags & XP_SLOT_PASS ? XDP_PASS : XDP_DROP;
	if (!(s.sd->flags & XP_SLOT_RESPOND) || !s.tcp) {
		FZ_CHECK(r == other && olen == len && !memcmp(in, out, len), "counted frame not %s untouched",
			 other == XDP_PASS ? "passed" : "dropped");
		if (r == XDP_PASS) v->figs.passed++; else v->figs.dropped++;
		srv_compare(v, i);
		return;
	}

	/* The responder. What a TCP stack would not answer is never answered. */
	struct wp w = w_parse(in, len);
	__u64 *reason = NULL;
	if (s.ihl_opts)
		reason = &c->noreply_shape;
	else if (!addressed_to_us(in, &s))
		reason = &c->noreply_addr;
	else if (!w.ok || !w.l4_csum_ok)
		reason = &c->noreply_csum;
	else if (s.flags & W_RST)
		reason = &c->noreply_other;
	else if ((s.flags & (W_SYN | W_ACK | W_FIN)) != W_SYN && (s.flags & (W_SYN | W_ACK)) != W_ACK)
		reason = &c->noreply_other;
	if (reason) {
		FZ_CHECK(r == other && olen == len && !memcmp(in, out, len), "unanswerable frame not %s untouched",
			 other == XDP_PASS ? "passed" : "dropped");
		(*reason)++;
	} else if (r == XDP_TX) {
		struct wp b = check_reply(in, len, out, olen);
		v->figs.replies++;
		FZ_CHECK(b.payload == 0, "server reply with %zu payload bytes", b.payload);
		if ((s.flags & (W_SYN | W_ACK | W_FIN)) == W_SYN) {
			FZ_CHECK(b.flags == (W_SYN | W_ACK) && b.ack == w.seq + 1, "SYN not answered by its SYN-ACK");
			c->synack_sent++;
			/* Keep it: the next frames may complete this handshake. */
			v->cookie_seen[0] = b.seq;
			v->cookie_seen[1] = w.seq;
			memcpy(v->hs, in, len);
			v->hs_len = len;
		} else if (b.flags == (W_FIN | W_ACK)) {
			FZ_CHECK((s.flags & W_FIN) && b.seq == w.ack && b.ack == w.seq + w.payload + 1,
				 "FIN-ACK that does not answer a FIN");
			c->fin_answered++;
		} else {
			FZ_CHECK(b.flags == W_RST && !(s.flags & W_FIN) && s.sd->close_mode == XP_CLOSE_RST &&
				 b.seq == w.ack, "unexpected reply flags %#x to %#x", b.flags, s.flags);
			c->rst_sent++;
		}
	} else {
		/* An ACK whose cookie did not check out (or a valid one the
		 * slot keeps quiet about): no reply. A FIN without data is
		 * always answered. */
		FZ_CHECK(!((s.flags & W_FIN) && !s.payload), "a FIN without data not answered");
		FZ_CHECK(r == other && olen == len && !memcmp(in, out, len), "unanswered frame changed");
		c->noreply_other++;
	}
	if (r == XDP_PASS) v->figs.passed++; else if (r == XDP_DROP) v->figs.dropped++;
	/* The cookie counters depend on the key: take the program's, bounded. */
	struct xp_counters got;
	percpu_sum(bpf_map__fd(v->s->maps.counters), s.sd->slot, sizeof(got), &got);
	FZ_CHECK(got.conn_established - c->conn_established <= 1 && got.cookie_invalid - c->cookie_invalid <= 1,
		 "cookie counters moved by more than one frame");
	c->conn_established = got.conn_established;
	c->cookie_invalid = got.cookie_invalid;
	srv_compare(v, i);
}

/* The ACK (or ACK|FIN, or data + FIN, or the final ACK after our FIN) that
 * completes the last answered SYN, with its real cookie. */
static size_t srv_handshake_frame(struct srv *v, uint8_t *buf)
{
	struct wp w = w_parse(v->hs, v->hs_len);
	size_t len = v->hs_len;
	uint32_t seq = v->cookie_seen[1] + 1, ack = v->cookie_seen[0] + 1;

	memcpy(buf, v->hs, len);
	if (!w.ok)
		return len;
	uint8_t *t = buf + w.l4;
	switch (fz_below(4)) {
	case 0: t[13] = W_ACK; break;
	case 1: t[13] = W_ACK | W_FIN; break;
	case 2: t[13] = W_ACK | W_PSH | W_FIN; break; /* with the SYN's payload as data */
	default: t[13] = W_ACK; seq += 1; ack += 1; break; /* the ACK of our FIN */
	}
	w_put32(t + 4, seq);
	w_put32(t + 8, ack);
	w_put16(t + 16, 0);
	w_put16(t + 16, w_fold(w_sum(t, w.l4len, w_pseudo(w.v6, w.saddr, w.daddr, IPPROTO_TCP,
							    (uint32_t)w.l4len))));
	return len;
}

static void test_server(void **state)
{
	struct srv *v = calloc(1, sizeof(*v));
	struct fz_world wd = { .our_mac = SRV_MAC, .peer_mac = CLI_MAC, .our4 = SRV4, .n_our4 = 1,
			       .our6 = SRV6, .n_our6 = 1, .peer4 = CLI4, .n_peer4 = 2, .peer6 = CLI6,
			       .n_peer6 = 1, .dport_lo = PORTS_LO, .dport_hi = PORTS_HI + 5,
			       .sport_lo = CPORT_LO, .sport_hi = CPORT_HI, .ctrl_port = CTRL_PORT };
	uint8_t buf[MAXF], opt[40];

	(void)state;
	assert_non_null(v);
	fz_state = seed;
	srv_load(v);
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len;

		if (v->hs_len && fz_pct(15)) {
			len = srv_handshake_frame(v, buf);
			if (fz_pct(30))
				len = fz_mutate(buf, len, 2048);
		} else {
			len = fz_frame(&wd, buf, 2048, opt);
			if (fz_pct(40))
				len = fz_mutate(buf, len, 2048);
		}
		srv_one(v, buf, len);
		if (cur_frame % 512 == 511)
			srv_compare_all(v);
	}
	srv_compare_all(v);
	report("server", &v->figs);
	struct xp_counters *c = &v->model[0];
	printf("server: responding slot: %llu SYN-ACKs, %llu FIN-ACKs, %llu RSTs, %llu established; not answered: "
	       "%llu addressing, %llu shape, %llu checksum, %llu room, %llu other\n",
	       (unsigned long long)c->synack_sent, (unsigned long long)c->fin_answered,
	       (unsigned long long)c->rst_sent, (unsigned long long)c->conn_established,
	       (unsigned long long)c->noreply_addr, (unsigned long long)c->noreply_shape,
	       (unsigned long long)c->noreply_csum, (unsigned long long)c->noreply_room,
	       (unsigned long long)c->noreply_other);
	/* The run must have reached every path it claims to check. */
	assert_true(c->synack_sent > 0 && c->fin_answered > 0 && c->rst_sent > 0 && c->conn_established > 0);
	assert_true(c->noreply_addr > 0 && c->noreply_shape > 0 && c->noreply_csum > 0 && c->noreply_other > 0);
	assert_true(v->g[XP_G_MALFORMED] > 0 && v->g[XP_G_FOREIGN] > 0 && v->g[XP_G_FRAGMENT] > 0);
	server_bpf__destroy(v->s);
	free(v);
}

/* ==== client ========================================================= */

struct cli {
	struct client_bpf *c;
	int fd;
	uint32_t mode, data_len;
	struct xp_cc_counters model;
	struct figs figs;
};

static void cli_compare(struct cli *v)
{
	struct xp_cc_counters got;

	percpu_sum(bpf_map__fd(v->c->maps.cc_counters), 0, sizeof(got), &got);
	for (size_t k = 0; k < sizeof(got) / 8; k++)
		FZ_CHECK(((__u64 *)&got)[k] == ((__u64 *)&v->model)[k], "client counter %zu: %llu, model %llu", k,
			 (unsigned long long)((__u64 *)&got)[k], (unsigned long long)((__u64 *)&v->model)[k]);
}

/* Is it a segment of a test flow (server port -> client port), as
 * client.bpf.c's xp_cc_test_seg documents? *shape_ok: a reply can be
 * built for it (no IPv4 options, not a fragment). */
static int client_flow(const uint8_t *f, size_t len, struct wp *w, int *shape_ok)
{
	struct sframe s = classify_server(f, len); /* the same parsers up to L4 */

	*w = w_parse(f, len);
	*shape_ok = 0;
	if (s.cls == C_FRAG) {
		/* A first fragment is a test segment; a later one is not. */
		const uint8_t *p = f + s.l3;
		size_t hdr = (p[0] & 15) * 4u, tot = w_get16(p + 2);
		if (w_get16(p + 6) & 0x1fff || p[9] != IPPROTO_TCP || tot < hdr + 20)
			return 0;
		const uint8_t *t = p + hdr;
		size_t doff = (t[12] >> 4) * 4u;
		if (doff < 20 || doff > tot - hdr)
			return 0;
		uint16_t sp = w_get16(t), dp = w_get16(t + 2);
		w->flags = t[13];
		return sp != CTRL_PORT && dp != CTRL_PORT && dp >= CPORT_LO && dp <= CPORT_HI && sp >= PORTS_LO &&
		       sp <= PORTS_HI;
	}
	if (s.cls == C_MALFORMED || !s.tcp)
		return 0;
	/* classify_server stopped at the control port or a slot lookup;
	 * the client's ranges are its own. */
	uint16_t sp = w_get16(f + s.l4), dp = w_get16(f + s.l4 + 2);
	if (sp == CTRL_PORT || dp == CTRL_PORT || dp < CPORT_LO || dp > CPORT_HI || sp < PORTS_LO || sp > PORTS_HI)
		return 0;
	*shape_ok = !s.ihl_opts;
	w->flags = s.flags;
	return 1;
}

static void cli_one(struct cli *v, const uint8_t *in, size_t len)
{
	uint8_t out[MAXF];
	size_t olen;
	struct wp w;
	int shape_ok, test = client_flow(in, len, &w, &shape_ok);
	int r = run_prog(v->fd, in, len, out, &olen, lo_ifindex);
	uint8_t fl = w.flags;

	cur_buf = in;
	cur_len = len;
	v->figs.frames++;
	FZ_CHECK(r == XDP_PASS || r == XDP_DROP || r == XDP_TX, "client verdict %d", r);
	if (!test || (!(fl & W_RST) && (fl & (W_SYN | W_ACK | W_FIN)) != (W_SYN | W_ACK) &&
		      (fl & (W_SYN | W_ACK | W_FIN)) != (W_ACK | W_FIN))) {
		FZ_CHECK(r == XDP_PASS && olen == len && !memcmp(in, out, len), "client: not its to answer, but touched");
		v->model.passed++;
		v->figs.passed++;
		cli_compare(v);
		return;
	}
	v->figs.test++;
	if (fl & W_RST) {
		FZ_CHECK(r == XDP_DROP, "client: RST not dropped");
		v->model.rst_seen++;
		v->figs.dropped++;
	} else if ((fl & (W_SYN | W_ACK | W_FIN)) == (W_SYN | W_ACK)) {
		v->model.synack_seen++;
		if (!shape_ok) {
			FZ_CHECK(r == XDP_DROP, "client: unanswerable SYN-ACK not dropped");
			v->model.unanswered++;
			v->figs.dropped++;
		} else if (r == XDP_PASS) {
			/* Data mode, no room in this frame: to TC, untouched. */
			FZ_CHECK(v->mode == XP_CC_MODE_DATA && olen == len && !memcmp(in, out, len),
				 "client: SYN-ACK passed");
			v->figs.passed++;
		} else {
			FZ_CHECK(r == XDP_TX, "client: SYN-ACK not answered (%d)", r);
			struct wp b = check_reply(in, len, out, olen);
			v->figs.replies++;
			FZ_CHECK(b.seq == w.ack && b.ack == w.seq + 1, "client: ACK's numbers");
			v->model.acks_sent++;
			if (v->mode == XP_CC_MODE_DATA) {
				FZ_CHECK(b.payload <= v->data_len && (b.flags & W_FIN), "client: data segment");
				v->model.fins_sent++;
				if (b.payload) {
					v->model.data_sent++;
					v->model.data_bytes += b.payload;
				}
			} else {
				FZ_CHECK(b.flags == W_ACK && b.payload == 0, "client: handshake ACK");
			}
		}
	} else {
		if (!shape_ok) {
			FZ_CHECK(r == XDP_DROP, "client: unanswerable FIN not dropped");
			v->model.unanswered++;
			v->figs.dropped++;
		} else {
			FZ_CHECK(r == XDP_TX, "client: FIN not answered (%d)", r);
			struct wp b = check_reply(in, len, out, olen);
			v->figs.replies++;
			FZ_CHECK(b.flags == W_ACK && b.payload == 0 && b.seq == w.ack && b.ack == w.seq + w.payload + 1,
				 "client: final ACK");
			v->model.finack_answered++;
		}
	}
	cli_compare(v);
}

static void client_run(uint32_t mode, uint32_t data_len, const char *name)
{
	struct cli v = { .mode = mode, .data_len = data_len };
	/* Frames of the server's side to the client: reversed roles. */
	struct fz_world wd = { .our_mac = CLI_MAC, .peer_mac = SRV_MAC, .our4 = CLI4, .n_our4 = 2,
			       .our6 = CLI6, .n_our6 = 1, .peer4 = SRV4, .n_peer4 = 1, .peer6 = SRV6,
			       .n_peer6 = 1, .dport_lo = CPORT_LO, .dport_hi = CPORT_HI + 5,
			       .sport_lo = PORTS_LO, .sport_hi = PORTS_HI, .ctrl_port = CTRL_PORT };
	uint8_t buf[MAXF], opt[40];

	fz_state = seed ^ mode;
	v.c = client_bpf__open();
	assert_non_null(v.c);
	v.c->rodata->config.mode = mode;
	v.c->rodata->config.data_len = data_len;
	v.c->rodata->config.cport_lo = CPORT_LO;
	v.c->rodata->config.cport_hi = CPORT_HI;
	v.c->rodata->config.dport_lo = PORTS_LO;
	v.c->rodata->config.dport_hi = PORTS_HI;
	v.c->rodata->config.ctrl_port = CTRL_PORT;
	assert_int_equal(client_bpf__load(v.c), 0);
	v.fd = bpf_program__fd(v.c->progs.xdp_client);
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len = fz_frame(&wd, buf, 2048, opt);

		if (fz_pct(40))
			len = fz_mutate(buf, len, 2048);
		cli_one(&v, buf, len);
	}
	report(name, &v.figs);
	assert_true(v.model.acks_sent > 0 && v.model.finack_answered > 0 && v.model.rst_seen > 0 &&
		    v.model.unanswered > 0);
	client_bpf__destroy(v.c);
}

/* The data mode's TC fallback (tc_client) on the same frames: what it
 * does not build a data segment for goes on untouched (TC_ACT_OK); a
 * test flow's SYN-ACK becomes the data segment, redirected back out. (In
 * the real pipeline it only sees the SYN-ACKs XDP had no room for.) */
static void test_client_tc(void **state)
{
	struct client_bpf *c = client_bpf__open();
	struct fz_world wd = { .our_mac = CLI_MAC, .peer_mac = SRV_MAC, .our4 = CLI4, .n_our4 = 2,
			       .our6 = CLI6, .n_our6 = 1, .peer4 = SRV4, .n_peer4 = 1, .peer6 = SRV6,
			       .n_peer6 = 1, .dport_lo = CPORT_LO, .dport_hi = CPORT_HI + 5,
			       .sport_lo = PORTS_LO, .sport_hi = PORTS_HI, .ctrl_port = CTRL_PORT };
	uint8_t buf[MAXF], out[MAXF], opt[40];
	struct figs figs = { 0 };
	struct xp_cc_counters model = { 0 }, got;

	(void)state;
	assert_non_null(c);
	c->rodata->config.mode = XP_CC_MODE_DATA;
	c->rodata->config.data_len = 1000;
	c->rodata->config.cport_lo = CPORT_LO;
	c->rodata->config.cport_hi = CPORT_HI;
	c->rodata->config.dport_lo = PORTS_LO;
	c->rodata->config.dport_hi = PORTS_HI;
	c->rodata->config.ctrl_port = CTRL_PORT;
	assert_int_equal(client_bpf__load(c), 0);
	fz_state = seed ^ 0x7c;
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len = fz_frame(&wd, buf, 2048, opt);
		struct wp w;
		int shape_ok;

		if (fz_pct(40))
			len = fz_mutate(buf, len, 2048);
		cur_buf = buf;
		cur_len = len;
		figs.frames++;
		int test = client_flow(buf, len, &w, &shape_ok) && (w.flags & (W_SYN | W_ACK | W_FIN)) == (W_SYN | W_ACK);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len, .data_out = out,
			    .data_size_out = MAXF);
		if (bpf_prog_test_run_opts(bpf_program__fd(c->progs.tc_client), &o)) {
			/* The kernel makes no skb of an untagged IP frame too
			 * short for its IP header (EINVAL): nothing to run. */
			uint16_t et = w_get16(buf + 12);
			FZ_CHECK(errno == EINVAL && ((et == W_ETH_IP && len < 34) || (et == W_ETH_IPV6 && len < 54)),
				 "BPF_PROG_RUN tc_client: %s", strerror(errno));
			figs.aborted++;
			continue;
		}
		int r = (int)o.retval;
		if (!test) {
			FZ_CHECK(r == 0 /* TC_ACT_OK */ && o.data_size_out == len && !memcmp(buf, out, len),
				 "tc_client touched a frame it does not answer (%d)", r);
			figs.passed++;
			continue;
		}
		figs.test++;
		if (!shape_ok) {
			FZ_CHECK(r == 2 /* TC_ACT_SHOT */, "tc_client: unanswerable SYN-ACK not dropped (%d)", r);
			figs.dropped++;
			continue;
		}
		FZ_CHECK(r == 7 /* TC_ACT_REDIRECT */, "tc_client: SYN-ACK not answered (%d)", r);
		struct wp b = check_reply(buf, len, out, o.data_size_out);
		FZ_CHECK(b.seq == w.ack && b.ack == w.seq + 1 && (b.flags & W_FIN) && b.payload <= 1000,
			 "tc_client: data segment's numbers");
		figs.replies++;
		model.acks_sent++;
		model.fins_sent++;
		model.data_tc += b.payload > 0;
		model.data_sent += b.payload > 0;
		model.data_bytes += b.payload;
		/* Zero bytes: the payload adds nothing to the checksum, which
		 * only holds if it really is zeroes. */
		for (size_t i = b.l4 + b.hlen; i < b.l4 + b.l4len; i++)
			FZ_CHECK(out[i] == 0, "tc_client: payload byte %zu not zero", i);
		percpu_sum(bpf_map__fd(c->maps.cc_counters), 0, sizeof(got), &got);
		for (size_t k = 0; k < sizeof(got) / 8; k++)
			FZ_CHECK(((__u64 *)&got)[k] == ((__u64 *)&model)[k], "tc_client counter %zu", k);
	}
	report("client TC fallback (data mode; \"aborted\": frames the kernel makes no skb of)", &figs);
	assert_true(figs.replies > 0);
	client_bpf__destroy(c);
}

static void test_client_rst(void **state) { (void)state; client_run(XP_CC_MODE_RST, 0, "client (RST mode)"); }
static void test_client_data(void **state) { (void)state; client_run(XP_CC_MODE_DATA, 100, "client (data mode)"); }

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
	struct generator_bpf *g[2];
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
		r = run_prog(bpf_program__fd(g[1]->progs.xdp_generator), buf, len, out, &olen, lo_ifindex);
		FZ_CHECK(r == XDP_PASS && olen == len && !memcmp(buf, out, len), "generator touched a frame it does not send");
		figs.passed++;
		/* Where it sends: a test frame, or abort when handed too little. */
		r = run_prog(bpf_program__fd(g[0]->progs.xdp_generator), buf, len, out, &olen, lo_ifindex);
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
	generator_bpf__destroy(g[0]);
	generator_bpf__destroy(g[1]);
}

static void test_generator_udp_small(void **state) { (void)state; gen_run(0, 0, IPPROTO_UDP, 64); }
static void test_generator_tcp_large(void **state) { (void)state; gen_run(0, 1, IPPROTO_TCP, 1518); }
static void test_generator_syn(void **state) { (void)state; gen_run(1, 0, IPPROTO_TCP, 0); }
static void test_generator_syn_v6(void **state) { (void)state; gen_run(1, 1, IPPROTO_TCP, 0); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server),
		cmocka_unit_test(test_client_rst),
		cmocka_unit_test(test_client_data),
		cmocka_unit_test(test_client_tc),
		cmocka_unit_test(test_generator_udp_small),
		cmocka_unit_test(test_generator_tcp_large),
		cmocka_unit_test(test_generator_syn),
		cmocka_unit_test(test_generator_syn_v6),
	};
	const char *e;

	if (geteuid() != 0) {
		fprintf(stderr, "test_frame_fuzz: must run as root (BPF_PROG_RUN)\n");
		return 1;
	}
	if ((e = getenv("XP_FUZZ_FRAMES")) && *e)
		nframes = strtoul(e, NULL, 0);
	if ((e = getenv("XP_FUZZ_SEED")) && *e)
		seed = strtoull(e, NULL, 0);
	ncpus = libbpf_num_possible_cpus();
	lo_ifindex = if_nametoindex("lo");
	if (ncpus <= 0 || !lo_ifindex || !nframes)
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests_name("frame_fuzz", tests, NULL, NULL);
}
