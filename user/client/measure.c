/*
 * The client's part of the measurement core: see client/measure.h. The
 * rule it keeps: a line's loss is what the engine stamped into the line's
 * send intervals minus what the server got of those same intervals, read
 * once they are final; so it is never negative, and a frame counts in the
 * interval that sent it, whenever it arrived.
 */
#include "client/measure.h"

#include "loader/rtt_prog.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "proto/channel.h"
#include "util/time.h"

enum xp_stamp_place xp_stamp_place_of_spec(const struct frame_spec *s)
{
	struct frame_layout lay;
	if (frame_layout_of(s, &lay, NULL))
		return XP_STAMP_NONE;
	return xp_stamp_place_of(s->dst.family == AF_INET6, lay.payload_len);
}

unsigned xp_stamp_min_frame(const struct frame_spec *s)
{
	struct frame_spec t = *s;
	/* From the family's and protocol's own minimum up: the first size whose payload has room (stamp.h). */
	for (size_t n = frame_min_size(s); n && n <= frame_min_size(s) + XP_STAMP_BYTES; n++) {
		t.frame_size = n;
		if (xp_stamp_place_of_spec(&t) != XP_STAMP_NONE)
			return (unsigned)n;
	}
	return 0;
}

double xp_meas_grace(double interval)
{
	double g = XP_LATE_AFTER_NS * 1e-9;
	/* Interval i's bins are reused by interval i + XP_IBINS, which starts
	 * (XP_IBINS - 1) intervals after i ends: read i one interval before that. */
	double most = (XP_IBINS - 2) * interval;
	return g < most ? g : most;
}

static uint64_t clock_ticks(bool tai)
{
	struct timespec ts;
	clock_gettime(tai ? CLOCK_TAI : CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) >> XP_STAMP_TICK_SHIFT;
}

uint64_t xp_cmeas_now_ticks(const struct xp_cmeas *m)
{
	return clock_ticks(m->tai);
}

int xp_cmeas_setup(struct xp_cmeas *m, const struct xp_spec *sp, struct xp_engine_cfg *ec, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	xp_lat_init(&m->total.lat);
	m->tai = sp->clock_tai;
	m->rtt = sp->rtt;
	m->rx_ts = sp->rx_ts;
	/* The NIC's clock is its PTP hardware clock: comparable with the
	 * client's stamps only when both are disciplined to TAI. */
	if (sp->rx_ts != XP_RXTS_SW && sp->rtt) {
		snprintf(err, errlen, "--rx-timestamp %s: with --rtt this host times the returning frames by its own "
			 "clock (drop --rx-timestamp)", sp->rx_ts == XP_RXTS_HW ? "hw" : "auto");
		return XP_EXIT_USAGE;
	}
	if (sp->rx_ts != XP_RXTS_SW && !sp->clock_tai) {
		snprintf(err, errlen, "--rx-timestamp %s: the NIC's clock compares only with CLOCK_TAI stamps of "
			 "PTP-synchronised hosts (add --clock tai)", sp->rx_ts == XP_RXTS_HW ? "hw" : "auto");
		return XP_EXIT_USAGE;
	}
	if (sp->no_stamps) {
		/* The user's choice (the option table and check_no_stamps have refused what needs stamps):
		 * no stamp in the frames, no slot_meas at the server, so its XDP program only counts. */
		m->place = XP_STAMP_NONE;
		snprintf(m->note, sizeof(m->note), "off (--no-stamps): loss by count only; no latency, reordering, "
			 "duplicates or per-interval loss");
		return 0;
	}
	m->place = xp_stamp_place_of_spec(&ec->frames.tmpl);
	if (m->place == XP_STAMP_NONE) {
		unsigned need = xp_stamp_min_frame(&ec->frames.tmpl);
		if (sp->rtt) {
			snprintf(err, errlen, "--rtt: %u-byte frames carry no stamp to time (use -l %u or more)",
				 (unsigned)ec->frames.tmpl.frame_size, need);
			return XP_EXIT_USAGE;
		}
		if (sp->rx_ts_set) {
			snprintf(err, errlen, "--rx-timestamp: %u-byte frames carry no stamp to time (use -l %u or more)",
				 (unsigned)ec->frames.tmpl.frame_size, need);
			return XP_EXIT_USAGE;
		}
		if (sp->clock_set) {
			snprintf(err, errlen, "--clock: %u-byte frames carry no stamp to time (use -l %u or more)",
				 (unsigned)ec->frames.tmpl.frame_size, need);
			return XP_EXIT_USAGE;
		}
		snprintf(m->note, sizeof(m->note), "no stamp: loss by count only, no latency (%u-byte frames have no room "
			 "for one; -l %u or more do)", (unsigned)ec->frames.tmpl.frame_size, need);
		return 0;
	}
	m->ival_s = sp->interval;
	m->ival = (uint64_t)llround(sp->interval * 1e9) >> XP_STAMP_TICK_SHIFT;
	m->grace = xp_meas_grace(sp->interval);
	/* Both clocks read together: the interval schedule (xp_now) starts where the stamps' interval 0 does. */
	m->t0_s = xp_now();
	m->t0 = clock_ticks(m->tai);
	ec->frames.stamp = (struct xp_stamp_cfg){ .stream_base = 0, .t0 = m->t0, .ival = m->ival, .tai = m->tai };
	m->on = true;
	return 0;
}

void xp_cmeas_t0(struct xp_cmeas *m, const struct xp_engine_ops *ops, struct xp_engine *e)
{
	/* An engine that cannot take a later t0 keeps the one it was made with. */
	if (!m->on || !ops->set_t0)
		return;
	m->t0_s = xp_now();
	m->t0 = clock_ticks(m->tai);
	ops->set_t0(e, m->t0);
}

int xp_cmeas_engine(struct xp_cmeas *m, const struct xp_spec *sp, const struct xp_engine_ops *ops, char *err,
		    size_t errlen)
{
	if (!m->on || ops->sent_in)
		return 0;
	m->on = false;
	if (sp->clock_set || sp->rtt || sp->rx_ts_set) {
		snprintf(err, errlen, "%s: the %s engine puts no stamp in its frames",
			 sp->rtt ? "--rtt" : sp->clock_set ? "--clock" : "--rx-timestamp", ops->name);
		return XP_EXIT_USAGE;
	}
	snprintf(m->note, sizeof(m->note), "none: the %s engine does not stamp its frames (loss by count only, no latency)",
		 ops->name);
	return 0;
}

void xp_cmeas_request(const struct xp_cmeas *m, struct xp_test_stamp *st)
{
	memset(st, 0, sizeof(*st));
	if (!m->on)
		return;
	st->t0 = m->t0;
	st->ival = m->ival;
	st->tai = m->tai;
	/* The user's word that the clocks agree; the same host needs none (the boot ids). */
	st->oneway = m->tai;
	st->reflect = m->rtt;
	st->hwts = m->rx_ts != XP_RXTS_SW;
	st->hwts_only = m->rx_ts == XP_RXTS_HW;
	xp_boot_id(st->boot_id, sizeof(st->boot_id));
}

int xp_cmeas_started(struct xp_cmeas *m, const struct xp_spec *sp, struct json_object *reply, char *err,
		     size_t errlen)
{
	struct json_object *p, *v;
	char why[120], ours[40], theirs[40];
	if (!m->on)
		return 0;
	if (!json_object_object_get_ex(reply, "stamps", &p) || !json_object_is_type(p, json_type_object)) {
		m->on = false;
		snprintf(m->note, sizeof(m->note), "not read: the server is an older xdpperf (loss by count only, no latency)");
		goto hw_check;
	}
	if (!json_object_object_get_ex(p, "read", &v) || !json_object_get_boolean(v)) {
		m->on = false;
		xp_msg_printable(xp_json_str(p, "why", "no reason given"), why, sizeof(why));
		snprintf(m->note, sizeof(m->note), "not read by the server (%s): loss by count only, no latency", why);
		goto hw_check;
	}
	/* The stamps' tag key (bpf/lib/stamp.h); an older server sends none and
	 * checks none: the frames then carry a tag under 0, 0. */
	if (xp_stamp_key_from_json(p, m->key, err, errlen) < 0)
		return 1;
	xp_boot_id(ours, sizeof(ours));
	xp_msg_printable(xp_json_str(reply, "boot_id", ""), theirs, sizeof(theirs));
	bool same_host = ours[0] && !strcmp(ours, theirs);
	bool server_oneway = json_object_object_get_ex(p, "oneway", &v) && json_object_get_boolean(v);
	/* Both must agree: we know our boot id, the server what it times with. */
	m->oneway = server_oneway && (same_host || sp->clock_tai);
	xp_msg_printable(xp_json_str(p, "rx_clock", "the server's kernel clock"), m->rx_clock, sizeof(m->rx_clock));
	xp_msg_printable(xp_json_str(p, "rx_note", ""), m->rx_note, sizeof(m->rx_note));
	m->server_reflects = json_object_object_get_ex(p, "reflect", &v) && json_object_get_boolean(v);
	if (m->rtt) {
		/* One clock, ours: the round trip is timed whatever the server's. */
		m->oneway = true;
		return 0;
	}
	if (!m->oneway)
		snprintf(m->note, sizeof(m->note), "not measured one way (different clocks; use the round-trip mode)");
hw_check:
	/* hw: the server says it took it up (a server that ignores the field
	 * would time by its kernel clock), else no run. */
	if (m->rx_ts == XP_RXTS_HW && (!m->on || strcmp(xp_json_str(p, "rx_timestamp", ""), "hw"))) {
		snprintf(err, errlen, "--rx-timestamp hw: the server does not time arrivals by the NIC (%s; --rx-timestamp "
			 "auto falls back to its kernel clock)", m->on ? "an older xdpperf?" : m->note);
		return 1;
	}
	return 0;
}

int xp_cmeas_verdict(const struct xp_cmeas *m, char *err, size_t errlen)
{
	if (!m->on || m->rx_ts != XP_RXTS_HW || !m->rx_counts || !m->rx_stamped || m->rx_nic)
		return 0;
	snprintf(err, errlen, "--rx-timestamp hw: the server's NIC gave a receive time to none of the %llu frames (%s); "
		 "they were counted, not timed (--rx-timestamp auto times them by the server's kernel clock)",
		 (unsigned long long)m->rx_stamped, m->rx_note[0] ? m->rx_note : "its driver gives none for them");
	return 1;
}

void xp_cmeas_info(const struct xp_cmeas *m, struct xp_report_info *i)
{
	i->stamps = m->on;
	i->stamp_place = m->place == XP_STAMP_AT_IPID ? "IPv4 ID + first 6 payload bytes" : "first 8 payload bytes";
	i->stamp_clock = m->tai ? "CLOCK_TAI" : "CLOCK_MONOTONIC";
	i->rx_clock = m->rx_clock;
	i->rx_note = m->rx_note;
	i->oneway = m->oneway;
	i->rtt = m->rtt && m->rp;
	i->grace = m->grace;
	i->setup_s = m->setup_s;
	i->stamp_t0 = m->t0;
	i->stamp_ival = m->ival;
	snprintf(i->stamp_note, sizeof(i->stamp_note), "%s", m->note);
}

double xp_cmeas_due(const struct xp_cmeas *m)
{
	return m->t0_s + (double)(m->next + 1) * m->ival_s + m->grace;
}

int xp_cmeas_queue(struct xp_cmeas *m, const struct xp_period *p, double t0, double t1)
{
	if (m->qn == m->qcap) {
		unsigned cap = m->qcap ? m->qcap * 2 : 8;
		struct xp_meas_line *q = realloc(m->q, cap * sizeof(*q));
		if (!q)
			return -ENOMEM;
		m->q = q;
		m->qcap = cap;
	}
	struct xp_meas_line *l = &m->q[m->qn++];
	l->p = *p;
	/* Nominal times: the line of [k I, (k+1) I] is send interval k; a last,
	 * stretched line covers the intervals it spans. */
	l->first = (uint64_t)llround(t0 / m->ival_s);
	double e = t1 / m->ival_s;
	uint64_t last = (uint64_t)ceil(e - 1e-6);
	l->last = last > l->first ? last - 1 : l->first;
	l->done = 0;
	memset(&l->p.meas, 0, sizeof(l->p.meas));
	l->p.meas.valid = true;
	l->p.meas.first = l->first;
	l->p.meas.last = l->last;
	l->p.meas.oneway = m->oneway;
	l->p.meas.rtt = m->rtt;
	l->p.meas.lat_why = m->oneway ? NULL : m->note;
	xp_lat_init(&l->p.meas.lat);
	return 0;
}

/* The line that holds send interval i, NULL if none does (before the first or a gap). */
static struct xp_meas_line *line_of(struct xp_cmeas *m, uint64_t i)
{
	for (unsigned k = 0; k < m->qn; k++)
		if (m->q[k].first <= i && i <= m->q[k].last)
			return &m->q[k];
	return NULL;
}

void xp_cmeas_add(struct xp_cmeas *m, const struct xp_final_ival *f, int sent_rc, uint64_t sent)
{
	bool unknown = f->unknown;
	/* The engine's ring no longer held it (0 with nothing added: it sent nothing in i). */
	if (sent_rc) {
		sent = 0;
		unknown = true;
	}
	if (f->streams) {
		m->streams_last = f->streams;
		m->jitter_last_mean = f->jitter_mean_ns;
		m->jitter_last_max = f->jitter_max_ns;
	}
	if (unknown)
		m->total.unknown = true;
	m->total.sent += sent;
	xp_lat_add(&m->total.lat, &f->lat);
	struct xp_meas_line *l = line_of(m, f->index);
	if (l) {
		struct xp_meas_figs *x = &l->p.meas;
		if (unknown)
			x->unknown = true;
		x->sent += sent;
		xp_lat_add(&x->lat, &f->lat);
		x->lost = (int64_t)x->sent - (int64_t)x->lat.recv;
		x->streams = m->streams_last;
		x->jitter_mean_ns = m->jitter_last_mean;
		x->jitter_max_ns = m->jitter_last_max;
		l->done++;
	}
	m->next = f->index + 1;
}

struct xp_meas_line *xp_cmeas_ready(struct xp_cmeas *m, bool all)
{
	if (!m->qn)
		return NULL;
	struct xp_meas_line *l = &m->q[0];
	if (all || m->next > l->last)
		return l;
	return NULL;
}

void xp_cmeas_pop(struct xp_cmeas *m)
{
	if (!m->qn)
		return;
	memmove(&m->q[0], &m->q[1], (m->qn - 1) * sizeof(m->q[0]));
	m->qn--;
}

void xp_cmeas_extend(struct xp_cmeas *m, uint64_t upto)
{
	if (!m->qn)
		return;
	struct xp_meas_line *l = &m->q[m->qn - 1];
	if (upto > l->last) {
		l->last = upto;
		l->p.meas.last = upto;
	}
}

void xp_cmeas_streams(struct xp_cmeas *m, const struct xp_stream_figs *s, unsigned n)
{
	struct xp_stream_sum sum;
	xp_stream_figs_sum(s, n, &sum);
	m->total.have_streams = true;
	m->total.reorder_max = sum.reorder_max;
	m->total.too_old = sum.too_old;
	m->total.streams = sum.streams;
	m->total.jitter_mean_ns = sum.jitter_mean_ns;
	m->total.jitter_max_ns = sum.jitter_max_ns;
}

void xp_cmeas_summary(struct xp_cmeas *m, struct xp_period *total)
{
	struct xp_meas_figs *t = &m->total;
	if (!m->on)
		return;
	t->valid = true;
	t->first = 0;
	t->last = m->next ? m->next - 1 : 0;
	/* Over the whole test, a late frame arrived: it is not lost. */
	t->lost = (int64_t)t->sent - (int64_t)t->lat.recv - (int64_t)t->lat.late;
	t->oneway = m->oneway;
	t->rtt = m->rtt;
	t->lat_why = m->oneway ? NULL : m->note;
	t->rx_ts = m->rx_ts;
	t->rx_counts = m->rx_counts && m->rx_ts != XP_RXTS_SW;
	t->rx_stamped = m->rx_stamped;
	t->rx_nic = m->rx_nic;
	if (!t->have_streams) {
		t->streams = m->streams_last;
		t->jitter_mean_ns = m->jitter_last_mean;
		t->jitter_max_ns = m->jitter_last_max;
	}
	total->meas = *t;
}

int xp_cmeas_fetch(struct xp_cmeas *m, struct xp_ctrl *ctrl, const struct xp_engine_ops *ops, struct xp_engine *e,
		   char *err, size_t errlen)
{
	struct json_object *q = json_object_new_object(), *r = NULL, *v;
	struct xp_final_ival *f = malloc(sizeof(*f));
	uint64_t i = m->next, sent = 0;
	char why[160], msg[200];
	int rc;
	json_object_object_add(q, "op", json_object_new_string("sample"));
	json_object_object_add(q, "final", json_object_new_int64((int64_t)i));
	rc = f ? xp_ctrl_send(ctrl, q) : -ENOMEM;
	json_object_put(q);
	if (rc)
		goto out;
	do {
		rc = xp_ctrl_recv(ctrl, 3000, &r);
	} while (rc == -EINTR);
	if (rc <= 0) {
		rc = rc == 0 ? -ECONNRESET : rc;
		goto out;
	}
	rc = -EPROTO;
	if (!strcmp(xp_json_str(r, "op", ""), "error")) {
		xp_msg_printable(xp_json_str(r, "msg", "?"), msg, sizeof(msg));
		snprintf(err, errlen, "server: %s", msg);
		goto out;
	}
	if (!json_object_object_get_ex(r, "interval", &v) || xp_final_from_json(v, f, why, sizeof(why)) ||
	    f->index != i) {
		snprintf(err, errlen, "server: no valid figures of send interval %llu", (unsigned long long)i);
		goto out;
	}
	/* The server's running count of what the NIC timed (--rx-timestamp hw|auto). */
	if (json_object_object_get_ex(r, "rx_timed", &v) && json_object_is_type(v, json_type_object)) {
		struct json_object *a, *b;
		if (json_object_object_get_ex(v, "stamped", &a) && json_object_is_type(a, json_type_int) &&
		    json_object_object_get_ex(v, "nic", &b) && json_object_is_type(b, json_type_int) &&
		    json_object_get_int64(a) >= 0 && json_object_get_int64(b) >= 0 &&
		    json_object_get_int64(b) <= json_object_get_int64(a)) {
			m->rx_counts = true;
			m->rx_stamped = (uint64_t)json_object_get_int64(a);
			m->rx_nic = (uint64_t)json_object_get_int64(b);
		}
	}
	if (m->rp) {
		/* Round trip: what came back of i, timed here, instead of what
		 * reached the server (whose clock may differ from ours). The
		 * server's jitter stays: RFC 3550's needs no shared clock. */
		rc = rtt_prog_meas_close(m->rp, i + 1);
		if (rc) {
			snprintf(err, errlen, "cannot close send interval %llu of the round trip: %s",
				 (unsigned long long)i, strerror(-rc));
			goto out;
		}
		xp_lat_init(&f->lat);
		rc = rtt_prog_read_ibin(m->rp, i, &f->lat);
		f->unknown = rc == -ENOENT;
		if (rc && rc != -ENOENT) {
			snprintf(err, errlen, "cannot read send interval %llu of the round trip: %s",
				 (unsigned long long)i, strerror(-rc));
			goto out;
		}
		if (f->unknown)
			xp_lat_init(&f->lat);
	}
	/* What the engine stamped into i, read now that i is over (its ring still holds it). */
	int sr = ops->sent_in(e, i, &sent);
	xp_cmeas_add(m, f, sr, sent);
	rc = 0;
out:
	json_object_put(r);
	free(f);
	return rc;
}

void xp_cmeas_flush(struct xp_cmeas *m, struct xp_report *rep, bool all)
{
	struct xp_meas_line *l;
	while ((l = xp_cmeas_ready(m, all))) {
		/* Left over after an error: without figures rather than with half of them. */
		if (m->next <= l->last)
			l->p.meas.valid = false;
		xp_report_interval(rep, &l->p);
		free(l->p.flows); /* the line's per-flow figures (client.c): reported */
		xp_cmeas_pop(m);
	}
}

int xp_cmeas_streams_json(struct xp_cmeas *m, struct json_object *a, char *err, size_t errlen)
{
	char why[160];
	if (!m->on)
		return 0;
	struct xp_stream_figs *st = calloc(XP_STAMP_MAX_STREAMS, sizeof(*st));
	if (!st)
		return -ENOMEM;
	int n = xp_streams_from_json(a, st, XP_STAMP_MAX_STREAMS, why, sizeof(why));
	if (n >= 0)
		xp_cmeas_streams(m, st, (unsigned)n);
	else
		snprintf(err, errlen, "server: %s", why);
	free(st);
	return n < 0 ? -EPROTO : 0;
}

int xp_cmeas_rtt_start(struct xp_cmeas *m, const struct xp_spec *sp, const struct frame_spec *tmpl, int ifindex,
		       char *err, size_t errlen)
{
	const char *mode;
	if (!m->on || !m->rtt)
		return 0;
	if (!m->server_reflects) {
		snprintf(err, errlen, "--rtt: the server does not send frames back (an older xdpperf?)");
		return 1;
	}
	struct rtt_prog_cfg rc = { .server = tmpl->dst, .client = tmpl->src, .port_lo = sp->traffic[0].port_lo,
				   .port_hi = sp->traffic[0].port_hi, .protos = sp->traffic[0].udp ? XP_PROTO_UDP : XP_PROTO_TCP };
	if (rtt_prog_open(&rc, &m->rp, err, errlen))
		return 1;
	if (rtt_prog_attach(m->rp, ifindex, sp->xdp_mode, &mode, err, errlen)) {
		rtt_prog_close(m->rp);
		m->rp = NULL;
		return 1;
	}
	struct xp_slot_meas sm = { .t0 = m->t0, .ival = m->ival,
				   .flags = XP_MEAS_ONEWAY | (m->tai ? XP_MEAS_TAI : 0) };
	int r = rtt_prog_meas_start(m->rp, &sm);
	if (r) {
		snprintf(err, errlen, "cannot start the round-trip accounting: %s", strerror(-r));
		rtt_prog_close(m->rp);
		m->rp = NULL;
		return 1;
	}
	return 0;
}

void xp_cmeas_free(struct xp_cmeas *m)
{
	rtt_prog_close(m->rp);
	m->rp = NULL;
	for (unsigned i = 0; i < m->qn; i++)
		free(m->q[i].p.flows);
	free(m->q);
	m->q = NULL;
	m->qn = m->qcap = 0;
}
