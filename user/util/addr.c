#include "util/addr.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
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

bool xp_addr_is_unicast(const struct xp_addr *a)
{
	if (a->family == AF_INET) {
		uint32_t top = ntohl(a->v4.s_addr) >> 24;
		return top != 0 && top != 127 && top < 224;
	}
	if (a->family != AF_INET6)
		return false;
	const struct in6_addr *v6 = &a->v6;
	return !IN6_IS_ADDR_UNSPECIFIED(v6) && !IN6_IS_ADDR_LOOPBACK(v6) && !IN6_IS_ADDR_MULTICAST(v6) &&
	       !IN6_IS_ADDR_V4MAPPED(v6);
}

/* Address arithmetic on the last 64 bits is plenty for a range of a few hundred. */
static uint64_t low64(const struct xp_addr *a)
{
	if (a->family == AF_INET)
		return ntohl(a->v4.s_addr);
	uint64_t v = 0;
	for (int i = 8; i < 16; i++)
		v = v << 8 | a->v6.s6_addr[i];
	return v;
}

static void set_low64(struct xp_addr *a, uint64_t v)
{
	if (a->family == AF_INET) {
		a->v4.s_addr = htonl((uint32_t)v);
		return;
	}
	for (int i = 15; i >= 8; i--, v >>= 8)
		a->v6.s6_addr[i] = (uint8_t)v;
}

int xp_parse_addr_range(const char *s, struct xp_addr *out, unsigned max, char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN * 2 + 2];
	struct xp_addr lo, hi;
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "address range '%.40s...' is too long", s);
		return -1;
	}
	strcpy(buf, s);
	char *dash = strchr(buf, '-');
	if (dash)
		*dash = '\0';
	if (xp_addr_parse(buf, &lo) || (dash && xp_addr_parse(dash + 1, &hi))) {
		snprintf(err, errlen, "'%s' is not an address or a range like 198.18.1.10-198.18.1.25", s);
		return -1;
	}
	if (!dash)
		hi = lo;
	if (lo.family != hi.family || (lo.family == AF_INET6 && memcmp(&lo.v6, &hi.v6, 8))) {
		snprintf(err, errlen, "address range '%s' mixes families or spans more than a /64", s);
		return -1;
	}
	uint64_t a = low64(&lo), b = low64(&hi);
	if (a > b) {
		snprintf(err, errlen, "address range '%s' is reversed", s);
		return -1;
	}
	if (b - a + 1 > max) {
		snprintf(err, errlen, "address range '%s' has more than %u addresses", s, max);
		return -1;
	}
	for (uint64_t v = a; v <= b; v++) {
		out[v - a] = lo;
		set_low64(&out[v - a], v);
	}
	return (int)(b - a + 1);
}

/* Keep the first plen bits of an address of len bytes, clear the rest. */
static void mask_bits(uint8_t *b, unsigned len, unsigned plen)
{
	for (unsigned i = 0; i < len; i++) {
		unsigned keep = plen >= 8 * (i + 1) ? 8 : plen > 8 * i ? plen - 8 * i : 0;
		b[i] &= (uint8_t)(0xff00u >> keep);
	}
}

int xp_parse_cidr(const char *s, struct xp_addr *net, unsigned *plen, char *err, size_t errlen)
{
	char buf[INET6_ADDRSTRLEN + 8];
	if (strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "'%.60s' is not a network (ADDR/LEN)", s);
		return -1;
	}
	strcpy(buf, s);
	char *slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	struct xp_addr a;
	if (xp_addr_parse(buf, &a)) {
		snprintf(err, errlen, "'%s' is not a network (ADDR/LEN, e.g. 198.18.0.0/15 or 2001:2::/48)", s);
		return -1;
	}
	unsigned max = a.family == AF_INET ? 32 : 128, len = max;
	if (slash) {
		const char *p = slash + 1;
		char *end;
		if (*p < '0' || *p > '9' || (p[0] == '0' && p[1])) {
			snprintf(err, errlen, "'%s': prefix length must be a number 0..%u", s, max);
			return -1;
		}
		unsigned long l = strtoul(p, &end, 10);
		if (*end || l > max) {
			snprintf(err, errlen, "'%s': prefix length must be a number 0..%u", s, max);
			return -1;
		}
		len = (unsigned)l;
	}
	mask_bits(a.family == AF_INET ? (uint8_t *)&a.v4 : a.v6.s6_addr, max / 8, len);
	*net = a;
	*plen = len;
	return 0;
}

bool xp_cidr_contains(const struct xp_addr *net, unsigned plen, const struct xp_addr *a)
{
	if (net->family != a->family)
		return false;
	struct xp_addr m = *a;
	unsigned bytes = a->family == AF_INET ? 4 : 16;
	mask_bits(a->family == AF_INET ? (uint8_t *)&m.v4 : m.v6.s6_addr, bytes, plen);
	return !memcmp(a->family == AF_INET ? (const void *)&m.v4 : (const void *)&m.v6,
		       net->family == AF_INET ? (const void *)&net->v4 : (const void *)&net->v6, bytes);
}
