/*
 * otg/http.c, the OTG REST API's HTTP mechanics, against a test double of
 * the controller (the calls of otg/otg.h, defined here): each route reaches
 * its call with the body as sent, each failure is OTG's Error object with
 * its status (400 not JSON, 404, 405 with Allow, 413, 401 without the
 * token, the controller's own 400/409), and the listener's rules (loopback
 * only without TLS and a token). Requests go over a real TCP connection to
 * 127.0.0.1, written and read here by hand so every byte is seen.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "otg/http.h"

/* ---- the controller's double: keeps what it was given, answers as otg.h says ---- */

struct xp_otg {
	pthread_mutex_t lock;
	struct json_object *cfg;   /* the last config taken */
	struct json_object *state; /* the last ControlState */
	struct json_object *mreq;  /* the last MetricsRequest */
	bool running;
};

struct xp_otg *xp_otg_new(const struct xp_otg_opts *o)
{
	struct xp_otg *c = calloc(1, sizeof(*c));
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

void xp_otg_free(struct xp_otg *c)
{
	if (!c)
		return;
	json_object_put(c->cfg);
	json_object_put(c->state);
	json_object_put(c->mreq);
	free(c);
}

/* Refuses what the real controller refuses by path: a flow header it does not know, a change while running. */
int xp_otg_set_config(struct xp_otg *c, struct json_object *cfg, struct json_object **warnings, struct xp_otg_err *err)
{
	struct json_object *flows, *f, *pk, *h, *ch;
	pthread_mutex_lock(&c->lock);
	if (c->running) {
		pthread_mutex_unlock(&c->lock);
		*err = (struct xp_otg_err){ .http = 409, .kind = "validation" };
		snprintf(err->msg, sizeof(err->msg), "traffic runs: stop it before a new config");
		return -1;
	}
	if (json_object_object_get_ex(cfg, "flows", &flows) && (f = json_object_array_get_idx(flows, 0)) &&
	    json_object_object_get_ex(f, "packet", &pk) && (h = json_object_array_get_idx(pk, 0)) &&
	    json_object_object_get_ex(h, "choice", &ch) && !strcmp(json_object_get_string(ch), "gre")) {
		pthread_mutex_unlock(&c->lock);
		*err = (struct xp_otg_err){ .http = 400, .kind = "validation" };
		snprintf(err->msg, sizeof(err->msg), "flows[0].packet[0].gre: not a header xdpperf sends");
		return -1;
	}
	json_object_put(c->cfg);
	json_object_deep_copy(cfg, &c->cfg, NULL);
	pthread_mutex_unlock(&c->lock);
	*warnings = NULL;
	return 0;
}

struct json_object *xp_otg_get_config(struct xp_otg *c)
{
	pthread_mutex_lock(&c->lock);
	struct json_object *r = c->cfg ? json_object_get(c->cfg) : json_object_new_object();
	pthread_mutex_unlock(&c->lock);
	return r;
}

int xp_otg_set_state(struct xp_otg *c, struct json_object *state, struct json_object **warnings, struct xp_otg_err *err)
{
	pthread_mutex_lock(&c->lock);
	json_object_put(c->state);
	c->state = json_object_get(state);
	c->running = strstr(json_object_to_json_string(state), "\"start\"") != NULL;
	pthread_mutex_unlock(&c->lock);
	*warnings = json_tokener_parse("{\"warnings\":[\"a warning of the double\"]}");
	return 0;
}

struct json_object *xp_otg_metrics(struct xp_otg *c, struct json_object *req, struct xp_otg_err *err)
{
	pthread_mutex_lock(&c->lock);
	json_object_put(c->mreq);
	c->mreq = json_object_get(req);
	bool running = c->running;
	pthread_mutex_unlock(&c->lock);
	char buf[512];
	snprintf(buf, sizeof(buf), "{\"choice\":\"flow_metrics\",\"flow_metrics\":[{\"name\":\"f1\",\"transmit\":\"%s\","
		 "\"frames_tx\":1000,\"frames_rx\":999}]}", running ? "started" : "stopped");
	return json_tokener_parse(buf);
}

struct json_object *xp_otg_version(void)
{
	return json_tokener_parse("{\"api_spec_version\":\"" XP_OTG_API_VERSION "\",\"sdk_version\":\"\","
				  "\"app_version\":\"test\"}");
}

bool xp_otg_wait_stopped(struct xp_otg *c, double timeout_s)
{
	return !c->running;
}

/* ---- a client that writes requests and reads answers byte by byte ---- */

struct answer {
	int status;
	char headers[4096];
	char *body;
	struct json_object *json; /* the body parsed, NULL if it is not JSON */
};

static void answer_free(struct answer *a)
{
	free(a->body);
	json_object_put(a->json);
	memset(a, 0, sizeof(*a));
}

/* Sends head (request line and headers, without the blank line) and body of len bytes; reads the answer. */
static void request(unsigned short port, const char *head, const char *body, size_t len, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	char h[2048];
	int n = snprintf(h, sizeof(h), "%s\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s\r\n", head,
			 body ? "" : "Content-Length: 0\r\n");
	assert_int_equal(send(fd, h, (size_t)n, MSG_NOSIGNAL), n);
	/* A refused body may not be read at all: the server then closes, and a send may fail. */
	for (size_t off = 0; body && off < len;) {
		ssize_t w = send(fd, body + off, len - off, MSG_NOSIGNAL);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	size_t cap = 1 << 16, got = 0;
	char *buf = malloc(cap + 1);
	for (;;) {
		if (got == cap)
			buf = realloc(buf, (cap *= 2) + 1);
		ssize_t r = recv(fd, buf + got, cap - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	close(fd);
	assert_true(sscanf(buf, "HTTP/1.1 %d", &a->status) == 1);
	char *end = strstr(buf, "\r\n\r\n");
	assert_non_null(end);
	snprintf(a->headers, sizeof(a->headers), "%.*s", (int)(end - buf), buf);
	a->body = strdup(end + 4);
	a->json = json_tokener_parse(a->body);
	free(buf);
}

static void post(unsigned short port, const char *path, const char *body, struct answer *a)
{
	char head[256];
	snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: %zu", path,
		 strlen(body));
	request(port, head, body, strlen(body), a);
}

static const char *member(struct json_object *o, const char *k)
{
	struct json_object *v;
	return o && json_object_object_get_ex(o, k, &v) ? json_object_get_string(v) : NULL;
}

/* OTG's Error object with this code, kind and a message containing want. */
static void assert_error(const struct answer *a, int code, const char *want)
{
	struct json_object *errs;
	assert_int_equal(a->status, code);
	assert_non_null(a->json);
	assert_int_equal(atoi(member(a->json, "code")), code);
	assert_string_equal(member(a->json, "kind"), code >= 500 ? "internal" : "validation");
	assert_true(json_object_object_get_ex(a->json, "errors", &errs));
	assert_int_equal(json_object_array_length(errs), 1);
	const char *msg = json_object_get_string(json_object_array_get_idx(errs, 0));
	if (!strstr(msg, want))
		fail_msg("error '%s' lacks '%s'", msg, want);
	assert_null(strchr(msg, '\n'));
	assert_non_null(strstr(a->headers, "Content-Type: application/json"));
}

struct fixture {
	struct xp_otg *c;
	struct xp_otg_http *h;
	unsigned short port;
	char token_file[64];
};

static int setup_with(void **state, const char *token)
{
	static struct fixture f;
	char err[512] = "";
	memset(&f, 0, sizeof(f));
	struct xp_otg_listen l = { .port = 0 };
	assert_int_equal(xp_addr_parse("127.0.0.1", &l.addr), 0);
	if (token) {
		snprintf(f.token_file, sizeof(f.token_file), "/tmp/xp-otg-token-XXXXXX");
		int fd = mkstemp(f.token_file);
		assert_true(fd >= 0);
		assert_int_equal(write(fd, token, strlen(token)), (ssize_t)strlen(token));
		close(fd);
		l.token_file = f.token_file;
	}
	f.c = xp_otg_new(NULL);
	f.h = xp_otg_http_start(f.c, &l, err, sizeof(err));
	if (!f.h)
		fail_msg("%s", err);
	f.port = xp_otg_http_port(f.h);
	assert_true(f.port > 0);
	*state = &f;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, NULL);
}

static int setup_token(void **state)
{
	return setup_with(state, "s3cret-token\n");
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	xp_otg_http_stop(f->h);
	xp_otg_free(f->c);
	if (f->token_file[0])
		unlink(f->token_file);
	return 0;
}

/* snappi's hello world, as it sends it. */
static const char hello_cfg[] =
	"{\"ports\":[{\"name\":\"p1\",\"location\":\"127.0.0.1;veth1\"},{\"name\":\"p2\",\"location\":\"198.19.1.2\"}],"
	"\"flows\":[{\"name\":\"f1\",\"tx_rx\":{\"choice\":\"port\",\"port\":{\"tx_name\":\"p1\",\"rx_names\":[\"p2\"]}},"
	"\"packet\":[{\"choice\":\"ethernet\",\"ethernet\":{}},{\"choice\":\"ipv4\",\"ipv4\":{}},{\"choice\":\"udp\","
	"\"udp\":{}}],\"size\":{\"choice\":\"fixed\",\"fixed\":128},\"rate\":{\"choice\":\"pps\",\"pps\":\"1000\"},"
	"\"duration\":{\"choice\":\"fixed_packets\",\"fixed_packets\":{\"packets\":1000}},"
	"\"metrics\":{\"enable\":true}}]}";

static void test_routes_reach_the_controller(void **state)
{
	struct fixture *f = *state;
	struct answer a;

	request(f->port, "GET /capabilities/version HTTP/1.1", NULL, 0, &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(member(a.json, "api_spec_version"), "1.61.0");
	answer_free(&a);

	post(f->port, "/config", hello_cfg, &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.body, "{\"warnings\":[]}"); /* OTG's Warning object, none */
	answer_free(&a);
	struct json_object *sent = json_tokener_parse(hello_cfg);
	assert_true(json_object_equal(f->c->cfg, sent)); /* the body arrived whole */

	request(f->port, "GET /config HTTP/1.1", NULL, 0, &a);
	assert_int_equal(a.status, 200);
	assert_true(json_object_equal(a.json, sent));
	answer_free(&a);
	json_object_put(sent);

	post(f->port, "/control/state",
	     "{\"choice\":\"traffic\",\"traffic\":{\"choice\":\"flow_transmit\",\"flow_transmit\":{\"state\":\"start\"}}}", &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(a.body, "{\"warnings\":[\"a warning of the double\"]}");
	answer_free(&a);
	assert_true(f->c->running);

	post(f->port, "/monitor/metrics", "{\"choice\":\"flow\",\"flow\":{\"flow_names\":[]}}", &a);
	assert_int_equal(a.status, 200);
	assert_string_equal(member(a.json, "choice"), "flow_metrics");
	assert_non_null(strstr(a.body, "\"frames_tx\":1000"));
	assert_non_null(strstr(a.body, "\"transmit\":\"started\""));
	assert_string_equal(member(f->c->mreq, "choice"), "flow");
	answer_free(&a);

	/* The controller's own refusal, its status and message kept: a config while traffic runs. */
	post(f->port, "/config", hello_cfg, &a);
	assert_error(&a, 409, "traffic runs");
	answer_free(&a);
}

static void test_bad_bodies(void **state)
{
	struct fixture *f = *state;
	struct answer a;

	post(f->port, "/config", "{\"ports\": [", &a);
	assert_error(&a, 400, "not JSON");
	answer_free(&a);
	post(f->port, "/config", "{} {}", &a);
	assert_error(&a, 400, "more after the value");
	answer_free(&a);
	post(f->port, "/control/state", "[1, 2]", &a);
	assert_error(&a, 400, "must be a JSON object, not a array");
	answer_free(&a);
	request(f->port, "POST /monitor/metrics HTTP/1.1", NULL, 0, &a);
	assert_error(&a, 400, "no body");
	answer_free(&a);
	/* The controller's path of the field it refuses. */
	post(f->port, "/config",
	     "{\"ports\":[{\"name\":\"p1\"}],\"flows\":[{\"name\":\"f\",\"packet\":[{\"choice\":\"gre\"}]}]}", &a);
	assert_error(&a, 400, "flows[0].packet[0].gre");
	answer_free(&a);
	assert_null(f->c->cfg); /* nothing taken */
}

static void test_paths_and_methods(void **state)
{
	struct fixture *f = *state;
	struct answer a;

	request(f->port, "GET /nowhere HTTP/1.1", NULL, 0, &a);
	assert_error(&a, 404, "/nowhere is not served");
	answer_free(&a);
	post(f->port, "/control/action", "{}", &a); /* OTG's, but not the traffic subset */
	assert_error(&a, 404, "not served");
	answer_free(&a);
	request(f->port, "DELETE /config HTTP/1.1", NULL, 0, &a);
	assert_error(&a, 405, "GET, POST");
	assert_non_null(strstr(a.headers, "Allow: GET, POST"));
	answer_free(&a);
	request(f->port, "GET /control/state HTTP/1.1", NULL, 0, &a);
	assert_error(&a, 405, "takes POST");
	assert_non_null(strstr(a.headers, "Allow: POST"));
	answer_free(&a);
	post(f->port, "/capabilities/version", "{}", &a);
	assert_error(&a, 405, "takes GET");
	answer_free(&a);
}

static void test_body_limit(void **state)
{
	struct fixture *f = *state;
	struct answer a;
	char head[256];

	/* Announced: refused before the body is read. */
	snprintf(head, sizeof(head), "POST /config HTTP/1.1\r\nContent-Length: %u", XP_OTG_BODY_MAX + 1);
	request(f->port, head, "{}", 2, &a);
	assert_error(&a, 413, "over 4194304 bytes");
	answer_free(&a);

	/* Chunked, so only counted as it comes: a JSON string of 5 MiB. */
	size_t n = 5u << 20, chunk = 1u << 16;
	char *json = malloc(n + 3);
	char *big = malloc(n + (1u << 16)), *p = big; /* the chunks' headers: about 10 bytes per 64 KiB */
	json[0] = '"';
	memset(json + 1, 'x', n);
	json[n + 1] = '"';
	for (size_t off = 0; off < n + 2; off += chunk) {
		size_t c = off + chunk <= n + 2 ? chunk : n + 2 - off;
		p += sprintf(p, "%zx\r\n", c);
		memcpy(p, json + off, c);
		p += c;
		p += sprintf(p, "\r\n");
	}
	p += sprintf(p, "0\r\n\r\n");
	request(f->port, "POST /config HTTP/1.1\r\nTransfer-Encoding: chunked", big, (size_t)(p - big), &a);
	assert_error(&a, 413, "over 4194304 bytes");
	answer_free(&a);
	free(json);
	free(big);

	/* The server serves on after refusing both. */
	request(f->port, "GET /capabilities/version HTTP/1.1", NULL, 0, &a);
	assert_int_equal(a.status, 200);
	answer_free(&a);
}

static void test_token(void **state)
{
	struct fixture *f = *state;
	struct answer a;

	request(f->port, "GET /capabilities/version HTTP/1.1", NULL, 0, &a);
	assert_error(&a, 401, "Authorization: Bearer");
	assert_non_null(strstr(a.headers, "WWW-Authenticate: Bearer"));
	answer_free(&a);
	request(f->port, "GET /nowhere HTTP/1.1", NULL, 0, &a); /* no path is told without the token */
	assert_error(&a, 401, "bearer token");
	answer_free(&a);
	request(f->port, "GET /capabilities/version HTTP/1.1\r\nAuthorization: Bearer s3cret-toke", NULL, 0, &a);
	assert_int_equal(a.status, 401);
	answer_free(&a);
	request(f->port, "GET /capabilities/version HTTP/1.1\r\nAuthorization: Bearer s3cret-token", NULL, 0, &a);
	assert_int_equal(a.status, 200); /* the file's trailing newline is not the token's */
	answer_free(&a);
}

static void test_listen_rules(void **state)
{
	struct xp_otg_listen l;
	char err[512];
	char as[64];

	assert_int_equal(xp_otg_listen_parse(":8443", &l, err, sizeof(err)), 0);
	assert_string_equal(xp_addr_str(&l.addr, as, sizeof(as)), "127.0.0.1");
	assert_int_equal(l.port, 8443);
	assert_int_equal(xp_otg_listen_check(&l, err, sizeof(err)), 0);
	assert_int_equal(xp_otg_listen_parse("[::1]:80", &l, err, sizeof(err)), 0);
	assert_int_equal(xp_otg_listen_check(&l, err, sizeof(err)), 0);
	assert_int_equal(xp_otg_listen_parse("::1:80", &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "[ADDR]:PORT"));
	assert_int_equal(xp_otg_listen_parse("127.0.0.1:0", &l, err, sizeof(err)), -1);
	assert_int_equal(xp_otg_listen_parse("host:80", &l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not an IPv4 or IPv6 address"));

	/* Not loopback: TLS and a token, or refused (nothing listens). */
	assert_int_equal(xp_otg_listen_parse("0.0.0.0:8443", &l, err, sizeof(err)), 0);
	assert_int_equal(xp_otg_listen_check(&l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "needs TLS and a token"));
	l.token_file = "/tmp/t";
	assert_int_equal(xp_otg_listen_check(&l, err, sizeof(err)), -1);
	l.cert_file = "/tmp/c";
	assert_int_equal(xp_otg_listen_check(&l, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "go together"));
	l.key_file = "/tmp/k";
	assert_int_equal(xp_otg_listen_check(&l, err, sizeof(err)), 0);
	assert_null(xp_otg_http_start(NULL, &l, err, sizeof(err))); /* the files do not exist */
	assert_non_null(strstr(err, "--otg-token: cannot open /tmp/t"));

	/* A token others can read is refused. */
	char tf[] = "/tmp/xp-otg-tok-XXXXXX";
	int fd = mkstemp(tf);
	assert_int_equal(write(fd, "tok", 3), 3);
	fchmod(fd, 0644);
	close(fd);
	assert_int_equal(xp_otg_listen_parse("127.0.0.1:1", &l, err, sizeof(err)), 0);
	l.port = 0;
	l.token_file = tf;
	assert_null(xp_otg_http_start(NULL, &l, err, sizeof(err)));
	assert_non_null(strstr(err, "chmod 600"));
	unlink(tf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_routes_reach_the_controller, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_bodies, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths_and_methods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_body_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_token, setup_token, teardown),
		cmocka_unit_test(test_listen_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
