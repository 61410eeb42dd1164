/*
 * The OTG REST API (otg/http.h): libmicrohttpd with a thread per
 * connection, because the controller's calls may block (a start returns
 * once every sender started, a stop once the figures are final) and one
 * slow call must not hold the others. Every body in and out is a json-c
 * object; what the controller does with it is otg/otg.h's.
 *
 * A request is answered as soon as its headers tell it fails (a wrong
 * token, path or method, a Content-Length over the limit) so that a
 * refused body is never read; otherwise the body is gathered (at most
 * XP_OTG_BODY_MAX bytes, 413 beyond), parsed, and handed over.
 */
#include <errno.h>
#include <json-c/json.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "otg/http.h"
#include "otg/http_files.h"
#include "util/values.h"

#define XP_OTG_PEM_MAX (256u << 10) /* a certificate chain or key file's bytes */

struct xp_otg_http {
	struct MHD_Daemon *d;
	struct xp_otg *c;
	char *token, *cert, *key; /* the files' text (NULL: not given) */
	unsigned short port;
};

/* The routes: a path and the methods it takes. */
enum route { R_NONE = 0, R_CONFIG, R_STATE, R_METRICS, R_VERSION };
static const struct {
	const char *path;
	bool get, post;
	const char *allow;
} routes[] = {
	[R_CONFIG] = { "/config", true, true, "GET, POST" },
	[R_STATE] = { "/control/state", false, true, "POST" },
	[R_METRICS] = { "/monitor/metrics", false, true, "POST" },
	[R_VERSION] = { "/capabilities/version", true, false, "GET" },
};

/* One request's state between the calls libmicrohttpd makes for it. */
struct req {
	enum route route;
	bool post;
	bool too_big;
	char *body;
	size_t len;
};

/* OTG's Error object (components/schemas/Error): code, kind, errors. */
static struct json_object *error_obj(int code, const char *kind, const char *msg)
{
	struct json_object *e = json_object_new_object(), *a = json_object_new_array();
	json_object_object_add(e, "code", json_object_new_int(code));
	json_object_object_add(e, "kind", json_object_new_string(kind));
	json_object_array_add(a, json_object_new_string(msg));
	json_object_object_add(e, "errors", a);
	return e;
}

/* Queues obj (taken) as the answer with this status; allow: the Allow header of a 405. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status, struct json_object *obj,
			     const char *allow)
{
	const char *text = obj ? json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
								 JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	struct MHD_Response *r = text ? MHD_create_response_from_buffer(strlen(text), (void *)text,
									 MHD_RESPMEM_MUST_COPY) : NULL;
	json_object_put(obj);
	if (!r)
		return MHD_NO; /* out of memory: libmicrohttpd closes the connection */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result fail(struct MHD_Connection *conn, unsigned status, const char *allow, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static enum MHD_Result fail(struct MHD_Connection *conn, unsigned status, const char *allow, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return reply(conn, status, error_obj((int)status, status >= 500 ? "internal" : "validation", msg), allow);
}

/* The controller's refusal as the Error object, with its status. */
static enum MHD_Result fail_ctl(struct MHD_Connection *conn, const struct xp_otg_err *e)
{
	int code = e->http >= 400 && e->http <= 599 ? e->http : MHD_HTTP_INTERNAL_SERVER_ERROR;
	const char *kind = e->kind ? e->kind : code >= 500 ? "internal" : "validation";
	return reply(conn, (unsigned)code, error_obj(code, kind, e->msg[0] ? e->msg : "the controller failed"), NULL);
}

/* A success without content of its own: OTG's Warning object (the controller's, or none). */
static enum MHD_Result ok_warnings(struct MHD_Connection *conn, struct json_object *w)
{
	if (!w) {
		w = json_object_new_object();
		json_object_object_add(w, "warnings", json_object_new_array());
	}
	return reply(conn, MHD_HTTP_OK, w, NULL);
}

/* "Authorization: Bearer TOKEN", compared in constant time. */
static bool token_ok(const struct xp_otg_http *h, struct MHD_Connection *conn)
{
	if (!h->token)
		return true;
	const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (!v || strncasecmp(v, "Bearer ", 7))
		return false;
	v += 7;
	while (*v == ' ')
		v++;
	size_t n = strlen(h->token);
	return strlen(v) == n && !CRYPTO_memcmp(v, h->token, n);
}

/* The body as a JSON object, or NULL with a message: the whole body, one value, an object. */
static struct json_object *parse_body(const struct req *q, char *msg, size_t len)
{
	if (!q->len) {
		snprintf(msg, len, "the request has no body: %s takes a JSON object", routes[q->route].path);
		return NULL;
	}
	struct json_tokener *tok = json_tokener_new();
	if (!tok) {
		snprintf(msg, len, "out of memory");
		return NULL;
	}
	struct json_object *o = json_tokener_parse_ex(tok, q->body, (int)q->len);
	enum json_tokener_error je = json_tokener_get_error(tok);
	size_t used = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!o || je != json_tokener_success) {
		snprintf(msg, len, "the body is not JSON: %s at byte %zu",
			 je == json_tokener_continue ? "it ends early" : json_tokener_error_desc(je), used);
		json_object_put(o);
		return NULL;
	}
	while (used < q->len && strchr(" \t\r\n", q->body[used]))
		used++;
	if (used < q->len) {
		snprintf(msg, len, "the body is not JSON: more after the value at byte %zu", used);
		json_object_put(o);
		return NULL;
	}
	if (!json_object_is_type(o, json_type_object)) {
		snprintf(msg, len, "the body must be a JSON object, not a %s", json_type_to_name(json_object_get_type(o)));
		json_object_put(o);
		return NULL;
	}
	return o;
}

/* The whole request is in: hand it to the controller. */
static enum MHD_Result dispatch(struct xp_otg_http *h, struct MHD_Connection *conn, struct req *q)
{
	struct xp_otg_err e = { 0 };
	struct json_object *out = NULL;
	char msg[512];

	if (q->too_big)
		return fail(conn, MHD_HTTP_CONTENT_TOO_LARGE, NULL, "the body is over %u bytes", XP_OTG_BODY_MAX);
	if (!q->post) {
		out = q->route == R_CONFIG ? xp_otg_get_config(h->c) : xp_otg_version();
		if (!out)
			return fail(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "out of memory");
		return reply(conn, MHD_HTTP_OK, out, NULL);
	}
	struct json_object *in = parse_body(q, msg, sizeof(msg));
	if (!in)
		return fail(conn, MHD_HTTP_BAD_REQUEST, NULL, "%s", msg);
	int r = 0;
	switch (q->route) {
	case R_CONFIG:
		r = xp_otg_set_config(h->c, in, &out, &e);
		break;
	case R_STATE:
		r = xp_otg_set_state(h->c, in, &out, &e);
		break;
	case R_METRICS:
		out = xp_otg_metrics(h->c, in, &e);
		r = out ? 0 : -1;
		break;
	default:
		r = -1;
		snprintf(e.msg, sizeof(e.msg), "no handler for %s", routes[q->route].path);
	}
	json_object_put(in);
	if (r) {
		json_object_put(out);
		return fail_ctl(conn, &e);
	}
	return q->route == R_METRICS ? reply(conn, MHD_HTTP_OK, out, NULL) : ok_warnings(conn, out);
}

/* The first call, headers only: refuse what fails already, else get ready for the body. */
static enum MHD_Result on_headers(struct xp_otg_http *h, struct MHD_Connection *conn, const char *url,
				  const char *method, void **state)
{
	enum route rt = R_NONE;
	for (size_t i = 1; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (!strcmp(url, routes[i].path))
			rt = (enum route)i;
	/* The token first: whoever lacks it learns nothing, not even which paths exist. */
	if (!token_ok(h, conn))
		return fail(conn, MHD_HTTP_UNAUTHORIZED, NULL, "a bearer token is needed: Authorization: Bearer TOKEN");
	if (rt == R_NONE)
		return fail(conn, MHD_HTTP_NOT_FOUND, NULL,
			    "%s is not served: xdpperf serves OTG's traffic API, GET and POST /config, POST "
			    "/control/state, POST /monitor/metrics, GET /capabilities/version", url);
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET), post = !strcmp(method, MHD_HTTP_METHOD_POST);
	if (!(get && routes[rt].get) && !(post && routes[rt].post))
		return fail(conn, MHD_HTTP_METHOD_NOT_ALLOWED, routes[rt].allow, "%s takes %s, not %s", url,
			    routes[rt].allow, method);
	const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
	if (cl && strtoull(cl, NULL, 10) > XP_OTG_BODY_MAX)
		return fail(conn, MHD_HTTP_CONTENT_TOO_LARGE, NULL, "the body is over %u bytes", XP_OTG_BODY_MAX);
	struct req *q = calloc(1, sizeof(*q));
	if (!q)
		return MHD_NO;
	q->route = rt;
	q->post = post;
	*state = q;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
				  const char *version, const char *upload, size_t *upload_len, void **state)
{
	struct xp_otg_http *h = cls;
	struct req *q = *state;

	if (!q)
		return on_headers(h, conn, url, method, state);
	if (*upload_len) {
		/* A chunked body has no Content-Length: count it as it comes, keep none past the limit. */
		if (!q->too_big && q->len + *upload_len > XP_OTG_BODY_MAX) {
			q->too_big = true;
			free(q->body);
			q->body = NULL;
			q->len = 0;
		}
		if (!q->too_big) {
			char *b = realloc(q->body, q->len + *upload_len + 1);
			if (!b)
				return MHD_NO;
			memcpy(b + q->len, upload, *upload_len);
			q->body = b;
			q->len += *upload_len;
			b[q->len] = '\0';
		}
		*upload_len = 0;
		return MHD_YES;
	}
	return dispatch(h, conn, q);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **state, enum MHD_RequestTerminationCode why)
{
	struct req *q = *state;
	if (q) {
		free(q->body);
		free(q);
		*state = NULL;
	}
}

/* The listening socket, bound here so its errors say what to do. */
static int listen_on(const struct xp_otg_listen *l, unsigned short *port, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	size_t len = xp_addr_to_sockaddr(&l->addr, l->port, &ss);
	char as[INET6_ADDRSTRLEN];
	xp_addr_str(&l->addr, as, sizeof(as));
	int fd = socket(l->addr.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, (socklen_t)len) || listen(fd, XP_OTG_CONNS)) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return xp_cli_fail(err, errlen, "--otg: cannot listen on %s%s%s:%u: %s%s",
				   l->addr.family == AF_INET6 ? "[" : "", as, l->addr.family == AF_INET6 ? "]" : "",
				   l->port, strerror(e),
				   e == EADDRINUSE ? " (another program uses the port: pick another)"
				   : e == EADDRNOTAVAIL ? " (no interface here has that address)" : "");
	}
	socklen_t sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	*port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
					       : ((struct sockaddr_in *)&ss)->sin_port);
	return fd;
}

static void http_free(struct xp_otg_http *h)
{
	xp_otg_file_free(h->token);
	xp_otg_file_free(h->key);
	free(h->cert);
	free(h);
}

struct xp_otg_http *xp_otg_http_start(struct xp_otg *c, const struct xp_otg_listen *l, char *err, size_t errlen)
{
	if (xp_otg_listen_check(l, err, errlen))
		return NULL;
	struct xp_otg_http *h = calloc(1, sizeof(*h));
	if (!h) {
		xp_cli_fail(err, errlen, "--otg: out of memory");
		return NULL;
	}
	h->c = c;
	if ((l->token_file && !(h->token = xp_otg_file_read(l->token_file, "--otg-token", true, 4096, err, errlen))) ||
	    (l->cert_file && !(h->cert = xp_otg_file_read(l->cert_file, "--otg-cert", false, XP_OTG_PEM_MAX, err,
							  errlen))) ||
	    (l->key_file && !(h->key = xp_otg_file_read(l->key_file, "--otg-key", true, XP_OTG_PEM_MAX, err, errlen))) ||
	    (h->cert && xp_otg_tls_check(h->cert, h->key, err, errlen))) {
		http_free(h);
		return NULL;
	}
	int fd = listen_on(l, &h->port, err, errlen);
	if (fd < 0) {
		http_free(h);
		return NULL;
	}
	/* The daemon's threads block every signal: SIGINT and SIGTERM stay the main thread's. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL;
	if (h->cert)
		h->d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
					MHD_OPTION_CONNECTION_LIMIT, (unsigned)XP_OTG_CONNS,
					MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)XP_OTG_IDLE_S,
					MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_HTTPS_MEM_CERT, h->cert,
					MHD_OPTION_HTTPS_MEM_KEY, h->key, MHD_OPTION_END);
	else
		h->d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, h, MHD_OPTION_LISTEN_SOCKET, fd,
					MHD_OPTION_CONNECTION_LIMIT, (unsigned)XP_OTG_CONNS,
					MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)XP_OTG_IDLE_S,
					MHD_OPTION_NOTIFY_COMPLETED, on_done, NULL, MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!h->d) {
		close(fd);
		http_free(h);
		xp_cli_fail(err, errlen, "--otg: cannot start the HTTP server (libmicrohttpd%s)",
			    l->cert_file ? ", TLS" : "");
		return NULL;
	}
	return h;
}

unsigned short xp_otg_http_port(const struct xp_otg_http *h)
{
	return h->port;
}

void xp_otg_http_stop(struct xp_otg_http *h)
{
	if (!h)
		return;
	MHD_stop_daemon(h->d); /* waits for the connections' threads; closes the listening socket */
	http_free(h);
}
