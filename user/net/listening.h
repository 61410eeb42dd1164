/*
 * Which local ports have sockets on them, from the kernel's socket
 * diagnostics (NETLINK_SOCK_DIAG, over libmnl), in the calling thread's
 * network namespace: what `ss -ltn` / `ss -uan` show, without parsing them.
 */
#ifndef XP_LISTENING_H
#define XP_LISTENING_H

#include <stdbool.h>
#include <stdint.h>

/* One bit per port. */
struct xp_portset {
	uint8_t bits[65536 / 8];
};

static inline bool xp_portset_has(const struct xp_portset *s, uint16_t p)
{
	return s->bits[p >> 3] & (1u << (p & 7));
}
static inline void xp_portset_add(struct xp_portset *s, uint16_t p)
{
	s->bits[p >> 3] |= (uint8_t)(1u << (p & 7));
}

/*
 * Ports with a socket that would receive traffic sent to them, IPv4 and IPv6:
 * for IPPROTO_TCP the listening sockets, for IPPROTO_UDP every bound socket.
 * 0, or -errno.
 */
int xp_ports_in_use(int proto, struct xp_portset *out);

#endif
