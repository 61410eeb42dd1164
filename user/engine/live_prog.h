/* The live engine's BPF program (bpf/live.bpf.c): its checks and its loading; see live_prog.c. */
#ifndef XP_GENERATOR_PROG_H
#define XP_GENERATOR_PROG_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct live_bpf;
struct xp_engine_cfg;
struct frame_layout;

/* The option that avoids live frames: --engine xsk, or --syn-engine xsk for SYNs. */
const char *xp_gen_way_out(bool syn);

/*
 * What rules live frames out for cfg before anything is loaded (frame too
 * large, hold tests): the live engine's probe, and xp_gen_load's first check.
 * 0, or -errno with *err naming the way out.
 */
int xp_gen_check(const struct xp_engine_cfg *cfg, char *err, size_t errlen);

/*
 * Build the template for cfg->tmpl, open the generator, set its read-only
 * configuration for cfg and nthreads sending threads, and load it. On
 * success *skel is loaded, tmpl (XP_GEN_MAX_LEN bytes) holds the template
 * and *lay its layout. On failure *err gets one line (naming --engine xsk
 * where that is the way out) and a negative errno is returned.
 */
int xp_gen_load(const struct xp_engine_cfg *cfg, unsigned nthreads,
		struct live_bpf **skel, __u8 *tmpl, struct frame_layout *lay,
		char *err, size_t errlen);

/*
 * The bytes every run is handed (data_in) for a load with layout lay: the
 * frame, one more for SYNs, mixed sizes and flows of several lengths (the
 * program trims every frame, see bpf/live.bpf.c and bpf/live_flows.h).
 */
__u32 xp_gen_in_len(const struct live_bpf *skel, const struct frame_layout *lay);

/*
 * Set the thread index each CPU's state carries (cpu_tid[cpu], for
 * ncpu_tid CPUs; others get 0) and zero the counters. Call before any run.
 */
int xp_gen_init_state(struct live_bpf *skel, const unsigned *cpu_tid, unsigned ncpu_tid);

/*
 * Keep the loaded program in the kernel's XDP dispatcher by attaching it,
 * idle, to the loopback of a private network namespace (see engine/live.c:
 * without it every BPF_PROG_RUN call with repeat > 1 sleeps 15-30 ms).
 * Close *link_fd, then *ns_fd, to undo. 0 or -errno with *err set.
 */
int xp_gen_hold(struct live_bpf *skel, int *link_fd, int *ns_fd, char *err, size_t errlen);
/* The same from a user namespace of a forked helper, for a process without CAP_SYS_ADMIN
 * (live_hold_userns.c): 0, or an errno. */
int xp_gen_hold_userns(int prog_fd, int *link_fd, int *ns_fd);

struct xp_mix;
/* Mixed sizes: the bytes (without FCS) of the frames sent so far, from
 * each CPU's count and the pattern; 0 if the counters cannot be read. */
__u64 xp_gen_sent_bytes(struct live_bpf *skel, const struct xp_mix *m);

/* Frames sent so far (the per-CPU counters summed). */
__u64 xp_gen_sent(struct live_bpf *skel);

/*
 * Set the start of interval 0 and the interval length (stamp ticks) the
 * program counts stamped frames by (xp_gen_load sets those of
 * cfg->frames.stamp): call before the first frame is sent, as the CPUs
 * cache their current interval's end.
 */
void xp_gen_set_meas(struct live_bpf *skel, __u64 t0, __u64 ival);

/* Set the stamps' tag key (bpf/lib/stamp.h; xp_gen_load sets that of
 * cfg->frames.stamp): call before the first frame is sent. */
void xp_gen_set_key(struct live_bpf *skel, const uint64_t key[2]);

/*
 * Tell the program that thread tid starts a new BPF_PROG_RUN call: its
 * first frame, and every XP_GEN_BATCH-th after it (the kernel's batches),
 * read the clock for the stamp (see XP_GEN_BATCH in bpf/live.h). Call
 * before every run; a run without it carries on the previous call's batches.
 */
void xp_gen_new_call(struct live_bpf *skel, unsigned tid);

/*
 * Stamped frames sent in interval i, summed over the CPUs (threads). 0;
 * -ENOENT when a thread's bins no longer hold i (XP_IBINS intervals later);
 * -EOPNOTSUPP when this load stamps nothing (SYN mode, ival 0, no room in
 * the frame). Ask only for an interval that has ended.
 */
int xp_gen_sent_in(struct live_bpf *skel, __u64 interval, __u64 *sent);

#endif
