/*
 * Server role: a single-threaded event loop over the control connections.
 * Each test gets its own slot in the XDP program's maps (its port range and
 * counters), so several clients can test at once; the program is attached
 * to each client-facing interface while at least one test uses it.
 */
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/channel.h"
#include "net/netdev.h"
#include "net/netstat.h"
#include "net/route.h"
#include "server/server.h"
#include "util/process.h"
#include "loader/server_prog.h"
#include "server/listeners.h"
#include "proto/messages.h"
#include "util/time.h"

#define MAX_CLIENTS 64

struct srv_client {
	bool used;
	struct xp_ctrl ctrl;
	struct xp_addr peer;
	char peer_s[64];
	int slot;          /* -1 until a test starts */
	int ifindex;       /* where the XDP program is attached for it */
	double t_start, cpu_start, last_msg;
	double idle_limit;
	/* socket tests: listeners of this test, or the server's standing ones */
	struct xp_sock_server *ss;
	bool ss_owned;
	struct xp_sock_server_stats ss_base;
	struct xp_tcpext tcpext_base; /* the namespace's TcpExt counters at the test's start */
	bool tcpext_ok;
};

struct server {
	const struct xp_opts *o;
	struct server_prog *rp;
	int lfd;
	struct srv_client cl[MAX_CLIENTS];
	unsigned tests_done;
	struct xp_sock_server *listeners; /* -P / --engine socket: fireperf-style standing listeners */
};

static int listen_on(unsigned short port, char *err, size_t errlen)
{
	int one = 1, zero = 0;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		/* One dual-stack socket serves IPv4 and IPv6 clients. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0 && listen(fd, 64) == 0)
			return fd;
		close(fd);
	}
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)),
		       bind(fd, (struct sockaddr *)&a4, sizeof(a4))) || listen(fd, 64)) {
		int e = errno;
		snprintf(err, errlen, "cannot listen on control port %u: %s%s", port, strerror(e),
			 e == EADDRINUSE ? " (another server running? pick --control-port)" : "");
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

static void send_error(struct srv_client *c, const char *msg)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("error"));
	json_object_object_add(o, "msg", json_object_new_string(msg));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
}

static void release(struct server *s, struct srv_client *c)
{
	if (c->ss && c->ss_owned)
		xp_sock_server_stop(c->ss);
	c->ss = NULL;
	if (c->slot >= 0) {
		server_prog_slot_free(s->rp, c->slot);
		server_prog_detach(s->rp, c->ifindex);
		c->slot = -1;
		s->tests_done++;
	}
}

static void drop_client(struct server *s, struct srv_client *c, const char *why)
{
	if (why)
		printf("[%s] %s\n", c->peer_s, why);
	release(s, c);
	close(c->ctrl.fd);
	c->used = false;
	fflush(stdout);
}

/* The interface the test traffic arrives on: --dev, else the route back to the client. */
static int client_ifindex(struct server *s, struct srv_client *c, char *err, size_t errlen)
{
	struct xp_netdev l;
	if (s->o->dev[0]) {
		if (xp_netdev_by_name(s->o->dev, &l)) {
			snprintf(err, errlen, "server interface %s does not exist", s->o->dev);
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

/*
 * A socket test needs listeners on its ports: the server's standing ones when
 * they cover the range (fireperf style, `-s -P N -p RANGE`), else listeners
 * opened for this test alone and closed at its end.
 */
static int start_sockets(struct server *s, struct srv_client *c, const struct xp_test *t, char *err, size_t errlen)
{
	const struct xp_opts *o = s->o;
	if (s->listeners && t->port_lo >= o->port_lo && t->port_hi <= o->port_hi) {
		c->ss = s->listeners;
		c->ss_owned = false;
	} else {
		struct xp_sock_server_cfg cfg = { .port_lo = t->port_lo, .port_hi = t->port_hi,
						  .threads = o->threads, .max_conns = t->parallel, .debug = o->debug };
		if (s->listeners && t->port_lo <= o->port_hi && o->port_lo <= t->port_hi) {
			snprintf(err, errlen, "ports %u:%u overlap the server's listeners on %u:%u but are not inside them",
				 t->port_lo, t->port_hi, o->port_lo, o->port_hi);
			return -1;
		}
		if (xp_sock_server_start(&cfg, &c->ss, err, errlen))
			return -1;
		c->ss_owned = true;
	}
	xp_sock_server_read(c->ss, &c->ss_base);
	/* The kernel's own count of handshakes its full accept queues dropped:
	 * why a client can see more established than we accept. */
	c->tcpext_ok = !xp_tcpext_read(&c->tcpext_base);
	return 0;
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

static void on_start(struct server *s, struct srv_client *c, struct json_object *m)
{
	struct xp_test t;
	char err[256];
	const char *mode = "?";

	if (c->slot >= 0) {
		send_error(c, "a test is already running on this connection");
		return;
	}
	if (xp_test_from_json(m, &t, err, sizeof(err))) {
		send_error(c, err);
		return;
	}
	if (s->o->control_port >= t.port_lo && s->o->control_port <= t.port_hi) {
		snprintf(err, sizeof(err), "port range %u:%u includes the server's control port %u", t.port_lo,
			 t.port_hi, s->o->control_port);
		send_error(c, err);
		return;
	}
	int ifindex = client_ifindex(s, c, err, sizeof(err));
	if (ifindex < 0) {
		send_error(c, err);
		return;
	}
	if (server_prog_attach(s->rp, ifindex, s->o->xdp_mode, &mode, err, sizeof(err))) {
		send_error(c, err);
		printf("[%s] %s\n", c->peer_s, err);
		return;
	}
	uint32_t flags = (t.pass ? XP_SLOT_PASS : 0) | (t.respond ? XP_SLOT_RESPOND : 0);
	int slot = server_prog_slot_alloc(s->rp, t.port_lo, t.port_hi, t.udp ? XP_PROTO_UDP : XP_PROTO_TCP, flags,
				     t.close_mode, err, sizeof(err));
	if (slot < 0) {
		server_prog_detach(s->rp, ifindex);
		send_error(c, err);
		return;
	}
	if (t.listen && start_sockets(s, c, &t, err, sizeof(err))) {
		server_prog_slot_free(s->rp, slot);
		server_prog_detach(s->rp, ifindex);
		send_error(c, err);
		return;
	}
	c->slot = slot;
	c->ifindex = ifindex;
	c->t_start = xp_now();
	c->cpu_start = xp_cpu_seconds();
	c->idle_limit = (t.duration > 30 ? t.duration : 30) + 30;
	struct xp_netdev l = { 0 };
	xp_netdev_by_index(ifindex, &l);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("started"));
	json_object_object_add(o, "slot", json_object_new_int(slot));
	json_object_object_add(o, "dev", json_object_new_string(l.name));
	json_object_object_add(o, "xdp_mode", json_object_new_string(mode));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
	printf("[%s] %s test (%s engine), %s/IPv%d, ports %u:%u, counting with XDP (%s%s) on %s\n", c->peer_s,
	       xp_test_kind_name(t.kind), t.engine, t.udp ? "udp" : "tcp", t.family == AF_INET6 ? 6 : 4, t.port_lo,
	       t.port_hi, mode, t.respond ? ", answering handshakes with SYN cookies" : t.pass ? ", count and pass" : "",
	       l.name);
	fflush(stdout);
}

/* "sample" and "stop" both answer with the slot's counters and our CPU use. */
static void on_counters(struct server *s, struct srv_client *c, const char *reply)
{
	if (c->slot < 0) {
		send_error(c, "no test is running on this connection");
		return;
	}
	struct xp_counters cnt;
	if (server_prog_read(s->rp, c->slot, &cnt)) {
		send_error(c, "cannot read the XDP counters");
		return;
	}
	double wall = xp_now() - c->t_start;
	double cpu = xp_cpu_seconds() - c->cpu_start;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string(reply));
	json_object_object_add(o, "counters", xp_counters_to_json(&cnt));
	json_object_object_add(o, "cpu_percent", json_object_new_double(wall > 0 ? 100.0 * cpu / wall : 0));
	if (c->ss)
		json_object_object_add(o, "sockets", sock_stats_json(c));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
}

static void on_message(struct server *s, struct srv_client *c, struct json_object *m)
{
	const char *op = xp_json_str(m, "op", "");
	c->last_msg = xp_now();
	if (!strcmp(op, "start")) {
		on_start(s, c, m);
	} else if (!strcmp(op, "sample")) {
		on_counters(s, c, "sample");
	} else if (!strcmp(op, "stop")) {
		bool had = c->slot >= 0;
		on_counters(s, c, "result");
		drop_client(s, c, had ? "test done" : NULL);
	} else {
		char e[96];
		snprintf(e, sizeof(e), "unknown request '%.40s'", op);
		send_error(c, e);
	}
}

static void on_accept(struct server *s)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	struct srv_client *c = NULL;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (!s->cl[i].used) {
			c = &s->cl[i];
			break;
		}
	if (!c) {
		struct xp_ctrl tmp;
		xp_ctrl_init(&tmp, fd);
		struct srv_client fake = { .ctrl = tmp };
		send_error(&fake, "server busy: too many control connections");
		close(fd);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	memset(c, 0, sizeof(*c));
	c->used = true;
	c->slot = -1;
	xp_ctrl_init(&c->ctrl, fd);
	xp_addr_from_sockaddr((struct sockaddr *)&ss, &c->peer, NULL);
	xp_addr_str(&c->peer, c->peer_s, sizeof(c->peer_s));
	c->last_msg = xp_now();
	c->idle_limit = 30;
}

int xp_server_run(const struct xp_opts *o)
{
	struct server s = { .o = o, .lfd = -1 };
	char err[256];

	if (xp_check_privileges(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	if (o->dev[0]) {
		struct xp_netdev l;
		if (xp_netdev_by_name(o->dev, &l)) {
			fprintf(stderr, "xdpperf: interface %s does not exist\n", o->dev);
			return 1;
		}
	}
	if (server_prog_open(&s.rp, o->control_port, true, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		return 1;
	}
	s.lfd = listen_on(o->control_port, err, sizeof(err));
	if (s.lfd < 0) {
		fprintf(stderr, "xdpperf: %s\n", err);
		server_prog_close(s.rp);
		return 1;
	}
	if (o->engine == XP_ENGINE_SOCKET) {
		struct xp_sock_server_cfg cfg = { .port_lo = o->port_lo, .port_hi = o->port_hi, .threads = o->threads,
						  .max_conns = o->parallel, .debug = o->debug };
		if (xp_sock_server_start(&cfg, &s.listeners, err, sizeof(err))) {
			fprintf(stderr, "xdpperf: %s\n", err);
			close(s.lfd);
			server_prog_close(s.rp);
			return 1;
		}
		/* Not "up to -P": -P only plans open files; the listeners accept what fits. */
		unsigned long room = xp_sock_server_capacity(s.listeners);
		if (o->parallel)
			printf("xdpperf server listening for TCP tests on ports %u:%u, planned for -P %lu connections "
			       "(room for about %lu)\n", o->port_lo, o->port_hi, o->parallel, room);
		else
			printf("xdpperf server listening for TCP tests on ports %u:%u, room for about %lu connections "
			       "(the open-file limit; -P N plans for more)\n", o->port_lo, o->port_hi, room);
	}
	xp_install_signals();
	printf("xdpperf server listening on control port %u\n", o->control_port);
	fflush(stdout);

	while (!xp_signalled) {
		struct pollfd pf[MAX_CLIENTS + 1];
		int map[MAX_CLIENTS + 1];
		int n = 0;
		pf[n] = (struct pollfd){ .fd = s.lfd, .events = POLLIN };
		map[n++] = -1;
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (s.cl[i].used) {
				pf[n] = (struct pollfd){ .fd = s.cl[i].ctrl.fd, .events = POLLIN };
				map[n++] = i;
			}
		int r = poll(pf, (nfds_t)n, 1000);
		if (r < 0 && errno != EINTR)
			break;
		double now = xp_now();
		for (int k = 0; k < n && r > 0; k++) {
			if (!pf[k].revents)
				continue;
			if (map[k] < 0) {
				on_accept(&s);
				continue;
			}
			struct srv_client *c = &s.cl[map[k]];
			struct json_object *m;
			int got;
			while (c->used && (got = xp_ctrl_poll_recv(&c->ctrl, &m)) == 1) {
				on_message(&s, c, m);
				json_object_put(m);
			}
			if (c->used && got != -EAGAIN)
				drop_client(&s, c, got == 0 ? (c->slot >= 0 ? "client went away mid-test" : NULL)
							    : "bad message from client, closing");
		}
		for (int i = 0; i < MAX_CLIENTS; i++) {
			struct srv_client *c = &s.cl[i];
			if (c->used && now - c->last_msg > c->idle_limit)
				drop_client(&s, c, "client silent too long, closing");
		}
		if (o->one_off && s.tests_done > 0)
			break;
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (s.cl[i].used)
			drop_client(&s, &s.cl[i], xp_signalled ? "server stopping" : NULL);
	close(s.lfd);
	if (s.listeners)
		xp_sock_server_stop(s.listeners);
	server_prog_close(s.rp);
	if (xp_signalled)
		printf("xdpperf server stopped\n");
	return 0;
}
