// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the tests of bpf/live.bpf.c and the live engine share
 * (test_live_stream.c, test_live_syn.c, test_live_send.c): the
 * engine configuration of a case, the generator loaded by xp_gen_load (the
 * engine's own loader) and run with plain BPF_PROG_RUN, the stamp clock, and
 * main()'s start (root, pinned to one CPU: the generator's state is per
 * CPU). Functions are static inline: not every test file uses every one.
 */
#ifndef XDPPERF_TESTS_GENERATOR_FIXTURE_H
#define XDPPERF_TESTS_GENERATOR_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "frame/csum.h"
#include "engine/engine.h"
#include "frame/frame.h"
#include "bpf/live.h"
#include "engine/live_prog.h"
#include "bpf/live.skel.h"
#include "util/time.h"
#include "engine/tuples.h"
#include "tests/lib/netns_helper.h"

extern const struct xp_engine_ops xp_engine_live;

/* ---------------------------------------------------------------------- */
/* Configurations                                                         */
/* ---------------------------------------------------------------------- */

static inline struct xp_engine_cfg make_cfg(int family, uint8_t proto, size_t size, uint16_t vlan,
				     uint16_t slo, uint16_t shi, uint16_t dlo, uint16_t dhi)
{
	struct xp_engine_cfg c;
	struct frame_spec *s = &c.frames.tmpl;

	memset(&c, 0, sizeof(c));
	c.sport_lo = slo;
	c.sport_hi = shi;
	c.dport_lo = dlo;
	c.dport_hi = dhi;
	c.frames.queues = 1;
	memcpy(s->src_mac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(s->dst_mac, "\x02\x00\x00\x00\x00\x02", 6);
	s->vlan_id = vlan;
	s->src.family = s->dst.family = family;
	if (family == AF_INET) {
		inet_pton(AF_INET, "198.18.1.2", &s->src.v4);
		inet_pton(AF_INET, "198.19.1.2", &s->dst.v4);
	} else {
		inet_pton(AF_INET6, "2001:2:0:1::2", &s->src.v6);
		inet_pton(AF_INET6, "2001:2:0:2::2", &s->dst.v6);
	}
	s->l4_proto = proto;
	s->sport = slo;
	s->dport = dlo;
	s->tcp_flags = 0x18;
	s->seq = 0xfffffff0u; /* wraps within a few frames */
	s->ack = 1;
	s->frame_size = size;
	s->payload_fill = 0xa5;
	return c;
}

/* ---------------------------------------------------------------------- */
/* Helpers                                                                */
/* ---------------------------------------------------------------------- */

struct gen {
	struct live_bpf *skel;
	struct xp_engine_cfg cfg;
	uint8_t tmpl[XP_GEN_MAX_LEN];
	struct frame_layout lay;
	unsigned nthreads, tid;
};

static inline void gen_run_same_call(struct gen *g, const uint8_t *in, uint32_t in_len, uint8_t *out);

static inline void gen_load(struct gen *g, const struct xp_engine_cfg *cfg, unsigned nthreads, unsigned tid)
{
	char err[256];
	int ncpus = libbpf_num_possible_cpus();
	unsigned *cpu_tid;

	memset(g, 0, sizeof(*g));
	g->cfg = *cfg;
	g->nthreads = nthreads;
	g->tid = tid;
	if (xp_gen_load(cfg, nthreads, &g->skel, g->tmpl, &g->lay, err, sizeof(err)))
		fail_msg("xp_gen_load: %s", err);
	/* Every CPU runs "thread" tid: the test is pinned anyway. */
	cpu_tid = calloc((size_t)ncpus, sizeof(*cpu_tid));
	assert_non_null(cpu_tid);
	for (int c = 0; c < ncpus; c++)
		cpu_tid[c] = tid;
	assert_int_equal(xp_gen_init_state(g->skel, cpu_tid, (unsigned)ncpus), 0);
	free(cpu_tid);
}

/* One plain BPF_PROG_RUN of in (in_len bytes); the output frame (always
 * the template's length) into out. Each run is a call of its own, as the
 * live engine's are: its frame reads the clock for the stamp. */
static inline void gen_run_len(struct gen *g, const uint8_t *in, uint32_t in_len, uint8_t *out)
{
	xp_gen_new_call(g->skel, g->tid);
	gen_run_same_call(g, in, in_len, out);
}

/* The same without a new call: the frame belongs to the previous call's
 * current batch (see XP_GEN_BATCH). */
static inline void gen_run_same_call(struct gen *g, const uint8_t *in, uint32_t in_len, uint8_t *out)
{
	LIBBPF_OPTS(bpf_test_run_opts, o,
		.data_in = in,
		.data_size_in = in_len,
		.data_out = out,
		.data_size_out = XP_GEN_MAX_LEN,
		.repeat = 1);
	int r = bpf_prog_test_run_opts(bpf_program__fd(g->skel->progs.xdp_live), &o);

	if (r)
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	assert_int_equal(o.retval, XDP_TX);
	assert_int_equal(o.data_size_out, g->lay.len);
}

static inline void gen_run(struct gen *g, const uint8_t *in, uint8_t *out)
{
	gen_run_len(g, in, g->lay.len, out);
}

/* Stamp ticks of a clock now (the generator's: MONOTONIC, or TAI). */
static inline uint64_t now_ticks(bool tai)
{
	struct timespec ts;

	clock_gettime(tai ? CLOCK_TAI : CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

/* main()'s start: root (why: what the binary needs it for), and the process
 * pinned to the CPU it runs on, since the generator keeps its state per CPU.
 * 0 to go on, 1 (the exit status) if not. */
static inline int gen_test_init(const char *prog, const char *why)
{
	cpu_set_t set;

	if (geteuid() != 0) {
		fprintf(stderr, "%s: must run as root (%s)\n", prog, why);
		return 1;
	}
	/* The generator keeps its state per CPU: stay on one. */
	CPU_ZERO(&set);
	CPU_SET(sched_getcpu() < 0 ? 0 : sched_getcpu(), &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "%s: sched_setaffinity: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}

#endif
