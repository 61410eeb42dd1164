/*
 * Client role: ask the server for a test over the control channel, find the
 * path (for frame engines: egress interface and next-hop MAC from the
 * kernel's tables), run an engine for -t seconds, and report each interval
 * what was sent (engine counters) beside what arrived (the server's XDP
 * counters, and for socket tests its socket counts).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "client/client.h"
#include "loader/client_prog.h"
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
	struct xp_cc_counters cc; /* the client's XDP handshake program */
};

struct client {
	const struct xp_opts *o;
	struct xp_ctrl ctrl;
	struct xp_addr local, server;
	struct xp_netdev link;
	uint8_t nh_mac[6];
	bool sock;                  /* socket engine (else a frame engine) */
	bool xconn;                 /* XDP connection engine */
	struct client_prog *cp;        /* its client-side XDP program */
	const char *cp_mode;
	struct xp_report rep;
	const struct xp_engine_ops *ops;
	struct xp_engine *eng;
	char server_dev[16], xdp_mode[16];
	struct snap last;           /* latest figures the server sent */
	const char *error;          /* why the test ended early */
	char errbuf[256];
};

/* Ask the server for its counters; "sample" during the test, "stop" at the end. */
static int server_sample(struct client *c, const char *op, struct snap *out, double *cpu)
{
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
		snprintf(c->errbuf, sizeof(c->errbuf), "server: %s", xp_json_str(r, "msg", "?"));
		json_object_put(r);
		return -EPROTO;
	}
	if (!json_object_object_get_ex(r, "counters", &v)) {
		json_object_put(r);
		return -EPROTO;
	}
	xp_counters_from_json(v, &out->rx);
	if (json_object_object_get_ex(r, "sockets", &v)) {
		out->srv.s_accepted = (uint64_t)xp_json_int(v, "accepted", 0);
		out->srv.s_closed = (uint64_t)xp_json_int(v, "closed", 0);
		out->srv.s_resets = (uint64_t)xp_json_int(v, "resets", 0);
		out->srv.s_open_now = (uint64_t)xp_json_int(v, "open_now", 0);
		out->srv.s_bytes_rx = (uint64_t)xp_json_int(v, "bytes_rx", 0);
	}
	if (cpu)
		*cpu = xp_json_double(r, "cpu_percent", -1);
	c->last.rx = out->rx;
	c->last.srv = out->srv;
	json_object_put(r);
	return 0;
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

/* The figures of the period between two snapshots. */
static void period_of(const struct client *c, const struct snap *now, const struct snap *prev, struct xp_period *p)
{
	p->tx_pkts = now->eng.pkts - prev->eng.pkts;
	p->tx_bytes = now->eng.bytes - prev->eng.bytes;
	xp_counters_sub(&now->rx, &prev->rx, &p->rx);
	p->has_sock = c->sock;
	p->has_xconn = c->xconn;
	struct xp_sock_figs *f = &p->sock;
	if (c->xconn) {
		struct xp_xconn_figs *x = &p->xconn;
		x->syn_sent = now->eng.pkts - prev->eng.pkts;
		x->synack_seen = now->cc.synack_seen - prev->cc.synack_seen;
		x->acks_sent = now->cc.acks_sent - prev->cc.acks_sent;
		x->fins_sent = now->cc.fins_sent - prev->cc.fins_sent;
		x->rst_seen = now->cc.rst_seen - prev->cc.rst_seen;
		x->finack_answered = now->cc.finack_answered - prev->cc.finack_answered;
		x->rst_closed = now->eng.conn_closed - prev->eng.conn_closed;
		/* --peer kernel: the server's sockets did the accepting */
		f->s_accepted = now->srv.s_accepted - prev->srv.s_accepted;
		f->s_open_now = now->srv.s_open_now;
		return;
	}
	if (!c->sock)
		return;
	const struct xp_engine_stats *a = &now->eng, *b = &prev->eng;
	f->conn_ok = a->conn_ok - b->conn_ok;
	f->conn_fail = a->conn_fail - b->conn_fail;
	f->conn_reset = a->conn_reset - b->conn_reset;
	f->conn_timeout = a->conn_timeout - b->conn_timeout;
	f->conn_closed = a->conn_closed - b->conn_closed;
	f->open_now = a->open_now;
	f->payload_bytes = a->payload_bytes - b->payload_bytes;
	f->s_accepted = now->srv.s_accepted - prev->srv.s_accepted;
	f->s_closed = now->srv.s_closed - prev->srv.s_closed;
	f->s_resets = now->srv.s_resets - prev->srv.s_resets;
	f->s_open_now = now->srv.s_open_now;
	f->s_bytes_rx = now->srv.s_bytes_rx - prev->srv.s_bytes_rx;
}

/* Connect, learn addresses, and for frame engines the interface and next hop. Exit status or 0. */
static int setup_path(struct client *c)
{
	const struct xp_opts *o = c->o;
	char err[512];

	int fd = xp_ctrl_connect(o->host, o->control_port, o->family, 3000, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return fd == -EINVAL ? 2 : 1;
	}
	xp_ctrl_init(&c->ctrl, fd);
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	getpeername(fd, (struct sockaddr *)&ss, &sl);
	xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->server, NULL);
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->local, NULL);

	struct xp_route rt;
	int r;
	if (c->sock || o->dst_mac_set) {
		/* Sockets let the kernel route; we only want the interface's name. */
		r = xp_route_get(&c->server, &rt);
		memcpy(c->nh_mac, o->dst_mac, 6);
		if (r)
			snprintf(err, sizeof(err), "no route to %.200s: %s", o->host, strerror(-r));
	} else {
		r = xp_nexthop_mac(&c->server, 2000, &rt, c->nh_mac, err, sizeof(err));
	}
	if (r) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	if (o->dev[0]) {
		if (xp_netdev_by_name(o->dev, &c->link)) {
			fprintf(stderr, "xdpperf: interface %s does not exist\n", o->dev);
			return 1;
		}
		if (c->link.ifindex != rt.oif)
			fprintf(stderr, "xdpperf: warning: the route to %s leaves by ifindex %d, not %s\n", o->host,
				rt.oif, o->dev);
	} else if (xp_netdev_by_index(rt.oif, &c->link)) {
		fprintf(stderr, "xdpperf: cannot read interface %d\n", rt.oif);
		return 1;
	}
	if (!c->link.up) {
		fprintf(stderr, "xdpperf: interface %s is down\n", c->link.name);
		return 1;
	}
	for (unsigned i = 0; i < o->nbind; i++)
		if (o->bind[i].family != c->server.family) {
			fprintf(stderr, "xdpperf: --bind addresses must be IPv%c like the server's\n",
				c->server.family == AF_INET6 ? '6' : '4');
			return 2;
		}
	return 0;
}

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
}

/* The XDP connection engine's SYN: options like Linux's; the engine varies tuple and ISN per SYN. */
static void build_syn_template(struct client *c, struct frame_spec *s)
{
	build_template(c, s);
	s->l4_proto = IPPROTO_TCP;
	s->tcp_flags = 0x02; /* SYN */
	s->ack = 0;
	s->tcp_syn_options = true;
	s->no_payload = true;
	s->window = 64240;
}

/* Frame size and queue checks that need the interface. Exit status or 0. */
static int check_limits(struct client *c, const struct frame_spec *s, unsigned *queues)
{
	const struct xp_opts *o = c->o;
	size_t min = frame_min_size(s);
	size_t max = (size_t)c->link.mtu + 18;
	if (o->frame_size < min) {
		fprintf(stderr, "xdpperf: frame size %u is too small for %s/IPv%d (minimum -l %zu)\n", o->frame_size,
			o->udp ? "UDP" : "TCP", c->local.family == AF_INET6 ? 6 : 4, min);
		return 2;
	}
	if (o->frame_size > max) {
		fprintf(stderr, "xdpperf: frame size %u exceeds the MTU %u of %s (maximum -l %zu)\n", o->frame_size,
			c->link.mtu, c->link.name, max);
		return 2;
	}
	unsigned avail = c->link.tx_queues ? c->link.tx_queues : 1;
	if (o->first_queue >= avail) {
		fprintf(stderr, "xdpperf: %s has %u TX queue%s, cannot use --first-queue %u\n", c->link.name, avail,
			avail == 1 ? "" : "s", o->first_queue);
		return 2;
	}
	*queues = o->queues ? o->queues : avail - o->first_queue;
	if (o->first_queue + *queues > avail) {
		fprintf(stderr, "xdpperf: %s has %u TX queue%s, cannot use %u from queue %u\n", c->link.name,
			avail, avail == 1 ? "" : "s", *queues, o->first_queue);
		return 2;
	}
	return 0;
}

static enum xp_test_kind test_kind(const struct xp_opts *o)
{
	return o->close_each ? XP_TEST_CONNECT : o->keepalive ? XP_TEST_HOLD : XP_TEST_STREAM;
}

static const char *engine_name(const struct xp_opts *o)
{
	switch (o->engine) {
	case XP_ENGINE_XDP: return "xdp";
	case XP_ENGINE_SOCKET: return "socket";
	case XP_ENGINE_NONE: return "none";
	case XP_ENGINE_LIVE: return "live";
	case XP_ENGINE_XSK: return "xsk";
	default: return "auto";
	}
}

static int request_test(struct client *c)
{
	const struct xp_opts *o = c->o;
	struct xp_test t = {
		.version = XP_PROTO_VERSION,
		.kind = test_kind(o),
		.engine = engine_name(o),
		.family = c->local.family,
		.udp = o->udp,
		.pass = c->sock, /* socket tests: the server's stack must see the frames */
		.port_lo = o->port_lo,
		.port_hi = o->port_hi,
		.duration = o->duration,
		.frame_size = c->sock ? 0 : o->frame_size,
		.parallel = c->sock || c->xconn ? o->parallel : 0,
		/* XDP connection tests: the server's XDP answers, or with --peer kernel its TCP stack */
		.respond = c->xconn && !o->peer_kernel,
		.listen = c->sock || (c->xconn && o->peer_kernel),
		.close_mode = c->xconn && o->close_each && !o->fin && !o->data_len && !o->peer_kernel ? XP_CLOSE_RST : XP_CLOSE_NONE,
	};
	if (c->xconn && o->peer_kernel)
		t.pass = true;
	struct json_object *m = xp_test_to_json(&t), *r = NULL;
	int e = xp_ctrl_send(&c->ctrl, m);
	json_object_put(m);
	if (!e)
		e = xp_ctrl_recv(&c->ctrl, 10000, &r);
	if (e <= 0) {
		fprintf(stderr, "xdpperf: %s\n", ctrl_errstr(c, e == 0 ? -ECONNRESET : e));
		return 1;
	}
	if (strcmp(xp_json_str(r, "op", ""), "started")) {
		fprintf(stderr, "xdpperf: server refused the test: %s\n", xp_json_str(r, "msg", "no reason given"));
		json_object_put(r);
		return 1;
	}
	snprintf(c->server_dev, sizeof(c->server_dev), "%s", xp_json_str(r, "dev", "?"));
	snprintf(c->xdp_mode, sizeof(c->xdp_mode), "%s", xp_json_str(r, "xdp_mode", "?"));
	json_object_put(r);
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
	bool stream = c->sock && end->eng.payload_bytes;
	double until = xp_now() + (stream ? 5.0 : 1.0);
	while (xp_now() < until) {
		xp_sleep(0.05);
		if (server_sample(c, "sample", &s, NULL))
			return;
		if (stream) {
			if (s.srv.s_bytes_rx >= end->eng.payload_bytes)
				return;
			continue;
		}
		if ((!c->sock && s.rx.pkts >= end->eng.pkts) || s.rx.pkts == prev)
			return;
		prev = s.rx.pkts;
	}
}

static void fill_info(struct client *c, struct xp_report_info *i, const struct xp_engine_cfg *ec,
		      const struct xp_engine_stats *st)
{
	const struct xp_opts *o = c->o;
	memset(i, 0, sizeof(*i));
	xp_addr_str(&c->local, i->client, sizeof(i->client));
	xp_addr_str(&c->server, i->server, sizeof(i->server));
	snprintf(i->dev, sizeof(i->dev), "%s", c->link.name);
	snprintf(i->server_dev, sizeof(i->server_dev), "%s", c->server_dev);
	i->engine = c->ops->name;
	i->engine_mode = st->mode;
	i->server_xdp_mode = c->xdp_mode;
	i->test = xp_test_kind_name(ec->kind);
	i->proto = o->udp ? "udp" : "tcp";
	i->family = c->local.family == AF_INET6 ? 6 : 4;
	i->frame_size = c->sock ? 0 : o->frame_size;
	i->queues = ec->queues;
	i->port_lo = o->port_lo, i->port_hi = o->port_hi;
	i->cport_lo = o->cport_lo, i->cport_hi = o->cport_hi;
	i->duration = o->duration;
	i->interval = o->interval;
	i->target_pps = ec->pps;
	i->parallel = c->sock || c->xconn ? (unsigned)o->parallel : 0;
	i->peer_kernel = c->xconn && o->peer_kernel;
	i->target_cps = c->xconn ? o->cps : 0;
	i->client_xdp_mode = c->cp_mode;
	if (c->xconn)
		i->engine = "xdp";
}

static int run_test(struct client *c, const struct xp_engine_cfg *ec, struct xp_summary *sum)
{
	const struct xp_opts *o = c->o;
	char err[256];
	int cr = c->ops->create(ec, &c->eng, err, sizeof(err));
	if (cr && c->ops == &xp_engine_live &&
	    (c->xconn ? o->syn_engine == XP_SYN_AUTO : o->engine == XP_ENGINE_AUTO)) {
		/* auto (and -x's default SYN engine): XDP live frames where this
		 * kernel and frame allow, else AF_XDP. */
		if (o->debug)
			fprintf(stderr, "xdpperf: live engine unavailable (%s); using xsk\n", err);
		c->eng = NULL;
		c->ops = &xp_engine_xsk;
		cr = c->ops->create(ec, &c->eng, err, sizeof(err));
	}
	if (cr) {
		c->eng = NULL;
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	struct snap now = { 0 }, prev = { 0 };
	c->ops->read(c->eng, &now.eng);
	struct xp_report_info info;
	fill_info(c, &info, ec, &now.eng);
	xp_report_start(&c->rep, &info);

	double cpu0 = xp_cpu_seconds();
	double t0 = xp_now(), t_prev = 0;
	if (c->ops->start(c->eng, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		c->error = "engine failed to start";
	}
	memset(sum, 0, sizeof(*sum));
	sum->server_cpu_pct = -1;
	memset(&prev.eng, 0, sizeof(prev.eng));
	double tick = t0, end = t0 + o->duration;
	uint64_t peak_open = 0, peak_s_open = 0;
	while (!c->error) {
		tick += o->interval;
		if (tick > end - o->interval * 0.25)
			tick = end;
		int w = wait_until(c, tick);
		if (w < 0) {
			c->error = ctrl_errstr(c, w);
			break;
		}
		if (w > 0) {
			sum->interrupted = true;
			break;
		}
		/*
		 * The server reads its counters about half a round trip after we
		 * ask: average our count before and after so both sides of the
		 * line describe the same moment and per-interval loss stays honest.
		 */
		struct xp_engine_stats st2;
		c->ops->read(c->eng, &now.eng);
		if (c->cp)
			client_prog_read(c->cp, &now.cc);
		int e = server_sample(c, "sample", &now, NULL);
		if (e) {
			c->error = ctrl_errstr(c, e);
			break;
		}
		c->ops->read(c->eng, &st2);
		now.eng.pkts = (now.eng.pkts + st2.pkts) / 2;
		now.eng.bytes = (now.eng.bytes + st2.bytes) / 2;
		struct xp_period p = { .t0 = t_prev, .t1 = xp_now() - t0 };
		period_of(c, &now, &prev, &p);
		xp_report_interval(&c->rep, &p);
		if (p.sock.open_now > peak_open)
			peak_open = p.sock.open_now;
		if (p.sock.s_open_now > peak_s_open)
			peak_s_open = p.sock.s_open_now;
		prev = now;
		t_prev = p.t1;
		if (tick >= end)
			break;
	}
	c->ops->stop(c->eng);
	double t_end = xp_now();
	c->ops->read(c->eng, &now.eng);
	if (c->cp) {
		xp_sleep(0.2); /* the last handshakes' replies are still on their way */
		client_prog_read(c->cp, &now.cc);
	}
	sum->client_cpu_pct = 100.0 * (xp_cpu_seconds() - cpu0) / (t_end - t0);
	sum->tx_errors = now.eng.errors;
	if (!c->error) {
		settle(c, &now);
		int e = server_sample(c, "stop", &now, &sum->server_cpu_pct);
		if (e)
			c->error = ctrl_errstr(c, e);
	}
	if (c->error) {
		now.rx = c->last.rx; /* what the server counted before it went away */
		now.srv = c->last.srv;
	}
	struct snap zero = { 0 };
	sum->total = (struct xp_period){ .t1 = t_end - t0 };
	period_of(c, &now, &zero, &sum->total);
	/* For the whole test, "open" is the most that were open at once. */
	sum->total.sock.open_now = peak_open;
	sum->total.sock.s_open_now = peak_s_open;
	if (!c->error && c->sock && !sum->total.sock.conn_ok && !sum->interrupted) {
		snprintf(c->errbuf, sizeof(c->errbuf),
			 "no connection could be established (%llu failed, %llu timed out): is a firewall dropping them?",
			 (unsigned long long)sum->total.sock.conn_fail, (unsigned long long)sum->total.sock.conn_timeout);
		c->error = c->errbuf;
	}
	if (!c->error && c->xconn && !xp_period_established(&sum->total) && sum->total.xconn.syn_sent &&
	    !sum->interrupted) {
		snprintf(c->errbuf, sizeof(c->errbuf),
			 "no handshake completed (%llu SYNs sent, %llu SYN-ACKs seen): is something dropping them?",
			 (unsigned long long)sum->total.xconn.syn_sent, (unsigned long long)sum->total.xconn.synack_seen);
		c->error = c->errbuf;
	}
	sum->error = c->error;
	xp_report_end(&c->rep, sum);
	if (c->error)
		fprintf(stderr, "xdpperf: %s\n", c->error);
	return c->error ? 1 : (sum->interrupted ? 1 : 0);
}

int xp_client_run_one(const struct xp_opts *opts, struct xp_report *rep, struct xp_summary *sum)
{
	struct xp_opts oo = *opts, *o = &oo;
	struct client c = { .o = o, .sock = o->engine == XP_ENGINE_SOCKET, .xconn = o->engine == XP_ENGINE_XDP };
	c.ctrl.fd = -1;
	int rc = setup_path(&c);
	if (rc)
		goto out;
	if (!o->frame_size) /* 0: the largest frame the interface's MTU allows */
		o->frame_size = c.link.mtu + 18;
	struct xp_engine_cfg ec = {
		.kind = test_kind(o),
		.sport_lo = o->cport_lo, .sport_hi = o->cport_hi,
		.dport_lo = o->port_lo, .dport_hi = o->port_hi,
		.ifindex = c.link.ifindex,
		.queues = 1,
		.first_queue = o->first_queue,
		.max_seconds = o->duration + 1,
		.debug = o->debug,
		.server = c.server,
		.nbind = o->nbind,
		.parallel = (unsigned)o->parallel,
		.threads = o->threads,
		.zero = o->zero,
	};
	memcpy(ec.bind, o->bind, sizeof(ec.bind[0]) * o->nbind);
	snprintf(ec.ifname, sizeof(ec.ifname), "%s", c.link.name);
	if (c.sock) {
		c.ops = &xp_engine_socket;
	} else if (c.xconn) {
		/* SYNs: live frames for -x unless told otherwise (run_test falls
		 * back to xsk where they do not work); -k: xsk, which resets the
		 * held connections at the end. */
		c.ops = o->syn_engine == XP_SYN_XSK || (o->syn_engine == XP_SYN_AUTO && o->keepalive)
			? &xp_engine_xsk : &xp_engine_live;
		build_syn_template(&c, &ec.tmpl);
		o->frame_size = (unsigned)frame_min_size(&ec.tmpl);
		rc = check_limits(&c, &ec.tmpl, &ec.queues);
		if (rc)
			goto out;
		ec.pps = o->cps;
	} else {
		c.ops = o->engine == XP_ENGINE_NONE  ? &xp_engine_none
			: o->engine == XP_ENGINE_XSK ? &xp_engine_xsk
						     : &xp_engine_live; /* live, or auto (falls back to xsk) */
		build_template(&c, &ec.tmpl);
		rc = check_limits(&c, &ec.tmpl, &ec.queues);
		if (rc)
			goto out;
		if (o->rate.unit != XP_RATE_NONE)
			ec.pps = xp_rate_to_pps(&o->rate, o->frame_size);
		ec.burst = o->burst;
	}
	rc = request_test(&c);
	if (rc)
		goto out;
	if (c.xconn) {
		char err[256];
		struct client_prog_cfg cc = {
			.ifindex = c.link.ifindex,
			.family = c.local.family,
			.cport_lo = o->cport_lo, .cport_hi = o->cport_hi,
			.dport_lo = o->port_lo, .dport_hi = o->port_hi,
			.ctrl_port = o->control_port,
			/* --peer kernel: ACK|FIN completes the handshake and closes (the stack answers the FIN). */
			.mode = o->keepalive ? XP_CC_MODE_KEEPALIVE
				: o->data_len ? XP_CC_MODE_DATA
				: (o->fin || o->peer_kernel) ? XP_CC_MODE_FIN : XP_CC_MODE_RST,
			.data_len = o->data_len,
			.reply_redirect = true,
			.xdp_mode = o->xdp_mode,
		};
		if (client_prog_open(&cc, &c.cp, &c.cp_mode, err, sizeof(err))) {
			fprintf(stderr, "xdpperf: %s\n", err);
			rc = 1;
			goto out;
		}
	}
	c.rep = *rep;
	rc = run_test(&c, &ec, sum);
	*rep = c.rep;
out:
	if (c.eng)
		c.ops->destroy(c.eng);
	client_prog_close(c.cp);
	if (c.ctrl.fd >= 0)
		close(c.ctrl.fd);
	return rc;
}

int xp_client_run(const struct xp_opts *o)
{
	char err[256];
	if (xp_check_privileges(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	xp_install_signals();
	if (o->compare)
		return xp_client_compare(o);
	enum xp_report_format fmt = o->json ? XP_REPORT_JSON : o->json_stream ? XP_REPORT_JSON_STREAM : XP_REPORT_TEXT;
	struct xp_report rep;
	struct xp_summary sum;
	xp_report_init(&rep, fmt, stdout);
	int rc = xp_client_run_one(o, &rep, &sum);
	xp_report_free(&rep);
	return rc;
}
