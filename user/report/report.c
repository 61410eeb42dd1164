#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "proto/messages.h"
#include "util/units.h"

void xp_report_init(struct xp_report *r, enum xp_report_format fmt, FILE *out)
{
	memset(r, 0, sizeof(*r));
	r->fmt = fmt;
	r->out = out;
	if (fmt == XP_REPORT_JSON) {
		r->doc = json_object_new_object();
		r->intervals = json_object_new_array();
	}
}

void xp_report_free(struct xp_report *r)
{
	json_object_put(r->intervals); /* NULL once the document owns it */
	json_object_put(r->doc);
	r->doc = r->intervals = NULL;
}

static void add_d(struct json_object *o, const char *k, double v)
{
	/* JSON has no NaN/inf; report them as null. */
	json_object_object_add(o, k, isfinite(v) ? json_object_new_double(v) : NULL);
}

static void add_u(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

static void add_s(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, v ? json_object_new_string(v) : NULL);
}

struct json_object *xp_report_info_json(const struct xp_report_info *i)
{
	struct json_object *o = json_object_new_object();
	add_s(o, "test", i->test);
	add_s(o, "client", i->client);
	add_s(o, "server", i->server);
	add_s(o, "dev", i->dev);
	add_s(o, "server_dev", i->server_dev);
	add_s(o, "engine", i->engine);
	add_s(o, "engine_mode", i->engine_mode);
	add_s(o, "server_xdp_mode", i->server_xdp_mode);
	add_s(o, "proto", i->proto);
	add_u(o, "ip_version", (uint64_t)i->family);
	add_u(o, "frame_size", i->frame_size);
	add_u(o, "queues", i->queues);
	add_u(o, "port_lo", i->port_lo);
	add_u(o, "port_hi", i->port_hi);
	add_u(o, "cport_lo", i->cport_lo);
	add_u(o, "cport_hi", i->cport_hi);
	add_d(o, "duration", i->duration);
	add_d(o, "interval", i->interval);
	add_d(o, "target_pps", i->target_pps);
	if (i->parallel)
		add_u(o, "parallel", i->parallel);
	if (i->figures == XP_FIGS_HANDSHAKES) {
		json_object_object_add(o, "peer", json_object_new_string(i->peer_kernel ? "kernel" : "xdp"));
		add_d(o, "target_cps", i->target_cps);
		add_s(o, "client_xdp_mode", i->client_xdp_mode);
	}
	return o;
}

void xp_rates_of(const struct xp_period *p, struct xp_rates *r)
{
	r->secs = p->t1 - p->t0;
	double s = r->secs > 0 ? r->secs : NAN;
	r->tx_pps = p->tx_pkts / s;
	r->tx_l1 = l1_bits(p->tx_pkts, p->tx_bytes) / s;
	r->tx_l2 = l2_bits(p->tx_pkts, p->tx_bytes) / s;
	r->rx_pps = p->rx.pkts / s;
	r->rx_l1 = l1_bits(p->rx.pkts, p->rx.bytes) / s;
	r->rx_l2 = l2_bits(p->rx.pkts, p->rx.bytes) / s;
	r->lost = (int64_t)p->tx_pkts - (int64_t)p->rx.pkts;
	r->loss_pct = p->tx_pkts ? 100.0 * (double)r->lost / (double)p->tx_pkts : 0;
}

struct json_object *xp_period_json(const struct xp_period *p)
{
	struct xp_rates r;
	xp_rates_of(p, &r);
	struct json_object *o = json_object_new_object();
	add_d(o, "start", p->t0);
	add_d(o, "end", p->t1);
	add_d(o, "seconds", r.secs);
	struct json_object *tx = json_object_new_object();
	add_u(tx, "packets", p->tx_pkts);
	add_u(tx, "bytes", p->tx_bytes);
	add_d(tx, "packets_per_second", r.tx_pps);
	add_d(tx, "bits_per_second_l1", r.tx_l1);
	add_d(tx, "bits_per_second_l2", r.tx_l2);
	json_object_object_add(o, "sent", tx);
	struct json_object *rx = json_object_new_object();
	add_u(rx, "packets", p->rx.pkts);
	add_u(rx, "bytes", p->rx.bytes);
	add_d(rx, "packets_per_second", r.rx_pps);
	add_d(rx, "bits_per_second_l1", r.rx_l1);
	add_d(rx, "bits_per_second_l2", r.rx_l2);
	json_object_object_add(rx, "counters", xp_counters_to_json(&p->rx));
	json_object_object_add(o, "received", rx);
	switch (p->figures) {
	case XP_FIGS_HANDSHAKES:
		json_object_object_add(o, "connections", xp_hs_figs_json(p, r.secs));
		break;
	case XP_FIGS_SOCKETS:
		/* A socket test sends no frames of its own count: loss is not defined. */
		json_object_object_add(o, "sockets", xp_sock_figs_json(&p->sock, r.secs));
		break;
	case XP_FIGS_FRAMES:
		xp_frames_add_loss(o, p);
		break;
	}
	return o;
}

struct json_object *xp_summary_json(const struct xp_summary *s)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "sum", xp_period_json(&s->total));
	struct json_object *cpu = json_object_new_object();
	add_d(cpu, "client_percent", s->client_cpu_pct);
	if (s->server_cpu_pct >= 0)
		add_d(cpu, "server_percent", s->server_cpu_pct);
	json_object_object_add(o, "cpu_utilization_percent", cpu);
	add_u(o, "tx_errors", s->tx_errors);
	json_object_object_add(o, "interrupted", json_object_new_boolean(s->interrupted));
	if (s->error)
		add_s(o, "error", s->error);
	return o;
}

static void emit_stream(struct xp_report *r, const char *event, struct json_object *data)
{
	struct json_object *o = json_object_new_object();
	add_s(o, "event", event);
	json_object_object_add(o, "data", data);
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(r->out);
	json_object_put(o);
}

const char *xp_fmt_rate(double v, const char *unit, char *buf, size_t len)
{
	char n[32];
	snprintf(buf, len, "%s%s", fmt_si(v, n, sizeof(n)), unit);
	return buf;
}

/*
 * One line format per kind of figures: the report never asks which engine
 * ran, only what kind of figures it reports.
 */
struct figs_format {
	void (*start)(struct xp_report *r, const struct xp_report_info *i);
	void (*line)(struct xp_report *r, const char *tag, const struct xp_period *p);
	void (*end)(struct xp_report *r, const struct xp_summary *s);
};

static const struct figs_format formats[] = {
	[XP_FIGS_FRAMES] = { xp_report_frames_start, xp_report_frames_line, xp_report_frames_end },
	[XP_FIGS_SOCKETS] = { xp_report_sock_start, xp_report_sock_line, xp_report_sock_end },
	[XP_FIGS_HANDSHAKES] = { xp_report_hs_start, xp_report_hs_line, xp_report_hs_end },
};

void xp_report_error(struct xp_report *r, const char *msg)
{
	if (r->fmt == XP_REPORT_JSON_STREAM) {
		emit_stream(r, "error", json_object_new_string(msg));
		return;
	}
	/* A started -J report prints its document, with the error, at the end. */
	if (r->fmt != XP_REPORT_JSON || r->started || r->keep_doc)
		return;
	struct json_object *o = json_object_new_object();
	add_s(o, "error", msg);
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	fflush(r->out);
	json_object_put(o);
}

void xp_report_start(struct xp_report *r, const struct xp_report_info *i)
{
	r->started = true;
	r->figures = i->figures;
	r->peer_kernel = i->peer_kernel;
	if (r->fmt == XP_REPORT_JSON)
		json_object_object_add(r->doc, "start", xp_report_info_json(i));
	else if (r->fmt == XP_REPORT_JSON_STREAM)
		emit_stream(r, "start", xp_report_info_json(i));
	else
		formats[r->figures].start(r, i);
}

void xp_report_interval(struct xp_report *r, const struct xp_period *p)
{
	if (r->fmt == XP_REPORT_JSON)
		json_object_array_add(r->intervals, xp_period_json(p));
	else if (r->fmt == XP_REPORT_JSON_STREAM)
		emit_stream(r, "interval", xp_period_json(p));
	else
		formats[r->figures].line(r, "[SUM]", p);
}

void xp_report_end(struct xp_report *r, const struct xp_summary *s)
{
	r->ended = true;
	if (r->fmt == XP_REPORT_JSON) {
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
		return;
	}
	if (r->fmt == XP_REPORT_JSON_STREAM) {
		emit_stream(r, "end", xp_summary_json(s));
		return;
	}
	formats[r->figures].end(r, s);
}

void xp_report_tail(struct xp_report *r, const struct xp_summary *s)
{
	if (s->server_cpu_pct >= 0)
		fprintf(r->out, "CPU       client %.1f %%  server %.1f %%  (100 %% = one core)\n", s->client_cpu_pct,
			s->server_cpu_pct);
	else
		fprintf(r->out, "CPU       client %.1f %%  (100 %% = one core)\n", s->client_cpu_pct);
	if (s->interrupted)
		fprintf(r->out, "Interrupted: summary of the test so far.\n");
	if (s->error)
		fprintf(r->out, "Test ended early: %s\n", s->error);
	fflush(r->out);
}
