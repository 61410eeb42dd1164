/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP live-frames generator (bpf/generator.bpf.c): limits, the read-only
 * configuration, map values and the payload stamp, shared by the BPF program
 * and userspace (its loader user/loader/generator_prog.c, the live engine
 * user/engine/live.c, the tests).
 *
 * Like server.h, it needs only __u8..__u64 (vmlinux.h on the BPF side,
 * <linux/types.h> in userspace). The tests load the program with the same
 * loader as the engine, so they configure it exactly as the engine does.
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
	/* SYN mode with a window (bpf/window.h; the XDP connection engine's
	 * -P): every SYN takes a free slot from win_free, and a run finding
	 * none sends nothing (XDP_DROP). 0: no window, every run a SYN. */
	__u32 win_size;
	__u32 win_shift;     /* the slot's place in the ISN */
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

#endif /* XDPPERF_GENERATOR_H */
