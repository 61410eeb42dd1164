/*
 * Reports of socket tests (fireperf-style): connections open, new and failed
 * per second and payload throughput from the client's sockets, the server's
 * accepts, and beside them what the server's XDP program counted (SYNs,
 * frames, L2 bits) in count-and-pass mode.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report/report.h"
#include "util/units.h"

void xp_report_sock_start(struct xp_report *r, const struct xp_report_info *i)
{
	fprintf(r->out, "Client %s -> server %s, %s test over TCP/IPv%d sockets, ports %u:%u, %u connection%s, %.0f s\n",
		i->client, i->server, i->test, i->family, i->port_lo, i->port_hi, i->parallel,
		i->parallel == 1 ? "" : "s", i->duration);
	fprintf(r->out, "Server counts with XDP (%s mode, count and pass) on %s\n", i->server_xdp_mode,
		i->server_dev);
	fflush(r->out);
}

struct json_object *xp_sock_figs_json(const struct xp_sock_figs *f, double secs)
{
	struct json_object *o = json_object_new_object();
	double s = secs > 0 ? secs : NAN;
#define U(k, v) json_object_object_add(o, k, json_object_new_int64((int64_t)(v)))
#define D(k, v) json_object_object_add(o, k, isfinite(v) ? json_object_new_double(v) : NULL)
	U("established", f->conn_ok);
	U("failed", f->conn_fail);
	U("reset", f->conn_reset);
	U("timed_out", f->conn_timeout);
	U("closed", f->conn_closed);
	U("open", f->open_now);
	U("payload_bytes", f->payload_bytes);
	D("connections_per_second", f->conn_ok / s);
	D("payload_bits_per_second", f->payload_bytes * 8.0 / s);
	U("server_accepted", f->s_accepted);
	U("server_closed", f->s_closed);
	U("server_resets", f->s_resets);
	U("server_open", f->s_open_now);
	U("server_bytes_received", f->s_bytes_rx);
	D("server_accepts_per_second", f->s_accepted / s);
#undef U
#undef D
	return o;
}

void xp_report_sock_line(struct xp_report *r, const char *tag, const struct xp_period *p)
{
	const struct xp_sock_figs *f = &p->sock;
	double s = p->t1 - p->t0 > 0 ? p->t1 - p->t0 : NAN;
	char a[32], b[32], c[32], d[32], e[32], g[32];

	if (r->lines++ % 20 == 0)
		fprintf(r->out, "%-5s %-13s %8s %11s %8s %14s | %11s %8s | %11s %12s %14s\n", "[ ID]", "Interval",
			"Open", "New", "Errors", "Sent", "Srv accept", "Srv open", "XDP SYN", "XDP frames",
			"XDP L2");
	fprintf(r->out, "%-5s %5.2f-%-6.2f s %8" PRIu64 " %11s %8" PRIu64 " %14s | %11s %8" PRIu64 " | %11s %12s %14s\n",
		tag, p->t0, p->t1, f->open_now, xp_fmt_rate(f->conn_ok / s, "c/s", a, sizeof(a)),
		f->conn_fail + f->conn_reset + f->conn_timeout, xp_fmt_rate(f->payload_bytes * 8.0 / s, "bit/s", b, sizeof(b)),
		xp_fmt_rate(f->s_accepted / s, "c/s", c, sizeof(c)), f->s_open_now,
		xp_fmt_rate(p->rx.tcp_syn / s, "/s", d, sizeof(d)), xp_fmt_rate(p->rx.pkts / s, "pps", e, sizeof(e)),
		xp_fmt_rate(l2_bits(p->rx.pkts, p->rx.bytes) / s, "bit/s", g, sizeof(g)));
	fflush(r->out);
}

void xp_report_sock_end(struct xp_report *r, const struct xp_summary *sum)
{
	const struct xp_period *p = &sum->total;
	const struct xp_sock_figs *f = &p->sock;
	double s = p->t1 - p->t0 > 0 ? p->t1 - p->t0 : NAN;
	char a[32], b[32], c[32];

	fprintf(r->out, "- - - - - - - - - - - - - - - - - - - - - - - - -\n");
	xp_report_sock_line(r, "[SUM]", p);
	fprintf(r->out, "Connections  %12" PRIu64 " established  %s  (client)\n", f->conn_ok,
		xp_fmt_rate(f->conn_ok / s, "connections/s", a, sizeof(a)));
	fprintf(r->out, "             %12" PRIu64 " failed  %" PRIu64 " reset  %" PRIu64 " timed out  %" PRIu64
			" open at most\n",
		f->conn_fail, f->conn_reset, f->conn_timeout, f->open_now);
	fprintf(r->out, "Server       %12" PRIu64 " accepted     %s  %" PRIu64 " open at most\n", f->s_accepted,
		xp_fmt_rate(f->s_accepted / s, "connections/s", a, sizeof(a)), f->s_open_now);
	fprintf(r->out, "Payload      %12" PRIu64 " bytes sent   %s  (server read %" PRIu64 " bytes)\n",
		f->payload_bytes, xp_fmt_rate(f->payload_bytes * 8.0 / s, "bit/s", b, sizeof(b)), f->s_bytes_rx);
	fprintf(r->out, "XDP counted  %12" PRIu64 " SYNs  %s  %" PRIu64 " frames  %s  L2 %s\n",
		(uint64_t)p->rx.tcp_syn, xp_fmt_rate(p->rx.tcp_syn / s, "SYN/s", a, sizeof(a)), (uint64_t)p->rx.pkts,
		xp_fmt_rate(p->rx.pkts / s, "pps", b, sizeof(b)),
		xp_fmt_rate(l2_bits(p->rx.pkts, p->rx.bytes) / s, "bit/s", c, sizeof(c)));
	xp_report_tail(r, sum);
}
