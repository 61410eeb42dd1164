/*
 * The server's tests: a start request checked against the policy, the XDP
 * program attached and a slot claimed, listeners opened (by the listener
 * thread) for tests that need them, counters on request. The release, which
 * every part may need, is conn.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "net/netdev.h"
#include "net/route.h"
#include "report/metrics.h"
#include "server/state.h"
#include "util/time.h"

/* The interface the test traffic arrives on: --dev, else the route back to the client. */
static int client_ifindex(struct server *s, struct srv_client *c, char *err, size_t errlen)
{
	struct xp_netdev l;
	if (s->cfg->dev[0]) {
		if (xp_netdev_by_name(s->cfg->dev, &l)) {
			snprintf(err, errlen, "server interface %s does not exist", s->cfg->dev);
			return -ENODEV;
		}
		return l.ifindex;
	}
	struct xp_route rt;
	int r = xp_route_get(&c->peer, &rt);
	if (r) {
		snprintf(err, errlen, "server has no route back to %s: %s", c->peer_s, strerror(-r));
		return r;
	}
	return rt.oif;
}

/* Loopback carries the host's own traffic (and 127.0.0.1 requests route there). */
static bool is_loopback(int ifindex)
{
	struct xp_netdev l;
	return !xp_netdev_by_index(ifindex, &l) && l.loopback;
}

/*
 * Where a test is counted. Socket tests (the socket engine: the server's own
 * TCP stack receives the stream) by the TC program: an XDP program on a veth
 * makes the kernel turn GSO off on its peer, and the stream it counts falls to
 * about a third (measured in the routed lab; see bpf/server_tc.bpf.c). Frame
 * tests, and connection tests the XDP program answers or counts (even when
 * it passes them to the stack, --peer kernel: small frames, no GSO to lose),
 * by the XDP program as before.
 */
static bool counts_with_tc(const struct xp_test *t)
{
	return t->pass && t->listen && !t->respond && !strcmp(t->engine, "socket");
}


unsigned srv_tests_running(const struct server *s)
{
	unsigned n = 0;
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		enum srv_state st = s->cl[i].state;
		n += st == SRV_STARTING || st == SRV_RUNNING || st == SRV_REVERSE;
	}
	return n;
}

/* Tests running or starting (reverse trials too), and what their listeners hold (closing ones included). */
static void usage(struct server *s, unsigned *tests, unsigned long *parallel)
{
	*tests = srv_tests_running(s);
	*parallel = 0;
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		struct srv_client *c = &s->cl[i];
		if ((c->state == SRV_STARTING || c->state == SRV_RUNNING) && c->test.listen &&
		    (c->ss_owned || c->state == SRV_STARTING))
			*parallel += c->test.parallel;
		if (s->closing[i].used)
			*parallel += s->closing[i].parallel;
	}
}

/* The server's caps over all tests; the ports of listeners still closing. */
static int check_totals(struct server *s, const struct xp_test *t, bool own_listeners, char *err, size_t errlen)
{
	const struct xp_server_cfg *cfg = s->cfg;
	unsigned tests;
	unsigned long par;
	usage(s, &tests, &par);
	if (tests >= cfg->max_tests) {
		snprintf(err, errlen, "server is running its maximum of %u tests (--max-tests); try again later", cfg->max_tests);
		return -1;
	}
	if (!own_listeners)
		return 0;
	if (par + t->parallel > cfg->max_parallel_total) {
		snprintf(err, errlen,
			 "%lu parallel connections would exceed the server's total of %lu (--max-parallel-total, %lu in use)",
			 t->parallel, cfg->max_parallel_total, par);
		return -1;
	}
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		const struct srv_closing *k = &s->closing[i];
		if (k->used && t->port_lo <= k->ports.hi && k->ports.lo <= t->port_hi) {
			snprintf(err, errlen, "port %u is still being closed after an earlier test; try again in a few seconds",
				 t->port_lo > k->ports.lo ? t->port_lo : k->ports.lo);
			return -1;
		}
	}
	return 0;
}

/* Whether the test uses the standing listeners (fireperf style, `-s -P N -p RANGE`). */
static bool uses_standing(struct server *s, const struct xp_test *t)
{
	return s->listeners && t->port_lo >= s->cfg->port_lo && t->port_hi <= s->cfg->port_hi;
}

static void log_spec(struct srv_client *c, struct json_object *spec)
{
	const char *js = json_object_to_json_string_ext(spec, JSON_C_TO_STRING_PLAIN);
	size_t n = strlen(js) + 1;
	char *buf = malloc(n);
	if (!buf)
		return;
	xp_msg_printable(js, buf, n);
	printf("[%s] spec: %s\n", c->peer_s, buf);
	free(buf);
}

static void send_started(struct server *s, struct srv_client *c)
{
	const struct xp_test *t = &c->test;
	struct xp_netdev l = { 0 };
	xp_netdev_by_index(c->ifindex, &l);
	c->state = SRV_RUNNING;
	c->t_start = xp_now();
	c->cpu_start = xp_cpu_seconds();
	/* A hard end: no message of the client's moves it. */
	c->deadline = c->t_start + t->duration + XP_SRV_TEST_MARGIN;
	if (c->ss) {
		xp_sock_server_read(c->ss, &c->ss_base);
		/* The kernel's own count of handshakes dropped by full accept queues or
		 * reset before they completed: why a client can see more established than
		 * we accept. */
		c->tcpext_ok = !xp_tcpext_read(&c->tcpext_base);
	}
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("started"));
	json_object_object_add(o, "slot", json_object_new_int(c->slot));
	json_object_object_add(o, "dev", json_object_new_string(l.name));
	/* "tcx" or "tc" for a test the TC program counts: the client's report
	 * names it (one field, so older clients still read it). */
	json_object_object_add(o, "xdp_mode", json_object_new_string(c->mode));
	srv_meas_started_json(s, c, o);
	xp_metrics_server_start(c->test_id, t->engine, xp_test_kind_name(t->kind), c->peer_s);
	int r = xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
	if (c->counted_tc)
		printf("[%s] %s test (%s engine), %s/IPv%d, ports %u:%u, %.0f s, counting with TC (%s ingress, segments "
		       "as the stack sees them; no XDP on the test's path) on %s\n", c->peer_s, xp_test_kind_name(t->kind),
		       t->engine, t->udp ? "udp" : "tcp", t->family == AF_INET6 ? 6 : 4, t->port_lo, t->port_hi,
		       t->duration, c->mode, l.name);
	else
		printf("[%s] %s test (%s engine), %s/IPv%d, ports %u:%u, %.0f s, counting with XDP (%s%s) on %s\n",
		       c->peer_s, xp_test_kind_name(t->kind), t->engine, t->udp ? "udp" : "tcp",
		       t->family == AF_INET6 ? 6 : 4, t->port_lo, t->port_hi, t->duration, c->mode,
		       t->respond ? ", answering handshakes with SYN cookies" : t->pass ? ", count and pass" : "", l.name);
	if (s->cfg->debug && t->spec) /* what the test is, as the client sent it (printable: it came from outside) */
		log_spec(c, t->spec);
	fflush(stdout);
	if (r)
		srv_drop(s, c, "client does not read its replies, closing");
}

/* Undo a start that failed after the slot was claimed. */
static void unclaim(struct server *s, struct srv_client *c)
{
	if (c->slot >= 0) {
		server_prog_slot_free(s->rp, c->slot);
		srv_detach_counter(s, c, false);
		c->slot = -1;
	}
	srv_meas_flows_free(s, c);
	xp_test_release(&c->test);
	c->state = SRV_IDLE;
}

void srv_on_start(struct server *s, struct srv_client *c, struct json_object *m)
{
	const struct xp_server_cfg *cfg = s->cfg;
	/* Its spec's reference dropped on every way out; c->test takes it when the test starts. */
	struct xp_test t __attribute__((cleanup(xp_test_release)));
	char err[256];

	memset(&t, 0, sizeof(t));
	if (c->state != SRV_IDLE) {
		srv_refuse(s, c, "a test is already running on this connection", NULL);
		return;
	}
	if (xp_test_from_json(m, &t, err, sizeof(err)) || xp_policy_check_test(cfg, &t, err, sizeof(err)) ||
	    xp_policy_check_bind(cfg, &t, &c->peer, err, sizeof(err))) {
		srv_refuse(s, c, err, err);
		return;
	}
	bool standing = t.listen && uses_standing(s, &t);
	bool own = t.listen && !standing;
	if (own && s->listeners && t.port_lo <= cfg->port_hi && cfg->port_lo <= t.port_hi) {
		snprintf(err, sizeof(err), "ports %u:%u overlap the server's listeners on %u:%u but are not inside them",
			 t.port_lo, t.port_hi, cfg->port_lo, cfg->port_hi);
		srv_refuse(s, c, err, NULL);
		return;
	}
	struct xp_port_range mine[1] = { { cfg->port_lo, cfg->port_hi } };
	if (srv_ports_reserved(s, c, t.port_lo, t.port_hi, err, sizeof(err)) || check_totals(s, &t, own, err, sizeof(err)) ||
	    xp_policy_check_ports(cfg, &t, mine, s->listeners ? 1 : 0, err, sizeof(err))) {
		srv_refuse(s, c, err, err);
		return;
	}
	if (srv_start_rate(s, &c->peer, err, sizeof(err))) {
		srv_refuse(s, c, err, err);
		return;
	}
	int ifindex = client_ifindex(s, c, err, sizeof(err));
	if (ifindex < 0) {
		srv_refuse(s, c, err, NULL);
		return;
	}
	if (!cfg->allow_lo && is_loopback(ifindex)) {
		srv_refuse(s, c,
			   "the test would count on the server's loopback device, which carries the host's own traffic "
			   "(the server allows it with --allow-lo)",
			   "test on lo");
		return;
	}
	c->mode = "?";
	c->counted_tc = counts_with_tc(&t);
	if (c->counted_tc)
		srv_xdp_linger_drop(s, ifindex); /* no idle XDP program under a socket test (see counts_with_tc) */
	if (c->counted_tc && server_prog_attach_tc(s->rp, ifindex, &c->mode, err, sizeof(err))) {
		/* Counted, if slower: the XDP program still can (and says so). */
		printf("[%s] %s: counting with XDP instead, which costs a stream its GSO packets\n", c->peer_s, err);
		fflush(stdout);
		c->counted_tc = false;
	}
	if (!c->counted_tc) {
		srv_xdp_linger_check(s, ifindex, srv_meas_wants_hwts(&t));
		srv_meas_prepare(s, &t);
	}
	int attach_r = c->counted_tc ? 0 : server_prog_attach(s->rp, ifindex, cfg->xdp_mode, &c->mode, err, sizeof(err));
	/* The choice was for this attach only: the next interface's first attach makes its own. */
	server_prog_set_hwts(s->rp, false);
	if (attach_r) {
		srv_refuse(s, c, err, err);
		return;
	}
	uint32_t flags = (t.pass ? XP_SLOT_PASS : 0) | (t.respond ? XP_SLOT_RESPOND : 0) |
			 (c->counted_tc ? XP_SLOT_TC : 0);
	c->ifindex = ifindex;
	/* Round trip (--rtt): stamped stream frames go back to the client
	 * (bpf/lib/reflect.h); the loader refuses it for other tests. */
	if (t.stamp.reflect && t.stamp.ival)
		flags |= XP_SLOT_REFLECT;
	int slot = server_prog_slot_alloc(s->rp, t.port_lo, t.port_hi, t.udp ? XP_PROTO_UDP : XP_PROTO_TCP, flags,
					  t.close_mode, ifindex, &c->peer, t.bind, t.nbind, err, sizeof(err));
	if (slot < 0) {
		srv_detach_counter(s, c, false);
		srv_refuse(s, c, err, NULL);
		return;
	}
	c->test = t;
	t.spec = NULL; /* c->test holds it now, and its keys */
	t.flows.keys = NULL;
	t.flows.nkeys = 0;
	c->slot = slot;
	c->ifindex = ifindex;
	c->test_id = ++s->next_id;
	c->ss = NULL;
	c->ss_owned = false;
	/* Before the client's first frame: it sends once we answer. */
	if (srv_meas_start(s, c, err, sizeof(err))) {
		unclaim(s, c);
		srv_refuse(s, c, err, err);
		return;
	}
	if (standing) {
		c->ss = s->listeners;
	} else if (own) {
		struct xp_sock_server_cfg lc = { .port_lo = t.port_lo, .port_hi = t.port_hi, .threads = cfg->threads,
						 .max_conns = t.parallel, .debug = cfg->debug,
						 .cap_procs = true, .max_procs = cfg->max_workers };
		if (xp_sockjobs_open(s->jobs, c->test_id, &lc)) {
			unclaim(s, c);
			srv_refuse(s, c, "server out of memory", NULL);
			return;
		}
		/* The answer comes when the listener thread is done (srv_on_jobs). */
		c->state = SRV_STARTING;
		return;
	}
	send_started(s, c);
}

/* A finished open: the test it was for may be gone meanwhile. */
static void on_opened(struct server *s, struct xp_sockjob_done *d)
{
	struct srv_client *c = NULL;
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
		if (s->cl[i].state == SRV_STARTING && s->cl[i].test_id == d->id)
			c = &s->cl[i];
	if (!c) {
		if (d->ss)
			xp_sockjobs_close(s->jobs, d->id, d->ss);
		return;
	}
	if (!d->ss) {
		unclaim(s, c);
		srv_refuse(s, c, d->err, d->err);
		return;
	}
	c->ss = d->ss;
	c->ss_owned = true;
	send_started(s, c);
}

void srv_on_jobs(struct server *s)
{
	struct xp_sockjob_done d;
	while (xp_sockjobs_take(s->jobs, &d)) {
		if (d.kind == XP_SOCKJOB_OPEN) {
			on_opened(s, &d);
			continue;
		}
		for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
			if (s->closing[i].used && s->closing[i].id == d.id)
				s->closing[i].used = false;
	}
}

static struct json_object *sock_stats_json(struct srv_client *c)
{
	struct xp_sock_server_stats st;
	xp_sock_server_read(c->ss, &st);
	struct xp_sock_counts n = {
		.accepted = st.accepted - c->ss_base.accepted,
		.closed = st.closed - c->ss_base.closed,
		.resets = st.resets - c->ss_base.resets,
		.bytes_rx = st.bytes_rx - c->ss_base.bytes_rx,
		.open_now = st.open_now,
	};
	struct xp_tcpext t;
	if (c->tcpext_ok && !xp_tcpext_read(&t)) {
		n.listen_overflows = t.listen_overflows - c->tcpext_base.listen_overflows;
		n.listen_drops = t.listen_drops - c->tcpext_base.listen_drops;
		n.embryonic_rsts = t.embryonic_rsts - c->tcpext_base.embryonic_rsts;
	}
	return xp_sock_counts_to_json(&n);
}

/* A socket test's accepts so far (--metrics). */
static uint64_t sock_accepted(struct srv_client *c)
{
	struct xp_sock_server_stats st;
	xp_sock_server_read(c->ss, &st);
	return st.accepted - c->ss_base.accepted;
}

/* "sample" and "stop" both answer with the slot's counters and our CPU use. */
void srv_on_counters(struct server *s, struct srv_client *c, const char *reply, struct json_object *m)
{
	char err[200];
	if (c->state != SRV_RUNNING) {
		srv_refuse(s, c, "no test is running on this connection", NULL);
		return;
	}
	struct xp_counters cnt;
	if (server_prog_read(s->rp, c->slot, &cnt)) {
		srv_send_error(c, "cannot read the XDP counters");
		return;
	}
	xp_metrics_server_counts(c->test_id, &cnt, c->ss ? sock_accepted(c) : 0);
	double wall = xp_now() - c->t_start;
	double cpu = xp_cpu_seconds() - c->cpu_start;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string(reply));
	json_object_object_add(o, "counters", xp_counters_to_json(&cnt));
	json_object_object_add(o, "cpu_percent", json_object_new_double(wall > 0 ? 100.0 * cpu / wall : 0));
	if (c->ss)
		json_object_object_add(o, "sockets", sock_stats_json(c));
	/* A sample may ask for a final interval; the end has the per-stream figures. */
	if (!strcmp(reply, "sample") &&
	    (srv_meas_final(s, c, m, o, err, sizeof(err)) || srv_meas_flows_sample(s, c, m, o, err, sizeof(err)))) {
		json_object_put(o);
		srv_send_error(c, err);
		return;
	}
	if (strcmp(reply, "sample"))
		srv_meas_streams_json(s, c, o);
	int r = xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
	if (r)
		srv_drop(s, c, "client does not read its replies, closing");
}

