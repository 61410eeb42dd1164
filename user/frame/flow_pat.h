/*
 * A flow's headers with a pattern per field (issue 26): what a flow of the
 * test specification declares, and the generator that gives the headers
 * of its frame number n. Every field's pattern runs on its own, all driven
 * by the same n (as OTG's fields do): a source port incrementing over 10
 * values beside a destination over 1000 addresses repeats after
 * lcm(10, 1000) frames.
 *
 * The fields without a pattern here are fixed per flow (base): the VLAN
 * TPIDs, the families, the L4 protocol and the TCP fields. Patterns must
 * match their field's width (XP_FP_* below); xp_flow_pat_init sets every
 * pattern to the base's value, the caller then replaces the ones its flow
 * declares and calls xp_flow_pat_check.
 */
#ifndef XP_FRAME_FLOW_PAT_H
#define XP_FRAME_FLOW_PAT_H

#include <stdint.h>

#include "frame/flow_hdr.h"
#include "frame/pattern.h"

/* The patterned fields, index into struct xp_flow_pat.f. */
enum xp_flow_field {
	XP_FF_DST_MAC = 0,
	XP_FF_SRC_MAC,
	XP_FF_VLAN0_PCP, XP_FF_VLAN0_DEI, XP_FF_VLAN0_VID,
	XP_FF_VLAN1_PCP, XP_FF_VLAN1_DEI, XP_FF_VLAN1_VID,
	XP_FF_SRC,
	XP_FF_DST,
	XP_FF_DSCP,
	XP_FF_ECN,
	XP_FF_TTL,
	XP_FF_FLOW_LABEL,
	XP_FF_SPORT,
	XP_FF_DPORT,
	XP_FF_COUNT
};

struct xp_flow_pat {
	struct xp_flow_hdr base;
	struct xp_pattern f[XP_FF_COUNT];
};

/* The field's width in bits (32 or 128 for addresses: base's family). */
unsigned xp_flow_field_width(const struct xp_flow_hdr *base, enum xp_flow_field ff);

/* The field's name as docs/flows.md and error messages give it
 * ("vlan[0].id", "ipv4.src" / "ipv6.src", "tcp.src_port", ...). */
const char *xp_flow_field_name(const struct xp_flow_hdr *base, enum xp_flow_field ff);

/* fp = base with every field a fixed value (base's). */
void xp_flow_pat_init(struct xp_flow_pat *fp, const struct xp_flow_hdr *base);

/*
 * Check the base (xp_flow_hdr_check) and each pattern (xp_pattern_check,
 * its width the field's, and every value it can take inside the field's
 * range where that is less than its width: a VID never 4095). 0, or -1
 * with *err a one-line reason that names the field.
 */
int xp_flow_pat_check(const struct xp_flow_pat *fp, const char **err);

/* The headers of frame n of the flow (fp checked). */
void xp_flow_pat_at(const struct xp_flow_pat *fp, uint64_t n, struct xp_flow_hdr *h);

#endif /* XP_FRAME_FLOW_PAT_H */
