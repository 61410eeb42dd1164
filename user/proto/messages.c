#include "proto/messages.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "engine/names.h"
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
	return o;
}

int xp_test_from_json(struct json_object *o, struct xp_test *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	t->version = (int)xp_json_int(o, "version", 0);
	if (t->version != XP_PROTO_VERSION) {
		snprintf(err, errlen, "protocol version %d not supported (server speaks %d); use the same xdpperf on both ends",
			 t->version, XP_PROTO_VERSION);
		return -1;
	}
	const char *kind = xp_json_str(o, "kind", "stream");
	t->kind = (enum xp_test_kind)-1;
	for (unsigned i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(kind, kind_names[i]))
			t->kind = (enum xp_test_kind)i;
	if ((int)t->kind < 0) {
		snprintf(err, errlen, "unknown test kind '%s'", kind);
		return -1;
	}
	const char *eng = xp_json_str(o, "engine", "xsk");
	enum xp_engine_id id;
	if (xp_engine_by_name(eng, &id)) {
		snprintf(err, errlen, "unknown engine '%s'", eng);
		return -1;
	}
	t->engine = xp_engine_name(id);
	long long fam = xp_json_int(o, "family", 4);
	t->family = fam == 6 ? AF_INET6 : AF_INET;
	t->udp = !strcmp(xp_json_str(o, "proto", "tcp"), "udp");
	struct json_object *v;
	t->pass = json_object_object_get_ex(o, "pass", &v) && json_object_get_boolean(v);
	long long lo = xp_json_int(o, "port_lo", 0), hi = xp_json_int(o, "port_hi", 0);
	if (lo < 1 || hi > 65535 || lo > hi) {
		snprintf(err, errlen, "bad port range %lld:%lld", lo, hi);
		return -1;
	}
	t->port_lo = (uint16_t)lo;
	t->port_hi = (uint16_t)hi;
	t->duration = xp_json_double(o, "duration", 10);
	t->frame_size = (unsigned)xp_json_int(o, "frame_size", 0);
	long long par = xp_json_int(o, "parallel", 0);
	if (par < 0 || par > 10000000) {
		snprintf(err, errlen, "bad parallel connection count %lld", par);
		return -1;
	}
	t->parallel = (unsigned long)par;
	t->respond = json_object_object_get_ex(o, "respond", &v) && json_object_get_boolean(v);
	/* Older clients did not say: socket tests always needed listeners. */
	if (json_object_object_get_ex(o, "listen", &v))
		t->listen = json_object_get_boolean(v);
	else
		t->listen = !strcmp(t->engine, "socket");
	t->close_mode = !strcmp(xp_json_str(o, "close", "none"), "rst") ? XP_CLOSE_RST : XP_CLOSE_NONE;
	return 0;
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
	X(conn_established) X(cookie_invalid) X(synack_sent) X(fin_answered) X(rst_sent)

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
