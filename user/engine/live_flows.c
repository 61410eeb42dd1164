/*
 * The live engine's flows: header blocks, per-flow constants, per-CPU
 * schedules and the per-flow counts (see live_flows.h, bpf/live.h).
 *
 * Why blocks and not per-field patching in BPF: a flow's fields follow OTG
 * patterns (random ones included) and change the IPv4 header checksum, the
 * pseudo-header and the lengths; precomputed, every frame costs one copy of
 * at most XP_GEN_BLK_FRAME bytes whatever the flow's patterns, and the
 * bytes are those frame_build_hdr gives, checked once here.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/consts.h"
#include "bpf/live.h"
#include "bpf/live.skel.h"
#include "engine/flow_table.h"
#include "engine/live_flows.h"
#include "frame/flow_streams.h"

_Static_assert(XP_GEN_SCHED_MAX == XP_FLOW_SCHED_MAX, "the program holds any schedule");
_Static_assert(XP_GEN_MAX_FLOWS == XP_FLOW_MAX_STREAMS, "the program holds every flow");

/* One period of fl's patterns, capped at cap: 0 if longer (the xsk engine's count, engine/flow_table.h). */
static uint64_t flow_period(const struct xp_engine_flow *fl, uint64_t cap)
{
	uint64_t p = xp_flow_period(fl, cap);
	return p > cap ? 0 : p;
}

int xp_gen_flows_build(const struct xp_engine_cfg *cfg, unsigned nthreads, struct xp_live_config *ro,
		       struct xp_gen_blk **blks, unsigned *nblk, uint32_t *max_len, char *err, size_t errlen)
{
	const struct xp_engine_flow *flows = cfg->frames.flows;
	unsigned nf = cfg->frames.nflows, T = nthreads ? nthreads : 1;
	uint64_t total = 0;
	static uint8_t buf[XP_GEN_MAX_LEN];

	*blks = NULL;
	*nblk = 0;
	*max_len = 0;
	if (!flows || nf == 0 || nf > XP_GEN_MAX_FLOWS) {
		snprintf(err, errlen, "%u flows: the live engine sends 1 to %u", nf, XP_GEN_MAX_FLOWS);
		return -EINVAL;
	}
	uint64_t period[XP_GEN_MAX_FLOWS];
	for (unsigned f = 0; f < nf; f++) {
		const char *perr = NULL;
		if (xp_flow_pat_check(&flows[f].hdr, &perr)) {
			snprintf(err, errlen, "flow %u: %s", f + 1, perr ? perr : "invalid headers");
			return -EINVAL;
		}
		period[f] = flow_period(&flows[f], XP_GEN_MAX_BLOCKS);
		if (!period[f]) {
			snprintf(err, errlen, "flow %u: its headers and sizes repeat only after more than %u frames (the "
				 "lcm of its patterns' counts), more than the live engine holds: use shorter patterns "
				 "or --engine xsk", f + 1, XP_GEN_MAX_BLOCKS);
			return -E2BIG;
		}
		if (total + period[f] > XP_GEN_MAX_BLOCKS) {
			snprintf(err, errlen, "flows 1-%u: their headers and sizes repeat only after %llu frames together, "
				 "more than the %u the live engine holds: use shorter patterns or --engine xsk", f + 1,
				 (unsigned long long)(total + period[f]), XP_GEN_MAX_BLOCKS);
			return -E2BIG;
		}
		total += period[f];
	}
	struct xp_gen_blk *b = calloc(total, sizeof(*b));
	if (!b) {
		snprintf(err, errlen, "cannot allocate %llu header blocks", (unsigned long long)total);
		return -ENOMEM;
	}
	bool stamps = cfg->frames.stamp.ival != 0;
	uint8_t fill = cfg->frames.tmpl.payload_fill;
	uint32_t base = 0, longest = 0;
	for (unsigned f = 0; f < nf; f++) {
		const struct xp_engine_flow *fl = &flows[f];
		struct xp_gen_flow *g = (struct xp_gen_flow *)&ro->flows[f];
		for (uint64_t n = 0; n < period[f]; n++) {
			struct xp_flow_hdr h;
			struct frame_layout lay;
			const char *ferr = NULL;
			size_t size = xp_flow_size_at(fl, n), len = 0;

			xp_flow_pat_at(&fl->hdr, n, &h);
			if (!frame_layout_hdr(&h, size, false, &lay, &ferr))
				len = frame_build_hdr(&h, size, false, fill, buf, sizeof(buf), &ferr);
			if (!len || len + 1 > XP_GEN_LIVE_MAX_LEN) {
				if (len)
					snprintf(err, errlen, "flow %u: %zu-byte frames are too large for XDP live frames "
						 "(at most -l %u with flows): use --engine xsk", f + 1, size,
						 XP_GEN_LIVE_MAX_LEN + 3);
				else
					snprintf(err, errlen, "flow %u: cannot build its %zu-byte frame %llu: %s", f + 1,
						 size, (unsigned long long)n, ferr ? ferr : "invalid");
				free(b);
				return len ? -EMSGSIZE : -EINVAL;
			}
			if (n == 0) {
				g->base = base;
				g->period = (__u32)period[f];
				g->step = (__u32)((cfg->frames.nflows * (uint64_t)T <= XP_FLOW_MAX_STREAMS ? T : 1) %
						  period[f]);
				g->l3_off = lay.l3_off;
				g->l4_off = lay.l4_off;
				g->payload_off = lay.payload_off;
				g->l4_proto = lay.l4_proto;
				/* A TCP data flow advances its sequence number per segment (engine/flow_table.h). */
				g->seq_adv = lay.l4_proto == IPPROTO_TCP && !(fl->hdr.base.tcp_flags & XP_TCPF_SYN);
				g->period_payload = 0;
			}
			struct xp_gen_blk *k = &b[base + n];
			k->len = (__u16)len;
			k->seq_rel = g->period_payload;
			g->period_payload += lay.payload_len;
			memcpy(k->frame, buf, len < XP_GEN_BLK_FRAME ? len : XP_GEN_BLK_FRAME);
			enum xp_stamp_place place = XP_STAMP_NONE;
			if (stamps && fl->stamps && !(lay.payload_off & 1))
				place = xp_stamp_place_of(h.src.family == AF_INET6, lay.payload_len);
			if (stamps && fl->stamps && place == XP_STAMP_NONE) {
				snprintf(err, errlen, "flow %u: its %zu-byte frames carry no stamp (no loss or latency "
					 "for them): give sizes from %zu up, or no stamps for it", f + 1, size,
					 size + XP_STAMP_BYTES);
				free(b);
				return -EINVAL;
			}
			k->stamp = (__u8)place;
			k->tag = (__u8)xp_stamp_tagged(place, lay.payload_len);
			if (len > longest)
				longest = (uint32_t)len;
		}
		/* A thread moves S frames on per frame (T, or 1 when each flow has one thread): whole periods in S. */
		uint64_t S = cfg->frames.nflows * (uint64_t)T <= XP_FLOW_MAX_STREAMS ? T : 1;
		g->seq_step = g->seq_adv ? (__u32)((S / period[f]) * g->period_payload) : 0;
		base += (uint32_t)period[f];
	}
	/* The payload beyond a block: the fill every block was summed with. */
	memset((void *)ro->tmpl, fill, sizeof(ro->tmpl));
	ro->tmpl_len = longest;
	/* One length for all: nothing to trim per frame (the engine hands in exactly it). */
	ro->flow_len = longest;
	for (uint64_t i = 0; i < total; i++)
		if (b[i].len != longest)
			ro->flow_len = 0;
	ro->nflows = nf;
	ro->flow_every = nf * (uint64_t)T <= XP_FLOW_MAX_STREAMS;
	ro->stream_base = 0;
	*blks = b;
	*nblk = (unsigned)total;
	*max_len = longest;
	return 0;
}

/* Frames thread t sends of flow f in all (UINT64_MAX: no end). */
static uint64_t flow_limit(const struct xp_engine_flow *fl, unsigned f, unsigned t, unsigned nf, unsigned T)
{
	uint64_t F = fl->frames;
	if (!F)
		return UINT64_MAX;
	if (xp_flow_stream_of(f, t, nf, T) == XP_FLOW_NO_STREAM)
		return 0;
	if ((uint64_t)nf * T > XP_FLOW_MAX_STREAMS)
		return F; /* the flow's only thread */
	/* Thread t sends the flow's frames t, t + T, t + 2T... */
	return F > t ? (F - t + T - 1) / T : 0;
}

/* Runs until thread's flows (limit[f] frames each) are all out. */
static uint64_t sched_runs(const struct xp_flow_sched *s, const uint64_t *limit, unsigned nf)
{
	uint64_t runs = 0;
	for (unsigned f = 0; f < nf; f++) {
		if (!s->count[f] || !limit[f])
			continue;
		if (limit[f] == UINT64_MAX)
			return UINT64_MAX;
		/* Its last frame: occurrence (L - 1) % count of round (L - 1) / count. */
		uint64_t q = (limit[f] - 1) / s->count[f], r = (limit[f] - 1) % s->count[f], p = 0;
		for (unsigned k = 0; k < s->len; k++)
			if (s->flow[k] == f && r-- == 0) {
				p = k;
				break;
			}
		uint64_t last = q * s->len + p + 1;
		if (last > runs)
			runs = last;
	}
	return runs;
}

int xp_gen_flows_put(struct live_bpf *skel, const struct xp_gen_blk *blks, unsigned nblk, char *err, size_t errlen)
{
	int fd = bpf_map__fd(skel->maps.flow_blk);

	for (__u32 i = 0; i < nblk; i++)
		if (bpf_map_update_elem(fd, &i, &blks[i], 0)) {
			int e = errno;
			snprintf(err, errlen, "cannot write the flows' header blocks: %s", strerror(e));
			return -e;
		}
	return 0;
}

int xp_gen_flows_init(struct live_bpf *skel, const struct xp_engine_cfg *cfg, unsigned nthreads,
		      const unsigned *cpu_tid, unsigned ncpu_tid, struct xp_flow_sched *sched, uint64_t *runs,
		      char *err, size_t errlen)
{
	unsigned nf = cfg->frames.nflows, T = nthreads ? nthreads : 1;
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus <= 0) {
		snprintf(err, errlen, "cannot count the CPUs");
		return -EINVAL;
	}
	uint64_t(*limit)[XP_GEN_MAX_FLOWS] = calloc(T, sizeof(*limit));
	struct xp_gen_flow_cpu *v = calloc((size_t)ncpus, sizeof(*v));
	int r = 0;
	if (!limit || !v) {
		snprintf(err, errlen, "out of memory");
		r = -ENOMEM;
		goto out;
	}
	for (unsigned t = 0; t < T; t++) {
		if (xp_flow_sched_build(cfg->frames.flows, nf, t, T, &sched[t], err, errlen)) {
			r = -EINVAL;
			goto out;
		}
		for (unsigned f = 0; f < nf; f++)
			limit[t][f] = flow_limit(&cfg->frames.flows[f], f, t, nf, T);
		runs[t] = sched_runs(&sched[t], limit[t], nf);
	}
	const struct xp_live_config *ro = &skel->rodata->config;
	for (unsigned c = 0; c < (unsigned)ncpus; c++) {
		unsigned t = c < ncpu_tid ? cpu_tid[c] : 0;
		if (t >= T)
			t = 0;
		v[c].len = sched[t].len;
		memcpy(v[c].sched, sched[t].flow, sizeof(v[c].sched));
		for (unsigned f = 0; f < nf; f++) {
			v[c].f[f].limit = limit[t][f];
			/* Thread t starts at the flow's frame t (every thread sends it) or 0. */
			v[c].f[f].pos = ro->flow_every ? (__u32)(t % ro->flows[f].period) : 0;
			/* Its first frame is the flow's frame t (or 0): the whole periods before it. */
			v[c].f[f].seq_base = ro->flow_every ? (__u32)((t / ro->flows[f].period) * ro->flows[f].period_payload)
							    : 0;
		}
	}
	__u32 key = 0;
	if (bpf_map__update_elem(skel->maps.flow_cpu, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0)) {
		r = -errno;
		snprintf(err, errlen, "cannot set the flows' schedules: %s", strerror(-r));
	}
out:
	free(limit);
	free(v);
	return r;
}

void xp_gen_read_flows(struct live_bpf *skel, uint64_t *pkts, uint64_t *bytes, unsigned n)
{
	int ncpus = libbpf_num_possible_cpus();
	__u32 key = 0;

	memset(pkts, 0, n * sizeof(*pkts));
	memset(bytes, 0, n * sizeof(*bytes));
	if (ncpus <= 0)
		return;
	struct xp_gen_flow_cpu *v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return;
	if (!bpf_map__lookup_elem(skel->maps.flow_cpu, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0))
		for (int c = 0; c < ncpus; c++)
			for (unsigned f = 0; f < n && f < XP_GEN_MAX_FLOWS; f++) {
				pkts[f] += v[c].f[f].pkts;
				bytes[f] += v[c].f[f].bytes;
			}
	free(v);
}
