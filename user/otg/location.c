/* An OTG port's location, "HOST[:CONTROL_PORT][;IFACE]" (location.h). */
#include "otg/location.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int bad(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -1;
}

static int parse_port(const char *p, unsigned short *out, char *err, size_t errlen)
{
	char *end;
	if (!isdigit((unsigned char)*p))
		return bad(err, errlen, "the control port after ':' is not a number (HOST[:CONTROL_PORT][;IFACE])");
	errno = 0;
	unsigned long v = strtoul(p, &end, 10);
	if (*end || errno || v < 1 || v > 65535)
		return bad(err, errlen, "the control port is not 1..65535 (HOST[:CONTROL_PORT][;IFACE])");
	*out = (unsigned short)v;
	return 0;
}

int xp_otg_loc_parse(const char *s, struct xp_otg_loc *l, char *err, size_t errlen)
{
	char buf[320];
	memset(l, 0, sizeof(*l));
	if (!s || !*s)
		return bad(err, errlen, "empty: give the agent as HOST[:CONTROL_PORT][;IFACE]");
	if (strlen(s) >= sizeof(buf))
		return bad(err, errlen, "longer than 300 bytes");
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return bad(err, errlen, "has a space or control character (HOST[:CONTROL_PORT][;IFACE])");
	snprintf(buf, sizeof(buf), "%s", s);
	char *semi = strchr(buf, ';');
	if (semi) {
		*semi = '\0';
		const char *ifc = semi + 1;
		if (!*ifc)
			return bad(err, errlen, "nothing after ';' (the interface)");
		if (strlen(ifc) >= IF_NAMESIZE)
			return bad(err, errlen, "the interface name is longer than 15 bytes");
		if (strchr(ifc, ';') || strchr(ifc, '/') || strchr(ifc, ':'))
			return bad(err, errlen, "the interface name has ';', '/' or ':'");
		snprintf(l->iface, sizeof(l->iface), "%s", ifc);
	}
	char *host = buf, *port = NULL;
	if (buf[0] == '[') {
		char *close = strchr(buf, ']');
		if (!close)
			return bad(err, errlen, "'[' without ']' (write an IPv6 address with a port as [ADDR]:PORT)");
		*close = '\0';
		host = buf + 1;
		if (close[1] == ':')
			port = close + 2;
		else if (close[1])
			return bad(err, errlen, "only ':CONTROL_PORT' may follow ']'");
		struct in6_addr a6;
		if (inet_pton(AF_INET6, host, &a6) != 1)
			return bad(err, errlen, "not an IPv6 address inside [ ]");
	} else {
		char *colon = strchr(buf, ':');
		/* Two colons or more: a bare IPv6 address (no port: it would be ambiguous). */
		if (colon && !strchr(colon + 1, ':')) {
			*colon = '\0';
			port = colon + 1;
		} else if (colon) {
			struct in6_addr a6;
			if (inet_pton(AF_INET6, host, &a6) != 1)
				return bad(err, errlen, "not an IPv6 address (write one with a port as [ADDR]:PORT)");
		}
	}
	if (!*host)
		return bad(err, errlen, "no host before the port or interface (HOST[:CONTROL_PORT][;IFACE])");
	if (strlen(host) >= sizeof(l->host))
		return bad(err, errlen, "the host is longer than 255 bytes");
	if (port && parse_port(port, &l->port, err, errlen))
		return -1;
	snprintf(l->host, sizeof(l->host), "%s", host);
	return 0;
}

bool xp_otg_host_is_local(const char *host)
{
	struct sockaddr_storage ss;
	socklen_t len;
	memset(&ss, 0, sizeof(ss));
	if (!strcmp(host, "localhost"))
		return true;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		len = sizeof(*s4);
		if ((ntohl(s4->sin_addr.s_addr) >> 24) == 127)
			return true;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		len = sizeof(*s6);
		if (IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return true;
	} else {
		return false;
	}
	/* An address of this namespace's interfaces is one a socket can bind to (no netlink dump needed). */
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	bool local = bind(fd, (struct sockaddr *)&ss, len) == 0;
	close(fd);
	return local;
}
