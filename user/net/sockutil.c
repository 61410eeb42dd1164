/* Open-file limits for the socket engine and server. */
#include "net/sockutil.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

/* fs.nr_open: the ceiling for any process's hard RLIMIT_NOFILE (0 if unknown). */
static unsigned long read_nr_open(void)
{
	unsigned long v = 0;
	FILE *f = fopen("/proc/sys/fs/nr_open", "r");
	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

int xp_raise_nofile(unsigned long need, char *err, size_t errlen)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		snprintf(err, errlen, "cannot read the open-file limit: %s", strerror(errno));
		return -1;
	}
	/* Soft up to hard first: always allowed, and often enough. */
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < rl.rlim_max) {
		struct rlimit r2 = { rl.rlim_max, rl.rlim_max };
		if (!setrlimit(RLIMIT_NOFILE, &r2))
			rl = r2;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;

	/* The hard limit is too low: raising it needs CAP_SYS_RESOURCE and is
	 * capped by fs.nr_open, so say which of the two stopped us. */
	unsigned long nr_open = read_nr_open();
	if (nr_open && need > nr_open) {
		/* Still take as much as the kernel allows: a caller that splits
		 * the work over processes (engine/workers.c) then needs fewer. */
		unsigned long lim = (unsigned long)rl.rlim_max;
		if (rl.rlim_max < nr_open) {
			struct rlimit r4 = { nr_open, nr_open };
			if (!setrlimit(RLIMIT_NOFILE, &r4))
				lim = nr_open;
		}
		/* Name the limit that holds: the hard limit when it could not be raised. */
		if (lim < nr_open)
			snprintf(err, errlen, "needs %lu open files but the limit is %lu (hard limit; raising it needs "
				 "CAP_SYS_RESOURCE, and fs.nr_open is %lu)", need, lim, nr_open);
		else
			snprintf(err, errlen, "needs %lu open files but the limit is %lu (raise fs.nr_open)", need,
				 nr_open);
		return -1;
	}
	/* Ask for the most the kernel allows, so a second caller in the same
	 * process (client and server together) does not have to raise it again. */
	rlim_t want = nr_open > need ? nr_open : need;
	struct rlimit r3 = { want, want };
	if (setrlimit(RLIMIT_NOFILE, &r3)) {
		int eno = errno;
		snprintf(err, errlen, "needs %lu open files but the limit is %lu (%s)", need,
			 (unsigned long)rl.rlim_max,
			 eno == EPERM ? "raising it needs CAP_SYS_RESOURCE: raise ulimit -Hn as root"
				      : "raise fs.nr_open");
		return -1;
	}
	return 0;
}
