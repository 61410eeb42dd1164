/*
 * The device table's live entries (client.h, xp_client_device_table), for
 * the connection searches' drained start (connsearch/run.c): a conntrack
 * dump (ctnetlink, as conntrack -L does) in the device's namespace, counted.
 * Not nf_conntrack_count: that includes entries whose timeout has passed
 * until the kernel's garbage collector gets to them, which can take tens of
 * seconds on an idle table; a dump skips them (and has the kernel drop them),
 * so it counts what the device really still tracks.
 */
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "net/in_netns.h"

static int count_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(*(uint64_t *)data)++;
	return MNL_CB_OK;
}

static int dump_count(uint64_t *count)
{
	struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
	if (!nl)
		return -errno;
	int r = 0;
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		r = -errno;
		goto out;
	}
	char *buf = malloc(MNL_SOCKET_BUFFER_SIZE);
	if (!buf) {
		r = -ENOMEM;
		goto out;
	}
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = (NFNL_SUBSYS_CTNETLINK << 8) | IPCTNL_MSG_CT_GET;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = (unsigned)time(NULL);
	struct nfgenmsg *nfh = mnl_nlmsg_put_extra_header(nlh, sizeof(*nfh));
	nfh->nfgen_family = AF_UNSPEC;
	nfh->version = NFNETLINK_V0;
	nfh->res_id = 0;
	unsigned seq = nlh->nlmsg_seq, portid = mnl_socket_get_portid(nl);
	*count = 0;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		r = -errno;
	} else {
		ssize_t n;
		while ((n = mnl_socket_recvfrom(nl, buf, MNL_SOCKET_BUFFER_SIZE)) > 0) {
			int c = mnl_cb_run(buf, (size_t)n, seq, portid, count_cb, count);
			if (c <= MNL_CB_STOP) {
				if (c < 0)
					r = -errno;
				break;
			}
		}
		if (n < 0)
			r = -errno;
	}
	free(buf);
out:
	mnl_socket_close(nl);
	return r;
}

struct table_arg {
	const char *netns;
	uint64_t *count;
};

/* Inside the device's namespace: its live entries. */
static int table_here(void *arg, char *err, size_t errlen)
{
	const struct table_arg *a = arg;
	int r = dump_count(a->count);
	if (r)
		snprintf(err, errlen, "cannot list the conntrack table of '%s': %s", a->netns, strerror(-r));
	return r;
}

int xp_client_device_table(const char *netns, uint64_t *count, char *err, size_t errlen)
{
	struct table_arg a = { .netns = netns, .count = count };
	return xp_in_netns(netns, table_here, &a, err, errlen);
}
