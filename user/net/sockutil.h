/* The open-file limit, for the socket engine (client) and the socket server. */
#ifndef XP_SOCKUTIL_H
#define XP_SOCKUTIL_H

#include <stddef.h>

/*
 * Make sure this process may hold `need` open files. The soft RLIMIT_NOFILE
 * is always raised to the hard limit (that costs nothing); if the hard limit
 * is still below `need`, try to raise it (root only, and never beyond
 * /proc/sys/fs/nr_open; on failure it is still raised as far as allowed).
 * Returns 0, or -1 with a message in err that starts
 * with "needs N open files but the limit is L (...)" so callers can prefix
 * the reason, e.g. "-P 200000 " + err.
 */
int xp_raise_nofile(unsigned long need, char *err, size_t errlen);

#endif
