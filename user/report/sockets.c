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
	char secs[32];
	fprintf(r->out, "Client %s -> server %s, %s test over TCP/IPv%d sockets, ports %u:%u, %u connection%s, %s\n",
		i->client, i->server, i->test, i->family, i->port_lo, i->port_hi, i->parallel,
		i->parallel == 1 ? "" : "s", xp_fmt_secs(i->duration, secs, sizeof(secs)));
	/* A server that counts socket tests with TC says "tcx" (or "tc") here: the
	 * XDP columns below are then TC's counts, which see GSO packets. */
	if (i->server_xdp_mode && !strncmp(i->server_xdp_mode, "tc", 2))
		fprintf(r->out, "Server counts with TC (%s ingress, no XDP on the path) on %s: the XDP columns are "
				"segments as the stack sees them (a GSO packet as its segments)\n",
			i->server_xdp_mode, i->server_dev);
	else
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
	U("in_flight_at_end", f->in_flight);
	U("server_listen_overflows", f->s_listen_overflows);
	U("server_listen_drops", f->s_listen_drops);
	U("server_embryonic_resets", f->s_embryonic_rsts);
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

/* Hold tests: how long opening took and how many lasted, instead of an average over the whole run. */
void xp_report_hold_lines(struct xp_report *r, const struct xp_hold_figs *h)
{
	char a[32];
	if (h->all_open_s > 0)
		fprintf(r->out, "Opened       all %" PRIu64 " in %.3f s (%s while opening)\n", h->wanted, h->all_open_s,
			xp_fmt_rate(h->wanted / h->all_open_s, "connections/s", a, sizeof(a)));
	else
		fprintf(r->out, "Opened       never all %" PRIu64 " at once\n", h->wanted);
	if (h->server_view)
		fprintf(r->out, "Still open   %12" PRIu64 " at the end (client), %" PRIu64 " (server)\n", h->open_at_end,
			h->s_open_at_end);
	else
		fprintf(r->out, "Still open   %12" PRIu64 " at the end (client)\n", h->open_at_end);
}

/*
 * The client's and the server's counts of one thing, side by side: each
 * connection the server's kernel completed is either accepted, or dropped
 * because its accept queue was full (the client saw it established); say so
 * rather than leave two numbers that disagree.
 */
static void agreement_line(struct xp_report *r, const struct xp_sock_figs *f)
{
	int64_t d = (int64_t)f->conn_ok - (int64_t)f->s_accepted - (int64_t)f->s_listen_overflows -
		    (int64_t)f->s_embryonic_rsts;
	if (f->conn_ok == f->s_accepted && !f->s_listen_overflows && !f->s_embryonic_rsts)
		return;
	fprintf(r->out, "Counts       established %" PRIu64 " = accepted %" PRIu64 " + %" PRIu64
			" dropped by full accept queues (server ListenOverflows) + %" PRIu64
			" reset before the server completed them (EmbryonicRsts: the RST overtook the ACK) %+" PRId64 "%s\n",
		f->conn_ok, f->s_accepted, f->s_listen_overflows, f->s_embryonic_rsts, d,
		d > 0 ? " (still queued at the server when it stopped counting, or dropped by the path)" :
		d < 0 ? " (accepted after the client stopped counting, or other tests on the server)" : "");
	if (f->s_listen_overflows)
		fprintf(r->out, "             the server's accept queues overflowed: raise net.core.somaxconn there, or "
				"lower -P\n");
}

void xp_report_sock_end(struct xp_report *r, const struct xp_summary *sum)
{
	const struct xp_period *p = &sum->total;
	const struct xp_sock_figs *f = &p->sock;
	double s = p->t1 - p->t0 > 0 ? p->t1 - p->t0 : NAN;
	char a[32], b[32], c[32], open[64] = "";

	xp_report_head(r, sum, NULL);
	/* Rates over a hold test's whole run would average an opening burst with the idle hold: only counts below. */
	if (!sum->hold.wanted)
		xp_report_sock_line(r, "[SUM]", p);
	/* -x closes each connection at once: "0 open" would only mislead. */
	if (sum->kind != XP_TEST_CONNECT)
		snprintf(open, sizeof(open), "  %" PRIu64 " open at most", f->open_now);
	if (sum->hold.wanted)
		fprintf(r->out, "Connections  %12" PRIu64 " established  (client)\n", f->conn_ok);
	else
		fprintf(r->out, "Connections  %12" PRIu64 " established  %s  (client)\n", f->conn_ok,
			xp_fmt_rate(f->conn_ok / s, "connections/s", a, sizeof(a)));
	fprintf(r->out, "             %12" PRIu64 " failed  %" PRIu64 " reset  %" PRIu64 " timed out  %" PRIu64
			" in flight at the end%s\n",
		f->conn_fail, f->conn_reset, f->conn_timeout, f->in_flight, open);
	fprintf(r->out, "Server       %12" PRIu64 " accepted     %s%s%" PRIu64 " open at most\n", f->s_accepted,
		sum->hold.wanted ? "" : xp_fmt_rate(f->s_accepted / s, "connections/s", a, sizeof(a)),
		sum->hold.wanted ? "" : "  ", f->s_open_now);
	agreement_line(r, f);
	if (sum->hold.wanted)
		xp_report_hold_lines(r, &sum->hold);
	fprintf(r->out, "Payload      %12" PRIu64 " bytes sent   %s  (server read %" PRIu64 " bytes)\n",
		f->payload_bytes, xp_fmt_rate(f->payload_bytes * 8.0 / s, "bit/s", b, sizeof(b)), f->s_bytes_rx);
	fprintf(r->out, "XDP counted  %12" PRIu64 " SYNs  %s  %" PRIu64 " frames  %s  L2 %s\n",
		(uint64_t)p->rx.tcp_syn, xp_fmt_rate(p->rx.tcp_syn / s, "SYN/s", a, sizeof(a)), (uint64_t)p->rx.pkts,
		xp_fmt_rate(p->rx.pkts / s, "pps", b, sizeof(b)),
		xp_fmt_rate(l2_bits(p->rx.pkts, p->rx.bytes) / s, "bit/s", c, sizeof(c)));
	xp_report_tail(r, sum);
}
