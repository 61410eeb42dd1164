/*
 * A flow above its port's line rate is refused (issue 27): the port's line
 * rate is --line-rate when the controller was given one, else the sending
 * interface's speed where its driver knows a real one (ETHTOOL_GLINKSETTINGS).
 */
#ifndef XP_OTG_LINE_RATE_H
#define XP_OTG_LINE_RATE_H

#include <stddef.h>

#include "otg/ctl_internal.h"

struct json_object;

/*
 * An interface's link speed in bit/s from its driver (ethtool), 0 when it
 * has none or only a nominal one (veth, tun, dummy, ifb: their "speed" is
 * not what they carry); drv gets the driver's name ("" unknown).
 */
double otg_iface_speed_bps(const char *ifname, char *drv, size_t drvlen);

/*
 * Each sending port's flows against its line rate: a flow whose rate on the
 * wire (L1: preamble, FCS and gap counted; at its smallest possible frames)
 * is above it, or the flow whose rate takes the port's sum above it, is
 * refused by its rate's JSON path (flows[i].rate.gbps: ...). flows is the
 * config's flows array, all the specs the flow reader made of it.
 * 0, or -1 with the one-line reason in why (the caller's 400).
 */
int otg_line_check(const struct otg_plan *p, const struct xp_spec *all, struct json_object *flows,
		   const struct xp_otg_opts *o, char *why, size_t len);

#endif
