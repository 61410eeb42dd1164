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
	if (!strcmp(i->engine, "xdp")) {
		json_object_object_add(o, "peer", json_object_new_string(i->peer_kernel ? "kernel" : "xdp"));
		add_d(o, "target_cps", i->target_cps);
		add_s(o, "client_xdp_mode", i->client_xdp_mode);
	}
	return o;
}

/* Figures derived from a period, shared by the text and JSON forms. */
struct rates {
	double secs;
	double tx_pps, tx_l1, tx_l2;
	double rx_pps, rx_l1, rx_l2;
	int64_t lost;
	double loss_pct;
};

static void rates_of(const struct xp_period *p, struct rates *r)
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
	struct rates r;
	rates_of(p, &r);
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
	if (p->has_xconn) {
		json_object_object_add(o, "connections", xp_xconn_json(p, r.secs));
		return o;
	}
	if (p->has_sock) {
		/* A socket test sends no frames of its own count: loss is not defined. */
		json_object_object_add(o, "sockets", xp_sock_figs_json(&p->sock, r.secs));
		return o;
	}
	json_object_object_add(o, "lost_packets", json_object_new_int64(r.lost));
	add_d(o, "loss_percent", r.loss_pct);
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
	fprintf(r->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	fflush(r->out);
	json_object_put(o);
}

const char *xp_fmt_rate(double v, const char *unit, char *buf, size_t len)
{
	char n[32];
	snprintf(buf, len, "%s%s", fmt_si(v, n, sizeof(n)), unit);
	return buf;
}

void xp_report_start(struct xp_report *r, const struct xp_report_info *i)
{
	if (r->fmt == XP_REPORT_JSON) {
		json_object_object_add(r->doc, "start", xp_report_info_json(i));
		return;
	}
	if (r->fmt == XP_REPORT_JSON_STREAM) {
		emit_stream(r, "start", xp_report_info_json(i));
		return;
	}
	char tgt[48] = "unlimited";
	if (i->target_pps > 0)
		xp_fmt_rate(i->target_pps, "pps", tgt, sizeof(tgt));
	r->sock = !strcmp(i->engine, "socket");
	r->xconn = !strcmp(i->engine, "xdp");
	r->peer_kernel = i->peer_kernel;
	if (r->xconn) {
		char cps[48] = "as fast as possible";
		if (i->target_cps > 0)
			xp_fmt_rate(i->target_cps, "SYN/s", cps, sizeof(cps));
		fprintf(r->out, "Client %s -> server %s, %s test with the XDP connection engine, TCP/IPv%d, ports %u:%u -> %u:%u\n",
			i->client, i->server, i->test, i->family, i->cport_lo, i->cport_hi, i->port_lo, i->port_hi);
		char from[48];
		if (i->engine_mode && !strcmp(i->engine_mode, "live"))
			snprintf(from, sizeof(from), "XDP live frames");
		else
			snprintf(from, sizeof(from), "AF_XDP (%s)", i->engine_mode ? i->engine_mode : "-");
		fprintf(r->out, "SYNs from %s on %s, %s; handshakes completed by XDP (%s) on %s\n", from, i->dev, cps,
			i->client_xdp_mode ? i->client_xdp_mode : "?", i->dev);
		if (i->peer_kernel)
			fprintf(r->out, "Server answers with its TCP stack (listeners), counting with XDP (%s, count and pass) on %s\n",
				i->server_xdp_mode, i->server_dev);
		else
			fprintf(r->out, "Server answers with XDP (%s mode, SYN cookies) on %s\n", i->server_xdp_mode,
				i->server_dev);
		fflush(r->out);
		return;
	}
	if (r->sock) {
		fprintf(r->out, "Client %s -> server %s, %s test over TCP/IPv%d sockets, ports %u:%u, %u connection%s, %.0f s\n",
			i->client, i->server, i->test, i->family, i->port_lo, i->port_hi, i->parallel,
			i->parallel == 1 ? "" : "s", i->duration);
		fprintf(r->out, "Server counts with XDP (%s mode, count and pass) on %s\n", i->server_xdp_mode,
			i->server_dev);
		fflush(r->out);
		return;
	}
	fprintf(r->out, "Client %s -> server %s, %s %s/IPv%d, ports %u:%u -> %u:%u\n", i->client, i->server,
		i->test, i->proto, i->family, i->cport_lo, i->cport_hi, i->port_lo, i->port_hi);
	fprintf(r->out, "Sending %u-byte frames on %s with engine %s (%s), %u queue%s, rate %s, %.0f s\n",
		i->frame_size, i->dev, i->engine, i->engine_mode ? i->engine_mode : "-", i->queues,
		i->queues == 1 ? "" : "s", tgt, i->duration);
	fprintf(r->out, "Server counts with XDP (%s mode) on %s\n", i->server_xdp_mode, i->server_dev);
	fflush(r->out);
}

static void text_line(struct xp_report *r, const char *tag, const struct xp_period *p)
{
	struct rates x;
	char a[32], b[32], c[32], d[32], e[32];
	rates_of(p, &x);
	if (r->lines++ % 20 == 0)
		fprintf(r->out, "%-5s %-13s %12s %14s %12s %14s %14s %10s %8s\n", "[ ID]", "Interval",
			"Sent", "Sent L1", "Recv", "Recv L1", "Recv L2", "Lost", "Loss");
	fprintf(r->out, "%-5s %5.2f-%-6.2f s %12s %14s %12s %14s %14s %10" PRId64 " %7.3f%%\n", tag, p->t0,
		p->t1, xp_fmt_rate(x.tx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.tx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.rx_pps, "pps", c, sizeof(c)), xp_fmt_rate(x.rx_l1, "bit/s", d, sizeof(d)),
		xp_fmt_rate(x.rx_l2, "bit/s", e, sizeof(e)), x.lost, x.loss_pct);
	fflush(r->out);
}

void xp_report_interval(struct xp_report *r, const struct xp_period *p)
{
	if (r->fmt == XP_REPORT_JSON)
		json_object_array_add(r->intervals, xp_period_json(p));
	else if (r->fmt == XP_REPORT_JSON_STREAM)
		emit_stream(r, "interval", xp_period_json(p));
	else if (r->xconn)
		xp_report_xconn_line(r, "[SUM]", p);
	else if (r->sock)
		xp_report_sock_line(r, "[SUM]", p);
	else
		text_line(r, "[SUM]", p);
}

void xp_report_end(struct xp_report *r, const struct xp_summary *s)
{
	if (r->fmt == XP_REPORT_JSON) {
		json_object_object_add(r->doc, "intervals", r->intervals);
		json_object_object_add(r->doc, "end", xp_summary_json(s));
		r->intervals = NULL; /* owned by doc now */
		if (r->keep_doc)
			return;
		fprintf(r->out, "%s\n", json_object_to_json_string_ext(r->doc, JSON_C_TO_STRING_PRETTY));
		fflush(r->out);
		return;
	}
	if (r->fmt == XP_REPORT_JSON_STREAM) {
		emit_stream(r, "end", xp_summary_json(s));
		return;
	}
	if (r->xconn) {
		xp_report_xconn_end(r, s);
		return;
	}
	if (r->sock) {
		xp_report_sock_end(r, s);
		return;
	}
	struct rates x;
	char a[32], b[32], c[32];
	const struct xp_period *p = &s->total;
	rates_of(p, &x);
	fprintf(r->out, "- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	text_line(r, "[SUM]", p);
	fprintf(r->out, "Sent      %12" PRIu64 " frames  %12s  L1 %14s  L2 %14s  (client, TX completions)\n",
		p->tx_pkts, xp_fmt_rate(x.tx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.tx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.tx_l2, "bit/s", c, sizeof(c)));
	fprintf(r->out, "Received  %12" PRIu64 " frames  %12s  L1 %14s  L2 %14s  (server, XDP counters)\n",
		(uint64_t)p->rx.pkts, xp_fmt_rate(x.rx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.rx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.rx_l2, "bit/s", c, sizeof(c)));
	fprintf(r->out, "Lost      %12" PRId64 " frames  (%.4f %%)\n", x.lost, x.loss_pct);
	if (s->tx_errors)
		fprintf(r->out, "TX errors %" PRIu64 "\n", s->tx_errors);
	xp_report_tail(r, s);
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
