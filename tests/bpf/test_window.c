// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests of the XDP connection engine's window (-P; bpf/window.h,
 * user/engine/window.c): the SYN sender (bpf/live.bpf.c in SYN mode,
 * loaded by the engine's own loader), the client's XDP program
 * (bpf/xdp_connect.bpf.c) and the keeper's scan, all three on the same maps,
 * with plain BPF_PROG_RUN (frames in, frames out) and the keeper's scan run
 * on a made-up clock with its frames captured instead of sent. Needs root.
 *
 *   - window bookkeeping: at most P SYNs until a slot frees; the slot is in
 *     the ISN; a completion, a reset, an ICMP unreachable or a give-up frees
 *     exactly one slot;
 *     late SYN-ACKs are reset, duplicates answered again and not counted;
 *   - retransmission timing: nothing before 1 s, the same SYN byte for byte
 *     at 1 s, then 2 s later, then given up (timed out) after --syn-retries;
 *     --fin's ACK|FIN likewise; keepalives and the resets at the end of -k.
 *
 * Each frame the programs or the keeper send is parsed independently here
 * (offsets from the frame layout) and its TCP checksum summed from scratch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "frame/csum.h"
#include "frame/frame.h"
#include "engine/engine.h"
#include "engine/window.h"
#include "engine/window_scan.h"
#include "bpf/live.h"
#include "engine/live_prog.h"
#include "bpf/live.skel.h"
#include "bpf/xdp_connect.h"
#include "bpf/xdp_connect.skel.h"

#define NS_PER_S 1000000000ull
#define SPORT_LO 20000
#define SPORT_HI 20099
#define DPORT_LO 63000
#define DPORT_HI 63003
#define SRV_ISN  0x11223344u

struct captured {
	uint8_t f[16][256];
	size_t len[16];
	unsigned n;
};

struct env {
	struct xp_engine_cfg cfg;
	struct xp_window *w;
	struct live_bpf *gen;
	struct xdp_connect_bpf *cli;
	uint8_t tmpl[XP_GEN_MAX_LEN];
	struct frame_layout lay;
	struct captured cap;
};

static int capture(void *arg, const uint8_t *frame, size_t len)
{
	struct captured *c = arg;
	if (c->n < 16 && len <= sizeof(c->f[0])) {
		memcpy(c->f[c->n], frame, len);
		c->len[c->n] = len;
	}
	c->n++;
	return 0;
}

/* A SYN template as the client builds it (IPv4, Linux-like options). */
static struct xp_engine_cfg make_cfg(enum xp_test_kind kind, unsigned parallel, unsigned retries)
{
	struct xp_engine_cfg c;
	struct frame_spec *s = &c.frames.tmpl;

	memset(&c, 0, sizeof(c));
	c.kind = kind;
	c.parallel = parallel;
	c.sport_lo = SPORT_LO;
	c.sport_hi = SPORT_HI;
	c.dport_lo = DPORT_LO;
	c.dport_hi = DPORT_HI;
	c.frames.queues = 1;
	c.hs.syn_retries = retries;
	memcpy(s->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	s->src.family = s->dst.family = AF_INET;
	inet_pton(AF_INET, "198.18.1.2", &s->src.v4);
	inet_pton(AF_INET, "198.19.1.2", &s->dst.v4);
	s->l4_proto = IPPROTO_TCP;
	s->sport = SPORT_LO;
	s->dport = DPORT_LO;
	s->tcp_flags = TH_SYN;
	s->tcp_syn_options = true;
	s->no_payload = true;
	s->window = 64240;
	s->frame_size = frame_min_size(s);
	return c;
}

static struct xdp_connect_bpf *load_client(const struct xp_win_maps *m, uint32_t mode)
{
	struct xdp_connect_bpf *cli = xdp_connect_bpf__open();
	assert_non_null(cli);
	struct xp_xdp_connect_config *ro = &cli->rodata->config;
	ro->mode = mode;
	ro->cport_lo = SPORT_LO;
	ro->cport_hi = SPORT_HI;
	ro->dport_lo = DPORT_LO;
	ro->dport_hi = DPORT_HI;
	ro->family = 4;
	ro->win_size = m->size;
	ro->win_shift = m->shift;
	bpf_program__set_autoload(cli->progs.tc_connect, false);
	assert_int_equal(bpf_map__reuse_fd(cli->maps.win_slots, m->slots_fd), 0);
	assert_int_equal(bpf_map__reuse_fd(cli->maps.win_free, m->free_fd), 0);
	assert_int_equal(bpf_map__reuse_fd(cli->maps.win_ctl, m->ctl_fd), 0);
	assert_int_equal(xdp_connect_bpf__load(cli), 0);
	return cli;
}

static void env_open(struct env *e, enum xp_test_kind kind, uint32_t mode, unsigned parallel, unsigned retries,
		     double keepalive_s)
{
	char err[256];
	int ncpus = libbpf_num_possible_cpus();

	memset(e, 0, sizeof(*e));
	e->cfg = make_cfg(kind, parallel, retries);
	e->cfg.hs.keepalive_s = keepalive_s;
	if (xp_window_open(&e->cfg, mode, &e->w, &e->cfg.hs.win, err, sizeof(err)))
		fail_msg("xp_window_open: %s", err);
	e->w->send = capture;
	e->w->send_arg = &e->cap;
	if (xp_gen_load(&e->cfg, 1, &e->gen, e->tmpl, &e->lay, err, sizeof(err)))
		fail_msg("xp_gen_load: %s", err);
	unsigned *tid = calloc((size_t)ncpus, sizeof(*tid));
	assert_non_null(tid);
	assert_int_equal(xp_gen_init_state(e->gen, tid, (unsigned)ncpus), 0);
	free(tid);
	e->cli = load_client(&e->cfg.hs.win, mode);
}

static void env_close(struct env *e)
{
	xdp_connect_bpf__destroy(e->cli);
	live_bpf__destroy(e->gen);
	xp_window_close(e->w);
}

/* One plain BPF_PROG_RUN of prog on in; verdict, output into out. */
static uint32_t run(int fd, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	static uint8_t scratch[4096];
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = (__u32)len,
		    .data_out = out ? out : scratch, .data_size_out = 4096, .repeat = 1);
	if (bpf_prog_test_run_opts(fd, &o))
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	if (olen)
		*olen = o.data_size_out;
	return o.retval;
}

/* The generator's next SYN (garbage in, as live mode recycles pages): its verdict. */
static uint32_t gen_syn(struct env *e, uint8_t *out)
{
	uint8_t in[256];
	size_t olen;
	memset(in, 0x5a, sizeof(in));
	uint32_t v = run(bpf_program__fd(e->gen->progs.xdp_live), in, e->lay.len + 1, out, &olen);
	if (v == XDP_TX)
		assert_int_equal(olen, e->lay.len);
	return v;
}

/* ---- frames, read independently -------------------------------------- */

struct tcpf {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint8_t flags;
	uint32_t saddr, daddr; /* network order */
};

static uint32_t get32(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* IPv4/TCP frame f (no VLAN): fields, and its checksums verified from scratch. */
static struct tcpf parse(const uint8_t *f, size_t len)
{
	struct tcpf t;
	assert_true(len >= 54);
	assert_int_equal(get16(f + 12), 0x0800);
	const uint8_t *ip = f + 14;
	size_t ihl = (size_t)(ip[0] & 15) * 4, iplen = get16(ip + 2);
	assert_int_equal(ip[9], IPPROTO_TCP);
	assert_true(14 + iplen <= len);
	assert_int_equal(csum_fold(csum_partial(ip, ihl, 0)), 0);
	const uint8_t *th = ip + ihl;
	memcpy(&t.saddr, ip + 12, 4);
	memcpy(&t.daddr, ip + 16, 4);
	struct in_addr s, d;
	memcpy(&s, ip + 12, 4);
	memcpy(&d, ip + 16, 4);
	uint8_t copy[256];
	size_t l4 = iplen - ihl;
	memcpy(copy, th, l4);
	uint16_t want = get16(copy + 16);
	memset(copy + 16, 0, 2);
	assert_int_equal(ntohs(csum_l4_v4(&s, &d, IPPROTO_TCP, copy, l4)), want);
	t.sport = get16(th);
	t.dport = get16(th + 2);
	t.seq = get32(th + 4);
	t.ack = get32(th + 8);
	t.flags = th[13];
	return t;
}

/* The server's answer to SYN syn: flags (SYN|ACK, RST|ACK, FIN|ACK), seq, ack. */
static size_t reply_to(const struct env *e, const struct tcpf *syn, uint8_t flags, uint32_t seq, uint32_t ack,
		       uint8_t *buf)
{
	struct frame_spec s = e->cfg.frames.tmpl;
	const char *err = NULL;
	memcpy(s.src_mac, e->cfg.frames.tmpl.dst_mac, 6);
	memcpy(s.dst_mac, e->cfg.frames.tmpl.src_mac, 6);
	s.src = e->cfg.frames.tmpl.dst;
	s.dst = e->cfg.frames.tmpl.src;
	s.sport = syn->dport;
	s.dport = syn->sport;
	s.tcp_flags = flags;
	s.seq = seq;
	s.ack = ack;
	s.tcp_syn_options = flags == (TH_SYN | TH_ACK);
	s.window = 65535;
	s.frame_size = frame_min_size(&s);
	size_t n = frame_build(&s, buf, 256, &err);
	assert_true(n > 0);
	return n;
}

static uint32_t run_cli(struct env *e, const uint8_t *in, size_t len, uint8_t *out, size_t *olen)
{
	return run(bpf_program__fd(e->cli->progs.xdp_connect), in, len, out, olen);
}

static struct xp_win_slot *slot_of(struct env *e, uint32_t isn)
{
	uint32_t i = isn >> e->cfg.hs.win.shift;
	assert_true(i < e->cfg.hs.win.size);
	return &e->cfg.hs.win.slots[i];
}

static struct xp_win_stats stats(struct env *e)
{
	struct xp_win_stats st;
	xp_window_read(e->w, &st);
	return st;
}

static unsigned free_slots(struct env *e)
{
	return (unsigned)xp_win_avail(&e->cfg.hs.win);
}

/* The client program's completing ACKs, summed over CPUs. */
static uint64_t cli_acks(struct env *e)
{
	int ncpus = libbpf_num_possible_cpus();
	struct xp_cc_counters *v = calloc((size_t)ncpus, sizeof(*v));
	uint32_t key = 0;
	uint64_t n = 0;
	assert_non_null(v);
	assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(e->cli->maps.cc_counters), &key, v), 0);
	for (int c = 0; c < ncpus; c++)
		n += v[c].acks_sent;
	free(v);
	return n;
}

/* ---- window bookkeeping ---------------------------------------------- */

/* -P 4: four SYNs, then none until a slot frees; each completion frees exactly one. */
static void test_window_limits_syns(void **state)
{
	(void)state;
	struct env e;
	uint8_t out[256], in[256], rep[256];
	struct tcpf syn[5];
	size_t olen;

	env_open(&e, XP_TEST_CONNECT, XP_CC_MODE_RST, 4, 6, 0);
	assert_int_equal(e.cfg.hs.win.shift, 30); /* 4 slots: 2 bits */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(gen_syn(&e, out), XDP_TX);
		syn[i] = parse(out, e.lay.len);
		assert_int_equal(syn[i].flags, TH_SYN);
		struct xp_win_slot *s = slot_of(&e, syn[i].seq);
		/* The slot holds this connection: state, ISN, ports. */
		assert_int_equal(XP_WIN_STATE(s->word), XP_WIN_SYN_SENT);
		assert_int_equal(s->isn, syn[i].seq);
		assert_int_equal(s->sport, syn[i].sport);
		assert_int_equal(s->dport, syn[i].dport);
		assert_int_equal(s->k, (uint64_t)i);
	}
	/* Four distinct slots. */
	for (int i = 0; i < 4; i++)
		for (int j = i + 1; j < 4; j++)
			assert_int_not_equal(syn[i].seq >> 30, syn[j].seq >> 30);
	assert_int_equal(free_slots(&e), 0);
	/* Full: the fifth run sends nothing. */
	assert_int_equal(gen_syn(&e, out), XDP_DROP);
	assert_int_equal(stats(&e).taken, 4);

	/* Connection 2's SYN-ACK: the completing ACK, and one slot free. */
	size_t n = reply_to(&e, &syn[2], TH_SYN | TH_ACK, SRV_ISN, syn[2].seq + 1, in);
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	struct tcpf ack = parse(rep, olen);
	assert_int_equal(ack.flags, TH_ACK);
	assert_int_equal(ack.seq, syn[2].seq + 1);
	assert_int_equal(ack.ack, SRV_ISN + 1);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn[2].seq)->word), XP_WIN_FREE);
	assert_int_equal(free_slots(&e), 1);

	/* The next SYN takes that slot, a new generation with another ISN. */
	uint32_t gen0 = XP_WIN_GEN(slot_of(&e, syn[2].seq)->word);
	assert_int_equal(gen_syn(&e, out), XDP_TX);
	syn[4] = parse(out, e.lay.len);
	assert_int_equal(syn[4].seq >> 30, syn[2].seq >> 30);
	assert_int_not_equal(syn[4].seq, syn[2].seq);
	assert_int_equal(XP_WIN_GEN(slot_of(&e, syn[4].seq)->word), gen0 + 1);
	assert_int_equal(gen_syn(&e, out), XDP_DROP);

	/* Connection 2's SYN-ACK once more (its retransmitted SYN's): nobody
	 * waits for it, the slot is another connection's: reset, not counted. */
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	struct tcpf rst = parse(rep, olen);
	assert_int_equal(rst.flags, TH_RST);
	assert_int_equal(rst.seq, syn[2].seq + 1);
	assert_int_equal(stats(&e).stale, 1);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn[4].seq)->word), XP_WIN_SYN_SENT);
	assert_int_equal(free_slots(&e), 0);

	/* Connection 0 refused (RST|ACK, ack = ISN + 1): failed by reset, slot free. */
	n = reply_to(&e, &syn[0], TH_RST | TH_ACK, 0, syn[0].seq + 1, in);
	assert_int_equal(run_cli(&e, in, n, NULL, NULL), XDP_DROP);
	assert_int_equal(stats(&e).fail_reset, 1);
	assert_int_equal(free_slots(&e), 1);
	/* A reset with the wrong ack moves nothing. */
	n = reply_to(&e, &syn[1], TH_RST | TH_ACK, 0, syn[1].seq + 2, in);
	run_cli(&e, in, n, NULL, NULL);
	assert_int_equal(stats(&e).fail_reset, 1);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn[1].seq)->word), XP_WIN_SYN_SENT);

	/* A SYN-ACK with a made-up ack in a real slot's range: stale, reset. */
	n = reply_to(&e, &syn[3], TH_SYN | TH_ACK, SRV_ISN, syn[3].seq + 7, in);
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	assert_int_equal(parse(rep, olen).flags, TH_RST);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn[3].seq)->word), XP_WIN_SYN_SENT);
	assert_int_equal(stats(&e).stale, 2);
	env_close(&e);
}

/* An ICMP destination unreachable from the router quoting SYN frame syn (IPv4: its IP header and 8 TCP bytes). */
static size_t icmp_unreach(const uint8_t *syn, uint32_t seq_delta, uint8_t *buf)
{
	memset(buf, 0, 128);
	memcpy(buf, syn + 6, 6);  /* back to the SYN's sender */
	memcpy(buf + 6, syn, 6);
	buf[12] = 0x08;
	uint8_t *ip = buf + 14, *icmp = ip + 20;
	ip[0] = 0x45;
	size_t tot = 20 + 8 + 28;
	ip[2] = (uint8_t)(tot >> 8);
	ip[3] = (uint8_t)tot;
	ip[8] = 64;
	ip[9] = IPPROTO_ICMP;
	inet_pton(AF_INET, "198.18.1.1", ip + 12);
	memcpy(ip + 16, syn + 14 + 12, 4); /* to the SYN's source */
	uint16_t c = csum_fold(csum_partial(ip, 20, 0));
	memcpy(ip + 10, &c, 2);
	icmp[0] = 3; /* destination unreachable */
	icmp[1] = 1; /* host unreachable */
	memcpy(icmp + 8, syn + 14, 28);
	uint32_t seq = get32(icmp + 8 + 20 + 4) + seq_delta;
	icmp[8 + 24] = (uint8_t)(seq >> 24);
	icmp[8 + 25] = (uint8_t)(seq >> 16);
	icmp[8 + 26] = (uint8_t)(seq >> 8);
	icmp[8 + 27] = (uint8_t)seq;
	c = csum_fold(csum_partial(icmp, 36, 0));
	memcpy(icmp + 2, &c, 2);
	return 14 + tot;
}

/* ICMP unreachable quoting one of our SYNs: failed as unreachable, slot free; a stranger's moves nothing. */
static void test_icmp_unreachable(void **state)
{
	(void)state;
	struct env e;
	uint8_t out[256], in[256];

	env_open(&e, XP_TEST_CONNECT, XP_CC_MODE_RST, 2, 6, 0);
	assert_int_equal(gen_syn(&e, out), XDP_TX);
	struct tcpf syn = parse(out, e.lay.len);
	assert_int_equal(free_slots(&e), 1);
	size_t n = icmp_unreach(out, 1, in); /* not our ISN */
	assert_int_equal(run_cli(&e, in, n, NULL, NULL), XDP_DROP);
	assert_int_equal(stats(&e).fail_unreach, 0);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn.seq)->word), XP_WIN_SYN_SENT);
	n = icmp_unreach(out, 0, in);
	assert_int_equal(run_cli(&e, in, n, NULL, NULL), XDP_DROP);
	assert_int_equal(stats(&e).fail_unreach, 1);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn.seq)->word), XP_WIN_FREE);
	assert_int_equal(free_slots(&e), 2);
	/* Twice: counted once. */
	run_cli(&e, in, n, NULL, NULL);
	assert_int_equal(stats(&e).fail_unreach, 1);
	/* No retransmission of a failed SYN. */
	xp_window_scan(e.w, slot_of(&e, syn.seq)->t_ns + 10 * NS_PER_S);
	assert_int_equal(e.cap.n, 0);
	env_close(&e);
}

/* ---- retransmission timing, on the scan's clock ------------------------ */

static void test_syn_retransmit_timing(void **state)
{
	(void)state;
	struct env e;
	uint8_t out[256];

	env_open(&e, XP_TEST_CONNECT, XP_CC_MODE_RST, 2, 2, 0);
	assert_int_equal(gen_syn(&e, out), XDP_TX);
	struct tcpf syn = parse(out, e.lay.len);
	struct xp_win_slot *s = slot_of(&e, syn.seq);
	uint64_t t0 = s->t_ns;

	xp_window_scan(e.w, t0 + NS_PER_S - 1000000); /* 0.999 s: too early */
	assert_int_equal(e.cap.n, 0);
	assert_int_equal(stats(&e).in_flight, 1);
	xp_window_scan(e.w, t0 + NS_PER_S); /* 1 s: the same SYN again, byte for byte */
	assert_int_equal(e.cap.n, 1);
	assert_int_equal(e.cap.len[0], e.lay.len);
	assert_memory_equal(e.cap.f[0], out, e.lay.len);
	assert_int_equal(stats(&e).syn_retx, 1);
	/* Doubling: 2 s after the retransmission, not before. */
	uint64_t t1 = t0 + NS_PER_S;
	xp_window_scan(e.w, t1 + 2 * NS_PER_S - 1000000);
	assert_int_equal(e.cap.n, 1);
	xp_window_scan(e.w, t1 + 2 * NS_PER_S);
	assert_int_equal(e.cap.n, 2);
	assert_memory_equal(e.cap.f[1], out, e.lay.len);
	/* --syn-retries 2: after 4 more seconds it is given up, and its slot freed. */
	uint64_t t2 = t1 + 2 * NS_PER_S;
	xp_window_scan(e.w, t2 + 4 * NS_PER_S - 1000000);
	assert_int_equal(stats(&e).fail_timeout, 0);
	assert_int_equal(free_slots(&e), 1);
	xp_window_scan(e.w, t2 + 4 * NS_PER_S);
	assert_int_equal(e.cap.n, 2); /* no third SYN */
	struct xp_win_stats st = stats(&e);
	assert_int_equal(st.fail_timeout, 1);
	assert_int_equal(st.syn_retx, 2);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(XP_WIN_STATE(s->word), XP_WIN_FREE);
	assert_int_equal(free_slots(&e), 2);

	/* Its SYN-ACK after the give-up: reset, and the slot stays free. */
	uint8_t in[256], rep[256];
	size_t olen, n = reply_to(&e, &syn, TH_SYN | TH_ACK, SRV_ISN, syn.seq + 1, in);
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	assert_int_equal(parse(rep, olen).flags, TH_RST);
	assert_int_equal(free_slots(&e), 2);
	env_close(&e);
}

/* A SYN answered after its retransmission: no more SYNs, no failure. */
static void test_answered_after_retransmit(void **state)
{
	(void)state;
	struct env e;
	uint8_t out[256], in[256], rep[256];
	size_t olen;

	env_open(&e, XP_TEST_CONNECT, XP_CC_MODE_RST, 1, 6, 0);
	assert_int_equal(gen_syn(&e, out), XDP_TX);
	struct tcpf syn = parse(out, e.lay.len);
	uint64_t t0 = slot_of(&e, syn.seq)->t_ns;
	xp_window_scan(e.w, t0 + NS_PER_S);
	assert_int_equal(e.cap.n, 1);
	size_t n = reply_to(&e, &syn, TH_SYN | TH_ACK, SRV_ISN, syn.seq + 1, in);
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	assert_int_equal(parse(rep, olen).flags, TH_ACK);
	for (int i = 1; i < 200; i++)
		xp_window_scan(e.w, t0 + (uint64_t)i * NS_PER_S);
	assert_int_equal(e.cap.n, 1);
	assert_int_equal(stats(&e).fail_timeout, 0);
	assert_int_equal(cli_acks(&e), 1);
	env_close(&e);
}

/* --fin: the slot waits for the server's FIN; its ACK|FIN is sent again until then. */
static void test_fin_retransmit(void **state)
{
	(void)state;
	struct env e;
	uint8_t out[256], in[256], rep[256];
	size_t olen;

	env_open(&e, XP_TEST_CONNECT, XP_CC_MODE_FIN, 2, 3, 0);
	assert_int_equal(gen_syn(&e, out), XDP_TX);
	struct tcpf syn = parse(out, e.lay.len);
	struct xp_win_slot *s = slot_of(&e, syn.seq);
	size_t n = reply_to(&e, &syn, TH_SYN | TH_ACK, SRV_ISN, syn.seq + 1, in);
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	struct tcpf af = parse(rep, olen);
	assert_int_equal(af.flags, TH_ACK | TH_FIN);
	assert_int_equal(XP_WIN_STATE(s->word), XP_WIN_FIN_WAIT);
	assert_int_equal(s->srv_nxt, SRV_ISN + 1);
	assert_int_equal(free_slots(&e), 1);
	/* The same SYN-ACK again (both SYNs answered): answered again, not counted twice. */
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	assert_int_equal(parse(rep, olen).flags, TH_ACK | TH_FIN);
	assert_int_equal(stats(&e).synack_dup, 1);

	uint64_t t0 = s->t_ns;
	xp_window_scan(e.w, t0 + NS_PER_S - 1);
	assert_int_equal(e.cap.n, 0);
	xp_window_scan(e.w, t0 + NS_PER_S);
	assert_int_equal(e.cap.n, 1);
	struct tcpf rf = parse(e.cap.f[0], e.cap.len[0]);
	assert_int_equal(rf.flags, TH_ACK | TH_FIN);
	assert_int_equal(rf.seq, syn.seq + 1);
	assert_int_equal(rf.ack, SRV_ISN + 1);
	assert_int_equal(rf.sport, syn.sport);
	assert_int_equal(rf.dport, syn.dport);
	assert_int_equal(stats(&e).fin_retx, 1);

	/* The server's FIN (ack = ISN + 2): the final ACK, the slot free. */
	n = reply_to(&e, &syn, TH_FIN | TH_ACK, SRV_ISN + 1, syn.seq + 2, in);
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	struct tcpf fa = parse(rep, olen);
	assert_int_equal(fa.flags, TH_ACK);
	assert_int_equal(fa.ack, SRV_ISN + 2);
	assert_int_equal(XP_WIN_STATE(s->word), XP_WIN_FREE);
	assert_int_equal(free_slots(&e), 2);
	/* Its FIN again (our last ACK lost): answered, not counted twice. */
	assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
	assert_int_equal(stats(&e).fin_dup, 1);
	xp_window_scan(e.w, t0 + 100 * NS_PER_S);
	assert_int_equal(e.cap.n, 1);
	assert_int_equal(stats(&e).fin_timeout, 0);
	env_close(&e);
}

/* -k: connections stay, get keepalives from their state, are never reused, and are reset at the end. */
static void test_hold_keepalive_and_reset(void **state)
{
	(void)state;
	struct env e;
	uint8_t out[256], in[256], rep[256];
	struct tcpf syn[3];
	size_t olen;

	env_open(&e, XP_TEST_HOLD, XP_CC_MODE_KEEPALIVE, 3, 1, 5.0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(gen_syn(&e, out), XDP_TX);
		syn[i] = parse(out, e.lay.len);
	}
	assert_int_equal(gen_syn(&e, out), XDP_DROP);
	/* Two answered, the third never: after its retry it is given up for good. */
	for (int i = 0; i < 2; i++) {
		size_t n = reply_to(&e, &syn[i], TH_SYN | TH_ACK, SRV_ISN + (uint32_t)i * 1000, syn[i].seq + 1, in);
		assert_int_equal(run_cli(&e, in, n, rep, &olen), XDP_TX);
		assert_int_equal(parse(rep, olen).flags, TH_ACK);
		assert_int_equal(XP_WIN_STATE(slot_of(&e, syn[i].seq)->word), XP_WIN_OPEN);
	}
	assert_int_equal(free_slots(&e), 0); /* held: nothing comes back */
	/* The latest of the three clocks (SYN-ACKs seen, the third's SYN sent), plus 5 s. */
	uint64_t now = 0;
	for (int i = 0; i < 3; i++)
		if (slot_of(&e, syn[i].seq)->t_ns > now)
			now = slot_of(&e, syn[i].seq)->t_ns;
	now += 5 * NS_PER_S;
	xp_window_scan(e.w, now - 4 * NS_PER_S);  /* the third's SYN again, no keepalive yet */
	assert_int_equal(e.cap.n, 1);
	assert_int_equal(parse(e.cap.f[0], e.cap.len[0]).flags, TH_SYN);
	xp_window_scan(e.w, now); /* 5 s: a keepalive each; the third given up (1 retry) */
	assert_int_equal(e.cap.n, 3);
	for (unsigned c = 1; c < 3; c++) {
		struct tcpf ka = parse(e.cap.f[c], e.cap.len[c]);
		int i = ka.sport == syn[0].sport && ka.dport == syn[0].dport ? 0 : 1;
		assert_int_equal(ka.sport, syn[i].sport);
		assert_int_equal(ka.flags, TH_ACK);
		assert_int_equal(ka.seq, syn[i].seq); /* one below the next: the peer must answer */
		assert_int_equal(ka.ack, SRV_ISN + (uint32_t)i * 1000 + 1);
	}
	struct xp_win_stats st = stats(&e);
	assert_int_equal(st.keepalives, 2);
	assert_int_equal(st.fail_timeout, 1);
	assert_int_equal(st.open, 2);
	assert_int_equal(XP_WIN_STATE(slot_of(&e, syn[2].seq)->word), XP_WIN_DONE);
	assert_int_equal(free_slots(&e), 0); /* a hold never reopens */
	assert_int_equal(gen_syn(&e, out), XDP_DROP);
	/* Not before the interval again. */
	xp_window_scan(e.w, now + 5 * NS_PER_S - 1);
	assert_int_equal(e.cap.n, 3);

	/* The end: an RST (seq = ISN + 1) for each held connection, none for the given-up one. */
	xp_window_reset_all(e.w, 1e300);
	assert_int_equal(e.cap.n, 5);
	for (unsigned c = 3; c < 5; c++) {
		struct tcpf r = parse(e.cap.f[c], e.cap.len[c]);
		int i = r.sport == syn[0].sport && r.dport == syn[0].dport ? 0 : 1;
		assert_int_equal(r.flags, TH_RST);
		assert_int_equal(r.seq, syn[i].seq + 1);
	}
	assert_int_equal(stats(&e).rst_closed, 2);
	env_close(&e);
}

/* The ISN layout: the slot in the top bits, room for the connection's sequence numbers below. */
static void test_isn_layout(void **state)
{
	(void)state;
	for (uint32_t size = 1; size <= XP_WIN_MAX; size = size * 3 + 1) {
		uint32_t bits = xp_win_bits(size), shift = 32 - bits;
		assert_true((1ull << bits) >= size);
		assert_true(bits == 1 || (1u << (bits - 1)) < size);
		for (uint32_t slot = 0; slot < size; slot += size / 7 + 1) {
			for (uint32_t h = 0; h < 4000000000u; h += 999999937u) {
				uint32_t isn = xp_win_isn(h, slot, shift);
				assert_int_equal(isn >> shift, slot);
				assert_int_equal((isn + XP_WIN_SEQ_SPAN - 1) >> shift, slot);
			}
		}
	}
	assert_true(xp_win_rto(0) == 1.0 && xp_win_rto(1) == 2.0 && xp_win_rto(6) == 64.0);
}

/* Refusals: a window wider than the tuples, or than the maximum. */
static void test_window_refusals(void **state)
{
	(void)state;
	struct xp_engine_cfg c = make_cfg(XP_TEST_CONNECT, 401, 6);
	struct xp_win_maps m;
	struct xp_window *w = NULL;
	char err[256] = "";
	/* 100 sports x 4 dports = 400 tuples. */
	assert_int_equal(xp_window_open(&c, XP_CC_MODE_RST, &w, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "400 (source ports"));
	c.parallel = XP_WIN_MAX + 1;
	assert_int_equal(xp_window_open(&c, XP_CC_MODE_RST, &w, &m, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "1 to 1048576"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isn_layout),
		cmocka_unit_test(test_window_refusals),
		cmocka_unit_test(test_window_limits_syns),
		cmocka_unit_test(test_icmp_unreachable),
		cmocka_unit_test(test_syn_retransmit_timing),
		cmocka_unit_test(test_answered_after_retransmit),
		cmocka_unit_test(test_fin_retransmit),
		cmocka_unit_test(test_hold_keepalive_and_reset),
	};
	cpu_set_t set;

	if (geteuid() != 0) {
		fprintf(stderr, "test_window: must run as root (loads BPF programs)\n");
		return 1;
	}
	/* The generator keeps its state per CPU: stay on one. */
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "test_window: sched_setaffinity: %s\n", strerror(errno));
		return 1;
	}
	return cmocka_run_group_tests_name("window", tests, NULL, NULL);
}
