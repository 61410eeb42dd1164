/*
 * The state of a device under test that lives in a network namespace on this
 * machine (the lab's router): its conntrack table and its interfaces' drops,
 * read from the kernel (sysctl, /proc/net/stat/nf_conntrack, rtnetlink
 * IFLA_STATS64), never from a tool's output. Also one interface's receive
 * drops in the caller's own namespace.
 */
#ifndef XP_DEVSTATE_H
#define XP_DEVSTATE_H

#include <stddef.h>
#include <stdint.h>

struct xp_devstate {
	uint64_t ct_count;  /* nf_conntrack_count: entries now */
	uint64_t ct_max;    /* nf_conntrack_max */
	uint64_t ct_drops;  /* summed over CPUs: drop + early_drop + insert_failed (cumulative) */
	uint64_t if_drops;  /* summed over interfaces: rx_dropped + tx_dropped + rx_missed_errors (cumulative) */
};

/*
 * Read the state of namespace netns (a name under /var/run/netns). Only the
 * calling thread enters it, and it returns to its own namespace before this
 * returns. 0, or -errno with a one-line reason in err.
 */
int xp_devstate_read(const char *netns, struct xp_devstate *s, char *err, size_t errlen);

/* rx_dropped + rx_missed_errors of interface ifindex in the caller's namespace. 0 or -errno. */
int xp_link_rx_drops(int ifindex, uint64_t *drops);

#endif
