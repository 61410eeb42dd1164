#include "tests/lib/netns_helper.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef XP_NETNS_SH
#define XP_NETNS_SH "tests/lib/netns.sh"
#endif

extern char **environ;

#define MAX_ARGS 32

int xp_netns_run(const char *const *args)
{
	const char *script = getenv("XP_NETNS_SH");
	char *argv[MAX_ARGS + 3];
	int n = 0, st;
	pid_t pid;

	if (!script || !*script)
		script = XP_NETNS_SH;
	argv[n++] = "bash";
	argv[n++] = (char *)script;
	for (; *args && n < MAX_ARGS + 2; args++)
		argv[n++] = (char *)*args;
	argv[n] = NULL;
	fflush(NULL); /* the child's messages after ours */
	int r = posix_spawnp(&pid, "bash", NULL, NULL, argv, environ);
	if (r) {
		fprintf(stderr, "netns.sh: cannot run bash: %s\n", strerror(r));
		return -1;
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			fprintf(stderr, "netns.sh: waitpid: %s\n", strerror(errno));
			return -1;
		}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	fprintf(stderr, "netns.sh failed (%s %d):", WIFEXITED(st) ? "status" : "signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	for (int i = 1; argv[i]; i++)
		fprintf(stderr, " %s", argv[i]);
	fprintf(stderr, "\n");
	return -1;
}

/* ---- removal at exit ---------------------------------------------------- */

#define NETNS_DIR "/var/run/netns/"
#define MAX_NS    4

static char ns_path[MAX_NS][sizeof(NETNS_DIR) + 64];
static volatile sig_atomic_t n_ns;

static void unlink_path(const char *path)
{
	umount2(path, MNT_DETACH);
	unlink(path);
}

void xp_netns_unlink(const char *ns)
{
	char path[sizeof(NETNS_DIR) + 64];
	size_t d = sizeof(NETNS_DIR) - 1, l = strlen(ns);

	if (l >= sizeof(path) - d)
		return;
	memcpy(path, NETNS_DIR, d);
	memcpy(path + d, ns, l + 1);
	unlink_path(path);
}

static void remove_all(void)
{
	for (int i = 0; i < n_ns; i++)
		unlink_path(ns_path[i]);
}

static void on_signal(int sig)
{
	remove_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void xp_netns_remove_at_exit(const char *ns)
{
	if (n_ns >= MAX_NS || strlen(ns) >= 64)
		return;
	snprintf(ns_path[n_ns], sizeof(ns_path[n_ns]), NETNS_DIR "%s", ns);
	if (n_ns++ == 0) {
		atexit(remove_all);
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		signal(SIGALRM, on_signal);
	}
}
