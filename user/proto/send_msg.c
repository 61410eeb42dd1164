/* The send op's messages and the clock offset (send_msg.h). */
#include "proto/send_msg.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/flow_figs.h"

static int fail(char *err, size_t errlen, const char *fmt, const char *a)
{
	snprintf(err, errlen, fmt, a);
	return -1;
}

struct json_object *xp_send_req_to_json(const struct xp_spec *s, uint64_t start_ns)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("send"));
	json_object_object_add(o, "spec", xp_spec_to_wire_json(s));
	json_object_object_add(o, "start_ns", json_object_new_uint64(start_ns));
	return o;
}

/* A non-negative integer member (json-c keeps an integer's sign: 1.5, "1" and -1 are refused). */
static int get_u64(struct json_object *o, const char *k, uint64_t *v, bool need, char *err, size_t errlen)
{
	struct json_object *j;
	if (!json_object_object_get_ex(o, k, &j))
		return need ? fail(err, errlen, "%s: missing", k) : 0;
	if (!json_object_is_type(j, json_type_int))
		return fail(err, errlen, "%s: not an integer", k);
	if (json_object_get_int64(j) < 0)
		return fail(err, errlen, "%s: negative", k);
	*v = json_object_get_uint64(j);
	return 0;
}

int xp_send_req_from_json(struct json_object *o, struct xp_spec *s, uint64_t *start_ns, char *err, size_t errlen)
{
	struct json_object *j;
	char why[400];
	*start_ns = 0;
	if (!o || !json_object_is_type(o, json_type_object))
		return fail(err, errlen, "send request: %s", "not a JSON object");
	json_object_object_foreach(o, key, val) {
		(void)val;
		if (strcmp(key, "op") && strcmp(key, "spec") && strcmp(key, "start_ns"))
			return fail(err, errlen, "send request: unknown member %.40s", key);
	}
	if (!json_object_object_get_ex(o, "spec", &j))
		return fail(err, errlen, "send request: %s", "spec missing (the test to send)");
	if (xp_spec_from_json(j, s, why, sizeof(why)))
		return fail(err, errlen, "send request: %.300s", why);
	if (get_u64(o, "start_ns", start_ns, true, why, sizeof(why)))
		return fail(err, errlen, "send request: %.300s", why);
	/* What only this agent decides: its key, and no namespace of its host to enter. */
	s->auth_key[0] = '\0';
	if (s->device_netns[0])
		return fail(err, errlen, "send request: %s", "spec.device_netns: not taken from a controller");
	struct in6_addr a;
	if (inet_pton(AF_INET, s->host, &a) != 1 && inet_pton(AF_INET6, s->host, &a) != 1)
		return fail(err, errlen, "send request: spec.host: %.64s is not an IPv4 or IPv6 address (an agent "
			    "resolves no names: give the receiving agent's address)", s->host);
	if (s->ntraffic > XP_SEND_MAX_FLOWS) {
		char n[16];
		snprintf(n, sizeof(n), "%u", XP_SEND_MAX_FLOWS);
		return fail(err, errlen, "send request: spec.traffic: more than %s flows from one agent", n);
	}
	if (!isfinite(s->duration) || s->duration <= 0)
		return fail(err, errlen, "send request: %s", "spec.duration: not a positive number of seconds");
	if (xp_spec_validate(s, why, sizeof(why)))
		return fail(err, errlen, "send request: %.300s", why);
	return 0;
}

static void add_u(struct json_object *o, const char *k, uint64_t v)
{
	json_object_object_add(o, k, json_object_new_uint64(v));
}

struct json_object *xp_send_res_to_json(const struct xp_send_res *r)
{
	struct json_object *o = json_object_new_object(), *t = json_object_new_object(), *f = json_object_new_array();
	json_object_object_add(o, "rc", json_object_new_int(r->rc));
	json_object_object_add(o, "error", json_object_new_string(r->error));
	add_u(o, "started_ns", r->started_ns);
	json_object_object_add(o, "interrupted", json_object_new_boolean(r->interrupted));
	json_object_object_add(o, "server_lost", json_object_new_boolean(r->server_lost));
	json_object_object_add(o, "lost_at", json_object_new_double(isfinite(r->lost_at) ? r->lost_at : 0));
	add_u(t, "tx_frames", r->total.tx_pkts);
	add_u(t, "tx_bytes", r->total.tx_bytes);
	add_u(t, "rx_frames", r->total.rx.pkts);
	add_u(t, "rx_bytes", r->total.rx.bytes);
	json_object_object_add(t, "seconds", json_object_new_double(isfinite(r->total.t1) ? r->total.t1 : 0));
	json_object_object_add(o, "total", t);
	for (unsigned i = 0; i < r->nflows && i < XP_SEND_MAX_FLOWS; i++) {
		struct json_object *a = json_object_new_array();
		json_object_array_add(a, json_object_new_string(r->flows[i].name));
		json_object_array_add(a, json_object_new_uint64(r->flows[i].tx_frames));
		json_object_array_add(a, json_object_new_uint64(r->flows[i].tx_bytes));
		json_object_array_add(f, a);
	}
	json_object_object_add(o, "flows_tx", f);
	if (r->rx_known && r->nflows) {
		struct xp_flow_acct acct[XP_SEND_MAX_FLOWS];
		for (unsigned i = 0; i < r->nflows && i < XP_SEND_MAX_FLOWS; i++)
			acct[i] = r->flows[i].rx;
		json_object_object_add(o, "flows_rx", xp_flow_acct_to_json(acct, r->nflows));
	}
	return o;
}

static int get_bool(struct json_object *o, const char *k, bool *v, char *err, size_t errlen)
{
	struct json_object *j;
	if (!json_object_object_get_ex(o, k, &j) || !json_object_is_type(j, json_type_boolean))
		return fail(err, errlen, "%s: missing or not a boolean", k);
	*v = json_object_get_boolean(j);
	return 0;
}

static int get_num(struct json_object *o, const char *k, double *v, char *err, size_t errlen)
{
	struct json_object *j;
	if (!json_object_object_get_ex(o, k, &j) ||
	    !(json_object_is_type(j, json_type_double) || json_object_is_type(j, json_type_int)))
		return fail(err, errlen, "%s: missing or not a number", k);
	*v = json_object_get_double(j);
	if (!isfinite(*v) || *v < 0 || *v > 1e7)
		return fail(err, errlen, "%s: out of range", k);
	return 0;
}

int xp_send_res_from_json(struct json_object *o, struct xp_send_res *r, char *err, size_t errlen)
{
	struct json_object *j, *t, *f;
	uint64_t u;
	memset(r, 0, sizeof(*r));
	if (!o || !json_object_is_type(o, json_type_object))
		return fail(err, errlen, "%s", "not a JSON object");
	if (!json_object_object_get_ex(o, "rc", &j) || !json_object_is_type(j, json_type_int) ||
	    json_object_get_int64(j) < 0 || json_object_get_int64(j) > 255)
		return fail(err, errlen, "%s", "rc: missing or not 0..255");
	r->rc = (int)json_object_get_int64(j);
	if (!json_object_object_get_ex(o, "error", &j) || !json_object_is_type(j, json_type_string))
		return fail(err, errlen, "%s", "error: missing or not a string");
	snprintf(r->error, sizeof(r->error), "%s", json_object_get_string(j));
	if (get_u64(o, "started_ns", &r->started_ns, true, err, errlen) ||
	    get_bool(o, "interrupted", &r->interrupted, err, errlen) ||
	    get_bool(o, "server_lost", &r->server_lost, err, errlen) || get_num(o, "lost_at", &r->lost_at, err, errlen))
		return -1;
	if (!json_object_object_get_ex(o, "total", &t) || !json_object_is_type(t, json_type_object))
		return fail(err, errlen, "%s", "total: missing or not an object");
	if (get_u64(t, "tx_frames", &r->total.tx_pkts, true, err, errlen) ||
	    get_u64(t, "tx_bytes", &r->total.tx_bytes, true, err, errlen) ||
	    get_u64(t, "rx_frames", &u, true, err, errlen))
		return -1;
	r->total.rx.pkts = u;
	if (get_u64(t, "rx_bytes", &u, true, err, errlen))
		return -1;
	r->total.rx.bytes = u;
	if (get_num(t, "seconds", &r->total.t1, err, errlen))
		return -1;
	if (!json_object_object_get_ex(o, "flows_tx", &f) || !json_object_is_type(f, json_type_array) ||
	    json_object_array_length(f) > XP_SEND_MAX_FLOWS)
		return fail(err, errlen, "%s", "flows_tx: missing, not an array or too long");
	r->nflows = (unsigned)json_object_array_length(f);
	for (unsigned i = 0; i < r->nflows; i++) {
		struct json_object *a = json_object_array_get_idx(f, i), *e[3];
		if (!json_object_is_type(a, json_type_array) || json_object_array_length(a) != 3)
			return fail(err, errlen, "%s", "flows_tx: an entry is not [name, frames, bytes]");
		for (int k = 0; k < 3; k++)
			e[k] = json_object_array_get_idx(a, (size_t)k);
		if (!json_object_is_type(e[0], json_type_string) || !json_object_is_type(e[1], json_type_int) ||
		    !json_object_is_type(e[2], json_type_int) || json_object_get_int64(e[1]) < 0 ||
		    json_object_get_int64(e[2]) < 0)
			return fail(err, errlen, "%s", "flows_tx: an entry is not [name, frames, bytes]");
		snprintf(r->flows[i].name, sizeof(r->flows[i].name), "%s", json_object_get_string(e[0]));
		r->flows[i].tx_frames = json_object_get_uint64(e[1]);
		r->flows[i].tx_bytes = json_object_get_uint64(e[2]);
	}
	if (json_object_object_get_ex(o, "flows_rx", &f)) {
		struct xp_flow_acct acct[XP_SEND_MAX_FLOWS];
		char why[200];
		if (!r->nflows || xp_flow_acct_from_json(f, acct, r->nflows, why, sizeof(why)))
			return fail(err, errlen, "flows_rx: %.200s", r->nflows ? why : "without flows_tx");
		for (unsigned i = 0; i < r->nflows; i++) {
			r->flows[i].rx = acct[i];
			r->flows[i].rx_known = true;
		}
		r->rx_known = true;
	}
	json_object_object_foreach(o, key, val) {
		(void)val;
		static const char *const known[] = { "rc", "error", "started_ns", "interrupted", "server_lost", "lost_at",
						     "total", "flows_tx", "flows_rx", NULL };
		const char *const *k;
		for (k = known; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			return fail(err, errlen, "unknown member %.40s", key);
	}
	return 0;
}

void xp_clock_offset(const struct xp_clock_sample *s, int64_t *offset_ns, int64_t *rtt_ns)
{
	/* Halved separately: no overflow for clocks far apart. */
	*offset_ns = (s->t1 - s->t0) / 2 + (s->t2 - s->t3) / 2;
	*rtt_ns = (s->t3 - s->t0) - (s->t2 - s->t1);
}

int xp_clock_best(const struct xp_clock_sample *s, unsigned n, int64_t *offset_ns, int64_t *rtt_ns)
{
	int best = -1;
	int64_t bo = 0, br = 0;
	for (unsigned i = 0; i < n; i++) {
		int64_t o, r;
		xp_clock_offset(&s[i], &o, &r);
		if (best < 0 || r < br) {
			best = (int)i;
			bo = o;
			br = r;
		}
	}
	*offset_ns = bo;
	*rtt_ns = br;
	return best;
}
