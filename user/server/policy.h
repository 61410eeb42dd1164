/*
 * What the server lets a client ask for (issue 9): the rules that do not need
 * the server's running state. Each check returns 0, or -1 with a one-line
 * message for the client that names what was refused and the option that
 * would allow it. Defaults and flags: server/config.h (XP_DEFAULT_MAX_*).
 */
#ifndef XP_POLICY_H
#define XP_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/messages.h"
#include "server/config.h"
#include "util/addr.h"

struct xp_port_range {
	uint16_t lo, hi;
};

/* --allow: true when no network is given or peer is inside one of them. */
bool xp_policy_peer_allowed(const struct xp_server_cfg *cfg, const struct xp_addr *peer);

/*
 * A start request's bind addresses (the client's --bind): the XDP program
 * takes a test's frames from them as the client's, so each must be the
 * control connection's own address (peer), inside an --allow network, or
 * inside an --allow-bind network the operator gave. Otherwise a client
 * could name another host's address (issue 28).
 */
int xp_policy_check_bind(const struct xp_server_cfg *cfg, const struct xp_test *t, const struct xp_addr *peer,
			 char *err, size_t errlen);

/* The block per-address limits count by (--max-control-per-addr): a's /24
 * (IPv4) or /64 (IPv6), host bits cleared. One host often has a whole /64,
 * and neighbours in a /24 are often one owner. */
void xp_policy_addr_block(const struct xp_addr *a, struct xp_cidr *blk);

/* A token bucket: burst tokens at most, per_s more each second. */
struct xp_rate_bucket {
	double tokens;
	double t;       /* when tokens was last brought up to date; 0: never (a full bucket) */
};
/* Take a token at time now: true, or false when the bucket is empty (nothing taken). */
bool xp_policy_rate_take(struct xp_rate_bucket *b, double now, double burst, double per_s);

/*
 * The request on its own: duration (<= --max-duration); for a test the server
 * listens for, the number of ports (--max-listen-ports) and connections
 * (--max-parallel).
 */
int xp_policy_check_test(const struct xp_server_cfg *cfg, const struct xp_test *t, char *err, size_t errlen);

/*
 * The test's destination ports, each of them: inside --test-ports (by default
 * none below 1024), not the control port, not in the host's ephemeral range
 * (net.ipv4.ip_local_port_range of the server's namespace: replies to its
 * own connections arrive there), and not a port where a socket of another
 * program listens (TCP tests) or is bound (UDP tests), read from the kernel
 * (sock_diag). `own` lists ranges where this server's own listeners are
 * (they are not another program's). The message names the first port.
 */
int xp_policy_check_ports(const struct xp_server_cfg *cfg, const struct xp_test *t, const struct xp_port_range *own,
			  unsigned nown, char *err, size_t errlen);

/* net.ipv4.ip_local_port_range of the calling thread's namespace (applies to IPv6 too). 0 or -errno. */
int xp_ephemeral_range(uint16_t *lo, uint16_t *hi);

#endif
