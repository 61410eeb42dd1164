/*
 * libFuzzer harness: the server's control path as a hostile client drives it
 * (issue 28 point 10). Sequences of control lines, over one or several
 * connections, go through the server's own event loop: serve() of
 * user/server/server.c (this file includes it, to reach its static loop and
 * handlers; nothing is copied), which accepts on a real listening socket,
 * reads with the channel code (proto/channel.c), runs the authentication
 * state machine (--auth-key's challenge and answer, proto/auth.c), and
 * dispatches to session.c (start, sample, stop, limits, policy.c), churn.c
 * (linger, start rate), measure.c, reverse.c (--bidir's reverse trial,
 * its child reaped through pidfds, children.c) and conn.c (refusals, drops,
 * a test's release).
 *
 * Each serve() call runs one round of the loop: -1 (cfg->one_off) with
 * tests_done set makes it return after its round, and the harness calls it
 * only when its poll will not wait (something is ready, or a deadline is
 * due), so an input runs in microseconds, not in the loop's real time.
 *
 * What is stubbed, and why (link-time stubs below, no seam in the server):
 * the XDP/TC loader (loader/server_prog*.c: no BPF load or attach in a
 * fuzzer) and the socket engine's listeners (server/listeners.c: no
 * threads and ports per test). The stubs keep the books a real loader keeps
 * and check the server against them: a slot is claimed only on an interface
 * the counting program is attached to, nothing is freed or detached twice,
 * and when the server has stopped every slot is free and every attach
 * undone. The one seam is reverse.c's srv_reverse_spawn: under the fuzzer
 * /proc/self/exe is the fuzzer, so a stand-in child is forked instead; it is
 * a real process (waitpid, pidfds and signals are real) that writes what the
 * input says. Route and interface lookups, the ephemeral range, sock_diag's
 * port check and the clock are real: the harness runs in a network
 * namespace of its own (as root, or in a user namespace), where the
 * loopback device carries every connection (127.0.N.M sources give the
 * /24 blocks, ::1 the IPv6 one).
 *
 * Input: lines. A line that starts with '>' is a directive (below); any
 * other is sent, with its newline, on the current connection; consecutive
 * lines go in one write (pipelined), a directive ends the batch and lets
 * the loop run until nothing is ready. A last line without a newline is sent
 * without one.
 *   >o HH [HH]  server options (the input's first line, else all 0):
 *               byte 1: bit 0 --auth-key, 1 standing listeners (-P on
 *               63000:63015), 2-3 --max-tests 8 (the default)/1/2/64, 4-5
 *               --max-control-per-addr 4 (the default)/1/2/64, 6 --allow 127.0.0.0/24
 *               (plus --allow-bind 127.0.9.0/24), 7 no --allow-lo;
 *               byte 2: bit 0 --dev lo, 1 --dev of no interface, 2
 *               --max-duration 5, 3 --max-parallel 10 and -total 20, 4
 *               --max-listen-ports 4, 5 --max-workers-total 0
 *   >c N [A]    connection N (0-127), connected now if it is not, from
 *               address A: 0 127.0.0.1, 1 127.0.0.2, 2 127.0.1.1,
 *               3 127.0.2.N, 4 127.0.(N+16).1, 5 ::1 (the first use of a
 *               connection: 0)
 *   >C N [A]    the same, without a loop round first: what was sent on the
 *               last connection and what is sent on this one meet in one round
 *   >A          the next line is signed: an "auth" line with the MAC, over
 *               that line, for the nonce of the last challenge this
 *               connection got (answers it as the client does)
 *   >x  >h  >r  close, shut down for writing, reset (SO_LINGER 0) the connection
 *   >n          stop reading the replies on this connection (its buffer is small)
 *   >t          time passes: every deadline and every child's grace is due
 *   >f HH       loader faults: bit 0 XDP attach, 1 TC attach, 2 slot, 3
 *               counters, 4 stamps, 5 listeners, 6 reverse spawn, 7 NIC
 *               times on and the latency ring's -ENOENT
 *   >k N        what the next reverse child does: 0 its figures, exit 0;
 *               1 a failure's figures, exit 2; 2 garbage, exit 3; 3 nothing,
 *               exit 1; 4 hangs; 5 writes 70 KiB; 6 stops itself (SIGSTOP);
 *               7 dies by SIGKILL
 *   >* N        the next line N times (in one batch, at most 64 KiB more than the input)
 *   >           just run the loop
 *
 * Promises checked (a broken one aborts, a crash to libFuzzer), besides
 * ASan, UBSan and LeakSanitizer: every line the server sends is one JSON
 * object with a known "op"; the loader's books above; no client counts as
 * running a test without a slot; the tests running never exceed
 * --max-tests; each round leaves the server's clients in states the loop
 * serves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/server.c"
#include "proto/send_msg.h"

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

/* ---- the loader stub ------------------------------------------------------- */

#define STUB_SLOTS 64
#define STUB_IFS 64

enum { F_ATTACH = 1, F_TC = 2, F_SLOT = 4, F_READ = 8, F_MEAS = 16, F_LISTEN = 32, F_SPAWN = 64, F_HWTS = 128 };
static unsigned faults; /* read by the listener thread too (xp_sock_server_start) */

static struct {
	int xdp_refs[STUB_IFS], tc_refs[STUB_IFS];
	bool hwts_if[STUB_IFS]; /* chosen at an interface's first attach, as the real loader does */
	bool hwts_next;
	bool used[STUB_SLOTS];
	int slot_if[STUB_SLOTS];
	bool slot_tc[STUB_SLOTS];
	bool meas[STUB_SLOTS];
} L;

struct server_prog {
	int dummy;
};
static struct server_prog the_prog;

static unsigned get_faults(void)
{
	return __atomic_load_n(&faults, __ATOMIC_RELAXED);
}

static int ifx(int ifindex)
{
	PROMISE(ifindex > 0 && ifindex < STUB_IFS);
	return ifindex;
}

int server_prog_open(struct server_prog **out, uint16_t ctrl_port, bool reply_redirect, char *err, size_t errlen)
{
	*out = &the_prog;
	return 0;
}

void server_prog_close(struct server_prog *rp)
{
}

int server_prog_attach(struct server_prog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used, char *err,
		       size_t errlen)
{
	int i = ifx(ifindex);
	if (get_faults() & F_ATTACH) {
		snprintf(err, errlen, "cannot attach XDP to interface %d: stub refuses", ifindex);
		return -EOPNOTSUPP;
	}
	if (!L.xdp_refs[i]++)
		L.hwts_if[i] = L.hwts_next;
	*mode_used = "native";
	return 0;
}

void server_prog_detach(struct server_prog *rp, int ifindex)
{
	int i = ifx(ifindex);
	PROMISE(L.xdp_refs[i] > 0);
	L.xdp_refs[i]--;
}

int server_prog_attach_tc(struct server_prog *rp, int ifindex, const char **how, char *err, size_t errlen)
{
	int i = ifx(ifindex);
	if (get_faults() & F_TC) {
		snprintf(err, errlen, "cannot attach TC to interface %d: stub refuses", ifindex);
		return -EOPNOTSUPP;
	}
	L.tc_refs[i]++;
	*how = "tcx";
	return 0;
}

void server_prog_detach_tc(struct server_prog *rp, int ifindex)
{
	int i = ifx(ifindex);
	PROMISE(L.tc_refs[i] > 0);
	L.tc_refs[i]--;
}

void server_prog_set_hwts(struct server_prog *rp, bool on)
{
	L.hwts_next = on && (get_faults() & F_HWTS);
}

bool server_prog_hwts_on(struct server_prog *rp, int ifindex, const char **why)
{
	int i = ifx(ifindex);
	if (L.xdp_refs[i] && L.hwts_if[i])
		return true;
	if (why)
		*why = "the stub's driver gives no receive times";
	return false;
}

int server_prog_slot_alloc(struct server_prog *rp, uint16_t lo, uint16_t hi, uint32_t protos, uint32_t flags,
			   uint32_t close_mode, int ifindex, const struct xp_addr *client, const struct xp_addr *bind,
			   unsigned nbind, char *err, size_t errlen)
{
	int i = ifx(ifindex);
	bool tc = flags & XP_SLOT_TC;
	/* The counting program is on the interface before a slot is claimed there. */
	PROMISE(tc ? L.tc_refs[i] > 0 : L.xdp_refs[i] > 0);
	PROMISE(lo && lo <= hi && nbind <= XP_SLOT_MAX_PEERS);
	PROMISE(client->family == AF_INET || client->family == AF_INET6);
	/* (A bind address may be of the other family than the control connection's: an IPv6 test's
	 * sources from an IPv4 client, if --allow or --allow-bind lets them in; the slot keeps each.) */
	for (unsigned k = 0; k < nbind; k++)
		PROMISE(bind[k].family == AF_INET || bind[k].family == AF_INET6);
	if (get_faults() & F_SLOT) {
		snprintf(err, errlen, "no free slot: stub refuses");
		return -ENOSPC;
	}
	for (int s = 0; s < STUB_SLOTS; s++)
		if (!L.used[s]) {
			L.used[s] = true;
			L.slot_if[s] = i;
			L.slot_tc[s] = tc;
			L.meas[s] = false;
			return s;
		}
	snprintf(err, errlen, "no free slot");
	return -ENOSPC;
}

static void slot_ok(int slot)
{
	PROMISE(slot >= 0 && slot < STUB_SLOTS && L.used[slot]);
}

void server_prog_slot_free(struct server_prog *rp, int slot)
{
	slot_ok(slot);
	L.used[slot] = false;
}

int server_prog_read(struct server_prog *rp, int slot, struct xp_counters *sum)
{
	slot_ok(slot);
	if (get_faults() & F_READ)
		return -EIO;
	memset(sum, 0, sizeof(*sum));
	sum->pkts = 1000 + (uint64_t)slot;
	sum->bytes = 64000;
	sum->data_pkts = 1000;
	return 0;
}

int server_prog_meas_start(struct server_prog *rp, int slot, const struct xp_slot_meas *m)
{
	slot_ok(slot);
	PROMISE(m->ival > 0);
	if (get_faults() & F_MEAS)
		return -EOPNOTSUPP;
	L.meas[slot] = true;
	return 0;
}

/* A test with flows (issue 26): its streams mapped to flow entries; the
 * entries' figures as the real program's after ten frames each. */
int server_prog_meas_start_flows(struct server_prog *rp, int slot, const struct xp_slot_meas *m,
				 const __u32 *stream_entry)
{
	PROMISE(stream_entry != NULL);
	return server_prog_meas_start(rp, slot, m);
}

/* Flows without stamps: the keys as the real loader checks them (mask, entries in range). */
int server_prog_flow_keys(struct server_prog *rp, int slot, __u32 mask, const struct xp_flow_key *keys,
			  const __u32 *entries, unsigned n)
{
	(void)rp;
	PROMISE(slot >= 0 && slot < XP_MAX_SLOTS && n <= XP_FLOW_ENTRIES && (!n || keys != NULL));
	if ((mask & ~(XP_KEY_FIELDS | XP_KEY_ON)) || (n && !(mask & XP_KEY_ON)))
		return -EINVAL;
	for (unsigned i = 0; i < n; i++)
		PROMISE(entries[i] < XP_FLOW_ENTRIES);
	return 0;
}

int server_prog_flow_keys_clear(struct server_prog *rp, int slot)
{
	(void)rp;
	PROMISE(slot >= 0 && slot < XP_MAX_SLOTS);
	return 0;
}

int server_prog_read_flow(struct server_prog *rp, unsigned entry, struct xp_flow_acct *sum)
{
	PROMISE(entry < 1024);
	memset(sum, 0, sizeof(*sum));
	sum->frames = sum->recv = sum->expected = 10;
	sum->bytes = 640;
	return 0;
}

int server_prog_meas_close(struct server_prog *rp, int slot, uint64_t upto)
{
	slot_ok(slot);
	PROMISE(L.meas[slot]);
	return 0;
}

int server_prog_read_ibin(struct server_prog *rp, int slot, uint64_t i, struct xp_lat_hist *h)
{
	slot_ok(slot);
	PROMISE(L.meas[slot]);
	if ((get_faults() & F_HWTS) && (i & 1))
		return -ENOENT;
	h->recv += 10;
	h->n += 10;
	h->sum += 10000;
	h->min = 900;
	h->max = 1100;
	h->b[3] += 10;
	return 0;
}

int server_prog_read_streams(struct server_prog *rp, int slot, struct xp_stream_figs *out, unsigned max)
{
	slot_ok(slot);
	PROMISE(max > 0);
	memset(out, 0, sizeof(*out));
	out->recv = 10;
	out->next_exp = 10;
	out->jitter_ns = 1000;
	return 1;
}

int server_prog_read_meas_stats(struct server_prog *rp, int slot, struct xp_meas_stats *sum)
{
	slot_ok(slot);
	memset(sum, 0, sizeof(*sum));
	sum->stamped = 10;
	sum->hw_timed = L.hwts_if[L.slot_if[slot]] ? 10 : 0;
	return 0;
}

/* ---- the listeners stub (socket tests' and -P's standing ones) -------------- */

struct xp_sock_server {
	struct xp_sock_server_stats st;
};
static int listener_sets; /* open now, over both threads */

int xp_sock_server_start(const struct xp_sock_server_cfg *c, struct xp_sock_server **out, char *err, size_t errlen)
{
	PROMISE(c->port_lo && c->port_lo <= c->port_hi);
	if (get_faults() & F_LISTEN) {
		snprintf(err, errlen, "cannot listen on TCP port %u: stub refuses", c->port_lo);
		return -1;
	}
	*out = calloc(1, sizeof(**out));
	PROMISE(*out);
	__atomic_add_fetch(&listener_sets, 1, __ATOMIC_RELAXED);
	return 0;
}

unsigned long xp_sock_server_capacity(const struct xp_sock_server *s)
{
	return 1000;
}

void xp_sock_server_read(struct xp_sock_server *s, struct xp_sock_server_stats *st)
{
	s->st.accepted += 2;
	s->st.closed += 1;
	s->st.bytes_rx += 4096;
	s->st.open_now = s->st.accepted - s->st.closed;
	*st = s->st;
}

unsigned xp_sock_server_procs(const struct xp_sock_server *s)
{
	return 1;
}

void xp_sock_server_stop(struct xp_sock_server *s)
{
	PROMISE(__atomic_sub_fetch(&listener_sets, 1, __ATOMIC_RELAXED) >= 0);
	free(s);
}

/* ---- the reverse sender's stand-in ----------------------------------------- */

static int child_mode;
static int kid_mode[XP_SRV_MAX_CLIENTS]; /* what the child of client i was told to do */
static char child_out[72 * 1024];

static const char res_ok[] = "{\"rc\":0,\"sent\":1000,\"received\":990,\"seconds\":1.0,\"target_pps\":1000.0,"
			     "\"offered_pps\":1000.0,\"short_of_target\":false,\"held_back_by\":\"\","
			     "\"kernel_sleeps\":false,\"max_catchup\":0,\"latency_why\":\"no stamps\"}\n";
static const char res_fail[] = "{\"rc\":2,\"error\":\"no route to the client\\u001b[31m\"}\n";

static int fake_spawn(const struct server *s, struct srv_client *c, const char *req, char *err, size_t errlen)
{
	/* What the child gets is what the server checked: a valid request of the connection's family. */
	struct json_object *j = json_tokener_parse(req);
	struct xp_reverse_req q;
	char e[512];
	if (c->rev_send) {
		/* An OTG controller's send (send_op.c): the request the server checked reads back as valid. */
		static struct xp_spec sp;
		uint64_t start_ns;
		PROMISE(j && !xp_send_req_from_json(j, &sp, &start_ns, e, sizeof(e)));
	} else {
		PROMISE(j && !xp_reverse_req_from_json(j, &q, e, sizeof(e)));
		PROMISE((q.family == AF_INET6) == (c->peer.family == AF_INET6));
	}
	json_object_put(j);
	if (get_faults() & F_SPAWN) {
		snprintf(err, errlen, "cannot start the reverse sender: stub refuses");
		return -1;
	}
	int mode = child_mode;
	size_t n = 0;
	kid_mode[c - s->cl] = mode;
	if (mode == 0)
		n = strlen(memcpy(child_out, res_ok, sizeof(res_ok)));
	else if (mode == 1)
		n = strlen(memcpy(child_out, res_fail, sizeof(res_fail)));
	else if (mode == 2)
		n = (size_t)snprintf(child_out, sizeof(child_out), "{\"rc\":0,\"sent\":-1}\ntrailing junk");
	else if (mode == 5)
		memset(child_out, 'x', n = sizeof(child_out));
	int p[2];
	if (pipe2(p, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls: the parent has threads. Nothing of the parent's kept open. */
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		if (p[1] != 3) {
			dup2(p[1], 3);
		}
		syscall(SYS_close_range, 4, ~0U, 0);
		for (size_t off = 0; off < n;) {
			ssize_t w = write(3, child_out + off, n - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		if (mode == 4)
			for (;;)
				pause();
		if (mode == 6)
			raise(SIGSTOP);
		if (mode == 7)
			raise(SIGKILL);
		_exit(mode == 0 ? 0 : mode == 1 ? 2 : mode == 2 ? 3 : 1);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	c->rev_pid = pid;
	c->rev_fd = p[0];
	return 0;
}

/* ---- the clients ------------------------------------------------------------ */

#define NCONN 128 /* more than the server's 64 control connections */

struct conn {
	int fd;              /* -1: none */
	bool noread, eof;
	char in[96 * 1024]; /* more than any reply line */
	size_t len;
	char nonce[XP_AUTH_HEX_LEN + 1];
};

static struct conn cn[NCONN];
static struct xp_server_cfg srv_cfg;
static struct server *srv;
static int lfd_shared = -1; /* the control port: one listening socket for every input */
static struct sockaddr_storage ctrl_ss6, ctrl_ss4;
static const unsigned char key_bytes[32] = "xdpperf fuzz key, 32 bytes long";

static const char *const known_ops[] = { "challenge", "started", "sample", "result", "error", "reversed" };

static void take_line(struct conn *k, char *line)
{
	struct json_object *o = json_tokener_parse(line);
	PROMISE(o && json_object_is_type(o, json_type_object));
	const char *op = xp_json_str(o, "op", "");
	bool known = false;
	for (size_t i = 0; i < sizeof(known_ops) / sizeof(known_ops[0]); i++)
		known |= !strcmp(op, known_ops[i]);
	PROMISE(known);
	if (!strcmp(op, "challenge")) {
		const char *n = xp_json_str(o, "nonce", "");
		PROMISE(strlen(n) == XP_AUTH_HEX_LEN);
		memcpy(k->nonce, n, sizeof(k->nonce));
	}
	json_object_put(o);
}

/* What the server sent this connection: whole lines checked. */
static void drain(struct conn *k)
{
	if (k->fd < 0 || k->noread || k->eof)
		return;
	for (;;) {
		if (k->len == sizeof(k->in)) {
			/* No reply line is this long: the server's own lines stay under its 64-KiB message limit. */
			PROMISE(!"a reply line longer than 96 KiB");
		}
		ssize_t n = recv(k->fd, k->in + k->len, sizeof(k->in) - k->len, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET)) {
			k->eof = true;
			break;
		}
		if (n < 0)
			break;
		k->len += (size_t)n;
		char *p = k->in, *nl;
		while ((nl = memchr(p, '\n', k->len - (size_t)(p - k->in)))) {
			*nl = '\0';
			take_line(k, p);
			p = nl + 1;
		}
		k->len -= (size_t)(p - k->in);
		memmove(k->in, p, k->len);
	}
}

static void conn_close(struct conn *k, int how)
{
	if (k->fd < 0)
		return;
	if (how == 'h') {
		shutdown(k->fd, SHUT_WR);
		return;
	}
	if (how == 'r') {
		struct linger l = { 1, 0 };
		setsockopt(k->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	}
	close(k->fd);
	k->fd = -1;
}

static void conn_open(int i, int a)
{
	struct conn *k = &cn[i];
	memset(k, 0, sizeof(*k));
	k->fd = -1;
	bool v6 = a == 5;
	int fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	/* A small receive buffer: a client that stops reading (>n) fills the server's queue within an input. */
	int small = 4096;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
	if (!v6) {
		struct sockaddr_in src = { .sin_family = AF_INET };
		static const uint32_t srcs[] = { 0x7f000001, 0x7f000002, 0x7f000101, 0x7f000200, 0x7f001001 };
		src.sin_addr.s_addr = htonl(srcs[a] + (a == 3 ? (uint32_t)i + 1 : a == 4 ? (uint32_t)i << 8 : 0));
		bind(fd, (struct sockaddr *)&src, sizeof(src));
	}
	const struct sockaddr_storage *to = v6 ? &ctrl_ss6 : &ctrl_ss4;
	if (connect(fd, (const struct sockaddr *)to, v6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in))) {
		close(fd);
		return;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	k->fd = fd;
}

/* ---- the loop ----------------------------------------------------------------- */

/* Whether serve()'s poll would return at once; wait_ms: how long to wait for it. */
static bool ready(int wait_ms)
{
	struct pollfd pf[2 * XP_SRV_MAX_CLIENTS + 2 + XP_SRV_MAX_CHILDREN];
	int n = 0;
	double now = xp_now();
	if (now >= srv->accept_paused_until)
		pf[n++] = (struct pollfd){ .fd = srv->lfd, .events = POLLIN };
	pf[n++] = (struct pollfd){ .fd = xp_sockjobs_fd(srv->jobs), .events = POLLIN };
	for (int i = 0; i < XP_SRV_MAX_CHILDREN; i++)
		if (srv->children[i].pid && srv->children[i].pidfd >= 0)
			pf[n++] = (struct pollfd){ .fd = srv->children[i].pidfd, .events = POLLIN };
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		struct srv_client *c = &srv->cl[i];
		if (c->state == SRV_FREE || c->state == SRV_STARTING)
			continue;
		if (c->deadline <= now)
			return true;
		if (c->state != SRV_DRAINING && c->state != SRV_REVERSE && xp_ctrl_has_line(&c->ctrl))
			return true;
		pf[n++] = (struct pollfd){ .fd = c->ctrl.fd, .events = POLLIN | (xp_ctrl_pending(&c->ctrl) ? POLLOUT : 0) };
		if (c->state == SRV_REVERSE && c->rev_fd >= 0)
			pf[n++] = (struct pollfd){ .fd = c->rev_fd, .events = POLLIN };
	}
	for (int i = 0; i < XP_SRV_MAX_CHILDREN; i++)
		if (srv->children[i].pid && srv->children[i].pidfd < 0)
			return true; /* serve() looks again within 50 ms: no need to wait for it */
	return poll(pf, (nfds_t)n, wait_ms) > 0;
}

/* Something the loop must wait for: a listener job, a reverse child that writes and exits. */
static bool awaiting(void)
{
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		const struct srv_client *c = &srv->cl[i];
		if (c->state == SRV_STARTING)
			return true;
	}
	return false;
}

static void check_books(void)
{
	unsigned running = 0;
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		const struct srv_client *c = &srv->cl[i];
		if (c->state == SRV_RUNNING || c->state == SRV_STARTING) {
			PROMISE(c->slot >= 0 && c->slot < STUB_SLOTS && L.used[c->slot]);
			running++;
		} else if (c->state == SRV_REVERSE) {
			running++;
		} else {
			PROMISE(c->slot < 0 || c->state == SRV_FREE);
		}
	}
	PROMISE(running <= srv_cfg.max_tests);
}

/* A stand-in that writes a little and exits: wait for its exit (not reaping it), so the server's
 * WNOHANG finds its status when it reads the end of its output, as it does with a real sender. */
static void await_exits(void)
{
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		const struct srv_client *c = &srv->cl[i];
		int m = kid_mode[i];
		siginfo_t si;
		if (c->state == SRV_REVERSE && c->rev_pid > 0 && (m <= 3 || m == 7))
			waitid(P_PID, (id_t)c->rev_pid, &si, WEXITED | WNOWAIT);
	}
}

static unsigned long rounds_total;
static void pump(void)
{
	for (int round = 0; round < 64; round++) {
		await_exits();
		bool reverse_child = false;
		for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
			reverse_child |= srv->cl[i].state == SRV_REVERSE && srv->cl[i].rev_fd >= 0 && kid_mode[i] != 4 &&
					 kid_mode[i] != 6;
		/* A child that writes and exits, a listener job: milliseconds; wait for them (bounded). */
		if (!ready(awaiting() || reverse_child ? 2000 : 0))
			break;
		serve(srv);
		rounds_total++;
		check_books();
		for (int i = 0; i < NCONN; i++)
			drain(&cn[i]);
	}
}

/* ---- one input ---------------------------------------------------------------- */

static unsigned hexbyte(const char *s, unsigned dflt)
{
	char *end;
	unsigned long v = strtoul(s, &end, 16);
	return end == s ? dflt : (unsigned)(v & 0xff);
}

static void server_up(unsigned b1, unsigned b2)
{
	static const unsigned tests[] = { 8, 1, 2, 64 }, per_addr[] = { 4, 1, 2, 64 }; /* 0: the defaults */
	char err[256];
	xp_server_cfg_default(&srv_cfg);
	srv_cfg.one_off = true; /* with tests_done > 0: serve() returns after one round */
	srv_cfg.control_port = ntohs(((struct sockaddr_in *)&ctrl_ss4)->sin_port);
	srv_cfg.allow_lo = !(b1 & 128);
	srv_cfg.max_tests = tests[(b1 >> 2) & 3];
	srv_cfg.max_control_per_addr = per_addr[(b1 >> 4) & 3];

	if (b1 & 64) {
		xp_parse_cidr("127.0.0.0/24", &srv_cfg.allow[0].net, &srv_cfg.allow[0].plen, err, sizeof(err));
		xp_parse_cidr("::1", &srv_cfg.allow[1].net, &srv_cfg.allow[1].plen, err, sizeof(err));
		srv_cfg.nallow = 2;
		xp_parse_cidr("127.0.9.0/24", &srv_cfg.allow_bind[0].net, &srv_cfg.allow_bind[0].plen, err, sizeof(err));
		srv_cfg.nallow_bind = 1;
	}
	if (b2 & 1)
		snprintf(srv_cfg.dev, sizeof(srv_cfg.dev), "lo");
	if (b2 & 2)
		snprintf(srv_cfg.dev, sizeof(srv_cfg.dev), "xpnone0");

	if (b2 & 4)
		srv_cfg.max_duration = 5;
	if (b2 & 8) {
		srv_cfg.max_parallel = 10;
		srv_cfg.max_parallel_total = 20;
	}
	if (b2 & 16)
		srv_cfg.max_listen_ports = 4;
	if (b2 & 32)
		srv_cfg.max_workers_total = 0;
	/* One struct server for every input (4 MiB: its clients' 64-KiB buffers), not a fresh
	 * calloc each time, whose page faults were most of an input's time. What
	 * xp_server_run's calloc gives is what the loop relies on: everything zero, every
	 * client SRV_FREE (on_accept clears a client when it takes it). */
	if (!srv)
		srv = malloc(sizeof(*srv));
	PROMISE(srv);
	memset(srv, 0, offsetof(struct server, cl));
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
		srv->cl[i].state = SRV_FREE;
	memset((char *)srv + offsetof(struct server, cl) + sizeof(srv->cl), 0,
	       sizeof(*srv) - offsetof(struct server, cl) - sizeof(srv->cl));
	srv->cfg = &srv_cfg;
	srv->rp = &the_prog;
	srv->tests_done = 1;
	if (b1 & 1) {
		srv->key.set = true;
		srv->key.len = sizeof(key_bytes);
		memcpy(srv->key.key, key_bytes, sizeof(key_bytes));
		srv_cfg.auth_key = "/nonexistent/fuzz.key"; /* only the reverse child's argument */
	}
	srv->lfd = lfd_shared;
	if (b1 & 2) {
		srv_cfg.port_lo = 63000;
		srv_cfg.port_hi = 63015;
		struct xp_sock_server_cfg cfg = { .port_lo = srv_cfg.port_lo, .port_hi = srv_cfg.port_hi };

		unsigned f = faults;
		faults = 0;
		PROMISE(!xp_sock_server_start(&cfg, &srv->listeners, err, sizeof(err)));
		faults = f;
	}
	PROMISE(!xp_sockjobs_start(&srv->jobs, srv_cfg.max_workers_total, err, sizeof(err)));
}

/* What xp_server_run does when serve() returns, then the loader's books: nothing left. */
static void server_down(void)
{
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
		if (srv->cl[i].state != SRV_FREE)
			srv_drop(srv, &srv->cl[i], NULL);
	srv_children_reap(srv, true);
	srv_xdp_linger_expire(srv, true, NULL);
	xp_sockjobs_stop(srv->jobs);
	/* A connection the loop never took (accept paused) must not reach the next input. */
	int fd;
	while ((fd = accept4(lfd_shared, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		close(fd);
	if (srv->listeners)
		xp_sock_server_stop(srv->listeners);
	for (int i = 0; i < STUB_IFS; i++)
		PROMISE(!L.xdp_refs[i] && !L.tc_refs[i]);
	for (int s = 0; s < STUB_SLOTS; s++)
		PROMISE(!L.used[s]);
	PROMISE(__atomic_load_n(&listener_sets, __ATOMIC_RELAXED) == 0);
	for (int i = 0; i < XP_SRV_MAX_CHILDREN; i++)
		PROMISE(!srv->children[i].pid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The input as lines (a NUL ends a line too: it could not be sent as part of one anyway). */
	char *buf = malloc(size + 1), *batch = malloc(2 * size + 64 * 1024);
	size_t blen = 0;
	int cur = 0, repeat = 1;
	bool sign = false;
	unsigned b1 = 0, b2 = 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	char *p = buf, *end = buf + size;

	if (size >= 3 && !strncmp(p, ">o ", 3)) {
		char *nl = memchr(p, '\n', size);
		b1 = hexbyte(p + 3, 0);
		char *sp = strchr(p + 3, ' ');
		if (sp && (!nl || sp < nl))
			b2 = hexbyte(sp + 1, 0);
		p = nl ? nl + 1 : end;
	}
	memset(&L, 0, sizeof(L));
	faults = 0;
	child_mode = 0;
	for (int i = 0; i < NCONN; i++)
		cn[i] = (struct conn){ .fd = -1 };
	server_up(b1, b2);

#define FLUSH()                                                                                                  \
	do {                                                                                                     \
		if (blen && cn[cur].fd >= 0) {                                                                   \
			for (size_t off = 0, tries = 0; off < blen;) {                                           \
				ssize_t w = send(cn[cur].fd, batch + off, blen - off, MSG_NOSIGNAL);             \
				if (w <= 0) {                                                                    \
					if (w < 0 && errno == EAGAIN && tries++ < 64) {                          \
						pump();                                                          \
						continue;                                                        \
					}                                                                        \
					break;                                                                   \
				}                                                                                \
				off += (size_t)w;                                                                \
			}                                                                                        \
		}                                                                                                \
		blen = 0;                                                                                        \
	} while (0)

	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *line = p;
		p = nl ? nl + 1 : end;
		if (strnlen(line, len) < len)
			len = strlen(line);
		line[len] = '\0';
		if (line[0] == '>') {
			FLUSH();
			char d = line[1];
			if (cn[cur].fd < 0 && !cn[cur].eof && d != 'c' && d != 'C' && d != 't' && d != 'f' && d != 'k' &&
			    d != '*')
				conn_open(cur, 0);
			switch (d) {
			case 'C':
			case 'c': {
				int n = (line[2] == ' ' ? atoi(line + 3) : 0) & (NCONN - 1);
				const char *a = line[2] == ' ' ? strchr(line + 3, ' ') : NULL;
				cur = n;
				if (cn[cur].fd < 0 && !cn[cur].eof)
					conn_open(cur, a ? (int)((unsigned)atoi(a + 1) % 6) : 0);
				if (d == 'C')
					continue; /* no round yet */
				break;
			}
			case 'A':
				sign = true;
				break;
			case 'x':
			case 'h':
			case 'r':
				conn_close(&cn[cur], d);
				break;
			case 'n':
				cn[cur].noread = true;
				break;
			case 't':
				/* The clock passes every deadline (serve() compares them with xp_now()). */
				for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++)
					if (srv->cl[i].state != SRV_FREE)
						srv->cl[i].deadline = 0;
				for (int i = 0; i < XP_SRV_MAX_CHILDREN; i++)
					if (srv->children[i].pid)
						srv->children[i].kill_at = 0;
				srv->accept_paused_until = 0;
				break;
			case 'f':
				__atomic_store_n(&faults, hexbyte(line + 2, 0), __ATOMIC_RELAXED);
				break;
			case 'k':
				child_mode = atoi(line + 2) & 7;
				break;
			case '*':
				repeat = atoi(line + 2) & 0xffff;
				break;
			default:
				break;
			}
			pump();
			continue;
		}
		if (cn[cur].fd < 0 && !cn[cur].eof)
			conn_open(cur, 0);
		if (sign) {
			/* As the client answers: the MAC over the line's exact bytes, for this connection's nonce. */
			char mac[XP_AUTH_HEX_LEN + 1];
			struct xp_auth_key k = { .set = true, .len = sizeof(key_bytes) };
			memcpy(k.key, key_bytes, sizeof(key_bytes));
			const char *nonce = cn[cur].nonce[0] ? cn[cur].nonce : "00";
			if (!xp_auth_mac(&k, nonce, line, len, mac))
				blen += (size_t)sprintf(batch + blen, "{\"op\":\"auth\",\"mac\":\"%s\"}\n", mac);
			sign = false;
		}
		for (int r = 0; r < repeat; r++) {
			if (blen + len + 1 > 2 * size + 64 * 1024 - 128)
				break;
			memcpy(batch + blen, line, len);
			blen += len;
			if (nl)
				batch[blen++] = '\n';
		}
		repeat = 1;
	}
	FLUSH();
	pump();
	for (int i = 0; i < NCONN; i++)
		conn_close(&cn[i], 'x');
	pump();
	server_down();
	if (getenv("XP_FUZZ_ROUNDS"))
		fprintf(stderr, "rounds %lu\n", rounds_total);
	free(buf);
	free(batch);
	return 0;
}

/* A network namespace of our own with its loopback up: connections, routes and
 * ports are the harness's alone (no other test's server or port in the way). */
static void own_netns(void)
{
	if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET)) {
		fprintf(stderr, "fuzz_server_ctrl: no network namespace of its own (%s): using this one\n", strerror(errno));
		return;
	}
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct ifreq ifr = { 0 };
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 || (ifr.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)) {
		fprintf(stderr, "fuzz_server_ctrl: cannot bring lo up: %s\n", strerror(errno));
		abort();
	}
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];
	struct xp_addr any = { 0 };
	own_netns();
	srv_reverse_spawn = fake_spawn;
	signal(SIGPIPE, SIG_IGN); /* as xp_install_signals */
	/* The server logs a line per event: not into the fuzzer's output (XP_FUZZ_VERBOSE=1 keeps it). */
	if (!getenv("XP_FUZZ_VERBOSE")) {
		int dn = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (dn >= 0) {
			dup2(dn, 1);
			close(dn);
		}
	}
	/* The server's own listen_on: the default control port, in our namespace free; else any. */
	lfd_shared = listen_on(&any, XP_CONTROL_PORT_DEFAULT, err, sizeof(err));
	if (lfd_shared < 0)
		lfd_shared = listen_on(&any, 0, err, sizeof(err));
	if (lfd_shared < 0) {
		fprintf(stderr, "fuzz_server_ctrl: %s\n", err);
		abort();
	}
	struct sockaddr_in6 a6;
	socklen_t sl = sizeof(a6);
	getsockname(lfd_shared, (struct sockaddr *)&a6, &sl);
	struct sockaddr_in *t4 = (struct sockaddr_in *)&ctrl_ss4;
	t4->sin_family = AF_INET;
	t4->sin_port = a6.sin6_port;
	t4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct sockaddr_in6 *t6 = (struct sockaddr_in6 *)&ctrl_ss6;
	t6->sin6_family = AF_INET6;
	t6->sin6_port = a6.sin6_port;
	t6->sin6_addr = in6addr_loopback;
	return 0;
}
