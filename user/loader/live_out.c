/*
 * Live frames out of a device: the driver's xdp-features (ndo-xmit), and for
 * the probe a dropped frame through BPF_PROG_RUN. See live_out.h.
 */
#include <linux/ethtool.h>
#include <stdarg.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "loader/live_out.h"
#include "loader/probe_prog.h"
#include "net/xdp_features.h"

void xp_probe_driver(const char *ifname, char *buf, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	buf[0] = '\0';
	if (s < 0)
		return;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = (void *)&di;
	if (!ioctl(s, SIOCETHTOOL, &ifr))
		snprintf(buf, len, "%s", di.driver);
	close(s);
}

static void set(struct xp_live_out *o, enum xp_probe_state st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set(struct xp_live_out *o, enum xp_probe_state st, const char *fmt, ...)
{
	va_list ap;
	o->state = st;
	va_start(ap, fmt);
	vsnprintf(o->reason, sizeof(o->reason), fmt, ap);
	va_end(ap);
}

void xp_live_out(int ifindex, const char *ifname, bool run, const char *way_out, struct xp_live_out *o)
{
	memset(o, 0, sizeof(*o));
	xp_probe_driver(ifname, o->driver, sizeof(o->driver));
	o->veth = !strcmp(o->driver, "veth");
	const char *drv = *o->driver ? o->driver : "its driver";

	if (run) {
		char perr[256];
		int fd = xp_probe_prog_load(0, perr, sizeof(perr));
		int lr = fd >= 0 ? xp_probe_live_run(fd, ifindex) : fd;
		if (fd >= 0)
			close(fd);
		if (lr) {
			set(o, XP_PROBE_NO, "BPF_PROG_RUN refused %s as the live-frames device: %s", ifname, strerror(-lr));
			return;
		}
	}
	struct xp_xdp_features f;
	char ferr[256] = "";
	xp_xdp_features_get(ifindex, &f, ferr, sizeof(ferr));
	if (!f.known)
		set(o, XP_PROBE_UNKNOWN, "BPF_PROG_RUN takes %s, but %s: whether it transmits XDP frames is not known", ifname,
		    *ferr ? ferr : "the kernel has no netdev netlink family (Linux 6.3 or later has it)");
	else if (f.xdp & XP_XDP_ACT_NDO_XMIT)
		set(o, XP_PROBE_YES, "BPF_PROG_RUN takes %s and %s transmits XDP frames (xdp-features: ndo-xmit)", ifname, drv);
	else if (o->veth)
		set(o, XP_PROBE_NO, "%s does not transmit XDP frames now (no ndo-xmit in xdp-features): live frames would be "
		    "dropped; a veth transmits them once its peer has an XDP program or GRO on (ethtool -K PEER gro on)", ifname);
	else
		set(o, XP_PROBE_NO, "%s (%s) does not transmit XDP frames (no ndo-xmit in xdp-features): live frames would be "
		    "dropped; use %s", ifname, drv, way_out);
}
