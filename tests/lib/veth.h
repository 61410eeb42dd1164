/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A veth pair of the C tests' own (tests/root/test_rtt_veth.c,
 * test_server_hwts.c, test_server_loader.c, test_server_tc.c): made in a
 * private network namespace, so no name can collide with another run's and
 * nothing is left to remove, and the kernel's own count of what went out of
 * an interface, which the tests hold the programs' counters against.
 */
#ifndef XP_TESTS_VETH_H
#define XP_TESTS_VETH_H

#include <stdbool.h>
#include <stdint.h>

struct xt_veth {
	unsigned ifi, peer_ifi;       /* dev's and peer's interface index */
	uint8_t mac[6], peer_mac[6];  /* and their MACs */
};

/* Move this process into a new network namespace (unshare(CLONE_NEWNET): it
 * goes with the process), set it up with tests/lib/netns.sh (`add -`, with
 * --no-ipv6 unless ipv6) and make the veth pair dev <-> peer there, up;
 * their indexes and MACs into *v (netlink: /sys/class/net would show the
 * namespace sysfs was mounted in). Addresses are the caller's (xp_netns
 * "addr"). 0, or -1 with the reason on stderr, prefixed with who. */
int xt_veth_private(const char *who, bool ipv6, const char *dev, const char *peer, struct xt_veth *v);

/* The kernel's count of the frames interface name (in this namespace) sent:
 * /proc/net/dev's tx packets. Asserted (cmocka). */
uint64_t xt_tx_packets(const char *name);

#endif
