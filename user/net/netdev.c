/* Network interface facts over rtnetlink (libmnl), plus ethtool for queues. */
#include "net/netdev.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/ethtool.h>
#include <linux/if_addr.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/route.h"

#define REQ_BUFSZ 512

/* ---- links ---- */

struct link_ctx {
	struct xp_netdev *l;
	bool got;
	unsigned nrx, ntx;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct link_ctx *c = data;
	const struct ifinfomsg *ifi;
	const struct nlattr *attr;
	struct xp_netdev *l = c->l;

	if (nlh->nlmsg_type != RTM_NEWLINK || c->got)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	ifi = mnl_nlmsg_get_payload(nlh);
	c->got = true;
	l->ifindex = ifi->ifi_index;
	l->up = !!(ifi->ifi_flags & IFF_UP);
	l->carrier = !!(ifi->ifi_flags & IFF_RUNNING);
	l->loopback = !!(ifi->ifi_flags & IFF_LOOPBACK);
	mnl_attr_for_each(attr, nlh, sizeof(*ifi)) {
		size_t len = mnl_attr_get_payload_len(attr);

		switch (mnl_attr_get_type(attr)) {
		case IFLA_IFNAME:
			if (mnl_attr_validate(attr, MNL_TYPE_NUL_STRING) == 0) {
				strncpy(l->name, mnl_attr_get_str(attr), sizeof(l->name) - 1);
				l->name[sizeof(l->name) - 1] = 0;
			}
			break;
		case IFLA_ADDRESS:
			if (len == 6)
				memcpy(l->mac, mnl_attr_get_payload(attr), 6);
			break;
		case IFLA_MTU:
			if (len >= 4)
				l->mtu = mnl_attr_get_u32(attr);
			break;
		case IFLA_NUM_RX_QUEUES:
			if (len >= 4)
				c->nrx = mnl_attr_get_u32(attr);
			break;
		case IFLA_NUM_TX_QUEUES:
			if (len >= 4)
				c->ntx = mnl_attr_get_u32(attr);
			break;
		}
	}
	return MNL_CB_OK;
}

/* Queues in use per ETHTOOL_GCHANNELS; 0 if the driver does not say. */
static int ethtool_channels(const char *name, unsigned *rx, unsigned *tx)
{
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr;
	int fd, ret = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = (void *)&ch;
	if (ioctl(fd, SIOCETHTOOL, &ifr) < 0)
		ret = -errno;
	close(fd);
	if (ret)
		return ret;
	*rx = ch.rx_count + ch.combined_count;
	*tx = ch.tx_count + ch.combined_count;
	return 0;
}

static int link_get(int ifindex, const char *name, struct xp_netdev *l, bool queues)
{
	char buf[REQ_BUFSZ] = { 0 };
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;
	struct link_ctx c = { .l = l };
	unsigned rx = 0, tx = 0;
	int ret;

	memset(l, 0, sizeof(*l));
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	if (name)
		mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	mnl_attr_put_u32(nlh, IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);

	ret = xp_nl_talk(nlh, link_cb, &c);
	if (ret)
		return ret;
	if (!c.got)
		return -ENODEV;
	if (!queues)
		return 0;
	l->rx_queues = c.nrx;
	l->tx_queues = c.ntx;
	if (ethtool_channels(l->name, &rx, &tx) == 0 && rx && tx) {
		l->rx_queues = rx;
		l->tx_queues = tx;
	}
	return 0;
}

int xp_netdev_by_index(int ifindex, struct xp_netdev *l)
{
	if (ifindex <= 0) {
		memset(l, 0, sizeof(*l));
		return -ENODEV;
	}
	return link_get(ifindex, NULL, l, true);
}

int xp_netdev_by_name(const char *name, struct xp_netdev *l)
{
	if (!name || !*name || strlen(name) >= sizeof(l->name)) {
		memset(l, 0, sizeof(*l));
		return -ENODEV;
	}
	return link_get(0, name, l, true);
}

/* ---- addresses ---- */

struct addr_ctx {
	int ifindex;             /* filter, or 0 */
	const struct xp_addr *want; /* search, or NULL */
	struct xp_addr *out;
	int max, count;
	int found_ifindex;
};

static int addr_cb(const struct nlmsghdr *nlh, void *data)
{
	struct addr_ctx *c = data;
	const struct ifaddrmsg *ifa;
	const struct nlattr *attr;
	const void *local = NULL, *address = NULL;
	size_t local_len = 0, address_len = 0, want;
	uint32_t flags;
	struct xp_addr a = { 0 };

	if (nlh->nlmsg_type != RTM_NEWADDR)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifa))
		return MNL_CB_OK;
	ifa = mnl_nlmsg_get_payload(nlh);
	if (c->ifindex && (int)ifa->ifa_index != c->ifindex)
		return MNL_CB_OK;
	if (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6)
		return MNL_CB_OK;
	flags = ifa->ifa_flags;
	mnl_attr_for_each(attr, nlh, sizeof(*ifa)) {
		switch (mnl_attr_get_type(attr)) {
		case IFA_LOCAL:
			local = mnl_attr_get_payload(attr);
			local_len = mnl_attr_get_payload_len(attr);
			break;
		case IFA_ADDRESS:
			address = mnl_attr_get_payload(attr);
			address_len = mnl_attr_get_payload_len(attr);
			break;
		case IFA_FLAGS:
			if (mnl_attr_get_payload_len(attr) >= 4)
				flags = mnl_attr_get_u32(attr);
			break;
		}
	}
	/* On point-to-point links IFA_ADDRESS is the peer; IFA_LOCAL is ours. */
	if (!local) {
		local = address;
		local_len = address_len;
	}
	want = ifa->ifa_family == AF_INET ? 4 : 16;
	if (!local || local_len != want)
		return MNL_CB_OK;
	a.family = ifa->ifa_family;
	memcpy(&a.v6, local, want);

	if (c->want) {
		if (!c->found_ifindex && xp_addr_eq(&a, c->want))
			c->found_ifindex = (int)ifa->ifa_index;
		return MNL_CB_OK;
	}
	if (flags & IFA_F_DADFAILED)
		return MNL_CB_OK;
	if (c->count < c->max && c->out)
		c->out[c->count++] = a;
	return MNL_CB_OK;
}

static int addr_dump(int family, struct addr_ctx *c)
{
	char buf[REQ_BUFSZ] = { 0 };
	struct nlmsghdr *nlh;
	struct ifaddrmsg *ifa;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = family;
	return xp_nl_talk(nlh, addr_cb, c);
}

int xp_netdev_addrs(int ifindex, int family, struct xp_addr *out, int max)
{
	struct addr_ctx c = { .ifindex = ifindex, .out = out, .max = max };
	struct xp_netdev l;
	int ret;

	if (family != 0 && family != AF_INET && family != AF_INET6)
		return -EAFNOSUPPORT;
	if (ifindex <= 0)
		return -ENODEV;
	if (max < 0)
		return -EINVAL;
	ret = addr_dump(family, &c);
	if (ret)
		return ret;
	if (c.count == 0 && (ret = link_get(ifindex, NULL, &l, false)))
		return ret;
	return c.count;
}

int xp_ifindex_of_addr(const struct xp_addr *a)
{
	struct addr_ctx c = { .want = a };
	int ret;

	if (!a || (a->family != AF_INET && a->family != AF_INET6))
		return -EAFNOSUPPORT;
	ret = addr_dump(a->family, &c);
	if (ret)
		return ret;
	return c.found_ifindex ? c.found_ifindex : -EADDRNOTAVAIL;
}
