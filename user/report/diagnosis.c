/*
 * The cause of unanswered SYNs, from where along the path they went missing.
 * A handshake passes four counters in turn: SYNs sent (client), SYNs seen
 * (server XDP), SYN-ACKs sent (server XDP; with --peer kernel its stack
 * answers and nothing counts them), SYN-ACKs seen (client XDP), then
 * connections completed (server). The biggest drop between two neighbours is
 * where the loss was; what is there (the device, or an end's receive path)
 * and that part's own counters name the likely cause.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/diagnosis.h"
#include "report/report.h"

static uint64_t sub0(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

const char *xp_diag_cause_name(enum xp_diag_cause c)
{
	switch (c) {
	case XP_DIAG_DEVICE_DROPS: return "device_drops";
	case XP_DIAG_TABLE_FULL: return "table_full";
	case XP_DIAG_RECEIVER_OVERRUN: return "receiver_overrun";
	case XP_DIAG_UNKNOWN: return "unknown";
	default: return NULL;
	}
}

/* Frames lost inside the device in the path: its table, its interfaces, or a filter. */
enum xp_diag_cause xp_diag_device_cause(const struct xp_device_figs *dv, char *buf, size_t len)
{
	if (!dv->have) {
		snprintf(buf, len, "device drops (no device counters to tell why; --device-netns reads a namespace's)");
		return XP_DIAG_DEVICE_DROPS;
	}
	/* A table at 99 % of its size refuses new entries (or evicts): full. */
	if (dv->ct_drops || (dv->ct_max && dv->ct_peak * 100 >= dv->ct_max * 99)) {
		snprintf(buf, len, "table full in the device (conntrack %" PRIu64 " of %" PRIu64 " entries at the peak, %" PRIu64
			 " dropped or not inserted)", dv->ct_peak, dv->ct_max, dv->ct_drops);
		return XP_DIAG_TABLE_FULL;
	}
	if (dv->if_drops)
		snprintf(buf, len, "device drops (its interfaces dropped %" PRIu64 " frames)", dv->if_drops);
	else
		snprintf(buf, len, "device drops (conntrack %" PRIu64 " of %" PRIu64
			 " entries, no interface drops: a filter or rate limit there)", dv->ct_peak, dv->ct_max);
	return XP_DIAG_DEVICE_DROPS;
}

enum xp_diag_cause xp_diagnose_handshakes(const struct xp_period *p, const struct xp_diag_input *in,
					  struct xp_diagnosis *d)
{
	const struct xp_handshake_figs *h = &p->hs;
	uint64_t sent = h->syn_sent, cli_seen = h->synack_seen;
	/* Completed: the server's count; with no server counters, the client's completing ACKs. */
	uint64_t est = in->have_server ? xp_period_established(p) : h->acks_sent;
	*d = (struct xp_diagnosis){ 0 };
	d->unanswered = sub0(sent, est);
	d->pct = sent ? 100.0 * (double)d->unanswered / (double)sent : 0;
	if (!sent || d->unanswered * 100 <= sent)
		return d->cause = XP_DIAG_NONE;

	char why[224];
	if (!in->have_server) {
		/* Only the client's own counters: SYNs out, SYN-ACKs in. */
		if (in->client_rx_drops * 2 >= sub0(sent, cli_seen) && in->client_rx_drops)
			snprintf(why, sizeof(why), "receiver overrun at the client (its interface dropped %" PRIu64
				 " frames)", in->client_rx_drops), d->cause = XP_DIAG_RECEIVER_OVERRUN;
		else
			d->cause = xp_diag_device_cause(&in->dev, why, sizeof(why));
		snprintf(d->text, sizeof(d->text),
			 "WARNING: %.1f %% of the SYNs went unanswered (%" PRIu64 " of %" PRIu64 "; %" PRIu64
			 " SYN-ACKs seen, no server counters): likely %s", d->pct, d->unanswered, sent, cli_seen, why);
		return d->cause;
	}

	uint64_t srv_seen = p->rx.tcp_syn, srv_ans = p->rx.synack_sent;
	uint64_t out = sub0(sent, srv_seen);
	uint64_t at_srv = in->peer_kernel ? 0 : sub0(srv_seen, srv_ans);
	/* The server counts frames, the client connections: with SYNs sent
	 * again, the server sees and answers more SYNs than there are
	 * connections, and that surplus is no SYN-ACK lost on the way back (a
	 * hold whose retransmissions got every SYN-ACK through, but whose ACKs
	 * were dropped after the device, is "ACKs not completing"). */
	uint64_t answered = in->peer_kernel ? srv_seen : srv_ans;
	uint64_t back = sub0(answered < sent ? answered : sent, cli_seen);
	uint64_t ack = sub0(cli_seen, est);
	char where[128];
	if (out >= at_srv && out >= back && out >= ack) {
		snprintf(where, sizeof(where), "SYNs lost before the server (%" PRIu64 " sent, %" PRIu64 " seen there)",
			 sent, srv_seen);
		d->cause = xp_diag_device_cause(&in->dev, why, sizeof(why));
	} else if (at_srv >= back && at_srv >= ack) {
		snprintf(where, sizeof(where), "the server left SYNs unanswered (%" PRIu64 " seen, %" PRIu64 " answered)",
			 srv_seen, srv_ans);
		snprintf(why, sizeof(why), "receiver overrun at the server");
		d->cause = XP_DIAG_RECEIVER_OVERRUN;
	} else if (back >= ack) {
		snprintf(where, sizeof(where), "SYN-ACKs missing at the client (%" PRIu64 " %s, %" PRIu64 " seen)",
			 in->peer_kernel ? srv_seen : srv_ans, in->peer_kernel ? "SYNs reached the server" : "sent",
			 cli_seen);
		if (in->client_rx_drops && in->client_rx_drops * 2 >= back) {
			snprintf(why, sizeof(why), "receiver overrun at the client (its interface dropped %" PRIu64 " frames)",
				 in->client_rx_drops);
			d->cause = XP_DIAG_RECEIVER_OVERRUN;
		} else if (in->peer_kernel && (!in->dev.have || (!in->dev.ct_drops && !in->dev.if_drops))) {
			/* Nothing in the path dropped: the server's stack did not answer (SYN backlog). */
			snprintf(why, sizeof(why), "receiver overrun at the server's TCP stack (its SYN backlog)");
			d->cause = XP_DIAG_RECEIVER_OVERRUN;
		} else {
			d->cause = xp_diag_device_cause(&in->dev, why, sizeof(why));
		}
	} else {
		snprintf(where, sizeof(where), "ACKs not completing at the server (%" PRIu64 " SYN-ACKs seen, %" PRIu64
			 " completed)", cli_seen, est);
		d->cause = xp_diag_device_cause(&in->dev, why, sizeof(why));
	}
	snprintf(d->text, sizeof(d->text), "WARNING: %.1f %% of the SYNs went unanswered (%" PRIu64 " of %" PRIu64
		 "): %s; likely %s", d->pct, d->unanswered, sent, where, why);
	return d->cause;
}
