#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/in_netns.h"

int xp_in_netns(const char *netns, int (*fn)(void *arg, char *err, size_t errlen), void *arg, char *err,
		size_t errlen)
{
	char path[300];
	snprintf(path, sizeof(path), "/var/run/netns/%s", netns);
	int self = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int r = 0;
	if (self < 0 || fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot open network namespace '%s': %s (--device-netns names one under /var/run/netns)",
			 netns, strerror(errno));
		goto out;
	}
	if (setns(fd, CLONE_NEWNET)) {
		r = -errno;
		snprintf(err, errlen, "cannot enter network namespace '%s': %s", netns, strerror(errno));
		goto out;
	}
	r = fn(arg, err, errlen);
	if (setns(self, CLONE_NEWNET)) {
		/* Cannot happen with our own namespace's fd; if it did, every later call would be wrong. */
		fprintf(stderr, "xdpperf: cannot return to the client's network namespace: %s\n", strerror(errno));
		exit(1);
	}
out:
	if (self >= 0)
		close(self);
	if (fd >= 0)
		close(fd);
	return r;
}
