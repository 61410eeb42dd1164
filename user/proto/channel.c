#include "proto/channel.h"

#include "util/addr.h"
#include "net/ping.h"
#include "net/route.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <netinet/tcp.h>
#include <time.h>
#include <unistd.h>

void xp_ctrl_init(struct xp_ctrl *c, int fd)
{
	c->fd = fd;
	c->buf = NULL;
	c->cap = 0;
	c->max_msg = XP_CTRL_MAX_MSG;
	c->len = 0;
	c->out = NULL;
	c->out_len = c->out_cap = c->out_limit = 0;
	c->keep_line = false;
	c->line = NULL;
	c->line_len = 0;
}

void xp_ctrl_init_queued(struct xp_ctrl *c, int fd, size_t out_limit)
{
	xp_ctrl_init(c, fd);
	c->out_limit = out_limit ? out_limit : 1;
}

void xp_ctrl_set_max_msg(struct xp_ctrl *c, size_t n)
{
	c->max_msg = n;
}

void xp_ctrl_free(struct xp_ctrl *c)
{
	free(c->buf);
	c->buf = NULL;
	c->cap = c->len = 0;
	free(c->out);
	free(c->line);
	c->out = c->line = NULL;
	c->out_len = c->out_cap = c->line_len = 0;
}

int xp_ctrl_flush(struct xp_ctrl *c)
{
	size_t off = 0;
	int r = 0;
	while (off < c->out_len) {
		ssize_t w = send(c->fd, c->out + off, c->out_len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN)
				r = -errno;
			break;
		}
		off += (size_t)w;
	}
	memmove(c->out, c->out + off, c->out_len - off);
	c->out_len -= off;
	return r;
}

/* Queued mode: append the line (and its newline), then send what the socket takes now. */
static int queue_line(struct xp_ctrl *c, const char *s, size_t n)
{
	if (c->out_len + n + 1 > c->out_limit)
		return -ENOBUFS; /* the peer does not read: it is dropped, nobody waits on it */
	if (c->out_len + n + 1 > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		while (cap < c->out_len + n + 1)
			cap *= 2;
		char *p = realloc(c->out, cap);
		if (!p)
			return -ENOMEM;
		c->out = p;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, s, n);
	c->out[c->out_len + n] = '\n';
	c->out_len += n + 1;
	return xp_ctrl_flush(c);
}

int xp_ctrl_send(struct xp_ctrl *c, struct json_object *obj)
{
	return xp_ctrl_send_line(c, json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN));
}

int xp_ctrl_send_line(struct xp_ctrl *c, const char *s)
{
	size_t n = strlen(s);

	/* No peer takes a longer line (a client's receive limit is the largest). */
	if (n + 1 > XP_CTRL_MAX_REPLY - 1)
		return -EMSGSIZE;
	if (c->out_limit)
		return queue_line(c, s, n);
	/* The line and its newline in one go, without a copy (a reply may be megabytes). */
	struct iovec iov[2] = { { .iov_base = (void *)s, .iov_len = n }, { .iov_base = (void *)"\n", .iov_len = 1 } };
	for (size_t off = 0; off < n + 1;) {
		struct iovec v[2];
		struct msghdr mh = { .msg_iov = v };
		if (off < n) {
			v[0] = (struct iovec){ .iov_base = (char *)iov[0].iov_base + off, .iov_len = n - off };
			v[1] = iov[1];
			mh.msg_iovlen = 2;
		} else {
			v[0] = iov[1];
			mh.msg_iovlen = 1;
		}
		ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { .fd = c->fd, .events = POLLOUT };
				if (poll(&p, 1, 1000) <= 0)
					return -ETIMEDOUT;
				continue;
			}
			return -errno;
		}
		off += (size_t)w;
	}
	return 0;
}

/*
 * One line, one JSON object: the object must fill the line, whitespace
 * around it aside. json_tokener_parse() stops at the end of the first
 * value and ignores the rest, so `{"op":"start"}{"op":"stop"}` would pass as
 * a start and a second request would ride unseen (issue 28 point 11).
 */
static struct json_object *parse_line(const char *s, size_t n)
{
	json_tokener *tok = json_tokener_new();
	if (!tok)
		return NULL;
	struct json_object *o = json_tokener_parse_ex(tok, s, (int)n);
	size_t end = json_tokener_get_parse_end(tok);
	bool ok = o && json_tokener_get_error(tok) == json_tokener_success && json_object_is_type(o, json_type_object);
	json_tokener_free(tok);
	for (size_t i = end; ok && i < n; i++)
		ok = s[i] == ' ' || s[i] == '\t' || s[i] == '\r';
	if (!ok) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int xp_ctrl_take(struct xp_ctrl *c, struct json_object **out)
{
	char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
	if (!nl)
		return c->len >= c->max_msg - 1 ? -EPROTO : -EAGAIN;
	*nl = '\0';
	size_t used = (size_t)(nl - c->buf) + 1;
	if (c->keep_line) {
		char *p = realloc(c->line, used);
		if (!p)
			return -ENOMEM;
		memcpy(p, c->buf, used); /* with its terminating NUL */
		c->line = p;
		c->line_len = used - 1;
	}
	struct json_object *o = parse_line(c->buf, used - 1);
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
	if (!o)
		return -EPROTO;
	*out = o;
	return 1;
}

/* Read once from the socket into the buffer: >0 bytes, 0 on close, -errno. */
static int fill(struct xp_ctrl *c)
{
	/* Room for max_msg - 1 bytes, no more: a peer that sends a longer line
	 * fills it and is refused, never buffered on. */
	size_t want = c->max_msg - 1;
	if (c->len >= want)
		return -EPROTO;
	/* Up to 64 KiB a read (all of a default buffer), more room as a long line needs it. */
	if (c->cap < want && c->cap - c->len < XP_CTRL_MAX_MSG) {
		size_t cap = c->cap * 2 > c->len + XP_CTRL_MAX_MSG ? c->cap * 2 : c->len + XP_CTRL_MAX_MSG;
		if (cap > want)
			cap = want;
		char *p = realloc(c->buf, cap);
		if (!p)
			return -ENOMEM;
		c->buf = p;
		c->cap = cap;
	}
	size_t room = (c->cap < want ? c->cap : want) - c->len;
	ssize_t r = recv(c->fd, c->buf + c->len, room, MSG_DONTWAIT);
	if (r < 0)
		return -errno;
	c->len += (size_t)r;
	return (int)r;
}

int xp_ctrl_poll_recv(struct xp_ctrl *c, struct json_object **out)
{
	int r = xp_ctrl_take(c, out);
	if (r != -EAGAIN)
		return r;
	r = fill(c);
	if (r == 0)
		return 0;
	if (r < 0 && r != -EAGAIN && r != -EINTR)
		return r;
	return xp_ctrl_take(c, out);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int xp_ctrl_recv(struct xp_ctrl *c, int timeout_ms, struct json_object **out)
{
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

	for (;;) {
		int r = xp_ctrl_take(c, out);
		if (r != -EAGAIN)
			return r;
		int wait = -1;
		if (deadline >= 0) {
			long long left = deadline - now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
			wait = (int)left;
		}
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		r = poll(&p, 1, wait);
		if (r < 0) {
			if (errno == EINTR)
				return -EINTR;
			return -errno;
		}
		if (r == 0)
			return -ETIMEDOUT;
		r = fill(c);
		if (r == 0)
			return 0;
		if (r < 0 && r != -EAGAIN && r != -EINTR)
			return r;
	}
}

/* Non-blocking connect with a deadline, to one resolved address. */
static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
	int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		return -e;
	}
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	int r = poll(&p, 1, timeout_ms);
	if (r <= 0) {
		close(fd);
		return r == 0 ? -ETIMEDOUT : -errno;
	}
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
	if (soerr) {
		close(fd);
		return -soerr;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/* Back to blocking: the client uses poll() with timeouts itself. */
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/*
 * Why a connect to host:port failed, in words that point at the cause: no
 * route is this host's business, a refusal means nothing listens there, and
 * a silent SYN is told apart by one ping: a host that answers ping but not
 * TCP sits behind something that drops new connections.
 */
static void connect_error(const struct addrinfo *ai, const char *host, unsigned short port, int e, char *err,
			  size_t errlen)
{
	struct xp_addr a;
	char as[INET6_ADDRSTRLEN] = "?";

	if (!xp_addr_from_sockaddr(ai->ai_addr, &a, NULL))
		xp_addr_str(&a, as, sizeof(as));
	struct xp_route rt;
	switch (e) {
	case ENETUNREACH:
	case EHOSTUNREACH:
		/* Our own routing table, or an ICMP error from the path? */
		if (xp_route_get(&a, &rt))
			snprintf(err, errlen, "no route to %s (%s) on this host: check the address and `ip route get %s`",
				 host, as, as);
		else
			snprintf(err, errlen, "%s (%s) is unreachable: %s", host, as, e == ENETUNREACH
				 ? "a router on the path has no route to it (ICMP network unreachable)"
				 : "the next hop does not answer ARP/ND for it, or a router answered 'host unreachable'");
		return;
	case ECONNREFUSED:
		snprintf(err, errlen, "%s (%s) refused the control connection on port %u: nothing listens there (is "
			 "'xdpperf -s' running there? on another --control-port?)", host, as, port);
		return;
	case ETIMEDOUT: {
		int p = xp_ping(&a, 1000);
		if (p > 0)
			snprintf(err, errlen, "the control connection to %s (%s) port %u timed out, but it answers ping: "
				 "something on the path drops new connections (a firewall, or a stateful device whose "
				 "connection table is full, e.g. after a connection test: let it drain or flush it)",
				 host, as, port);
		else
			snprintf(err, errlen, "the control connection to %s (%s) port %u timed out, and it does not answer "
				 "ping either: the host is down or the path drops everything", host, as, port);
		return;
	}
	default:
		snprintf(err, errlen, "cannot open the control connection to %s (%s) port %u: %s", host, as, port,
			 strerror(e));
	}
}

int xp_ctrl_connect(const char *host, unsigned short port, int family, int timeout_ms, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = family ? family : AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res = NULL;
	char ps[8];

	snprintf(ps, sizeof(ps), "%u", port);
	int g = getaddrinfo(host, ps, &hints, &res);
	if (g) {
		snprintf(err, errlen, "cannot resolve server '%s'%s: %s", host,
			 family == AF_INET ? " (IPv4)" : family == AF_INET6 ? " (IPv6)" : "",
			 g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
		return -ENOENT;
	}
	int fd = -EHOSTUNREACH;
	const struct addrinfo *last = res;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		last = ai;
		fd = connect_one(ai, timeout_ms);
		if (fd >= 0)
			break;
	}
	if (fd < 0)
		connect_error(last, host, port, -fd, err, errlen);
	freeaddrinfo(res);
	return fd;
}

const char *xp_json_str(struct json_object *o, const char *key, const char *dflt)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
		return dflt;
	return json_object_get_string(v);
}

long long xp_json_int(struct json_object *o, const char *key, long long dflt)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v))
		return dflt;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return dflt;
	return json_object_get_int64(v);
}

double xp_json_double(struct json_object *o, const char *key, double dflt)
{
	struct json_object *v;
	if (!o || !json_object_object_get_ex(o, key, &v))
		return dflt;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return dflt;
	return json_object_get_double(v);
}
