/*
 * Connection numbering for the AF_XDP engine's connection tests (kind
 * XP_TEST_CONNECT / XP_TEST_HOLD): which 4-tuple and initial sequence number
 * connection number k uses, and the rewrite of a UMEM frame into that
 * connection's SYN (or RST).
 *
 * Nothing is stored per connection, anywhere: the engine, the XDP programs
 * and the RSTs at the end of a hold test all recompute a connection's tuple
 * and ISN from k. Thread q of n sends k = q, q+n, q+2n, ...
 *
 *   tuple number  t = (first + k) mod space, space = addresses x sports x dports,
 *                 first = cfg->hs.first_tuple mod space (0 but in a search)
 *   address       bind[t mod naddr]          (round robin, fastest)
 *   ports         xp_flow_ports(t / naddr)   (then dport, then sport)
 *   ISN           a 64-bit mix of (seed, k), low 32 bits
 *
 * t -> tuple is a bijection on [0, space), so the first `space` connections
 * have distinct tuples; after that tuples come round again (a connection
 * tracker accepts a new SYN on a closed tuple), each time with another ISN
 * since the ISN hashes the unwrapped k.
 */
#ifndef XP_TUPLES_H
#define XP_TUPLES_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "frame/frame.h"
#include "bpf/lib/isn.h"

struct xp_tuples {
	const struct xp_engine_cfg *cfg; /* ranges and bind[] */
	uint64_t space;                  /* distinct tuples */
	uint64_t first;                  /* connection 0's tuple number: cfg->hs.first_tuple mod space */
	unsigned naddr;                  /* cfg->nbind, or 1: the template's own address */
	uint64_t seed;                   /* ISN key */
};

/*
 * Check cfg for a connection test (TCP template, bind[] of the template's
 * family, port ranges, hold: parallel <= space) and fill m. cfg must outlive
 * m. Returns 0, or -EINVAL with a one-line reason in err.
 */
int xp_tuples_init(struct xp_tuples *m, const struct xp_engine_cfg *cfg, uint64_t seed,
		      char *err, size_t errlen);

/* Tuple number of connection k. */
static inline uint64_t xp_tuple_num(const struct xp_tuples *m, uint64_t k)
{
	return (m->first + k) % m->space; /* first < space; k never comes near 2^64 */
}

/* Tuple number t (< space): ports (host order) and index into cfg->bind. */
static inline void xp_tuple_of(const struct xp_tuples *m, uint64_t t, uint16_t *sport,
				  uint16_t *dport, unsigned *addr)
{
	*addr = m->naddr > 1 ? (unsigned)(t % m->naddr) : 0;
	xp_flow_ports(m->cfg, m->naddr > 1 ? t / m->naddr : t, sport, dport);
}

/* ISN of connection k: bpf/lib/isn.h, shared with the live-frames generator. */
static inline uint32_t xp_tuple_isn(const struct xp_tuples *m, uint64_t k)
{
	return xp_conn_isn(m->seed, k);
}

/*
 * Rewrite a frame built from the template (or from xp_tuple_build_rst's, or
 * one holding an earlier connection's) into tuple t with sequence number seq:
 * ports, source address (only when cfg->nbind > 0) and seq, each with
 * incremental checksum updates (frame_set_*), never a full recompute.
 */
void xp_tuple_write(const struct xp_tuples *m, uint8_t *frame, const struct frame_layout *lay,
		    uint64_t t, uint32_t seq);

/*
 * The RST that closes a connection opened by the SYN template syn: same
 * addresses, MACs, VLAN and ports, flags RST only, no options, ack 0.
 * Callers set seq (ISN + 1) and the tuple with xp_tuple_write. Returns the
 * frame length, or 0 with *err set.
 */
size_t xp_tuple_build_rst(const struct frame_spec *syn, uint8_t *buf, size_t buflen,
			  struct frame_layout *lay, const char **err);

#endif
