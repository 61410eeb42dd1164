/*
 * The --metrics store: the last XP_METRICS_TESTS tests' figures, one record
 * each, behind one mutex. Writers are once-an-interval paths (the client's
 * report events, the server's samples), the reader is the endpoint's thread,
 * which copies the records under the lock and formats the copy outside it:
 * a scrape never holds up an interval, and a scrape sees each record as one
 * interval left it, never half of one.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "report/metrics.h"
#include "report/report.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct xp_metrics_test tests[XP_METRICS_TESTS];
static uint64_t next_seq;
static uint64_t client_tests; /* the client's test numbers */

void xp_metrics_snapshot(struct xp_metrics_test out[XP_METRICS_TESTS])
{
	pthread_mutex_lock(&lock);
	memcpy(out, tests, sizeof(tests));
	pthread_mutex_unlock(&lock);
}

void xp_metrics_reset(void)
{
	pthread_mutex_lock(&lock);
	memset(tests, 0, sizeof(tests));
	next_seq = client_tests = 0;
	pthread_mutex_unlock(&lock);
}

/* A new record (the lock held): a free one, else the oldest ended one, else the oldest. */
static struct xp_metrics_test *take(const char *role, uint64_t id, const char *engine, const char *kind,
				    const char *peer)
{
	struct xp_metrics_test *t = NULL;
	for (int k = 0; k < XP_METRICS_TESTS && !t; k++)
		if (!tests[k].seq)
			t = &tests[k];
	bool free_found = t;
	for (int k = 0; k < XP_METRICS_TESTS && !free_found; k++)
		if (!tests[k].running && (!t || tests[k].seq < t->seq))
			t = &tests[k];
	struct xp_metrics_test *oldest = &tests[0];
	for (int k = 1; k < XP_METRICS_TESTS && !t; k++)
		if (tests[k].seq < oldest->seq)
			oldest = &tests[k];
	if (!t)
		t = oldest; /* all running: the oldest goes */
	memset(t, 0, sizeof(*t));
	t->seq = ++next_seq;
	t->id = id;
	snprintf(t->role, sizeof(t->role), "%s", role);
	snprintf(t->engine, sizeof(t->engine), "%s", engine ? engine : "");
	snprintf(t->kind, sizeof(t->kind), "%s", kind ? kind : "");
	snprintf(t->peer, sizeof(t->peer), "%s", peer ? peer : "");
	t->running = true;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	t->start_time = ts.tv_sec + ts.tv_nsec * 1e-9;
	t->offered_pps = -1;
	return t;
}

/* The record of role's test id (the lock held), NULL when it was dropped meanwhile. */
static struct xp_metrics_test *find(const char *role, uint64_t id)
{
	for (int k = 0; k < XP_METRICS_TESTS; k++)
		if (tests[k].seq && tests[k].id == id && !strcmp(tests[k].role, role))
			return &tests[k];
	return NULL;
}

/* ---- the client: its reports' events (report/sink.c's tap) ---- */

/* Connections: the established count the report gives (the server's), and failed attempts. */
static void conns_of(const struct xp_period *p, uint64_t *opened, uint64_t *failed)
{
	if (p->figures == XP_FIGS_SOCKETS) {
		*opened = p->sock.conn_ok;
		*failed = p->sock.conn_fail + p->sock.conn_timeout;
	} else {
		*opened = xp_period_established(p);
		*failed = p->hs.fail_timeout + p->hs.fail_reset + p->hs.fail_unreach;
	}
}

/* What the engine sent: frames, or SYNs for the XDP connection engine. */
static uint64_t sent_of(const struct xp_period *p)
{
	return p->figures == XP_FIGS_HANDSHAKES ? p->hs.syn_sent : p->tx_pkts;
}

/* A flow's label: its name, or "flow N" (N from 1). */
static void flow_name(struct xp_metrics_flow *m, const char *name, unsigned i)
{
	if (name[0])
		snprintf(m->name, sizeof(m->name), "%s", name);
	else
		snprintf(m->name, sizeof(m->name), "flow %u", i + 1);
}

/* An interval of a test with flows: its figures added to each flow's. */
static void flows_interval(struct xp_metrics_test *t, const struct xp_period *p)
{
	if (!p->flows || !p->nflows)
		return;
	unsigned n = p->nflows < XP_METRICS_FLOWS ? p->nflows : XP_METRICS_FLOWS;
	if (!t->nflows)
		for (unsigned i = 0; i < n; i++)
			flow_name(&t->flows[i], p->flows[i].name, i);
	t->nflows = n;
	for (unsigned i = 0; i < n; i++) {
		const struct xp_flow_ival *f = &p->flows[i];
		struct xp_metrics_flow *m = &t->flows[i];
		m->tx_frames += f->tx_frames;
		m->tx_bytes += f->tx_bytes;
		m->counted = f->rx_known;
		if (f->rx_known) {
			m->rx_frames += f->rx.recv;
			m->rx_bytes += f->rx.bytes;
			m->lost += (int64_t)f->tx_frames - (int64_t)f->rx.recv;
		}
	}
}

/* The end: each flow's figures are the summary's. */
static void flows_end(struct xp_metrics_test *t, const struct xp_summary *s)
{
	if (!s->flows || !s->nflows)
		return;
	unsigned n = s->nflows < XP_METRICS_FLOWS ? s->nflows : XP_METRICS_FLOWS;
	t->nflows = n;
	for (unsigned i = 0; i < n; i++) {
		const struct xp_flow_result *f = &s->flows[i];
		struct xp_metrics_flow *m = &t->flows[i];
		flow_name(m, f->name, i);
		m->tx_frames = f->tx_frames;
		m->tx_bytes = f->tx_bytes;
		m->counted = f->rx_known;
		m->rx_frames = f->rx_known ? f->rx.recv : 0;
		m->rx_bytes = f->rx_known ? f->rx.bytes : 0;
		m->lost = f->rx_known && f->tx_frames > f->rx.recv ? (int64_t)(f->tx_frames - f->rx.recv) : 0;
	}
}

static void tap_start(struct xp_report *r, const struct xp_report_info *i)
{
	pthread_mutex_lock(&lock);
	uint64_t id = ++client_tests;
	struct xp_metrics_test *t = take("client", id, i->engine, i->test, i->server);
	t->sends = xp_figs_sent(i->figures);
	t->receives = !i->client_only;
	t->loss_known = i->figures == XP_FIGS_FRAMES;
	t->conns = i->figures == XP_FIGS_SOCKETS || i->figures == XP_FIGS_HANDSHAKES;
	t->target_pps = i->target_cps > 0 ? i->target_cps : i->target_pps;
	r->tap_id = id;
	pthread_mutex_unlock(&lock);
}

static void tap_interval(struct xp_report *r, const struct xp_period *p)
{
	struct xp_rates x;
	xp_rates_of(p, &x);
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = find("client", r->tap_id);
	if (t) {
		uint64_t sent = sent_of(p), opened, failed;
		t->tx_frames += sent;
		t->tx_bytes += p->tx_bytes;
		t->rx_frames += p->rx.pkts;
		t->rx_bytes += p->rx.bytes;
		if (x.lost_known)
			t->lost += x.lost;
		if (t->conns) {
			conns_of(p, &opened, &failed);
			t->conn_opened += opened;
			t->conn_failed += failed;
			/* Sockets: open now. The XDP engine's: -k holds what opened and was not reset since, -x
			 * closes each connection as it opens. */
			t->conn_reset += p->hs.fail_reset;
			if (p->figures == XP_FIGS_SOCKETS)
				t->conn_held = p->sock.open_now;
			else if (!strcmp(t->kind, "hold"))
				t->conn_held = t->conn_opened > t->conn_reset ? t->conn_opened - t->conn_reset : 0;
		}
		if (p->t1 > p->t0)
			t->offered_pps = sent / (p->t1 - p->t0);
		if (p->meas.valid)
			xp_metrics_lat_add(t, &p->meas.lat);
		flows_interval(t, p);
	}
	pthread_mutex_unlock(&lock);
}

/* The summary's figures replace the sums of the intervals: they are the test's. */
static void tap_end(struct xp_report *r, const struct xp_summary *s)
{
	const struct xp_period *p = &s->total;
	struct xp_rates x;
	xp_rates_of(p, &x);
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = find("client", r->tap_id);
	if (t) {
		t->running = false;
		t->tx_frames = sent_of(p);
		t->tx_bytes = p->tx_bytes;
		t->rx_frames = p->rx.pkts;
		t->rx_bytes = p->rx.bytes;
		if (t->loss_known)
			t->lost = x.lost;
		if (t->conns) {
			conns_of(p, &t->conn_opened, &t->conn_failed);
			t->conn_held = s->hold.wanted ? s->hold.open_at_end : 0; /* the client closed the rest */
		}
		if (s->pace.reached_pps > 0)
			t->offered_pps = s->pace.reached_pps;
		else if (p->t1 > p->t0)
			t->offered_pps = sent_of(p) / (p->t1 - p->t0);
		if (p->meas.valid) {
			memset(t->lat_bucket, 0, sizeof(t->lat_bucket));
			t->lat_count = 0;
			t->lat_sum_s = 0;
			xp_metrics_lat_add(t, &p->meas.lat);
		}
		flows_end(t, s);
	}
	pthread_mutex_unlock(&lock);
}

static void tap_error(struct xp_report *r, const char *msg)
{
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = r->started ? find("client", r->tap_id) : NULL;
	if (t)
		t->running = false;
	pthread_mutex_unlock(&lock);
}

static const struct xp_report_tap client_tap = { tap_start, tap_interval, tap_end, tap_error };

void xp_metrics_client_tap(void)
{
	xp_report_tap = &client_tap;
}

/* ---- the server: its tests' samples (server/session.c, server/measure.c) ---- */

void xp_metrics_server_start(uint64_t id, const char *engine, const char *kind, const char *peer)
{
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = take("server", id, engine, kind, peer);
	t->receives = true;
	t->conns = kind && strcmp(kind, "stream");
	pthread_mutex_unlock(&lock);
}

void xp_metrics_server_counts(uint64_t id, const struct xp_counters *c, uint64_t accepted)
{
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = find("server", id);
	if (t) {
		t->rx_frames = c->pkts;
		t->rx_bytes = c->bytes;
		if (t->conns)
			t->conn_opened = c->conn_established + accepted;
	}
	pthread_mutex_unlock(&lock);
}

void xp_metrics_server_lat(uint64_t id, const struct xp_lat_hist *h)
{
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = find("server", id);
	if (t)
		xp_metrics_lat_add(t, h);
	pthread_mutex_unlock(&lock);
}

void xp_metrics_server_end(uint64_t id)
{
	pthread_mutex_lock(&lock);
	struct xp_metrics_test *t = find("server", id);
	if (t)
		t->running = false;
	pthread_mutex_unlock(&lock);
}
