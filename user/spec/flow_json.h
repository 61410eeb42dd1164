/*
 * A flow's field patterns and headers as JSON (issue 26). Patterns take the
 * Open Traffic Generator's shape (models v1.61.0, Pattern.Flow.<Header>.
 * <Field>): {"choice": "value", "value": V}, {"choice": "values", "values":
 * [...]}, {"choice": "increment"|"decrement", "increment": {"start", "step",
 * "count"}}, {"choice": "random", "random": {"min", "max", "seed", "count"}}.
 * The spec's JSON form (spec.c) writes and reads them, and the flow file
 * (otg_flows.c) reads them with each field's defaults from the model.
 *
 * Values are JSON integers for fields up to 64 bits, "aa:bb:cc:dd:ee:ff"
 * for MACs and address strings for IPv4 and IPv6 (OTG's formats).
 */
#ifndef XP_SPEC_FLOW_JSON_H
#define XP_SPEC_FLOW_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "frame/flow_pat.h"

struct json_object;

enum xp_pj_fmt { XP_PJ_INT = 0, XP_PJ_MAC, XP_PJ_IPV4, XP_PJ_IPV6 };

/* Choices a field offers (OTG's x-enum of its pattern). */
#define XP_PJ_VALUE     (1u << XP_PAT_VALUE)
#define XP_PJ_VALUES    (1u << XP_PAT_VALUES)
#define XP_PJ_INCREMENT (1u << XP_PAT_INCREMENT)
#define XP_PJ_DECREMENT (1u << XP_PAT_DECREMENT)
#define XP_PJ_RANDOM    (1u << XP_PAT_RANDOM)
#define XP_PJ_AUTO      (1u << 8)
#define XP_PJ_COUNTERS  (XP_PJ_VALUE | XP_PJ_VALUES | XP_PJ_INCREMENT | XP_PJ_DECREMENT)
#define XP_PJ_ALL       (XP_PJ_COUNTERS | XP_PJ_RANDOM)

/* How a field's pattern object is read: its format and width, the choices
 * it offers, the choice when none is given (XP_PJ_AUTO or a pattern kind's
 * bit), and the model's default value (also a counter's default start). */
struct xp_pj_field {
	enum xp_pj_fmt fmt;
	unsigned width;
	unsigned choices;
	unsigned def_choice;
	xp_u128 def;
};

/* p as a pattern object (a new reference, NULL without memory). */
struct json_object *xp_pattern_to_json(const struct xp_pattern *p, enum xp_pj_fmt fmt);

/*
 * Read the pattern object j at JSON path `path` ("flows[0].packet[1].vlan.id").
 * 0 with *p set and *is_auto false; 0 with *is_auto true for the choice
 * "auto" (*p the default value); -1 with a one-line message naming the path
 * of what is wrong (a member not supported, a choice the field lacks, a
 * value outside the field).
 */
int xp_pattern_from_json(struct json_object *j, const struct xp_pj_field *f, const char *path,
			 struct xp_pattern *p, bool *is_auto, char *err, size_t errlen);

/* Same pattern (the members its kind uses)? */
bool xp_pattern_eq(const struct xp_pattern *a, const struct xp_pattern *b);

/* A header field's JSON format (by the base's family for addresses). */
enum xp_pj_fmt xp_flow_field_fmt(const struct xp_flow_hdr *base, enum xp_flow_field ff);

/* A flow's headers for the spec's JSON form: the base's fields, and
 * "patterns" with every field whose pattern is not its base value. */
struct json_object *xp_flow_pat_to_json(const struct xp_flow_pat *fp);
/* And back: 0, or -1 with a message naming the member. */
int xp_flow_pat_from_json(struct json_object *j, struct xp_flow_pat *fp, char *err, size_t errlen);

#endif
