/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP live-frames generator (bpf/generator.bpf.c): limits, the read-only
 * configuration, map values and the payload stamp, shared by the BPF program
 * and userspace (user/engine/live.c, tests/bpf/test_gen.c).
 *
 * Like server.h, the shared part needs only __u8..__u64 (vmlinux.h on the
 * BPF side, <linux/types.h> in userspace). The userspace-only part at the end
 * (#ifndef __bpf__) declares the loader user/engine/live.c exports, so the
 * tests configure the program exactly as the engine does.
 */
#ifndef XDPPERF_GENERATOR_H
#define XDPPERF_GENERATOR_H

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
 * (XP_MAX_BIND of user/engine/engine.h). A power of two. */
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
 * The program's configuration: the rodata variable `config`, set by
 * xp_gen_load() between open and load (skel->rodata->config) and frozen at
 * load, so the verifier sees every field as a constant (see
 * bpf/generator.bpf.c). Offsets are those of struct frame_layout, ports as
 * in struct xp_engine_cfg (host order).
 */
struct xp_generator_config {
	__u32 tmpl_len;      /* template bytes, frame without FCS */
	__u16 l3_off;        /* IP header (SYN mode) */
	__u16 l4_off;
	__u16 payload_off;
	__u16 payload_len;
	__u8 l4_proto;       /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 stamp;          /* write the stamp (payload_len >= XP_STAMP_LEN) */
	__u8 syn_mode;       /* one SYN per frame (connection tests) */
	__u8 is_v6;          /* the template's family (SYN mode) */
	__u16 sport_lo, sport_hi;
	__u16 dport_lo, dport_hi;
	__u32 nthreads;      /* flow stride: threads sending (1 if unset) */
	__u32 seq0;          /* the template's TCP sequence number */
	__u32 stream_base;   /* stamp stream = stream_base + tid */
	__u32 tx_ifindex;    /* live runs' ingress_ifindex; 0 = any (unit tests) */
	/* SYN mode */
	__u32 nbind;         /* source addresses in bind_addr; 0 = the template's */
	/* Distinct tuples: max(nbind, 1) x sports x dports (1 if unset). */
	__u64 conn_space;
	__u64 seed;          /* ISN key */
	/* Addresses as they are on the wire (IPv4: the first word only). */
	__u32 bind_addr[XP_GEN_MAX_BIND][4];
	/* The frame every run copies in (tmpl_len bytes). */
	__u8 tmpl[XP_GEN_MAX_LEN];
};

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
 * idle, to the loopback of a private network namespace (see user/engine/live.c:
 * without it every BPF_PROG_RUN call with repeat > 1 sleeps 15-30 ms).
 * Close *link_fd, then *ns_fd, to undo. 0 or -errno with *err set.
 */
int xp_gen_hold(struct generator_bpf *skel, int *link_fd, int *ns_fd, char *err, size_t errlen);

/* Frames sent so far (the per-CPU counters summed). */
__u64 xp_gen_sent(struct generator_bpf *skel);
#endif

#endif /* XDPPERF_GENERATOR_H */
