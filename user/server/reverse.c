/*
 * --bidir (RFC 2544 section 14) on the server's side: {"op":"reverse"} asks
 * us to send one trial's frames towards the client while it sends its own.
 *
 * The design, and why: the sender is a child of our own binary
 * (cli/reverse_child.c) that runs the trial as an ordinary client test
 * against the xdpperf server the client runs on its side, at the address
 * this request came from. Each direction is then the same test: the same
 * engines and pacing, the same stamps and measurement core, counted by its
 * own test id on the receiving side, and the client's address, MAC and
 * route come from the same path code (net/route.c) as any client's. Only
 * the request's own fields are used (messages.h, checked strictly): the
 * frames go to the address of the control connection and nowhere else, so
 * the server cannot be made to send at a third party.
 *
 * Bounds: the child runs as long as the trial plus XP_SRV_REVERSE_MARGIN at
 * most (the connection's deadline, then it is killed); the client leaving
 * (its control connection closing) stops it at once; it dies with us
 * (PR_SET_PDEATHSIG). Its XDP attaches are its engine's bpf_links, gone
 * when it exits, however it exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/client.h"
#include "server/state.h"
#include "util/time.h"

extern char **environ;

/* The child, its request on its stdin (a pipe we fill and close: it is small), its stdout a pipe to us. */
static int spawn_child(const struct server *s, struct srv_client *c, const char *req, char *err, size_t errlen)
{
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot start the reverse sender: %s", strerror(errno));
		return -1;
	}
	if (pipe2(out, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot start the reverse sender: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	/* --auth-key: the child loads our key file and answers the client's server's challenge with it. */
	char *rev_argv[] = { "xdpperf", XP_REVERSE_CHILD_ARG, c->peer_s, (char *)s->cfg->auth_key, NULL };
	/* An OTG controller's sender (send_op.c): its target is in the request; our key answers its agent. */
	char *send_argv[] = { "xdpperf", XP_SEND_CHILD_ARG, (char *)s->cfg->auth_key, NULL };
	char **argv = c->rev_send ? send_argv : rev_argv;
	pid_t pid;
	int r = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(out[1]);
	if (r) {
		snprintf(err, errlen, "cannot start the reverse sender: %s", strerror(r));
		close(in[1]);
		close(out[0]);
		return -1;
	}
	/* A pipe takes 64 KiB at once; the request is one short line. */
	size_t n = strlen(req);
	if (write(in[1], req, n) != (ssize_t)n) {
		/* the child reads a truncated request and says so */
	}
	close(in[1]);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	c->rev_pid = pid;
	c->rev_fd = out[0];
	return 0;
}

/* How the sender starts: spawn_child. The one seam for tests: under the
 * control-path fuzzer (tests/fuzz/fuzz_server_ctrl.c) /proc/self/exe is the
 * fuzzer itself, so it forks a stand-in child that writes what the input says. */
int (*srv_reverse_spawn)(const struct server *s, struct srv_client *c, const char *req, char *err,
			 size_t errlen) = spawn_child;

int srv_child_start(struct server *s, struct srv_client *c, struct json_object *req, size_t out_size, char *err,
		    size_t errlen)
{
	c->rev_out = malloc(out_size);
	int r = c->rev_out ? srv_reverse_spawn(s, c, json_object_to_json_string_ext(req, JSON_C_TO_STRING_PLAIN), err,
					       errlen)
			   : (snprintf(err, errlen, "server out of memory"), -1);
	json_object_put(req);
	if (r) {
		free(c->rev_out);
		c->rev_out = NULL;
		return -1;
	}
	c->rev_len = 0;
	c->state = SRV_REVERSE;
	return 0;
}

void srv_on_reverse(struct server *s, struct srv_client *c, struct json_object *m)
{
	const struct xp_server_cfg *cfg = s->cfg;
	struct xp_reverse_req q;
	char err[256];
	if (c->state != SRV_IDLE) {
		srv_refuse(s, c, "a test is already running on this connection", NULL);
		return;
	}
	if (xp_reverse_req_from_json(m, &q, err, sizeof(err))) {
		srv_refuse(s, c, err, err);
		return;
	}
	if (q.seconds > cfg->max_duration) {
		snprintf(err, sizeof(err), "trial of %g s is longer than this server allows (%g s, --max-duration)", q.seconds,
			 cfg->max_duration);
		srv_refuse(s, c, err, err);
		return;
	}
	if ((q.family == AF_INET6) != (c->peer.family == AF_INET6)) {
		srv_refuse(s, c, "the reverse trial's family is not the control connection's", NULL);
		return;
	}
	if (srv_tests_running(s) >= cfg->max_tests) {
		snprintf(err, sizeof(err), "server is running its maximum of %u tests (--max-tests); try again later",
			 cfg->max_tests);
		srv_refuse(s, c, err, err);
		return;
	}
	if (srv_start_rate(s, &c->peer, err, sizeof(err))) {
		srv_refuse(s, c, err, err);
		return;
	}
	/* What we checked, not what came. */
	if (srv_child_start(s, c, xp_reverse_req_to_json(&q), XP_CTRL_MAX_MSG, err, sizeof(err))) {
		srv_refuse(s, c, err, err);
		return;
	}
	c->deadline = xp_now() + q.seconds + XP_SRV_REVERSE_MARGIN;
	printf("[%s] reverse trial (--bidir, %s engine): %s/IPv%d, %u bytes%s%s, %.0f frames/s, %g s, to its control port %u\n",
	       c->peer_s, q.engine, q.udp ? "udp" : "tcp", q.family == AF_INET6 ? 6 : 4, q.frame_size, q.mix[0] ? " mix " : "",
	       q.mix, q.pps, q.seconds, q.port);
	fflush(stdout);
}

int srv_child_collect(struct server *s, struct srv_client *c, int *status)
{
	size_t cap = c->rev_send ? XP_CTRL_MAX_REPLY : XP_CTRL_MAX_MSG; /* send_op.c's buffer holds its flows' figures */
	for (;;) {
		if (c->rev_len >= cap - 1) {
			srv_reverse_end(s, c);
			srv_send_error(c, "the reverse sender wrote too much");
			xp_ctrl_flush(&c->ctrl);
			srv_drop(s, c, "reverse sender wrote too much, ended");
			return -1;
		}
		ssize_t n = read(c->rev_fd, c->rev_out + c->rev_len, cap - 1 - c->rev_len);
		if (n > 0) {
			c->rev_len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return 0;
		break; /* its end */
	}
	c->rev_out[c->rev_len] = '\0';
	/* Its output ended: it is exiting. Its status if it has, else the loop reaps it later. */
	int st = -1, ws;
	if (waitpid(c->rev_pid, &ws, WNOHANG) == c->rev_pid)
		st = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
	else
		srv_bury(s, c->rev_pid, XP_SRV_CHILD_EXIT_GRACE);
	c->rev_pid = 0;
	*status = st;
	return 1;
}

void srv_reverse_read(struct server *s, struct srv_client *c)
{
	int st;
	if (srv_child_collect(s, c, &st) != 1)
		return;
	struct xp_reverse_res res;
	char err[256];
	struct json_object *j = json_tokener_parse(c->rev_out);
	if (xp_reverse_res_from_json(j, &res, err, sizeof(err))) {
		memset(&res, 0, sizeof(res));
		res.rc = st > 0 ? st : 1;
		if (st >= 0)
			snprintf(res.error, sizeof(res.error), "the reverse sender ended without its figures (status %d)", st);
		else
			snprintf(res.error, sizeof(res.error), "the reverse sender ended without its figures");
	}
	json_object_put(j);
	srv_reverse_end(s, c);
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("reversed"));
	json_object_object_add(o, "result", xp_reverse_res_to_json(&res));
	int r = xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
	xp_ctrl_flush(&c->ctrl);
	char why[320];
	if (res.rc)
		snprintf(why, sizeof(why), "reverse trial failed: %.280s", res.error);
	else
		snprintf(why, sizeof(why), "reverse trial done: sent %llu, %llu arrived", (unsigned long long)res.sent,
			 (unsigned long long)res.received);
	srv_drop(s, c, r ? "client does not read its replies, closing" : why);
}
