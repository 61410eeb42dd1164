/*
 * Where a test's results go: one interface (start, interval, end, error) and
 * four sinks behind it. Text lines (each kind of figures its own, frames.c,
 * sockets.c, handshakes.c), one -J document, a --json-stream of events, or
 * memory: the suites' trials keep what they need and print nothing (they
 * read the summary the client returns, and the error here).
 */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "util/json_add.h"

struct xp_sink {
	void (*start)(struct xp_report *r, const struct xp_report_info *i);
	void (*interval)(struct xp_report *r, const struct xp_period *p);
	void (*end)(struct xp_report *r, const struct xp_summary *s);
	void (*error)(struct xp_report *r, const char *msg);
};

/* ---- text: one line format per kind of figures; the report never asks
 * which engine ran, only what kind of figures it reports. ---- */

struct figs_format {
	void (*start)(struct xp_report *r, const struct xp_report_info *i);
	void (*line)(struct xp_report *r, const char *tag, const struct xp_period *p);
	void (*end)(struct xp_report *r, const struct xp_summary *s);
};

static const struct figs_format formats[] = {
	[XP_FIGS_FRAMES] = { xp_report_frames_start, xp_report_frames_line, xp_report_frames_end },
	[XP_FIGS_RECEIVED] = { xp_report_recv_start, xp_report_recv_line, xp_report_recv_end },
	[XP_FIGS_SOCKETS] = { xp_report_sock_start, xp_report_sock_line, xp_report_sock_end },
	[XP_FIGS_HANDSHAKES] = { xp_report_hs_start, xp_report_hs_line, xp_report_hs_end },
};

static void text_start(struct xp_report *r, const struct xp_report_info *i)
{
	formats[r->figures].start(r, i);
	/* Sockets and handshakes: say that their frames carry no stamp rather than show no latency. */
	if ((i->figures == XP_FIGS_SOCKETS || i->figures == XP_FIGS_HANDSHAKES) && i->stamp_note[0]) {
		fprintf(r->out, "Stamps: %s\n", i->stamp_note);
		fflush(r->out);
	}
}

static void text_interval(struct xp_report *r, const struct xp_period *p)
{
	formats[r->figures].line(r, "[SUM]", p);
	xp_report_flows_ival_text(r, p);
}

static void text_end(struct xp_report *r, const struct xp_summary *s)
{
	formats[r->figures].end(r, s);
	xp_report_flows_text(r, s);
}

/* The message is on stderr already. */
static void text_error(struct xp_report *r, const char *msg)
{
}

/* ---- -J: one document, printed at the end ---- */

static void json_start(struct xp_report *r, const struct xp_report_info *i)
{
	json_object_object_add(r->doc, "start", xp_report_info_json(i));
}

static void json_interval(struct xp_report *r, const struct xp_period *p)
{
	json_object_array_add(r->intervals, xp_period_json(p));
}

static void json_end(struct xp_report *r, const struct xp_summary *s)
{
	json_object_object_add(r->doc, "intervals", r->intervals);
	json_object_object_add(r->doc, "end", xp_summary_json(s));
	/* Where iperf3 puts it, so scripts find an error in one place. */
	if (s->error)
		add_s(r->doc, "error", s->error);
	r->intervals = NULL; /* owned by doc now */
	if (r->keep_doc)
		return;
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(r->doc, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(r->out);
}

static void json_error(struct xp_report *r, const char *msg)
{
	/* A started -J report prints its document, with the error, at the end. */
	if (r->started || r->keep_doc)
		return;
	struct json_object *o = json_object_new_object();
	add_s(o, "error", msg);
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(r->out);
	json_object_put(o);
}

/* ---- --json-stream: an event a line ---- */

static void emit_stream(struct xp_report *r, const char *event, struct json_object *data)
{
	struct json_object *o = json_object_new_object();
	add_s(o, "event", event);
	json_object_object_add(o, "data", data);
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(r->out);
	json_object_put(o);
}

static void stream_start(struct xp_report *r, const struct xp_report_info *i)
{
	emit_stream(r, "start", xp_report_info_json(i));
}

static void stream_interval(struct xp_report *r, const struct xp_period *p)
{
	emit_stream(r, "interval", xp_period_json(p));
}

static void stream_end(struct xp_report *r, const struct xp_summary *s)
{
	emit_stream(r, "end", xp_summary_json(s));
}

static void stream_error(struct xp_report *r, const char *msg)
{
	emit_stream(r, "error", json_object_new_string(msg));
}

/* ---- memory: nothing printed; what came is kept in r->mem ---- */

static void mem_start(struct xp_report *r, const struct xp_report_info *i)
{
	if (r->mem.hook && r->mem.hook->start)
		r->mem.hook->start(r->mem.hook->arg, i);
}

static void mem_interval(struct xp_report *r, const struct xp_period *p)
{
	r->mem.intervals++;
	r->mem.last = *p;
	if (r->mem.hook && r->mem.hook->interval)
		r->mem.hook->interval(r->mem.hook->arg, p);
	r->mem.last.flows = NULL; /* the client's, freed once reported */
	r->mem.last.nflows = 0;
}

/* A test with flows: a copy of each flow's figures (the client frees its own when the test ends). */
static void mem_end(struct xp_report *r, const struct xp_summary *s)
{
	if (r->mem.hook && r->mem.hook->end)
		r->mem.hook->end(r->mem.hook->arg, s);
	if (!s->nflows || !s->flows)
		return;
	free(r->mem.flows);
	r->mem.nflows = 0;
	r->mem.flows = malloc(s->nflows * sizeof(*r->mem.flows));
	if (!r->mem.flows)
		return; /* without memory the suite has the aggregate only */
	memcpy(r->mem.flows, s->flows, s->nflows * sizeof(*r->mem.flows));
	r->mem.nflows = s->nflows;
}

static void mem_error(struct xp_report *r, const char *msg)
{
	snprintf(r->mem.error, sizeof(r->mem.error), "%s", msg);
}

static const struct xp_sink sinks[] = {
	[XP_REPORT_TEXT] = { text_start, text_interval, text_end, text_error },
	[XP_REPORT_JSON] = { json_start, json_interval, json_end, json_error },
	[XP_REPORT_JSON_STREAM] = { stream_start, stream_interval, stream_end, stream_error },
	[XP_REPORT_MEMORY] = { mem_start, mem_interval, mem_end, mem_error },
};

const struct xp_report_tap *xp_report_tap;

void xp_report_init(struct xp_report *r, enum xp_report_format fmt, FILE *out)
{
	memset(r, 0, sizeof(*r));
	r->fmt = fmt;
	r->sink = &sinks[fmt];
	r->out = out;
	r->log = stderr;
	if (fmt == XP_REPORT_JSON) {
		r->doc = json_object_new_object();
		r->intervals = json_object_new_array();
	}
}

void xp_report_free(struct xp_report *r)
{
	free(r->mem.flows);
	r->mem.flows = NULL;
	r->mem.nflows = 0;
	json_object_put(r->intervals); /* NULL once the document owns it */
	json_object_put(r->doc);
	r->doc = r->intervals = NULL;
}

void xp_report_error(struct xp_report *r, const char *msg)
{
	r->sink->error(r, msg);
	if (xp_report_tap)
		xp_report_tap->error(r, msg);
}

void xp_report_start(struct xp_report *r, const struct xp_report_info *i)
{
	r->started = true;
	r->figures = i->figures;
	r->peer_kernel = i->peer_kernel;
	r->client_only = i->client_only;
	r->sink->start(r, i);
	if (xp_report_tap)
		xp_report_tap->start(r, i);
}

void xp_report_interval(struct xp_report *r, const struct xp_period *p)
{
	r->sink->interval(r, p);
	if (xp_report_tap)
		xp_report_tap->interval(r, p);
}

void xp_report_end(struct xp_report *r, const struct xp_summary *s)
{
	r->ended = true;
	r->sink->end(r, s);
	if (xp_report_tap)
		xp_report_tap->end(r, s);
}
