/*
 * Server role: a single-threaded event loop over the control connections.
 * Each test gets its own slot in the XDP program's maps (its port range and
 * counters), so several clients can test at once; the program is attached
 * to each client-facing interface while at least one test uses it.
 *
 * Anyone who reaches the control port can talk to it, so nothing a client
 * does may hold the loop or outlive its limits: replies are queued, never
 * waited for (a client that does not read is dropped); each client gets a
 * few messages per round; every connection has a hard deadline that no
 * message moves (the start of a test, its duration plus a margin); TCP
 * keepalive and TCP_USER_TIMEOUT notice a client that vanished; listeners
 * are opened and closed by another thread (sockjobs.c). Who may connect
 * (--allow, caps per /24 and /64) and what a test may ask (policy.c: its
 * bind addresses too) are checked before anything is attached; with
 * --auth-key every start answers a challenge of its own (proto/auth.h).
 * Reverse senders are reaped through pidfds in the poll set, never waited
 * for; out of files, the listener rests instead of spinning; churn.c keeps
 * starts and stops from making the XDP program come and go.
 */
#include <errno.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/netdev.h"
#include "server/server.h"
#include "server/state.h"
#include "util/privdrop.h"
#include "report/metrics.h"
#include "util/process.h"
#include "util/time.h"

/* A vanished client (cable pulled, host gone) is noticed within about 30 s. */
#define KEEPIDLE 10
#define KEEPINTVL 5
#define KEEPCNT 4
#define USER_TIMEOUT_MS 30000

/* --bind-control: one address, its own family only (an IPv6 one without IPv4-mapped clients). */
static int listen_one(const struct xp_addr *a, unsigned short port, char *err, size_t errlen)
{
	int one = 1;
	struct sockaddr_storage ss;
	char as[64];
	size_t sl = xp_addr_to_sockaddr(a, port, &ss);
	xp_addr_str(a, as, sizeof(as));
	int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (a->family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&ss, (socklen_t)sl) == 0 && listen(fd, 64) == 0)
			return fd;
	}
	int e = errno;
	snprintf(err, errlen, "cannot listen on %s control port %u: %s%s", as, port, strerror(e),
		 e == EADDRNOTAVAIL ? " (--bind-control must be an address of this host)"
		 : e == EADDRINUSE ? " (another server running? pick --control-port)" : "");
	if (fd >= 0)
		close(fd);
	return -e;
}

static int listen_on(const struct xp_addr *only, unsigned short port, char *err, size_t errlen)
{
	if (only->family)
		return listen_one(only, port, err, errlen);
	int one = 1, zero = 0;
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = in6addr_any };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0) {
		/* One dual-stack socket serves IPv4 and IPv6 clients. */
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		if (bind(fd, (struct sockaddr *)&a6, sizeof(a6)) == 0 && listen(fd, 64) == 0)
			return fd;
		close(fd);
	}
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(port) };
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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

/* ---- authentication (--auth-key) ------------------------------------------ */

static void on_challenge(struct server *s, struct srv_client *c)
{
	if (!s->key.set) {
		srv_reject(s, c, "this server has no --auth-key: run the client without it", NULL);
		return;
	}
	if (c->nonce[0] || xp_auth_nonce(c->nonce)) {
		srv_reject(s, c, "authentication failed", "refused: authentication failed (second challenge)");
		return;
	}
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("challenge"));
	json_object_object_add(o, "nonce", json_object_new_string(c->nonce));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
}

static void on_auth(struct server *s, struct srv_client *c, struct json_object *m)
{
	const char *mac = xp_json_str(m, "mac", "");
	if (!s->key.set || !c->nonce[0] || c->mac[0] || strlen(mac) != XP_AUTH_HEX_LEN) {
		srv_reject(s, c, "authentication failed", "refused: authentication failed (bad answer)");
		return;
	}
	memcpy(c->mac, mac, sizeof(c->mac));
	/* The MAC covers the next line byte for byte: keep its raw copy. */
	c->ctrl.keep_line = true;
}

/*
 * With a key, every start (and --bidir's reverse request) carries its own
 * MAC over a fresh nonce, not only the connection's first: a start that was
 * authenticated but refused (a port, a limit) must not let a second one in
 * unsigned. Samples and the stop need an authenticated start before them.
 */
static bool authorized(struct server *s, struct srv_client *c, const char *op)
{
	if (!s->key.set)
		return true;
	/* "ports" reserves a range for a start to come: as much a start as the start itself. */
	bool starts = !strcmp(op, "start") || !strcmp(op, "reverse") || !strcmp(op, "ports") || !strcmp(op, "send");
	if (!starts && c->authed)
		return true;
	if (!starts || !c->mac[0]) {
		srv_reject(s, c, "authentication required: this server has --auth-key; give the client the same key",
		       "refused: not authenticated");
		return false;
	}
	if (!c->ctrl.line || !xp_auth_verify(&s->key, c->nonce, c->ctrl.line, c->ctrl.line_len, c->mac)) {
		srv_reject(s, c, "authentication failed: the client's --auth-key is not the server's",
		       "refused: authentication failed (wrong key)");
		return false;
	}
	c->authed = true;
	/* Used up: the next start asks for a new challenge and answers it. */
	c->nonce[0] = c->mac[0] = '\0';
	c->ctrl.keep_line = false;
	return true;
}

/* ---- messages ------------------------------------------------------------- */

static void on_message(struct server *s, struct srv_client *c, struct json_object *m)
{
	const char *op = xp_json_str(m, "op", "");
	if (!strcmp(op, "challenge")) {
		on_challenge(s, c);
		return;
	}
	if (!strcmp(op, "auth")) {
		on_auth(s, c, m);
		return;
	}
	/* The OTG controller's clock offset exchange: our clock's time, nothing else (send_op.c). */
	if (!strcmp(op, "time")) {
		srv_on_time(s, c);
		return;
	}
	if (!authorized(s, c, op))
		return;
	if (!strcmp(op, "start")) {
		srv_on_start(s, c, m);
	} else if (!strcmp(op, "reverse")) {
		srv_on_reverse(s, c, m);
	} else if (!strcmp(op, "send")) {
		srv_on_send(s, c, m);
	} else if (!strcmp(op, "ports")) {
		srv_on_ports(s, c, m);
	} else if (!strcmp(op, "sample")) {
		srv_on_counters(s, c, "sample", m);
	} else if (!strcmp(op, "stop")) {
		bool had = c->state == SRV_RUNNING;
		srv_on_counters(s, c, "result", m);
		srv_drop(s, c, had ? "test done" : NULL);
	} else {
		char e[96];
		snprintf(e, sizeof(e), "unknown request '%.40s'", op);
		srv_refuse(s, c, e, NULL);
	}
}

/* ---- connections ---------------------------------------------------------- */

/* Control connections from blk (a peer's /24 or /64, policy.h): one host
 * often has a whole /64, so counting exact addresses would not cap it. */
static unsigned from_block(struct server *s, const struct xp_cidr *blk)
{
	unsigned n = 0;
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
		if (s->cl[i].state != SRV_FREE && xp_cidr_contains(&blk->net, blk->plen, &s->cl[i].peer))
			n++;
	return n;
}

/* Refuse a connection we keep no state for: one line if the socket takes it, then close. */
static void refuse_at_once(int fd, const char *peer, const char *msg, const char *log)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("error"));
	json_object_object_add(o, "msg", json_object_new_string(msg));
	const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	char buf[XP_CTRL_MAX_MSG];
	int n = snprintf(buf, sizeof(buf), "%s\n", line);
	if (send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* a fresh socket's buffer takes one line; if not, the close says enough */
	}
	json_object_put(o);
	shutdown(fd, SHUT_WR);
	/* Unread input would turn the close into a RST; what already came is read and dropped. */
	for (int k = 0; k < 4 && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0; k++)
		;
	close(fd);
	printf("[%s] %s\n", peer, log);
	fflush(stdout);
}

static void set_keepalive(int fd)
{
	int one = 1, idle = KEEPIDLE, intvl = KEEPINTVL, cnt = KEEPCNT;
	unsigned ut = USER_TIMEOUT_MS;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
}

static void on_accept(struct server *s)
{
	const struct xp_server_cfg *cfg = s->cfg;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		/* Out of files (or memory): the connection stays queued and poll
		 * reports it again at once. Not polling the listener for a moment
		 * keeps the loop from spinning; the others are served meanwhile. */
		if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
			s->accept_paused_until = xp_now() + XP_SRV_ACCEPT_PAUSE;
			if (!s->accept_failing) {
				printf("cannot accept control connections: %s; trying again every %g s\n", strerror(e),
				       XP_SRV_ACCEPT_PAUSE);
				fflush(stdout);
			}
			s->accept_failing = true;
		}
		return;
	}
	if (s->accept_failing) {
		printf("accepting control connections again\n");
		fflush(stdout);
		s->accept_failing = false;
	}
	struct xp_addr peer;
	char peer_s[64], msg[160];
	xp_addr_from_sockaddr((struct sockaddr *)&ss, &peer, NULL);
	xp_addr_str(&peer, peer_s, sizeof(peer_s));
	if (!xp_policy_peer_allowed(cfg, &peer)) {
		snprintf(msg, sizeof(msg), "address %s is not allowed on this server (--allow)", peer_s);
		refuse_at_once(fd, peer_s, msg, "refused: not in --allow");
		return;
	}
	struct xp_cidr blk;
	xp_policy_addr_block(&peer, &blk);
	if (from_block(s, &blk) >= cfg->max_control_per_addr) {
		char bs[64];
		xp_addr_str(&blk.net, bs, sizeof(bs));
		snprintf(msg, sizeof(msg), "too many control connections from %s/%u (the server allows %u per /%u, "
			 "--max-control-per-addr)", bs, blk.plen, cfg->max_control_per_addr, blk.plen);
		refuse_at_once(fd, peer_s, msg, "refused: too many control connections from this address's block");
		return;
	}
	struct srv_client *c = NULL;
	for (int i = 0; i < XP_SRV_MAX_CLIENTS && !c; i++)
		if (s->cl[i].state == SRV_FREE)
			c = &s->cl[i];
	if (!c) {
		refuse_at_once(fd, peer_s, "server busy: too many control connections", "refused: server busy");
		return;
	}
	set_keepalive(fd);
	memset(c, 0, sizeof(*c));
	c->state = SRV_IDLE;
	c->slot = -1;
	c->rev_fd = -1;
	xp_ctrl_init_queued(&c->ctrl, fd, XP_SRV_OUT_LIMIT);
	c->peer = peer;
	memcpy(c->peer_s, peer_s, sizeof(c->peer_s));
	/* Start a test within this, or go: sending junk does not buy time. */
	c->deadline = xp_now() + XP_SRV_PRETEST_TIME;
}

/* Input from one client: a few messages, then the others get their turn. */
static void on_readable(struct server *s, struct srv_client *c)
{
	if (c->state == SRV_DRAINING) {
		char junk[4096];
		ssize_t n = recv(c->ctrl.fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			srv_drop(s, c, NULL);
		return;
	}
	if (c->state == SRV_REVERSE) {
		/* The client waits for the reply and sends nothing: input is its leaving. */
		char junk[512];
		ssize_t n = recv(c->ctrl.fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (c->rev_send && n == 0) {
			/* An OTG controller's stop: its half-close; the figures go back on the other half. */
			srv_send_stop(s, c);
			return;
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			srv_drop(s, c, "client went away mid-trial: its reverse sender stopped");
		else if (n > 0)
			srv_reject(s, c, "nothing may be sent during a reverse trial", "sent during its reverse trial, ended");
		return;
	}
	struct json_object *m;
	int got = -EAGAIN;
	for (int k = 0; k < XP_SRV_MSGS_PER_ROUND && (c->state == SRV_IDLE || c->state == SRV_RUNNING); k++) {
		got = xp_ctrl_poll_recv(&c->ctrl, &m);
		if (got != 1)
			break;
		on_message(s, c, m);
		json_object_put(m);
		got = -EAGAIN;
	}
	if (c->state == SRV_FREE || c->state == SRV_DRAINING || c->state == SRV_STARTING)
		return;
	if (got == 0)
		srv_drop(s, c, c->state == SRV_RUNNING ? "client went away mid-test" : NULL);
	else if (got == -EPROTO)
		srv_reject(s, c, "bad message (one JSON object per line, at most 64 KiB)", "bad message from client, closing");
	else if (got != -EAGAIN && got != -EINTR)
		srv_drop(s, c, c->state == SRV_RUNNING ? "control connection lost mid-test" : NULL);
}

static void on_deadline(struct server *s, struct srv_client *c)
{
	switch (c->state) {
	case SRV_DRAINING:
		srv_drop(s, c, NULL);
		break;
	case SRV_RUNNING:
		srv_reject(s, c, "test ran past its duration; the server ended it", "test ran past its duration, ended");
		break;
	case SRV_IDLE:
		srv_reject(s, c, "no test started in time; closing", "no test started in time, closing");
		break;
	case SRV_REVERSE:
		srv_reject(s, c, "the reverse trial ran past its length; the server ended it",
		       "reverse trial ran past its length, ended");
		break;
	default:
		break; /* STARTING: the listener thread's answer comes first */
	}
}

/*
 * After setup (issue 28 point 13): the XDP program is loaded and the control
 * port open, so from here on the server keeps only what its tests need
 * (util/privdrop.c says which and why; docs/privileges.md). Before any
 * thread starts (the listener thread, the socket engine's workers): each
 * thread has its own capabilities, and new ones inherit the caller's.
 */
static int drop_privileges(const struct xp_server_cfg *cfg, char *err, size_t errlen)
{
	/* Socket tests raise their open-file limit; the hard limit goes up now,
	 * while we may (CAP_SYS_RESOURCE), so that they need only the soft one. */
	struct rlimit rl;
	unsigned long nr_open = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "re");
	if (f) {
		if (fscanf(f, "%lu", &nr_open) != 1)
			nr_open = 0;
		fclose(f);
	}
	if (nr_open && !getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_max < nr_open) {
		rl.rlim_max = nr_open;
		setrlimit(RLIMIT_NOFILE, &rl); /* without CAP_SYS_RESOURCE it stays: tests say so when they need it */
	}
	unsigned lowest = cfg->test_port_lo;
	if (cfg->standing && cfg->port_lo < lowest)
		lowest = cfg->port_lo;
	uint64_t kept;
	int r = xp_caps_drop_to(xp_server_caps(lowest, xp_unpriv_port_start()), &kept, err, errlen);
	if (r)
		return r;
	char names[512];
	xp_caps_names(kept, names, sizeof(names));
	printf("xdpperf server keeps the capabilities %s and no others (docs/privileges.md)\n", *names ? names : "(none)");
	return 0;
}

static int serve(struct server *s)
{
	const struct xp_server_cfg *cfg = s->cfg;
	while (!xp_signalled) {
		struct pollfd pf[2 * XP_SRV_MAX_CLIENTS + 2 + XP_SRV_MAX_CHILDREN];
		/* -1 listener, -2 jobs, -3 - i client i's reverse sender, i client i, SRV_MAP_CHILD an ended child */
		int map[2 * XP_SRV_MAX_CLIENTS + 2 + XP_SRV_MAX_CHILDREN];
		int n = 0;
		double now = xp_now(), next = now + 1;
		/* A negative fd: poll skips it (the listener while accept4 is out of files). */
		bool paused = now < s->accept_paused_until;
		pf[n] = (struct pollfd){ .fd = paused ? -1 : s->lfd, .events = POLLIN };
		map[n++] = -1;
		if (paused)
			next = s->accept_paused_until;
		pf[n] = (struct pollfd){ .fd = xp_sockjobs_fd(s->jobs), .events = POLLIN };
		map[n++] = -2;
		n += srv_children_poll(s, pf + n, map + n, &next);
		srv_xdp_linger_expire(s, false, &next); /* wakes for the next one due */
		bool more = false; /* a client has complete lines buffered: no waiting this round */
		for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
			struct srv_client *c = &s->cl[i];
			/* A starting test's input waits for the listener thread (poll would
			 * also report its hangup over and over). */
			if (c->state == SRV_FREE || c->state == SRV_STARTING)
				continue;
			/* A stopping sender's controller half-closed: its end of input is no news until the figures. */
			short ev = c->send_stopping ? 0 : POLLIN;
			if (xp_ctrl_pending(&c->ctrl))
				ev |= POLLOUT;
			pf[n] = (struct pollfd){ .fd = c->ctrl.fd, .events = ev };
			map[n++] = i;
			if (c->deadline < next)
				next = c->deadline;
			more |= c->state != SRV_DRAINING && c->state != SRV_REVERSE && xp_ctrl_has_line(&c->ctrl);
			if (c->state == SRV_REVERSE && c->rev_fd >= 0) {
				pf[n] = (struct pollfd){ .fd = c->rev_fd, .events = POLLIN };
				map[n++] = -3 - i;
			}
		}
		int wait = more ? 0 : next > now ? (int)((next - now) * 1000) + 1 : 0;
		int r = poll(pf, (nfds_t)n, wait);
		if (r < 0 && errno != EINTR)
			return 1;
		for (int k = 0; k < n && (r > 0 || more); k++) {
			if (!pf[k].revents && !(map[k] >= 0 && s->cl[map[k]].state != SRV_REVERSE &&
						xp_ctrl_has_line(&s->cl[map[k]].ctrl)))
				continue;
			if (map[k] == -1) {
				on_accept(s);
				continue;
			}
			if (map[k] == -2) {
				srv_on_jobs(s);
				continue;
			}
			if (map[k] == SRV_MAP_CHILD)
				continue; /* srv_children_reap below */
			if (map[k] <= -3) {
				struct srv_client *c = &s->cl[-3 - map[k]];
				if (c->state == SRV_REVERSE && c->rev_fd == pf[k].fd) {
					if (c->rev_send)
						srv_send_read(s, c);
					else
						srv_reverse_read(s, c);
				}
				continue;
			}
			struct srv_client *c = &s->cl[map[k]];
			if (c->state == SRV_FREE || c->ctrl.fd != pf[k].fd)
				continue;
			if ((pf[k].revents & POLLOUT) && xp_ctrl_flush(&c->ctrl)) {
				srv_drop(s, c, c->state == SRV_RUNNING ? "control connection lost mid-test" : NULL);
				continue;
			}
			if ((pf[k].revents & (POLLIN | POLLHUP | POLLERR)) || xp_ctrl_has_line(&c->ctrl))
				on_readable(s, c);
		}
		now = xp_now();
		for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
			struct srv_client *c = &s->cl[i];
			if (c->state != SRV_FREE && now >= c->deadline)
				on_deadline(s, c);
		}
		srv_children_reap(s, false);
		srv_xdp_linger_expire(s, false, NULL);
		if (cfg->one_off && s->tests_done > 0)
			break;
	}
	return 0;
}

int xp_server_run(const struct xp_server_cfg *cfg)
{
	struct server *s = calloc(1, sizeof(*s));
	char err[512];
	int rc = 1;

	if (!s) {
		fprintf(stderr, "xdpperf: out of memory\n");
		return 1;
	}
	s->cfg = cfg;
	s->lfd = -1;
	if (cfg->auth_key && xp_auth_key_load(cfg->auth_key, &s->key, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		free(s);
		return 2;
	}
	if (xp_check_privileges(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		goto out;
	}
	if (cfg->dev[0]) {
		struct xp_netdev l;
		if (xp_netdev_by_name(cfg->dev, &l)) {
			fprintf(stderr, "xdpperf: interface %s does not exist\n", cfg->dev);
			goto out;
		}
	}
	if (server_prog_open(&s->rp, cfg->control_port, true, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		goto out;
	}
	s->lfd = listen_on(&cfg->bind_control, cfg->control_port, err, sizeof(err));
	if (s->lfd < 0) {
		fprintf(stderr, "xdpperf: %s\n", err);
		goto out;
	}
	if (drop_privileges(cfg, err, sizeof(err)) || xp_metrics_run(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		goto out;
	}
	if (cfg->standing) {
		struct xp_sock_server_cfg lc = { .port_lo = cfg->port_lo, .port_hi = cfg->port_hi, .threads = cfg->threads,
						 .max_conns = cfg->parallel, .debug = cfg->debug };
		if (xp_sock_server_start(&lc, &s->listeners, err, sizeof(err))) {
			fprintf(stderr, "xdpperf: %s\n", err);
			goto out;
		}
		/* Not "up to -P": -P only plans open files; the listeners accept what fits. */
		unsigned long room = xp_sock_server_capacity(s->listeners);
		if (cfg->parallel)
			printf("xdpperf server listening for TCP tests on ports %u:%u, planned for -P %lu connections "
			       "(room for about %lu)\n", cfg->port_lo, cfg->port_hi, cfg->parallel, room);
		else
			printf("xdpperf server listening for TCP tests on ports %u:%u, room for about %lu connections "
			       "(the open-file limit; -P N plans for more)\n", cfg->port_lo, cfg->port_hi, room);
	}
	/* After the standing listeners: the limit they raised is the one to come back to. */
	if (xp_sockjobs_start(&s->jobs, cfg->max_workers_total, err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		goto out;
	}
	xp_install_signals();
	char bc[64] = "";
	if (cfg->bind_control.family)
		xp_addr_str(&cfg->bind_control, bc, sizeof(bc));
	printf("xdpperf server listening on control port %u%s%s%s\n", cfg->control_port, bc[0] ? " of " : "", bc,
	       s->key.set ? " (clients must authenticate: --auth-key)" : "");
	fflush(stdout);

	rc = serve(s);
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
		if (s->cl[i].state != SRV_FREE)
			srv_drop(s, &s->cl[i], xp_signalled && s->cl[i].state == SRV_RUNNING ? "server stopping" : NULL);
	srv_children_reap(s, true);
	srv_xdp_linger_expire(s, true, NULL);
	if (xp_signalled)
		printf("xdpperf server stopped\n");
out:
	xp_sockjobs_stop(s->jobs); /* closes what is still queued */
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->listeners)
		xp_sock_server_stop(s->listeners);
	if (s->rp)
		server_prog_close(s->rp);
	xp_auth_key_clear(&s->key);
	free(s);
	return rc;
}
