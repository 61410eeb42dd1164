/*
 * Running a reading inside another network namespace (--device-netns: the
 * device's conntrack table, its drops) from the calling thread, then coming
 * back: setns(2) on this thread only, so nothing else in the process moves.
 */
#ifndef XP_NET_IN_NETNS_H
#define XP_NET_IN_NETNS_H

#include <stddef.h>

/* fn(arg, err, errlen) inside the namespace named netns (under /var/run/netns): its result (0 or -errno,
 * err written by fn), or -errno with err written when the namespace cannot be entered. Exits the process
 * if it cannot come back (every later call would read the wrong namespace). */
int xp_in_netns(const char *netns, int (*fn)(void *arg, char *err, size_t errlen), void *arg, char *err,
		size_t errlen);

#endif
