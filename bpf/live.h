/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * XDP live-frames generator (bpf/live.bpf.c): limits, the read-only
 * configuration, map values and the payload stamp, shared by the BPF program
 * and userspace (its loader user/engine/live_prog.c, the live engine
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
#include "lib/stamp.h"
#include "measure.h"

/*
 * Largest template (frame without FCS) the generator takes. BPF_PROG_RUN
 * refuses live frames that do not fit one page after XDP_PACKET_HEADROOM
 * (256) and the skb_shared_info tailroom (320): 4096 - 576 = 3520 bytes with
 * 4 KiB pages. Bigger frames (jumbo) need the AF_XDP engine.
 */
#define XP_GEN_MAX_LEN 3520u

/*
 * Largest frame (without FCS) the kernel takes in live-frames mode
 * (BPF_F_TEST_XDP_LIVE_FRAMES): its page also holds the test run's two
 * struct xdp_buff (struct xdp_page_head, 2 x 56 bytes), so 3520 - 112 =
 * 3408 bytes, -l 3412. Measured on 6.18: -l 3412 runs, -l 3413 gets EINVAL
 * from BPF_PROG_RUN. Jumbo frames beyond it go out with the AF_XDP engine.
 */
#define XP_GEN_LIVE_MAX_LEN 3408u

/*
 * Mixed frame sizes (issue 11's IMIX; user/frame/mix.h): at most this many
 * sizes, a pattern of at most this many positions, and every size's
 * template end to end in mix_tmpl (each starts at most
 * XP_GEN_MIX_BYTES - XP_GEN_MAX_LEN in, which bounds the verifier's view).
 */
#define XP_GEN_MIX_SIZES   8u
#define XP_GEN_MIX_PATTERN 256u
#define XP_GEN_MIX_BYTES   16384u

/* One size of a mix: where its template is in mix_tmpl and what the
 * per-frame steps need that differs by size. */
struct xp_gen_mix_size {
	__u32 off;           /* in mix_tmpl */
	__u16 len;           /* template bytes, frame without FCS */
	__u8 stamp;          /* enum xp_stamp_place at this size (0: stamps off) */
	__u8 tag;            /* the stamp's tag follows it (xp_stamp_tagged) */
};

/* SYN mode: most source addresses (--bind) the generator spreads SYNs over
 * (XP_MAX_BIND of user/engine/engine.h). A power of two. */
#define XP_GEN_MAX_BIND 256u

/*
 * Stream mode writes the 8-byte stamp of lib/stamp.h (stream, seq, send
 * time) into every frame that has a place for it (xp_stamp_place_of): the
 * first 8 payload bytes, or, at 64-byte IPv4/TCP, the IPv4 ID and the 6
 * payload bytes; and its 4-byte tag after it where the payload has room
 * (xp_stamp_tagged), keyed by gen_meas.key. stream = stream_base + tid, seq = the CPU's frame number.
 * Each stamped frame is counted into its send interval (struct xp_sbin of
 * measure.h, interval = (ts - t0) / ival with t0/ival of struct
 * xp_gen_meas). SYN mode never stamps.
 *
 * When the test's intervals start and how long they are, in stamp ticks:
 * the writable global gen_meas (.data), not the frozen rodata, because the
 * client learns t0 only just before it starts the engine, after load.
 * Written by xp_gen_set_meas (user/engine/live_prog.c) before the
 * first frame; the per-CPU state caches the current interval's end.
 */
struct xp_gen_meas {
	__u64 t0;            /* start of interval 0; frames before it count in interval 0 */
	__u64 ival;          /* ticks per interval; 0 = no bins (the stamp is still written) */
	__u64 key[2];        /* the tag's key (lib/stamp.h), from the server's start reply */
};

/*
 * The send time: one clock read per kernel batch, not per frame. A clock
 * read (bpf_ktime_get_ns) costs ~32 ns here, a third of a frame's budget
 * at full rate (measured: 19 ns per frame without stamps, 57 with a read
 * per frame, 25 without the read). Live mode runs the program on a batch of
 * up to XP_GEN_BATCH frames and transmits the batch's XDP_TX frames
 * together after it, so every frame of a batch leaves at the same moment:
 * the batch's first frame reads the clock and the others take that time,
 * which is no further from when they go out than a read of their own.
 * The program knows where a batch starts from userspace: before each
 * BPF_PROG_RUN call the thread bumps gen_call[tid] (xp_gen_new_call), and
 * batches start every XP_GEN_BATCH frames of a call (the kernel's
 * batch_size, which the live engine sets to this).
 */
#define XP_GEN_BATCH 64u
#define XP_GEN_MAX_THREADS 1024u /* gen_call entries: threads are at most the CPUs */

/*
 * Flows (issue 26; user/engine/live_flows.c builds all of this): up to
 * XP_GEN_MAX_FLOWS streams, each with headers of its own. Userspace
 * precomputes, per flow, one period of its field patterns (the lcm of the
 * fields' and the size's periods, frame n of the flow = block n % period)
 * as header blocks in the array map flow_blk: the frame's first
 * XP_GEN_BLK_FRAME bytes as frame_build_hdr makes them (headers, the
 * payload's start, every length and checksum right), its length and its
 * stamp's place. All flows' blocks together are at most XP_GEN_MAX_BLOCKS.
 * A frame longer than the block takes the rest from the fill bytes in
 * config.tmpl (the payload every block was checksummed with).
 *
 * Per CPU (= per sending thread) the flow_cpu map holds the thread's
 * schedule (engine/flow_sched.h: frame k of the thread is of flow
 * sched[k % len]) and per flow its pattern position, its frames (= the
 * stamp's seq in the thread's stream of the flow) and bytes, and how many
 * frames the thread sends of it in all.
 */
#define XP_GEN_MAX_FLOWS  256u
#define XP_GEN_SCHED_MAX  4096u   /* XP_FLOW_SCHED_MAX of engine/flow_sched.h */
#define XP_GEN_MAX_BLOCKS 65536u
#define XP_GEN_BLK_FRAME  120u

struct xp_gen_blk {
	__u16 len;           /* frame bytes, without FCS */
	__u8 stamp;          /* enum xp_stamp_place at this size (0: none) */
	__u8 tag;            /* the stamp's tag follows it */
	__u32 seq_rel;       /* a TCP data flow: payload bytes of its period's frames before this one */
	__u8 frame[XP_GEN_BLK_FRAME]; /* the frame's first min(len, XP_GEN_BLK_FRAME) bytes */
};

/* A flow's constants (rodata): where its blocks are and its header offsets
 * (fixed per flow: tags, family and protocol do not vary). */
struct xp_gen_flow {
	__u32 base;          /* its first block in flow_blk */
	__u32 period;        /* its blocks (>= 1) */
	__u32 step;          /* a thread's advance in the pattern per frame: T or 1, mod period */
	__u16 l3_off, l4_off, payload_off;
	__u8 l4_proto;       /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 seq_adv;        /* a TCP data flow (no SYN): its sequence number advances by each segment's
			      * payload, seq + seq_base + the block's seq_rel (engine/flow_table.h) */
	__u32 period_payload; /* payload bytes of its period's frames: seq_base's step at each wrap */
	__u32 seq_step;      /* seq_base's step every frame: the whole periods in a thread's advance (T or 1)
			      * times period_payload (a period shorter than T: e.g. 1 frame, 2 threads) */
};

/* One flow's state on one CPU (thread). */
struct xp_gen_flow_ctr {
	__u64 pkts;          /* frames sent: also the next stamp's seq in its stream */
	__u64 bytes;         /* their bytes without FCS */
	__u64 limit;         /* frames this thread sends of it in all; ~0: no end */
	__u32 pos;           /* the next frame's block, base + pos */
	__u32 seq_base;      /* a TCP data flow: period_payload times the periods this thread's pos wrapped */
};

struct xp_gen_flow_cpu {
	__u32 k;             /* the next frame's schedule position (< len) */
	__u32 len;           /* schedule length, 0: this thread sends nothing */
	__u16 sched[XP_GEN_SCHED_MAX];
	struct xp_gen_flow_ctr f[XP_GEN_MAX_FLOWS];
};

/*
 * The program's configuration: the rodata variable `config`, set by
 * xp_gen_load() between open and load (skel->rodata->config) and frozen at
 * load, so the verifier sees every field as a constant (see
 * bpf/live.bpf.c). Offsets are those of struct frame_layout, ports as
 * in struct xp_engine_cfg (host order).
 */
struct xp_live_config {
	__u32 tmpl_len;      /* template bytes, frame without FCS */
	__u16 l3_off;        /* IP header (SYN mode) */
	__u16 l4_off;
	__u16 payload_off;
	__u16 payload_len;
	__u8 l4_proto;       /* IPPROTO_TCP or IPPROTO_UDP */
	__u8 stamp;          /* where the stamp goes: enum xp_stamp_place (0: none) */
	__u8 syn_mode;       /* one SYN per frame (connection tests) */
	__u8 is_v6;          /* the template's family (SYN mode) */
	__u16 sport_lo, sport_hi;
	__u16 dport_lo, dport_hi;
	__u32 nthreads;      /* flow stride: threads sending (1 if unset) */
	__u32 seq0;          /* the template's TCP sequence number */
	__u32 stream_base;   /* stamp stream = stream_base + tid */
	__u8 stamp_tai;      /* stamp time from bpf_ktime_get_tai_ns (CLOCK_TAI), else
			      * bpf_ktime_get_ns (CLOCK_MONOTONIC) */
	__u8 stamp_tag;      /* the stamp's tag follows it (xp_stamp_tagged) */
	__u8 pad0[2];
	__u32 tx_ifindex;    /* live runs' ingress_ifindex; 0 = any (unit tests) */
	/* SYN mode */
	__u32 nbind;         /* source addresses in bind_addr; 0 = the template's */
	/* Distinct tuples: max(nbind, 1) x sports x dports (1 if unset). */
	__u64 conn_space;
	__u64 conn_first;    /* connection 0's tuple number (< conn_space) */
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
	/* Mixed sizes (stream mode; 0: one size, tmpl): frame n of a CPU is
	 * size mix[mix_pattern[n % mix_plen]], its template copied from
	 * mix_tmpl and the frame trimmed to it. Userspace hands in the largest
	 * + 1 bytes so that every run changes the ctx's length (see SYN mode
	 * in live.bpf.c). payload_len above is the largest size's: each
	 * TCP flow's sequence numbers advance by it, whatever the size. */
	__u32 mix_plen;
	struct xp_gen_mix_size mix[XP_GEN_MIX_SIZES];
	__u8 mix_pattern[XP_GEN_MIX_PATTERN];
	__u8 mix_tmpl[XP_GEN_MIX_BYTES];
	/* Flows (nflows > 0; see struct xp_gen_blk): the stream a thread
	 * stamps flow f with is f * nthreads + tid when flow_every (every
	 * thread sends every flow), else f (frame/flow_streams.h). tmpl then
	 * holds the fill bytes, tmpl_len the longest frame. */
	__u32 nflows;
	__u8 flow_every;
	__u8 pad_flows[3];
	__u32 flow_len;      /* every flow's every frame this long (no trim), or 0 */
	struct xp_gen_flow flows[XP_GEN_MAX_FLOWS];
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
	/* Stamped frames per send interval (ring of XP_IBINS, measure.h):
	 * the interval this CPU counts into now and the tick it ends at, so
	 * the hot path divides only when an interval ends. */
	__u64 ival_idx;
	__u64 ival_end; /* 0: not yet computed (the first stamped frame does) */
	struct xp_sbin sbins[XP_IBINS];
	/* The batch's send time (see XP_GEN_BATCH): the call it belongs to
	 * (gen_call[tid] when its first frame ran), that frame's number, and
	 * the time it read (ticks). */
	__u64 call, call_n0, ts;
	__u32 mix_pos; /* mixed sizes: sent % mix_plen, the next frame's pattern position */
	__u32 pad_mix;
};

#endif /* XDPPERF_GENERATOR_H */
