#include "addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

int xp_addr_parse(const char *s, struct xp_addr *a)
{
	memset(a, 0, sizeof(*a));
	if (inet_pton(AF_INET, s, &a->v4) == 1) {
		a->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &a->v6) == 1) {
		a->family = AF_INET6;
		return 0;
	}
	return -1;
}

const char *xp_addr_str(const struct xp_addr *a, char *buf, size_t len)
{
	if (!a->family || !inet_ntop(a->family, &a->v6, buf, len))
		snprintf(buf, len, "-");
	return buf;
}

bool xp_addr_eq(const struct xp_addr *a, const struct xp_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == AF_INET)
		return a->v4.s_addr == b->v4.s_addr;
	return !memcmp(&a->v6, &b->v6, sizeof(a->v6));
}

size_t xp_addr_to_sockaddr(const struct xp_addr *a, unsigned short port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		sin->sin_addr = a->v4;
		return sizeof(*sin);
	}
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;
	sin6->sin6_family = AF_INET6;
	sin6->sin6_port = htons(port);
	sin6->sin6_addr = a->v6;
	return sizeof(*sin6);
}

int xp_addr_from_sockaddr(const struct sockaddr *sa, struct xp_addr *a, unsigned short *port)
{
	memset(a, 0, sizeof(*a));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = (const struct sockaddr_in *)sa;
		a->family = AF_INET;
		a->v4 = sin->sin_addr;
		if (port)
			*port = ntohs(sin->sin_port);
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *)sa;
		/* A v4-mapped peer on a dual-stack socket is reported as IPv4. */
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			a->family = AF_INET;
			memcpy(&a->v4, &sin6->sin6_addr.s6_addr[12], 4);
		} else {
			a->family = AF_INET6;
			a->v6 = sin6->sin6_addr;
		}
		if (port)
			*port = ntohs(sin6->sin6_port);
		return 0;
	}
	return -1;
}
