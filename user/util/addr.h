/* An IPv4 or IPv6 address, and helpers to parse and print it. */
#ifndef XP_ADDR_H
#define XP_ADDR_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

struct xp_addr {
	int family; /* AF_INET, AF_INET6, or 0 for none */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
};

/* Parse a numeric IPv4 or IPv6 address (no names). Returns 0 or -1. */
int xp_addr_parse(const char *s, struct xp_addr *a);
/* Print into buf (INET6_ADDRSTRLEN is enough). Returns buf. */
const char *xp_addr_str(const struct xp_addr *a, char *buf, size_t len);
bool xp_addr_eq(const struct xp_addr *a, const struct xp_addr *b);
/* Convert to/from a sockaddr_storage with the given port (host order). */
size_t xp_addr_to_sockaddr(const struct xp_addr *a, unsigned short port, struct sockaddr_storage *ss);
/* Parse "ADDR" or "ADDR-ADDR" (same family, ascending, at most max) into out. Count or -1 with err set. */
int xp_parse_addr_range(const char *s, struct xp_addr *out, unsigned max, char *err, size_t errlen);
/*
 * "ADDR/LEN" or a bare "ADDR" (a single host): the network with its host bits
 * cleared, and the prefix length (0..32 or 0..128). 0, or -1 with err set.
 */
int xp_parse_cidr(const char *s, struct xp_addr *net, unsigned *plen, char *err, size_t errlen);
/* A network: --allow's, the server's start-rate blocks. */
struct xp_cidr {
	struct xp_addr net; /* host bits cleared */
	unsigned plen;
};

/* Whether a is inside net/plen (same family). */
bool xp_cidr_contains(const struct xp_addr *net, unsigned plen, const struct xp_addr *a);
int xp_addr_from_sockaddr(const struct sockaddr *sa, struct xp_addr *a, unsigned short *port);
/* A's class is that of one host's address, as a packet's source: not
 * unspecified, loopback, multicast, IPv4 0/8 or 240/4 (which holds the limited
 * broadcast), or IPv4-mapped IPv6. The same rules as bpf/lib/addr.h; a
 * subnet's directed broadcast needs the routing table (xp_route_type). */
bool xp_addr_is_unicast(const struct xp_addr *a);

#endif
