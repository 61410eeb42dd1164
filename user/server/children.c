/*
 * --bidir's reverse senders once they are to go (reverse.c starts them):
 * stopped when their client leaves or the server stops (srv_reverse_end,
 * from a test's release, conn.c), then reaped through their pidfds by the
 * event loop (server.c).
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "server/state.h"
#include "util/time.h"

/*
 * Reaping without waiting (issue 28 point 4): a child that has not exited
 * yet (stopped, slow to detach, or stuck) goes to s->children; its pidfd in
 * the poll set wakes the loop when it exits, and at kill_at it gets SIGKILL.
 * The old way, waitpid in a loop for up to 1-2 s, held every other client.
 */
void srv_bury(struct server *s, pid_t pid, double grace)
{
	int st;
	if (waitpid(pid, &st, WNOHANG) == pid)
		return;
	struct srv_child *k = NULL;
	for (int i = 0; i < XP_SRV_MAX_CHILDREN && !k; i++)
		if (!s->children[i].pid)
			k = &s->children[i];
	if (!k) {
		/* Cannot happen (one child per client, each buried once); if it does, SIGKILL ends it at once. */
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return;
	}
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);
	*k = (struct srv_child){ .pid = pid, .pidfd = fd, .kill_at = xp_now() + grace };
}

int srv_children_poll(struct server *s, struct pollfd *pf, int *map, double *next)
{
	int n = 0;
	double now = xp_now();
	for (int i = 0; i < XP_SRV_MAX_CHILDREN; i++) {
		struct srv_child *k = &s->children[i];
		if (!k->pid)
			continue;
		if (k->pidfd >= 0) {
			pf[n] = (struct pollfd){ .fd = k->pidfd, .events = POLLIN };
			map[n++] = SRV_MAP_CHILD;
		} else if (now + 0.05 < *next) {
			*next = now + 0.05; /* no pidfd: look again soon */
		}
		if (!k->killed && k->kill_at < *next)
			*next = k->kill_at;
	}
	return n;
}

void srv_children_reap(struct server *s, bool all)
{
	double now = xp_now();
	for (int i = 0; i < XP_SRV_MAX_CHILDREN; i++) {
		struct srv_child *k = &s->children[i];
		int st;
		if (!k->pid)
			continue;
		if (all && !k->killed) {
			kill(k->pid, SIGKILL);
			k->killed = true;
		}
		pid_t r = waitpid(k->pid, &st, all ? 0 : WNOHANG);
		if (r == 0) {
			if (!k->killed && now >= k->kill_at) {
				kill(k->pid, SIGKILL); /* a stopped child too: SIGKILL needs no SIGCONT */
				k->killed = true;
			}
			continue;
		}
		/* Reaped (or not ours any more: ECHILD). */
		if (k->pidfd >= 0)
			close(k->pidfd);
		*k = (struct srv_child){ .pidfd = -1 };
	}
}

void srv_reverse_end(struct server *s, struct srv_client *c)
{
	if (c->rev_pid > 0) {
		/* SIGTERM: its test stops and detaches as on Ctrl-C; a child that
		 * does not go within a second is killed (its links go with it). */
		kill(c->rev_pid, SIGTERM);
		srv_bury(s, c->rev_pid, XP_SRV_CHILD_TERM_GRACE);
		c->rev_pid = 0;
	}
	if (c->rev_fd >= 0)
		close(c->rev_fd);
	c->rev_fd = -1;
	free(c->rev_out);
	c->rev_out = NULL;
	c->rev_len = 0;
}
