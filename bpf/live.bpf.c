// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Traffic generator run by BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES
 * (user/engine/live.c): every run turns the frame the kernel hands in into
 * the next test frame and returns XDP_TX, which live mode turns into a
 * transmit on the ctx's ingress_ifindex.
 *
 * Per run:
 *  1. copy the template (rodata) over the whole frame. Live mode recycles
 *     its page_pool buffers without re-initialising them, and whatever the
 *     frame went through (a veth peer's stack, a router rewriting MACs and
 *     TTL in place) may have changed them: only a full copy is safe;
 *  2. set the per-frame fields: source and destination port (flow i, dport
 *     fastest, as xp_flow_ports), the TCP sequence number (each flow's
 *     segments follow on from each other), and the 8-byte stamp of
 *     lib/stamp.h (stream, sequence, send time) where the frame has a place
 *     for it, counted into its send interval (see live.h);
 *  3. fix the L4 checksum incrementally from the template's (RFC 1624
 *     eqn. 3 over the changed 16-bit words): a few adds, whatever the
 *     frame size. The addresses never change, so neither does the
 *     pseudo-header part of the L4 checksum; the IPv4 header checksum
 *     changes only where the stamp uses the IPv4 ID (64-byte IPv4/TCP).
 *
 * SYN mode (syn_mode, the XDP connection engine's -x tests): frame n of
 * thread tid is the SYN of connection k = n * nthreads + tid, numbered as
 * user/engine/tuples.h numbers them, so that both SYN senders agree: tuple
 * number t = (conn_first + k) mod conn_space, source address bind_addr[t mod nbind] (only
 * with nbind > 0; else the template's), ports xp_flow_ports(t / nbind), and
 * the ISN xp_conn_isn(seed, k) of bpf/lib/isn.h. No stamp. The IPv4 header
 * checksum and the pseudo-header part of the TCP checksum then change with
 * the source address, both fixed incrementally as in step 3. With a window
 * (config.win_size, the engine's -P; bpf/window.h) each SYN first takes a
 * free slot from win_free and records its connection there, with the slot
 * in the ISN; a run that finds no free slot sends nothing (XDP_DROP, not
 * counted), so the SYNs in flight never exceed the window.
 *
 * All configuration is one const volatile rodata struct, config (struct
 * xp_live_config, live.h), set before load: the verifier then
 * sees it as constants, checks every offset once against them, and prunes
 * the branches (TCP/UDP, stamp or not) this load does not take.
 */
/* vmlinux.h has a typedef named config (zstd's): rename it on the way in,
 * the name is our rodata variable's (struct xp_live_config). */
#define config xp_vmlinux_config
#include "vmlinux.h"
#undef config
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "live.h"
#include "lib/consts.h"
#include "lib/csum.h"
#include "lib/isn.h"
#include "lib/mutate.h"
#include "lib/stamp_put.h"
#include "window.h"

/* Templates up to this long are copied with plain stores, longer ones with
 * bpf_xdp_store_bytes. */
#define SMALL_LEN 128

/* Set by xp_gen_load (user/engine/live_prog.c) before load; see struct
 * xp_live_config. */
const volatile struct xp_live_config config = { .nthreads = 1, .conn_space = 1 };

/* t0 and ival of the send intervals: writable after load (live.h). */
volatile struct xp_gen_meas gen_meas = { 0 };
/* Per thread, bumped by userspace before each BPF_PROG_RUN call: where the
 * program's batches start (XP_GEN_BATCH in live.h). */
volatile __u64 gen_call[XP_GEN_MAX_THREADS] = { 0 };

/* One entry; per CPU so the hot path needs no atomics (see live.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_gen_state);
} gen_state SEC(".maps");

/* Flows (live.h, struct xp_gen_blk): the header blocks, max_entries set
 * by the loader to the blocks there are; and per CPU the thread's schedule
 * and flow counters. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_gen_blk);
} flow_blk SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_gen_flow_cpu);
} flow_cpu SEC(".maps");

/* SYN mode's window (win_slots, win_free, win_ctl); created with max_entries 1
 * and replaced by the engine's maps (bpf_map__reuse_fd) when config.win_size
 * is set. */
#include "window_maps.h"

/*
 * Packet stores and loads of whole fields. The fields are not aligned
 * (payload at 54 for IPv4/TCP); the verifier allows unaligned packet access
 * on architectures with efficient unaligned access (x86-64, arm64), and one
 * wide access is cheaper than byte-wise copies at ~60 ns per frame.
 */
#define LD(type, p)        (*(type *)(p))
#define ST(type, p, v)     (*(type *)(p) = (v))
/* 8 template bytes. Keep the volatile: config is "= {...}" in this file, and
 * without it clang would fold every load to 0 (the value is set before
 * load, in the map, not in the object). */
#define TMPL64(off)        (*(const volatile __u64 *)(config.tmpl + (off)))

/* 32 bits at p become v, accounted in cd. */
static __always_inline void put32_csum(void *p, __u32 v, struct csum_delta *cd)
{
	cd->old_sum += xp_csum_words32(LD(__u32, p));
	cd->sum += xp_csum_words32(v);
	cd->nwords += 2;
	ST(__u32, p, v);
}

/*
 * 1. The template over the whole frame (data_in is the template, so the
 * frame is exactly len bytes long). 0, or -1 to abort.
 */
static __always_inline int write_template(struct xdp_md *ctx, __u32 len)
{
	if (len <= SMALL_LEN) {
		/* 64- to 128-byte frames, the pps benchmarks: 8-byte words,
		 * the last one at len - 8 (overlapping its predecessor) for the
		 * tail. ~10 ns less per frame than the helper's call and
		 * memcpy. len is a verifier constant: the loop unrolls to
		 * exactly len / 8 + 1 copies. */
		void *data = (void *)(long)ctx->data;
		void *data_end = (void *)(long)ctx->data_end;

		if (len < 8 || data + len > data_end)
			return -1;
#pragma unroll
		for (int w = 0; w < SMALL_LEN / 8; w++) {
			if ((__u32)(w + 1) * 8 > len)
				break;
			ST(__u64, data + w * 8, TMPL64(w * 8));
		}
		ST(__u64, data + len - 8, TMPL64(len - 8));
		return 0;
	}
	return bpf_xdp_store_bytes(ctx, 0, (void *)config.tmpl, len) ? -1 : 0;
}

/* SYN mode, source address a of bind[]: in the pseudo-header, so in the TCP
 * checksum, and (IPv4) in the IP header's. */
static __always_inline void write_bind_addr(void *ip, __u32 a, struct csum_delta *cd)
{
	if (config.is_v6) {
#pragma unroll
		for (int j = 0; j < 4; j++)
			put32_csum(ip + 8 + j * 4, config.bind_addr[a][j], cd);
		return;
	}
	void *sa = ip + 12;
	__u32 v = config.bind_addr[a][0], o = xp_csum_words32(LD(__u32, sa));
	__u32 w = xp_csum_words32(v);

	put32_csum(sa, v, cd);
	ST(__u16, ip + 10, xp_csum_replace(LD(__u16, ip + 10), o, w, 2));
}

/*
 * 2'. SYN mode: the SYN of connection k = sent * nthreads + tid, with the
 * tuple and ISN the AF_XDP engine would give it (user/engine/tuples.h). A
 * few divisions per frame: SYN rates are well below the stream's. 0 or -1.
 */
static __always_inline int write_syn(void *data, void *l4, const struct xp_gen_state *st, __u64 n, __u32 nd,
				     __u32 ns, struct csum_delta *cd, __u32 slot)
{
	__u64 kc = n * config.nthreads + st->tid, t;
	__u32 a = 0, d, s, isn;

	if (config.conn_space == 0)
		return -1;
	/* One division: conn_first < conn_space, and k never comes near 2^64. */
	t = (config.conn_first + kc) % config.conn_space;
	if (config.nbind > 1) {
		a = (__u32)(t % config.nbind) & (XP_GEN_MAX_BIND - 1);
		t /= config.nbind;
	}
	d = (__u32)(t % nd);
	s = (__u32)((t / nd) % ns);
	isn = xp_conn_isn(config.seed, kc);
	if (config.win_size) {
		/* The connection into its slot, before its SYN can be answered. */
		struct xp_win_slot *w = bpf_map_lookup_elem(&win_slots, &slot);
		__u32 key = 0;
		struct xp_win_ctl *ctl = bpf_map_lookup_elem(&win_ctl, &key);

		if (!w || !ctl || config.win_shift < 12 || config.win_shift > 31)
			return -1;
		isn = xp_win_isn(isn, slot, config.win_shift);
		w->isn = isn;
		w->srv_nxt = 0;
		w->sport = (__u16)(config.sport_lo + s);
		w->dport = (__u16)(config.dport_lo + d);
		w->k = kc;
		/* The SYN's send time, for its retransmission timeout (1 s
		 * and up): the coarse clock (CLOCK_MONOTONIC_COARSE, at most a
		 * tick behind CLOCK_MONOTONIC, the keeper's) reads no TSC,
		 * which cost ~30 ns per SYN here (perf: read_tsc). */
		w->t_ns = bpf_ktime_get_coarse_ns();
		w->tries = 0;
		/* Last: the state says the rest is there (x86-64's stores are not
		 * reordered; the other readers check isn and ports as well). */
		w->word = XP_WIN_WORD(XP_WIN_GEN(w->word) + 1, XP_WIN_SYN_SENT);
		XP_ATOMIC_INC(ctl, taken);
	}
	put32_csum(l4, bpf_htonl(((__u32)(config.sport_lo + s) << 16) | (__u16)(config.dport_lo + d)), cd);
	put32_csum(l4 + 4, bpf_htonl(isn), cd);
	if (config.nbind)
		write_bind_addr(data + config.l3_off, a, cd);
	return 0;
}

/*
 * Stream mode: the send interval of send time ts (full ticks), (ts - t0) /
 * ival, frames before t0 in interval 0, made st's current one (its bin
 * reset if it held an older interval). Run at each clock read, i.e. once
 * per batch, and it divides only when the interval has ended: the clock
 * only moves forward on a CPU. Each frame then adds one to the current
 * bin (see write_stamp).
 */
static __always_inline void next_interval(struct xp_gen_state *st, __u64 ts)
{
	__u64 t0 = gen_meas.t0, ival = gen_meas.ival, idx;
	struct xp_sbin *b;

	if (!ival || ts < st->ival_end)
		return;
	idx = ts < t0 ? 0 : (ts - t0) / ival;
	st->ival_idx = idx;
	st->ival_end = t0 + (idx + 1) * ival;
	b = &st->sbins[idx & (XP_IBINS - 1)];
	if (b->tag != idx + 1) { /* the bin held an older interval: reuse it */
		b->tag = idx + 1;
		b->sent = 0;
	}
}

/*
 * The send time of CPU frame n (ticks): the first frame of a call, and of
 * each batch in it, reads the clock; the rest of the batch leaves with it
 * (see XP_GEN_BATCH).
 */
static __always_inline __u64 stamp_time(struct xp_gen_state *st, __u64 n)
{
	__u64 call = gen_call[st->tid & (XP_GEN_MAX_THREADS - 1)];

	if (call != st->call || ((n - st->call_n0) & (XP_GEN_BATCH - 1)) == 0) {
		if (call != st->call) {
			st->call = call;
			st->call_n0 = n;
		}
		st->ts = (config.stamp_tai ? bpf_ktime_get_tai_ns() : bpf_ktime_get_ns()) >> XP_STAMP_TICK_SHIFT;
		next_interval(st, st->ts);
	}
	return st->ts;
}

/*
 * 2''. Stream mode: the stamp of lib/stamp.h (stream stream_base + tid,
 * seq n, the batch's send time) where config.stamp says, accounted in cd
 * for the L4 checksum (lib/stamp_put.h; at XP_STAMP_AT_IPID its first two
 * bytes go into the IPv4 ID, whose header checksum is fixed there). 0 or -1.
 */
static __always_inline int write_stamp(void *data, void *data_end, struct xp_gen_state *st, __u64 n,
				       struct csum_delta *cd, __u8 place, __u8 tag)
{
	__u64 v = xp_stamp_pack(config.stream_base + st->tid, n, stamp_time(st, n));
	int r = xp_stamp_put(data, data_end, config.payload_off, config.l3_off, v, place, tag, gen_meas.key,
			     cd);

	if (r)
		return r < 0 ? -1 : 0; /* 1: no stamp at this place, nothing counted */
	/* Counted in its send interval (ival 0: no bins, the tag stays 0).
	 * XP_ADD_AS: a plain += 1 except in scripts/mutate.sh's
	 * -DXP_MUT_gen_ibin_sent build (lib/mutate.h). */
	XP_ADD_AS(gen_ibin_sent, st->sbins[st->ival_idx & (XP_IBINS - 1)].sent, 1);
	return 0;
}

/*
 * 2. Stream mode: flow i = sent * nthreads + tid, kept decomposed as
 * (k, s, d) in st: its ports, its TCP sequence number and the stamp.
 * 0 or -1.
 */
static __always_inline int write_stream(void *data, void *data_end, void *l4, struct xp_gen_state *st, __u64 n,
					__u32 nd, __u32 ns, struct csum_delta *cd, __u8 place, __u8 tag)
{
	if (!st->inited) {
		__u64 i = st->tid;

		st->d = i % nd;
		st->s = (i / nd) % ns;
		st->k = i / nd / ns;
		st->inited = 1;
	}
	/* The frame holds the template here, so its words are the old ones. */
	put32_csum(l4, bpf_htonl(((__u32)(config.sport_lo + st->s) << 16) | (__u16)(config.dport_lo + st->d)), cd);

	if (config.l4_proto == IPPROTO_TCP && config.payload_len) {
		/* Each flow is one TCP stream: its k-th segment starts where
		 * the (k-1)-th ended, which keeps conntrack's window tracking
		 * in a firewall under test happy. */
		put32_csum(l4 + 4, bpf_htonl(config.seq0 + (__u32)st->k * config.payload_len), cd);
	}

	if (place)
		return write_stamp(data, data_end, st, n, cd, place, tag);
	return 0;
}

/* Stream mode: advance st to flow i + nthreads; divide only when an index wraps. */
static __always_inline void next_flow(struct xp_gen_state *st, __u32 nd, __u32 ns)
{
	__u32 d = st->d + config.nthreads, s = st->s;
	__u64 k = st->k;

	if (d >= nd) {
		s += d / nd;
		d %= nd;
		if (s >= ns) {
			k += s / ns;
			s %= ns;
		}
	}
	st->d = d;
	st->s = s;
	st->k = k;
}

/*
 * 1'. Mixed sizes (config.mix_plen): the frame of this CPU's pattern
 * position, its size's template over a frame trimmed to that size. The
 * kernel hands in the largest + 1 bytes every run (it restores the ctx it
 * started from whenever a run changed it), so the trim always changes the
 * length and the kernel rewrites the xdp_frame from the ctx: a page that
 * came back from a receiver holding another length cannot leave with it.
 * A template per size, built by frame_build, keeps IP total length, IPv4
 * header checksum, UDP length and the L4 checksum over the payload right
 * by construction; step 3 then fixes the checksum only for what changes per
 * frame, as with one size. *place gets the stamp's place at this size
 * (64-byte IPv4/TCP: the IPv4 ID). 0, or -1 to abort.
 */
static __always_inline int write_mix_template(struct xdp_md *ctx, struct xp_gen_state *st, __u8 *place,
					      __u8 *tag)
{
	__u32 pos = st->mix_pos & (XP_GEN_MIX_PATTERN - 1);
	__u32 k = config.mix_pattern[pos] & (XP_GEN_MIX_SIZES - 1);
	__u32 len = config.mix[k].len, off = config.mix[k].off;
	long have = (long)ctx->data_end - (long)ctx->data;

	if (len < 60 || len > XP_GEN_MAX_LEN || off > XP_GEN_MIX_BYTES - XP_GEN_MAX_LEN)
		return -1;
	if (have != (long)len && bpf_xdp_adjust_tail(ctx, (int)len - (int)have))
		return -1;
	if (bpf_xdp_store_bytes(ctx, 0, (void *)config.mix_tmpl + off, len))
		return -1;
	*place = config.mix[k].stamp;
	*tag = config.mix[k].tag;
	return 0;
}

/* Mixed sizes: the next pattern position, at the frame count's pace. */
static __always_inline void next_mix_pos(struct xp_gen_state *st)
{
	__u32 p = st->mix_pos + 1;

	st->mix_pos = p >= config.mix_plen ? 0 : p;
}

#include "live_flows.h"

SEC("xdp")
int xdp_live(struct xdp_md *ctx)
{
	__u32 key = 0, len = config.tmpl_len, nd, ns, check_off;
	struct xp_gen_state *st;
	struct csum_delta cd = { 0 };
	void *data, *data_end, *l4;
	__u64 n;
	__u32 slot = 0;
	__u8 place = config.stamp, tag = config.stamp_tag; /* mixed sizes: the size's own */

	/* userspace also attaches this program, idle, to a private loopback
	 * to keep it in the XDP dispatcher (see user/engine/live_prog.c):
	 * anything that arrives there, or anywhere but in a run for
	 * tx_ifindex, passes. */
	if (config.tx_ifindex && ctx->ingress_ifindex != config.tx_ifindex)
		return XDP_PASS;

	st = bpf_map_lookup_elem(&gen_state, &key);
	if (!st)
		return XDP_ABORTED;
	/* Flows: a path of their own (live_flows.h). config.nflows is a
	 * constant, so a load without flows has none of it. */
	if (config.nflows)
		return live_flow_frame(ctx, st);
	/* Dead code with a sane configuration; keeps the verifier's size
	 * argument and the divisions below well defined with any rodata. */
	if (len == 0 || len > XP_GEN_MAX_LEN || config.dport_hi < config.dport_lo ||
	    config.sport_hi < config.sport_lo)
		return XDP_ABORTED;

	/* SYN mode: userspace hands in len + 1 bytes, and the first run on a
	 * page trims the extra byte. Why: live mode re-initialises a recycled
	 * page's xdp_frame only when the frame's data pointer or flags moved,
	 * and updates it from the ctx only when the ctx differs from the
	 * original (len + 1) one. A SYN's page goes round the handshake (the
	 * server's XDP turns it into the SYN-ACK, ours into the ACK, the
	 * server's into a 54-byte RST, all in place) and comes back with the
	 * RST's length in its xdp_frame: without this, every other SYN went
	 * out truncated to 54 bytes. With the ctx always one byte short of
	 * the original, the kernel rewrites the xdp_frame from it every run. */
	/* SYN mode's window: a free slot, or no SYN this run. */
	if (config.syn_mode && config.win_size) {
		__u32 key = 0;
		struct xp_win_ctl *ctl = bpf_map_lookup_elem(&win_ctl, &key);

		if (!ctl || xp_win_ring_get(&win_free, ctl, xp_win_ring_mask(config.win_shift), &slot))
			return XDP_DROP;
	}
	if (config.syn_mode) {
		long have = (long)ctx->data_end - (long)ctx->data;

		if (have != (long)len && bpf_xdp_adjust_tail(ctx, (int)len - (int)have))
			return XDP_ABORTED;
	}
	if (config.mix_plen && !config.syn_mode) {
		if (write_mix_template(ctx, st, &place, &tag))
			return XDP_ABORTED;
	} else if (write_template(ctx, len)) {
		return XDP_ABORTED;
	}

	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	l4 = data + config.l4_off;
	check_off = config.l4_proto == IPPROTO_TCP ? XP_TCP_CHECK_OFF : XP_UDP_CHECK_OFF;
	/* The TCP header (20 bytes) covers ports, seq and checksum; UDP's 8. */
	if (l4 + (config.l4_proto == IPPROTO_TCP ? 20 : 8) > data_end)
		return XDP_ABORTED;

	nd = (__u32)config.dport_hi - config.dport_lo + 1;
	ns = (__u32)config.sport_hi - config.sport_lo + 1;
	n = st->sent;
	if (config.syn_mode ? write_syn(data, l4, st, n, nd, ns, &cd, slot)
			    : write_stream(data, data_end, l4, st, n, nd, ns, &cd, place, tag))
		return XDP_ABORTED;

	/* 3. The checksum, from the template's: RFC 1624 eqn 3 over the
	 * words that changed. */
	xp_csum_delta_put(l4 + check_off, config.l4_proto != IPPROTO_TCP, &cd);
	if (!config.syn_mode)
		next_flow(st, nd, ns);
	if (config.mix_plen)
		next_mix_pos(st);
	st->sent = n + 1;
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
