/*
 * The --metrics endpoint: GET /metrics (and HEAD) answered with the store's
 * Prometheus text, by libmicrohttpd from a thread of its own. Read-only:
 * any other method is 405, any other path 404; nothing a request carries
 * changes anything.
 *
 * The socket is bound by xp_metrics_open while the process may still bind
 * any port; the thread starts later (xp_metrics_run): the server drops its
 * capabilities first, and a thread keeps the capabilities it was started
 * with. The thread blocks every signal, so SIGINT and SIGTERM still reach
 * (and interrupt) the thread that runs the test.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "report/metrics.h"
#include "util/values.h"

#define XP_METRICS_CONNS 16    /* scrapers at once */
#define XP_METRICS_TIMEOUT 10  /* s an idle connection is kept */

static int listen_fd = -1;
static struct MHD_Daemon *daemon_;

int xp_metrics_parse(const char *s, struct xp_addr *a, unsigned short *port, char *err, size_t errlen)
{
	char host[64] = "";
	const char *p = s;
	if (*s == '[') {
		const char *e = strchr(s, ']');
		if (!e || e[1] != ':' || (size_t)(e - s - 1) >= sizeof(host))
			return xp_cli_fail(err, errlen, "--metrics '%s': write an IPv6 address as [ADDR]:PORT", s);
		memcpy(host, s + 1, (size_t)(e - s - 1));
		host[e - s - 1] = 0;
		p = e + 2;
	} else if (strchr(s, ':')) {
		const char *c = strrchr(s, ':');
		if (strchr(s, ':') != c)
			return xp_cli_fail(err, errlen, "--metrics '%s': write an IPv6 address as [ADDR]:PORT", s);
		if ((size_t)(c - s) >= sizeof(host))
			return xp_cli_fail(err, errlen, "--metrics '%s': not an address", s);
		memcpy(host, s, (size_t)(c - s));
		host[c - s] = 0;
		p = c + 1;
	}
	if (!*host)
		snprintf(host, sizeof(host), "127.0.0.1"); /* localhost unless told otherwise */
	if (xp_addr_parse(host, a))
		return xp_cli_fail(err, errlen, "--metrics '%s': '%s' is not an IPv4 or IPv6 address", s, host);
	unsigned long v;
	char e2[128];
	if (parse_uint(p, 1, 65535, &v, "--metrics port", e2, sizeof(e2)))
		return xp_cli_fail(err, errlen, "%s (--metrics [ADDR]:PORT)", e2);
	*port = (unsigned short)v;
	return 0;
}

int xp_metrics_open(const struct xp_addr *a, unsigned short port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	size_t len = xp_addr_to_sockaddr(a, port, &ss);
	char as[64];
	xp_addr_str(a, as, sizeof(as));
	int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, (socklen_t)len) || listen(fd, 16)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return xp_cli_fail(err, errlen, "--metrics: cannot listen on %s%s%s:%u: %s%s", a->family == AF_INET6 ? "[" : "",
				   as, a->family == AF_INET6 ? "]" : "", port, strerror(e),
				   e == EADDRINUSE ? " (another program uses the port: pick another)"
				   : e == EADDRNOTAVAIL ? " (no interface here has that address)" : "");
	}
	listen_fd = fd;
	return 0;
}

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, const char *text, char *own)
{
	struct MHD_Response *r = own ? MHD_create_response_from_buffer(strlen(own), own, MHD_RESPMEM_MUST_FREE)
				     : MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(own);
		return MHD_NO;
	}
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == MHD_HTTP_OK && own ? "text/plain; version=0.0.4; charset=utf-8" : "text/plain");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_len, void **state)
{
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET /metrics\n", NULL);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "not found: GET /metrics\n", NULL);
	/* A copy under the lock, the text outside it. */
	struct xp_metrics_test *t = malloc(sizeof(*t) * XP_METRICS_TESTS);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = t ? open_memstream(&buf, &len) : NULL;
	if (!f) {
		free(t);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	xp_metrics_snapshot(t);
	int r = xp_metrics_format(t, XP_METRICS_TESTS, f);
	fclose(f);
	free(t);
	if (r) {
		free(buf);
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	if (!len) { /* no test yet: an empty exposition is a valid one, but MUST_FREE needs a buffer */
		free(buf);
		buf = strdup("\n");
		if (!buf)
			return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n", NULL);
	}
	return reply(conn, MHD_HTTP_OK, NULL, buf);
}

int xp_metrics_run(char *err, size_t errlen)
{
	if (listen_fd < 0)
		return 0;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old); /* the thread inherits it */
	daemon_ = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, on_request, NULL,
				   MHD_OPTION_LISTEN_SOCKET, listen_fd, MHD_OPTION_CONNECTION_LIMIT,
				   (unsigned)XP_METRICS_CONNS, MHD_OPTION_CONNECTION_TIMEOUT,
				   (unsigned)XP_METRICS_TIMEOUT, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!daemon_)
		return xp_cli_fail(err, errlen, "--metrics: cannot start the HTTP endpoint (libmicrohttpd)");
	return 0;
}

void xp_metrics_stop(void)
{
	if (daemon_) {
		MHD_stop_daemon(daemon_); /* closes the listening socket too */
		daemon_ = NULL;
		listen_fd = -1;
	}
	if (listen_fd >= 0) {
		close(listen_fd);
		listen_fd = -1;
	}
}
