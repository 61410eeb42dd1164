/* Route, neighbour and source-address lookups over rtnetlink (libmnl).
 *
 * Every call opens one short-lived NETLINK_ROUTE socket in the calling
 * thread's current network namespace, checks sequence numbers and
 * NLMSG_ERROR, and bounds every wait. These are setup-time calls. */
#ifndef XP_ROUTE_H
#define XP_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "util/addr.h"

struct xp_route {
	int oif;                /* output interface index */
	struct xp_addr gateway; /* family 0 when the destination is on-link */
	struct xp_addr prefsrc; /* preferred source address, family 0 if none */
};

/* RTM_GETROUTE for dst (like `ip route get`). 0 or -errno (e.g. -ENETUNREACH
 * when there is no route; -EHOSTUNREACH/-EACCES/-EINVAL for unreachable,
 * prohibit and blackhole routes). A local destination gives oif = lo.
 * IPv6 link-local destinations are ambiguous here (struct xp_addr carries no
 * scope id): the kernel picks the device. */
int xp_route_get(const struct xp_addr *dst, struct xp_route *rt);

/* The kernel's route type for dst (RTN_UNICAST, RTN_LOCAL, RTN_BROADCAST,
 * RTN_MULTICAST, ... of <linux/rtnetlink.h>): whether dst is one remote
 * host, ourselves or many. 0 with *type set, or -errno (-ENETUNREACH with no
 * route at all). Unlike xp_route_get, unreachable, prohibit and blackhole
 * routes are no error here: their type says what they are. */
int xp_route_type(const struct xp_addr *dst, unsigned char *type);

/* RTM_GETNEIGH for addr on ifindex: fills mac if the entry is usable
 * (REACHABLE/STALE/DELAY/PROBE/PERMANENT/NOARP); -ENOENT if absent or
 * INCOMPLETE/FAILED/NONE; -EOPNOTSUPP if the entry is usable but carries no
 * 6-byte link-layer address (e.g. a NOARP entry on a non-Ethernet device). */
int xp_neigh_get(int ifindex, const struct xp_addr *addr, uint8_t mac[6]);

/* Next-hop MAC for dst: route lookup, then the neighbour of the gateway (or of
 * dst when on-link). When not resolved, makes the kernel resolve it (see
 * xp_neigh_kick, falling back to xp_neigh_kick_udp) and polls the neighbour
 * table again for up to timeout_ms (kicking again about once a second while
 * the entry is absent or FAILED). Also returns the route in rt (may be NULL).
 * 0 or -errno: the route lookup's error if there is no usable route,
 * -EHOSTUNREACH if the next hop is not resolved in time or dst is a local
 * address, -EOPNOTSUPP if the device has no Ethernet addresses. On error a
 * one-line reason is written to err (may be NULL). */
int xp_nexthop_mac(const struct xp_addr *dst, int timeout_ms, struct xp_route *rt, uint8_t mac[6],
		   char *err, size_t errlen);

/* The local source address the kernel would use for dst (the route's prefsrc
 * or, if absent, via connect() of a UDP socket + getsockname). 0 or -errno. */
int xp_source_addr(const struct xp_addr *dst, struct xp_addr *src);

/* Lower-level resolution triggers used by xp_nexthop_mac; both return at once
 * (0 or -errno) and the caller polls xp_neigh_get.
 * xp_neigh_kick: RTM_NEWNEIGH with NTF_USE (creates the entry if needed and
 * starts ARP/ND, like a packet waiting for it would). Needs CAP_NET_ADMIN.
 * xp_neigh_kick_udp: sends one 1-byte UDP datagram to addr's discard port 9
 * from a socket bound to ifindex. */
int xp_neigh_kick(int ifindex, const struct xp_addr *addr);
int xp_neigh_kick_udp(int ifindex, const struct xp_addr *addr);

/* Shared plumbing for netlink.c and netdev.c (not for general use).
 * Sends req (its nlmsg_seq and nlmsg_pid are filled in here) on a fresh
 * NETLINK_ROUTE socket and runs cb (a libmnl mnl_cb_t) on every reply until
 * the ACK or NLMSG_DONE. Plain requests should set NLM_F_ACK so the exchange
 * ends with the ACK. 0 or -errno (the kernel's NLMSG_ERROR code, or
 * -ETIMEDOUT after a bounded wait). */
struct nlmsghdr;
typedef int (*xp_nl_cb)(const struct nlmsghdr *nlh, void *data);
int xp_nl_talk(struct nlmsghdr *req, xp_nl_cb cb, void *data);

#endif
