/*
 * libFuzzer harness: the control messages a client sends the server
 * (user/proto/messages.c), from the bytes of one control line, parsed as the
 * channel parses it (json_tokener_parse, user/proto/channel.c).
 *
 * Beyond "no crash, no leak, no undefined behaviour" (ASan, UBSan), it
 * checks what the decoders promise:
 *  - a start request xp_test_from_json accepts has its documented ranges
 *    (ports 1..65535 ascending, at most XP_TEST_MAX_BIND bind addresses of
 *    the test's family), and survives the round trip: encoded again,
 *    serialized, parsed and decoded it is the same test (its "spec" too:
 *    held only when xp_spec_from_json took it, the same spec after the trip);
 *  - one it refuses gets a non-empty message, on one line (but see below
 *    for the client's own strings quoted in it);
 *  - counters and socket counts decode to the same values after their own
 *    round trip.
 * A broken promise aborts, which libFuzzer reports as a crash.
 */
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "proto/channel.h"
#include "proto/messages.h"
#include "spec/spec.h"
#include "bpf/lib/stamp.h"

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

static int cur_has_escaped_newline;

static struct json_object *reparse(struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
	return json_tokener_parse(s);
}

static int same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void check_test(struct json_object *o)
{
	struct xp_test t, t2;
	char err[256] = "", err2[256] = "";

	if (xp_test_from_json(o, &t, err, sizeof(err))) {
		PROMISE(err[0]);
		/* Found by this harness: the message quotes the client's
		 * string as sent ("unknown kind 'co\nnect'"), so an escaped
		 * newline in it comes back in the message. Contained where it
		 * is printed (xp_msg_printable: the client prints printable
		 * ASCII only, the server logs the same way) and one line on
		 * the wire (JSON escapes it); any other newline is a finding. */
		PROMISE(!strchr(err, '\n') || cur_has_escaped_newline);
		return;
	}
	PROMISE(t.port_lo >= 1 && t.port_lo <= t.port_hi);
	PROMISE(t.family == AF_INET || t.family == AF_INET6);
	PROMISE(t.engine != NULL);
	PROMISE(t.nbind <= XP_TEST_MAX_BIND);
	for (unsigned i = 0; i < t.nbind; i++)
		PROMISE(t.bind[i].family == t.family);

	struct json_object *e = xp_test_to_json(&t), *back = reparse(e);
	PROMISE(back != NULL);
	if (xp_test_from_json(back, &t2, err2, sizeof(err2))) {
		fprintf(stderr, "accepted test refused after its round trip: %s\n", err2);
		abort();
	}
	PROMISE(t2.kind == t.kind && !strcmp(t2.engine, t.engine) && t2.family == t.family && t2.udp == t.udp);
	PROMISE(t2.pass == t.pass && t2.port_lo == t.port_lo && t2.port_hi == t.port_hi);
	PROMISE(same_double(t2.duration, t.duration) && t2.frame_size == t.frame_size && t2.parallel == t.parallel);
	PROMISE(t2.respond == t.respond && t2.listen == t.listen && t2.close_mode == t.close_mode);
	PROMISE(t2.nbind == t.nbind);
	for (unsigned i = 0; i < t.nbind; i++)
		PROMISE(xp_addr_eq(&t2.bind[i], &t.bind[i]));
	/* The stamp settings: none, or an interval in range, and the same after the trip. */
	PROMISE(!t.stamp.ival || (t.stamp.ival >= XP_STAMP_IVAL_MIN && t.stamp.ival <= XP_STAMP_IVAL_MAX));
	PROMISE(t2.stamp.ival == t.stamp.ival && t2.stamp.t0 == t.stamp.t0 && t2.stamp.tai == t.stamp.tai &&
		t2.stamp.oneway == t.stamp.oneway && t2.stamp.hwts == t.stamp.hwts &&
		!strcmp(t2.stamp.boot_id, t.stamp.boot_id));
	/* The spec: kept only when xp_spec_from_json took it, and the same test after the trip. */
	PROMISE(!t.spec == !t2.spec);
	if (t.spec) {
		struct xp_spec *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
		PROMISE(a && b);
		PROMISE(!xp_spec_from_json(t.spec, a, err, sizeof(err)));
		PROMISE(!xp_spec_from_json(t2.spec, b, err, sizeof(err)));
		PROMISE(!memcmp(a, b, sizeof(*a)));
		free(a);
		free(b);
	}
	xp_test_release(&t);
	xp_test_release(&t2);
	json_object_put(back);
	json_object_put(e);
}

static void check_counters(struct json_object *o)
{
	struct xp_counters c, c2;
	struct xp_sock_counts s, s2;

	xp_counters_from_json(o, &c);
	struct json_object *e = xp_counters_to_json(&c), *back = reparse(e);
	PROMISE(back != NULL);
	xp_counters_from_json(back, &c2);
	PROMISE(!memcmp(&c, &c2, sizeof(c)));
	json_object_put(back);
	json_object_put(e);

	xp_sock_counts_from_json(o, &s);
	e = xp_sock_counts_to_json(&s);
	back = reparse(e);
	PROMISE(back != NULL);
	xp_sock_counts_from_json(back, &s2);
	PROMISE(!memcmp(&s, &s2, sizeof(s)));
	json_object_put(back);
	json_object_put(e);
}

/* A server's final interval and per-stream figures (what the client reads back): if accepted, within
 * their ranges and the same after their own round trip. */
static void check_final(struct json_object *o)
{
	static struct xp_final_ival f, f2;
	static struct xp_stream_figs st[XP_STAMP_MAX_STREAMS], st2[XP_STAMP_MAX_STREAMS];
	char err[160];

	if (!xp_final_from_json(o, &f, err, sizeof(err))) {
		PROMISE(f.streams <= XP_STAMP_MAX_STREAMS);
		uint64_t inb = 0;
		for (unsigned b = 0; b < XP_LAT_BUCKETS; b++)
			inb += f.lat.b[b];
		PROMISE(inb <= f.lat.n);
		struct json_object *e = xp_final_to_json(&f), *back = reparse(e);
		PROMISE(back && !xp_final_from_json(back, &f2, err, sizeof(err)));
		PROMISE(f2.index == f.index && f2.unknown == f.unknown && f2.streams == f.streams);
		PROMISE(!memcmp(&f2.lat, &f.lat, sizeof(f.lat)));
		json_object_put(back);
		json_object_put(e);
	} else {
		PROMISE(err[0]);
	}
	struct json_object *a;
	if (!json_object_object_get_ex(o, "streams", &a))
		return;
	int n = xp_streams_from_json(a, st, XP_STAMP_MAX_STREAMS, err, sizeof(err));
	if (n < 0)
		return;
	struct json_object *e = xp_streams_to_json(st, (unsigned)n), *back = reparse(e);
	PROMISE(back && xp_streams_from_json(back, st2, XP_STAMP_MAX_STREAMS, err, sizeof(err)) == n);
	for (int i = 0; i < n; i++)
		PROMISE(st2[i].stream == st[i].stream && st2[i].recv == st[i].recv && st2[i].dup == st[i].dup &&
			st2[i].next_exp == st[i].next_exp);
	json_object_put(back);
	json_object_put(e);
}

/* The stamps' tag key of a "started" reply's "stamps" object: taken only as
 * 32 hex digits, never 0, 0; refused with a message and a zeroed key; the
 * same after its own round trip. */
static void check_key(struct json_object *p)
{
	uint64_t k[2] = { 1, 1 }, k2[2];
	char err[160] = "";
	int r = xp_stamp_key_from_json(p, k, err, sizeof(err));

	PROMISE(r >= -1 && r <= 1);
	if (r <= 0) {
		PROMISE(!k[0] && !k[1]);
		PROMISE(r == 0 || err[0]);
		return;
	}
	PROMISE(k[0] | k[1]);
	struct json_object *q = json_object_new_object();
	json_object_object_add(q, "key", xp_stamp_key_to_json(k));
	PROMISE(xp_stamp_key_from_json(q, k2, err, sizeof(err)) == 1 && k2[0] == k[0] && k2[1] == k[1]);
	json_object_put(q);
}

/* Does a JSON string of this input hold a newline (\n, \u000a)? */
static int escaped_newline(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i + 1 < n; i++)
		if (d[i] == '\\' && (d[i + 1] == 'n' || (d[i + 1] == 'u' && i + 5 < n && d[i + 2] == '0' &&
							  d[i + 3] == '0' && d[i + 4] == '0' &&
							  (d[i + 5] == 'a' || d[i + 5] == 'A'))))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One line of the channel: no newline inside, below its limit. */
	if (size >= XP_CTRL_MAX_MSG || memchr(data, '\n', size))
		return 0;
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	struct json_object *o = json_tokener_parse(s);
	free(s);
	cur_has_escaped_newline = escaped_newline(data, size);
	if (!o)
		return 0;
	if (json_object_is_type(o, json_type_object)) {
		check_test(o);
		check_counters(o);
		/* What the client reads back from the server. */
		struct json_object *v;
		if (json_object_object_get_ex(o, "counters", &v))
			check_counters(v);
		if (json_object_object_get_ex(o, "sockets", &v))
			check_counters(v);
		check_final(o);
		check_key(o);
		if (json_object_object_get_ex(o, "stamps", &v) && json_object_is_type(v, json_type_object))
			check_key(v);
		if (json_object_object_get_ex(o, "interval", &v))
			check_final(v);
	}
	json_object_put(o);
	return 0;
}
