/*
 * One ICMP echo, to tell the causes of a failed control connection apart: a
 * host that answers ping but not TCP is behind something that drops new
 * connections (a firewall, or a stateful device whose table is full); one
 * that answers neither is down or unreachable. Raw ICMP sockets: needs root
 * or CAP_NET_RAW, which xdpperf needs anyway.
 */
#ifndef XP_PING_H
#define XP_PING_H

#include "util/addr.h"

/* 1 if dst answered an echo request within timeout_ms, 0 if not, -errno if no probe could be sent. */
int xp_ping(const struct xp_addr *dst, int timeout_ms);

#endif
