/*
 * Reports of stream tests on the frame engines (live, xsk): frames and bits
 * per second sent (the engine's count) and received (the server's XDP
 * counters), and the loss between them; and of received-only tests (none):
 * what the server's XDP program counted of an outside generator's frames,
 * with nothing said about what was sent, which xdpperf cannot know.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "report/report.h"
#include "util/units.h"

/* TCP stream frames are data segments of connections nobody opened: say what that means for a firewall. */
static void tcp_frames_note(struct xp_report *r, const struct xp_report_info *i)
{
	if (strcmp(i->proto, "tcp"))
		return;
	fprintf(r->out, "Note: TCP frames are data segments of connections never opened (no handshake): a stateful\n"
			"firewall drops them as invalid, or with loose pickup makes a table entry per flow; for such\n"
			"devices use -u (and few flows: --cport LO:HI), or connections: --engine socket or -x/-k\n");
}

void xp_report_frames_start(struct xp_report *r, const struct xp_report_info *i)
{
	char tgt[48] = "unlimited", secs[32];
	if (i->target_pps > 0)
		xp_fmt_rate(i->target_pps, "pps", tgt, sizeof(tgt));
	fprintf(r->out, "Client %s -> server %s, %s %s/IPv%d, ports %u:%u -> %u:%u\n", i->client, i->server,
		i->test, i->proto, i->family, i->cport_lo, i->cport_hi, i->port_lo, i->port_hi);
	char what[160];
	if (i->frame_mix[0])
		snprintf(what, sizeof(what), "the frame mix %s (mean %.2f bytes, interleaved frame by frame)",
			 i->frame_mix, i->frame_mean);
	else
		snprintf(what, sizeof(what), "%u-byte frames", i->frame_size);
	fprintf(r->out, "Sending %s on %s with engine %s (%s), %u queue%s, rate %s, %s\n",
		what, i->dev, i->engine, i->engine_mode ? i->engine_mode : "-", i->queues,
		i->queues == 1 ? "" : "s", tgt, xp_fmt_secs(i->duration, secs, sizeof(secs)));
	fprintf(r->out, "Server counts with XDP (%s mode) on %s\n", i->server_xdp_mode, i->server_dev);
	xp_report_meas_start(r, i);
	tcp_frames_note(r, i);
	r->tcp = !strcmp(i->proto, "tcp");
	fflush(r->out);
}

void xp_report_frames_line(struct xp_report *r, const char *tag, const struct xp_period *p)
{
	struct xp_rates x;
	char a[32], b[32], c[32], d[32], e[32];
	xp_rates_of(p, &x);
	if (r->lines++ % 20 == 0)
		fprintf(r->out, "%-5s %-13s %12s %14s %12s %14s %14s %10s %8s\n", "[ ID]", "Interval",
			"Sent", "Sent L1", "Recv", "Recv L1", "Recv L2", "Lost", "Loss");
	char lost[24] = "-", pct[24] = "-";
	if (x.lost_known) {
		snprintf(lost, sizeof(lost), "%" PRId64, x.lost);
		snprintf(pct, sizeof(pct), "%.3f%%", x.loss_pct);
	}
	fprintf(r->out, "%-5s %5.2f-%-6.2f s %12s %14s %12s %14s %14s %10s %8s\n", tag, p->t0, p->t1,
		xp_fmt_rate(x.tx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.tx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.rx_pps, "pps", c, sizeof(c)), xp_fmt_rate(x.rx_l1, "bit/s", d, sizeof(d)),
		xp_fmt_rate(x.rx_l2, "bit/s", e, sizeof(e)), lost, pct);
	/* The whole test's stamps have their own block in the summary. */
	if (strcmp(tag, "[SUM]") || !r->ended)
		xp_report_meas_line(r, &p->meas);
	fflush(r->out);
}

void xp_report_frames_end(struct xp_report *r, const struct xp_summary *s)
{
	struct xp_rates x;
	char a[32], b[32], c[32];
	const struct xp_period *p = &s->total;
	xp_rates_of(p, &x);
	xp_report_head(r, s, NULL);
	xp_report_frames_line(r, "[SUM]", p);
	fprintf(r->out, "Sent      %12" PRIu64 " frames  %12s  L1 %14s  L2 %14s  (client, TX completions)\n",
		p->tx_pkts, xp_fmt_rate(x.tx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.tx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.tx_l2, "bit/s", c, sizeof(c)));
	fprintf(r->out, "Received  %12" PRIu64 " frames  %12s  L1 %14s  L2 %14s  (server, XDP counters)\n",
		(uint64_t)p->rx.pkts, xp_fmt_rate(x.rx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.rx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.rx_l2, "bit/s", c, sizeof(c)));
	fprintf(r->out, "Lost      %12" PRId64 " frames  (%.4f %%)  %s\n", x.lost, x.loss_pct,
		p->meas.valid && !p->meas.unknown ? "(by stamps)" : "(sent - received)");
	xp_report_meas_end(r, p);
	/* (Not where the path said why with ICMP errors: the first line has that.) */
	if (r->tcp && x.loss_pct > 50 && !s->icmp.count)
		fprintf(r->out, "Most TCP frames were lost: a stateful firewall on the path drops data segments of "
				"connections it never saw open; try -u\n");
	if (s->tx_errors)
		fprintf(r->out, "TX errors %" PRIu64 "\n", s->tx_errors);
	xp_report_tail(r, s);
}

void xp_frames_add_loss(struct json_object *o, const struct xp_period *p)
{
	struct xp_rates x;
	xp_rates_of(p, &x);
	/* null where the period has no loss figure (an interval without stamps: report.c) */
	json_object_object_add(o, "lost_packets", x.lost_known ? json_object_new_int64(x.lost) : NULL);
	json_object_object_add(o, "loss_percent",
			       x.lost_known && isfinite(x.loss_pct) ? json_object_new_double(x.loss_pct) : NULL);
}

/* ---- received only (--engine none) ---- */

void xp_report_recv_start(struct xp_report *r, const struct xp_report_info *i)
{
	char secs[32];
	fprintf(r->out, "Client %s -> server %s, receive-only test (engine none: this client sends nothing), %s\n",
		i->client, i->server, xp_fmt_secs(i->duration, secs, sizeof(secs)));
	fprintf(r->out, "Server counts %s/IPv%d to ports %u:%u with XDP (%s mode) on %s, from whatever sends them\n",
		i->proto, i->family, i->port_lo, i->port_hi, i->server_xdp_mode, i->server_dev);
	fflush(r->out);
}

void xp_report_recv_line(struct xp_report *r, const char *tag, const struct xp_period *p)
{
	struct xp_rates x;
	char c[32], d[32], e[32];
	xp_rates_of(p, &x);
	if (r->lines++ % 20 == 0)
		fprintf(r->out, "%-5s %-13s %12s %14s %14s\n", "[ ID]", "Interval", "Recv", "Recv L1", "Recv L2");
	fprintf(r->out, "%-5s %5.2f-%-6.2f s %12s %14s %14s\n", tag, p->t0, p->t1,
		xp_fmt_rate(x.rx_pps, "pps", c, sizeof(c)), xp_fmt_rate(x.rx_l1, "bit/s", d, sizeof(d)),
		xp_fmt_rate(x.rx_l2, "bit/s", e, sizeof(e)));
	fflush(r->out);
}

void xp_report_recv_end(struct xp_report *r, const struct xp_summary *s)
{
	struct xp_rates x;
	char a[32], b[32], c[32];
	const struct xp_period *p = &s->total;
	xp_rates_of(p, &x);
	xp_report_head(r, s, NULL);
	xp_report_recv_line(r, "[SUM]", p);
	fprintf(r->out, "Received  %12" PRIu64 " frames  %12s  L1 %14s  L2 %14s  (server, XDP counters, %.2f-%.2f s)\n",
		(uint64_t)p->rx.pkts, xp_fmt_rate(x.rx_pps, "pps", a, sizeof(a)), xp_fmt_rate(x.rx_l1, "bit/s", b, sizeof(b)),
		xp_fmt_rate(x.rx_l2, "bit/s", c, sizeof(c)), p->t0, p->t1);
	fprintf(r->out, "Sent and lost: unknown to xdpperf (an outside generator sent the frames: compare with its count)\n");
	xp_report_tail(r, s);
}
