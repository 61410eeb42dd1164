/*
 * A test's specification (spec.h): its defaults, its own rules and its JSON
 * form. The rules here are those about the test alone, whoever built it; the
 * command line's rules about how options were typed and which go together
 * stay in cli/validate.c, which calls these in its order.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "bpf/window.h"
#include "spec/flow_json.h"
#include "spec/spec.h"
#include "util/values.h"


struct xp_spec *xp_spec_dup(const struct xp_spec *s)
{
	struct xp_spec *d = malloc(sizeof(*d));
	if (d)
		memcpy(d, s, sizeof(*d));
	return d;
}

void xp_spec_default(struct xp_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->control_port = XP_SPEC_CONTROL_PORT;
	s->engine = XP_ENGINE_AUTO;
	s->xdp_mode = XP_XDP_AUTO;
	s->kind = XP_TEST_STREAM;
	s->duration = 10;
	s->interval = 1;
	s->max_loss = -1;
	s->stall_pct = XP_STALL_DEFAULT_PCT;
	s->syn_retries = XP_DEFAULT_SYN_RETRIES;
	s->syn_engine = XP_SYN_AUTO;
	s->ntraffic = 1;
	s->flow_top = XP_FLOW_TOP_DEFAULT;
	struct xp_stream *t = &s->traffic[0];
	t->frame_size = 64;
	t->port_lo = XP_DEFAULT_PORT_LO;
	t->port_hi = XP_DEFAULT_PORT_HI;
	t->cport_lo = XP_DEFAULT_CPORT_LO;
	t->cport_hi = XP_DEFAULT_CPORT_HI;
}

/* ---- the rules ---- */

static bool looks_numeric(const char *s)
{
	return s[0] && strspn(s, "0123456789.") == strlen(s);
}

int xp_spec_check_peer(const struct xp_spec *s, char *err, size_t errlen)
{
	struct xp_addr a;

	bool numeric = !xp_addr_parse(s->host, &a);
	if (!numeric && looks_numeric(s->host))
		return xp_cli_fail(err, errlen, "cannot resolve '%s': not a valid IPv4 address (four numbers 0..255, "
			    "like 198.19.1.2)", s->host);
	/* A name is resolved later, for the family -4/-6 asks for. */
	if (numeric && s->family && s->family != a.family)
		return xp_cli_fail(err, errlen, "%s is not an IPv%c address", s->host, s->family == AF_INET ? '4' : '6');
	for (unsigned i = 0; i < s->ntraffic; i++) {
		const struct xp_stream *t = &s->traffic[i];
		if (s->control_port >= t->port_lo && s->control_port <= t->port_hi)
			return xp_cli_fail(err, errlen, "port range %u:%u includes the control port %u", t->port_lo,
				    t->port_hi, s->control_port);
	}
	return 0;
}

int xp_spec_check_bytes(const struct xp_spec *s, char *err, size_t errlen)
{
	if (s->data_len && s->peer_kernel)
		return xp_cli_fail(err, errlen, "--bytes needs the server's XDP program to answer, not --peer kernel");
	return 0;
}

int xp_spec_check_window(const struct xp_spec *s, char *err, size_t errlen)
{
	if (s->engine == XP_ENGINE_XDP && s->kind != XP_TEST_STREAM && s->parallel > XP_WIN_MAX)
		return xp_cli_fail(err, errlen, "-P %lu: the XDP connection engine keeps at most %u connections in its "
			    "window (%zu bytes each)", s->parallel, XP_WIN_MAX,
			    sizeof(struct xp_win_slot) + sizeof(struct xp_win_cell));
	return 0;
}

int xp_spec_check_rate(const struct xp_spec *s, const char *way, char *err, size_t errlen)
{
	bool target = s->cps > 0;

	if (!way) /* the command line names the engine's own way from its capabilities (cli/validate.c) */
		way = s->engine == XP_ENGINE_XDP ? "--cps N" : "-b RATE";

	for (unsigned i = 0; i < s->ntraffic; i++)
		target = target || s->traffic[i].rate.unit != XP_RATE_NONE;
	if (s->burst && !target)
		return xp_cli_fail(err, errlen, "--burst shapes a rate limit: give %s too", way);
	if (s->require_rate && !target)
		return xp_cli_fail(err, errlen, "--require-rate checks the offered load against a target: give %s too", way);
	return 0;
}

int xp_spec_validate(const struct xp_spec *s, char *err, size_t errlen)
{
	if (!s->host[0])
		return xp_cli_fail(err, errlen, "host: no server address (-c ADDR)");
	if (s->ntraffic < 1 || s->ntraffic > XP_SPEC_MAX_STREAMS)
		return xp_cli_fail(err, errlen, "traffic: %u streams, a test has 1 to %u", s->ntraffic,
			    (unsigned)XP_SPEC_MAX_STREAMS);
	if (!(s->duration > 0))
		return xp_cli_fail(err, errlen, "-t: the duration must be above 0 s");
	if (!(s->interval > 0))
		return xp_cli_fail(err, errlen, "-i: the interval must be above 0 s");
	if (s->kind > XP_TEST_HOLD)
		return xp_cli_fail(err, errlen, "kind: no test kind %u", (unsigned)s->kind);
	if ((unsigned)s->engine >= XP_ENGINE_COUNT)
		return xp_cli_fail(err, errlen, "--engine: no engine %u", (unsigned)s->engine);
	for (unsigned i = 0; i < s->ntraffic; i++) {
		const struct xp_stream *t = &s->traffic[i];
		if (t->port_lo > t->port_hi || !t->port_lo)
			return xp_cli_fail(err, errlen, "-p: port range %u:%u is empty", t->port_lo, t->port_hi);
		if (t->cport_lo > t->cport_hi || !t->cport_lo)
			return xp_cli_fail(err, errlen, "--cport: port range %u:%u is empty", t->cport_lo, t->cport_hi);
		if (t->frame_size && (t->frame_size < XP_FRAME_SIZE_MIN || t->frame_size > XP_FRAME_SIZE_MAX))
			return xp_cli_fail(err, errlen, "-l: frame size %u is outside %u..%u", t->frame_size,
				    XP_FRAME_SIZE_MIN, XP_FRAME_SIZE_MAX);
	}
	if (xp_spec_check_peer(s, err, errlen) || xp_spec_check_bytes(s, err, errlen) ||
	    xp_spec_check_window(s, err, errlen) || xp_spec_check_rate(s, NULL, err, errlen) ||
	    xp_spec_check_flows(s, err, errlen))
		return -1;
	return 0;
}

/* ---- JSON ---- */

static void put_s(struct json_object *o, const char *k, const char *v)
{
	json_object_object_add(o, k, json_object_new_string(v));
}

static void put_i(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static void put_d(struct json_object *o, const char *k, double v)
{
	json_object_object_add(o, k, json_object_new_double(v));
}

static void put_b(struct json_object *o, const char *k, bool v)
{
	json_object_object_add(o, k, json_object_new_boolean(v));
}

static const char *const kind_names[] = { "stream", "connect", "hold" };
static const char *const xdp_mode_names[] = { "auto", "native", "skb" };
static const char *const rate_units[] = { "none", "pps", "bps_l1", "bps_l2" };
/* hdr_auto's bits by name, bit i = XP_HDR_AUTO_* (1 << i). */
static const char *const hdr_auto_names[] = { "dst_mac", "src_mac", "src", "dst", "sport", "dport" };

static struct json_object *stream_json(const struct xp_stream *t)
{
	struct json_object *o = json_object_new_object();
	char buf[256];

	if (!o)
		return NULL;
	put_i(o, "frame_size", t->frame_size);
	put_b(o, "frame_size_set", t->frame_size_set);
	if (t->mix.n)
		put_s(o, "mix", t->mix.imix ? "imix" : xp_mix_spec(&t->mix, buf, sizeof(buf)));
	struct json_object *r = json_object_new_object();
	put_s(r, "unit", rate_units[t->rate.unit <= XP_RATE_BPS_L2 ? t->rate.unit : 0]);
	put_d(r, "value", t->rate.value);
	json_object_object_add(o, "rate", r);
	put_b(o, "udp", t->udp);
	put_b(o, "zero", t->zero);
	put_i(o, "port_lo", t->port_lo);
	put_i(o, "port_hi", t->port_hi);
	put_b(o, "port_set", t->port_set);
	put_i(o, "cport_lo", t->cport_lo);
	put_i(o, "cport_hi", t->cport_hi);
	if (t->dst_mac_set) {
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", t->dst_mac[0], t->dst_mac[1],
			 t->dst_mac[2], t->dst_mac[3], t->dst_mac[4], t->dst_mac[5]);
		put_s(o, "dst_mac", buf);
	}
	/* A flow's own (issue 26): only what is set, so a test without flows reads as before. */
	if (t->name[0])
		put_s(o, "name", t->name);
	if (t->has_hdr) {
		json_object_object_add(o, "hdr", xp_flow_pat_to_json(&t->hdr));
		struct json_object *a = json_object_new_array();
		for (unsigned i = 0; i < sizeof(hdr_auto_names) / sizeof(hdr_auto_names[0]); i++)
			if (t->hdr_auto & (1u << i))
				json_object_array_add(a, json_object_new_string(hdr_auto_names[i]));
		json_object_object_add(o, "hdr_auto", a);
	}
	if (t->size_pat_set)
		json_object_object_add(o, "size_pat", xp_pattern_to_json(&t->size_pat, XP_PJ_INT));
	if (t->frames)
		put_i(o, "frames", (int64_t)t->frames);
	if (t->no_stamps)
		put_b(o, "no_stamps", t->no_stamps);
	if (t->rate_pct > 0)
		put_d(o, "rate_pct", t->rate_pct);
	return o;
}

struct json_object *xp_spec_to_json(const struct xp_spec *s)
{
	struct json_object *o = json_object_new_object(), *a;
	char buf[INET6_ADDRSTRLEN];

	if (!o)
		return NULL;
	put_s(o, "host", s->host);
	put_i(o, "control_port", s->control_port);
	put_i(o, "family", s->family == AF_INET ? 4 : s->family == AF_INET6 ? 6 : 0);
	put_s(o, "dev", s->dev);
	put_s(o, "auth_key", s->auth_key);
	put_s(o, "engine", xp_engine_name(s->engine));
	put_b(o, "engine_set", s->engine_set);
	put_s(o, "xdp_mode", xdp_mode_names[s->xdp_mode <= XP_XDP_SKB ? s->xdp_mode : 0]);
	put_i(o, "queues", s->queues);
	put_i(o, "first_queue", s->first_queue);
	put_i(o, "burst", s->burst);
	put_s(o, "kind", kind_names[s->kind <= XP_TEST_HOLD ? s->kind : 0]);
	put_i(o, "parallel", (int64_t)s->parallel);
	put_i(o, "threads", s->threads);
	a = json_object_new_array();
	for (unsigned i = 0; i < s->nbind && i < XP_MAX_BIND_OPT; i++)
		json_object_array_add(a, json_object_new_string(xp_addr_str(&s->bind[i], buf, sizeof(buf))));
	json_object_object_add(o, "bind", a);
	put_d(o, "duration", s->duration);
	put_d(o, "interval", s->interval);
	put_b(o, "clock_tai", s->clock_tai);
	put_b(o, "clock_set", s->clock_set);
	put_b(o, "rtt", s->rtt);
	put_b(o, "no_stamps", s->no_stamps);
	put_i(o, "rx_ts", s->rx_ts);
	put_b(o, "rx_ts_set", s->rx_ts_set);
	put_d(o, "max_loss", s->max_loss);
	put_d(o, "stall_pct", s->stall_pct);
	put_b(o, "stall_set", s->stall_set);
	put_b(o, "require_rate", s->require_rate);
	put_d(o, "cps", s->cps);
	put_i(o, "syn_retries", s->syn_retries);
	put_d(o, "keepalive_s", s->keepalive_s);
	put_b(o, "fin", s->fin);
	put_b(o, "peer_kernel", s->peer_kernel);
	put_i(o, "data_len", s->data_len);
	put_s(o, "syn_engine", xp_engine_name(s->syn_engine));
	put_i(o, "first_tuple", (int64_t)s->first_tuple);
	put_s(o, "device_netns", s->device_netns);
	put_d(o, "pace_catchup_excess", s->pace_catchup_excess);
	put_i(o, "flow_top", s->flow_top);
	if (s->line_bps > 0) /* only when given: a test without it reads as before */
		put_d(o, "line_bps", s->line_bps);
	a = json_object_new_array();
	for (unsigned i = 0; i < s->ntraffic && i < XP_SPEC_MAX_STREAMS; i++)
		json_object_array_add(a, stream_json(&s->traffic[i]));
	json_object_object_add(o, "traffic", a);
	return o;
}

struct json_object *xp_spec_to_wire_json(const struct xp_spec *s)
{
	struct json_object *o = xp_spec_to_json(s);
	if (!o)
		return NULL;
	json_object_object_del(o, "auth_key");
	put_b(o, "auth", s->auth_key[0] != '\0');
	return o;
}

/* Reading back: each member optional (the default stays), each of its type, each named when wrong. */
struct rd {
	struct json_object *o;
	char *err;
	size_t errlen;
	int bad;
};

static struct json_object *member(struct rd *r, const char *k, json_type t)
{
	struct json_object *v;

	if (r->bad || !json_object_object_get_ex(r->o, k, &v))
		return NULL;
	bool ok = json_object_is_type(v, t) || (t == json_type_double && json_object_is_type(v, json_type_int));
	if (!ok) {
		xp_cli_fail(r->err, r->errlen, "spec: \"%s\" is not a%s %s", k, t == json_type_int ? "n" : "",
		     json_type_to_name(t));
		r->bad = 1;
		return NULL;
	}
	return v;
}

static void get_str(struct rd *r, const char *k, char *dst, size_t len)
{
	struct json_object *v = member(r, k, json_type_string);
	if (!v)
		return;
	if ((size_t)json_object_get_string_len(v) >= len) {
		xp_cli_fail(r->err, r->errlen, "spec: \"%s\" is longer than %zu bytes", k, len - 1);
		r->bad = 1;
		return;
	}
	snprintf(dst, len, "%s", json_object_get_string(v));
}

static bool get_int(struct rd *r, const char *k, int64_t lo, int64_t hi, int64_t *out)
{
	struct json_object *v = member(r, k, json_type_int);
	if (!v)
		return false;
	errno = 0;
	int64_t x = json_object_get_int64(v);
	if (x < lo || x > hi) {
		xp_cli_fail(r->err, r->errlen, "spec: \"%s\" %lld is outside %lld..%lld", k, (long long)x, (long long)lo,
		     (long long)hi);
		r->bad = 1;
		return false;
	}
	*out = x;
	return true;
}

#define GET_INT(r, k, lo, hi, dst)                         \
	do {                                               \
		int64_t v_;                                \
		if (get_int(r, k, lo, hi, &v_))            \
			(dst) = (__typeof__(dst))v_;       \
	} while (0)

/* A number, finite: json-c reads NaN and Infinity, which no setting is. */
static void get_dbl(struct rd *r, const char *k, double *dst)
{
	struct json_object *v = member(r, k, json_type_double);
	if (!v)
		return;
	double d = json_object_get_double(v);
	if (!isfinite(d)) {
		xp_cli_fail(r->err, r->errlen, "spec: \"%s\" is not a finite number", k);
		r->bad = 1;
		return;
	}
	*dst = d;
}

static void get_bool(struct rd *r, const char *k, bool *dst)
{
	struct json_object *v = member(r, k, json_type_boolean);
	if (v)
		*dst = json_object_get_boolean(v);
}

/* A name out of names[0..n-1] into *dst. */
static void get_name(struct rd *r, const char *k, const char *const *names, unsigned n, unsigned *dst)
{
	char buf[32] = "";
	struct json_object *v = member(r, k, json_type_string);
	if (!v)
		return;
	snprintf(buf, sizeof(buf), "%s", json_object_get_string(v));
	for (unsigned i = 0; i < n; i++) {
		if (!strcmp(buf, names[i])) {
			*dst = i;
			return;
		}
	}
	xp_cli_fail(r->err, r->errlen, "spec: \"%s\" has no value \"%s\"", k, buf);
	r->bad = 1;
}

static void get_engine(struct rd *r, const char *k, enum xp_engine_id *dst)
{
	char buf[32] = "";
	struct json_object *v = member(r, k, json_type_string);
	if (!v)
		return;
	snprintf(buf, sizeof(buf), "%s", json_object_get_string(v));
	if (xp_engine_by_name(buf, dst)) {
		xp_cli_fail(r->err, r->errlen, "spec: \"%s\": no engine \"%s\"", k, buf);
		r->bad = 1;
	}
}

/* A stream's flow members (stream_json), each optional. */
static void flow_from(struct rd *r, struct xp_stream *t)
{
	struct json_object *v;

	get_str(r, "name", t->name, sizeof(t->name));
	if ((v = member(r, "hdr", json_type_object))) {
		if (xp_flow_pat_from_json(v, &t->hdr, r->err, r->errlen)) {
			r->bad = 1;
			return;
		}
		t->has_hdr = true;
	}
	if ((v = member(r, "hdr_auto", json_type_array))) {
		t->hdr_auto = 0;
		for (size_t i = 0; i < json_object_array_length(v); i++) {
			const char *n = json_object_get_string(json_object_array_get_idx(v, i));
			unsigned k;
			for (k = 0; k < sizeof(hdr_auto_names) / sizeof(hdr_auto_names[0]); k++)
				if (n && !strcmp(n, hdr_auto_names[k]))
					break;
			if (k == sizeof(hdr_auto_names) / sizeof(hdr_auto_names[0])) {
				xp_cli_fail(r->err, r->errlen, "spec: \"hdr_auto\" has no field \"%s\"", n ? n : "");
				r->bad = 1;
				return;
			}
			t->hdr_auto |= 1u << k;
		}
	}
	if ((v = member(r, "size_pat", json_type_object))) {
		static const struct xp_pj_field f = { XP_PJ_INT, XP_SIZE_PAT_WIDTH, XP_PJ_ALL, XP_PJ_VALUE, 64 };
		bool is_auto;
		if (xp_pattern_from_json(v, &f, "spec: \"size_pat\"", &t->size_pat, &is_auto, r->err, r->errlen)) {
			r->bad = 1;
			return;
		}
		t->size_pat_set = true;
	}
	GET_INT(r, "frames", 0, INT64_MAX, t->frames);
	get_bool(r, "no_stamps", &t->no_stamps);
	get_dbl(r, "rate_pct", &t->rate_pct);
}

static void stream_from(struct rd *r, struct xp_stream *t)
{
	char buf[256] = "";
	unsigned u;

	GET_INT(r, "frame_size", 0, XP_FRAME_SIZE_MAX, t->frame_size);
	get_bool(r, "frame_size_set", &t->frame_size_set);
	get_str(r, "mix", buf, sizeof(buf));
	if (!r->bad && buf[0]) {
		char e[200];
		if (xp_mix_parse(buf, &t->mix, e, sizeof(e))) {
			xp_cli_fail(r->err, r->errlen, "spec: \"mix\": %s", e);
			r->bad = 1;
		}
	}
	struct json_object *rate = member(r, "rate", json_type_object);
	if (rate) {
		struct rd rr = { rate, r->err, r->errlen, 0 };
		u = t->rate.unit;
		get_name(&rr, "unit", rate_units, 4, &u);
		t->rate.unit = (enum xp_rate_unit)u;
		get_dbl(&rr, "value", &t->rate.value);
		r->bad |= rr.bad;
	}
	get_bool(r, "udp", &t->udp);
	get_bool(r, "zero", &t->zero);
	GET_INT(r, "port_lo", 0, 65535, t->port_lo);
	GET_INT(r, "port_hi", 0, 65535, t->port_hi);
	get_bool(r, "port_set", &t->port_set);
	GET_INT(r, "cport_lo", 0, 65535, t->cport_lo);
	GET_INT(r, "cport_hi", 0, 65535, t->cport_hi);
	flow_from(r, t);
	buf[0] = '\0';
	get_str(r, "dst_mac", buf, sizeof(buf));
	if (!r->bad && buf[0]) {
		unsigned m[6];
		char extra;
		if (sscanf(buf, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &extra) != 6) {
			xp_cli_fail(r->err, r->errlen, "spec: \"dst_mac\" \"%s\" is not a MAC address", buf);
			r->bad = 1;
			return;
		}
		for (int i = 0; i < 6; i++)
			t->dst_mac[i] = (uint8_t)m[i];
		t->dst_mac_set = true;
	}
}

int xp_spec_from_json(struct json_object *j, struct xp_spec *s, char *err, size_t errlen)
{
	struct rd r = { j, err, errlen, 0 };
	unsigned u;
	int64_t fam = 0;

	xp_spec_default(s);
	if (!json_object_is_type(j, json_type_object))
		return xp_cli_fail(err, errlen, "spec: not a JSON object");
	get_str(&r, "host", s->host, sizeof(s->host));
	GET_INT(&r, "control_port", 1, 65535, s->control_port);
	if (get_int(&r, "family", 0, 6, &fam))
		s->family = fam == 4 ? AF_INET : fam == 6 ? AF_INET6 : 0;
	get_str(&r, "dev", s->dev, sizeof(s->dev));
	get_str(&r, "auth_key", s->auth_key, sizeof(s->auth_key));
	/* The wire's form says only whether a key is used (xp_spec_to_wire_json): checked, no key from it. */
	bool auth = false;
	get_bool(&r, "auth", &auth);
	get_engine(&r, "engine", &s->engine);
	get_bool(&r, "engine_set", &s->engine_set);
	u = s->xdp_mode;
	get_name(&r, "xdp_mode", xdp_mode_names, 3, &u);
	s->xdp_mode = (enum xp_xdp_mode)u;
	GET_INT(&r, "queues", 0, 64, s->queues);
	GET_INT(&r, "first_queue", 0, 63, s->first_queue);
	GET_INT(&r, "burst", 0, UINT32_MAX, s->burst);
	u = s->kind;
	get_name(&r, "kind", kind_names, 3, &u);
	s->kind = (enum xp_test_kind)u;
	GET_INT(&r, "parallel", 0, INT64_MAX, s->parallel);
	GET_INT(&r, "threads", 0, UINT32_MAX, s->threads);
	struct json_object *a = member(&r, "bind", json_type_array);
	if (a) {
		size_t n = json_object_array_length(a);
		if (n > XP_MAX_BIND_OPT)
			return xp_cli_fail(err, errlen, "spec: \"bind\" has %zu addresses, at most %u", n, XP_MAX_BIND_OPT);
		for (size_t i = 0; i < n; i++) {
			struct json_object *e = json_object_array_get_idx(a, i);
			if (!json_object_is_type(e, json_type_string) ||
			    xp_addr_parse(json_object_get_string(e), &s->bind[i]))
				return xp_cli_fail(err, errlen, "spec: \"bind\"[%zu] is not an address", i);
		}
		s->nbind = (unsigned)n;
	}
	get_dbl(&r, "duration", &s->duration);
	get_dbl(&r, "interval", &s->interval);
	get_bool(&r, "clock_tai", &s->clock_tai);
	get_bool(&r, "clock_set", &s->clock_set);
	get_bool(&r, "rtt", &s->rtt);
	get_bool(&r, "no_stamps", &s->no_stamps);
	GET_INT(&r, "rx_ts", 0, 2, s->rx_ts);
	get_bool(&r, "rx_ts_set", &s->rx_ts_set);
	get_dbl(&r, "max_loss", &s->max_loss);
	get_dbl(&r, "stall_pct", &s->stall_pct);
	get_bool(&r, "stall_set", &s->stall_set);
	get_bool(&r, "require_rate", &s->require_rate);
	get_dbl(&r, "cps", &s->cps);
	GET_INT(&r, "syn_retries", 0, XP_MAX_SYN_RETRIES, s->syn_retries);
	get_dbl(&r, "keepalive_s", &s->keepalive_s);
	get_bool(&r, "fin", &s->fin);
	get_bool(&r, "peer_kernel", &s->peer_kernel);
	GET_INT(&r, "data_len", 0, UINT32_MAX, s->data_len);
	get_engine(&r, "syn_engine", &s->syn_engine);
	GET_INT(&r, "first_tuple", 0, INT64_MAX, s->first_tuple);
	get_str(&r, "device_netns", s->device_netns, sizeof(s->device_netns));
	get_dbl(&r, "pace_catchup_excess", &s->pace_catchup_excess);
	GET_INT(&r, "flow_top", 0, UINT32_MAX, s->flow_top);
	get_dbl(&r, "line_bps", &s->line_bps);
	a = member(&r, "traffic", json_type_array);
	if (a) {
		size_t n = json_object_array_length(a);
		if (n < 1 || n > XP_SPEC_MAX_STREAMS)
			return xp_cli_fail(err, errlen, "spec: \"traffic\" has %zu streams, a test has 1 to %u", n,
				    (unsigned)XP_SPEC_MAX_STREAMS);
		for (size_t i = 0; i < n && !r.bad; i++) {
			struct json_object *e = json_object_array_get_idx(a, i);
			if (!json_object_is_type(e, json_type_object))
				return xp_cli_fail(err, errlen, "spec: \"traffic\"[%zu] is not an object", i);
			struct rd rs = { e, err, errlen, 0 };
			stream_from(&rs, &s->traffic[i]);
			r.bad |= rs.bad;
		}
		s->ntraffic = (unsigned)n;
	}
	return r.bad ? -1 : 0;
}
