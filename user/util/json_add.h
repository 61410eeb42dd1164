/*
 * The reports' JSON members, one rule for report/ and meas/: a count as an
 * integer, a figure as a double, or null where the figure is NaN or
 * infinite (JSON has neither: a rate over no time, a mean of nothing), a
 * string or null. meas/latency.c and report/report.c each had a copy (report/measure.c still
 * has its own, to be dropped once the --rx-timestamp branch that edits next
 * to it is merged).
 */
#ifndef XDPPERF_REPORT_JSON_ADD_H
#define XDPPERF_REPORT_JSON_ADD_H

#include <json-c/json.h>
#include <math.h>
#include <stdint.h>

static inline void add_u(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

static inline void add_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, isfinite(v) ? json_object_new_double(v) : NULL);
}

static inline void add_s(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

#endif
