/* The connection searches' output, as parts for the report's sink (report.h's suite events): a line per
 * trial (its progress line), its -J record, the search's settings, the table at the end, the result. */
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>

#include "connsearch/connsearch.h"

static const char *verdict(const struct xp_cs_rec *rec)
{
	switch (rec->v) {
	case XP_RFC_PASS: return "pass";
	case XP_RFC_LOSS: return "failed";
	case XP_RFC_SHORT: return "short";
	default: return "error";
	}
}

/* "held 12345 of 20000" or "19990 completed" */
static void what_ok(const struct xp_cs_trial *t, char *buf, size_t len)
{
	if (t->mode == XP_CS_CAPACITY)
		snprintf(buf, len, "held %" PRIu64 " of %" PRIu64, t->held, t->want);
	else if (t->mode == XP_CS_TEARDOWN)
		snprintf(buf, len, "%" PRIu64 " started, %" PRIu64 " established, %" PRIu64 " closed by FIN", t->started,
			 t->established, xp_cs_ok(t));
	else
		snprintf(buf, len, "%" PRIu64 " started, %" PRIu64 " established", t->started, t->established);
}

void xp_cs_line(char *buf, size_t len, const struct xp_cs_run *r, const struct xp_cs_rec *rec)
{
	const struct xp_cs_trial *t = &rec->t;
	unsigned i = (unsigned)(rec - r->recs) + 1;
	if (t->error) {
		snprintf(buf, len, "[%3u] %-9s did not run\n", i, t->what);
		return;
	}
	char ok[128], rate[48] = "as fast as it goes", start[96] = "";
	what_ok(t, ok, sizeof(ok));
	if (t->target_cps > 0)
		snprintf(rate, sizeof(rate), "%.0f/s", t->target_cps);
	if (strcmp(t->what, "probe")) {
		if (t->table_known)
			snprintf(start, sizeof(start), "; table %" PRIu64 " at start, %u probes, %.1f s to drain",
				 t->table_at_start, t->probes, t->drain_s);
		else
			snprintf(start, sizeof(start), "; %u probes, %.1f s settle", t->probes, t->drain_s);
	}
	snprintf(buf, len, "[%3u] %-9s %s asked, %.0f/s offered: %s; failed %" PRIu64 " (%" PRIu64 " timed out, %" PRIu64
		   " reset, %" PRIu64 " unreachable, %" PRIu64 " waiting%s)%s: %s%s%s\n",
		i, t->what, rate, t->offered_cps, ok, xp_cs_failed(t), t->fail_timeout, t->fail_reset, t->fail_unreach,
		t->in_flight, t->mode == XP_CS_TEARDOWN ? ", closes given up counted too" : "", start, verdict(rec),
		t->short_of_target && t->held_back_by ? ", held back by the " : "",
		t->short_of_target && t->held_back_by ? t->held_back_by : "");
}

static const char *unit_of(enum xp_cs_mode m)
{
	return m == XP_CS_TEARDOWN ? "FIN closes/s" : "connections/s";
}

void xp_cs_report_text(FILE *f, const struct xp_cs_run *r)
{
	const struct xp_cs_job *o = r->o;
	fprintf(f, "Connection search: %s, %s -> %s, trials of %g s, resolution %g %%, %u trials in %.0f s\n",
		xp_cs_mode_name(r->mode), o->spec->host, o->spec->host, o->cs.trial_s, o->cs.res_pct, r->trials, r->seconds);
	fprintf(f, "Each trial started from a drained table: %s\n",
		r->table ? "probes at --search-floor accepted, then the device's live conntrack entries back within 64 of "
			   "its count before the search" :
			   "probes at --search-floor accepted, --search-settle, probes again (the device's table "
			   "itself is not visible from here: --device-netns reads it)");
	fprintf(f, "%4s %-9s %12s %12s %10s %10s %9s %9s %7s %7s %-7s\n", "#", "kind",
		r->mode == XP_CS_CAPACITY ? "held/asked" : "asked /s", "offered /s", "started", "ok", "failed",
		"table@0", "probes", "drain s", "verdict");
	for (unsigned i = 0; i < r->n; i++) {
		const struct xp_cs_rec *rec = &r->recs[i];
		const struct xp_cs_trial *t = &rec->t;
		if (!strcmp(t->what, "probe"))
			continue; /* in the lines on stderr and in -J */
		char asked[32], table[24] = "-";
		if (r->mode == XP_CS_CAPACITY)
			snprintf(asked, sizeof(asked), "%" PRIu64, t->want);
		else if (t->target_cps > 0)
			snprintf(asked, sizeof(asked), "%.0f", t->target_cps);
		else
			snprintf(asked, sizeof(asked), "max");
		if (t->table_known)
			snprintf(table, sizeof(table), "%" PRIu64, t->table_at_start);
		fprintf(f, "%4u %-9s %12s %12.0f %10" PRIu64 " %10" PRIu64 " %9" PRIu64 " %9s %7u %7.1f %-7s\n", i + 1,
			t->what, asked, t->offered_cps, t->started, xp_cs_ok(t), xp_cs_failed(t), table, t->probes,
			t->drain_s, verdict(rec));
	}
	if (r->error)
		fprintf(f, "Search not finished: %s\n", r->error);
	else if (r->mode == XP_CS_CAPACITY) {
		if (!r->capacity)
			fprintf(f, "Capacity: no trial held all its connections\n");
		else
			fprintf(f, "Capacity: %" PRIu64 " connections held at once%s (opened at %.0f/s)\n", r->capacity,
				r->at_max ? ", every one -P asked: at least that many (raise -P)" : "", o->spec->cps);
	} else if (!r->rate)
		fprintf(f, "%s: no trial passed (the lowest tried failed connections; --search-floor %.0f)\n",
			r->mode == XP_CS_TEARDOWN ? "Teardown rate" : "Connection rate", o->cs.floor);
	else
		fprintf(f, "%s: %.0f %s with no failed connection%s%s\n",
			r->mode == XP_CS_TEARDOWN ? "Teardown rate" : "Connection rate", r->rate, unit_of(r->mode),
			r->sender_limited ? " - sender-limited: the device took all the sender offered" : "",
			r->calib_window_full && r->rate >= r->ceiling ? " - the top was set by the device's drops in the "
									 "calibration, not by the sender: give --search-ceiling" : "");
}

struct json_object *xp_cs_trial_json(unsigned i, const struct xp_cs_rec *rec)
{
	const struct xp_cs_trial *t = &rec->t;
	struct json_object *o = json_object_new_object();
#define U(k, v) json_object_object_add(o, k, json_object_new_int64((int64_t)(v)))
#define D(k, v) json_object_object_add(o, k, json_object_new_double(v))
	U("index", i);
	json_object_object_add(o, "kind", json_object_new_string(t->what));
	json_object_object_add(o, "verdict", json_object_new_string(verdict(rec)));
	D("target_cps", t->target_cps);
	U("want", t->want);
	D("seconds", t->seconds);
	D("offered_cps", t->offered_cps);
	json_object_object_add(o, "short_of_target", json_object_new_boolean(t->short_of_target));
	if (t->held_back_by)
		json_object_object_add(o, "held_back_by", json_object_new_string(t->held_back_by));
	U("started", t->started);
	U("established", t->established);
	U("closed", t->closed);
	U("held", t->held);
	U("ok", xp_cs_ok(t));
	U("failed", xp_cs_failed(t));
	U("failed_timeout", t->fail_timeout);
	U("failed_reset", t->fail_reset);
	U("failed_unreachable", t->fail_unreach);
	U("in_flight_at_end", t->in_flight);
	U("fin_timeout", t->fin_timeout);
	U("syn_retransmitted", t->syn_retx);
	U("fins_sent", t->fins);
	D("wall_start", t->wall_start);
	json_object_object_add(o, "table_at_start", t->table_known ? json_object_new_int64((int64_t)t->table_at_start)
								   : NULL);
	U("probes", t->probes);
	D("drain_seconds", t->drain_s);
	U("error", t->error);
#undef U
#undef D
	return o;
}

struct json_object *xp_cs_settings_json(const struct xp_cs_run *r)
{
	const struct xp_cs_job *o = r->o;
	struct json_object *s = json_object_new_object();
	json_object_object_add(s, "mode", json_object_new_string(xp_cs_mode_name(r->mode)));
	json_object_object_add(s, "server", json_object_new_string(o->spec->host));
	json_object_object_add(s, "trial_seconds", json_object_new_double(o->cs.trial_s));
	json_object_object_add(s, "floor_cps", json_object_new_double(o->cs.floor));
	json_object_object_add(s, "ceiling_cps", r->mode == XP_CS_CAPACITY ? NULL : json_object_new_double(r->ceiling));
	json_object_object_add(s, "ceiling_measured", json_object_new_boolean(r->ceiling_measured));
	json_object_object_add(s, "resolution_percent", json_object_new_double(o->cs.res_pct));
	json_object_object_add(s, "syn_retries", json_object_new_int((int)o->spec->syn_retries));
	json_object_object_add(s, "window", json_object_new_int64((int64_t)o->spec->parallel));
	json_object_object_add(s, "drained_by", json_object_new_string(r->table ? "probes and the device table"
									      : "probes and settle"));
	json_object_object_add(s, "table_baseline", r->table ? json_object_new_int64((int64_t)r->baseline) : NULL);
	if (r->mode == XP_CS_CAPACITY)
		json_object_object_add(s, "open_cps", json_object_new_double(o->spec->cps));
	return s;
}

struct json_object *xp_cs_result_json(const struct xp_cs_run *r)
{
	struct json_object *res = json_object_new_object();
	json_object_object_add(res, "trials", json_object_new_int((int)r->trials));
	json_object_object_add(res, "seconds", json_object_new_double(r->seconds));
	if (r->mode == XP_CS_CAPACITY) {
		json_object_object_add(res, "capacity", json_object_new_int64((int64_t)r->capacity));
		json_object_object_add(res, "at_max", json_object_new_boolean(r->at_max));
	} else {
		json_object_object_add(res, "rate_cps", json_object_new_double(r->rate));
		json_object_object_add(res, "sender_limited", json_object_new_boolean(r->sender_limited));
		json_object_object_add(res, "calibration_unanswered", json_object_new_int64((int64_t)r->calib_lost));
		json_object_object_add(res, "top_set_by_drops", json_object_new_boolean(r->calib_window_full));
	}
	json_object_object_add(res, "error", r->error ? json_object_new_string(r->error) : NULL);
	return res;
}
