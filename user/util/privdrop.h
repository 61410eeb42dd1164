/*
 * The server's capabilities after setup (issue 28 point 13): once it has
 * loaded its XDP program and listens on its control port, the server keeps
 * only what its tests still need (xp_server_caps) and drops the rest from
 * its effective, permitted, inheritable and ambient sets and from its
 * bounding set, with no_new_privs set, so neither it nor a reverse sender
 * it starts (an exec of our own binary) can get them back. Which ones and
 * why: docs/privileges.md, the man page's SECURITY section and --probe.
 */
#ifndef XP_PRIVDROP_H
#define XP_PRIVDROP_H

#include <stddef.h>
#include <stdint.h>

/* One kept capability: its number, its name (CAP_...) and what it is for. */
struct xp_cap_use {
	int cap;
	const char *name, *why;
};

/* The ones any server keeps, in the docs' order; n set to their count. */
const struct xp_cap_use *xp_server_cap_uses(size_t *n);
/* CAP_NET_BIND_SERVICE's entry: kept only for test ports below the unprivileged start. */
const struct xp_cap_use *xp_server_cap_bind(void);

/*
 * The set (bit N = capability N) a server keeps: the fixed ones, and
 * CAP_NET_BIND_SERVICE when its lowest test port is below
 * net.ipv4.ip_unprivileged_port_start (unpriv_start, 1024 by default).
 */
uint64_t xp_server_caps(unsigned lowest_port, unsigned unpriv_start);

/* "CAP_BPF CAP_NET_ADMIN ...": the names of set's members (CAP_N for unknown ones), space-separated. */
void xp_caps_names(uint64_t set, char *buf, size_t len);

/* net.ipv4.ip_unprivileged_port_start of this network namespace (1024 if unreadable). */
unsigned xp_unpriv_port_start(void);

/* This process's effective and permitted sets (bit N = capability N); -errno. */
int xp_caps_current(uint64_t *eff, uint64_t *prm);

/*
 * Drop everything but keep (what of it the process has): bounding set
 * first (needs CAP_SETPCAP: a server started with file capabilities but no
 * CAP_SETPCAP leaves its bounding set and relies on no_new_privs), then
 * ambient, inheritable, permitted and effective; then no_new_privs. The
 * process must have one thread (capabilities are per thread): -EBUSY if
 * not. *kept is what remains. 0 or -errno with err set.
 */
int xp_caps_drop_to(uint64_t keep, uint64_t *kept, char *err, size_t errlen);

#endif
