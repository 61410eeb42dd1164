/*
 * The live engine's flows (issue 26): what userspace prepares for the flows
 * path of bpf/live.bpf.c (bpf/live_flows.h) and reads back from it. See
 * struct xp_gen_blk in bpf/live.h for the layout.
 */
#ifndef XP_ENGINE_LIVE_FLOWS_H
#define XP_ENGINE_LIVE_FLOWS_H

#include <linux/types.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/flow_sched.h"

struct live_bpf;
struct xp_live_config;
struct xp_gen_blk;

/*
 * Before load: each flow's header blocks (one period of its patterns: the
 * lcm of its fields' and its size's periods; all flows together at most
 * XP_GEN_MAX_BLOCKS, else refused), its constants in ro->flows, the fill
 * bytes in ro->tmpl. *blks (malloc'd, *nblk of them) go into the map
 * flow_blk after load; *max_len is the longest frame (without FCS).
 * 0, or -errno with err one line.
 */
int xp_gen_flows_build(const struct xp_engine_cfg *cfg, unsigned nthreads, struct xp_live_config *ro,
		       struct xp_gen_blk **blks, unsigned *nblk, uint32_t *max_len, char *err, size_t errlen);

/* After load: the blocks of xp_gen_flows_build into flow_blk. 0 or -errno with err. */
int xp_gen_flows_put(struct live_bpf *skel, const struct xp_gen_blk *blks, unsigned nblk, char *err, size_t errlen);

/*
 * Every CPU's schedule and flow state (cpu_tid[cpu] the thread it runs, for
 * ncpu_tid CPUs; call after xp_gen_init_state, before any run). sched[t]
 * (nthreads of them) gets thread t's schedule (engine/flow_sched.h), runs[t]
 * how many runs thread t makes until all its flows' frames are out
 * (UINT64_MAX: no end; a flow with frames fixed is done after them, its
 * later turns send nothing). 0, or -errno with err.
 */
int xp_gen_flows_init(struct live_bpf *skel, const struct xp_engine_cfg *cfg, unsigned nthreads,
		      const unsigned *cpu_tid, unsigned ncpu_tid, struct xp_flow_sched *sched, uint64_t *runs,
		      char *err, size_t errlen);

/* Per flow, frames and bytes (without FCS) sent so far, all CPUs, into
 * pkts[0..n) and bytes[0..n) (zero where they cannot be read). */
void xp_gen_read_flows(struct live_bpf *skel, uint64_t *pkts, uint64_t *bytes, unsigned n);

#endif /* XP_ENGINE_LIVE_FLOWS_H */
