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

#include "frame.h"

struct xp_engine_cfg {
	struct frame_spec tmpl;     /* ports inside are replaced per frame */
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	char ifname[16];
	int ifindex;
	unsigned queues;            /* sockets/threads, one per queue 0..queues-1 */
	double pps;                 /* total rate limit, 0 = as fast as possible */
	double max_seconds;         /* hard stop even if nobody calls stop() */
	int debug;
};

struct xp_engine_stats {
	uint64_t pkts;   /* frames the driver took (TX completions) */
	uint64_t bytes;  /* their L2 bytes without FCS */
	uint64_t errors; /* failed kicks other than "try again" */
	const char *mode; /* e.g. "copy", "zerocopy" */
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

/* The (sport, dport) of flow number i: ports vary fastest over the destination range. */
static inline void xp_flow_ports(const struct xp_engine_cfg *c, uint64_t i, uint16_t *sport, uint16_t *dport)
{
	uint32_t nd = (uint32_t)c->dport_hi - c->dport_lo + 1;
	uint32_t ns = (uint32_t)c->sport_hi - c->sport_lo + 1;
	*dport = (uint16_t)(c->dport_lo + i % nd);
	*sport = (uint16_t)(c->sport_lo + (i / nd) % ns);
}

#endif
