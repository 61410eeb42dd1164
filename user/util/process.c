/* Process-wide helpers: signal handling and the privilege check. */
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/process.h"

volatile int xp_signalled;

static void on_signal(int sig)
{
	xp_signalled = sig;
}

void xp_install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a signal must wake poll() and sleeps at once. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return (d[cap / 32].effective >> (cap % 32)) & 1;
}

int xp_check_privileges(char *err, size_t errlen)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3, .pid = 0 };
	struct __user_cap_data_struct d[2];

	if (geteuid() == 0)
		return 0;
	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d) == 0 && has_cap(d, CAP_NET_ADMIN) && has_cap(d, CAP_NET_RAW) &&
	    (has_cap(d, CAP_BPF) || has_cap(d, CAP_SYS_ADMIN)))
		return 0;
	snprintf(err, errlen, "needs root (or CAP_NET_ADMIN, CAP_NET_RAW and CAP_BPF) to load XDP programs and "
			      "open AF_XDP sockets; run it with sudo");
	return -EPERM;
}
