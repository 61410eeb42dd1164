/*
 * A flow's frames, built once (issue 26): the AF_XDP engine sends frame n
 * of a flow by copying entry n % period of its table into a UMEM slot and
 * writing the stamp, instead of building the headers per frame. A flow's
 * headers and size repeat after its period, the least common multiple of
 * its fields' pattern periods and its size's (frame/flow_pat.h), so the
 * table holds one period.
 *
 * An entry keeps the frame's first XP_FLOW_PRE bytes only: every header
 * (at most 14 + 2 * 4 + 40 + 20 = 82 bytes) and the stamp's 12 bytes. The
 * rest of a frame is zero payload, and the engine's slots are zero past
 * XP_FLOW_PRE (nothing writes there), so a copied prefix is the whole frame
 * with its checksums right, whatever frame the slot held before.
 */
#ifndef XP_ENGINE_FLOW_TABLE_H
#define XP_ENGINE_FLOW_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

/* Frames of all of a test's flow tables at most (about 9 MiB of entries). */
#define XP_FLOW_TABLE_MAX 65536u
#define XP_FLOW_PRE 128u

struct xp_flow_entry {
	uint8_t pre[XP_FLOW_PRE];   /* the frame's first bytes, zero past its length */
	struct frame_layout lay;    /* lay.len: the frame's length without FCS */
	uint8_t place;              /* enum xp_stamp_place: where its stamp goes, NONE: not stamped */
	uint32_t seq_rel;           /* a TCP data flow: payload bytes of the period's frames before this one */
};

/*
 * A TCP data flow (no SYN) is one stream: its frame m starts at sequence
 * number seq0 + the payload bytes of its frames 0..m-1, as a real stream's
 * segments do, which a table of one period cannot hold (the numbers never
 * repeat within it). So the engine writes it per frame, as it writes the
 * stamp: seq0 + (m / period) * period_payload + e[m % period].seq_rel
 * (modulo 2^32), the TCP checksum fixed incrementally (xp_flow_seq_of).
 */
struct xp_flow_table {
	uint64_t period;            /* entries */
	struct xp_flow_entry *e;
	bool seq_adv;               /* a TCP data flow: the engine advances the sequence number per frame */
	uint32_t seq0;              /* its first frame's sequence number (the flow's header) */
	uint64_t period_payload;    /* payload bytes of one period's frames */
};

/* The sequence number of flow-wide frame m of table t (seq_adv), modulo 2^32. */
static inline uint32_t xp_flow_seq_of(const struct xp_flow_table *t, uint64_t m)
{
	return t->seq0 + (uint32_t)((m / t->period) * t->period_payload) + t->e[m % t->period].seq_rel;
}

/* Frame n's size incl. FCS: size_pat's, the mix's or frame_size. */
unsigned xp_flow_size_at(const struct xp_engine_flow *f, uint64_t n);

/* The flow's period: lcm of its fields' and its size's periods, or cap + 1
 * when that is more than cap. */
uint64_t xp_flow_period(const struct xp_engine_flow *f, uint64_t cap);

/*
 * Build the period's entries of flow f (its hdr checked), stamped places set
 * where stamps (and the flow's stamps) ask and the frame has room. 0, or -1
 * with err (too long a period, a frame that cannot be built, a stamped flow
 * with a size that has no room for the stamp).
 */
int xp_flow_table_build(const struct xp_engine_flow *f, uint64_t cap, bool stamps, struct xp_flow_table *t,
			char *err, size_t errlen);
void xp_flow_table_free(struct xp_flow_table *t);

#endif /* XP_ENGINE_FLOW_TABLE_H */
