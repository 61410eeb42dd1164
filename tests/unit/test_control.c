/*
 * The control channel against a hostile peer: strict decoding of start
 * requests, printable copies of what the server says, queued sends with an
 * output limit (a peer that never reads), the raw line kept for the MAC.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "proto/channel.h"
#include "proto/messages.h"
#include "spec/spec.h"

/* Decode a start line; returns xp_test_from_json's result and its message. */
static int decode(const char *line, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *o = json_tokener_parse(line);
	assert_non_null(o);
	err[0] = '\0';
	int r = xp_test_from_json(o, t, err, errlen);
	json_object_put(o);
	return r;
}

#define START "{\"op\":\"start\",\"version\":1,\"port_lo\":63000,\"port_hi\":63015"

static void test_valid_request_roundtrip(void **state)
{
	struct xp_test t = { .version = 1, .kind = XP_TEST_CONNECT, .engine = "socket", .family = AF_INET6,
			     .port_lo = 7000, .port_hi = 7003, .duration = 2.5, .parallel = 64, .listen = true,
			     .close_mode = XP_CLOSE_RST }, u;
	char err[256];
	struct json_object *o = xp_test_to_json(&t);
	assert_int_equal(xp_test_from_json(o, &u, err, sizeof(err)), 0);
	json_object_put(o);
	assert_int_equal(u.kind, XP_TEST_CONNECT);
	assert_string_equal(u.engine, "socket");
	assert_int_equal(u.family, AF_INET6);
	assert_int_equal(u.port_lo, 7000);
	assert_int_equal(u.port_hi, 7003);
	assert_true(u.duration == 2.5);
	assert_int_equal(u.parallel, 64);
	assert_true(u.listen);
	assert_int_equal(u.close_mode, XP_CLOSE_RST);
	/* Missing optional fields take their defaults. */
	assert_int_equal(decode(START "}", &u, err, sizeof(err)), 0);
	assert_true(u.duration == 10);
	assert_int_equal(u.family, AF_INET);
	assert_false(u.udp);
}

/* Each line is refused, with a one-line message containing word. */
static void test_refused_fields(void **state)
{
	static const struct { const char *line, *word; } cases[] = {
		/* floats in integer fields were truncated: 1.9 started a test */
		{ "{\"op\":\"start\",\"version\":1.9,\"port_lo\":63000,\"port_hi\":63015}", "'version' must be an integer" },
		{ "{\"op\":\"start\",\"version\":\"1\",\"port_lo\":63000,\"port_hi\":63015}", "'version' must be an integer" },
		{ "{\"op\":\"start\",\"version\":1,\"port_lo\":63000.5,\"port_hi\":63015}", "'port_lo' must be an integer" },
		{ START ",\"parallel\":1e3}", "parallel" },
		{ START ",\"parallel\":99999999999999999999}", "parallel" },
		{ START ",\"frame_size\":64.0}", "'frame_size' must be an integer" },
		{ "{\"op\":\"start\",\"version\":1,\"port_lo\":0,\"port_hi\":10}", "port_lo" },
		{ "{\"op\":\"start\",\"version\":1,\"port_lo\":10,\"port_hi\":70000}", "port_hi" },
		{ "{\"op\":\"start\",\"version\":1,\"port_lo\":100,\"port_hi\":10}", "bad port range" },
		{ "{\"op\":\"start\",\"version\":2,\"port_lo\":63000,\"port_hi\":63015}", "version 2" },
		/* durations: the black-hole request used 1e308 and Infinity */
		{ START ",\"duration\":1e308}", "duration" },
		{ START ",\"duration\":Infinity}", "finite" },
		{ START ",\"duration\":-Infinity}", "finite" },
		{ START ",\"duration\":NaN}", "finite" },
		{ START ",\"duration\":0}", "duration" },
		{ START ",\"duration\":-5}", "duration" },
		{ START ",\"duration\":86401}", "duration" },
		{ START ",\"duration\":\"10\"}", "'duration' must be a number" },
		/* booleans, names, families */
		{ START ",\"pass\":\"yes\"}", "'pass' must be true or false" },
		{ START ",\"listen\":1}", "'listen' must be true or false" },
		{ START ",\"respond\":0}", "'respond' must be true or false" },
		{ START ",\"family\":5}", "family" },
		{ START ",\"family\":46}", "family" },
		{ START ",\"proto\":\"sctp\"}", "unknown proto" },
		{ START ",\"proto\":17}", "'proto' must be a string" },
		{ START ",\"close\":\"fin\"}", "unknown close" },
		{ START ",\"kind\":\"flood\"}", "unknown kind" },
		{ START ",\"engine\":\"dpdk\"}", "unknown engine" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xp_test t;
		char err[256];
		if (decode(cases[i].line, &t, err, sizeof(err)) != -1 || !strstr(err, cases[i].word))
			fail_msg("%s: message '%s', want -1 and '%s'", cases[i].line, err, cases[i].word);
		assert_null(strchr(err, '\n'));
	}
}

/* "spec": the test's specification rides beside the resolved fields, in its
 * wire form (no auth key path); the server reads it with xp_spec_from_json and
 * refuses a bad one naming the member; a request without one is accepted. */
static void test_spec_member(void **state)
{
	static struct xp_spec sp;
	struct xp_test t = { .version = 1, .kind = XP_TEST_STREAM, .engine = "xsk", .family = AF_INET,
			     .port_lo = 7000, .port_hi = 7003, .duration = 3, .frame_size = 128 }, u;
	char err[256];

	(void)state;
	xp_spec_default(&sp);
	snprintf(sp.host, sizeof(sp.host), "198.19.1.2");
	snprintf(sp.auth_key, sizeof(sp.auth_key), "/etc/xdpperf/secret.key");
	sp.duration = 3;
	sp.traffic[0].frame_size = 128;
	t.spec = xp_spec_to_wire_json(&sp);
	assert_non_null(t.spec);
	struct json_object *o = xp_test_to_json(&t);
	xp_test_release(&t);
	assert_null(t.spec);
	/* Through text, as it travels. */
	const char *line = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	assert_null(strstr(line, "secret.key"));
	assert_null(strstr(line, "auth_key"));
	assert_non_null(strstr(line, "\"auth\":true"));
	assert_int_equal(decode(line, &u, err, sizeof(err)), 0);
	json_object_put(o);
	assert_non_null(u.spec);
	/* The resolved part is read as before, beside it. */
	assert_int_equal(u.port_lo, 7000);
	assert_int_equal(u.frame_size, 128);
	assert_true(u.duration == 3);
	static struct xp_spec back;
	assert_int_equal(xp_spec_from_json(u.spec, &back, err, sizeof(err)), 0);
	assert_string_equal(back.host, "198.19.1.2");
	assert_true(back.duration == 3);
	assert_int_equal(back.traffic[0].frame_size, 128);
	assert_string_equal(back.auth_key, ""); /* the wire never carries the key's path */
	xp_test_release(&u);
	/* An older client's request (no "spec") and a null one: accepted, none held. */
	assert_int_equal(decode(START "}", &u, err, sizeof(err)), 0);
	assert_null(u.spec);
	assert_int_equal(decode(START ",\"spec\":null}", &u, err, sizeof(err)), 0);
	assert_null(u.spec);

	static const struct { const char *line, *word; } bad[] = {
		{ START ",\"spec\":7}", "'spec' must be an object" },
		{ START ",\"spec\":[]}", "'spec' must be an object" },
		{ START ",\"spec\":{\"duration\":\"long\"}}", "\"duration\" is not a double" },
		{ START ",\"spec\":{\"duration\":Infinity}}", "\"duration\" is not a finite number" },
		{ START ",\"spec\":{\"auth\":\"yes\"}}", "\"auth\" is not a boolean" },
		{ START ",\"spec\":{\"engine\":\"dpdk\"}}", "no engine \"dpdk\"" },
		{ START ",\"spec\":{\"traffic\":[]}}", "\"traffic\" has 0 streams" },
		{ START ",\"spec\":{\"traffic\":[{\"port_hi\":70000}]}}", "\"port_hi\" 70000 is outside" },
		{ START ",\"spec\":{\"host\":\"" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"}}", "\"host\" is longer than 255 bytes" },
		/* The spec never overrides the resolved fields' own checks. */
		{ START ",\"duration\":86401,\"spec\":{\"duration\":5}}", "duration" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (decode(bad[i].line, &u, err, sizeof(err)) != -1 || !strstr(err, bad[i].word))
			fail_msg("%s: message '%s', want -1 and '%s'", bad[i].line, err, bad[i].word);
		assert_null(u.spec);
		assert_null(strchr(err, '\n'));
	}
}

/* The stamps' tag key of the "started" reply: 32 hex digits both ways; an
 * older server's reply without one gives 0; anything else is refused. */
static void test_stamp_key(void **state)
{
	const uint64_t k[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };
	uint64_t got[2];
	char err[256];
	struct json_object *p = json_object_new_object();

	(void)state;
	json_object_object_add(p, "key", xp_stamp_key_to_json(k));
	assert_string_equal(json_object_get_string(json_object_object_get(p, "key")),
			    "0123456789abcdeffedcba9876543210");
	assert_int_equal(xp_stamp_key_from_json(p, got, err, sizeof(err)), 1);
	assert_true(got[0] == k[0] && got[1] == k[1]);
	json_object_put(p);
	/* none: an older server */
	p = json_object_new_object();
	assert_int_equal(xp_stamp_key_from_json(p, got, err, sizeof(err)), 0);
	assert_true(!got[0] && !got[1]);
	json_object_put(p);
	static const char *const bad[] = { "{\"key\":\"0123\"}", "{\"key\":12}",
		"{\"key\":\"0123456789abcdeffedcba987654321g\"}", "{\"key\":\"00000000000000000000000000000000\"}",
		"{\"key\":\"0123456789abcdeffedcba98765432100\"}", "{\"key\":null}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		p = json_tokener_parse(bad[i]);
		assert_non_null(p);
		err[0] = 0;
		got[0] = got[1] = 7;
		if (xp_stamp_key_from_json(p, got, err, sizeof(err)) != -1)
			fail_msg("%s taken", bad[i]);
		assert_true(!got[0] && !got[1]);
		assert_non_null(strstr(err, "32 hex digits"));
		json_object_put(p);
	}
}

/* The stamp settings travel with the request; a request without them asks for none. */
static void test_stamp_roundtrip(void **state)
{
	struct xp_test t = { .version = 1, .kind = XP_TEST_STREAM, .engine = "live", .family = AF_INET,
			     .port_lo = 63000, .port_hi = 63015, .duration = 3, .frame_size = 64 }, u;
	t.stamp = (struct xp_test_stamp){ .t0 = 1234567890123ull, .ival = 250000000, .tai = true, .oneway = true,
					  .hwts = true, .boot_id = "0f3e2a64-7c0b-4a1e-9b1a-2f4d6c8e0a12" };
	char err[256];
	struct json_object *o = xp_test_to_json(&t);
	assert_int_equal(xp_test_from_json(o, &u, err, sizeof(err)), 0);
	json_object_put(o);
	assert_true(u.stamp.t0 == 1234567890123ull);
	assert_true(u.stamp.ival == 250000000);
	assert_true(u.stamp.tai);
	assert_true(u.stamp.oneway);
	assert_true(u.stamp.hwts);
	assert_string_equal(u.stamp.boot_id, t.stamp.boot_id);
	/* the other fields as before */
	assert_int_equal(u.frame_size, 64);
	assert_string_equal(u.engine, "live");
	/* defaults: monotonic clock, no one-way, no NIC timestamps; absent: no stamps */
	assert_int_equal(decode(START ",\"stamp\":{\"t0\":5,\"ival\":250000}}", &u, err, sizeof(err)), 0);
	assert_true(u.stamp.t0 == 5 && u.stamp.ival == 250000);
	assert_false(u.stamp.tai || u.stamp.oneway || u.stamp.hwts);
	assert_string_equal(u.stamp.boot_id, "");
	assert_int_equal(decode(START "}", &u, err, sizeof(err)), 0);
	assert_true(u.stamp.ival == 0);
	/* a test without stamps sends no "stamp" */
	t.stamp.ival = 0;
	o = xp_test_to_json(&t);
	assert_false(json_object_object_get_ex(o, "stamp", NULL));
	json_object_put(o);
}

static void test_stamp_refused(void **state)
{
	static const struct { const char *line, *word; } cases[] = {
		{ START ",\"stamp\":5}", "'stamp' must be an object" },
		{ START ",\"stamp\":{\"t0\":1}}", "'ival'" },
		{ START ",\"stamp\":{\"t0\":1,\"ival\":1}}", "'ival' is out of range" },        /* 4 ns */
		{ START ",\"stamp\":{\"t0\":1,\"ival\":2.5e8}}", "'ival' must be an integer" },
		{ START ",\"stamp\":{\"t0\":-1,\"ival\":250000}}", "'t0' is out of range" },
		{ START ",\"stamp\":{\"t0\":1,\"ival\":250000,\"clock\":\"gps\"}}", "unknown clock" },
		{ START ",\"stamp\":{\"t0\":1,\"ival\":250000,\"oneway\":1}}", "'oneway' must be true or false" },
		{ START ",\"stamp\":{\"t0\":1,\"ival\":250000,\"hwts\":\"y\"}}", "'hwts' must be true or false" },
		{ START ",\"stamp\":{\"t0\":1,\"ival\":250000,\"boot_id\":\"../../etc/passwd\"}}", "boot id" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xp_test t;
		char err[256];
		if (decode(cases[i].line, &t, err, sizeof(err)) != -1 || !strstr(err, cases[i].word))
			fail_msg("%s: message '%s', want -1 and '%s'", cases[i].line, err, cases[i].word);
	}
}

/* The sample reply's final interval and the stop reply's streams, both ways. */
static void test_final_and_streams(void **state)
{
	struct xp_final_ival *f = calloc(1, sizeof(*f)), *g = calloc(1, sizeof(*g));
	char err[256];
	assert_non_null(f);
	assert_non_null(g);
	f->index = 7;
	xp_lat_init(&f->lat);
	f->lat.recv = 1000, f->lat.dup = 2, f->lat.late = 3, f->lat.reordered = 4, f->lat.clock_neg = 0;
	f->lat.n = 1000, f->lat.sum = 1000 * 2500, f->lat.min = 2000, f->lat.max = 3000;
	f->lat.b[xp_lat_bucket(2000)] = 600;
	f->lat.b[xp_lat_bucket(3000)] = 400;
	f->streams = 2, f->jitter_mean_ns = 120.5, f->jitter_max_ns = 200;
	struct json_object *o = xp_final_to_json(f);
	struct json_object *k = json_tokener_parse(json_object_to_json_string(o));
	assert_int_equal(xp_final_from_json(k, g, err, sizeof(err)), 0);
	assert_true(g->index == 7);
	assert_false(g->unknown);
	assert_memory_equal(&f->lat, &g->lat, sizeof(f->lat));
	assert_int_equal(g->streams, 2);
	assert_true(g->jitter_mean_ns == 120.5 && g->jitter_max_ns == 200);
	json_object_put(k);
	json_object_put(o);
	/* bins the server could no longer read: unknown, no histogram */
	f->unknown = true;
	f->streams = 0;
	o = xp_final_to_json(f);
	assert_false(json_object_object_get_ex(o, "latency", NULL));
	assert_int_equal(xp_final_from_json(o, g, err, sizeof(err)), 0);
	assert_true(g->unknown);
	assert_int_equal(g->lat.n, 0);
	json_object_put(o);
	/* a hostile server: no index, a negative one, a histogram missing, a jitter that is not a number */
	static const char *const bad[] = {
		"{\"unknown\":true}",
		"{\"index\":-3,\"unknown\":true}",
		"{\"index\":3,\"unknown\":false}",
		"{\"index\":3,\"unknown\":true,\"streams\":1,\"jitter_mean_ns\":\"x\",\"jitter_max_ns\":1}",
		"{\"index\":3,\"unknown\":true,\"streams\":1,\"jitter_mean_ns\":-1,\"jitter_max_ns\":1}",
		"{\"index\":3,\"unknown\":true,\"streams\":9999}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		k = json_tokener_parse(bad[i]);
		assert_non_null(k);
		if (xp_final_from_json(k, g, err, sizeof(err)) != -1)
			fail_msg("accepted %s", bad[i]);
		json_object_put(k);
	}
	free(f);
	free(g);

	static const struct xp_stream_figs s[2] = {
		{ .stream = 0, .recv = 10, .dup = 1, .reordered = 2, .reorder_max = 3, .too_old = 0, .next_exp = 12,
		  .jitter_ns = 44 },
		{ .stream = 5, .recv = 20, .next_exp = 20, .jitter_ns = 8 },
	};
	struct xp_stream_figs back[2];
	o = xp_streams_to_json(s, 2);
	assert_int_equal(xp_streams_from_json(o, back, 2, err, sizeof(err)), 2);
	assert_memory_equal(back, s, sizeof(s));
	assert_int_equal(xp_streams_from_json(o, back, 1, err, sizeof(err)), -1); /* more than room for */
	json_object_put(o);
	k = json_tokener_parse("[{\"stream\":300,\"received\":1,\"duplicates\":0,\"reordered\":0,"
			       "\"reorder_extent_max\":0,\"too_old\":0,\"next_expected\":1}]");
	assert_int_equal(xp_streams_from_json(k, back, 2, err, sizeof(err)), -1); /* stream ids are 0..255 */
	json_object_put(k);
}

static void test_printable(void **state)
{
	char out[64];
	xp_msg_printable("ok \x1b]0;owned\x07\x1b[2J\r\nend\x7f\xc3\xa9", out, sizeof(out));
	assert_string_equal(out, "ok ?]0;owned??[2J??end???");
	xp_msg_printable("0123456789", out, 5); /* cut, always terminated */
	assert_string_equal(out, "0123");
	xp_msg_printable(NULL, out, sizeof(out));
	assert_string_equal(out, "");
}

static struct json_object *line_obj(size_t pad)
{
	static char buf[2048];
	memset(buf, 'x', pad);
	buf[pad] = '\0';
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("error"));
	json_object_object_add(o, "msg", json_object_new_string(buf));
	return o;
}

/* A peer that never reads: sends keep returning (queued), then -ENOBUFS at the limit. */
static void test_queued_send_limit(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0); /* blocking: a wait would hang here */
	int small = 4096;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
	struct xp_ctrl c;
	xp_ctrl_init_queued(&c, sv[0], 65536);
	struct json_object *o = line_obj(1000);
	int r = 0, sent = 0;
	for (int i = 0; i < 100000 && !r; i++) {
		r = xp_ctrl_send(&c, o);
		if (!r)
			sent++;
		assert_true(xp_ctrl_pending(&c) <= 65536);
	}
	assert_int_equal(r, -ENOBUFS);
	assert_true(xp_ctrl_pending(&c) > 60000); /* it queued up to the limit, not less */
	/* The peer reads everything: what was queued arrives whole and in order. */
	size_t got = 0, lines = 0;
	char buf[8192];
	while (xp_ctrl_pending(&c) || got < (size_t)sent * 1000) {
		assert_int_equal(xp_ctrl_flush(&c), 0);
		ssize_t n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			for (ssize_t k = 0; k < n; k++)
				lines += buf[k] == '\n';
			got += (size_t)n;
		}
		if (!xp_ctrl_pending(&c) && n <= 0)
			break;
	}
	assert_int_equal(lines, sent);
	json_object_put(o);
	xp_ctrl_free(&c);
	close(sv[0]);
	close(sv[1]);
}

/* A closed peer: the queued send reports the error instead of waiting. */
static void test_queued_send_peer_gone(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	close(sv[1]);
	struct xp_ctrl c;
	xp_ctrl_init_queued(&c, sv[0], 65536);
	struct json_object *o = line_obj(10);
	assert_int_equal(xp_ctrl_send(&c, o), -EPIPE);
	json_object_put(o);
	xp_ctrl_free(&c);
	close(sv[0]);
}

/* keep_line: the exact bytes of each line taken (what the MAC covers), and several lines in one read. */
static void test_keep_line(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	const char *a = "{\"op\":\"auth\",\"mac\":\"00\"}", *b = "{ \"op\" : \"start\",\"x\":1.50 }";
	char both[256];
	snprintf(both, sizeof(both), "%s\n%s\n{}", a, b);
	assert_int_equal(write(sv[1], both, strlen(both)), (ssize_t)strlen(both));
	struct xp_ctrl c;
	xp_ctrl_init_queued(&c, sv[0], 65536);
	c.keep_line = true;
	struct json_object *m;
	assert_int_equal(xp_ctrl_poll_recv(&c, &m), 1);
	json_object_put(m);
	assert_int_equal(c.line_len, strlen(a));
	assert_string_equal(c.line, a);
	assert_true(xp_ctrl_has_line(&c));
	assert_int_equal(xp_ctrl_poll_recv(&c, &m), 1);
	json_object_put(m);
	assert_string_equal(c.line, b); /* byte for byte, spaces and 1.50 included */
	assert_false(xp_ctrl_has_line(&c)); /* "{}" has no newline yet */
	assert_int_equal(xp_ctrl_poll_recv(&c, &m), -EAGAIN);
	xp_ctrl_free(&c);
	close(sv[0]);
	close(sv[1]);
}

/* A line longer than the 64 KiB limit is a protocol error, not a wait or an overflow. */
static void test_line_limit(void **state)
{
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	static char big[XP_CTRL_MAX_MSG + 16];
	memset(big, ' ', sizeof(big));
	struct xp_ctrl c;
	xp_ctrl_init_queued(&c, sv[0], 65536);
	int r = -EAGAIN;
	size_t off = 0;
	while (r == -EAGAIN && off < sizeof(big)) {
		ssize_t w = send(sv[1], big + off, sizeof(big) - off, MSG_DONTWAIT);
		if (w > 0)
			off += (size_t)w;
		struct json_object *m;
		r = xp_ctrl_poll_recv(&c, &m);
	}
	assert_int_equal(r, -EPROTO);
	xp_ctrl_free(&c);
	close(sv[0]);
	close(sv[1]);
}

/* One object per line: text after it (a second object, junk, a NUL) is refused, whitespace is not (issue 28 point 11). */
static void test_trailing_text(void **state)
{
	static const struct { const char *line; bool ok; } cases[] = {
		{ "{\"op\":\"start\"}{\"op\":\"stop\"}", false },
		{ "{\"op\":\"start\"} {\"op\":\"stop\"}", false },
		{ "{\"op\":\"start\"}x", false },
		{ "{\"op\":\"start\"}]", false },
		{ "{\"op\":\"start\"}1", false },
		{ "{}{}", false },
		{ "{\"op\":\"start\"}", true },
		{ "  {\"op\":\"start\"} \t\r", true },
		{ "[1]", false },
		{ "", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int sv[2];
		assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
		char line[128];
		int n = snprintf(line, sizeof(line), "%s\n{\"op\":\"next\"}\n", cases[i].line);
		assert_int_equal(write(sv[1], line, (size_t)n), n);
		struct xp_ctrl c;
		xp_ctrl_init_queued(&c, sv[0], 65536);
		struct json_object *m = NULL;
		int r = xp_ctrl_poll_recv(&c, &m);
		if (r != (cases[i].ok ? 1 : -EPROTO))
			fail_msg("case %zu '%s': %d", i, cases[i].line, r);
		if (r == 1)
			assert_string_equal(xp_json_str(m, "op", ""), "start");
		json_object_put(m);
		/* The next line is read on its own either way. */
		assert_int_equal(xp_ctrl_poll_recv(&c, &m), 1);
		assert_string_equal(xp_json_str(m, "op", ""), "next");
		json_object_put(m);
		xp_ctrl_free(&c);
		close(sv[0]);
		close(sv[1]);
	}
	/* A NUL after the object, inside the line. */
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	static const char nul[] = "{\"op\":\"start\"}\0{\"op\":\"stop\"}\n";
	assert_int_equal(write(sv[1], nul, sizeof(nul) - 1), (ssize_t)sizeof(nul) - 1);
	struct xp_ctrl c;
	xp_ctrl_init_queued(&c, sv[0], 65536);
	struct json_object *m = NULL;
	assert_int_equal(xp_ctrl_poll_recv(&c, &m), -EPROTO);
	xp_ctrl_free(&c);
	close(sv[0]);
	close(sv[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_request_roundtrip),
		cmocka_unit_test(test_refused_fields),
		cmocka_unit_test(test_spec_member),
		cmocka_unit_test(test_stamp_roundtrip),
		cmocka_unit_test(test_stamp_key),
		cmocka_unit_test(test_stamp_refused),
		cmocka_unit_test(test_final_and_streams),
		cmocka_unit_test(test_printable),
		cmocka_unit_test(test_queued_send_limit),
		cmocka_unit_test(test_queued_send_peer_gone),
		cmocka_unit_test(test_keep_line),
		cmocka_unit_test(test_line_limit),
		cmocka_unit_test(test_trailing_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
