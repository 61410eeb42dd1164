/*
 * Client role: ask the server for a test over the control channel, find the
 * path (egress interface, and the next hop's MAC where the engine writes its
 * own Ethernet headers), run an engine for -t seconds, and report each
 * interval what was sent (engine counters) beside what arrived (the server's
 * XDP counters and socket counts).
 *
 * It drives every engine through engine/engine.h and names none: what an
 * engine needs, asks of the server and reports is the engine's declaration.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client/session.h"
#include "util/process.h"
#include "util/time.h"

/* Wait until `until` (as xp_client_wait_until), reading the send intervals that become final meanwhile. */
static int wait_reading(struct client *c, double until)
{
	for (;;) {
		double due = c->meas.on ? xp_cmeas_due(&c->meas) : until + 1;
		int w = xp_client_wait_until(c, due < until ? due : until);
		if (w || due > until)
			return w;
		int e = xp_cmeas_fetch(&c->meas, &c->ctrl, c->ops, c->eng, c->errbuf, sizeof(c->errbuf));
		if (e)
			return e;
		xp_cmeas_flush(&c->meas, &c->rep, false);
	}
}

/* The figures of the period between two snapshots: every group, whichever the engine fills. */
static void period_of(const struct client *c, const struct snap *now, const struct snap *prev, struct xp_period *p)
{
	const struct xp_engine_stats *a = &now->eng, *b = &prev->eng;
	p->figures = c->ops->figures;
	p->client_only = c->no_server;
	p->tx_pkts = a->tx.pkts - b->tx.pkts;
	p->tx_bytes = a->tx.bytes - b->tx.bytes;
	xp_counters_sub(&now->rx, &prev->rx, &p->rx);

	struct xp_sock_figs *f = &p->sock;
	f->conn_ok = a->sock.conn_ok - b->sock.conn_ok;
	f->conn_fail = a->sock.conn_fail - b->sock.conn_fail;
	f->conn_reset = a->sock.conn_reset - b->sock.conn_reset;
	f->conn_timeout = a->sock.conn_timeout - b->sock.conn_timeout;
	f->conn_closed = a->sock.conn_closed - b->sock.conn_closed;
	f->open_now = a->sock.open_now;
	f->payload_bytes = a->sock.payload_bytes - b->sock.payload_bytes;
	f->in_flight = a->sock.in_flight - b->sock.in_flight;
	f->s_accepted = now->srv.s_accepted - prev->srv.s_accepted;
	f->s_closed = now->srv.s_closed - prev->srv.s_closed;
	f->s_resets = now->srv.s_resets - prev->srv.s_resets;
	f->s_open_now = now->srv.s_open_now;
	f->s_bytes_rx = now->srv.s_bytes_rx - prev->srv.s_bytes_rx;
	f->s_listen_overflows = now->srv.s_listen_overflows - prev->srv.s_listen_overflows;
	f->s_listen_drops = now->srv.s_listen_drops - prev->srv.s_listen_drops;
	f->s_embryonic_rsts = now->srv.s_embryonic_rsts - prev->srv.s_embryonic_rsts;

	struct xp_handshake_figs *h = &p->hs;
	h->syn_sent = p->tx_pkts; /* a handshake engine's frames are its SYNs */
	h->synack_seen = a->hs.synack_seen - b->hs.synack_seen;
	h->acks_sent = a->hs.acks_sent - b->hs.acks_sent;
	h->fins_sent = a->hs.fins_sent - b->hs.fins_sent;
	h->rst_seen = a->hs.rst_seen - b->hs.rst_seen;
	h->finack_answered = a->hs.finack_answered - b->hs.finack_answered;
	h->unanswered = a->hs.unanswered - b->hs.unanswered;
	h->rst_closed = a->hs.rst_closed - b->hs.rst_closed;
	h->window = a->hs.window;
	h->syn_retries = a->hs.syn_retries;
	h->in_flight = a->hs.in_flight;
#define HS_DELTA(f) h->f = a->hs.f - b->hs.f
	HS_DELTA(syn_retx);
	HS_DELTA(fin_retx);
	HS_DELTA(keepalives);
	HS_DELTA(fail_timeout);
	HS_DELTA(fail_reset);
	HS_DELTA(fail_unreach);
	HS_DELTA(fin_timeout);
	HS_DELTA(synack_dup);
	HS_DELTA(stale_rst);
	HS_DELTA(send_errors);
#undef HS_DELTA
}

/*
 * After the engine stops, wait until the server's counts settle: frames in
 * flight for frame engines; for socket streams, until the server has read
 * every byte written (a segment lost at the very end waits for TCP's
 * retransmit timer, 200 ms at least, so a quiet spell proves nothing).
 */
static void settle(struct client *c, const struct snap *end)
{
	struct snap s = *end;
	uint64_t prev = c->last.rx.pkts;
	bool stream = end->eng.sock.payload_bytes > 0;
	/* Connections the client saw established: until the server accepted
	 * them (or its kernel dropped them from a full accept queue), so a
	 * server slow to accept does not show as a gap between the two. */
	bool conns = !stream && c->ops->figures == XP_FIGS_SOCKETS && end->eng.sock.conn_ok > 0;
	/* Frames of our own: done once the server counted as many. */
	bool frames = c->ops->figures != XP_FIGS_SOCKETS;
	double until = xp_now() + (stream ? 5.0 : conns ? 2.0 : 1.0);
	while (xp_now() < until) {
		xp_sleep(0.05);
		if (xp_client_server_sample(c, "sample", &s, NULL))
			return;
		if (stream) {
			if (s.srv.s_bytes_rx >= end->eng.sock.payload_bytes)
				return;
			continue;
		}
		if (conns) {
			if (s.srv.s_accepted + s.srv.s_listen_overflows + s.srv.s_embryonic_rsts >= end->eng.sock.conn_ok)
				return;
			continue;
		}
		if ((frames && s.rx.pkts >= end->eng.tx.pkts) || s.rx.pkts == prev)
			return;
		prev = s.rx.pkts;
	}
}

/* What the report's header says: the common part, then the engine's own. */
static void fill_info(struct client *c, struct xp_report_info *i, const struct xp_engine_stats *st)
{
	const struct xp_spec *sp = c->spec;
	const struct xp_engine_cfg *ec = &c->ec;
	memset(i, 0, sizeof(*i));
	xp_addr_str(&c->local, i->client, sizeof(i->client));
	xp_addr_str(&c->server, i->server, sizeof(i->server));
	snprintf(i->dev, sizeof(i->dev), "%s", c->link.name);
	snprintf(i->server_dev, sizeof(i->server_dev), "%s", c->server_dev);
	i->engine = c->ops->name;
	i->figures = c->ops->figures;
	i->engine_mode = st->mode;
	i->server_xdp_mode = c->xdp_mode;
	i->test = xp_test_kind_name(ec->kind);
	i->proto = sp->traffic[0].udp ? "udp" : "tcp";
	i->family = c->local.family == AF_INET6 ? 6 : 4;
	i->frame_size = c->req.frame_size;
	if (ec->frames.mix.n) {
		xp_mix_name(&ec->frames.mix, i->frame_mix, sizeof(i->frame_mix));
		i->frame_mean = xp_mix_mean(&ec->frames.mix);
	}
	i->queues = ec->frames.queues;
	i->port_lo = sp->traffic[0].port_lo, i->port_hi = sp->traffic[0].port_hi;
	i->cport_lo = sp->traffic[0].cport_lo, i->cport_hi = sp->traffic[0].cport_hi;
	i->duration = sp->duration;
	i->interval = sp->interval;
	i->target_pps = ec->pps;
	i->parallel = (unsigned)c->req.parallel;
	if (c->ops->describe)
		c->ops->describe(c->eng, i);
	i->client_only = c->no_server;
	i->spec = sp;
	xp_cmeas_info(&c->meas, i);
}

/* One interval: our counts and the server's, as of the same moment; with flows, each flow's (*fl). 0 or -errno. */
static int sample(struct client *c, struct snap *now, double t0, struct xp_flow_ival **fl)
{
	/*
	 * The server reads its counters about half a round trip after we
	 * ask: take our count midway between a reading before and one after,
	 * so both sides of the line describe the same moment and per-interval
	 * loss stays honest.
	 */
	struct xp_engine_stats st2;
	c->ops->read(c->eng, &now->eng);
	int e = xp_client_flows_sample(c, now, fl);
	if (e)
		return e;
	c->ops->read(c->eng, &st2);
	now->t = xp_now() - t0;
	xp_midpoint(now->eng.tx.pkts, now->eng.tx.bytes, st2.tx.pkts, st2.tx.bytes, &now->eng.tx.pkts,
		    &now->eng.tx.bytes);
	c->good = *now;
	return 0;
}

/* Stop the engine, once, and note when: the test's sending time ends there. */
static void stop_engine(struct client *c)
{
	if (c->stopped_at)
		return;
	c->ops->stop(c->eng);
	c->stopped_at = xp_now();
}

/* Report every interval until -t ends, a signal, or the server goes away. */
static void interval_loop(struct client *c, double t0, struct snap *now, struct xp_summary *sum,
			  uint64_t *peak_open, uint64_t *peak_s_open)
{
	const struct xp_spec *sp = c->spec;
	struct snap prev = { 0 };
	double tick = t0, end = t0 + sp->duration;
	while (!c->error) {
		double nominal = tick - t0; /* the line's start on the interval schedule */
		tick += sp->interval;
		if (tick > end - sp->interval * 0.25)
			tick = end;
		int w = wait_reading(c, tick);
		if (w < 0) {
			c->error = xp_client_ctrl_errstr(c, w);
			c->server_gone = true;
			break;
		}
		if (w > 0) {
			sum->interrupted = true;
			break;
		}
		/* A frame stream sends for -t, not for -t plus the last sample's
		 * round trip to the server: stopped first, its last line and the
		 * summary have every frame it sent (the settle wait after the loop
		 * lets the last ones arrive). Under load the end came 68 ms late
		 * once (wake-up and round trip), and a 2-s test at 30 kpps sent
		 * 62046 frames, not 60000.
		 * Other kinds keep running through it: a hold's last sample must
		 * see its connections still open. */
		if (tick >= end && c->ops->figures == XP_FIGS_FRAMES && c->ec.kind == XP_TEST_STREAM)
			stop_engine(c);
		struct xp_flow_ival *fl = NULL;
		int e = sample(c, now, t0, &fl);
		if (e) {
			c->error = xp_client_ctrl_errstr(c, e);
			c->server_gone = true;
			break;
		}
		struct xp_period p = { .t0 = prev.t, .t1 = now->t, .interval = true };
		period_of(c, now, &prev, &p);
		p.flows = fl;
		p.nflows = fl ? c->ec.frames.nflows : 0;
		p.flow_top = sp->flow_top;
		/* With stamps, the line waits until its send intervals are final (the queue owns fl then). */
		if (!c->meas.on) {
			xp_report_interval(&c->rep, &p);
			free(fl);
		} else if (xp_cmeas_queue(&c->meas, &p, nominal, tick - t0)) {
			c->error = "out of memory";
			free(fl);
		}
		xp_diag_watch_sample(&c->diag);
		/* A stall: connections (not a hold's, which open once) or frames received. */
		if (c->ops->figures == XP_FIGS_HANDSHAKES && c->ec.kind == XP_TEST_CONNECT)
			xp_stall_feed(&sum->stall, p.t0, p.t1,
				      (double)(c->no_server ? p.hs.acks_sent : xp_period_established(&p)),
				      (double)p.hs.syn_sent);
		else if (c->ops->figures == XP_FIGS_FRAMES)
			xp_stall_feed(&sum->stall, p.t0, p.t1, (double)p.rx.pkts, (double)p.tx_pkts);
		if (p.sock.open_now > *peak_open)
			*peak_open = p.sock.open_now;
		if (p.sock.s_open_now > *peak_s_open)
			*peak_s_open = p.sock.s_open_now;
		prev = *now;
		if (tick >= end)
			break;
	}
}

/* --max-loss and --require-rate: the exit status of a test that ran to its end (summary.c). */
static int thresholds(struct client *c, const struct xp_summary *sum)
{
	char msg[512] = "";
	int rc = xp_summary_thresholds(c->spec, sum, msg, sizeof(msg));
	if (rc)
		xp_client_error_set(msg);
	/* A memory sink's caller (a suite) reads the verdict where it reads an error: the other sinks print
	 * the summary, which says it. */
	if (rc && c->rep.fmt == XP_REPORT_MEMORY)
		snprintf(c->rep.mem.error, sizeof(c->rep.mem.error), "%s", msg);
	/* A suite's trial (RFC 2544) says it in its own report, once. */
	if (rc && !c->ro->quiet)
		fprintf(stderr, "xdpperf: %s\n", msg);
	return rc;
}

/* The offered load against the target: the engine's count over the test, and its own account of why. */
/* A test with flows: each flow's frames and bytes the engine sent, into the
 * summary beside the server's count (request.c fills that from its stop reply). */
static void flows_sent(struct client *c, struct xp_summary *sum)
{
	unsigned n = c->ec.frames.nflows;
	if (!n || !c->flow_res || !c->ops->read_flows)
		return;
	uint64_t *pk = calloc(n, sizeof(*pk)), *by = calloc(n, sizeof(*by));
	if (pk && by) {
		c->ops->read_flows(c->eng, pk, by, n);
		for (unsigned i = 0; i < n; i++) {
			c->flow_res[i].tx_frames = pk[i];
			c->flow_res[i].tx_bytes = by[i];
		}
		sum->flows = c->flow_res;
		sum->nflows = n;
		sum->flow_top = c->spec->flow_top;
	}
	free(pk);
	free(by);
}

static void pace_of(struct client *c, const struct snap *end, struct xp_summary *sum)
{
	struct xp_pace_figs *p = &sum->pace;
	/* Over the interval samples: while the engine was sending (its stop may
	 * take longer, e.g. waiting for the last replies, which is not sending). */
	double secs = c->good.t;
	/* A hold test's SYNs are -P of them, not a rate kept up over the test. */
	p->target_pps = c->ec.kind == XP_TEST_HOLD ? 0 : c->ec.pps;
	if (p->target_pps <= 0 || secs <= 0)
		return;
	p->reached_pps = c->good.eng.tx.pkts / secs;
	xp_pace_judge(&end->eng.pace, p);
}

/*
 * After the settle wait every frame that will arrive has: read the send
 * intervals not yet read, up to the one we are in now (late frames count in
 * the interval they arrived in), and print their lines. The engine stopped,
 * so the rings are no longer overwritten.
 */
static void finish_intervals(struct client *c)
{
	if (!c->meas.on || c->error)
		return;
	uint64_t now = xp_cmeas_now_ticks(&c->meas);
	uint64_t cur = now > c->meas.t0 ? (now - c->meas.t0) / c->meas.ival : 0;
	xp_cmeas_extend(&c->meas, cur);
	/* With flows, the last line's per-flow figures run to the end too. */
	struct xp_flow_ival *last = c->meas.qn ? c->meas.q[c->meas.qn - 1].p.flows : NULL;
	int fe = xp_client_flows_last(c, last);
	if (fe) {
		c->error = xp_client_ctrl_errstr(c, fe);
		c->server_gone = true;
		return;
	}
	while (c->meas.next <= cur) {
		int e = xp_cmeas_fetch(&c->meas, &c->ctrl, c->ops, c->eng, c->errbuf, sizeof(c->errbuf));
		if (e) {
			c->error = xp_client_ctrl_errstr(c, e);
			c->server_gone = true;
			return;
		}
	}
	xp_cmeas_flush(&c->meas, &c->rep, false);
}

/*
 * Frame streams: watch for ICMP errors quoting our frames (net/icmp_watch.h).
 * Connection tests have their own (the client program counts unreachables
 * for its SYNs; sockets hear them from the kernel). Without the socket the
 * test runs as before, and -d says why.
 */
static void icmp_watch_start(struct client *c)
{
	const struct xp_engine_cfg *ec = &c->ec;
	if (c->ops->figures != XP_FIGS_FRAMES || ec->kind != XP_TEST_STREAM)
		return;
	struct xp_addr src[XP_ICMP_MAX_SRC];
	unsigned n = 0;
	src[n++] = c->local;
	for (unsigned i = 0; i < c->spec->nbind && n < sizeof(src) / sizeof(src[0]); i++)
		src[n++] = c->spec->bind[i];
	struct xp_icmp_match m = { .server = c->server, .src = src, .nsrc = n, .l4_proto = ec->frames.tmpl.l4_proto,
				   .sport_lo = ec->sport_lo, .sport_hi = ec->sport_hi,
				   .dport_lo = ec->dport_lo, .dport_hi = ec->dport_hi };
	char err[256];
	if (xp_icmp_watch_start(&c->icmp, &m, err, sizeof(err)) && c->ro->debug)
		fprintf(stderr, "xdpperf: not watching for ICMP errors: %s\n", err);
}

/* --start time (xp_run_opts.start_ns): sleep until then, in slices that see a stop or a signal. */
static void wait_start(struct client *c)
{
	uint64_t at = c->ro->start_ns;
	while (at) {
		uint64_t now = xp_realtime_ns();
		if (now >= at || xp_signalled || (c->ro->stop && *c->ro->stop))
			return;
		uint64_t left = at - now;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)(left < 50000000ull ? left : 50000000ull) };
		nanosleep(&ts, NULL);
	}
}

static int run_test(struct client *c, struct xp_summary *sum)
{
	char err[256];
	struct snap now = { 0 };
	c->ops->read(c->eng, &now.eng);
	struct xp_report_info info;
	c->meas.setup_s = c->meas.on ? xp_now() - c->meas.t0_s : 0; /* to the engine's start, below */
	fill_info(c, &info, &now.eng);
	xp_report_start(&c->rep, &info);

	icmp_watch_start(c);
	double cpu0 = xp_cpu_seconds();
	/* The lines' schedule starts with the engine, as without stamps (the test sends for -t); the stamps'
	 * send intervals started at t0, just before the request: line k holds send interval k, which began
	 * that much earlier (the header says how much; -J has t0). */
	wait_start(c);
	double t0 = xp_now();
	if (c->ro->started_ns)
		*c->ro->started_ns = xp_realtime_ns();
	if (c->ops->start(c->eng, err, sizeof(err))) {
		snprintf(c->errbuf, sizeof(c->errbuf), "the %s engine did not start: %s", c->ops->name, err);
		c->error = c->errbuf;
	}
	memset(sum, 0, sizeof(*sum));
	sum->kind = c->ec.kind;
	sum->server_cpu_pct = -1;
	xp_stall_init(&sum->stall, c->spec->stall_pct, c->ops->figures == XP_FIGS_HANDSHAKES);
	uint64_t peak_open = 0, peak_s_open = 0;
	interval_loop(c, t0, &now, sum, &peak_open, &peak_s_open);
	stop_engine(c);
	double t_end = c->stopped_at;
	c->ops->read(c->eng, &now.eng);
	flows_sent(c, sum);
	sum->client_cpu_pct = 100.0 * (xp_cpu_seconds() - cpu0) / (t_end - t0);
	sum->tx_errors = now.eng.tx.errors;
	bool sent = xp_figs_sent(c->ops->figures);
	if (!c->error) {
		/* Frames of our own still in flight belong to the test; an outside sender's after the end do not. */
		if (sent)
			settle(c, &now);
		finish_intervals(c);
		struct snap fin = now;
		int e = xp_client_server_sample(c, "stop", &fin, &sum->server_cpu_pct);
		if (e) {
			c->error = xp_client_ctrl_errstr(c, e);
			c->server_gone = true;
		} else {
			now.rx = fin.rx;
			now.srv = fin.srv;
		}
	}
	/* After the settle wait: an error for the last frames is back by then (a round trip, not a timeout). */
	xp_icmp_watch_stop(&c->icmp, &sum->icmp);
	struct snap zero = { 0 }, end = now;
	sum->total = (struct xp_period){ .t1 = t_end - t0 };
	if (c->server_gone || !sent) {
		/*
		 * The server's counts end at its last sample: the summary covers
		 * 0 .. that moment, both sides, and what was sent after it is
		 * not lost. Without frames of our own the window is the
		 * samples' too: an outside generator's later frames are not ours.
		 */
		end = c->good;
		end.eng.pace = now.eng.pace;
		end.eng.hold.all_open_s = now.eng.hold.all_open_s;
		sum->total.t1 = c->good.t;
		if (c->server_gone) {
			sum->server_lost = true;
			sum->server_lost_at = c->good.t;
			sum->sent_after_lost = now.eng.tx.pkts - c->good.eng.tx.pkts;
		}
	}
	/* Lines still waiting (the server went away, or an error): printed without the stamps' figures. */
	xp_cmeas_flush(&c->meas, &c->rep, true);
	period_of(c, &end, &zero, &sum->total);
	if (c->meas.on && !c->error)
		xp_cmeas_summary(&c->meas, &sum->total);
	/* For the whole test, "open" is the most that were open at once. */
	sum->total.sock.open_now = peak_open;
	sum->total.sock.s_open_now = peak_s_open;
	if (c->ec.kind == XP_TEST_HOLD) {
		/* As the last sample saw them: stop() closes them all. */
		sum->hold = (struct xp_hold_figs){ .wanted = c->ec.parallel, .all_open_s = now.eng.hold.all_open_s,
						   .open_at_end = c->good.eng.hold.open,
						   .s_open_at_end = c->good.srv.s_open_now, .server_view = c->req.listen };
	}
	pace_of(c, &end, sum);
	if (c->ops->figures == XP_FIGS_HANDSHAKES) {
		struct xp_diag_input in;
		xp_diag_watch_end(&c->diag, &in);
		in.have_server = !c->no_server;
		in.peer_kernel = c->ec.hs.peer_kernel;
		xp_diagnose_handshakes(&sum->total, &in, &sum->diag);
		if (sum->stall.stalled && in.dev.have) {
			/* The device's own reason (--device-netns): its table, its drops. */
			char why[224];
			xp_diag_device_cause(&in.dev, why, sizeof(why));
			xp_stall_text(&sum->stall, why, sum->stall.text, sizeof(sum->stall.text));
		}
	}
	if (sum->stall.stalled && !sum->stall.text[0])
		xp_stall_text(&sum->stall, NULL, sum->stall.text, sizeof(sum->stall.text));
	if (!c->error && !sum->interrupted && c->ops->verdict)
		c->error = c->ops->verdict(&c->ec, &sum->total, c->errbuf, sizeof(c->errbuf));
	if (!c->error && !sum->interrupted && xp_cmeas_verdict(&c->meas, c->errbuf, sizeof(c->errbuf)))
		c->error = c->errbuf;
	sum->error = c->error;
	xp_report_end(&c->rep, sum);
	if (c->error) {
		xp_client_error_set(c->error);
		fprintf(stderr, "xdpperf: %s\n", c->error);
		return XP_EXIT_RUNTIME;
	}
	return sum->interrupted ? XP_EXIT_RUNTIME : thresholds(c, sum);
}


int xp_client_test(const struct xp_spec *spec, const struct xp_run_opts *ro, struct xp_report *rep,
		   struct xp_summary *sum)
{
	static const struct xp_run_opts plain;
	/* The client fills in what the spec leaves to it (the ports the server hands out, the frame size of the
	 * MTU): on its own copy. */
	struct xp_spec *sp = xp_spec_dup(spec); /* a spec (its flows) is megabytes: not on the stack */
	/* A key and the spec's copy: not on the stack. */
	struct client *c = calloc(1, sizeof(*c));
	char err[512];
	xp_client_error_set("");
	if (!c || !sp) {
		free(c);
		free(sp);
		fprintf(stderr, "xdpperf: out of memory\n");
		xp_report_error(rep, xp_client_error_set("out of memory"));
		return 1;
	}
	c->spec = sp;
	c->ro = ro ? ro : &plain;
	c->ops = xp_engine_ops_of(sp->engine);
	c->rep = *rep;
	c->ctrl.fd = -1;
	int rc = 0;
	if (sp->auth_key[0] && xp_auth_key_load(sp->auth_key, &c->key, err, sizeof(err))) {
		rc = xp_client_fail(c, 2, "%s", err);
		goto out;
	}
	rc = xp_client_setup_path(c);
	if (rc)
		goto out;
	rc = xp_client_ask_ports(c, sp);
	if (rc)
		goto out;
	if (!sp->traffic[0].frame_size) /* 0: the largest frame the interface's MTU allows */
		sp->traffic[0].frame_size = c->link.mtu + 18;
	rc = xp_client_engine_cfg(c, sp);
	if (rc)
		goto out;
	/* Before the request: the server is told the engine that really runs (auto's choice). */
	if (xp_engine_open(sp->engine, &c->ec, &c->ops, &c->eng, err, sizeof(err))) {
		rc = xp_client_fail(c, 1, "%s", err);
		goto out;
	}
	/* auto's choice may be an engine that stamps nothing */
	rc = xp_cmeas_engine(&c->meas, sp, c->ops, err, sizeof(err));
	if (rc) {
		xp_client_fail(c, rc, "%s", err);
		goto out;
	}

	if (c->ops->figures == XP_FIGS_HANDSHAKES &&
	    xp_diag_watch_start(&c->diag, sp->device_netns, c->link.ifindex, err, sizeof(err))) {
		rc = xp_client_fail(c, 1, "%s", err);
		goto out;
	}
	if (c->no_server)
		snprintf(c->server_dev, sizeof(c->server_dev), "-");
	xp_cmeas_t0(&c->meas, c->ops, c->eng);
	rc = c->no_server ? 0 : xp_client_request_test(c);
	if (rc)
		goto out;
	rc = run_test(c, sum);
	if (c->ec.kind != XP_TEST_STREAM)
		xp_conn_test_mark(sp->host);
out:
	*rep = c->rep;
	if (c->eng)
		c->ops->destroy(c->eng);
	if (c->ctrl.fd >= 0)
		close(c->ctrl.fd);
	xp_ctrl_free(&c->ctrl);
	xp_auth_key_clear(&c->key);
	xp_cmeas_free(&c->meas);
	xp_client_flows_free(c);
	free(c->flows);
	free(c->flow_res);
	if (sum && sum->flows == c->flow_res) { /* reported already: the caller keeps no pointer into c */
		sum->flows = NULL;
		sum->nflows = 0;
	}
	free(c);
	free(sp);
	return rc;
}
