/*
 * Reports of XDP connection tests: SYNs sent (live frames or AF_XDP), what the client's
 * XDP program answered, and the connections the server completed (its XDP
 * program's validated SYN cookies, or with --peer kernel its accepts).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report/report.h"
#include "bpf/window.h"

const char *xp_keepalive_note(const struct xp_period *p, char *buf, size_t len)
{
	if (!p->rx.keepalive_unchecked)
		return NULL;
	snprintf(buf, len, "Warning: %" PRIu64 " pure ACKs not checked: the server's keepalive search budget was spent "
		 "(a flood of pure ACKs to the test's ports?); they count neither as keepalives nor as invalid cookies",
		 (uint64_t)p->rx.keepalive_unchecked);
	return buf;
}

/* The test's TCP frames the server's responder did not answer (bpf/server.h:
 * with the answered ones they add up to all of them). */
static uint64_t not_answered(const struct xp_period *p)
{
	const struct xp_counters *c = &p->rx;
	return c->noreply_addr + c->noreply_shape + c->noreply_csum + c->noreply_room + c->noreply_other;
}

void xp_report_hs_start(struct xp_report *r, const struct xp_report_info *i)
{
	char cps[48] = "as fast as possible";
	if (i->target_cps > 0)
		xp_fmt_rate(i->target_cps, "SYN/s", cps, sizeof(cps));
	char secs[32];
	fprintf(r->out, "Client %s -> server %s, %s test with the XDP connection engine, TCP/IPv%d, ports %u:%u -> %u:%u, %s\n",
		i->client, i->server, i->test, i->family, i->cport_lo, i->cport_hi, i->port_lo, i->port_hi,
		xp_fmt_secs(i->duration, secs, sizeof(secs)));
	char from[48];
	if (i->engine_mode && !strcmp(i->engine_mode, "live"))
		snprintf(from, sizeof(from), "XDP live frames");
	else
		snprintf(from, sizeof(from), "AF_XDP (%s)", i->engine_mode ? i->engine_mode : "-");
	fprintf(r->out, "SYNs from %s on %s, %s; handshakes completed by XDP (%s) on %s\n", from, i->dev, cps,
		i->client_xdp_mode ? i->client_xdp_mode : "?", i->dev);
	if (i->window) {
		char ka[48] = "";
		if (i->keepalive_s > 0)
			snprintf(ka, sizeof(ka), ", keepalives every %g s", i->keepalive_s);
		fprintf(r->out, "Window -P %u (%s), SYNs sent again after 1 s, doubling, %u times%s; %zu bytes of state "
				"per connection\n", i->window, !strcmp(i->test, "hold") ? "connections held" : "handshakes in flight",
			i->syn_retries, ka, sizeof(struct xp_win_slot) + sizeof(struct xp_win_cell));
	}
	if (i->client_only)
		fprintf(r->out, "Server has no xdpperf (no control channel): its TCP stack answers; every figure below is "
				"the client's own (SYNs sent, SYN-ACKs seen, ACKs sent)\n");
	else if (i->peer_kernel)
		fprintf(r->out, "Server answers with its TCP stack (listeners), counting with XDP (%s, count and pass) on %s\n",
			i->server_xdp_mode, i->server_dev);
	else
		fprintf(r->out, "Server answers with XDP (%s mode, SYN cookies) on %s\n", i->server_xdp_mode,
			i->server_dev);
	fflush(r->out);
}

struct json_object *xp_hs_figs_json(const struct xp_period *p, double secs)
{
	const struct xp_handshake_figs *x = &p->hs;
	struct json_object *o = json_object_new_object();
	double s = secs > 0 ? secs : NAN;
	uint64_t est = xp_period_established(p);
#define U(k, v) json_object_object_add(o, k, json_object_new_int64((int64_t)(v)))
#define D(k, v) json_object_object_add(o, k, isfinite(v) ? json_object_new_double(v) : NULL)
	U("syn_sent", x->syn_sent);
	U("synack_seen", x->synack_seen);
	U("acks_sent", x->acks_sent);
	U("fins_sent", x->fins_sent);
	U("rst_seen", x->rst_seen);
	U("finack_answered", x->finack_answered);
	U("client_unanswered", x->unanswered);
	U("held_reset_at_end", x->rst_closed);
	/* The window (-P) and what its keeper did; failures by cause. */
	U("window", x->window);
	U("syn_retries", x->syn_retries);
	U("syn_retransmitted", x->syn_retx);
	U("fin_retransmitted", x->fin_retx);
	U("keepalives_sent", x->keepalives);
	U("failed_timeout", x->fail_timeout);
	U("failed_reset", x->fail_reset);
	U("failed_unreachable", x->fail_unreach);
	U("fin_timeout", x->fin_timeout);
	U("synack_duplicates", x->synack_dup);
	U("stale_synack_reset", x->stale_rst);
	U("in_flight_at_end", x->in_flight);
	U("keeper_send_errors", x->send_errors);
	U("established", est);
	D("connections_per_second", est / s);
	D("syn_per_second", x->syn_sent / s);
	U("server_syn_seen", p->rx.tcp_syn);
	U("server_synack_sent", p->rx.synack_sent);
	U("server_rst_sent", p->rx.rst_sent);
	U("server_fin_answered", p->rx.fin_answered);
	U("server_cookie_invalid", p->rx.cookie_invalid);
	U("server_keepalives", p->rx.keepalives); /* held connections' keepalives, by their cookies */
	/* Pure ACKs the server's keepalive search had no budget left for: neither keepalives nor invalid. */
	U("server_keepalive_unchecked", p->rx.keepalive_unchecked);
	/* Frames the responder did not answer, by reason (bpf/server.h). */
	U("server_not_answered", not_answered(p));
	U("server_noreply_addr", p->rx.noreply_addr);
	U("server_noreply_shape", p->rx.noreply_shape);
	U("server_noreply_csum", p->rx.noreply_csum);
	U("server_noreply_room", p->rx.noreply_room);
	U("server_noreply_other", p->rx.noreply_other);
	U("server_data_bytes", p->rx.data_bytes); /* --bytes: established x N when every byte arrived */
	U("server_accepted", p->sock.s_accepted);
#undef U
#undef D
	return o;
}

void xp_report_hs_line(struct xp_report *r, const char *tag, const struct xp_period *p)
{
	const struct xp_handshake_figs *x = &p->hs;
	double s = p->t1 - p->t0 > 0 ? p->t1 - p->t0 : NAN;
	char a[32], b[32], c[32], d[32], e[32], f[32];

	if (r->lines++ % 20 == 0)
		fprintf(r->out, "%-5s %-13s %12s %12s %12s | %13s %12s %12s %9s\n", "[ ID]", "Interval", "SYN sent",
			"SYN-ACK in", "ACK out", r->peer_kernel ? "Accepted" : "Established", "SYN seen",
			r->peer_kernel ? "-" : "RST sent", r->peer_kernel ? "-" : "Invalid");
	fprintf(r->out, "%-5s %5.2f-%-6.2f s %12s %12s %12s | %13s %12s %12s %9" PRIu64 "\n", tag, p->t0, p->t1,
		xp_fmt_rate(x->syn_sent / s, "/s", a, sizeof(a)), xp_fmt_rate(x->synack_seen / s, "/s", b, sizeof(b)),
		xp_fmt_rate(x->acks_sent / s, "/s", c, sizeof(c)),
		xp_fmt_rate(xp_period_established(p) / s, "c/s", d, sizeof(d)),
		xp_fmt_rate(p->rx.tcp_syn / s, "/s", e, sizeof(e)),
		xp_fmt_rate(p->rx.rst_sent / s, "/s", f, sizeof(f)), (uint64_t)p->rx.cookie_invalid);
	fflush(r->out);
}

void xp_report_hs_end(struct xp_report *r, const struct xp_summary *sum)
{
	const struct xp_period *p = &sum->total;
	const struct xp_handshake_figs *x = &p->hs;
	double s = p->t1 - p->t0 > 0 ? p->t1 - p->t0 : NAN;
	uint64_t est = xp_period_established(p);
	char a[32];

	/* More than 1 % unanswered: that first, before any figure can look like a result. */
	xp_report_head(r, sum, sum->diag.cause != XP_DIAG_NONE ? sum->diag.text : NULL);
	/* A figure the server could not check is not a figure: say so before the counts. */
	char kan[XP_KA_NOTE_LEN];
	if (xp_keepalive_note(p, kan, sizeof(kan)))
		fprintf(r->out, "%s\n", kan);
	const char *who = r->client_only ? "the client's count: SYN-ACKs it completed; no server counters"
			  : r->peer_kernel ? "accepted by the server's TCP stack" : "server XDP: valid SYN cookies";
	/* Rates over a hold test's whole run would average an opening burst with the idle hold: only counts below. */
	if (!sum->hold.wanted)
		xp_report_hs_line(r, "[SUM]", p);
	if (sum->hold.wanted)
		fprintf(r->out, "Connections  %12" PRIu64 " completed  (%s)\n", est, who);
	else
		fprintf(r->out, "Connections  %12" PRIu64 " completed  %s  (%s)\n", est,
			xp_fmt_rate(est / s, "connections/s", a, sizeof(a)), who);
	fprintf(r->out, "Client       %12" PRIu64 " SYNs sent  %" PRIu64 " SYN-ACKs seen  %" PRIu64 " ACKs sent (%" PRIu64
			" with FIN)  %" PRIu64 " resets seen  %" PRIu64 " FIN-ACKs answered\n",
		x->syn_sent, x->synack_seen, x->acks_sent, x->fins_sent, x->rst_seen, x->finack_answered);
	if (x->rst_closed)
		fprintf(r->out, "             %12" PRIu64 " held connections reset at the end\n", x->rst_closed);
	if (x->unanswered)
		fprintf(r->out, "             %12" PRIu64 " SYN-ACKs or FINs dropped unanswered (IP options, no room)\n",
			x->unanswered);
	if (!r->client_only)
		fprintf(r->out, "Server XDP   %12" PRIu64 " SYNs seen  %" PRIu64 " SYN-ACKs sent  %" PRIu64 " RSTs sent  %" PRIu64
				" FINs answered  %" PRIu64 " invalid cookies\n",
			(uint64_t)p->rx.tcp_syn, (uint64_t)p->rx.synack_sent, (uint64_t)p->rx.rst_sent,
			(uint64_t)p->rx.fin_answered, (uint64_t)p->rx.cookie_invalid);
	if (!r->client_only && !r->peer_kernel && (p->rx.keepalives || x->keepalives))
		fprintf(r->out, "             %12" PRIu64 " keepalives of held connections (their cookies checked; counted, "
				"not answered: the server keeps no state)\n", (uint64_t)p->rx.keepalives);
	if (!r->client_only && !r->peer_kernel && p->rx.keepalive_unchecked)
		fprintf(r->out, "             %12" PRIu64 " pure ACKs not checked (keepalive search budget spent)\n",
			(uint64_t)p->rx.keepalive_unchecked);
	if (!r->client_only && !r->peer_kernel)
		fprintf(r->out, "             %12" PRIu64 " frames not answered: %" PRIu64 " not to us or not from one host, %"
				PRIu64 " bad checksum, %" PRIu64 " unanswerable headers, %" PRIu64 " no room for the reply, %"
				PRIu64 " needing no answer\n",
			not_answered(p), (uint64_t)p->rx.noreply_addr, (uint64_t)p->rx.noreply_csum,
			(uint64_t)p->rx.noreply_shape, (uint64_t)p->rx.noreply_room, (uint64_t)p->rx.noreply_other);
	if (x->syn_sent > est)
		fprintf(r->out, "Not completed %11" PRIu64 " of the SYNs sent (%.3f %%)\n", x->syn_sent - est,
			100.0 * (double)(x->syn_sent - est) / (double)x->syn_sent);
	if (x->window) {
		uint64_t failed = x->fail_timeout + x->fail_reset + x->fail_unreach;
		fprintf(r->out, "Failed       %12" PRIu64 " connections: %" PRIu64 " timed out after %" PRIu64
				" retransmissions, %" PRIu64 " reset, %" PRIu64 " ICMP unreachable; %" PRIu64
				" still waiting at the end\n",
			failed, x->fail_timeout, x->syn_retries, x->fail_reset, x->fail_unreach, x->in_flight);
		fprintf(r->out, "Retransmitted %11" PRIu64 " SYNs  %" PRIu64 " FINs (%" PRIu64 " closes given up)  %" PRIu64
				" SYN-ACKs answered twice  %" PRIu64 " late SYN-ACKs reset%s%s\n",
			x->syn_retx, x->fin_retx, x->fin_timeout, x->synack_dup, x->stale_rst,
			x->send_errors ? "  (frames not sent: " : "", x->send_errors ? "see -J keeper_send_errors)" : "");
		if (x->keepalives)
			fprintf(r->out, "Keepalives   %12" PRIu64 " sent\n", x->keepalives);
	}
	if (sum->hold.wanted)
		xp_report_hold_lines(r, &sum->hold);
	if (sum->hold.wanted && x->window) {
		/* -k -P N holds N, or says how many it could not and why. */
		uint64_t held = sum->hold.open_at_end, want = sum->hold.wanted;
		if (held >= want)
			fprintf(r->out, "Held         all %" PRIu64 " until the end\n", want);
		else
			fprintf(r->out, "Held         %" PRIu64 " of %" PRIu64 " until the end; not held %" PRIu64 ": %" PRIu64
					" timed out after %" PRIu64 " retransmissions, %" PRIu64 " reset, %" PRIu64
					" ICMP unreachable, %" PRIu64 " still waiting for their SYN-ACK\n",
				held, want, want - held, x->fail_timeout, x->syn_retries, x->fail_reset, x->fail_unreach,
				x->in_flight);
	}
	xp_report_tail(r, sum);
}
