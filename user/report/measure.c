/*
 * The stamps' figures in the reports (struct xp_meas_figs): loss by send
 * interval, duplicates, reordering, late frames, one-way latency percentiles
 * and RFC 3550 jitter; a line under each interval line, a block in the
 * summary, an object in -J and --json-stream. Where a figure is not
 * measured the report says why instead of printing zeros.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proto/messages.h"
#include "report/report.h"
#include "bpf/lib/stamp.h"

/* Why the latency of these frames is not shown, NULL when it is. */
static const char *withheld(const struct xp_meas_figs *m, char *buf, size_t len)
{
	if (!m->oneway)
		return m->lat_why ? m->lat_why : "not measured one way (different clocks; use the round-trip mode)";
	if (m->lat.clock_neg) {
		snprintf(buf, len, "withheld: %" PRIu64 " frames arrived before their stamped send time (the clocks "
			 "disagree)", m->lat.clock_neg);
		return buf;
	}
	if (!m->lat.n && m->rx_ts == XP_RXTS_HW)
		return "no frame timed: none had a NIC receive time (--rx-timestamp hw)";
	if (!m->lat.n)
		return "no frame timed";
	return NULL;
}

static void latency_text(struct xp_report *r, const struct xp_meas_figs *m)
{
	char a[24], b[24], c[24], why[160];
	const char *w = withheld(m, why, sizeof(why));
	if (w) {
		fprintf(r->out, "latency: %s", w);
		return;
	}
	fprintf(r->out, "latency min %s mean %s", xp_fmt_ns((double)m->lat.min * XP_STAMP_TICK_NS, a, sizeof(a)),
		xp_fmt_ns(xp_lat_mean_ns(&m->lat), b, sizeof(b)));
	for (unsigned i = 0; i < XP_LAT_NPCTS; i++)
		fprintf(r->out, " %s %s", xp_lat_pcts[i].label,
			xp_fmt_ns(xp_lat_quantile_ns(&m->lat, xp_lat_pcts[i].q), a, sizeof(a)));
	fprintf(r->out, " max %s", xp_fmt_ns((double)m->lat.max * XP_STAMP_TICK_NS, c, sizeof(c)));
}

static void jitter_text(struct xp_report *r, const struct xp_meas_figs *m)
{
	char a[24], b[24];
	if (!m->oneway || !m->streams)
		return;
	fprintf(r->out, "; jitter %s", xp_fmt_ns(m->jitter_mean_ns, a, sizeof(a)));
	if (m->streams > 1)
		fprintf(r->out, " (max %s, %u streams)", xp_fmt_ns(m->jitter_max_ns, b, sizeof(b)), m->streams);
}

void xp_report_meas_line(struct xp_report *r, const struct xp_meas_figs *m)
{
	if (!m->valid)
		return;
	if (m->unknown) {
		fprintf(r->out, "      stamps: unknown (the server reused this interval's bins before they were read)\n");
		return;
	}
	double pct = m->sent ? 100.0 * (double)m->lost / (double)m->sent : 0;
	fprintf(r->out, "      stamped %" PRIu64 " lost %" PRId64 " (%.3f%%) dup %" PRIu64 " reord %" PRIu64 " late %" PRIu64
		"; ", m->sent, m->lost, pct, m->lat.dup, m->lat.reordered, m->lat.late);
	latency_text(r, m);
	jitter_text(r, m);
	/* The last line also holds what was sent while the engine stopped (or after an interrupt). */
	if (m->last > m->first)
		fprintf(r->out, " (send intervals %" PRIu64 "-%" PRIu64 ")", m->first, m->last);
	fprintf(r->out, "\n");
}

void xp_report_meas_start(struct xp_report *r, const struct xp_report_info *i)
{
	char g[32];
	if (!i->stamps) {
		/* Frame engines without a stamp in their frames: what the figures are instead. */
		if (i->stamp_note[0])
			fprintf(r->out, "Stamps: %s\n", i->stamp_note);
		return;
	}
	fprintf(r->out, "Stamps in every frame (%s: stream, sequence number, send time), %s; %s\n", i->stamp_place,
		i->stamp_clock,
		i->rtt ? "round-trip latency (the server sends each stamped frame back; this host times it)"
		: i->oneway ? "one-way latency (both ends share the clock)" : i->stamp_note);
	if (i->rtt)
		fprintf(r->out, "Returns timed by this host's %s\n", i->stamp_clock);
	else if (i->rx_clock && i->rx_clock[0])
		fprintf(r->out, "Arrivals timed by the server's %s%s\n", i->rx_clock,
			i->oneway ? "" : " (for jitter only: no shared clock)");
	if (!i->rtt && i->rx_note && i->rx_note[0])
		fprintf(r->out, "Receive timestamps: %s\n", i->rx_note);
	fprintf(r->out, "Loss by send interval; each line is printed %s after its interval ends (the grace for late "
			"frames)\n", xp_fmt_secs(i->grace, g, sizeof(g)));
	if (i->setup_s > 0.0005)
		fprintf(r->out, "Send intervals start %.0f ms before the lines (t0 was set before asking the server and "
				"starting the engine)\n", i->setup_s * 1e3);
}

/* --rx-timestamp hw|auto: how many arrivals the NIC's clock timed (said
 * before the latency, which may be withheld because of it). */
static void rx_timed_line(struct xp_report *r, const struct xp_meas_figs *m)
{
	if (!m->rx_counts)
		return;
	uint64_t rest = m->rx_stamped - m->rx_nic;
	fprintf(r->out, "Rx clock  the NIC timed %" PRIu64 " of %" PRIu64 " frames; %s %" PRIu64 "%s\n", m->rx_nic,
		m->rx_stamped, m->rx_ts == XP_RXTS_HW ? "counted, not timed (no NIC time, --rx-timestamp hw):"
		: "timed by the server's kernel clock instead (no NIC time, --rx-timestamp auto):", rest,
		rest && m->rx_nic && m->rx_ts != XP_RXTS_HW ? " (two clocks in one histogram: compare with care)" : "");
}

void xp_report_meas_end(struct xp_report *r, const struct xp_period *p)
{
	const struct xp_meas_figs *m = &p->meas;
	char a[24], b[24], why[160];
	if (!m->valid)
		return;
	if (m->unknown) {
		fprintf(r->out, "Stamps    some intervals' bins were reused before they were read: loss by count only\n");
		return;
	}
	fprintf(r->out, "Stamped   %12" PRIu64 " frames in send intervals %" PRIu64 "-%" PRIu64
		" (lost = stamped - received - late)\n", m->sent, m->first, m->last);
	fprintf(r->out, "Dup       %12" PRIu64 "  reordered %" PRIu64 " (RFC 4737; extent up to %" PRIu64
		" sequence numbers)  late %" PRIu64 " (arrived after their interval closed; not lost)\n",
		m->lat.dup, m->lat.reordered, m->reorder_max, m->lat.late);
	if (m->too_old)
		fprintf(r->out, "          %" PRIu64 " frames came more than %u sequence numbers behind: counted as "
			"received, not checked for duplicates\n", m->too_old, XP_SEQ_WINDOW);
	rx_timed_line(r, m);
	const char *w = withheld(m, why, sizeof(why));
	if (w) {
		fprintf(r->out, "Latency   %s\n", w);
		return;
	}
	fprintf(r->out, "Latency   %s, %" PRIu64 " frames timed (every stamped frame; buckets within 1.6 %%): min %s mean %s max %s\n",
		m->rtt ? "round trip" : "one way", m->lat.n, xp_fmt_ns((double)m->lat.min * XP_STAMP_TICK_NS, a, sizeof(a)),
		xp_fmt_ns(xp_lat_mean_ns(&m->lat), b, sizeof(b)), xp_fmt_ns((double)m->lat.max * XP_STAMP_TICK_NS, why, sizeof(why)));
	fprintf(r->out, "         ");
	for (unsigned i = 0; i < XP_LAT_NPCTS; i++)
		fprintf(r->out, " %s %s", xp_lat_pcts[i].label,
			xp_fmt_ns(xp_lat_quantile_ns(&m->lat, xp_lat_pcts[i].q), a, sizeof(a)));
	fprintf(r->out, "\n");
	if (m->streams)
		fprintf(r->out, "Jitter    RFC 3550 interarrival: %s (mean of %u stream%s), max %s\n",
			xp_fmt_ns(m->jitter_mean_ns, a, sizeof(a)), m->streams, m->streams == 1 ? "" : "s",
			xp_fmt_ns(m->jitter_max_ns, b, sizeof(b)));
}


static void add_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, isfinite(v) ? json_object_new_double(v) : NULL);
}

static void add_u(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_int64((int64_t)v));
}

struct json_object *xp_meas_json(const struct xp_meas_figs *m)
{
	char why[160];
	struct json_object *o = json_object_new_object();
	struct json_object *iv = json_object_new_array();
	json_object_array_add(iv, json_object_new_int64((int64_t)m->first));
	json_object_array_add(iv, json_object_new_int64((int64_t)m->last));
	json_object_object_add(o, "send_intervals", iv);
	json_object_object_add(o, "unknown", json_object_new_boolean(m->unknown));
	if (m->unknown)
		return o;
	add_u(o, "sent", m->sent);
	add_u(o, "received", m->lat.recv);
	json_object_object_add(o, "lost", json_object_new_int64(m->lost));
	add_d(o, "loss_percent", m->sent ? 100.0 * (double)m->lost / (double)m->sent : 0);
	add_u(o, "duplicates", m->lat.dup);
	add_u(o, "reordered", m->lat.reordered);
	add_u(o, "late", m->lat.late);
	if (m->have_streams) {
		add_u(o, "reorder_extent_max", m->reorder_max);
		add_u(o, "too_old", m->too_old);
	}
	if (m->rx_counts) {
		struct json_object *x = json_object_new_object();
		json_object_object_add(x, "mode", json_object_new_string(m->rx_ts == XP_RXTS_HW ? "hw" : "auto"));
		add_u(x, "accounted", m->rx_stamped);
		add_u(x, "nic", m->rx_nic);
		add_u(x, m->rx_ts == XP_RXTS_HW ? "untimed" : "kernel_clock", m->rx_stamped - m->rx_nic);
		json_object_object_add(o, "rx_timed", x);
	}
	const char *w = withheld(m, why, sizeof(why));
	json_object_object_add(o, "oneway", json_object_new_boolean(m->oneway && !m->rtt));
	json_object_object_add(o, "round_trip", json_object_new_boolean(m->rtt));
	/* Figures of clocks that disagree would mislead: the counts stay, the times go. */
	if (w && m->lat.n) {
		json_object_object_add(o, "latency", NULL);
		json_object_object_add(o, "latency_withheld", json_object_new_string(w));
	} else {
		json_object_object_add(o, "latency", xp_lat_to_json(&m->lat));
	}
	struct json_object *j = json_object_new_object();
	json_object_object_add(j, "definition", json_object_new_string("RFC 3550 interarrival jitter, per stream"));
	add_u(j, "streams", m->streams);
	add_d(j, "mean_ns", m->oneway && m->streams ? m->jitter_mean_ns : NAN);
	add_d(j, "max_ns", m->oneway && m->streams ? m->jitter_max_ns : NAN);
	json_object_object_add(o, "jitter", j);
	return o;
}

struct json_object *xp_stamps_info_json(const struct xp_report_info *i)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "stamped", json_object_new_boolean(i->stamps));
	if (i->stamps) {
		json_object_object_add(o, "place", json_object_new_string(i->stamp_place));
		json_object_object_add(o, "clock", json_object_new_string(i->stamp_clock));
		json_object_object_add(o, "oneway", json_object_new_boolean(i->oneway && !i->rtt));
		json_object_object_add(o, "round_trip", json_object_new_boolean(i->rtt));
		if (i->rx_clock && i->rx_clock[0] && !i->rtt)
			json_object_object_add(o, "rx_clock", json_object_new_string(i->rx_clock));
		else if (i->rtt) /* the returns are timed here, on the stamps' clock */
			json_object_object_add(o, "rx_clock", json_object_new_string(i->stamp_clock));
		if (i->rx_note && i->rx_note[0] && !i->rtt)
			json_object_object_add(o, "rx_note", json_object_new_string(i->rx_note));
		add_d(o, "line_lag_seconds", i->grace);
		add_d(o, "send_intervals_lead_seconds", i->setup_s); /* t0 before the lines' start */
		/* So that a capture of the same frames can be binned as xdpperf bins them. */
		add_u(o, "t0_ticks", i->stamp_t0);
		add_u(o, "interval_ticks", i->stamp_ival);
		add_u(o, "latency_tick_ns", XP_STAMP_TICK_NS);
		/* The server's accounting is fixed in size, whatever the traffic (bpf/measure.h). */
		struct json_object *mem = json_object_new_object();
		add_u(mem, "stream_state", (uint64_t)sizeof(struct xp_stream_acct) * XP_STAMP_MAX_STREAMS * XP_MAX_SLOTS);
		add_u(mem, "interval_bins_per_cpu", (uint64_t)sizeof(struct xp_ibin) * XP_IBINS * XP_MAX_SLOTS);
		json_object_object_add(o, "server_memory_bytes", mem);
		json_object_object_add(o, "latency_resolution",
				       json_object_new_string("log-linear buckets: 4 ns up to 256 ns, then 32 per octave "
							      "(within 1.6 % of the value)"));
	}
	if (i->stamp_note[0])
		json_object_object_add(o, "note", json_object_new_string(i->stamp_note));
	return o;
}
