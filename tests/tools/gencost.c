/*
 * gencost: what the live engine's generator (bpf/live.bpf.c) costs per
 * frame with one frame size and with a frame mix (issue 11), timed by the
 * kernel's BPF_PROG_RUN (its duration is the mean run time of the program,
 * measured in the kernel around the runs). No frame leaves the host: plain
 * BPF_PROG_RUN, not live frames. For the issue 11 report; no pass/fail.
 * Built by make (build/tests/tools/gencost):
 *
 *   build/tests/tools/gencost [-n N]
 *
 * Each case is loaded by the engine's own loader (xp_gen_load) with stamps
 * on (IPv4/UDP, one thread) and run N times in one call, as a mix is handed
 * in by the live engine (the largest + 1 bytes). Prints one line per case,
 * key=value: case=64, case=1518, case=imix; ns= is the mean per frame. Run it
 * pinned and alone (under the lab lock on a shared host).
 *
 * Flows (issue 26): case=flows1 and case=flows64, the same 64-byte IPv4/UDP
 * frames as case=64 sent as 1 and as 64 flows of the live engine's flows
 * path (bpf/live_flows.h: a header block per frame, a schedule, per-flow
 * counts and streams), each flow its own source port; ratio= is case=64's
 * ns over the case's, the frames/s of flows against one stream.
 * Exit status: 0, 1 if BPF is unavailable, 2 usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/live.h"
#include "bpf/live.skel.h"
#include "engine/engine.h"
#include "engine/live_prog.h"
#include "engine/live_flows.h"
#include "frame/mix.h"

static unsigned one_stream_ns; /* case=64's */

/* nflows flows of 64-byte IPv4/UDP frames, one source port each, no rates. */
static int run_flows_case(const char *name, unsigned nflows, unsigned n)
{
	static struct xp_engine_flow flows[XP_GEN_MAX_FLOWS];
	static struct xp_flow_sched sched[1];
	static uint8_t tmpl[XP_GEN_MAX_LEN], out[XP_GEN_MAX_LEN];
	uint64_t runs[1];
	struct xp_engine_cfg c;
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	char err[256];

	memset(&c, 0, sizeof(c));
	memset(flows, 0, sizeof(flows));
	for (unsigned f = 0; f < nflows; f++) {
		struct xp_flow_hdr h = { .l4_proto = IPPROTO_UDP, .sport = (uint16_t)(10000 + f), .dport = 63000 };
		h.src.family = h.dst.family = AF_INET;
		inet_pton(AF_INET, "198.18.1.2", &h.src.v4);
		inet_pton(AF_INET, "198.19.1.2", &h.dst.v4);
		xp_flow_pat_init(&flows[f].hdr, &h);
		flows[f].frame_size = 64;
		flows[f].stamps = true;
	}
	c.kind = XP_TEST_STREAM;
	c.frames.queues = 1;
	c.frames.stamp.ival = 1000;
	c.frames.flows = flows;
	c.frames.nflows = nflows;
	if (xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err))) {
		fprintf(stderr, "gencost: %s\n", err);
		return 1;
	}
	int ncpus = libbpf_num_possible_cpus();
	unsigned *tid = calloc((size_t)(ncpus > 0 ? ncpus : 1), sizeof(*tid));
	xp_gen_init_state(skel, tid, ncpus > 0 ? (unsigned)ncpus : 0);
	int r = xp_gen_flows_init(skel, &c, 1, tid, ncpus > 0 ? (unsigned)ncpus : 0, sched, runs, err, sizeof(err));
	free(tid);
	if (r) {
		fprintf(stderr, "gencost: %s\n", err);
		live_bpf__destroy(skel);
		return 1;
	}
	xp_gen_new_call(skel, 0);
	/* As the engine hands it in (one length for all flows: exactly it). */
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = tmpl, .data_size_in = xp_gen_in_len(skel, &lay),
		    .data_out = out, .data_size_out = sizeof(out), .repeat = n);
	r = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_live), &o);
	if (r || o.retval != XDP_TX) {
		fprintf(stderr, "gencost: BPF_PROG_RUN: %s (verdict %u)\n", r ? strerror(errno) : "ok", o.retval);
		live_bpf__destroy(skel);
		return 1;
	}
	printf("case=%s frames=%llu ns=%u ratio=%.2f\n", name, (unsigned long long)xp_gen_sent(skel), o.duration,
	       o.duration ? (double)one_stream_ns / o.duration : 0.0);
	live_bpf__destroy(skel);
	return 0;
}

static int run_case(const char *name, const char *size, unsigned n)
{
	struct xp_engine_cfg c;
	struct frame_spec *s = &c.frames.tmpl;
	static uint8_t tmpl[XP_GEN_MAX_LEN], out[XP_GEN_MAX_LEN];
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	char err[256];

	memset(&c, 0, sizeof(c));
	c.sport_lo = c.sport_hi = 10000;
	c.dport_lo = 63000;
	c.dport_hi = 63015;
	c.frames.queues = 1;
	s->src.family = s->dst.family = AF_INET;
	inet_pton(AF_INET, "198.18.1.2", &s->src.v4);
	inet_pton(AF_INET, "198.19.1.2", &s->dst.v4);
	s->l4_proto = IPPROTO_UDP;
	s->sport = c.sport_lo;
	s->dport = c.dport_lo;
	c.frames.stamp.ival = 1000;
	if (xp_mix_syntax(size)) {
		if (xp_mix_parse(size, &c.frames.mix, err, sizeof(err))) {
			fprintf(stderr, "gencost: %s\n", err);
			return 2;
		}
		s->frame_size = xp_mix_max(&c.frames.mix);
	} else {
		s->frame_size = (size_t)atoi(size);
	}
	if (xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err))) {
		fprintf(stderr, "gencost: %s\n", err);
		return 1;
	}
	int ncpus = libbpf_num_possible_cpus();
	unsigned *tid = calloc((size_t)(ncpus > 0 ? ncpus : 1), sizeof(*tid));
	xp_gen_init_state(skel, tid, ncpus > 0 ? (unsigned)ncpus : 0);
	free(tid);
	uint32_t in_len = lay.len + (c.frames.mix.n ? 1 : 0);
	xp_gen_new_call(skel, 0);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = tmpl, .data_size_in = in_len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = n);
	int r = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_live), &o);
	if (r || o.retval != XDP_TX) {
		fprintf(stderr, "gencost: BPF_PROG_RUN: %s (verdict %u)\n", r ? strerror(errno) : "ok", o.retval);
		live_bpf__destroy(skel);
		return 1;
	}
	printf("case=%s frames=%llu ns=%u\n", name, (unsigned long long)xp_gen_sent(skel), o.duration);
	if (!strcmp(name, "64"))
		one_stream_ns = o.duration;
	live_bpf__destroy(skel);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = 2000000;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt != 'n' || atoi(optarg) <= 0) {
			fprintf(stderr, "usage: gencost [-n RUNS]\n");
			return 2;
		}
		n = (unsigned)atoi(optarg);
	}
	int rc = run_case("64", "64", n);
	if (!rc)
		rc = run_case("1518", "1518", n);
	if (!rc)
		rc = run_case("imix", "imix", n);
	if (!rc)
		rc = run_flows_case("flows1", 1, n);
	if (!rc)
		rc = run_flows_case("flows64", 64, n);
	return rc;
}
