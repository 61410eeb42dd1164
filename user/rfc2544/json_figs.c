/*
 * -J's figure members, for both writers of the suite's JSON: report.c (the
 * sizes and trials) and flows.c (each flow's figures). A file of its own so
 * that neither calls the other for them (report.c calls flows.c).
 */
#include <json-c/json.h>
#include <math.h>

#include "rfc2544/rfc2544.h"

void xp_rfc_add_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, isfinite(v) ? json_object_new_double(v) : NULL);
}

void xp_rfc_lat_json(struct json_object *o, const struct xp_rfc_latency *x)
{
	json_object_object_add(o, "frames_timed", json_object_new_int64((int64_t)x->timed));
	xp_rfc_add_d(o, "min_us", x->min_us);
	xp_rfc_add_d(o, "mean_us", x->mean_us);
	xp_rfc_add_d(o, "max_us", x->max_us);
	xp_rfc_add_d(o, "p50_us", x->p50_us);
	xp_rfc_add_d(o, "p99_us", x->p99_us);
	xp_rfc_add_d(o, "p99_9_us", x->p999_us);
}
