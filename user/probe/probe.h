/*
 * --probe: what this kernel and an interface support for xdpperf, each
 * answer with the reason, and which engine `auto` picks there. The probe
 * sends nothing and attaches nothing to an interface: it loads BPF programs,
 * runs one through BPF_PROG_RUN on a frame it drops, asks the kernel over
 * netlink, and opens (then closes) the engine auto picks, as a test would.
 */
#ifndef XP_PROBE_H
#define XP_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "loader/live_out.h" /* enum xp_probe_state */

struct xp_probe_item {
	const char *key;    /* JSON name, e.g. "live_frames" */
	const char *title;  /* text report's label */
	enum xp_probe_state state;
	char reason[384];
};

/* What the kernel itself can do (the interface lines build on these). */
enum { XP_PK_BTF, XP_PK_PRIV, XP_PK_LIVE, XP_PK_FRAGS, XP_PK_TSTAMP, XP_PK_N };
struct xp_probe_kernel {
	char release[65];
	struct xp_probe_item item[XP_PK_N];
	bool can_load;      /* a BPF program loaded at all */
	/* What a server keeps after setup with the default --test-ports (util/privdrop.h),
	 * bit N = capability N, and which of them this process has (effective). */
	uint64_t server_caps, server_caps_have;
};

enum { XP_PI_NATIVE, XP_PI_LIVE, XP_PI_ZC, XP_PI_FRAGS, XP_PI_TSTAMP, XP_PI_N };
struct xp_probe_iface {
	char name[16];
	int ifindex;
	char driver[32];    /* ethtool's driver name, "" if it has none */
	unsigned mtu, rx_queues, tx_queues;
	bool up, carrier;
	struct xp_probe_item item[XP_PI_N];
	char auto_engine[16];   /* what auto opened, "none" if nothing could run */
	char auto_reason[512];
};

void xp_probe_kernel(struct xp_probe_kernel *k);
/* 0, or -errno with err set (no such interface). */
int xp_probe_iface(const struct xp_probe_kernel *k, const char *ifname, int debug, struct xp_probe_iface *p,
		   char *err, size_t errlen);

/* Reports (probe/output.c). */
void xp_probe_print_text(FILE *f, const struct xp_probe_kernel *k, const struct xp_probe_iface *ifs, unsigned n);
int xp_probe_print_json(FILE *f, const struct xp_probe_kernel *k, const struct xp_probe_iface *ifs, unsigned n);

/* The --probe role, of interface dev ("": every interface that is up), -d
 * debug lines, -J: exit status (0, or 1 for a runtime error). */
int xp_probe_run(const char *dev, int debug, bool json);

/* For the checks: set an item, reason printf-style. */
__attribute__((format(printf, 4, 5)))
void xp_probe_set(struct xp_probe_item *it, const char *key, enum xp_probe_state st, const char *fmt, ...);

#endif
