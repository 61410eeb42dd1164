// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The C tests' private veth pair and interface counts; see veth.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "net/netdev.h"
#include "tests/lib/netns_helper.h"
#include "tests/lib/veth.h"

int xt_veth_private(const char *who, bool ipv6, const char *dev, const char *peer, struct xt_veth *v)
{
	struct xp_netdev d;

	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "%s: unshare(CLONE_NEWNET): %s\n", who, strerror(errno));
		return -1;
	}
	if ((ipv6 ? xp_netns("add", "-") : xp_netns("add", "--no-ipv6", "-")) || xp_netns("pair", "-", dev, "-", peer))
		return -1;
	v->ifi = if_nametoindex(dev);
	v->peer_ifi = if_nametoindex(peer);
	if (!v->ifi || !v->peer_ifi || xp_netdev_by_index((int)v->ifi, &d))
		return -1;
	memcpy(v->mac, d.mac, 6);
	if (xp_netdev_by_index((int)v->peer_ifi, &d))
		return -1;
	memcpy(v->peer_mac, d.mac, 6);
	return 0;
}

uint64_t xt_tx_packets(const char *name)
{
	FILE *f = fopen("/proc/net/dev", "r");
	char line[512];
	uint64_t v[16] = { 0 };

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		char *n = line;
		if (!c)
			continue;
		*c = 0;
		while (*n == ' ')
			n++;
		if (strcmp(n, name))
			continue;
		/* rx: bytes packets errs drop fifo frame compressed multicast, tx: bytes packets ... */
		assert_int_equal(sscanf(c + 1, "%lu %lu %lu %lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3],
					&v[4], &v[5], &v[6], &v[7], &v[8], &v[9]), 10);
	}
	fclose(f);
	return v[9];
}
