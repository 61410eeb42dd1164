/*
 * Sending engines: one interface, several implementations (AF_XDP now; the
 * kernel socket stack and XDP live frames later). The client hands an engine
 * a frame template and ranges; the engine sends until stopped and keeps
 * cumulative counters the client samples each interval.
 */
#ifndef XP_ENGINE_H
#define XP_ENGINE_H

#include <stdint.h>
#include <stdbool.h>

#include "net/frame.h"

#include "net/addr.h"
#include "proto/messages.h"

#define XP_MAX_BIND 256

struct xp_engine_cfg {
	enum xp_test_kind kind;     /* stream, connect (-x) or hold (-k) */
	/* frame engines (xsk) */
	struct frame_spec tmpl;     /* ports inside are replaced per frame */
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	char ifname[16];
	int ifindex;
	unsigned queues;            /* sockets/threads, one per queue */
	unsigned first_queue;       /* queues first_queue..first_queue+queues-1 */
	double pps;                 /* total rate limit, 0 = as fast as possible */
	unsigned burst;             /* frames sent back to back per paced unit, 0 = spread evenly */
	double max_seconds;         /* hard stop even if nobody calls stop() */
	int debug;
	/* socket engine */
	struct xp_addr server;      /* destination address */
	struct xp_addr bind[XP_MAX_BIND]; /* source addresses to spread over; nbind 0 = kernel's choice */
	unsigned nbind;
	unsigned parallel;          /* -P: connections in flight (connect) / open (stream, hold) */
	unsigned threads;           /* event-loop threads, 0 = one per CPU */
	bool zero;                  /* -z: send zeroes instead of random data */
};

struct xp_engine_stats {
	uint64_t pkts;   /* frames the driver took (TX completions) */
	uint64_t bytes;  /* their L2 bytes without FCS */
	uint64_t errors; /* failed kicks other than "try again" */
	const char *mode; /* e.g. "copy", "zerocopy" */
	/* socket engine (zero for frame engines) */
	uint64_t conn_ok;       /* connections established */
	uint64_t conn_fail;     /* connect() failures: refused, unreachable... */
	uint64_t conn_reset;    /* established connections reset by the peer */
	uint64_t conn_timeout;  /* connects that did not complete in time */
	uint64_t conn_closed;   /* connections closed by us */
	uint64_t open_now;      /* connections open at this moment */
	uint64_t payload_bytes; /* bytes written to sockets */
};

struct xp_engine;

struct xp_engine_ops {
	const char *name;
	int (*create)(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen);
	int (*start)(struct xp_engine *e, char *err, size_t errlen);
	void (*read)(struct xp_engine *e, struct xp_engine_stats *st);
	void (*stop)(struct xp_engine *e);   /* stop sending, wait for threads */
	void (*destroy)(struct xp_engine *e);
};

extern const struct xp_engine_ops xp_engine_xsk;
extern const struct xp_engine_ops xp_engine_socket;
extern const struct xp_engine_ops xp_engine_none;
extern const struct xp_engine_ops xp_engine_live;

/* The (sport, dport) of flow number i: ports vary fastest over the destination range. */
static inline void xp_flow_ports(const struct xp_engine_cfg *c, uint64_t i, uint16_t *sport, uint16_t *dport)
{
	uint32_t nd = (uint32_t)c->dport_hi - c->dport_lo + 1;
	uint32_t ns = (uint32_t)c->sport_hi - c->sport_lo + 1;
	*dport = (uint16_t)(c->dport_lo + i % nd);
	*sport = (uint16_t)(c->sport_lo + (i / nd) % ns);
}

#endif
