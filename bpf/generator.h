/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP live-frames generator (bpf/generator.bpf.c): limits, map values and the
 * payload stamp, shared by the BPF program and userspace
 * (user/engine/live.c, tests/bpf/test_generator.c).
 *
 * Like xdpperf.h, the shared part needs only __u8..__u64 (vmlinux.h on the
 * BPF side, <linux/types.h> in userspace). The userspace-only part at the end
 * (#ifndef __bpf__) declares the loader engine_live.c exports, so the tests
 * configure the program exactly as the engine does.
 */
#ifndef XDPPERF_GEN_H
#define XDPPERF_GEN_H

#ifndef __bpf__
#include <linux/types.h>
#endif

/*
 * Largest template (frame without FCS) the generator takes. BPF_PROG_RUN
 * refuses live frames that do not fit one page after XDP_PACKET_HEADROOM
 * (256) and the skb_shared_info tailroom (320): 4096 - 576 = 3520 bytes with
 * 4 KiB pages. Bigger frames (jumbo) need the AF_XDP engine.
 */
#define XP_GEN_MAX_LEN 3520u

/* SYN mode: most source addresses (--bind) the generator spreads SYNs over
 * (XP_MAX_BIND of user/engine.h). A power of two. */
#define XP_GEN_MAX_BIND 256u

/* Payload stamp: written at the start of the payload when it has room. */
#define XP_STAMP_MAGIC 0x58505453u /* "XPTS" on the wire */
#define XP_STAMP_LEN   24u

/*
 * The stamp as it appears in the payload, every field big-endian (network
 * order), unaligned (it starts wherever the headers end).
 *   magic   XP_STAMP_MAGIC
 *   stream  stream_base + sending thread's index: one sequence space each
 *   seq     0, 1, 2, ... per stream, one per frame: a gap is a loss
 *   ts_ns   bpf_ktime_get_ns() (CLOCK_MONOTONIC) when the frame was made:
 *           a receiver on the same host gets one-way latency from it
 */
struct xp_stamp {
	__u32 magic;
	__u32 stream;
	__u64 seq;
	__u64 ts_ns;
} __attribute__((packed));

/*
 * Per-CPU generator state, one entry (key 0) of the gen_state
 * PERCPU_ARRAY. The engine pins one thread per CPU, so a CPU's entry is one
 * thread's state: no atomics, no sharing. Live frames hide the rx queue from
 * the program (the kernel runs it on a fake rxq, queue 0), which is why the
 * thread is identified per CPU (tid, set by userspace before the run) and not
 * by ctx->rx_queue_index.
 *
 * Flow i = sent * nthreads + tid, the same numbering as the AF_XDP engine
 * (thread t takes flows t, t+T, t+2T...), and the ports are those of
 * xp_flow_ports(i) (dport fastest). d/s/k are i decomposed incrementally
 * (i = (k * ns + s) * nd + d) so the hot path divides only on wrap-around.
 */
struct xp_gen_state {
	__u64 sent;   /* frames this CPU returned XDP_TX (= its next frame number) */
	__u64 k;      /* i / (nd * ns): how often each flow has been sent before */
	__u32 d;      /* i % nd: destination port index */
	__u32 s;      /* (i / nd) % ns: source port index */
	__u32 tid;    /* thread index (0..nthreads-1) that runs on this CPU */
	__u32 inited; /* d/s/k set from tid (done by the first frame) */
};

#ifndef __bpf__
#include <stddef.h>

struct generator_bpf;
struct xp_engine_cfg;
struct frame_layout;

/*
 * Build the template for cfg->tmpl, open the generator, set its read-only
 * configuration for cfg and nthreads sending threads, and load it. On
 * success *skel is loaded, tmpl (XP_GEN_MAX_LEN bytes) holds the template
 * and *lay its layout. On failure *err gets one line (naming --engine xsk
 * where that is the way out) and a negative errno is returned.
 */
int xp_gen_load(const struct xp_engine_cfg *cfg, unsigned nthreads,
		struct generator_bpf **skel, __u8 *tmpl, struct frame_layout *lay,
		char *err, size_t errlen);

/*
 * Set the thread index each CPU's state carries (cpu_tid[cpu], for
 * ncpu_tid CPUs; others get 0) and zero the counters. Call before any run.
 */
int xp_gen_init_state(struct generator_bpf *skel, const unsigned *cpu_tid, unsigned ncpu_tid);

/*
 * Keep the loaded program in the kernel's XDP dispatcher by attaching it,
 * idle, to the loopback of a private network namespace (see engine_live.c:
 * without it every BPF_PROG_RUN call with repeat > 1 sleeps 15-30 ms).
 * Close *link_fd, then *ns_fd, to undo. 0 or -errno with *err set.
 */
int xp_gen_hold(struct generator_bpf *skel, int *link_fd, int *ns_fd, char *err, size_t errlen);

/* Frames sent so far (the per-CPU counters summed). */
__u64 xp_gen_sent(struct generator_bpf *skel);
#endif

#endif /* XDPPERF_GEN_H */
