/*
 * The client's round-trip program (bpf/rtt.bpf.c, issue 10's round-trip
 * mode for hosts with different clocks): loaded for one stream test whose
 * server reflects its stamped frames (XP_SLOT_REFLECT), attached to the
 * client's interface through a bpf_link (the kernel detaches it when the
 * process dies), it times the frames coming back on the client's clock.
 * Its figures come out through the same readers as the server's one-way
 * ones (loader/meas_maps.c), in the same struct xp_lat_hist /
 * xp_stream_figs.
 */
#ifndef XP_RTT_PROG_H
#define XP_RTT_PROG_H

#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/measure.h"
#include "bpf/rtt.h"
#include "bpf/server.h"
#include "loader/xdp_attach.h"
#include "util/addr.h"

struct xp_lat_hist;
struct xp_stream_figs;
struct rtt_prog;
struct rtt_bpf;

/* The test as the client sees it: the server's test address and ports (where
 * the reflected frames come from), our address (where they go), and the
 * protocols (XP_PROTO_TCP / XP_PROTO_UDP). server and client of one family. */
struct rtt_prog_cfg {
	struct xp_addr server, client;
	uint16_t port_lo, port_hi;
	uint32_t protos;
};

/* Load the program for cfg (not attached yet). 0 or -errno with err set. */
int rtt_prog_open(const struct rtt_prog_cfg *cfg, struct rtt_prog **out, char *err, size_t errlen);
/* Attach it to ifindex (the interface the test sends on, where the
 * reflected frames come back) through a bpf_link; *mode_used "native" or
 * "skb". Once per program. 0 or -errno with err set. */
int rtt_prog_attach(struct rtt_prog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used, char *err,
		    size_t errlen);
/* Detach (if attached) and unload. NULL is fine. */
void rtt_prog_close(struct rtt_prog *rp);

/*
 * The measurement of the test's one slot, as server_prog_meas_start and the
 * readers of loader/server_prog.h do it for a server slot: start with the
 * t0 and ival the client put into its stamps and XP_MEAS_ONEWAY (the round
 * trip is on one clock, the client's: its own CLOCK_MONOTONIC, or
 * XP_MEAS_TAI if the stamps are CLOCK_TAI), before the test's first frame;
 * close intervals one grace period after they end; read interval bins and
 * streams. The bins' latency is the round trip. 0 (or a count) or -errno.
 */
int rtt_prog_meas_start(struct rtt_prog *rp, const struct xp_slot_meas *m);
int rtt_prog_meas_close(struct rtt_prog *rp, uint64_t upto);
int rtt_prog_read_ibin(struct rtt_prog *rp, uint64_t i, struct xp_lat_hist *h);
int rtt_prog_read_streams(struct rtt_prog *rp, struct xp_stream_figs *out, unsigned max);
int rtt_prog_read_meas_stats(struct rtt_prog *rp, struct xp_meas_stats *sum);
/* enum xp_rtt_stat frame counts, summed over CPUs. 0 or -errno. */
int rtt_prog_read_stats(struct rtt_prog *rp, uint64_t out[XP_RTT_NSTATS]);
/* The loaded skeleton, for tests that run it with BPF_PROG_RUN. */
struct rtt_bpf *rtt_prog_skel(struct rtt_prog *rp);

#endif
