/*
 * A rate above the line rate is refused (otg/line_rate.h). The port's line
 * rate: --line-rate when given (the link's rate, which may be below the
 * NIC's, e.g. a 10G NIC in a 1G switch port), else the sending interface's
 * speed from its driver. Virtual drivers report a nominal speed (veth says
 * 10000 Mb/s and carries far more): theirs is no line rate, so on a veth
 * only --line-rate refuses. A port whose interface the location does not
 * name sends where the route goes: only --line-rate applies there too.
 */
#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "otg/line_rate.h"
#include "util/units.h"
#include "util/values.h"

/* Drivers whose speed is a constant or a setting, not what the link carries. */
static const char *const nominal[] = { "veth", "tun", "dummy", "ifb", "vxlan", "bridge", "macsec", NULL };

static int ethtool(int fd, const char *ifname, void *data)
{
	struct ifreq ifr;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

double otg_iface_speed_bps(const char *ifname, char *drv, size_t drvlen)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	/* The kernel's link settings and, after them, room for its link-mode masks (3 sets of nwords u32: the size
	 * it asks for in the first call). */
	enum { MASK_WORDS = 3 * 128 };
	__u32 buf[(sizeof(struct ethtool_link_settings) + MASK_WORDS * sizeof(__u32)) / sizeof(__u32)];
	struct ethtool_link_settings *ls = (struct ethtool_link_settings *)buf;
	double bps = 0;
	if (drvlen)
		drv[0] = '\0';
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	if (!ethtool(fd, ifname, &di)) {
		snprintf(drv, drvlen, "%s", di.driver);
		for (unsigned i = 0; nominal[i]; i++)
			if (!strcmp(di.driver, nominal[i]))
				goto out;
	}
	memset(buf, 0, sizeof(buf));
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	/* The handshake: nwords 0 asks, the kernel answers with -nwords. */
	if (ethtool(fd, ifname, ls) || ls->link_mode_masks_nwords >= 0 || -ls->link_mode_masks_nwords * 3 > MASK_WORDS)
		goto out;
	ls->link_mode_masks_nwords = (__s8)-ls->link_mode_masks_nwords;
	ls->cmd = ETHTOOL_GLINKSETTINGS;
	if (ethtool(fd, ifname, ls))
		goto out;
	if (ls->speed && ls->speed != (__u32)SPEED_UNKNOWN)
		bps = (double)ls->speed * 1e6;
out:
	close(fd);
	return bps;
}

/* flows[i].rate's member that set the rate ("rate" itself when the model's default). */
static void rate_path(struct json_object *flows, unsigned i, char *buf, size_t len)
{
	static const char *const keys[] = { "pps", "bps", "kbps", "mbps", "gbps", "percentage", NULL };
	struct json_object *f = json_object_array_get_idx(flows, i), *r = NULL, *c = NULL;
	const char *k = NULL;
	if (json_object_object_get_ex(f, "rate", &r)) {
		if (json_object_object_get_ex(r, "choice", &c) && json_object_is_type(c, json_type_string))
			k = json_object_get_string(c);
		for (unsigned j = 0; !k && keys[j]; j++)
			if (json_object_object_get_ex(r, keys[j], NULL))
				k = keys[j];
	}
	snprintf(buf, len, "flows[%u].rate%s%s", i, k ? "." : "", k ? k : "");
}

/* A flow's bit rate on the wire, at the smallest frames it may send (so a refusal is never a guess). */
static double flow_l1_bps(const struct xp_stream *t)
{
	bool one_size = t->frame_size && !t->mix.n && !t->size_pat_set;
	double fs = one_size ? t->frame_size : 0;
	switch (t->rate.unit) {
	case XP_RATE_PPS:
		return t->rate.value * ((one_size ? fs : XP_FRAME_SIZE_MIN) + 20) * 8;
	case XP_RATE_BPS_L1:
		return t->rate.value;
	case XP_RATE_BPS_L2:
		/* Preamble and gap add 20 bytes a frame; the largest frames add the least of it. */
		return t->rate.value * (one_size ? (fs + 20) / fs : 1.0);
	default:
		return 0;
	}
}

int otg_line_check(const struct otg_plan *p, const struct xp_spec *all, struct json_object *flows,
		   const struct xp_otg_opts *o, char *why, size_t len)
{
	for (unsigned g = 0; g < p->ngroups; g++) {
		const struct otg_port *pt = &p->ports[p->groups[g].tx];
		char src[96], drv[32], a[32], b[32], path[64];
		double line = o->line_bps;
		snprintf(src, sizeof(src), "--line-rate");
		if (!(line > 0) && pt->loc.iface[0]) {
			line = otg_iface_speed_bps(pt->loc.iface, drv, sizeof(drv));
			snprintf(src, sizeof(src), "%s's speed (%s)", pt->loc.iface, drv);
		}
		if (!(line > 0))
			continue; /* no line rate known: the engine sends what it can */
		double sum = 0;
		for (unsigned i = 0; i < p->nflows; i++) {
			if (p->flows[i].tx != p->groups[g].tx)
				continue;
			double bps = flow_l1_bps(&all->traffic[i]);
			sum += bps;
			rate_path(flows, i, path, sizeof(path));
			if (bps > line * (1 + 1e-9)) {
				snprintf(why, len, "%s: %sbit/s on the wire is above port %s's line rate of %sbit/s "
						"(%s): lower the rate", path, fmt_si(bps, a, sizeof(a)), pt->name,
						fmt_si(line, b, sizeof(b)), src);
				return -1;
			}
			if (sum > line * (1 + 1e-9)) {
				snprintf(why, len, "%s: port %s's flows add up to %sbit/s on the wire, above its line "
						"rate of %sbit/s (%s): lower their rates", path, pt->name,
						fmt_si(sum, a, sizeof(a)), fmt_si(line, b, sizeof(b)), src);
				return -1;
			}
		}
	}
	return 0;
}
