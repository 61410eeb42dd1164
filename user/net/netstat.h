/*
 * The kernel's extended TCP counters (/proc/net/netstat, "TcpExt:" lines) of
 * the calling thread's network namespace: what nstat shows as TcpExtX.
 */
#ifndef XP_NETSTAT_H
#define XP_NETSTAT_H

#include <stdint.h>

/* TcpExt counters the socket server reports beside its own counts. */
struct xp_tcpext {
	uint64_t listen_overflows; /* handshakes completed, then dropped: an accept queue was full */
	uint64_t listen_drops;     /* every SYN or ACK a listener dropped (overflows included) */
	uint64_t embryonic_rsts;   /* resets of handshakes not yet complete (SYN_RECV): e.g. a client's
				    * RST that overtook its ACK */
};

/* 0, or -errno (the file is missing or has no such counters). */
int xp_tcpext_read(struct xp_tcpext *t);
/* The value of counter `name` in the "PREFIX:" lines of /proc/net/netstat text (for tests). 0 or -ENOENT. */
int xp_netstat_value(const char *text, const char *prefix, const char *name, uint64_t *value);

#endif
