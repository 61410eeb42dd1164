/*
 * ICMP errors that come back for the test's own frames: fragmentation
 * needed, destination unreachable, time exceeded, parameter problem, and
 * the IPv6 equivalents with Packet Too Big. The frame engines send past the
 * kernel, so nothing else on the client would notice a router refusing
 * every frame: a raw ICMP socket sees each such error (the kernel hands raw
 * sockets a copy of every ICMP message it receives), and only those that
 * quote a frame of this test (our source, the server, the test's protocol
 * and port ranges) are counted, with the hop that sent them and, for
 * "fragmentation needed" / "packet too big", the MTU it names.
 */
#ifndef XP_ICMP_WATCH_H
#define XP_ICMP_WATCH_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "util/addr.h"

enum xp_icmp_kind {
	XP_ICMP_FRAG_NEEDED = 0, /* IPv4 3/4, IPv6 Packet Too Big: names the next hop's MTU */
	XP_ICMP_UNREACH,         /* destination unreachable, any other code */
	XP_ICMP_TIME_EXCEEDED,   /* hop limit reached in transit, or reassembly */
	XP_ICMP_PARAM_PROBLEM,
	XP_ICMP_KINDS,
};

#define XP_ICMP_MAX_HOPS 8
#define XP_ICMP_MAX_SRC 257 /* the test's source address and --bind's (at most 256) */

/* One sender of one kind of error (type and code as on the wire). */
struct xp_icmp_hop {
	struct xp_addr addr;
	uint8_t type, code;
	enum xp_icmp_kind kind;
	uint32_t mtu;            /* the MTU it named (fragmentation needed); 0 if none */
	uint64_t count;
};

/* What came back during a test (zeroed: none, or not watched). */
struct xp_icmp_figs {
	bool watched;            /* a raw socket watched for them */
	int family;              /* AF_INET or AF_INET6: which ICMP */
	uint64_t count;          /* errors quoting a frame of the test */
	uint64_t by_kind[XP_ICMP_KINDS];
	uint32_t path_mtu;       /* the smallest MTU named; 0 if none was */
	unsigned nhops;
	struct xp_icmp_hop hop[XP_ICMP_MAX_HOPS];
	uint64_t other_hops;     /* errors from senders beyond the table's XP_ICMP_MAX_HOPS */
	uint64_t not_read;       /* the socket's queue overflowed: at least this many more came (SO_RXQ_OVFL) */
};

/* Which frames are the test's: what the quoted packet must carry. */
struct xp_icmp_match {
	struct xp_addr server;
	const struct xp_addr *src;   /* our source addresses (the test's, --bind's) */
	unsigned nsrc;
	uint8_t l4_proto;            /* IPPROTO_UDP / IPPROTO_TCP */
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
};

struct xp_icmp_watch {
	int fd, stop_fd;             /* raw ICMP socket, eventfd that ends the thread */
	pthread_t thread;
	bool running;
	struct xp_icmp_match m;
	struct xp_addr src[XP_ICMP_MAX_SRC];
	struct xp_icmp_figs figs;    /* the thread's until xp_icmp_watch_stop */
};

/* Open the socket and start reading in a thread of its own. 0, or -errno with err set (w left stopped). */
int xp_icmp_watch_start(struct xp_icmp_watch *w, const struct xp_icmp_match *m, char *err, size_t errlen);
/* Read what is still queued, end the thread, close: the figures into out (zero if never started). */
void xp_icmp_watch_stop(struct xp_icmp_watch *w, struct xp_icmp_figs *out);

/*
 * One ICMP (IPv4: from its IP header on; IPv6: from its ICMPv6 header on, the
 * sender given apart) counted into f if it quotes a frame m matches.
 * Returns whether it did. For the unit tests, and the watcher's thread.
 */
bool xp_icmp_account(struct xp_icmp_figs *f, const struct xp_icmp_match *m, int family, const struct xp_addr *from,
		     const uint8_t *pkt, size_t len);

/* "fragmentation needed", "destination unreachable (host unreachable)", ...: the error's name. */
const char *xp_icmp_name(int family, uint8_t type, uint8_t code);

#endif
