/*
 * The --probe role: the kernel's lines, then those of --dev IF or, without
 * it, of every interface that is up (loopback aside), in ifindex order.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe/probe.h"

#define MAX_IFACES 64

/* Up and not loopback (SIOCGIFFLAGS). */
static bool worth_probing(int s, const char *name)
{
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(s, SIOCGIFFLAGS, &ifr))
		return false;
	return (ifr.ifr_flags & IFF_UP) && !(ifr.ifr_flags & IFF_LOOPBACK);
}

int xp_probe_run(const char *dev, int debug, bool json)
{
	struct xp_probe_kernel k;
	struct xp_probe_iface *ifs = calloc(MAX_IFACES, sizeof(*ifs));
	unsigned n = 0;
	char err[256];
	int rc = 0;

	if (!ifs) {
		fprintf(stderr, "xdpperf: out of memory\n");
		return 1;
	}
	xp_probe_kernel(&k);
	if (dev[0]) {
		if (xp_probe_iface(&k, dev, debug, &ifs[0], err, sizeof(err))) {
			fprintf(stderr, "xdpperf: %s\n", err);
			free(ifs);
			return 1;
		}
		n = 1;
	} else {
		struct if_nameindex *all = if_nameindex();
		int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		for (struct if_nameindex *i = all; all && s >= 0 && i->if_index && n < MAX_IFACES; i++) {
			if (!worth_probing(s, i->if_name))
				continue;
			/* One that vanished meanwhile is simply left out. */
			if (!xp_probe_iface(&k, i->if_name, debug, &ifs[n], err, sizeof(err)))
				n++;
		}
		if (s >= 0)
			close(s);
		if (all) {
			if_freenameindex(all);
		} else {
			fprintf(stderr, "xdpperf: cannot list the interfaces: %s\n", strerror(errno));
			rc = 1;
		}
	}
	if (json) {
		if (xp_probe_print_json(stdout, &k, ifs, n))
			rc = 1;
	} else {
		xp_probe_print_text(stdout, &k, ifs, n);
	}
	free(ifs);
	return rc;
}
