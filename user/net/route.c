/* Route, neighbour and source-address lookups over rtnetlink (libmnl). */
#include "net/route.h"

#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_BINDTOIFINDEX
#define SO_BINDTOIFINDEX 62
#endif

#define NL_RECV_TIMEOUT_MS 1000 /* one recv() */
#define NL_TOTAL_TIMEOUT_MS 3000 /* one whole exchange */
#define NL_BUFSZ 65536
#define REQ_BUFSZ 512

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int xp_nl_talk(struct nlmsghdr *req, xp_nl_cb cb, void *data)
{
	static unsigned int seq_counter;
	struct mnl_socket *nl;
	unsigned int seq, portid;
	struct timeval tv = { .tv_sec = NL_RECV_TIMEOUT_MS / 1000,
			      .tv_usec = (NL_RECV_TIMEOUT_MS % 1000) * 1000 };
	int one = 1, ret = 0;
	long long deadline;
	char *buf;

	buf = malloc(NL_BUFSZ);
	if (!buf)
		return -ENOMEM;
	nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
	if (!nl) {
		ret = -errno;
		free(buf);
		return ret;
	}
	/* Optional niceties: short error messages, bounded blocking. */
	mnl_socket_setsockopt(nl, NETLINK_CAP_ACK, &one, sizeof(one));
	if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		ret = -errno;
		goto out;
	}
	if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
		ret = -errno;
		goto out;
	}
	portid = mnl_socket_get_portid(nl);
	seq = (unsigned int)time(NULL) ^ (__atomic_fetch_add(&seq_counter, 1, __ATOMIC_RELAXED) << 20);
	if (!seq)
		seq = 1;
	req->nlmsg_seq = seq;
	req->nlmsg_pid = 0;
	if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0) {
		ret = -errno;
		goto out;
	}
	deadline = now_ms() + NL_TOTAL_TIMEOUT_MS;
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(nl, buf, NL_BUFSZ);
		int r;

		if (n < 0) {
			ret = (errno == EAGAIN || errno == EWOULDBLOCK) ? -ETIMEDOUT : -errno;
			break;
		}
		if (n == 0) {
			ret = -EPIPE;
			break;
		}
		errno = 0;
		r = mnl_cb_run(buf, n, seq, portid, cb, data);
		if (r < 0) {
			ret = errno ? -errno : -EPROTO;
			break;
		}
		if (r == MNL_CB_STOP)
			break;
		if (now_ms() > deadline) {
			ret = -ETIMEDOUT;
			break;
		}
	}
out:
	mnl_socket_close(nl);
	free(buf);
	return ret;
}

static size_t family_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}

/* Fill a from a raw address attribute; ignores payloads of the wrong size. */
static void addr_from_raw(struct xp_addr *a, int family, const void *p, size_t len)
{
	size_t want = family_len(family);

	if (!want || len != want)
		return;
	memset(a, 0, sizeof(*a));
	a->family = family;
	memcpy(&a->v6, p, want);
}

static int check_addr(const struct xp_addr *a)
{
	return (a && family_len(a->family)) ? 0 : -EAFNOSUPPORT;
}

/* ---- routes ---- */

struct route_ctx {
	struct xp_route *rt;
	unsigned char type;
	bool got;
};

static int route_cb(const struct nlmsghdr *nlh, void *data)
{
	struct route_ctx *c = data;
	const struct rtmsg *rtm;
	const struct nlattr *attr;

	if (nlh->nlmsg_type != RTM_NEWROUTE || c->got)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*rtm))
		return MNL_CB_OK;
	rtm = mnl_nlmsg_get_payload(nlh);
	c->got = true;
	c->type = rtm->rtm_type;
	mnl_attr_for_each(attr, nlh, sizeof(*rtm)) {
		const void *p = mnl_attr_get_payload(attr);
		size_t len = mnl_attr_get_payload_len(attr);

		switch (mnl_attr_get_type(attr)) {
		case RTA_OIF:
			if (len >= sizeof(uint32_t))
				c->rt->oif = (int)mnl_attr_get_u32(attr);
			break;
		case RTA_GATEWAY:
			addr_from_raw(&c->rt->gateway, rtm->rtm_family, p, len);
			break;
		case RTA_VIA: /* e.g. an IPv4 route via an IPv6 gateway */
			if (len >= sizeof(struct rtvia)) {
				const struct rtvia *via = p;

				addr_from_raw(&c->rt->gateway, via->rtvia_family, via->rtvia_addr,
					      len - sizeof(*via));
			}
			break;
		case RTA_PREFSRC:
			addr_from_raw(&c->rt->prefsrc, rtm->rtm_family, p, len);
			break;
		}
	}
	return MNL_CB_OK;
}

static int route_get(const struct xp_addr *dst, struct xp_route *rt, unsigned char *type)
{
	char buf[REQ_BUFSZ] = { 0 };
	struct nlmsghdr *nlh;
	struct rtmsg *rtm;
	struct route_ctx c = { .rt = rt };
	int ret;

	memset(rt, 0, sizeof(*rt));
	if ((ret = check_addr(dst)))
		return ret;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	rtm = mnl_nlmsg_put_extra_header(nlh, sizeof(*rtm));
	rtm->rtm_family = dst->family;
	rtm->rtm_dst_len = family_len(dst->family) * 8;
	mnl_attr_put(nlh, RTA_DST, family_len(dst->family), &dst->v6);

	ret = xp_nl_talk(nlh, route_cb, &c);
	if (ret)
		return ret;
	if (!c.got)
		return -ENETUNREACH;
	if (type)
		*type = c.type;
	switch (c.type) {
	case RTN_UNREACHABLE:
		return -EHOSTUNREACH;
	case RTN_PROHIBIT:
		return -EACCES;
	case RTN_BLACKHOLE:
		return -EINVAL;
	case RTN_THROW:
		return -EAGAIN;
	}
	if (rt->oif <= 0)
		return -ENETUNREACH;
	return 0;
}

int xp_route_get(const struct xp_addr *dst, struct xp_route *rt)
{
	return route_get(dst, rt, NULL);
}

int xp_route_type(const struct xp_addr *dst, unsigned char *type)
{
	struct xp_route rt;
	unsigned char t = RTN_UNSPEC;
	int ret = route_get(dst, &rt, &t);

	/* route_get turns some types into errors; here every type is an
	 * answer. Only no reply at all is an error. */
	if (t != RTN_UNSPEC) {
		*type = t;
		return 0;
	}
	return ret ? ret : -ENETUNREACH;
}

/* ---- neighbours ---- */

#define NUD_USABLE (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

struct neigh_ctx {
	int ifindex;
	const struct xp_addr *addr;
	bool got;
	uint16_t state;
	bool has_mac;
	uint8_t mac[6];
};

static int neigh_cb(const struct nlmsghdr *nlh, void *data)
{
	struct neigh_ctx *c = data;
	const struct ndmsg *ndm;
	const struct nlattr *attr;
	struct xp_addr dst = { 0 };
	bool has_mac = false;
	uint8_t mac[6];

	if (nlh->nlmsg_type != RTM_NEWNEIGH || c->got)
		return MNL_CB_OK;
	if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*ndm))
		return MNL_CB_OK;
	ndm = mnl_nlmsg_get_payload(nlh);
	if (ndm->ndm_ifindex != c->ifindex || ndm->ndm_family != c->addr->family)
		return MNL_CB_OK;
	mnl_attr_for_each(attr, nlh, sizeof(*ndm)) {
		switch (mnl_attr_get_type(attr)) {
		case NDA_DST:
			addr_from_raw(&dst, ndm->ndm_family, mnl_attr_get_payload(attr),
				      mnl_attr_get_payload_len(attr));
			break;
		case NDA_LLADDR:
			if (mnl_attr_get_payload_len(attr) == 6) {
				memcpy(mac, mnl_attr_get_payload(attr), 6);
				has_mac = true;
			}
			break;
		}
	}
	if (!xp_addr_eq(&dst, c->addr))
		return MNL_CB_OK;
	c->got = true;
	c->state = ndm->ndm_state;
	c->has_mac = has_mac;
	if (has_mac)
		memcpy(c->mac, mac, 6);
	return MNL_CB_OK;
}

static int neigh_request(struct neigh_ctx *c, bool dump)
{
	char buf[REQ_BUFSZ] = { 0 };
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;

	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | (dump ? NLM_F_DUMP : NLM_F_ACK);
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = c->addr->family;
	if (!dump) {
		ndm->ndm_ifindex = c->ifindex;
		mnl_attr_put(nlh, NDA_DST, family_len(c->addr->family), &c->addr->v6);
	}
	return xp_nl_talk(nlh, neigh_cb, c);
}

/* Looks the entry up; *state is its NUD state, or 0 when absent. */
static int neigh_query(int ifindex, const struct xp_addr *addr, uint8_t mac[6], uint16_t *state)
{
	struct neigh_ctx c = { .ifindex = ifindex, .addr = addr };
	int ret;

	*state = 0;
	if ((ret = check_addr(addr)))
		return ret;
	if (ifindex <= 0)
		return -ENODEV;
	ret = neigh_request(&c, false);
	if (ret == -EINVAL || ret == -EOPNOTSUPP) {
		/* Kernels before 5.0 cannot get a single entry: dump and filter. */
		memset(&c, 0, sizeof(c));
		c.ifindex = ifindex;
		c.addr = addr;
		ret = neigh_request(&c, true);
	}
	if (ret)
		return ret;
	if (!c.got)
		return -ENOENT;
	*state = c.state;
	if (!(c.state & NUD_USABLE))
		return -ENOENT;
	if (!c.has_mac)
		return -EOPNOTSUPP;
	memcpy(mac, c.mac, 6);
	return 0;
}

int xp_neigh_get(int ifindex, const struct xp_addr *addr, uint8_t mac[6])
{
	uint16_t state;

	return neigh_query(ifindex, addr, mac, &state);
}

static int ack_cb(const struct nlmsghdr *nlh, void *data)
{
	(void)nlh;
	(void)data;
	return MNL_CB_OK;
}

int xp_neigh_kick(int ifindex, const struct xp_addr *addr)
{
	char buf[REQ_BUFSZ] = { 0 };
	struct nlmsghdr *nlh;
	struct ndmsg *ndm;
	int ret;

	if ((ret = check_addr(addr)))
		return ret;
	if (ifindex <= 0)
		return -ENODEV;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWNEIGH;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE;
	ndm = mnl_nlmsg_put_extra_header(nlh, sizeof(*ndm));
	ndm->ndm_family = addr->family;
	ndm->ndm_ifindex = ifindex;
	ndm->ndm_state = NUD_NONE;
	ndm->ndm_flags = NTF_USE; /* neigh_event_send(): start resolution */
	mnl_attr_put(nlh, NDA_DST, family_len(addr->family), &addr->v6);
	return xp_nl_talk(nlh, ack_cb, NULL);
}

int xp_neigh_kick_udp(int ifindex, const struct xp_addr *addr)
{
	struct sockaddr_storage ss;
	socklen_t sslen;
	char ifname[IF_NAMESIZE];
	int fd, ret = 0;

	if ((ret = check_addr(addr)))
		return ret;
	fd = socket(addr->family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (ifindex > 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &ifindex, sizeof(ifindex)) < 0 &&
	    if_indextoname(ifindex, ifname))
		/* Older kernels: bind by name. Unbound is still fine when the
		 * routing table already points at this device. */
		(void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, strlen(ifname));
	sslen = xp_addr_to_sockaddr(addr, 9, &ss);
	if (addr->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&addr->v6))
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = ifindex;
	if (sendto(fd, "", 1, MSG_DONTWAIT, (struct sockaddr *)&ss, sslen) < 0 && errno != EAGAIN)
		ret = -errno;
	close(fd);
	return ret;
}

static const char *nud_name(uint16_t s)
{
	if (!s)
		return "absent";
	if (s & NUD_INCOMPLETE)
		return "INCOMPLETE";
	if (s & NUD_FAILED)
		return "FAILED";
	if (s & NUD_REACHABLE)
		return "REACHABLE";
	if (s & NUD_STALE)
		return "STALE";
	if (s & NUD_DELAY)
		return "DELAY";
	if (s & NUD_PROBE)
		return "PROBE";
	if (s & NUD_PERMANENT)
		return "PERMANENT";
	if (s & NUD_NOARP)
		return "NOARP";
	return "NONE";
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static int kick(int ifindex, const struct xp_addr *nh)
{
	int r = xp_neigh_kick(ifindex, nh);

	if (r)
		r = xp_neigh_kick_udp(ifindex, nh);
	return r;
}

int xp_nexthop_mac(const struct xp_addr *dst, int timeout_ms, struct xp_route *rt, uint8_t mac[6],
		   char *err, size_t errlen)
{
	struct xp_route rt_local;
	struct xp_addr nh;
	char dbuf[INET6_ADDRSTRLEN], nbuf[INET6_ADDRSTRLEN], ifname[IF_NAMESIZE];
	unsigned char type = 0;
	uint16_t state = 0;
	long long start, deadline, last_kick = 0;
	int ret, kick_err = 0, kicks = 0;
	long pause = 1;

	if (!rt)
		rt = &rt_local;
	set_err(err, errlen, "ok");
	if ((ret = check_addr(dst))) {
		set_err(err, errlen, "bad destination address family");
		return ret;
	}
	xp_addr_str(dst, dbuf, sizeof(dbuf));
	ret = route_get(dst, rt, &type);
	if (ret) {
		set_err(err, errlen, "no route to %s: %s", dbuf, strerror(-ret));
		return ret;
	}
	if (!if_indextoname(rt->oif, ifname))
		snprintf(ifname, sizeof(ifname), "#%d", rt->oif);
	if (type == RTN_LOCAL) {
		set_err(err, errlen, "%s is a local address (dev %s), no next hop", dbuf, ifname);
		return -EHOSTUNREACH;
	}
	nh = rt->gateway.family ? rt->gateway : *dst;
	xp_addr_str(&nh, nbuf, sizeof(nbuf));

	start = now_ms();
	deadline = start + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		long long now;

		ret = neigh_query(rt->oif, &nh, mac, &state);
		if (ret == 0)
			return 0;
		if (ret == -EOPNOTSUPP) {
			set_err(err, errlen, "neighbour %s on %s has no Ethernet address (state %s)",
				nbuf, ifname, nud_name(state));
			return ret;
		}
		if (ret != -ENOENT) {
			set_err(err, errlen, "neighbour lookup of %s on %s failed: %s", nbuf, ifname,
				strerror(-ret));
			return ret;
		}
		now = now_ms();
		/* Kick at once, then again every second while nothing is in
		 * progress (absent, or FAILED after the kernel's probes). */
		if (!kicks || (!(state & NUD_INCOMPLETE) && now - last_kick >= 1000)) {
			kick_err = kick(rt->oif, &nh);
			last_kick = now;
			kicks++;
		}
		if (now >= deadline)
			break;
		sleep_ms(pause < deadline - now ? pause : (long)(deadline - now));
		if (pause < 20)
			pause *= 2;
	}
	if (kick_err)
		set_err(err, errlen, "next hop %s on %s not resolved in %d ms (state %s; trigger failed: %s)",
			nbuf, ifname, timeout_ms, nud_name(state), strerror(-kick_err));
	else
		set_err(err, errlen, "next hop %s on %s not resolved in %d ms (state %s)", nbuf,
			ifname, timeout_ms, nud_name(state));
	return -EHOSTUNREACH;
}

/* ---- source address ---- */

int xp_source_addr(const struct xp_addr *dst, struct xp_addr *src)
{
	struct xp_route rt;
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, ret;

	memset(src, 0, sizeof(*src));
	ret = route_get(dst, &rt, NULL);
	if (ret)
		return ret;
	if (rt.prefsrc.family) {
		*src = rt.prefsrc;
		return 0;
	}
	/* No prefsrc in the reply: let the stack choose, as connect() does. */
	fd = socket(dst->family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	len = xp_addr_to_sockaddr(dst, 9, &ss);
	if (dst->family == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(&dst->v6))
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = rt.oif;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
		ret = -errno;
		goto out;
	}
	len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		ret = -errno;
		goto out;
	}
	if (xp_addr_from_sockaddr((struct sockaddr *)&ss, src, NULL) < 0)
		ret = -EAFNOSUPPORT;
out:
	close(fd);
	return ret;
}
