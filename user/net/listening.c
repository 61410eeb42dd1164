/* Listening and bound ports over NETLINK_SOCK_DIAG (libmnl). See listening.h. */
#include "net/listening.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#define TCP_LISTEN_STATE 10 /* TCP_LISTEN in the kernel's enum; netinet/tcp.h spells it differently */
#define BUFSZ 32768

static int on_msg(const struct nlmsghdr *nlh, void *data)
{
	struct xp_portset *out = data;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(struct inet_diag_msg))
		return MNL_CB_ERROR;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	xp_portset_add(out, ntohs(m->id.idiag_sport));
	return MNL_CB_OK;
}

/* One dump (family, protocol) into out. 0 or -errno. */
static int dump(int family, int proto, struct xp_portset *out)
{
	char *buf = malloc(BUFSZ);
	struct mnl_socket *nl = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	int ret = 0;
	if (!buf || !nl) {
		ret = buf ? -errno : -ENOMEM;
		goto out;
	}
	/* A dump of a few thousand sockets takes milliseconds; never hang on one. */
	struct timeval tv = { .tv_sec = 1 };
	setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	unsigned seq = (unsigned)time(NULL);
	nlh->nlmsg_seq = seq;
	struct inet_diag_req_v2 *req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)family;
	req->sdiag_protocol = (uint8_t)proto;
	/* TCP: listeners only. UDP: any state (an unconnected bound socket is "close"). */
	req->idiag_states = proto == IPPROTO_TCP ? 1u << TCP_LISTEN_STATE : ~0u;
	if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	unsigned portid = mnl_socket_get_portid(nl);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, BUFSZ);
		if (n < 0) {
			ret = errno == EAGAIN ? -ETIMEDOUT : -errno;
			break;
		}
		int r = mnl_cb_run(buf, (size_t)n, seq, portid, on_msg, out);
		if (r == MNL_CB_STOP)
			break;
		if (r < 0) {
			ret = errno ? -errno : -EPROTO;
			break;
		}
	}
out:
	if (nl)
		mnl_socket_close(nl);
	free(buf);
	return ret;
}

int xp_ports_in_use(int proto, struct xp_portset *out)
{
	memset(out, 0, sizeof(*out));
	int r = dump(AF_INET, proto, out);
	/* A host without IPv6 has no IPv6 sockets to find. */
	if (!r) {
		int r6 = dump(AF_INET6, proto, out);
		if (r6 && r6 != -ENOENT && r6 != -EAFNOSUPPORT)
			r = r6;
	}
	return r;
}
