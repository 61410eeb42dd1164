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
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/client.h"
#include "client/diag.h"
#include "client/measure.h"
#include "proto/auth.h"
#include "proto/channel.h"
#include "net/netdev.h"
#include "net/route.h"
#include "util/process.h"
#include "util/time.h"

/* Cumulative figures at one moment. */
struct snap {
	struct xp_engine_stats eng;
	struct xp_counters rx;
	struct xp_sock_figs srv; /* server socket counts (s_* fields) */
	double t;                /* seconds since the start, for interval samples */
};

struct client {
	const struct xp_opts *o;
	struct xp_ctrl ctrl;
	struct xp_addr local, server;
	struct xp_netdev link;
	uint8_t nh_mac[6];
	const struct xp_engine_ops *ops; /* the engine's declarations; after create, the one that runs */
	struct xp_engine_cfg ec;
	struct xp_test req;         /* what we asked the server for */
	struct xp_report rep;
	struct xp_engine *eng;
	char server_dev[16], xdp_mode[16];
	struct snap last;           /* latest figures the server sent */
	struct snap good;           /* the last interval sample: both sides' counts at one moment */
	bool server_gone;           /* the control connection failed: the server's counts end at good */
	struct xp_auth_key key;     /* --auth-key */
	const char *error;          /* why the test ended early */
	char errbuf[512];
	bool no_server;             /* --peer kernel against a TCP server without xdpperf: no control channel */
	struct xp_diag_watch diag;  /* connection tests: readings for why SYNs went unanswered */
	struct xp_cmeas meas;       /* frame tests: the stamps, and interval lines waiting for their figures */
};

static int wait_until(struct client *c, double until);

/* Why the client stopped, for --compare's report; see xp_client_last_error. */
static char last_error[512];

const char *xp_client_last_error(void)
{
	return last_error;
}

/* The client cannot go on: one line on stderr and, with -J, in the report. Returns rc. */
__attribute__((format(printf, 3, 4)))
static int fail(struct client *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	fprintf(stderr, "xdpperf: %s\n", last_error);
	xp_report_error(&c->rep, last_error);
	return rc;
}

/* Ask the server for its counters; "sample" during the test, "stop" at the end. */
static int server_sample(struct client *c, const char *op, struct snap *out, double *cpu)
{
	if (c->no_server) /* nobody to ask: the server's figures stay zero, and the report says why */
		return 0;
	struct json_object *m = json_object_new_object(), *r = NULL, *v;
	json_object_object_add(m, "op", json_object_new_string(op));
	int e = xp_ctrl_send(&c->ctrl, m);
	json_object_put(m);
	if (e)
		return e;
	do {
		e = xp_ctrl_recv(&c->ctrl, 3000, &r);
	} while (e == -EINTR);
	if (e <= 0)
		return e == 0 ? -ECONNRESET : e;
	if (!strcmp(xp_json_str(r, "op", ""), "error")) {
		char msg[200];
		xp_msg_printable(xp_json_str(r, "msg", "?"), msg, sizeof(msg));
		snprintf(c->errbuf, sizeof(c->errbuf), "server: %s", msg);
		json_object_put(r);
		return -EPROTO;
	}
	if (!json_object_object_get_ex(r, "counters", &v)) {
		json_object_put(r);
		return -EPROTO;
	}
	xp_counters_from_json(v, &out->rx);
	if (json_object_object_get_ex(r, "sockets", &v)) {
		struct xp_sock_counts sc;
		xp_sock_counts_from_json(v, &sc);
		out->srv.s_accepted = sc.accepted;
		out->srv.s_closed = sc.closed;
		out->srv.s_resets = sc.resets;
		out->srv.s_open_now = sc.open_now;
		out->srv.s_bytes_rx = sc.bytes_rx;
		out->srv.s_listen_overflows = sc.listen_overflows;
		out->srv.s_listen_drops = sc.listen_drops;
		out->srv.s_embryonic_rsts = sc.embryonic_rsts;
	}
	if (cpu)
		*cpu = xp_json_double(r, "cpu_percent", -1);
	c->last.rx = out->rx;
	c->last.srv = out->srv;
	/* The stop reply of a test with stamps: its per-stream figures. */
	e = json_object_object_get_ex(r, "streams", &v) ? xp_cmeas_streams_json(&c->meas, v, c->errbuf, sizeof(c->errbuf)) : 0;
	json_object_put(r);
	return e;
}

/* Wait until `until` (as wait_until), reading the send intervals that become final meanwhile. */
static int wait_reading(struct client *c, double until)
{
	for (;;) {
		double due = c->meas.on ? xp_cmeas_due(&c->meas) : until + 1;
		int w = wait_until(c, due < until ? due : until);
		if (w || due > until)
			return w;
		int e = xp_cmeas_fetch(&c->meas, &c->ctrl, c->ops, c->eng, c->errbuf, sizeof(c->errbuf));
		if (e)
			return e;
		xp_cmeas_flush(&c->meas, &c->rep, false);
	}
}

static const char *ctrl_errstr(struct client *c, int e)
{
	if (e == -EPROTO && c->errbuf[0])
		return c->errbuf;
	if (e == -ECONNRESET || e == -EPIPE)
		return "the server closed the control connection";
	if (e == -ETIMEDOUT)
		return "the server stopped answering";
	snprintf(c->errbuf, sizeof(c->errbuf), "control channel: %s", strerror(-e));
	return c->errbuf;
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
 * --bind: every source address must be this host's (else each connect fails
 * with EADDRNOTAVAIL, or the replies to raw SYNs go nowhere), and for engines
 * that send their own frames, on the interface they send on. Exit status or 0.
 */
static int check_bind(struct client *c)
{
	const struct xp_opts *o = c->o;
	unsigned missing = 0, elsewhere = 0;
	char first[INET6_ADDRSTRLEN] = "", last[INET6_ADDRSTRLEN] = "", other[INET6_ADDRSTRLEN] = "";
	int other_if = 0;

	for (unsigned i = 0; i < o->nbind; i++) {
		if (o->bind[i].family != c->server.family)
			return fail(c, 2, "--bind addresses must be IPv%c like the server's",
				    c->server.family == AF_INET6 ? '6' : '4');
		int ifi = xp_ifindex_of_addr(&o->bind[i]);
		if (ifi == -EADDRNOTAVAIL) {
			if (!missing++)
				xp_addr_str(&o->bind[i], first, sizeof(first));
			xp_addr_str(&o->bind[i], last, sizeof(last));
		} else if (ifi > 0 && c->ops->nexthop && ifi != c->link.ifindex) {
			if (!elsewhere++) {
				xp_addr_str(&o->bind[i], other, sizeof(other));
				other_if = ifi;
			}
		}
	}
	if (missing)
		return fail(c, 1, "--bind: %u of the %u addresses are not this host's (%s%s%s): add them (ip addr add "
			    "ADDR dev %s) or narrow the range", missing, o->nbind, first, missing > 1 ? " .. " : "",
			    missing > 1 ? last : "", c->link.name);
	if (elsewhere) {
		struct xp_netdev l = { .name = "?" };
		xp_netdev_by_index(other_if, &l);
		return fail(c, 1, "--bind: %s is on %s, not on %s where the %s engine sends: the replies would not come "
			    "back to it (%u such addresses)", other, l.name, c->link.name, c->ops->name, elsewhere);
	}
	return 0;
}

/*
 * Without a control connection: the server's address from the name, ours
 * the one the kernel would pick for it (the route's preferred source). 0, or
 * -errno with a one-line reason.
 */
static int no_server_addrs(struct client *c, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = c->o->family ? c->o->family : AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	if (getaddrinfo(c->o->host, NULL, &hints, &res) || !res) {
		snprintf(err, errlen, "cannot resolve server '%s'", c->o->host);
		return -EINVAL;
	}
	xp_addr_from_sockaddr(res->ai_addr, &c->server, NULL);
	freeaddrinfo(res);
	struct xp_route rt;
	int r = xp_route_get(&c->server, &rt);
	if (r || !rt.prefsrc.family) {
		snprintf(err, errlen, "no route with a source address to %s: %s", c->o->host,
			 r ? strerror(-r) : "no preferred source");
		return r ? r : -EADDRNOTAVAIL;
	}
	c->local = rt.prefsrc;
	return 0;
}

/* Connect, learn addresses, and for frame engines the interface and next hop. Exit status or 0. */
static int setup_path(struct client *c)
{
	const struct xp_opts *o = c->o;
	char err[512];

	int fd = xp_ctrl_connect(o->host, o->control_port, o->family, 3000, err, sizeof(err));
	if (fd == -ECONNREFUSED && o->peer_kernel && c->ops->figures == XP_FIGS_HANDSHAKES) {
		/* --peer kernel against any TCP server: nothing listens for control, so run on our own counters. */
		if (no_server_addrs(c, err, sizeof(err)))
			return fail(c, 1, "%s", err);
		c->no_server = true;
	} else if (fd < 0) {
		/* Right after a connection test, a stateful device's full table is the likely cause. */
		double age = fd == -ETIMEDOUT ? xp_conn_test_age(o->host) : -1;
		if (age >= 0 && age < XP_CONN_TEST_RECENT)
			return fail(c, 1, "%s; a connection test against it ended %.0f s ago: the device in the path may be "
				    "refusing new connections (a full connection table drains in up to 120 s)", err, age);
		return fail(c, 1, "%s", err);
	}
	if (!c->no_server) {
		xp_ctrl_init(&c->ctrl, fd);
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		getpeername(fd, (struct sockaddr *)&ss, &sl);
		xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->server, NULL);
		sl = sizeof(ss);
		getsockname(fd, (struct sockaddr *)&ss, &sl);
		xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->local, NULL);
	}

	struct xp_route rt;
	int r;
	if (!c->ops->nexthop || o->dst_mac_set) {
		/* The kernel routes (sockets), or --dst-mac says: we only want the interface. */
		r = xp_route_get(&c->server, &rt);
		memcpy(c->nh_mac, o->dst_mac, 6);
		if (r)
			snprintf(err, sizeof(err), "no route to %.200s: %s", o->host, strerror(-r));
	} else {
		r = xp_nexthop_mac(&c->server, 2000, &rt, c->nh_mac, err, sizeof(err));
	}
	if (r)
		return fail(c, 1, "%s", err);
	if (o->dev[0]) {
		if (xp_netdev_by_name(o->dev, &c->link))
			return fail(c, 1, "interface %s does not exist", o->dev);
		if (c->link.ifindex != rt.oif) {
			struct xp_netdev via = { .name = "?" };
			xp_netdev_by_index(rt.oif, &via);
			fprintf(stderr, "xdpperf: warning: the route to %s leaves by %s, not %s: %s\n", o->host, via.name,
				o->dev, c->ops->nexthop ? "sending on --dev anyway" : "connections are bound to --dev");
		}
	} else if (xp_netdev_by_index(rt.oif, &c->link)) {
		return fail(c, 1, "cannot read interface %d", rt.oif);
	}
	if (!c->link.up)
		return fail(c, 1, "interface %s is down", c->link.name);
	static const uint8_t no_mac[6];
	if (c->ops->nexthop && !memcmp(c->link.mac, no_mac, 6))
		return fail(c, 1, "%s has no Ethernet address: the %s engine sends Ethernet frames (choose an Ethernet "
			    "interface with --dev, or the route's)", c->link.name, c->ops->name);
	return check_bind(c);
}

/* The engine's frame template: a data segment (or datagram), or a SYN. */
static void build_template(struct client *c, struct frame_spec *s)
{
	const struct xp_opts *o = c->o;
	memset(s, 0, sizeof(*s));
	memcpy(s->src_mac, c->link.mac, 6);
	memcpy(s->dst_mac, c->nh_mac, 6);
	s->src = c->local;
	s->dst = c->server;
	s->l4_proto = o->udp ? IPPROTO_UDP : IPPROTO_TCP;
	s->sport = o->cport_lo;
	s->dport = o->port_lo;
	s->tcp_flags = 0x18; /* ACK|PSH: a data segment */
	s->seq = 1;
	s->ack = 1;
	s->frame_size = o->frame_size;
	if (c->ops->tmpl == XP_TMPL_SYN) {
		/* Options like Linux's; the engine varies tuple and ISN per SYN. */
		s->l4_proto = IPPROTO_TCP;
		s->tcp_flags = 0x02; /* SYN */
		s->ack = 0;
		s->tcp_syn_options = true;
		s->no_payload = true;
		s->window = 64240;
		s->frame_size = (unsigned)frame_min_size(s);
	}
}

/* Frame size and queue checks that need the interface. Exit status or 0. */
static int check_limits(struct client *c, const struct frame_spec *s, unsigned *queues)
{
	const struct xp_opts *o = c->o;
	size_t min = frame_min_size(s);
	size_t max = (size_t)c->link.mtu + 18;
	if (o->frame_size < min)
		return fail(c, 2, "frame size %u is too small for %s/IPv%d (minimum -l %zu)", o->frame_size,
			    o->udp ? "UDP" : "TCP", c->local.family == AF_INET6 ? 6 : 4, min);
	if (o->frame_size > max)
		return fail(c, 2, "frame size %u exceeds the MTU %u of %s (maximum -l %zu)", o->frame_size, c->link.mtu,
			    c->link.name, max);
	unsigned avail = c->link.tx_queues ? c->link.tx_queues : 1;
	if (o->first_queue >= avail)
		return fail(c, 2, "%s has %u TX queue%s, cannot use --first-queue %u", c->link.name, avail,
			    avail == 1 ? "" : "s", o->first_queue);
	*queues = o->queues ? o->queues : avail - o->first_queue;
	if (o->first_queue + *queues > avail)
		return fail(c, 2, "%s has %u TX queue%s, cannot use %u from queue %u", c->link.name, avail,
			    avail == 1 ? "" : "s", *queues, o->first_queue);
	return 0;
}

static enum xp_test_kind test_kind(const struct xp_opts *o)
{
	return o->close_each ? XP_TEST_CONNECT : o->keepalive ? XP_TEST_HOLD : XP_TEST_STREAM;
}

/*
 * Send the start request; with --auth-key, first answer the server's
 * challenge: the MAC covers the request line exactly as sent. 0 or -errno
 * (-EPROTO with the reason in errbuf).
 */
static int send_request(struct client *c, struct json_object *m)
{
	const char *line = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	if (!c->key.set)
		return xp_ctrl_send_line(&c->ctrl, line);
	struct json_object *q = json_object_new_object(), *r = NULL;
	json_object_object_add(q, "op", json_object_new_string("challenge"));
	int e = xp_ctrl_send(&c->ctrl, q);
	json_object_put(q);
	if (!e)
		e = xp_ctrl_recv(&c->ctrl, 10000, &r);
	if (e <= 0)
		return e == 0 ? -ECONNRESET : e;
	char mac[XP_AUTH_HEX_LEN + 1], msg[200];
	const char *nonce = xp_json_str(r, "nonce", "");
	if (strcmp(xp_json_str(r, "op", ""), "challenge") || xp_auth_mac(&c->key, nonce, line, strlen(line), mac)) {
		xp_msg_printable(xp_json_str(r, "msg", "no challenge from the server"), msg, sizeof(msg));
		snprintf(c->errbuf, sizeof(c->errbuf), "authentication: %s", msg);
		json_object_put(r);
		return -EPROTO;
	}
	json_object_put(r);
	q = json_object_new_object();
	json_object_object_add(q, "op", json_object_new_string("auth"));
	json_object_object_add(q, "mac", json_object_new_string(mac));
	e = xp_ctrl_send(&c->ctrl, q);
	json_object_put(q);
	return e ? e : xp_ctrl_send_line(&c->ctrl, line);
}

static int request_test(struct client *c)
{
	const struct xp_opts *o = c->o;
	struct xp_test *t = &c->req;
	*t = (struct xp_test){
		.version = XP_PROTO_VERSION,
		.kind = c->ec.kind,
		.engine = c->ops->name,
		.family = c->local.family,
		.udp = o->udp,
		.port_lo = o->port_lo,
		.port_hi = o->port_hi,
		.duration = o->duration,
		.frame_size = c->ops->tmpl != XP_TMPL_NONE ? o->frame_size : 0,
	};
	/* The server counts our frames from our addresses only: the control
	 * connection's, and these. */
	_Static_assert(XP_MAX_BIND_OPT <= XP_TEST_MAX_BIND, "every --bind address fits a start request");
	t->nbind = o->nbind;
	memcpy(t->bind, o->bind, sizeof(t->bind[0]) * o->nbind);
	/* The engine's part: count, count and pass, answer handshakes, listen. */
	if (c->ops->ask_server)
		c->ops->ask_server(&c->ec, t);
	xp_cmeas_request(&c->meas, &t->stamp);
	struct json_object *m = xp_test_to_json(t), *r = NULL;
	int e = send_request(c, m);
	json_object_put(m);
	if (!e)
		e = xp_ctrl_recv(&c->ctrl, 10000, &r);
	/*
	 * The first answer tells an xdpperf server from whatever else listens
	 * on the port: an xdpperf server always answers "started" or "error".
	 */
	const char *op = e > 0 ? xp_json_str(r, "op", "") : "";
	if (e == -EPROTO || (e == 0 && c->ctrl.len) || (e > 0 && strcmp(op, "started") && strcmp(op, "error"))) {
		json_object_put(r);
		return fail(c, 1, "%s port %u answered with something that is not xdpperf's control protocol: is that "
			    "an xdpperf server? (check the address and --control-port)", o->host, o->control_port);
	}
	if (e == 0)
		return fail(c, 1, "%s port %u closed the control connection without an answer: not an xdpperf server, "
			    "or one that dropped us (see its log)", o->host, o->control_port);
	if (e == -ETIMEDOUT)
		return fail(c, 1, "%s port %u took the control connection but did not answer within 10 s: not an "
			    "xdpperf server?", o->host, o->control_port);
	if (e < 0)
		return fail(c, 1, "%s", ctrl_errstr(c, e));
	if (strcmp(op, "started")) {
		char msg[200];
		xp_msg_printable(xp_json_str(r, "msg", "no reason given"), msg, sizeof(msg));
		fail(c, 1, "server refused the test: %s", msg);
		json_object_put(r);
		return 1;
	}
	/* Printed in the report: nothing from the other end reaches the terminal raw. */
	xp_msg_printable(xp_json_str(r, "dev", "?"), c->server_dev, sizeof(c->server_dev));
	xp_msg_printable(xp_json_str(r, "xdp_mode", "?"), c->xdp_mode, sizeof(c->xdp_mode));
	xp_cmeas_started(&c->meas, o, r);
	json_object_put(r);
	/* --rtt: the program that times the returning frames, attached before
	 * the engine sends the first one. */
	char err[256];
	if (xp_cmeas_rtt_start(&c->meas, o, &c->ec.frames.tmpl, c->link.ifindex, err, sizeof(err)))
		return fail(c, 1, "%s", err);
	return 0;
}

/*
 * Wait until time `until` while watching the control connection: returns 0 at
 * the deadline, 1 on a signal, -errno if the server went away.
 */
static int wait_until(struct client *c, double until)
{
	for (;;) {
		if (xp_signalled)
			return 1;
		double left = until - xp_now();
		if (left <= 0)
			return 0;
		struct pollfd p = { .fd = c->ctrl.fd, .events = POLLIN };
		int r = poll(&p, 1, (int)(left * 1000) + 1);
		if (r > 0) {
			/* The server only speaks when asked: anything now is a close or an error. */
			char b;
			ssize_t n = recv(c->ctrl.fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN))
				return -ECONNRESET;
			if (p.revents & (POLLHUP | POLLERR))
				return -ECONNRESET;
			xp_sleep(0.001);
		}
	}
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
		if (server_sample(c, "sample", &s, NULL))
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
	const struct xp_opts *o = c->o;
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
	i->proto = o->udp ? "udp" : "tcp";
	i->family = c->local.family == AF_INET6 ? 6 : 4;
	i->frame_size = c->req.frame_size;
	i->queues = ec->frames.queues;
	i->port_lo = o->port_lo, i->port_hi = o->port_hi;
	i->cport_lo = o->cport_lo, i->cport_hi = o->cport_hi;
	i->duration = o->duration;
	i->interval = o->interval;
	i->target_pps = ec->pps;
	i->parallel = (unsigned)c->req.parallel;
	if (c->ops->describe)
		c->ops->describe(c->eng, i);
	i->client_only = c->no_server;
	xp_cmeas_info(&c->meas, i);
}

/* One interval: our counts and the server's, as of the same moment. 0 or -errno. */
static int sample(struct client *c, struct snap *now, double t0)
{
	/*
	 * The server reads its counters about half a round trip after we
	 * ask: take our count midway between a reading before and one after,
	 * so both sides of the line describe the same moment and per-interval
	 * loss stays honest.
	 */
	struct xp_engine_stats st2;
	c->ops->read(c->eng, &now->eng);
	int e = server_sample(c, "sample", now, NULL);
	if (e)
		return e;
	c->ops->read(c->eng, &st2);
	now->t = xp_now() - t0;
	xp_midpoint(now->eng.tx.pkts, now->eng.tx.bytes, st2.tx.pkts, st2.tx.bytes, &now->eng.tx.pkts,
		    &now->eng.tx.bytes);
	c->good = *now;
	return 0;
}

/* Report every interval until -t ends, a signal, or the server goes away. */
static void interval_loop(struct client *c, double t0, struct snap *now, struct xp_summary *sum,
			  uint64_t *peak_open, uint64_t *peak_s_open)
{
	const struct xp_opts *o = c->o;
	struct snap prev = { 0 };
	double tick = t0, end = t0 + o->duration;
	while (!c->error) {
		double nominal = tick - t0; /* the line's start on the interval schedule */
		tick += o->interval;
		if (tick > end - o->interval * 0.25)
			tick = end;
		int w = wait_reading(c, tick);
		if (w < 0) {
			c->error = ctrl_errstr(c, w);
			c->server_gone = true;
			break;
		}
		if (w > 0) {
			sum->interrupted = true;
			break;
		}
		int e = sample(c, now, t0);
		if (e) {
			c->error = ctrl_errstr(c, e);
			c->server_gone = true;
			break;
		}
		struct xp_period p = { .t0 = prev.t, .t1 = now->t };
		period_of(c, now, &prev, &p);
		/* With stamps, the line waits until its send intervals are final. */
		if (!c->meas.on)
			xp_report_interval(&c->rep, &p);
		else if (xp_cmeas_queue(&c->meas, &p, nominal, tick - t0))
			c->error = "out of memory";
		xp_diag_watch_sample(&c->diag);
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
	int rc = xp_summary_thresholds(c->o, sum, last_error, sizeof(last_error));
	if (rc)
		fprintf(stderr, "xdpperf: %s\n", last_error);
	return rc;
}

/* The offered load against the target: the engine's count over the test, and its own account of why. */
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
	while (c->meas.next <= cur) {
		int e = xp_cmeas_fetch(&c->meas, &c->ctrl, c->ops, c->eng, c->errbuf, sizeof(c->errbuf));
		if (e) {
			c->error = ctrl_errstr(c, e);
			c->server_gone = true;
			return;
		}
	}
	xp_cmeas_flush(&c->meas, &c->rep, false);
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

	double cpu0 = xp_cpu_seconds();
	/* The lines' schedule starts with the engine, as without stamps (the test sends for -t); the stamps'
	 * send intervals started at t0, just before the request: line k holds send interval k, which began
	 * that much earlier (the header says how much; -J has t0). */
	double t0 = xp_now();
	if (c->ops->start(c->eng, err, sizeof(err))) {
		snprintf(c->errbuf, sizeof(c->errbuf), "the %s engine did not start: %s", c->ops->name, err);
		c->error = c->errbuf;
	}
	memset(sum, 0, sizeof(*sum));
	sum->kind = c->ec.kind;
	sum->server_cpu_pct = -1;
	uint64_t peak_open = 0, peak_s_open = 0;
	interval_loop(c, t0, &now, sum, &peak_open, &peak_s_open);
	c->ops->stop(c->eng);
	double t_end = xp_now();
	c->ops->read(c->eng, &now.eng);
	sum->client_cpu_pct = 100.0 * (xp_cpu_seconds() - cpu0) / (t_end - t0);
	sum->tx_errors = now.eng.tx.errors;
	bool sent = xp_figs_sent(c->ops->figures);
	if (!c->error) {
		/* Frames of our own still in flight belong to the test; an outside sender's after the end do not. */
		if (sent)
			settle(c, &now);
		finish_intervals(c);
		struct snap fin = now;
		int e = server_sample(c, "stop", &fin, &sum->server_cpu_pct);
		if (e) {
			c->error = ctrl_errstr(c, e);
			c->server_gone = true;
		} else {
			now.rx = fin.rx;
			now.srv = fin.srv;
		}
	}
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
	}
	if (!c->error && !sum->interrupted && c->ops->verdict)
		c->error = c->ops->verdict(&c->ec, &sum->total, c->errbuf, sizeof(c->errbuf));
	sum->error = c->error;
	xp_report_end(&c->rep, sum);
	if (c->error) {
		snprintf(last_error, sizeof(last_error), "%s", c->error);
		fprintf(stderr, "xdpperf: %s\n", c->error);
		return XP_EXIT_RUNTIME;
	}
	return sum->interrupted ? XP_EXIT_RUNTIME : thresholds(c, sum);
}

/* The engine's frame rate: --cps counts SYNs, -b the frames of -l; sockets take neither. */
static double target_pps(const struct xp_opts *o, enum xp_template t)
{
	if (t == XP_TMPL_SYN)
		return o->cps;
	if (t == XP_TMPL_DATA && o->rate.unit != XP_RATE_NONE)
		return xp_rate_to_pps(&o->rate, o->frame_size);
	return 0;
}

/* Tests whose frames are not ours to stamp: what the report says instead of latency figures. */
static void no_stamp_note(struct client *c)
{
	const char *what = c->ops->figures == XP_FIGS_SOCKETS ? "TCP segments through the kernel"
			   : c->ops->figures == XP_FIGS_HANDSHAKES ? "handshake frames"
			   : "nothing of its own (an outside generator's frames)";
	snprintf(c->meas.note, sizeof(c->meas.note), "none: the %s engine sends %s, with no stamp: no per-frame loss, "
		 "duplicates, reordering or latency", c->ops->name, what);
}

/* The engine's configuration from the options and the path. Exit status or 0. */
static int engine_cfg(struct client *c, struct xp_opts *o)
{
	struct xp_engine_cfg *ec = &c->ec;
	*ec = (struct xp_engine_cfg){
		.kind = test_kind(o),
		.sport_lo = o->cport_lo, .sport_hi = o->cport_hi,
		.dport_lo = o->port_lo, .dport_hi = o->port_hi,
		.ifindex = c->link.ifindex,
		.max_seconds = o->duration + 1,
		.debug = o->debug,
		.server = c->server,
		.nbind = o->nbind,
		.parallel = (unsigned)o->parallel,
		.burst = o->burst,
		.frames = { .queues = 1, .first_queue = o->first_queue },
		.sock = { .threads = o->threads, .zero = o->zero, .bind_dev = o->dev[0] != '\0' },
		.hs = {
			.syn_sender = o->syn_engine,
			.fin = o->fin,
			.peer_kernel = o->peer_kernel,
			.data_len = o->data_len,
			.ctrl_port = o->control_port,
			.xdp_mode = o->xdp_mode,
			.syn_retries = o->syn_retries,
			.keepalive_s = o->keepalive_s,
		},
	};
	memcpy(ec->bind, o->bind, sizeof(ec->bind[0]) * o->nbind);
	snprintf(ec->ifname, sizeof(ec->ifname), "%s", c->link.name);
	if (c->ops->tmpl != XP_TMPL_NONE) {
		build_template(c, &ec->frames.tmpl);
		/* No -l: the smallest valid frame of the family and protocol that carries a stamp. */
		if (c->ops->tmpl == XP_TMPL_DATA && !o->frame_size_set) {
			unsigned n = xp_stamp_min_frame(&ec->frames.tmpl);
			if (n)
				ec->frames.tmpl.frame_size = n;
		}
		o->frame_size = ec->frames.tmpl.frame_size;
		int rc = check_limits(c, &ec->frames.tmpl, &ec->frames.queues);
		if (rc)
			return rc;
	}
	ec->pps = target_pps(o, c->ops->tmpl);
	/* Last, just before the engine is made: the stamps' interval 0 starts now (or, where the engine takes
	 * it later, just before the request: xp_cmeas_t0). */
	if (c->ops->tmpl == XP_TMPL_DATA && ec->kind == XP_TEST_STREAM) {
		char err[200];
		int rc = xp_cmeas_setup(&c->meas, o, ec, err, sizeof(err));
		if (rc)
			return fail(c, rc, "%s", err);
	} else {
		no_stamp_note(c);
	}
	return 0;
}

int xp_client_run_one(const struct xp_opts *opts, struct xp_report *rep, struct xp_summary *sum)
{
	struct xp_opts oo = *opts, *o = &oo;
	/* A key and a 64 KiB line buffer: not on the stack. */
	struct client *c = calloc(1, sizeof(*c));
	char err[512];
	last_error[0] = '\0';
	if (!c) {
		snprintf(last_error, sizeof(last_error), "out of memory");
		fprintf(stderr, "xdpperf: out of memory\n");
		xp_report_error(rep, last_error);
		return 1;
	}
	c->o = o;
	c->ops = xp_engine_ops_of(o->engine);
	c->rep = *rep;
	c->ctrl.fd = -1;
	int rc = 0;
	if (o->auth_key && xp_auth_key_load(o->auth_key, &c->key, err, sizeof(err))) {
		rc = fail(c, 2, "%s", err);
		goto out;
	}
	rc = setup_path(c);
	if (rc)
		goto out;
	if (!o->frame_size) /* 0: the largest frame the interface's MTU allows */
		o->frame_size = c->link.mtu + 18;
	rc = engine_cfg(c, o);
	if (rc)
		goto out;
	/* Before the request: the server is told the engine that really runs (auto's choice). */
	if (xp_engine_open(o->engine, &c->ec, &c->ops, &c->eng, err, sizeof(err))) {
		rc = fail(c, 1, "%s", err);
		goto out;
	}
	/* auto's choice may be an engine that stamps nothing */
	rc = xp_cmeas_engine(&c->meas, o, c->ops, err, sizeof(err));
	if (rc) {
		fail(c, rc, "%s", err);
		goto out;
	}

	if (c->ops->figures == XP_FIGS_HANDSHAKES &&
	    xp_diag_watch_start(&c->diag, o->device_netns, c->link.ifindex, err, sizeof(err))) {
		rc = fail(c, 1, "%s", err);
		goto out;
	}
	if (c->no_server)
		snprintf(c->server_dev, sizeof(c->server_dev), "-");
	xp_cmeas_t0(&c->meas, c->ops, c->eng);
	rc = c->no_server ? 0 : request_test(c);
	if (rc)
		goto out;
	rc = run_test(c, sum);
	if (c->ec.kind != XP_TEST_STREAM)
		xp_conn_test_mark(o->host);
out:
	*rep = c->rep;
	if (c->eng)
		c->ops->destroy(c->eng);
	if (c->ctrl.fd >= 0)
		close(c->ctrl.fd);
	xp_auth_key_clear(&c->key);
	xp_cmeas_free(&c->meas);
	free(c);
	return rc;
}

int xp_client_run(const struct xp_opts *o)
{
	char err[256];
	enum xp_report_format fmt = o->json ? XP_REPORT_JSON : o->json_stream ? XP_REPORT_JSON_STREAM : XP_REPORT_TEXT;
	struct xp_report rep;
	struct xp_summary sum;
	xp_report_init(&rep, fmt, stdout);
	if (xp_check_privileges(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		xp_report_error(&rep, err);
		xp_report_free(&rep);
		return 1;
	}
	xp_install_signals();
	if (o->compare) {
		xp_report_free(&rep);
		return xp_client_compare(o);
	}
	int rc = xp_client_run_one(o, &rep, &sum);
	xp_report_free(&rep);
	return rc;
}
