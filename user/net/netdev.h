/* Network interface facts over rtnetlink (libmnl), plus ethtool for queues.
 * All calls work in the calling thread's current network namespace. */
#ifndef XP_NETDEV_H
#define XP_NETDEV_H

#include <stdbool.h>
#include <stdint.h>

#include "util/addr.h"

struct xp_netdev {
	int ifindex;
	char name[16];
	uint8_t mac[6];          /* all zero if the device has no 6-byte address */
	unsigned mtu;
	unsigned rx_queues, tx_queues; /* queues in use (ethtool channels, as in
					* /sys/class/net/X/queues); if the driver has
					* no ETHTOOL_GCHANNELS, the allocated counts
					* IFLA_NUM_RX_QUEUES/IFLA_NUM_TX_QUEUES */
	bool up;                 /* administratively up (IFF_UP) */
	bool carrier;            /* operationally up (IFF_RUNNING: carrier, peer up) */
	bool loopback;           /* IFF_LOOPBACK */
};

/* RTM_GETLINK by index or by name. 0, -ENODEV if missing, or -errno. */
int xp_netdev_by_index(int ifindex, struct xp_netdev *l);
int xp_netdev_by_name(const char *name, struct xp_netdev *l);

/* Local addresses of an interface (RTM_GETADDR), family AF_INET, AF_INET6 or
 * 0 for both, in kernel order (link-local IPv6 included, DAD-failed addresses
 * skipped). Stores up to max; returns how many were stored, or -errno
 * (-ENODEV if ifindex does not exist). */
int xp_netdev_addrs(int ifindex, int family, struct xp_addr *out, int max);

/* Which local interface holds address a (RTM_GETADDR): its ifindex,
 * -EADDRNOTAVAIL if none, or -errno. */
int xp_ifindex_of_addr(const struct xp_addr *a);

#endif
