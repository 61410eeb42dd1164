/*
 * Client role: ask the server for a test over the control channel, find the
 * egress interface and next-hop MAC from the kernel's tables, run a sending
 * engine for -t seconds, and report each interval what was sent (engine
 * counters) beside what arrived (the server's XDP counters).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "control.h"
#include "engine.h"
#include "netdev.h"
#include "netlink.h"
#include "report.h"
#include "roles.h"
#include "testspec.h"
#include "timeutil.h"

struct client {
	const struct xp_opts *o;
	struct xp_ctrl ctrl;
	struct xp_addr local, server;
	struct xp_link link;
	uint8_t nh_mac[6];
	struct xp_report rep;
	struct xp_report_info info;
	const struct xp_engine_ops *ops;
	struct xp_engine *eng;
	char server_dev[16], xdp_mode[16];
	struct xp_counters last_rx; /* latest counters the server sent */
	const char *error;          /* why the test ended early */
	char errbuf[256];
};

/* Ask the server for its counters; "sample" during the test, "stop" at the end. */
static int server_counters(struct client *c, const char *op, struct xp_counters *out, double *cpu)
{
	struct json_object *m = json_object_new_object(), *r = NULL;
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
	const char *rop = xp_json_str(r, "op", "");
	if (!strcmp(rop, "error")) {
		snprintf(c->errbuf, sizeof(c->errbuf), "server: %s", xp_json_str(r, "msg", "?"));
		json_object_put(r);
		return -EPROTO;
	}
	struct json_object *cj;
	if (!json_object_object_get_ex(r, "counters", &cj)) {
		json_object_put(r);
		return -EPROTO;
	}
	xp_counters_from_json(cj, out);
	if (cpu)
		*cpu = xp_json_double(r, "cpu_percent", -1);
	c->last_rx = *out;
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

/* Connect, learn addresses, interface and next hop. Returns exit status or 0. */
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
	if (o->dst_mac_set) {
		r = xp_route_get(&c->server, &rt);
		memcpy(c->nh_mac, o->dst_mac, 6);
		if (r)
			snprintf(err, sizeof(err), "no route to %s: %s", o->host, strerror(-r));
	} else {
		r = xp_nexthop_mac(&c->server, 2000, &rt, c->nh_mac, err, sizeof(err));
	}
	if (r) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	if (o->dev[0]) {
		if (xp_link_by_name(o->dev, &c->link)) {
			fprintf(stderr, "xdpperf: interface %s does not exist\n", o->dev);
			return 1;
		}
		if (c->link.ifindex != rt.oif)
			fprintf(stderr, "xdpperf: warning: the route to %s leaves by ifindex %d, not %s\n", o->host,
				rt.oif, o->dev);
	} else if (xp_link_by_index(rt.oif, &c->link)) {
		fprintf(stderr, "xdpperf: cannot read interface %d\n", rt.oif);
		return 1;
	}
	if (!c->link.up) {
		fprintf(stderr, "xdpperf: interface %s is down\n", c->link.name);
		return 1;
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

/* Frame size and queue checks that need the interface. Returns exit status or 0. */
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

static int request_test(struct client *c)
{
	const struct xp_opts *o = c->o;
	struct xp_test t = {
		.version = XP_PROTO_VERSION,
		.kind = XP_TEST_STREAM,
		.engine = o->engine == XP_ENGINE_NONE ? "none" : "xsk",
		.family = c->local.family,
		.udp = o->udp,
		.port_lo = o->port_lo,
		.port_hi = o->port_hi,
		.duration = o->duration,
		.frame_size = o->frame_size,
	};
	struct json_object *m = xp_test_to_json(&t), *r = NULL;
	int e = xp_ctrl_send(&c->ctrl, m);
	json_object_put(m);
	if (!e)
		e = xp_ctrl_recv(&c->ctrl, 5000, &r);
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

/* After the engine stops, wait until the server's count settles (frames in flight). */
static void settle(struct client *c, uint64_t tx)
{
	struct xp_counters cnt;
	uint64_t prev = c->last_rx.pkts;
	double end = xp_now() + 1.0;
	while (xp_now() < end) {
		xp_sleep(0.05);
		if (server_counters(c, "sample", &cnt, NULL))
			return;
		if (cnt.pkts >= tx || cnt.pkts == prev)
			return;
		prev = cnt.pkts;
	}
}

static int run_test(struct client *c, unsigned queues, const struct frame_spec *tmpl)
{
	const struct xp_opts *o = c->o;
	char err[256];
	struct xp_engine_cfg ec = {
		.tmpl = *tmpl,
		.sport_lo = o->cport_lo, .sport_hi = o->cport_hi,
		.dport_lo = o->port_lo, .dport_hi = o->port_hi,
		.ifindex = c->link.ifindex,
		.queues = queues,
		.first_queue = o->first_queue,
		.pps = o->rate.unit != XP_RATE_NONE ? xp_rate_to_pps(&o->rate, o->frame_size) : 0,
		.max_seconds = o->duration + 1,
		.debug = o->debug,
	};
	snprintf(ec.ifname, sizeof(ec.ifname), "%s", c->link.name);
	c->ops = o->engine == XP_ENGINE_NONE ? &xp_engine_none : &xp_engine_xsk;
	if (c->ops->create(&ec, &c->eng, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	struct xp_engine_stats st;
	c->ops->read(c->eng, &st);

	struct xp_report_info *i = &c->info;
	xp_addr_str(&c->local, i->client, sizeof(i->client));
	xp_addr_str(&c->server, i->server, sizeof(i->server));
	snprintf(i->dev, sizeof(i->dev), "%s", c->link.name);
	snprintf(i->server_dev, sizeof(i->server_dev), "%s", c->server_dev);
	i->engine = c->ops->name;
	i->engine_mode = st.mode;
	i->server_xdp_mode = c->xdp_mode;
	i->test = "stream";
	i->proto = o->udp ? "udp" : "tcp";
	i->family = c->local.family == AF_INET6 ? 6 : 4;
	i->frame_size = o->frame_size;
	i->queues = queues;
	i->port_lo = o->port_lo, i->port_hi = o->port_hi;
	i->cport_lo = o->cport_lo, i->cport_hi = o->cport_hi;
	i->duration = o->duration;
	i->interval = o->interval;
	i->target_pps = ec.pps;
	xp_report_start(&c->rep, i);

	double cpu0 = xp_cpu_seconds();
	double t0 = xp_now();
	if (c->ops->start(c->eng, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		c->error = "engine failed to start";
	}
	struct xp_period prev = { 0 };
	struct xp_summary sum = { .server_cpu_pct = -1 };
	double tick = t0;
	int stop = c->error ? 1 : 0;
	while (!stop) {
		double end = t0 + o->duration;
		tick += o->interval;
		if (tick > end - o->interval * 0.25)
			tick = end;
		int w = wait_until(c, tick);
		if (w < 0) {
			c->error = ctrl_errstr(c, w);
			break;
		}
		if (w > 0) {
			sum.interrupted = true;
			break;
		}
		/*
		 * The server reads its counters about half a round trip after we
		 * ask: average our count before and after so both sides of the
		 * line describe the same moment and per-interval loss stays honest.
		 */
		struct xp_counters rx;
		struct xp_engine_stats st2;
		c->ops->read(c->eng, &st);
		int e = server_counters(c, "sample", &rx, NULL);
		if (e) {
			c->error = ctrl_errstr(c, e);
			break;
		}
		c->ops->read(c->eng, &st2);
		st.pkts = (st.pkts + st2.pkts) / 2;
		st.bytes = (st.bytes + st2.bytes) / 2;
		struct xp_period p = { .t0 = prev.t1, .t1 = xp_now() - t0 };
		p.tx_pkts = st.pkts - prev.tx_pkts;
		p.tx_bytes = st.bytes - prev.tx_bytes;
		xp_counters_sub(&rx, &prev.rx, &p.rx);
		xp_report_interval(&c->rep, &p);
		prev = (struct xp_period){ .t1 = p.t1, .tx_pkts = st.pkts, .tx_bytes = st.bytes, .rx = rx };
		if (tick >= end)
			stop = 1;
	}
	c->ops->stop(c->eng);
	double t_end = xp_now();
	c->ops->read(c->eng, &st);
	sum.client_cpu_pct = 100.0 * (xp_cpu_seconds() - cpu0) / (t_end - t0);
	sum.tx_errors = st.errors;
	sum.total.t1 = t_end - t0;
	sum.total.tx_pkts = st.pkts;
	sum.total.tx_bytes = st.bytes;
	if (!c->error) {
		settle(c, st.pkts);
		double scpu = -1;
		int e = server_counters(c, "stop", &sum.total.rx, &scpu);
		if (e)
			c->error = ctrl_errstr(c, e);
		sum.server_cpu_pct = scpu;
	}
	if (c->error)
		sum.total.rx = c->last_rx; /* what the server counted before it went away */
	sum.error = c->error;
	xp_report_end(&c->rep, &sum);
	if (c->error)
		fprintf(stderr, "xdpperf: %s\n", c->error);
	return c->error ? 1 : (sum.interrupted ? 1 : 0);
}

int xp_client_run(const struct xp_opts *o)
{
	struct client c = { .o = o };
	char err[256];
	int rc;

	c.ctrl.fd = -1;
	if (xp_check_privileges(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	xp_install_signals();
	rc = setup_path(&c);
	if (rc)
		goto out;
	struct frame_spec tmpl;
	unsigned queues = 1;
	build_template(&c, &tmpl);
	rc = check_limits(&c, &tmpl, &queues);
	if (rc)
		goto out;
	rc = request_test(&c);
	if (rc)
		goto out;
	enum xp_report_format fmt = o->json ? XP_REPORT_JSON : o->json_stream ? XP_REPORT_JSON_STREAM : XP_REPORT_TEXT;
	xp_report_init(&c.rep, fmt, stdout);
	rc = run_test(&c, queues, &tmpl);
	xp_report_free(&c.rep);
out:
	if (c.eng)
		c.ops->destroy(c.eng);
	if (c.ctrl.fd >= 0)
		close(c.ctrl.fd);
	return rc;
}
