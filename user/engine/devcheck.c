/*
 * The engines' device check (devcheck.h). Only live frames depend on the
 * device's driver: AF_XDP's copy mode sends through the driver's ordinary
 * transmit path, which every device has (checked on macvlan, VXLAN and a
 * bridge), and sockets go through the kernel's routing.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>

#include "engine/devcheck.h"
#include "engine/live_prog.h"
#include "loader/live_out.h"

int xp_engine_dev_check(const struct xp_engine_ops *ops, const struct xp_engine_cfg *cfg, char *err, size_t errlen)
{
	if (ops != &xp_engine_live || cfg->ifindex <= 0)
		return 0;
	char name[IF_NAMESIZE] = "";
	if (cfg->ifname[0])
		snprintf(name, sizeof(name), "%s", cfg->ifname);
	else if (!if_indextoname((unsigned)cfg->ifindex, name))
		return 0; /* gone: opening the engine says so */
	struct xp_live_out lo;
	xp_live_out(cfg->ifindex, name, false, xp_gen_way_out(cfg->kind != XP_TEST_STREAM), &lo);
	/* A veth's "no" lasts only until its peer has an XDP program (the server's, attached when the
	 * test starts) or GRO; a kernel that cannot tell (no netdev family) is not second-guessed. */
	if (lo.state != XP_PROBE_NO || lo.veth)
		return 0;
	snprintf(err, errlen, "%s", lo.reason);
	return -EOPNOTSUPP;
}
