/*
 * The key of flows without stamps (issue 26; bpf/measure.h's struct
 * xp_flow_key, docs/flows.md "Counting frames without stamps"): which of a
 * frame's header fields the server reads to find the flow of a frame that
 * carries no stamp, and the keys each such flow takes.
 *
 * xp_key_choose picks the fewest fields, tried in the order DSCP, source
 * port, destination port, source address (XP_KEY_DSCP, _SPORT, _DPORT,
 * _SRC), that give every flow it is asked about keys of its own:
 *  - a field is a candidate when no such flow has it random, and each
 *    takes at most XP_KEY_MAX_PER_FLOW values;
 *  - a flow's keys are the distinct combinations of its key fields' values
 *    over its frames (fields vary together, frame n taking each field's
 *    value n): at most XP_KEY_MAX_PER_FLOW of them, and their patterns
 *    repeat together within XP_KEY_MAX_PERIOD frames;
 *  - all flows' keys together at most XP_FLOW_ENTRIES (the server's map).
 * VLAN IDs are never chosen: on a veth (and wherever the driver takes the
 * outer tag into the skb's metadata) the XDP program does not see the
 * outer tag, so a key of VIDs would count nothing there. Flows told apart
 * only by a VID are refused like any two that cannot be told apart.
 *
 * Pure: no I/O, no allocation beyond the caller's plan; tested by
 * tests/unit/test_flow_key.c.
 */
#ifndef XP_FRAME_FLOW_KEY_H
#define XP_FRAME_FLOW_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/measure.h"
#include "frame/flow_pat.h"

#define XP_KEY_MAX_PER_FLOW 64u
#define XP_KEY_MAX_PERIOD   4096u

/* The test's key: its fields (XP_KEY_ON | XP_KEY_* fields; 0: no flow to
 * count by key) and n keys, key[i] being flow[i]'s (slot 0: the server
 * sets it). */
struct xp_key_plan {
	uint32_t mask;
	unsigned n;
	struct xp_flow_key key[XP_FLOW_ENTRIES];
	uint16_t flow[XP_FLOW_ENTRIES];
};

/*
 * fps[0..nflows-1]: every flow's resolved headers; pick[i]: flow i is to be
 * counted by key (no stamps, addressed to the server); names[i] names it
 * in a message. 0 with *plan set (mask 0 when no flow is picked), or -1
 * with err a one-line reason naming both flows and the fields when two
 * cannot be told apart, or the flow whose combinations are too many.
 */
int xp_key_choose(const struct xp_flow_pat *const *fps, const bool *pick, const char *const *names,
		  unsigned nflows, struct xp_key_plan *plan, char *err, size_t errlen);

/* The key field's name in messages and in the start request ("dscp",
 * "sport", "dport", "src", "vid0", "vid1"); NULL for no single field. */
const char *xp_key_field_name(uint32_t bit);

/* The key frame n of fp has under mask (slot 0). */
void xp_key_of(const struct xp_flow_pat *fp, uint64_t n, uint32_t mask, struct xp_flow_key *k);

#endif
