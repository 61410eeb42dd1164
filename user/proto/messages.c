#include "proto/messages.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf/lib/stamp.h"
#include "frame/flow_streams.h"
#include "spec/engine_names.h"
#include "spec/spec.h"
#include "proto/channel.h"

static const char *const kind_names[] = {
	[XP_TEST_STREAM] = "stream",
	[XP_TEST_CONNECT] = "connect",
	[XP_TEST_HOLD] = "hold",
};

const char *xp_test_kind_name(enum xp_test_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : "?";
}

/* The key fields in the request's order, with their names and largest values. */
static const struct {
	uint32_t bit;
	const char *name;
	long long max;
} key_fields[] = {
	{ XP_KEY_VID0, "vid0", 4095 }, { XP_KEY_VID1, "vid1", 4095 }, { XP_KEY_DSCP, "dscp", 63 },
	{ XP_KEY_SPORT, "sport", 65535 }, { XP_KEY_DPORT, "dport", 65535 }, { XP_KEY_SRC, "src", 0xffffffffll },
};
#define NKEYF (sizeof(key_fields) / sizeof(key_fields[0]))

static long long key_get(const struct xp_test_key *k, uint32_t bit)
{
	switch (bit) {
	case XP_KEY_VID0: return k->vid[0];
	case XP_KEY_VID1: return k->vid[1];
	case XP_KEY_DSCP: return k->dscp;
	case XP_KEY_SPORT: return k->sport;
	case XP_KEY_DPORT: return k->dport;
	default: return k->src;
	}
}

static void key_set(struct xp_test_key *k, uint32_t bit, long long v)
{
	switch (bit) {
	case XP_KEY_VID0: k->vid[0] = (uint16_t)v; break;
	case XP_KEY_VID1: k->vid[1] = (uint16_t)v; break;
	case XP_KEY_DSCP: k->dscp = (uint8_t)v; break;
	case XP_KEY_SPORT: k->sport = (uint16_t)v; break;
	case XP_KEY_DPORT: k->dport = (uint16_t)v; break;
	default: k->src = (uint32_t)v;
	}
}

/* "key": the field names; "keys": [{"flow": i, field: value, ...}, ...]. */
static void keys_to_json(const struct xp_test *t, struct json_object *p)
{
	struct json_object *names = json_object_new_array(), *keys = json_object_new_array();
	for (unsigned f = 0; f < NKEYF; f++)
		if (t->flows.key_mask & key_fields[f].bit)
			json_object_array_add(names, json_object_new_string(key_fields[f].name));
	for (unsigned i = 0; i < t->flows.nkeys && t->flows.keys; i++) {
		struct json_object *k = json_object_new_object();
		json_object_object_add(k, "flow", json_object_new_int(t->flows.keys[i].flow));
		for (unsigned f = 0; f < NKEYF; f++)
			if (t->flows.key_mask & key_fields[f].bit)
				json_object_object_add(k, key_fields[f].name,
						       json_object_new_int64(key_get(&t->flows.keys[i], key_fields[f].bit)));
		json_object_array_add(keys, k);
	}
	json_object_object_add(p, "key", names);
	json_object_object_add(p, "keys", keys);
}

struct json_object *xp_test_to_json(const struct xp_test *t)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("start"));
	json_object_object_add(o, "version", json_object_new_int(XP_PROTO_VERSION));
	json_object_object_add(o, "kind", json_object_new_string(xp_test_kind_name(t->kind)));
	json_object_object_add(o, "engine", json_object_new_string(t->engine ? t->engine : "xsk"));
	json_object_object_add(o, "family", json_object_new_int(t->family == AF_INET6 ? 6 : 4));
	json_object_object_add(o, "proto", json_object_new_string(t->udp ? "udp" : "tcp"));
	json_object_object_add(o, "pass", json_object_new_boolean(t->pass));
	json_object_object_add(o, "port_lo", json_object_new_int(t->port_lo));
	json_object_object_add(o, "port_hi", json_object_new_int(t->port_hi));
	json_object_object_add(o, "duration", json_object_new_double(t->duration));
	json_object_object_add(o, "frame_size", json_object_new_int((int)t->frame_size));
	json_object_object_add(o, "parallel", json_object_new_int64((int64_t)t->parallel));
	json_object_object_add(o, "respond", json_object_new_boolean(t->respond));
	json_object_object_add(o, "listen", json_object_new_boolean(t->listen));
	json_object_object_add(o, "close", json_object_new_string(t->close_mode == XP_CLOSE_RST ? "rst" : "none"));
	if (t->stamp.ival) {
		const struct xp_test_stamp *st = &t->stamp;
		struct json_object *p = json_object_new_object();
		json_object_object_add(p, "t0", json_object_new_int64((int64_t)st->t0));
		json_object_object_add(p, "ival", json_object_new_int64((int64_t)st->ival));
		json_object_object_add(p, "clock", json_object_new_string(st->tai ? "tai" : "mono"));
		json_object_object_add(p, "oneway", json_object_new_boolean(st->oneway));
		json_object_object_add(p, "hwts", json_object_new_boolean(st->hwts));
		if (st->hwts_only) /* only when asked; a server that ignores it says no "rx_timestamp": "hw" (the client then stops) */
			json_object_object_add(p, "hwts_only", json_object_new_boolean(true));
		json_object_object_add(p, "reflect", json_object_new_boolean(st->reflect));
		json_object_object_add(p, "boot_id", json_object_new_string(st->boot_id));
		json_object_object_add(o, "stamp", p);
	}
	if (t->flows.nflows) {
		struct json_object *p = json_object_new_object();
		json_object_object_add(p, "nflows", json_object_new_int((int)t->flows.nflows));
		json_object_object_add(p, "threads", json_object_new_int((int)t->flows.threads));
		if (t->flows.key_mask)
			keys_to_json(t, p);
		json_object_object_add(o, "flows", p);
	}
	if (t->nbind) {
		struct json_object *b = json_object_new_array();
		char a[INET6_ADDRSTRLEN];
		for (unsigned i = 0; i < t->nbind && i < XP_TEST_MAX_BIND; i++)
			json_object_array_add(b, json_object_new_string(xp_addr_str(&t->bind[i], a, sizeof(a))));
		json_object_object_add(o, "bind", b);
	}
	if (t->spec)
		json_object_object_add(o, "spec", json_object_get(t->spec));
	return o;
}

void xp_test_release(struct xp_test *t)
{
	json_object_put(t->spec);
	t->spec = NULL;
	free(t->flows.keys);
	t->flows.keys = NULL;
	t->flows.nkeys = 0;
}

/*
 * Typed field readers for what a client sends. A client may be hostile, so a
 * field of the wrong type is refused, never converted: json-c would read
 * 1.9 as the integer 1, "yes" as true and Infinity as a duration. A missing
 * field takes its default (older clients omit some). Each returns 0, or -1
 * with a one-line message.
 */
static int field(struct json_object *o, const char *key, struct json_object **v)
{
	return json_object_object_get_ex(o, key, v) && !json_object_is_type(*v, json_type_null);
}

static int get_int(struct json_object *o, const char *key, long long dflt, long long lo, long long hi,
		   long long *out, char *err, size_t errlen)
{
	struct json_object *v;
	if (!field(o, key, &v)) {
		*out = dflt;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int)) {
		snprintf(err, errlen, "field '%s' must be an integer", key);
		return -1;
	}
	errno = 0;
	long long n = json_object_get_int64(v);
	/* json-c saturates integers beyond int64 (and keeps big unsigned ones apart). */
	if (n < lo || n > hi || errno == ERANGE || json_object_get_uint64(v) > (uint64_t)INT64_MAX) {
		snprintf(err, errlen, "field '%s' is out of range %lld..%lld", key, lo, hi);
		return -1;
	}
	*out = n;
	return 0;
}

static int get_bool(struct json_object *o, const char *key, bool dflt, bool *out, char *err, size_t errlen)
{
	struct json_object *v;
	if (!field(o, key, &v)) {
		*out = dflt;
		return 0;
	}
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(err, errlen, "field '%s' must be true or false", key);
		return -1;
	}
	*out = json_object_get_boolean(v);
	return 0;
}

static int get_str(struct json_object *o, const char *key, const char *dflt, const char **out, char *err,
		   size_t errlen)
{
	struct json_object *v;
	if (!field(o, key, &v)) {
		*out = dflt;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string)) {
		snprintf(err, errlen, "field '%s' must be a string", key);
		return -1;
	}
	*out = json_object_get_string(v);
	return 0;
}

/* A number (integer or not) that is finite. */
static int get_num(struct json_object *o, const char *key, double dflt, double *out, char *err, size_t errlen)
{
	struct json_object *v;
	if (!field(o, key, &v)) {
		*out = dflt;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) {
		snprintf(err, errlen, "field '%s' must be a number", key);
		return -1;
	}
	double d = json_object_get_double(v);
	if (!isfinite(d)) {
		snprintf(err, errlen, "field '%s' must be a finite number", key);
		return -1;
	}
	*out = d;
	return 0;
}

/* A string field that must be one of names[0..n). */
static int get_name(struct json_object *o, const char *key, const char *dflt, const char *const *names, unsigned n,
		    unsigned *out, char *err, size_t errlen)
{
	const char *s;
	if (get_str(o, key, dflt, &s, err, errlen))
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (names[i] && !strcmp(s, names[i])) {
			*out = i;
			return 0;
		}
	snprintf(err, errlen, "unknown %s '%.40s'", key, s);
	return -1;
}

/* "bind": an array of at most XP_TEST_MAX_BIND address strings of the
 * test's family (the client's --bind addresses: its XDP slot counts their
 * frames too). Absent or null: none. 0 or -1 with err set. */
static int get_bind(struct json_object *o, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *b;
	t->nbind = 0;
	if (!field(o, "bind", &b))
		return 0;
	if (!json_object_is_type(b, json_type_array)) {
		snprintf(err, errlen, "field 'bind' must be an array of addresses");
		return -1;
	}
	size_t n = json_object_array_length(b);
	if (n > XP_TEST_MAX_BIND) {
		snprintf(err, errlen, "at most %d bind addresses, not %zu", XP_TEST_MAX_BIND, n);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		struct json_object *e = json_object_array_get_idx(b, i);
		const char *s = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : NULL;
		if (!s || xp_addr_parse(s, &t->bind[i])) {
			snprintf(err, errlen, "bind address %zu is not an IPv4 or IPv6 address", i + 1);
			return -1;
		}
		if (t->bind[i].family != t->family) {
			snprintf(err, errlen, "bind address %zu is not IPv%d like the test", i + 1,
				 t->family == AF_INET6 ? 6 : 4);
			return -1;
		}
	}
	t->nbind = (unsigned)n;
	return 0;
}

/* A boot id as Linux writes it: 36 characters of hex digits and dashes. */
static bool boot_id_ok(const char *s)
{
	size_t n = strlen(s);
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') || s[i] == '-'))
			return false;
	return true;
}

static const char *const clock_names[] = { "mono", "tai" };

/* "stamp": the frames' stamp settings; absent or null: the frames carry none. */
static int get_stamp(struct json_object *o, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *p;
	struct xp_test_stamp *st = &t->stamp;
	long long t0, ival;
	unsigned clk;
	const char *bid;
	memset(st, 0, sizeof(*st));
	if (!field(o, "stamp", &p))
		return 0;
	if (!json_object_is_type(p, json_type_object)) {
		snprintf(err, errlen, "field 'stamp' must be an object");
		return -1;
	}
	if (get_int(p, "t0", 0, 0, INT64_MAX, &t0, err, errlen) ||
	    get_int(p, "ival", 0, (long long)XP_STAMP_IVAL_MIN, (long long)XP_STAMP_IVAL_MAX, &ival, err, errlen) ||
	    get_name(p, "clock", "mono", clock_names, 2, &clk, err, errlen) ||
	    get_bool(p, "oneway", false, &st->oneway, err, errlen) || get_bool(p, "hwts", false, &st->hwts, err, errlen) ||
	    get_bool(p, "hwts_only", false, &st->hwts_only, err, errlen) ||
	    get_bool(p, "reflect", false, &st->reflect, err, errlen) ||
	    get_str(p, "boot_id", "", &bid, err, errlen))
		return -1;
	if (!ival) {
		snprintf(err, errlen, "field 'stamp' needs its interval 'ival'");
		return -1;
	}
	if (*bid && !boot_id_ok(bid)) {
		snprintf(err, errlen, "field 'boot_id' is not a boot id");
		return -1;
	}
	st->t0 = (uint64_t)t0;
	st->ival = (uint64_t)ival;
	st->tai = clk == 1;
	snprintf(st->boot_id, sizeof(st->boot_id), "%s", bid);
	return 0;
}

/*
 * "flows.key" and "flows.keys" (flows without stamps): the field names, each
 * once, and 1..XP_FLOW_ENTRIES keys, each with "flow" (below nflows) and
 * exactly the named fields in their ranges. Both or neither; on -1 nothing
 * is held. Duplicate keys are the server's to refuse (its map says so).
 */
static int get_keys(struct json_object *p, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *names, *keys;
	bool hn = field(p, "key", &names), hk = field(p, "keys", &keys);
	t->flows.key_mask = 0;
	t->flows.nkeys = 0;
	t->flows.keys = NULL;
	if (!hn && !hk)
		return 0;
	if (!hn || !hk || !json_object_is_type(names, json_type_array) || !json_object_is_type(keys, json_type_array)) {
		snprintf(err, errlen, "fields 'flows.key' and 'flows.keys' must both be arrays");
		return -1;
	}
	uint32_t mask = XP_KEY_ON;
	size_t nn = json_object_array_length(names);
	for (size_t i = 0; i < nn; i++) {
		struct json_object *e = json_object_array_get_idx(names, i);
		const char *nm = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : "";
		unsigned f;
		for (f = 0; f < NKEYF && strcmp(nm, key_fields[f].name); f++)
			;
		if (f == NKEYF || (mask & key_fields[f].bit)) {
			snprintf(err, errlen, "field 'flows.key[%zu]' must name a key field once (vid0, vid1, dscp, sport, "
				 "dport, src)", i);
			return -1;
		}
		mask |= key_fields[f].bit;
	}
	size_t nk = json_object_array_length(keys);
	if (nk < 1 || nk > XP_FLOW_ENTRIES) {
		snprintf(err, errlen, "field 'flows.keys' must hold 1..%u keys", XP_FLOW_ENTRIES);
		return -1;
	}
	struct xp_test_key *out = calloc(nk, sizeof(*out));
	if (!out) {
		snprintf(err, errlen, "out of memory for %zu keys", nk);
		return -1;
	}
	for (size_t i = 0; i < nk; i++) {
		struct json_object *k = json_object_array_get_idx(keys, i);
		long long v;
		if (!json_object_is_type(k, json_type_object) ||
		    json_object_object_length(k) != 1 + __builtin_popcount(mask & XP_KEY_FIELDS)) {
			snprintf(err, errlen, "field 'flows.keys[%zu]' must be an object of 'flow' and the key's fields", i);
			goto bad;
		}
		if (get_int(k, "flow", -1, 0, (long long)t->flows.nflows - 1, &v, err, errlen))
			goto bad;
		if (v < 0) {
			snprintf(err, errlen, "field 'flows.keys[%zu]' needs 'flow'", i);
			goto bad;
		}
		out[i].flow = (uint16_t)v;
		for (unsigned f = 0; f < NKEYF; f++) {
			if (!(mask & key_fields[f].bit))
				continue;
			if (get_int(k, key_fields[f].name, -1, 0, key_fields[f].max, &v, err, errlen))
				goto bad;
			if (v < 0) {
				snprintf(err, errlen, "field 'flows.keys[%zu]' needs '%s'", i, key_fields[f].name);
				goto bad;
			}
			key_set(&out[i], key_fields[f].bit, v);
		}
	}
	t->flows.key_mask = mask;
	t->flows.nkeys = (unsigned)nk;
	t->flows.keys = out;
	return 0;
bad:
	free(out);
	return -1;
}

/* "flows": a test's flow count and sending threads; absent or null: none. */
static int get_flows(struct json_object *o, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *p;
	long long n, th;
	t->flows.nflows = t->flows.threads = 0;
	if (!field(o, "flows", &p))
		return 0;
	if (!json_object_is_type(p, json_type_object)) {
		snprintf(err, errlen, "field 'flows' must be an object");
		return -1;
	}
	json_object_object_foreach(p, k, v) {
		(void)v;
		if (strcmp(k, "nflows") && strcmp(k, "threads") && strcmp(k, "key") && strcmp(k, "keys")) {
			snprintf(err, errlen, "unknown field 'flows.%.40s'", k);
			return -1;
		}
	}
	if (get_int(p, "nflows", 0, 1, XP_FLOW_MAX_STREAMS, &n, err, errlen) ||
	    get_int(p, "threads", 0, 1, XP_FLOW_MAX_STREAMS, &th, err, errlen))
		return -1;
	if (!n || !th) {
		snprintf(err, errlen, "field 'flows' needs 'nflows' and 'threads' (1..%u)", XP_FLOW_MAX_STREAMS);
		return -1;
	}
	t->flows.nflows = (unsigned)n;
	t->flows.threads = (unsigned)th;
	return get_keys(p, t, err, errlen);
}

/*
 * "spec": the test's specification (spec/spec.h), read as strictly as the
 * rest: every member of its type and range, or the request is refused with
 * the member named. Absent or null: none (older clients). Kept as the JSON
 * the client sent; the parsed copy is only the check (a spec is large).
 */
static int get_spec(struct json_object *o, struct xp_test *t, char *err, size_t errlen)
{
	struct json_object *v;
	char e[200];

	t->spec = NULL;
	if (!field(o, "spec", &v))
		return 0;
	if (!json_object_is_type(v, json_type_object)) {
		snprintf(err, errlen, "field 'spec' must be an object");
		return -1;
	}
	struct xp_spec *sp = malloc(sizeof(*sp));
	if (!sp) {
		snprintf(err, errlen, "server out of memory");
		return -1;
	}
	int r = xp_spec_from_json(v, sp, e, sizeof(e));
	free(sp);
	if (r) {
		/* e names the member: spec: "duration" is not a double */
		snprintf(err, errlen, "bad test specification: %s", e);
		return -1;
	}
	t->spec = json_object_get(v);
	return 0;
}

static const char *const proto_names[] = { "tcp", "udp" };
static const char *const close_names[] = { [XP_CLOSE_NONE] = "none", [XP_CLOSE_RST] = "rst" };

int xp_test_from_json(struct json_object *o, struct xp_test *t, char *err, size_t errlen)
{
	long long n, lo, hi;
	unsigned u;
	const char *eng;

	memset(t, 0, sizeof(*t));
	if (get_int(o, "version", 0, INT32_MIN, INT32_MAX, &n, err, errlen))
		return -1;
	t->version = (int)n;
	if (t->version != XP_PROTO_VERSION) {
		snprintf(err, errlen, "protocol version %d not supported (server speaks %d); use the same xdpperf on both ends",
			 t->version, XP_PROTO_VERSION);
		return -1;
	}
	if (get_name(o, "kind", "stream", kind_names, sizeof(kind_names) / sizeof(kind_names[0]), &u, err, errlen))
		return -1;
	t->kind = (enum xp_test_kind)u;
	if (get_str(o, "engine", "xsk", &eng, err, errlen))
		return -1;
	enum xp_engine_id id;
	if (xp_engine_by_name(eng, &id)) {
		snprintf(err, errlen, "unknown engine '%.40s'", eng);
		return -1;
	}
	t->engine = xp_engine_name(id);
	if (get_int(o, "family", 4, 4, 6, &n, err, errlen) || n == 5) {
		snprintf(err, errlen, "field 'family' must be 4 or 6");
		return -1;
	}
	t->family = n == 6 ? AF_INET6 : AF_INET;
	if (get_name(o, "proto", "tcp", proto_names, 2, &u, err, errlen))
		return -1;
	t->udp = u == 1;
	if (get_bool(o, "pass", false, &t->pass, err, errlen))
		return -1;
	if (get_int(o, "port_lo", 0, 1, 65535, &lo, err, errlen) || get_int(o, "port_hi", 0, 1, 65535, &hi, err, errlen))
		return -1;
	if (lo < 1 || hi > 65535 || lo > hi) {
		snprintf(err, errlen, "bad port range %lld:%lld", lo, hi);
		return -1;
	}
	t->port_lo = (uint16_t)lo;
	t->port_hi = (uint16_t)hi;
	if (get_num(o, "duration", 10, &t->duration, err, errlen))
		return -1;
	/* The server's --max-duration is the policy's; this is what any test may be. */
	if (!(t->duration > 0) || t->duration > XP_TEST_DURATION_MAX) {
		snprintf(err, errlen, "duration %g s is not in (0, %g]", t->duration, XP_TEST_DURATION_MAX);
		return -1;
	}
	if (get_int(o, "frame_size", 0, 0, 65535, &n, err, errlen))
		return -1;
	t->frame_size = (unsigned)n;
	if (get_int(o, "parallel", 0, 0, 10000000, &n, err, errlen)) {
		snprintf(err, errlen, "bad parallel connection count (an integer 0..10000000)");
		return -1;
	}
	t->parallel = (unsigned long)n;
	if (get_bool(o, "respond", false, &t->respond, err, errlen))
		return -1;
	/* Older clients did not say: socket tests always needed listeners. */
	if (get_bool(o, "listen", !strcmp(t->engine, "socket"), &t->listen, err, errlen))
		return -1;
	if (get_name(o, "close", "none", close_names, 2, &u, err, errlen))
		return -1;
	t->close_mode = u;
	if (get_stamp(o, t, err, errlen) || get_flows(o, t, err, errlen))
		return -1;
	/* On -1 nothing is held: the keys get_flows took go again. */
	if (get_bind(o, t, err, errlen) || get_spec(o, t, err, errlen)) {
		xp_test_release(t);
		return -1;
	}
	return 0;
}

struct json_object *xp_stamp_key_to_json(const uint64_t key[2])
{
	char s[33];

	snprintf(s, sizeof(s), "%016llx%016llx", (unsigned long long)key[0], (unsigned long long)key[1]);
	return json_object_new_string(s);
}

int xp_stamp_key_from_json(struct json_object *p, uint64_t key[2], char *err, size_t errlen)
{
	struct json_object *v;

	key[0] = key[1] = 0;
	if (!p || !json_object_object_get_ex(p, "key", &v))
		return 0;
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	if (!s || strlen(s) != 32)
		goto bad;
	for (int i = 0; i < 32; i++) {
		int c = s[i], d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
				  : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			goto bad;
		key[i / 16] = key[i / 16] << 4 | (uint64_t)d;
	}
	if (!(key[0] | key[1]))
		goto bad;
	return 1;
bad:
	key[0] = key[1] = 0;
	snprintf(err, errlen, "the server's stamp key is not 32 hex digits (not an xdpperf server?)");
	return -1;
}

void xp_boot_id(char *buf, size_t len)
{
	buf[0] = '\0';
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (!f)
		return;
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!boot_id_ok(buf))
		buf[0] = '\0';
}

struct json_object *xp_final_to_json(const struct xp_final_ival *f)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "index", json_object_new_int64((int64_t)f->index));
	json_object_object_add(o, "unknown", json_object_new_boolean(f->unknown));
	if (!f->unknown)
		json_object_object_add(o, "latency", xp_lat_to_json(&f->lat));
	json_object_object_add(o, "streams", json_object_new_int((int)f->streams));
	if (f->streams) {
		json_object_object_add(o, "jitter_mean_ns", json_object_new_double(f->jitter_mean_ns));
		json_object_object_add(o, "jitter_max_ns", json_object_new_double(f->jitter_max_ns));
	}
	return o;
}

int xp_final_from_json(struct json_object *o, struct xp_final_ival *f, char *err, size_t errlen)
{
	long long n, ns;
	struct json_object *v;
	memset(f, 0, sizeof(*f));
	xp_lat_init(&f->lat);
	f->jitter_mean_ns = f->jitter_max_ns = NAN;
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "the server's interval is not an object");
		return -1;
	}
	if (get_int(o, "index", -1, 0, INT64_MAX, &n, err, errlen) || get_bool(o, "unknown", false, &f->unknown, err, errlen) ||
	    get_int(o, "streams", 0, 0, XP_STAMP_MAX_STREAMS, &ns, err, errlen))
		return -1;
	if (n < 0) {
		snprintf(err, errlen, "the server's interval has no index");
		return -1;
	}
	f->index = (uint64_t)n;
	f->streams = (unsigned)ns;
	if (!f->unknown && (!json_object_object_get_ex(o, "latency", &v) || xp_lat_from_json(v, &f->lat))) {
		snprintf(err, errlen, "the server's interval %lld has no valid latency histogram", n);
		return -1;
	}
	if (f->streams && (get_num(o, "jitter_mean_ns", NAN, &f->jitter_mean_ns, err, errlen) ||
			   get_num(o, "jitter_max_ns", NAN, &f->jitter_max_ns, err, errlen)))
		return -1;
	if (f->streams && (!(f->jitter_mean_ns >= 0) || !(f->jitter_max_ns >= 0))) {
		snprintf(err, errlen, "the server's jitter is not a duration");
		return -1;
	}
	return 0;
}

struct json_object *xp_streams_to_json(const struct xp_stream_figs *s, unsigned n)
{
	struct json_object *a = json_object_new_array();
	for (unsigned i = 0; i < n; i++)
		json_object_array_add(a, xp_stream_figs_to_json(&s[i]));
	return a;
}

int xp_streams_from_json(struct json_object *o, struct xp_stream_figs *s, unsigned max, char *err, size_t errlen)
{
	if (!o || !json_object_is_type(o, json_type_array)) {
		snprintf(err, errlen, "the server's streams are not an array");
		return -1;
	}
	size_t n = json_object_array_length(o);
	if (n > max) {
		snprintf(err, errlen, "the server sent %zu streams, more than %u", n, max);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (xp_stream_figs_from_json(json_object_array_get_idx(o, i), &s[i])) {
			snprintf(err, errlen, "the server's stream %zu is not valid", i);
			return -1;
		}
	return (int)n;
}

void xp_msg_printable(const char *in, char *out, size_t len)
{
	size_t n = 0;
	if (!len)
		return;
	for (; in && in[n] && n + 1 < len; n++) {
		unsigned char ch = (unsigned char)in[n];
		out[n] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
	}
	out[n] = '\0';
}

/*
 * Counter structs travel as JSON objects of their __u64 fields, by name. One
 * field table per struct drives encode, decode (and for the XDP counters
 * subtraction), so they never disagree.
 */
struct u64_field {
	const char *name;
	size_t off;
};

static struct json_object *fields_to_json(const void *s, const struct u64_field *f, size_t n)
{
	struct json_object *o = json_object_new_object();
	for (size_t i = 0; i < n; i++)
		json_object_object_add(o, f[i].name,
				       json_object_new_int64((int64_t)*(const uint64_t *)((const char *)s + f[i].off)));
	return o;
}

static void fields_from_json(struct json_object *o, void *s, size_t size, const struct u64_field *f, size_t n)
{
	memset(s, 0, size);
	for (size_t i = 0; i < n; i++)
		*(uint64_t *)((char *)s + f[i].off) = (uint64_t)xp_json_int(o, f[i].name, 0);
}

#define XP_COUNTER_FIELDS(X) \
	X(pkts) X(bytes) X(tcp_syn) X(tcp_synack) X(tcp_fin) X(tcp_rst) X(tcp_ack_only) \
	X(data_pkts) X(data_bytes) X(udp_pkts) X(ipv4_pkts) X(ipv6_pkts) \
	X(conn_established) X(cookie_invalid) X(synack_sent) X(fin_answered) X(rst_sent) \
	X(noreply_addr) X(noreply_shape) X(noreply_csum) X(noreply_room) X(noreply_other) \
	X(keepalives) X(keepalive_unchecked)

#define X(f) +1
_Static_assert(0 XP_COUNTER_FIELDS(X) == sizeof(struct xp_counters) / sizeof(__u64),
	       "XP_COUNTER_FIELDS must name every field of struct xp_counters");
#undef X

static const struct u64_field counter_fields[] = {
#define X(f) { #f, offsetof(struct xp_counters, f) },
	XP_COUNTER_FIELDS(X)
#undef X
};

static const struct u64_field sock_count_fields[] = {
#define X(f) { #f, offsetof(struct xp_sock_counts, f) },
	X(accepted) X(closed) X(resets) X(bytes_rx) X(open_now) X(listen_overflows) X(listen_drops) X(embryonic_rsts)
#undef X
};

#define NFIELDS(t) (sizeof(t) / sizeof(t[0]))

struct json_object *xp_counters_to_json(const struct xp_counters *c)
{
	return fields_to_json(c, counter_fields, NFIELDS(counter_fields));
}

void xp_counters_from_json(struct json_object *o, struct xp_counters *c)
{
	fields_from_json(o, c, sizeof(*c), counter_fields, NFIELDS(counter_fields));
}

void xp_counters_sub(const struct xp_counters *a, const struct xp_counters *b, struct xp_counters *out)
{
#define X(f) out->f = a->f - b->f;
	XP_COUNTER_FIELDS(X)
#undef X
}

struct json_object *xp_sock_counts_to_json(const struct xp_sock_counts *c)
{
	return fields_to_json(c, sock_count_fields, NFIELDS(sock_count_fields));
}

void xp_sock_counts_from_json(struct json_object *o, struct xp_sock_counts *c)
{
	fields_from_json(o, c, sizeof(*c), sock_count_fields, NFIELDS(sock_count_fields));
}

/* ---- --bidir: the reverse trial (messages.h) ------------------------------ */

/* What a reverse trial may send with: the frame engines (the others send no frames of a size). */
static const char *const rev_engines[] = { "live", "xsk" };

struct json_object *xp_reverse_req_to_json(const struct xp_reverse_req *q)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("reverse"));
	json_object_object_add(o, "version", json_object_new_int(XP_PROTO_VERSION));
	json_object_object_add(o, "port", json_object_new_int(q->port));
	json_object_object_add(o, "engine", json_object_new_string(q->engine ? q->engine : "live"));
	json_object_object_add(o, "family", json_object_new_int(q->family == AF_INET6 ? 6 : 4));
	json_object_object_add(o, "proto", json_object_new_string(q->udp ? "udp" : "tcp"));
	json_object_object_add(o, "frame_size", json_object_new_int((int)q->frame_size));
	if (q->mix[0])
		json_object_object_add(o, "mix", json_object_new_string(q->mix));
	json_object_object_add(o, "pps", json_object_new_double(q->pps));
	json_object_object_add(o, "burst", json_object_new_int((int)q->burst));
	json_object_object_add(o, "seconds", json_object_new_double(q->seconds));
	json_object_object_add(o, "no_stamps", json_object_new_boolean(q->no_stamps));
	return o;
}

int xp_reverse_req_from_json(struct json_object *o, struct xp_reverse_req *q, char *err, size_t errlen)
{
	long long n;
	unsigned u;
	const char *mix;
	memset(q, 0, sizeof(*q));
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "the reverse request is not an object");
		return -1;
	}
	if (get_int(o, "version", 0, INT32_MIN, INT32_MAX, &n, err, errlen))
		return -1;
	if (n != XP_PROTO_VERSION) {
		snprintf(err, errlen, "protocol version %lld not supported (server speaks %d); use the same xdpperf on both ends",
			 n, XP_PROTO_VERSION);
		return -1;
	}
	if (get_int(o, "port", 0, 1, 65535, &n, err, errlen))
		return -1;
	if (!n) {
		snprintf(err, errlen, "the reverse request needs the client side's control port 'port'");
		return -1;
	}
	q->port = (uint16_t)n;
	if (get_name(o, "engine", "live", rev_engines, 2, &u, err, errlen))
		return -1;
	q->engine = rev_engines[u];
	if (get_int(o, "family", 4, 4, 6, &n, err, errlen) || n == 5) {
		snprintf(err, errlen, "field 'family' must be 4 or 6");
		return -1;
	}
	q->family = n == 6 ? AF_INET6 : AF_INET;
	if (get_name(o, "proto", "tcp", proto_names, 2, &u, err, errlen))
		return -1;
	q->udp = u == 1;
	if (get_int(o, "frame_size", 0, 64, 9018, &n, err, errlen))
		return -1;
	if (!n) {
		snprintf(err, errlen, "the reverse request needs its 'frame_size'");
		return -1;
	}
	q->frame_size = (unsigned)n;
	if (get_str(o, "mix", "", &mix, err, errlen))
		return -1;
	/* Only a mix's characters (digits, ':' and ','; or "imix"): the child parses it as -l does. */
	if (strlen(mix) >= sizeof(q->mix) || (strspn(mix, "0123456789:,") != strlen(mix) && strcmp(mix, "imix"))) {
		snprintf(err, errlen, "field 'mix' is not a frame mix (SIZE:WEIGHT,... or imix)");
		return -1;
	}
	snprintf(q->mix, sizeof(q->mix), "%s", mix);
	if (get_num(o, "pps", 0, &q->pps, err, errlen))
		return -1;
	if (q->pps < 0 || q->pps > XP_REVERSE_PPS_MAX) {
		snprintf(err, errlen, "rate %g frames/s is not in 0..%g", q->pps, XP_REVERSE_PPS_MAX);
		return -1;
	}
	if (get_int(o, "burst", 0, 0, 1048576, &n, err, errlen))
		return -1;
	q->burst = (unsigned)n;
	if (get_num(o, "seconds", 0, &q->seconds, err, errlen))
		return -1;
	if (!(q->seconds > 0) || q->seconds > XP_TEST_DURATION_MAX) {
		snprintf(err, errlen, "trial length %g s is not in (0, %g]", q->seconds, XP_TEST_DURATION_MAX);
		return -1;
	}
	return get_bool(o, "no_stamps", false, &q->no_stamps, err, errlen);
}

static const char *const held_names[] = { "", "sender", "path", "kernel" };

struct json_object *xp_reverse_res_to_json(const struct xp_reverse_res *r)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "rc", json_object_new_int(r->rc));
	if (r->rc) {
		json_object_object_add(o, "error", json_object_new_string(r->error));
		return o;
	}
	json_object_object_add(o, "sent", json_object_new_int64((int64_t)r->sent));
	json_object_object_add(o, "received", json_object_new_int64((int64_t)r->received));
	json_object_object_add(o, "seconds", json_object_new_double(r->seconds));
	json_object_object_add(o, "target_pps", json_object_new_double(r->target_pps));
	json_object_object_add(o, "offered_pps", json_object_new_double(r->offered_pps));
	json_object_object_add(o, "short_of_target", json_object_new_boolean(r->short_of_target));
	json_object_object_add(o, "held_back_by", json_object_new_string(r->held_back_by));
	json_object_object_add(o, "kernel_sleeps", json_object_new_boolean(r->kernel_sleeps));
	json_object_object_add(o, "max_catchup", json_object_new_int64(r->max_catchup));
	if (r->lat_known) {
		struct json_object *l = json_object_new_object();
		json_object_object_add(l, "min_us", json_object_new_double(r->lat_min_us));
		json_object_object_add(l, "mean_us", json_object_new_double(r->lat_mean_us));
		json_object_object_add(l, "max_us", json_object_new_double(r->lat_max_us));
		json_object_object_add(l, "p50_us", json_object_new_double(r->lat_p50_us));
		json_object_object_add(l, "p99_us", json_object_new_double(r->lat_p99_us));
		json_object_object_add(l, "p999_us", json_object_new_double(r->lat_p999_us));
		json_object_object_add(l, "timed", json_object_new_int64((int64_t)r->lat_timed));
		json_object_object_add(l, "hist", xp_lat_to_json(&r->lat_hist));
		json_object_object_add(o, "latency", l);
	} else {
		json_object_object_add(o, "latency_why", json_object_new_string(r->lat_why));
	}
	return o;
}

/* A count: an integer 0..2^62 (json-c keeps int64; no count here comes near). */
static int get_count(struct json_object *o, const char *key, uint64_t *out, char *err, size_t errlen)
{
	long long n;
	if (get_int(o, key, 0, 0, INT64_MAX / 2, &n, err, errlen))
		return -1;
	*out = (uint64_t)n;
	return 0;
}

/* A figure: a finite number >= 0. */
static int get_figure(struct json_object *o, const char *key, double *out, char *err, size_t errlen)
{
	if (get_num(o, key, 0, out, err, errlen))
		return -1;
	if (*out < 0) {
		snprintf(err, errlen, "field '%s' is negative", key);
		return -1;
	}
	return 0;
}

static void copy_printable(struct json_object *o, const char *key, char *out, size_t len)
{
	const char *s = "";
	char e[8];
	if (get_str(o, key, "", &s, e, sizeof(e)))
		s = "?";
	xp_msg_printable(s, out, len);
}

int xp_reverse_res_from_json(struct json_object *o, struct xp_reverse_res *r, char *err, size_t errlen)
{
	long long n;
	unsigned u;
	struct json_object *l, *h;
	memset(r, 0, sizeof(*r));
	xp_lat_init(&r->lat_hist);
	if (!o || !json_object_is_type(o, json_type_object)) {
		snprintf(err, errlen, "the reverse trial's figures are not an object");
		return -1;
	}
	if (get_int(o, "rc", -1, 0, 255, &n, err, errlen))
		return -1;
	if (n < 0) {
		snprintf(err, errlen, "the reverse trial's figures have no 'rc'");
		return -1;
	}
	r->rc = (int)n;
	if (r->rc) {
		copy_printable(o, "error", r->error, sizeof(r->error));
		if (!r->error[0])
			snprintf(r->error, sizeof(r->error), "the reverse trial failed (status %d)", r->rc);
		return 0;
	}
	if (get_count(o, "sent", &r->sent, err, errlen) || get_count(o, "received", &r->received, err, errlen) ||
	    get_figure(o, "seconds", &r->seconds, err, errlen) || get_figure(o, "target_pps", &r->target_pps, err, errlen) ||
	    get_figure(o, "offered_pps", &r->offered_pps, err, errlen) ||
	    get_bool(o, "short_of_target", false, &r->short_of_target, err, errlen) ||
	    get_name(o, "held_back_by", "", held_names, 4, &u, err, errlen) ||
	    get_bool(o, "kernel_sleeps", false, &r->kernel_sleeps, err, errlen) ||
	    get_int(o, "max_catchup", 0, 0, UINT32_MAX, &n, err, errlen))
		return -1;
	snprintf(r->held_back_by, sizeof(r->held_back_by), "%s", held_names[u]);
	r->max_catchup = (uint32_t)n;
	if (!field(o, "latency", &l)) {
		copy_printable(o, "latency_why", r->lat_why, sizeof(r->lat_why));
		return 0;
	}
	if (!json_object_is_type(l, json_type_object) || get_figure(l, "min_us", &r->lat_min_us, err, errlen) ||
	    get_figure(l, "mean_us", &r->lat_mean_us, err, errlen) || get_figure(l, "max_us", &r->lat_max_us, err, errlen) ||
	    get_figure(l, "p50_us", &r->lat_p50_us, err, errlen) || get_figure(l, "p99_us", &r->lat_p99_us, err, errlen) ||
	    get_figure(l, "p999_us", &r->lat_p999_us, err, errlen) || get_count(l, "timed", &r->lat_timed, err, errlen)) {
		if (!json_object_is_type(l, json_type_object))
			snprintf(err, errlen, "field 'latency' must be an object");
		return -1;
	}
	if (!json_object_object_get_ex(l, "hist", &h) || xp_lat_from_json(h, &r->lat_hist)) {
		snprintf(err, errlen, "the reverse trial's latency histogram is malformed");
		return -1;
	}
	r->lat_known = true;
	return 0;
}
