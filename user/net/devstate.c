/* A device namespace's conntrack table and interface drops (see devstate.h). */
#include "net/devstate.h"
#include "net/in_netns.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/route.h"

static int read_u64_file(const char *path, uint64_t *v)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	unsigned long long x;
	int ok = fscanf(f, "%llu", &x) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*v = x;
	return 0;
}

/*
 * /proc/net/stat/nf_conntrack: a header of column names, then one line of
 * hex values per CPU. Columns are found by name: their order differs
 * between kernels. thread-self: the namespace of this thread, not the
 * process's first one.
 */
static int ct_drops(uint64_t *out)
{
	FILE *f = fopen("/proc/thread-self/net/stat/nf_conntrack", "r");
	if (!f)
		return -errno;
	char line[1024];
	int want[64], nw = 0;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -EINVAL;
	}
	int col = 0;
	for (char *save, *t = strtok_r(line, " \n", &save); t && col < 64; t = strtok_r(NULL, " \n", &save), col++)
		if (!strcmp(t, "drop") || !strcmp(t, "early_drop") || !strcmp(t, "insert_failed"))
			want[nw++] = col;
	uint64_t sum = 0;
	while (fgets(line, sizeof(line), f)) {
		col = 0;
		for (char *save, *t = strtok_r(line, " \n", &save); t; t = strtok_r(NULL, " \n", &save), col++)
			for (int i = 0; i < nw; i++)
				if (want[i] == col)
					sum += strtoull(t, NULL, 16);
	}
	fclose(f);
	*out = sum;
	return 0;
}

struct drops_ctx {
	int ifindex;     /* 0: every interface but loopback */
	int tx;          /* count tx_dropped too */
	uint64_t sum;
};

static int link_cb(const struct nlmsghdr *nlh, void *data)
{
	struct drops_ctx *c = data;
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *a;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ifi))
		return MNL_CB_OK;
	if ((c->ifindex && ifi->ifi_index != c->ifindex) || (!c->ifindex && ifi->ifi_type == 772 /* ARPHRD_LOOPBACK */))
		return MNL_CB_OK;
	mnl_attr_for_each(a, nlh, sizeof(*ifi)) {
		if (mnl_attr_get_type(a) != IFLA_STATS64 ||
		    mnl_attr_get_payload_len(a) < sizeof(struct rtnl_link_stats64))
			continue;
		struct rtnl_link_stats64 st;
		memcpy(&st, mnl_attr_get_payload(a), sizeof(st));
		c->sum += st.rx_dropped + st.rx_missed_errors + (c->tx ? st.tx_dropped : 0);
	}
	return MNL_CB_OK;
}

static int link_drops(struct drops_ctx *c)
{
	char buf[256] = { 0 };
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	return xp_nl_talk(nlh, link_cb, c);
}

int xp_link_rx_drops(int ifindex, uint64_t *drops)
{
	struct drops_ctx c = { .ifindex = ifindex };
	int r = link_drops(&c);
	if (!r)
		*drops = c.sum;
	return r;
}

struct devstate_arg {
	const char *netns;
	struct xp_devstate *s;
};

/* Inside the device's namespace: its conntrack figures and its interfaces' drops. */
static int devstate_here(void *arg, char *err, size_t errlen)
{
	const struct devstate_arg *a = arg;
	struct xp_devstate *s = a->s;
	memset(s, 0, sizeof(*s));
	/* A namespace without conntrack (no firewall) has none of these: zeroes, not an error. */
	read_u64_file("/proc/sys/net/netfilter/nf_conntrack_count", &s->ct_count);
	read_u64_file("/proc/sys/net/netfilter/nf_conntrack_max", &s->ct_max);
	ct_drops(&s->ct_drops);
	struct drops_ctx c = { .tx = 1 };
	int r = link_drops(&c);
	s->if_drops = c.sum;
	if (r)
		snprintf(err, errlen, "cannot read the interfaces of namespace '%s': %s", a->netns, strerror(-r));
	return r;
}

int xp_devstate_read(const char *netns, struct xp_devstate *s, char *err, size_t errlen)
{
	struct devstate_arg a = { .netns = netns, .s = s };
	return xp_in_netns(netns, devstate_here, &a, err, errlen);
}
