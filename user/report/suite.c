/*
 * A suite's report (the RFC 2544 suite, the connection searches): the same
 * sink as a test's (report.h), with a suite's records. Its progress lines
 * (the start, each trial, notes, its error) go to r->log (stderr) in every
 * format, as the trials take minutes; each trial's record joins -J's
 * "trials" array as it comes; the end prints the text tables, or -J's one
 * document {NAME: settings, "trials": [...], "result": {...}}. Memory keeps
 * a count of the trials and the error.
 */
#include <stdarg.h>
#include <string.h>

#include "report/report.h"

void xp_report_suite_line(struct xp_report *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (r->fmt != XP_REPORT_MEMORY && r->log) {
		vfprintf(r->log, fmt, ap);
		fflush(r->log);
	}
	va_end(ap);
}

void xp_report_suite_trial(struct xp_report *r, const char *line, struct json_object *trial)
{
	r->started = true;
	r->mem.intervals++;
	if (line)
		xp_report_suite_line(r, "%s", line);
	if (r->fmt == XP_REPORT_JSON && r->intervals)
		json_object_array_add(r->intervals, trial);
	else
		json_object_put(trial);
}

void xp_report_suite_error(struct xp_report *r, const char *msg)
{
	snprintf(r->mem.error, sizeof(r->mem.error), "%s", msg);
	xp_report_suite_line(r, "xdpperf: %s\n", msg);
}

void xp_report_suite_end(struct xp_report *r, const char *name, struct json_object *settings, const char *text,
			 struct json_object *result)
{
	r->ended = true;
	if (r->fmt == XP_REPORT_TEXT && text) {
		fputs(text, r->out);
		fflush(r->out);
	}
	if (r->fmt != XP_REPORT_JSON || !r->doc) {
		json_object_put(settings);
		json_object_put(result);
		return;
	}
	json_object_object_add(r->doc, name, settings);
	json_object_object_add(r->doc, "trials", r->intervals);
	r->intervals = NULL; /* owned by doc now */
	json_object_object_add(r->doc, "result", result);
	if (r->keep_doc)
		return;
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(r->doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(r->out);
}
