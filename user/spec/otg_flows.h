/*
 * --flows FILE: the Open Traffic Generator's config JSON (models v1.61.0,
 * the Config object's `flows`) read into a test's traffic (issue 26). Each
 * flow becomes one stream of spec->traffic[]: its name, its headers
 * (ethernet, 0-2 vlan, ipv4 or ipv6, tcp or udp, every field a pattern as
 * OTG defines it; "auto" fields and the addresses, MACs and ports the file
 * leaves out are filled from the path at run time: hdr_auto), its size,
 * rate, duration and metrics. Defaults are the model's. Everything this
 * reader does not support is refused by its JSON path, never ignored
 * (docs/flows.md lists what is supported).
 */
#ifndef XP_SPEC_OTG_FLOWS_H
#define XP_SPEC_OTG_FLOWS_H

#include <stddef.h>

#include "spec/spec.h"

struct json_object;

/*
 * Read the config object cfg into s->traffic[] and s->ntraffic (the other
 * members of s stay; each flow starts from s->traffic[0]'s ports). file
 * names the file in messages; line_rate is --line-rate's bit rate on the
 * wire (0: not given), which a rate in percent needs. 0, or -1 with one
 * line "--flows FILE: PATH: why" in err.
 */
int xp_otg_flows_parse(struct json_object *cfg, const char *file, double line_rate, struct xp_spec *s,
		       char *err, size_t errlen);
/* The same from the file (json-c's parser; its errors named with the file). */
int xp_otg_flows_load(const char *file, double line_rate, struct xp_spec *s, char *err, size_t errlen);

#endif
