/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The live generator's flows path (issue 26), included by bpf/live.bpf.c
 * after its helpers (LD/ST, stamp_time; struct csum_delta from lib/stamp_put.h): frame k of the
 * CPU's thread is of flow f = sched[k % len] (engine/flow_sched.h), and
 * carries block base[f] + pos_f of flow_blk (live.h): the flow's headers
 * at its pattern position, built by userspace with every length and
 * checksum right. Per frame:
 *  1. the frame trimmed to the block's length (bpf_xdp_adjust_tail; the
 *     engine hands in the longest + 1 bytes, so the length always changes
 *     and the kernel rewrites the xdp_frame, as with mixed sizes), unless
 *     every frame has one length (config.flow_len): then the engine hands
 *     in exactly that and nothing is trimmed (~5 ns a frame less);
 *  2. the block's bytes over the frame (plain 8-byte stores, the last one
 *     overlapping), the rest of a longer frame from the fill bytes in
 *     config.tmpl (bpf_xdp_store_bytes);
 *  3. the stamp of stream f * T + tid (or f, frame/flow_streams.h) with the
 *     flow's own frame count on this thread as seq, where the block says,
 *     the L4 checksum (and at the IPv4 ID the IP header's) fixed
 *     incrementally for it by the one-stream path's own steps
 *     (lib/stamp_put.h);
 *  4. the flow's frames and bytes counted on this CPU, its position moved
 *     on by T (or 1) modulo its period: no division per frame.
 * A flow whose frames are all sent (limit) takes no frame: the run returns
 * XDP_DROP and sends nothing; the engine stops the thread when all its
 * flows are done.
 *
 * The offsets are variables here (each flow has its own tags, family and
 * protocol), bounded by masks for the verifier; the one-stream path keeps
 * its constants.
 */
#ifndef XDPPERF_LIVE_FLOWS_H
#define XDPPERF_LIVE_FLOWS_H

/* Block bytes over the frame: len <= XP_GEN_BLK_FRAME of them. 0 or -1. */
static __always_inline int flow_copy_block(void *data, void *data_end, const struct xp_gen_blk *b, __u32 n)
{
	if (n < 8 || n > XP_GEN_BLK_FRAME)
		return -1;
#pragma unroll
	for (int w = 0; w < XP_GEN_BLK_FRAME / 8; w++) {
		if ((__u32)(w + 1) * 8 > n)
			break;
		if (data + (w + 1) * 8 > data_end)
			return -1;
		ST(__u64, data + w * 8, LD(__u64, b->frame + w * 8));
	}
	__u32 t = (n - 8) & 0x7f;

	if (t > XP_GEN_BLK_FRAME - 8 || data + t + 8 > data_end)
		return -1;
	ST(__u64, data + t, LD(__u64, b->frame + t));
	return 0;
}

static __always_inline int live_flow_frame(struct xdp_md *ctx, struct xp_gen_state *st)
{
	__u32 key = 0, f, k, b, n, len;
	struct xp_gen_flow_cpu *fc = bpf_map_lookup_elem(&flow_cpu, &key);
	struct csum_delta cd = { 0 };
	struct xp_gen_flow_ctr *c;
	const struct xp_gen_blk *blk;
	const struct xp_gen_flow *fl;
	void *data, *data_end, *l4;

	if (!fc)
		return XDP_ABORTED;
	k = fc->k;
	if (fc->len == 0 || k >= XP_GEN_SCHED_MAX)
		return XDP_ABORTED;
	f = fc->sched[k] & (XP_GEN_MAX_FLOWS - 1);
	k++;
	fc->k = k >= fc->len ? 0 : k;
	c = &fc->f[f];
	if (c->pkts >= c->limit)
		return XDP_DROP; /* this flow's frames are all out */
	fl = (const struct xp_gen_flow *)&config.flows[f];
	if (c->pos >= fl->period)
		return XDP_ABORTED;
	b = fl->base + c->pos;
	blk = bpf_map_lookup_elem(&flow_blk, &b);
	if (!blk)
		return XDP_ABORTED;

	/* 1. 2. */
	if (config.flow_len) {
		/* Every frame of every flow this long: the engine hands in
		 * exactly that, nothing to trim (as with one stream). */
		len = config.flow_len;
		if (len < 60 || len > XP_GEN_MAX_LEN)
			return XDP_ABORTED;
	} else {
		len = blk->len;
		if (len < 60 || len > XP_GEN_MAX_LEN)
			return XDP_ABORTED;
		long have = (long)ctx->data_end - (long)ctx->data;

		/* A plain number from here: clang would otherwise fold len -
		 * have into 32-bit arithmetic on the packet pointer (refused). */
		asm volatile("" : "+r"(have));
		/* Always called (delta 0 is fine): the engine's frame is always
		 * one byte longer, and one path keeps clang from merging the two
		 * ctx loads into arithmetic on the ctx pointer (refused). */
		if (bpf_xdp_adjust_tail(ctx, (int)len - (int)have))
			return XDP_ABORTED;
	}
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	n = len < XP_GEN_BLK_FRAME ? len : XP_GEN_BLK_FRAME;
	if (flow_copy_block(data, data_end, blk, n))
		return XDP_ABORTED;
	if (len > XP_GEN_BLK_FRAME) {
		__u32 rest = len - XP_GEN_BLK_FRAME;

		if (rest > XP_GEN_MAX_LEN - XP_GEN_BLK_FRAME ||
		    bpf_xdp_store_bytes(ctx, XP_GEN_BLK_FRAME, (void *)config.tmpl + XP_GEN_BLK_FRAME, rest))
			return XDP_ABORTED;
		data = (void *)(long)ctx->data;
		data_end = (void *)(long)ctx->data_end;
	}

	/* 3. The stamp; a TCP data flow's sequence number: this segment starts where the flow's last one
	 * ended (the header's + the payload before it, engine/flow_table.h). One checksum fix for both. */
	if (blk->stamp || fl->seq_adv) {
		l4 = data + (fl->l4_off & 0x7f);
		if (fl->seq_adv) {
			if (l4 + 20 > data_end)
				return XDP_ABORTED;
			__u32 old = LD(__u32, l4 + 4);
			__u32 seq = bpf_htonl(bpf_ntohl(old) + c->seq_base + blk->seq_rel);

			cd.old_sum += xp_csum_words32(old);
			cd.sum += xp_csum_words32(seq);
			cd.nwords += 2;
			ST(__u32, l4 + 4, seq);
		}
		if (blk->stamp) {
			__u32 stream = config.flow_every ? f * config.nthreads + st->tid : f;
			__u64 v = xp_stamp_pack(stream, c->pkts, stamp_time(st, st->sent));
			int r = xp_stamp_put(data, data_end, fl->payload_off & 0xff, fl->l3_off & 0x3f, v, blk->stamp,
					     blk->tag, gen_meas.key, &cd);

			if (r < 0)
				return XDP_ABORTED;
			XP_ADD_AS(gen_ibin_sent, st->sbins[st->ival_idx & (XP_IBINS - 1)].sent, 1);
		}
		l4 = data + (fl->l4_off & 0x7f);
		/* Each protocol its own bound: one check of a variable length
		 * leaves the verifier unsure of the TCP checksum's place. */
		if (fl->l4_proto == IPPROTO_TCP) {
			if (l4 + 20 > data_end)
				return XDP_ABORTED;
			xp_csum_delta_put(l4 + XP_TCP_CHECK_OFF, 0, &cd);
		} else {
			if (l4 + 8 > data_end)
				return XDP_ABORTED;
			xp_csum_delta_put(l4 + XP_UDP_CHECK_OFF, 1, &cd);
		}
	}

	/* 4. */
	c->pkts++;
	c->bytes += len;
	__u32 pos = c->pos + fl->step;

	__u32 wrap = pos >= fl->period;

	c->pos = wrap ? pos - fl->period : pos;
	if (fl->seq_adv) /* the whole periods of segments behind: in the advance, and a wrap */
		c->seq_base += fl->seq_step + (wrap ? fl->period_payload : 0);
	st->sent++;
	return XDP_TX;
}

#endif /* XDPPERF_LIVE_FLOWS_H */
