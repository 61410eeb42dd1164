/*
 * An OTG port's location (otg.h): the xdpperf agent that is the port and,
 * optionally, the interface it sends on: "HOST[:CONTROL_PORT][;IFACE]".
 * HOST is an address or a name; an IPv6 address with a port is written in
 * brackets ("[2001:2::2]:5301"), a bare IPv6 address has no port.
 */
#ifndef XP_OTG_LOCATION_H
#define XP_OTG_LOCATION_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>

struct xp_otg_loc {
	char host[256];            /* without brackets */
	unsigned short port;       /* 0: none given (the controller's default) */
	char iface[IF_NAMESIZE];   /* "" = none given (the route's) */
};

/* Parse s into *l: 0, or -1 with a one-line reason in err (no prefix: the caller names the field). */
int xp_otg_loc_parse(const char *s, struct xp_otg_loc *l, char *err, size_t errlen);
/*
 * Is host this host's own (the controller then sends itself): "localhost",
 * a loopback address, or an address of an interface in this network
 * namespace (a socket can bind to it). Names other than localhost are not
 * resolved: false.
 */
bool xp_otg_host_is_local(const char *host);

#endif
