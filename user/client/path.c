/*
 * The client's path to the server: connect the control channel (or, for
 * --peer kernel against a plain TCP server, resolve it), learn both
 * addresses, the egress interface and, for engines that write their own
 * Ethernet headers, the next hop's MAC; check --bind against them.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "client/session.h"
#include "net/route.h"

/*
 * --bind: every source address must be this host's (else each connect fails
 * with EADDRNOTAVAIL, or the replies to raw SYNs go nowhere), and for engines
 * that send their own frames, on the interface they send on. Exit status or 0.
 */
static int check_bind(struct client *c)
{
	const struct xp_spec *sp = c->spec;
	unsigned missing = 0, elsewhere = 0;
	char first[INET6_ADDRSTRLEN] = "", last[INET6_ADDRSTRLEN] = "", other[INET6_ADDRSTRLEN] = "";
	int other_if = 0;

	for (unsigned i = 0; i < sp->nbind; i++) {
		if (sp->bind[i].family != c->server.family)
			return xp_client_fail(c, 2, "--bind addresses must be IPv%c like the server's",
				    c->server.family == AF_INET6 ? '6' : '4');
		int ifi = xp_ifindex_of_addr(&sp->bind[i]);
		if (ifi == -EADDRNOTAVAIL) {
			if (!missing++)
				xp_addr_str(&sp->bind[i], first, sizeof(first));
			xp_addr_str(&sp->bind[i], last, sizeof(last));
		} else if (ifi > 0 && c->ops->nexthop && ifi != c->link.ifindex) {
			if (!elsewhere++) {
				xp_addr_str(&sp->bind[i], other, sizeof(other));
				other_if = ifi;
			}
		}
	}
	if (missing)
		return xp_client_fail(c, 1, "--bind: %u of the %u addresses are not this host's (%s%s%s): add them (ip addr add "
			    "ADDR dev %s) or narrow the range", missing, sp->nbind, first, missing > 1 ? " .. " : "",
			    missing > 1 ? last : "", c->link.name);
	if (elsewhere) {
		struct xp_netdev l = { .name = "?" };
		xp_netdev_by_index(other_if, &l);
		return xp_client_fail(c, 1, "--bind: %s is on %s, not on %s where the %s engine sends: the replies would not come "
			    "back to it (%u such addresses)", other, l.name, c->link.name, c->ops->name, elsewhere);
	}
	return 0;
}

/*
 * Without a control connection: the server's address from the name, ours
 * the one the kernel would pick for it (the route's preferred source). 0, or
 * -errno with a one-line reason.
 */
static int no_server_addrs(struct client *c, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = c->spec->family ? c->spec->family : AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	if (getaddrinfo(c->spec->host, NULL, &hints, &res) || !res) {
		snprintf(err, errlen, "cannot resolve server '%s'", c->spec->host);
		return -EINVAL;
	}
	xp_addr_from_sockaddr(res->ai_addr, &c->server, NULL);
	freeaddrinfo(res);
	struct xp_route rt;
	int r = xp_route_get(&c->server, &rt);
	if (r || !rt.prefsrc.family) {
		snprintf(err, errlen, "no route with a source address to %s: %s", c->spec->host,
			 r ? strerror(-r) : "no preferred source");
		return r ? r : -EADDRNOTAVAIL;
	}
	c->local = rt.prefsrc;
	return 0;
}

/* Connect, learn addresses, and for frame engines the interface and next hop. Exit status or 0. */
int xp_client_setup_path(struct client *c)
{
	const struct xp_spec *sp = c->spec;
	char err[512];

	int fd = xp_ctrl_connect(sp->host, sp->control_port, sp->family, 3000, err, sizeof(err));
	if (fd == -ECONNREFUSED && sp->peer_kernel && c->ops->figures == XP_FIGS_HANDSHAKES) {
		/* --peer kernel against any TCP server: nothing listens for control, so run on our own counters. */
		if (no_server_addrs(c, err, sizeof(err)))
			return xp_client_fail(c, 1, "%s", err);
		c->no_server = true;
	} else if (fd < 0) {
		/* Right after a connection test, a stateful device's full table is the likely cause. */
		double age = fd == -ETIMEDOUT ? xp_conn_test_age(sp->host) : -1;
		if (age >= 0 && age < XP_CONN_TEST_RECENT)
			return xp_client_fail(c, 1, "%s; a connection test against it ended %.0f s ago: the device in the path may be "
				    "refusing new connections (a full connection table drains in up to 120 s)", err, age);
		return xp_client_fail(c, 1, "%s", err);
	}
	if (!c->no_server) {
		xp_ctrl_init(&c->ctrl, fd);
		/* The server's replies: a test with flows' carry every flow's figures (channel.h). */
		xp_ctrl_set_max_msg(&c->ctrl, XP_CTRL_MAX_REPLY);
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getpeername(fd, (struct sockaddr *)&ss, &sl);
		xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->server, NULL);
		sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->local, NULL);
	}

	struct xp_route rt;
	int r;
	if (!c->ops->nexthop || sp->traffic[0].dst_mac_set) {
		/* The kernel routes (sockets), or --dst-mac says: we only want the interface. */
		r = xp_route_get(&c->server, &rt);
		memcpy(c->nh_mac, sp->traffic[0].dst_mac, 6);
		if (r)
			snprintf(err, sizeof(err), "no route to %.200s: %s", sp->host, strerror(-r));
	} else {
		r = xp_nexthop_mac(&c->server, 2000, &rt, c->nh_mac, err, sizeof(err));
	}
	if (r)
		return xp_client_fail(c, 1, "%s", err);
	if (sp->dev[0]) {
		if (xp_netdev_by_name(sp->dev, &c->link))
			return xp_client_fail(c, 1, "interface %s does not exist", sp->dev);
		if (c->link.ifindex != rt.oif) {
			struct xp_netdev via = { .name = "?" };
			xp_netdev_by_index(rt.oif, &via);
			fprintf(stderr, "xdpperf: warning: the route to %s leaves by %s, not %s: %s\n", sp->host, via.name,
				sp->dev, c->ops->nexthop ? "sending on --dev anyway" : "connections are bound to --dev");
		}
	} else if (xp_netdev_by_index(rt.oif, &c->link)) {
		return xp_client_fail(c, 1, "cannot read interface %d", rt.oif);
	}
	if (!c->link.up)
		return xp_client_fail(c, 1, "interface %s is down", c->link.name);
	static const uint8_t no_mac[6];
	if (c->ops->nexthop && !memcmp(c->link.mac, no_mac, 6))
		return xp_client_fail(c, 1, "%s has no Ethernet address: the %s engine sends Ethernet frames (choose an Ethernet "
			    "interface with --dev, or the route's)", c->link.name, c->ops->name);
	return check_bind(c);
}
