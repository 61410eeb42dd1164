/*
 * --bidir (RFC 2544 section 14) on the client's side: each trial runs in
 * both directions at once, A->B from us and B->A from the server's side.
 *
 * The design, and why (server/reverse.c has the other half): B->A is an
 * ordinary test too, run by a child the server starts, against an xdpperf
 * server we run on our side for the suite (xp_bidir_open). So B->A is counted
 * on our interface by the same XDP program, by its own test id, and timed by
 * the same stamps and measurement core as A->B is on the server's; both
 * directions have the same figures (sent, received, offered load, latency)
 * and the same verdict rules. Per trial, a thread asks the server for the
 * reverse trial (client.h, xp_client_reverse: {"op":"reverse"} on a control
 * connection of its own) and waits for its figures while this thread runs A->B; both start within the
 * control set-up's time of each other (the JSON has each direction's
 * sending time). Our server is a child: it dies with us
 * (PR_SET_PDEATHSIG), is stopped at the end (SIGTERM: it detaches as on
 * Ctrl-C), and its XDP attach is a bpf_link like any server's.
 *
 * --auth-key: the same exchange both ways, with the key the user gave on
 * both ends. The reverse request answers the server's challenge as a
 * start request does (client/reverse.c); our server runs
 * with the same key file, so only a sender that holds the key (the tested
 * server's child, which loads the server's key file) may start a test on
 * it, and only from the tested server's address (--allow).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rfc2544/rfc2544.h"
#include "util/addr.h"
#include "util/time.h"

#define OPEN_WAIT_S 10.0   /* our server prints that it listens within this */

/* Our server's output so far (stdout and stderr, in a memfd), its first line that has `what`, or its last. */
static void log_line(int fd, const char *what, char *out, size_t len)
{
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	out[0] = '\0';
	if (n <= 0)
		return;
	buf[n] = '\0';
	char *save = NULL, *last = NULL;
	for (char *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		last = l;
		if (what && strstr(l, what)) {
			snprintf(out, len, "%s", l);
			return;
		}
	}
	if (last && !what)
		snprintf(out, len, "%s", last);
}

int xp_bidir_open(const struct xp_rfc_job *o, struct xp_bidir *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	b->logfd = -1;
	if (o->spec->control_port == 65535) {
		snprintf(err, errlen, "--bidir runs a server on this side on the control port + 1: pick a --control-port below 65535");
		return -1;
	}
	b->port = (unsigned short)(o->spec->control_port + 1);
	/* The reverse trials' requests (client/reverse.c): --auth-key's file is read now, so a bad one fails
	 * before anything starts. */
	b->rv = xp_client_reverse_open(o->spec, b->port, err, errlen);
	if (!b->rv)
		return -1;
	b->logfd = memfd_create("xdpperf-bidir-server", MFD_CLOEXEC);
	if (b->logfd < 0) {
		snprintf(err, errlen, "--bidir: cannot make our server's log: %s", strerror(errno));
		xp_bidir_close(b);
		return -1;
	}
	char port[8], allow[80] = "";
	snprintf(port, sizeof(port), "%u", b->port);
	struct xp_addr a;
	char *argv[16];
	int argc = 0;
	argv[argc++] = "xdpperf";
	argv[argc++] = "-s";
	argv[argc++] = "--control-port";
	argv[argc++] = port;
	argv[argc++] = "--allow-lo"; /* a server on this host's loopback sends B->A over it too */
	/* Only the server we test against may start tests on ours. */
	if (!xp_addr_parse(o->spec->host, &a)) {
		snprintf(allow, sizeof(allow), "%.64s/%d", o->spec->host, a.family == AF_INET6 ? 128 : 32);
		argv[argc++] = "--allow";
		argv[argc++] = allow;
	}
	if (o->spec->dev[0]) {
		argv[argc++] = "--dev";
		argv[argc++] = (char *)o->spec->dev;
	}
	if (o->spec->auth_key[0]) {
		argv[argc++] = "--auth-key";
		argv[argc++] = (char *)o->spec->auth_key;
	}
	argv[argc] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "--bidir: cannot start our server: %s", strerror(errno));
		close(b->logfd);
		b->logfd = -1;
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(b->logfd, 1);
		dup2(b->logfd, 2);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	b->pid = pid;
	double end = xp_now() + OPEN_WAIT_S;
	char line[256];
	for (;;) {
		log_line(b->logfd, "listening on control port", line, sizeof(line));
		if (line[0])
			return 0;
		int st;
		if (waitpid(pid, &st, WNOHANG) == pid) {
			b->pid = 0;
			log_line(b->logfd, NULL, line, sizeof(line));
			snprintf(err, errlen, "--bidir: the server on this side (control port %u) did not start: %s", b->port,
				 line[0] ? line : "no message");
			xp_bidir_close(b);
			return -1;
		}
		if (xp_now() > end) {
			snprintf(err, errlen, "--bidir: the server on this side (control port %u) did not start within %.0f s",
				 b->port, OPEN_WAIT_S);
			xp_bidir_close(b);
			return -1;
		}
		xp_sleep(0.02);
	}
}

void xp_bidir_close(struct xp_bidir *b)
{
	if (b->pid > 0) {
		kill(b->pid, SIGTERM);
		int st;
		double end = xp_now() + 5;
		while (waitpid(b->pid, &st, WNOHANG) == 0) {
			if (xp_now() > end) {
				kill(b->pid, SIGKILL);
				waitpid(b->pid, &st, 0);
				break;
			}
			xp_sleep(0.01);
		}
		b->pid = 0;
	}
	if (b->logfd >= 0)
		close(b->logfd);
	b->logfd = -1;
	xp_client_reverse_close(b->rv);
	b->rv = NULL;
}

struct rev_job {
	const struct xp_client_reverse *rv;
	const struct xp_trial_req *req;
	double pps;
	struct xp_reverse_res *res;
};

static void *rev_thread(void *arg)
{
	struct rev_job *j = arg;
	xp_client_reverse(j->rv, j->req, j->pps, j->res);
	return NULL;
}

void xp_bidir_trial(struct xp_bidir *b, const struct xp_rfc_job *o, const struct xp_trial_req *req, double rev_pps,
		    struct xp_trial_out *out, struct xp_reverse_res *rev)
{
	memset(rev, 0, sizeof(*rev));
	/* B->A at its own search's rate (search/search.h, xp_rfc_search2) */
	struct rev_job j = { .rv = b->rv, .req = req, .pps = rev_pps, .res = rev };
	pthread_t th;
	struct xp_trial_req fwd = *req;
	fwd.settle_s = 0; /* after both */
	if (pthread_create(&th, NULL, rev_thread, &j)) {
		rev->rc = 1;
		snprintf(rev->error, sizeof(rev->error), "reverse trial: cannot start its thread");
		xp_client_trial(o->spec, &o->ro, &fwd, out);
	} else {
		xp_client_trial(o->spec, &o->ro, &fwd, out);
		pthread_join(th, NULL);
	}
	if (req->settle_s > 0)
		xp_sleep(req->settle_s);
}
