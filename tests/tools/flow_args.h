/*
 * What the flow tools (flowlab.c, flowlive.c) share: a FLOW argument's
 * tags and DSCP, a flow's headers from the command line's addresses, the
 * sending device's own MAC, and the stamps' clock. Both take flows the same
 * way, so a test can hand the same FLOW words to either.
 */
#ifndef XP_TOOLS_FLOW_ARGS_H
#define XP_TOOLS_FLOW_ARGS_H

#include <stdint.h>

#include "frame/flow_hdr.h"

/* A FLOW argument into h's tags and DSCP: u[/DSCP] (untagged), q:VID[/DSCP] (one 802.1Q tag),
 * ad:SVID:CVID[/DSCP] (an 802.1ad S-tag outside an 802.1Q C-tag). 0 or -1. */
int flow_arg_parse(const char *s, struct xp_flow_hdr *h);
/* h's MACs (dmac, ifname's own), addresses (src, dst: IPv4 or IPv6) and FLOW's tags and DSCP; the ports and
 * protocol are the caller's. 0; -1 for a bad argument (usage); -2 with errno when ifname's MAC cannot be read. */
int flow_arg_hdr(struct xp_flow_hdr *h, const char *ifname, const uint8_t dmac[6], const char *src, const char *dst,
		 const char *flow);
/* Now on the stamps' clock (CLOCK_MONOTONIC in XP_STAMP_TICK_NS ticks): a stamp's time, a measurement's t0. */
uint64_t flow_arg_now_ticks(void);

#endif
