/*
 * The ICMP error watcher (icmp_watch.h): a raw ICMP (or ICMPv6) socket that
 * takes only the error types (ICMP_FILTER, ICMP6_FILTER), read by a thread
 * of its own so that no interval length or report can leave its queue to
 * overflow; the queue is large, and SO_RXQ_OVFL still tells what it lost.
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <linux/icmp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/icmp_watch.h"

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

const char *xp_icmp_name(int family, uint8_t type, uint8_t code)
{
	if (family == AF_INET6) {
		static const char *const unreach6[] = {
			"destination unreachable (no route)", "destination unreachable (administratively prohibited)",
			"destination unreachable (beyond scope)", "destination unreachable (address unreachable)",
			"destination unreachable (port unreachable)", "destination unreachable (source address failed policy)",
			"destination unreachable (reject route)",
		};
		switch (type) {
		case 1:
			return code < sizeof(unreach6) / sizeof(unreach6[0]) ? unreach6[code] : "destination unreachable";
		case 2:
			return "packet too big";
		case 3:
			return code == 1 ? "time exceeded (fragment reassembly)" : "time exceeded (hop limit)";
		case 4:
			return "parameter problem";
		}
		return "ICMPv6 error";
	}
	switch (type) {
	case 3:
		switch (code) {
		case 0: return "destination unreachable (net unreachable)";
		case 1: return "destination unreachable (host unreachable)";
		case 2: return "destination unreachable (protocol unreachable)";
		case 3: return "destination unreachable (port unreachable)";
		case 4: return "fragmentation needed";
		case 9: case 10: case 13: return "destination unreachable (administratively prohibited)";
		}
		return "destination unreachable";
	case 11:
		return code == 1 ? "time exceeded (fragment reassembly)" : "time exceeded (TTL)";
	case 12:
		return "parameter problem";
	}
	return "ICMP error";
}

static bool ours(const struct xp_icmp_match *m, const struct xp_addr *src, const struct xp_addr *dst, uint8_t proto,
		 const uint8_t *l4)
{
	if (proto != m->l4_proto || !xp_addr_eq(dst, &m->server))
		return false;
	uint16_t sport = get16(l4), dport = get16(l4 + 2);
	if (sport < m->sport_lo || sport > m->sport_hi || dport < m->dport_lo || dport > m->dport_hi)
		return false;
	for (unsigned i = 0; i < m->nsrc; i++)
		if (xp_addr_eq(src, &m->src[i]))
			return true;
	return false;
}

static void count(struct xp_icmp_figs *f, const struct xp_addr *from, uint8_t type, uint8_t code,
		  enum xp_icmp_kind kind, uint32_t mtu)
{
	f->count++;
	f->by_kind[kind]++;
	if (mtu && (!f->path_mtu || mtu < f->path_mtu))
		f->path_mtu = mtu;
	for (unsigned i = 0; i < f->nhops; i++) {
		struct xp_icmp_hop *h = &f->hop[i];
		if (h->type == type && h->code == code && xp_addr_eq(&h->addr, from)) {
			h->count++;
			if (mtu && (!h->mtu || mtu < h->mtu))
				h->mtu = mtu;
			return;
		}
	}
	if (f->nhops == XP_ICMP_MAX_HOPS) {
		f->other_hops++;
		return;
	}
	f->hop[f->nhops++] = (struct xp_icmp_hop){ .addr = *from, .type = type, .code = code, .kind = kind,
						   .mtu = mtu, .count = 1 };
}

bool xp_icmp_account(struct xp_icmp_figs *f, const struct xp_icmp_match *m, int family, const struct xp_addr *from,
		     const uint8_t *pkt, size_t len)
{
	struct xp_addr src = { .family = family }, dst = { .family = family }, sender = { 0 };
	const uint8_t *icmp, *q;
	size_t qlen;
	uint8_t proto;

	if (family == AF_INET) {
		/* A raw IPv4 socket gets the IP header too: the sender is its source. */
		if (len < 20 || pkt[0] >> 4 != 4 || (size_t)(pkt[0] & 15) * 4 + 8 > len)
			return false;
		sender.family = AF_INET;
		memcpy(&sender.v4, pkt + 12, 4);
		icmp = pkt + (pkt[0] & 15) * 4;
		len -= (size_t)(icmp - pkt);
		q = icmp + 8, qlen = len - 8;
		/* The quoted packet: its IPv4 header, then at least 8 bytes of what it carried. */
		if (qlen < 20 || q[0] >> 4 != 4 || (size_t)(q[0] & 15) * 4 + 4 > qlen)
			return false;
		proto = q[9];
		memcpy(&src.v4, q + 12, 4);
		memcpy(&dst.v4, q + 16, 4);
		if (!ours(m, &src, &dst, proto, q + (q[0] & 15) * 4))
			return false;
	} else {
		/* ICMPv6 from its own header on; the sender is recvfrom's. */
		if (!from || len < 8 + 40 + 4)
			return false;
		sender = *from;
		icmp = pkt;
		q = icmp + 8;
		if (q[0] >> 4 != 6)
			return false;
		proto = q[6]; /* our frames carry no extension headers */
		memcpy(&src.v6, q + 8, 16);
		memcpy(&dst.v6, q + 24, 16);
		if (!ours(m, &src, &dst, proto, q + 40))
			return false;
	}

	uint8_t type = icmp[0], code = icmp[1];
	enum xp_icmp_kind kind;
	uint32_t mtu = 0;
	if (family == AF_INET) {
		if (type == 3 && code == 4) {
			kind = XP_ICMP_FRAG_NEEDED;
			mtu = get16(icmp + 6); /* RFC 1191: the next-hop MTU, 0 from routers older than it */
		} else if (type == 3) {
			kind = XP_ICMP_UNREACH;
		} else if (type == 11) {
			kind = XP_ICMP_TIME_EXCEEDED;
		} else if (type == 12) {
			kind = XP_ICMP_PARAM_PROBLEM;
		} else {
			return false;
		}
	} else {
		if (type == 2) {
			kind = XP_ICMP_FRAG_NEEDED;
			mtu = (uint32_t)get16(icmp + 4) << 16 | get16(icmp + 6);
		} else if (type == 1) {
			kind = XP_ICMP_UNREACH;
		} else if (type == 3) {
			kind = XP_ICMP_TIME_EXCEEDED;
		} else if (type == 4) {
			kind = XP_ICMP_PARAM_PROBLEM;
		} else {
			return false;
		}
	}
	count(f, &sender, type, code, kind, mtu);
	return true;
}

/* Everything queued, without blocking. */
static void drain(struct xp_icmp_watch *w)
{
	uint8_t buf[2048];
	char cbuf[CMSG_SPACE(sizeof(uint32_t))];
	for (;;) {
		struct sockaddr_storage ss;
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr mh = { .msg_name = &ss, .msg_namelen = sizeof(ss), .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		ssize_t n = recvmsg(w->fd, &mh, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_RXQ_OVFL) {
				uint32_t d;
				memcpy(&d, CMSG_DATA(c), sizeof(d));
				w->figs.not_read = d; /* the socket's running count of drops */
			}
		struct xp_addr from = { 0 };
		xp_addr_from_sockaddr((struct sockaddr *)&ss, &from, NULL);
		xp_icmp_account(&w->figs, &w->m, w->figs.family, &from, buf, (size_t)n);
	}
}

static void *reader(void *arg)
{
	struct xp_icmp_watch *w = arg;
	struct pollfd p[2] = { { .fd = w->fd, .events = POLLIN }, { .fd = w->stop_fd, .events = POLLIN } };
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			drain(w);
		if (p[1].revents)
			break;
	}
	drain(w);
	return NULL;
}

int xp_icmp_watch_start(struct xp_icmp_watch *w, const struct xp_icmp_match *m, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->fd = w->stop_fd = -1;
	int family = m->server.family;
	w->m = *m;
	w->m.nsrc = m->nsrc < XP_ICMP_MAX_SRC ? m->nsrc : XP_ICMP_MAX_SRC;
	memcpy(w->src, m->src, sizeof(w->src[0]) * w->m.nsrc);
	w->m.src = w->src;
	w->figs.family = family;

	w->fd = socket(family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, family == AF_INET6 ? IPPROTO_ICMPV6 : IPPROTO_ICMP);
	if (w->fd < 0) {
		snprintf(err, errlen, "cannot open a raw ICMP socket: %s", strerror(errno));
		return -errno;
	}
	int r;
	if (family == AF_INET6) {
		struct icmp6_filter f;
		ICMP6_FILTER_SETBLOCKALL(&f);
		ICMP6_FILTER_SETPASS(ICMP6_DST_UNREACH, &f);
		ICMP6_FILTER_SETPASS(ICMP6_PACKET_TOO_BIG, &f);
		ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &f);
		ICMP6_FILTER_SETPASS(ICMP6_PARAM_PROB, &f);
		r = setsockopt(w->fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
	} else {
		/* ICMP_FILTER: a bit set drops that type. */
		struct icmp_filter f = { ~((1u << ICMP_DEST_UNREACH) | (1u << ICMP_TIME_EXCEEDED) | (1u << ICMP_PARAMETERPROB)) };
		r = setsockopt(w->fd, SOL_RAW, ICMP_FILTER, &f, sizeof(f));
	}
	int one = 1, big = 8 << 20;
	if (!r)
		r = setsockopt(w->fd, SOL_SOCKET, SO_RXQ_OVFL, &one, sizeof(one));
	/* Room for thousands of errors; FORCE needs CAP_NET_ADMIN, which the client has, else the sysctl's cap. */
	if (!r && setsockopt(w->fd, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof(big)))
		setsockopt(w->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	if (r) {
		snprintf(err, errlen, "cannot set up the raw ICMP socket: %s", strerror(errno));
		goto fail;
	}
	w->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (w->stop_fd < 0) {
		snprintf(err, errlen, "eventfd: %s", strerror(errno));
		goto fail;
	}
	r = pthread_create(&w->thread, NULL, reader, w);
	if (r) {
		snprintf(err, errlen, "cannot start the ICMP reader: %s", strerror(r));
		errno = r;
		goto fail;
	}
	w->running = true;
	w->figs.watched = true;
	return 0;
fail:
	r = -errno;
	if (w->fd >= 0)
		close(w->fd);
	if (w->stop_fd >= 0)
		close(w->stop_fd);
	w->fd = w->stop_fd = -1;
	return r;
}

void xp_icmp_watch_stop(struct xp_icmp_watch *w, struct xp_icmp_figs *out)
{
	if (!w->running) {
		memset(out, 0, sizeof(*out));
		return;
	}
	uint64_t one = 1;
	if (write(w->stop_fd, &one, sizeof(one)) != sizeof(one))
		pthread_cancel(w->thread); /* cannot happen with a fresh eventfd; never leave the thread */
	pthread_join(w->thread, NULL);
	close(w->fd);
	close(w->stop_fd);
	w->fd = w->stop_fd = -1;
	w->running = false;
	*out = w->figs;
}
