/*
 * Do XDP live frames leave by a device? The --probe line "live frames out"
 * and the check a test makes before it opens the live engine (engine/
 * devcheck.c) are this one answer, so that a test never sends where the
 * probe would say its frames are dropped.
 *
 * BPF_PROG_RUN takes any device as the live frames' ingress device, and
 * XDP_TX hands them to its driver's ndo_xdp_xmit. Upper devices (macvlan,
 * VXLAN, a bridge) have none: the kernel drops every frame, counts nothing
 * the sender sees, and the test would report 100 % loss with no cause.
 */
#ifndef XP_PROBE_LIVE_OUT_H
#define XP_PROBE_LIVE_OUT_H

#include <stdbool.h>
#include <stddef.h>

/* A check's answer (--probe's every line, and this one). */
enum xp_probe_state { XP_PROBE_NO = 0, XP_PROBE_YES, XP_PROBE_UNKNOWN };

struct xp_live_out {
	enum xp_probe_state state; /* YES, NO, or UNKNOWN (a kernel without the netdev family) */
	/* A veth says no while its peer has neither an XDP program nor GRO on: that
	 * changes once the server attaches its program there, so a test goes ahead. */
	bool veth;
	char driver[32];           /* ethtool's driver name, "" if it has none */
	char reason[384];
};

/* ethtool's driver name of ifname into buf ("" if it has none). */
void xp_probe_driver(const char *ifname, char *buf, size_t len);

/*
 * The answer for ifindex (named ifname, in the calling thread's network
 * namespace). run: also run a dropped frame through BPF_PROG_RUN with it as
 * the live-frames device (the probe does; a test's engine does that itself).
 * way_out: the option that avoids live frames, for the reason ("--engine xsk").
 * The kernel's own live-frames support is the caller's to check first.
 */
void xp_live_out(int ifindex, const char *ifname, bool run, const char *way_out, struct xp_live_out *o);

#endif
