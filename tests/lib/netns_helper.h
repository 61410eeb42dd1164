/*
 * The C tests' side of tests/lib/netns.sh, the one helper that makes (and
 * removes) the tests' network namespaces and veth pairs:
 *
 *   if (xp_netns("add", "--no-ipv6", "xpxc-a") ||
 *       xp_netns("pair", "xpxc-a", "xpxca0", "xpxc-a", "xpxcb0", "2"))
 *           return -1;
 *
 * runs `bash tests/lib/netns.sh add --no-ipv6 xpxc-a` and so on (commands
 * and arguments: see the script). The script is found at XP_NETNS_SH, an
 * absolute path the Makefile builds in, or at $XP_NETNS_SH if that is set.
 */
#ifndef XP_TESTS_NETNS_HELPER_H
#define XP_TESTS_NETNS_HELPER_H

/* Run netns.sh with args (NULL-terminated). 0 if it exited 0, else -1 (its
 * message, and the command, on stderr). */
int xp_netns_run(const char *const *args);
#define xp_netns(...) xp_netns_run((const char *const[]){ __VA_ARGS__, NULL })

/* Remove namespace ns at exit and when SIGINT, SIGTERM or SIGALRM kills the
 * process (up to 4 namespaces). */
void xp_netns_remove_at_exit(const char *ns);

/* What `ip netns del ns` does, with async-signal-safe calls only: the
 * namespace goes away with the last process in it. */
void xp_netns_unlink(const char *ns);

#endif
