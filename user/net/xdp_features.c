/*
 * The netdev generic-netlink family over libmnl: resolve the family's id
 * (CTRL_CMD_GETFAMILY "netdev"), then NETDEV_CMD_DEV_GET for one ifindex.
 * One short-lived socket per call with a receive timeout, like net/route.c.
 */
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/genetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "net/xdp_features.h"

/* From the kernel's uapi linux/netdev.h (6.3+), not in Debian 12's headers. */
#define NETDEV_FAMILY_NAME "netdev"
#define NETDEV_CMD_DEV_GET 1
enum {
	NETDEV_A_DEV_IFINDEX = 1,
	NETDEV_A_DEV_PAD,
	NETDEV_A_DEV_XDP_FEATURES,
	NETDEV_A_DEV_XDP_ZC_MAX_SEGS,
	NETDEV_A_DEV_XDP_RX_METADATA_FEATURES,
};

struct talk {
	struct mnl_socket *nl;
	unsigned seq, portid;
	char buf[16384]; /* MNL_SOCKET_BUFFER_SIZE is a run-time value; one reply fits easily */
};

static int talk_open(struct talk *t)
{
	t->nl = mnl_socket_open(NETLINK_GENERIC);
	if (!t->nl)
		return -errno;
	/* Bounded waits: a kernel that never answers must not hang the probe. */
	struct timeval tv = { .tv_sec = 2 };
	setsockopt(mnl_socket_get_fd(t->nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(t->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno;
		mnl_socket_close(t->nl);
		return -e;
	}
	t->portid = mnl_socket_get_portid(t->nl);
	t->seq = (unsigned)time(NULL);
	return 0;
}

/* Send the request in t->buf and run cb over the replies until the ACK. */
static int talk_run(struct talk *t, struct nlmsghdr *nlh, mnl_cb_t cb, void *data)
{
	nlh->nlmsg_seq = ++t->seq;
	if (mnl_socket_sendto(t->nl, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(t->nl, t->buf, sizeof(t->buf));
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ? -ETIMEDOUT : -errno;
		int r = mnl_cb_run(t->buf, (size_t)n, t->seq, t->portid, cb, data);
		if (r < 0)
			return -errno;
		if (r == MNL_CB_STOP)
			return 0;
	}
}

static struct nlmsghdr *genl_request(struct talk *t, uint16_t family, uint8_t cmd, uint8_t version)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(t->buf);
	nlh->nlmsg_type = family;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	struct genlmsghdr *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
	g->cmd = cmd;
	g->version = version;
	return nlh;
}

static int family_attr(const struct nlattr *a, void *data)
{
	if (mnl_attr_get_type(a) == CTRL_ATTR_FAMILY_ID && !mnl_attr_validate(a, MNL_TYPE_U16))
		*(uint16_t *)data = mnl_attr_get_u16(a);
	return MNL_CB_OK;
}

static int family_cb(const struct nlmsghdr *nlh, void *data)
{
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), family_attr, data);
	return MNL_CB_OK;
}

static int dev_attr(const struct nlattr *a, void *data)
{
	struct xp_xdp_features *f = data;
	switch (mnl_attr_get_type(a)) {
	case NETDEV_A_DEV_XDP_FEATURES:
		if (!mnl_attr_validate(a, MNL_TYPE_U64))
			f->xdp = mnl_attr_get_u64(a);
		break;
	case NETDEV_A_DEV_XDP_RX_METADATA_FEATURES:
		if (!mnl_attr_validate(a, MNL_TYPE_U64))
			f->rx_meta = mnl_attr_get_u64(a);
		break;
	case NETDEV_A_DEV_XDP_ZC_MAX_SEGS:
		if (!mnl_attr_validate(a, MNL_TYPE_U32))
			f->zc_max_segs = mnl_attr_get_u32(a);
		break;
	}
	return MNL_CB_OK;
}

static int dev_cb(const struct nlmsghdr *nlh, void *data)
{
	struct xp_xdp_features *f = data;
	f->known = true;
	mnl_attr_parse(nlh, sizeof(struct genlmsghdr), dev_attr, data);
	return MNL_CB_OK;
}

int xp_xdp_features_get(int ifindex, struct xp_xdp_features *f, char *err, size_t errlen)
{
	struct talk t;
	uint16_t family = 0;

	memset(f, 0, sizeof(*f));
	int r = talk_open(&t);
	if (r) {
		snprintf(err, errlen, "cannot open a generic netlink socket: %s", strerror(-r));
		return r;
	}
	struct nlmsghdr *nlh = genl_request(&t, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	mnl_attr_put_strz(nlh, CTRL_ATTR_FAMILY_NAME, NETDEV_FAMILY_NAME);
	r = talk_run(&t, nlh, family_cb, &family);
	if (r == -ENOENT || (!r && !family)) { /* a kernel before 6.3: no netdev family */
		mnl_socket_close(t.nl);
		return 0;
	}
	if (r) {
		snprintf(err, errlen, "generic netlink: cannot look up the netdev family: %s", strerror(-r));
		mnl_socket_close(t.nl);
		return r;
	}
	nlh = genl_request(&t, family, NETDEV_CMD_DEV_GET, 1);
	mnl_attr_put_u32(nlh, NETDEV_A_DEV_IFINDEX, (uint32_t)ifindex);
	r = talk_run(&t, nlh, dev_cb, f);
	mnl_socket_close(t.nl);
	if (r) {
		f->known = false;
		snprintf(err, errlen, "netdev family: no answer for ifindex %d: %s", ifindex, strerror(-r));
	}
	return r;
}
