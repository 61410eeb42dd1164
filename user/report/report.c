/*
 * The report's JSON: a test's start (its settings), a period, a summary. The
 * sinks (sink.c) print them; the text lines are the kinds' own modules'.
 */
#include "report/report.h"
#include "report/diagnosis.h"
#include "util/json_add.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "proto/messages.h"
#include "spec/spec.h"
#include "util/units.h"

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
	if (i->frame_mix[0]) { /* mixed sizes: frame_size is the largest */
		add_s(o, "frame_mix", i->frame_mix);
		add_d(o, "frame_mean_bytes", i->frame_mean);
	}
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
		/* No xdpperf on the server: every figure is the client's own. */
		json_object_object_add(o, "client_only", json_object_new_boolean(i->client_only));
		add_d(o, "target_cps", i->target_cps);
		add_s(o, "client_xdp_mode", i->client_xdp_mode);
	}
	if (i->stamps || i->stamp_note[0])
		json_object_object_add(o, "stamps", xp_stamps_info_json(i));
	json_object_object_add(o, "units", xp_units_json());
	/* What the test is, as the server got it in the start request: a spec's new setting shows here too. */
	if (i->spec)
		json_object_object_add(o, "spec", xp_spec_to_wire_json(i->spec));
	return o;
}

struct json_object *xp_units_json(void)
{
	/* What each count includes, so nobody has to guess (a 64-byte frame, -l 64, counts 60 bytes). */
	struct json_object *u = json_object_new_object();
	add_s(u, "frame_size", "Ethernet frame including its 4-byte FCS, as -l gives it");
	add_s(u, "bytes", "Ethernet frames from the destination MAC to the end of the payload, without the 4-byte "
			  "FCS: frame_size - 4 per frame (what XDP and AF_XDP see)");
	add_s(u, "bits_per_second_l2", "frames with their FCS: (bytes + 4 per frame) * 8 per second");
	add_s(u, "bits_per_second_l1", "line time: frames with FCS, preamble and inter-frame gap, (bytes + 24 per "
				       "frame) * 8 per second, as RFC 2544 line rates count");
	add_s(u, "payload_bytes", "TCP payload written to (server: read from) sockets, no headers");
	add_s(u, "data_bytes", "TCP or UDP payload the server's XDP program counted, no headers");
	return u;
}

struct json_object *xp_period_json(const struct xp_period *p)
{
	struct xp_rates r;
	xp_rates_of(p, &r);
	struct json_object *o = json_object_new_object();
	add_d(o, "start", p->t0);
	add_d(o, "end", p->t1);
	add_d(o, "seconds", r.secs);
	/* Received-only tests know nothing of what was sent: no "sent", no loss. */
	if (xp_figs_sent(p->figures)) {
		struct json_object *tx = json_object_new_object();
		add_u(tx, "packets", p->tx_pkts);
		add_u(tx, "bytes", p->tx_bytes);
		add_d(tx, "packets_per_second", r.tx_pps);
		add_d(tx, "bits_per_second_l1", r.tx_l1);
		add_d(tx, "bits_per_second_l2", r.tx_l2);
		json_object_object_add(o, "sent", tx);
	}
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
		if (p->meas.valid)
			json_object_object_add(o, "measurement", xp_meas_json(&p->meas));
		break;
	case XP_FIGS_RECEIVED:
		break;
	}
	/* An interval of a test with flows: every flow's figures of it. */
	if (p->flows && p->nflows)
		json_object_object_add(o, "flows", xp_flows_ival_json(p));
	return o;
}

struct json_object *xp_summary_json(const struct xp_summary *s)
{
	struct json_object *o = json_object_new_object(), *sum = xp_period_json(&s->total), *g;
	/* A hold test opens its connections at the start: a rate over the whole run would mislead
	 * (see "hold": the time to open all of them, and the rate while opening). */
	if (s->hold.wanted && (json_object_object_get_ex(sum, "sockets", &g) ||
			       json_object_object_get_ex(sum, "connections", &g))) {
		json_object_object_add(g, "connections_per_second", NULL);
		if (json_object_object_get_ex(g, "server_accepts_per_second", NULL))
			json_object_object_add(g, "server_accepts_per_second", NULL);
	}
	json_object_object_add(o, "sum", sum);
	if (s->nflows && s->flows)
		json_object_object_add(o, "flows", xp_flows_json(s));
	if (xp_flows_uncounted(s))
		add_u(o, "flows_not_counted", xp_flows_uncounted(s));
	struct json_object *cpu = json_object_new_object();
	add_d(cpu, "client_percent", s->client_cpu_pct);
	if (s->server_cpu_pct >= 0)
		add_d(cpu, "server_percent", s->server_cpu_pct);
	json_object_object_add(o, "cpu_utilization_percent", cpu);
	add_u(o, "tx_errors", s->tx_errors);
	json_object_object_add(o, "interrupted", json_object_new_boolean(s->interrupted));
	if (s->error)
		add_s(o, "error", s->error);
	if (s->diag.cause != XP_DIAG_NONE) {
		/* Connection tests with more than 1 % of SYNs unanswered: how many, and the likely cause. */
		struct json_object *w = json_object_new_object();
		add_s(w, "cause", xp_diag_cause_name(s->diag.cause));
		add_u(w, "unanswered", s->diag.unanswered);
		add_d(w, "unanswered_percent", s->diag.pct);
		add_s(w, "text", s->diag.text);
		json_object_object_add(o, "warning", w);
	}
	if (s->stall.stalled) {
		struct json_object *w = json_object_new_object();
		add_d(w, "from_seconds", s->stall.t0);
		add_d(w, "to_seconds", s->stall.t1);
		add_d(w, s->stall.conn ? "connections_per_second" : "received_packets_per_second", s->stall.rate);
		add_d(w, "running_peak_per_second", s->stall.before);
		add_d(w, "threshold_percent", s->stall.pct);
		add_u(w, "intervals", s->stall.intervals);
		add_s(w, "text", s->stall.text);
		json_object_object_add(o, "stall", w);
	}
	char kan[XP_KA_NOTE_LEN];
	if (s->total.figures == XP_FIGS_HANDSHAKES && xp_keepalive_note(&s->total, kan, sizeof(kan)))
		add_s(o, "keepalive_warning", kan); /* the text summary's line, for scripts */
	if (s->server_lost) {
		/* "sum" covers 0..server_lost_at: the server's last sample. */
		add_d(o, "server_lost_at", s->server_lost_at);
		add_u(o, "sent_after_server_lost", s->sent_after_lost);
	}
	if (s->icmp.watched)
		json_object_object_add(o, "icmp_errors", xp_icmp_json(&s->icmp));
	if (s->hold.wanted)
		json_object_object_add(o, "hold", xp_hold_json(&s->hold));
	if (s->pace.target_pps > 0)
		json_object_object_add(o, "offered_load", xp_pace_json(&s->pace));
	return o;
}

struct json_object *xp_hold_json(const struct xp_hold_figs *h)
{
	struct json_object *o = json_object_new_object();
	add_u(o, "wanted", h->wanted);
	/* null: not all of them were ever open at once */
	add_d(o, "seconds_to_open_all", h->all_open_s > 0 ? h->all_open_s : NAN);
	add_d(o, "opening_connections_per_second", h->all_open_s > 0 ? h->wanted / h->all_open_s : NAN);
	add_u(o, "open_at_end", h->open_at_end);
	if (h->server_view)
		add_u(o, "server_open_at_end", h->s_open_at_end);
	return o;
}

struct json_object *xp_pace_json(const struct xp_pace_figs *p)
{
	struct json_object *o = json_object_new_object();
	add_d(o, "target_packets_per_second", p->target_pps);
	add_d(o, "reached_packets_per_second", p->reached_pps);
	add_d(o, "reached_percent", 100.0 * p->reached_pps / p->target_pps);
	json_object_object_add(o, "short_of_target", json_object_new_boolean(p->short_of_target));
	add_s(o, "held_back_by", p->short_of_target ? p->held_back_by : NULL);
	add_s(o, "why", p->short_of_target ? p->why : NULL);
	add_d(o, "sender_busy_percent", p->busy_pct);
	add_d(o, "sender_cpu_softirq_percent", p->softirq_pct);
	add_d(o, "sender_cpu_wait_percent", p->cpu_wait_pct);
	add_u(o, "pushback", p->pushback);
	add_d(o, "sender_kernel_sleep_percent", p->kernel_sleep_pct);
	add_u(o, "kernel_sleeps", p->kernel_sleeps);
	add_d(o, "longest_call_ms", p->longest_call_ms);
	add_u(o, "catchups", p->catchups);
	add_u(o, "largest_catchup_frames", p->max_grant);
	return o;
}
