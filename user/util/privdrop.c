/* The server's capability drop after setup. See privdrop.h and docs/privileges.md. */
#include "util/privdrop.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

/*
 * Measured on Linux 6.18 (a server started with only these in its bounding
 * set, then each test kind run against it; docs/privileges.md has the runs):
 * without CAP_PERFMON the verifier refuses the server's XDP counter program
 * and its TC fallback (they are loaded again per test: the TC program, the
 * NIC-timestamp variant). CAP_SYS_ADMIN is not needed: a reverse sender's
 * live engine holds its program in the XDP dispatcher from a namespace of
 * its own, which without CAP_SYS_ADMIN it makes inside a user namespace
 * (engine/live_hold_userns.c).
 */
static const struct xp_cap_use uses[] = {
	{ CAP_BPF, "CAP_BPF", "load the per-test BPF programs (TC fallback, NIC-timestamp variant, reverse senders')" },
	{ CAP_PERFMON, "CAP_PERFMON", "the verifier accepts the counter and TC programs only with it" },
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN", "attach XDP and TC programs per test, AF_XDP, the reverse sender's netlink" },
	{ CAP_NET_RAW, "CAP_NET_RAW", "AF_XDP and raw (ICMP) sockets of reverse senders" },
	{ CAP_IPC_LOCK, "CAP_IPC_LOCK", "a reverse sender's AF_XDP UMEM beyond the memlock limit" },
};
static const struct xp_cap_use bind_use = { CAP_NET_BIND_SERVICE, "CAP_NET_BIND_SERVICE",
					    "socket tests' listeners on --test-ports below ip_unprivileged_port_start" };

const struct xp_cap_use *xp_server_cap_uses(size_t *n)
{
	*n = sizeof(uses) / sizeof(uses[0]);
	return uses;
}

const struct xp_cap_use *xp_server_cap_bind(void)
{
	return &bind_use;
}

uint64_t xp_server_caps(unsigned lowest_port, unsigned unpriv_start)
{
	uint64_t set = 0;
	for (size_t i = 0; i < sizeof(uses) / sizeof(uses[0]); i++)
		set |= 1ULL << uses[i].cap;
	if (lowest_port < unpriv_start)
		set |= 1ULL << CAP_NET_BIND_SERVICE;
	return set;
}

void xp_caps_names(uint64_t set, char *buf, size_t len)
{
	size_t off = 0;
	if (len)
		buf[0] = '\0';
	for (int c = 0; c < 64 && off < len; c++) {
		if (!(set >> c & 1))
			continue;
		char *n = cap_to_name((cap_value_t)c); /* "cap_bpf": the docs write CAP_BPF */
		char up[40];
		snprintf(up, sizeof(up), "%s", n ? n : "?");
		if (n)
			cap_free(n);
		for (char *p = up; *p; p++)
			*p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
		if (!strncmp(up, "CAP_", 4) || !n)
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? " " : "", up);
		else /* libcap names a capability it does not know by its number */
			off += (size_t)snprintf(buf + off, len - off, "%sCAP_%d", off ? " " : "", c);
	}
}

unsigned xp_unpriv_port_start(void)
{
	unsigned v = 1024;
	FILE *f = fopen("/proc/sys/net/ipv4/ip_unprivileged_port_start", "re");
	if (f) {
		if (fscanf(f, "%u", &v) != 1)
			v = 1024;
		fclose(f);
	}
	return v;
}

int xp_caps_current(uint64_t *eff, uint64_t *prm)
{
	cap_t c = cap_get_proc();
	if (!c)
		return -errno;
	*eff = *prm = 0;
	for (int i = 0; i < 64 && cap_valid(i); i++) {
		cap_flag_value_t v;
		if (!cap_get_flag(c, i, CAP_EFFECTIVE, &v) && v == CAP_SET)
			*eff |= 1ULL << i;
		if (!cap_get_flag(c, i, CAP_PERMITTED, &v) && v == CAP_SET)
			*prm |= 1ULL << i;
	}
	cap_free(c);
	return 0;
}

static int threads(void)
{
	int n = -1;
	char line[128];
	FILE *f = fopen("/proc/self/status", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

int xp_caps_drop_to(uint64_t keep, uint64_t *kept, char *err, size_t errlen)
{
	uint64_t eff, prm;
	int r = xp_caps_current(&eff, &prm);
	if (r) {
		snprintf(err, errlen, "cannot read this process's capabilities: %s", strerror(-r));
		return r;
	}
	/* Capabilities are per thread: a thread started before this would keep them all. */
	if (threads() != 1) {
		snprintf(err, errlen, "capabilities dropped with %d threads running (internal error: drop them first)",
			 threads());
		return -EBUSY;
	}
	keep &= prm;
	int last = (int)cap_max_bits() - 1;
	bool setpcap = eff >> CAP_SETPCAP & 1;
	/* The bounding set first: dropping it takes CAP_SETPCAP, which goes next. */
	for (int c = 0; setpcap && c <= last && c < 64; c++)
		if (!(keep >> c & 1) && cap_get_bound((cap_value_t)c) == 1 && cap_drop_bound((cap_value_t)c)) {
			r = -errno;
			snprintf(err, errlen, "cannot drop capability %d from the bounding set: %s", c, strerror(errno));
			return r;
		}
	if (cap_reset_ambient() && errno != EINVAL) {
		r = -errno;
		snprintf(err, errlen, "cannot clear the ambient capabilities: %s", strerror(errno));
		return r;
	}
	cap_t c = cap_init(); /* all three sets empty: inheritable stays so */
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < 64; i++) {
		if (!(keep >> i & 1))
			continue;
		cap_value_t v = (cap_value_t)i;
		cap_set_flag(c, CAP_EFFECTIVE, 1, &v, CAP_SET);
		cap_set_flag(c, CAP_PERMITTED, 1, &v, CAP_SET);
	}
	if (cap_set_proc(c)) {
		r = -errno;
		cap_free(c);
		snprintf(err, errlen, "cannot drop capabilities: %s", strerror(-r));
		return r;
	}
	cap_free(c);
	/* An exec (the reverse sender) gains nothing beyond what we keep, also from file capabilities. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) {
		r = -errno;
		snprintf(err, errlen, "cannot set no_new_privs: %s", strerror(-r));
		return r;
	}
	if (xp_caps_current(&eff, &prm) == 0 && prm != keep) {
		snprintf(err, errlen, "capabilities after the drop are %#llx, not %#llx", (unsigned long long)prm,
			 (unsigned long long)keep);
		return -EPERM;
	}
	*kept = keep;
	return 0;
}
