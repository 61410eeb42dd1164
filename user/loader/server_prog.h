/*
 * The server's receive-side XDP program (bpf/server.bpf.c): load it once,
 * attach it to the interfaces that face clients (one bpf_link per interface,
 * reference counted, so the kernel detaches it if the process dies), and hand
 * out per-test slots that own a destination port range and its counters, on
 * one interface and for one client's addresses.
 */
#ifndef XP_SERVER_PROG_H
#define XP_SERVER_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/server.h"
#include "bpf/measure.h"

#include "loader/xdp_attach.h"
#include "util/addr.h"

struct server_prog;

/*
 * reply_redirect: answer connection-test frames by redirecting them to the
 * interface they came in on instead of XDP_TX. On veth, XDP_TX into a peer
 * without an XDP program stalls after 256 frames; a redirect wakes the peer.
 */
int server_prog_open(struct server_prog **out, uint16_t ctrl_port, bool reply_redirect, char *err, size_t errlen);
void server_prog_close(struct server_prog *rp);

/*
 * Attach to ifindex unless already attached (then just take a reference).
 * *mode_used is "native" or "skb". The interface's addresses go into the
 * program's local_addr map (see server_prog_slot_alloc). 0 or -errno with
 * err set.
 */
int server_prog_attach(struct server_prog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used,
		  char *err, size_t errlen);
/* Drop a reference; the last one detaches. */
void server_prog_detach(struct server_prog *rp, int ifindex);
/*
 * The same for the TC ingress program (loader/server_tc.h), which counts the
 * slots claimed with XP_SLOT_TC: socket tests, where XDP on the interface
 * would cost the stream its GSO packets. *how is "tcx" or "tc".
 */
int server_prog_attach_tc(struct server_prog *rp, int ifindex, const char **how, char *err, size_t errlen);
void server_prog_detach_tc(struct server_prog *rp, int ifindex);
struct server_tc_bpf *server_prog_tc_skel(struct server_prog *rp);

/*
 * Claim a slot for dport range [lo, hi]; flags XP_SLOT_*, protos XP_PROTO_*.
 * The slot is the test's on ifindex only (where the program must be
 * attached: the TC program for XP_SLOT_TC, else the XDP program), and only for frames from client (the control connection's
 * peer) or one of its nbind bind addresses (--bind, at most
 * XP_SLOT_MAX_PEERS), and only for frames addressed to this host (the
 * interface's MAC and one of its addresses, read again at each call; on a
 * loopback device, every frame): the program passes every other frame
 * uncounted, a forwarded one whatever its source.
 * Each address must be one host's unicast address, not ours (a broadcast,
 * multicast or local address is refused with an error naming it). Also
 * refreshes the program's view of ifindex's own addresses, which a slot's
 * frames must be sent to. slot or -errno with err set.
 */
int server_prog_slot_alloc(struct server_prog *rp, uint16_t lo, uint16_t hi, uint32_t protos, uint32_t flags,
			   uint32_t close_mode, int ifindex, const struct xp_addr *client,
			   const struct xp_addr *bind, unsigned nbind, char *err, size_t errlen);
void server_prog_slot_free(struct server_prog *rp, int slot);
/* Sum of the slot's per-CPU counters. 0 or -errno. */
int server_prog_read(struct server_prog *rp, int slot, struct xp_counters *sum);
/* The loaded skeleton (struct server_bpf of bpf/server.skel.h), for tests
 * that look into the program's maps and run it with BPF_PROG_RUN. */
struct server_bpf *server_prog_skel(struct server_prog *rp);
/*
 * The measurement core (bpf/measure.h), implemented in loader/server_meas.c.
 * meas_start: zero the slot's streams and bins and set its t0/ival/flags,
 * before the slot's ports are mapped (call between slot_alloc's config and
 * the first frame; ival 0 = no stamps). close: intervals below upto are
 * closed (later frames of them count as late). read_ibin: interval i summed
 * over CPUs (adds into *h, which the caller initialised); -ENOENT when the
 * ring no longer holds i. read_streams: the slot's streams that have seen a
 * frame, at most max; their count or -errno.
 */
struct xp_lat_hist;
struct xp_stream_figs;
int server_prog_meas_start(struct server_prog *rp, int slot, const struct xp_slot_meas *m);
/* A test with flows (bpf/measure.h, loader/meas_maps.h's
 * xp_meas_maps_start_flows): stream_entry[st] = stream st's entry in
 * flow_acct (0..XP_FLOW_ENTRIES-1) + 1, 0 none. read_flow: an entry summed
 * over CPUs. */
int server_prog_meas_start_flows(struct server_prog *rp, int slot, const struct xp_slot_meas *m,
				 const __u32 *stream_entry);
int server_prog_read_flow(struct server_prog *rp, unsigned entry, struct xp_flow_acct *sum);
/*
 * Frames without stamps (bpf/measure.h's struct xp_flow_key): the slot's
 * key fields (XP_KEY_ON | XP_KEY_* fields) and its n keys, keys[i] counting
 * into flow_acct entry entries[i] (zeroed first), after those of an earlier
 * test are gone; the mask last, so no frame looks a key up before all are
 * in. n 0: key counting off. keys_clear: mask 0 and the slot's keys out
 * (every end of the test). 0 or -errno (-EEXIST: a key given twice).
 */
int server_prog_flow_keys(struct server_prog *rp, int slot, __u32 mask, const struct xp_flow_key *keys,
			  const __u32 *entries, unsigned n);
int server_prog_flow_keys_clear(struct server_prog *rp, int slot);
int server_prog_meas_close(struct server_prog *rp, int slot, uint64_t upto);
int server_prog_read_ibin(struct server_prog *rp, int slot, uint64_t i, struct xp_lat_hist *h);
int server_prog_read_streams(struct server_prog *rp, int slot, struct xp_stream_figs *out, unsigned max);
/* The slot's stamped / unstamped / NIC-timed frame counts (struct
 * xp_meas_stats of bpf/server.h), summed over CPUs; zeroed by meas_start.
 * 0 or -errno. */
int server_prog_read_meas_stats(struct server_prog *rp, int slot, struct xp_meas_stats *sum);
/*
 * NIC receive timestamps (XP_MEAS_HWTS, issue 10 item 5). on: interfaces
 * attached from now on (their first reference) whose driver implements
 * bpf_xdp_metadata_rx_timestamp get the program's device-bound variant
 * (bpf/server_hwts.bpf.c, the same maps), which times a frame of a slot
 * with XP_MEAS_HWTS by the NIC when the driver gives a time for it; else,
 * or where that variant cannot be loaded or attached, the main program and
 * the kernel's clock. Off by default. hwts_on: whether ifindex runs the
 * variant now; if not, *why (if why is not NULL) says why, in words for
 * the report. Per frame, meas_stats.hw_timed says which clock timed it.
 */
void server_prog_set_hwts(struct server_prog *rp, bool on);
bool server_prog_hwts_on(struct server_prog *rp, int ifindex, const char **why);
/* Global stats (enum xp_global_stat), summed over CPUs. */
int server_prog_read_global(struct server_prog *rp, uint64_t out[XP_G_NSTATS]);

#endif
