/*
 * The server's receive-side XDP program (bpf/rx_count.bpf.c): load it once,
 * attach it to the interfaces that face clients (one bpf_link per interface,
 * reference counted, so the kernel detaches it if the process dies), and hand
 * out per-test slots that own a destination port range and its counters.
 */
#ifndef XP_RXPROG_H
#define XP_RXPROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "xdpperf.h"

#include "xdplink.h"

struct rxprog;

/*
 * reply_redirect: answer connection-test frames by redirecting them to the
 * interface they came in on instead of XDP_TX. On veth, XDP_TX into a peer
 * without an XDP program stalls after 256 frames; a redirect wakes the peer.
 */
int rxprog_open(struct rxprog **out, uint16_t ctrl_port, bool reply_redirect, char *err, size_t errlen);
void rxprog_close(struct rxprog *rp);

/*
 * Attach to ifindex unless already attached (then just take a reference).
 * *mode_used is "native" or "skb". 0 or -errno with err set.
 */
int rxprog_attach(struct rxprog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used,
		  char *err, size_t errlen);
/* Drop a reference; the last one detaches. */
void rxprog_detach(struct rxprog *rp, int ifindex);

/* Claim a slot for dport range [lo, hi]; flags XP_SLOT_*, protos XP_PROTO_*. slot or -errno. */
int rxprog_slot_alloc(struct rxprog *rp, uint16_t lo, uint16_t hi, uint32_t protos, uint32_t flags,
		      uint32_t close_mode, char *err, size_t errlen);
void rxprog_slot_free(struct rxprog *rp, int slot);
/* Sum of the slot's per-CPU counters. 0 or -errno. */
int rxprog_read(struct rxprog *rp, int slot, struct xp_counters *sum);
/* Global stats (enum xp_global_stat), summed over CPUs. */
int rxprog_read_global(struct rxprog *rp, uint64_t out[XP_G_NSTATS]);

#endif
