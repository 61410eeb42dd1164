/* A flow's patterns and headers as JSON; see flow_json.h. */
#include "spec/flow_json.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <json-c/json.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static xp_u128 width_max(unsigned width)
{
	return width >= 128 ? ~(xp_u128)0 : ((xp_u128)1 << width) - 1;
}

/* ---- values ---- */

static struct json_object *value_json(xp_u128 v, enum xp_pj_fmt fmt)
{
	char buf[INET6_ADDRSTRLEN];
	uint8_t b[16];

	switch (fmt) {
	case XP_PJ_MAC:
		xp_u128_to_bytes(v, b, 6);
		snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
		return json_object_new_string(buf);
	case XP_PJ_IPV4:
		xp_u128_to_bytes(v, b, 4);
		return json_object_new_string(inet_ntop(AF_INET, b, buf, sizeof(buf)));
	case XP_PJ_IPV6:
		xp_u128_to_bytes(v, b, 16);
		return json_object_new_string(inet_ntop(AF_INET6, b, buf, sizeof(buf)));
	default:
		return json_object_new_int64((int64_t)(uint64_t)v);
	}
}

static int value_from(struct json_object *j, const struct xp_pj_field *f, const char *path, xp_u128 *v,
		      char *err, size_t errlen)
{
	uint8_t b[16];
	unsigned m[6];
	char extra;

	if (f->fmt == XP_PJ_INT) {
		if (!json_object_is_type(j, json_type_int))
			return fail(err, errlen, "%s: not an integer", path);
		int64_t x = json_object_get_int64(j);
		if (x < 0 || (f->width < 64 && (uint64_t)x > (uint64_t)width_max(f->width)))
			return fail(err, errlen, "%s: %lld is outside the field's %u bits (0..%llu)", path,
				    (long long)x, f->width, (unsigned long long)width_max(f->width));
		*v = (xp_u128)(uint64_t)x;
		return 0;
	}
	if (!json_object_is_type(j, json_type_string))
		return fail(err, errlen, "%s: not a string", path);
	const char *s = json_object_get_string(j);
	switch (f->fmt) {
	case XP_PJ_MAC:
		if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &extra) != 6)
			return fail(err, errlen, "%s: \"%s\" is not a MAC address", path, s);
		for (int i = 0; i < 6; i++) {
			if (m[i] > 255)
				return fail(err, errlen, "%s: \"%s\" is not a MAC address", path, s);
			b[i] = (uint8_t)m[i];
		}
		*v = xp_u128_from_bytes(b, 6);
		return 0;
	case XP_PJ_IPV4:
		if (inet_pton(AF_INET, s, b) != 1)
			return fail(err, errlen, "%s: \"%s\" is not an IPv4 address", path, s);
		*v = xp_u128_from_bytes(b, 4);
		return 0;
	default:
		if (inet_pton(AF_INET6, s, b) != 1)
			return fail(err, errlen, "%s: \"%s\" is not an IPv6 address", path, s);
		*v = xp_u128_from_bytes(b, 16);
		return 0;
	}
}

/* ---- patterns ---- */

static const char *const choice_names[] = { "value", "values", "increment", "decrement", "random" };

struct json_object *xp_pattern_to_json(const struct xp_pattern *p, enum xp_pj_fmt fmt)
{
	struct json_object *o = json_object_new_object(), *c;

	if (!o)
		return NULL;
	unsigned k = p->kind <= XP_PAT_RANDOM ? p->kind : XP_PAT_VALUE;
	json_object_object_add(o, "choice", json_object_new_string(choice_names[k]));
	switch (k) {
	case XP_PAT_VALUES:
		c = json_object_new_array();
		for (uint32_t i = 0; i < p->nvalues && i < XP_PAT_MAX_VALUES; i++)
			json_object_array_add(c, value_json(p->values[i], fmt));
		json_object_object_add(o, "values", c);
		break;
	case XP_PAT_INCREMENT:
	case XP_PAT_DECREMENT:
		c = json_object_new_object();
		json_object_object_add(c, "start", value_json(p->value, fmt));
		json_object_object_add(c, "step", value_json(p->step, fmt));
		json_object_object_add(c, "count", json_object_new_int64(p->count));
		json_object_object_add(o, choice_names[k], c);
		break;
	case XP_PAT_RANDOM:
		c = json_object_new_object();
		json_object_object_add(c, "min", value_json(p->min, fmt));
		json_object_object_add(c, "max", value_json(p->max, fmt));
		json_object_object_add(c, "seed", json_object_new_int64(p->seed));
		json_object_object_add(c, "count", json_object_new_int64(p->count));
		json_object_object_add(o, "random", c);
		break;
	default:
		json_object_object_add(o, "value", value_json(p->value, fmt));
		break;
	}
	return o;
}

/* An integer member of a counter or random object: count (1..2^32-1) or seed. */
static int u32_from(struct json_object *j, const char *path, uint32_t lo, uint32_t *out, char *err, size_t errlen)
{
	if (!json_object_is_type(j, json_type_int))
		return fail(err, errlen, "%s: not an integer", path);
	int64_t x = json_object_get_int64(j);
	if (x < lo || x > UINT32_MAX)
		return fail(err, errlen, "%s: %lld is outside %u..%u", path, (long long)x, lo, UINT32_MAX);
	*out = (uint32_t)x;
	return 0;
}

/* The members of a counter ({start, step, count}) or random ({min, max, seed, count}) object. */
static int sub_from(struct json_object *c, const struct xp_pj_field *f, const char *path, bool random,
		    struct xp_pattern *p, char *err, size_t errlen)
{
	char sub[256];

	if (!json_object_is_type(c, json_type_object))
		return fail(err, errlen, "%s: not an object", path);
	json_object_object_foreach(c, key, val) {
		snprintf(sub, sizeof(sub), "%s.%s", path, key);
		int rc;
		if (!random && !strcmp(key, "start"))
			rc = value_from(val, f, sub, &p->value, err, errlen);
		else if (!random && !strcmp(key, "step"))
			rc = value_from(val, f, sub, &p->step, err, errlen);
		else if (random && !strcmp(key, "min"))
			rc = value_from(val, f, sub, &p->min, err, errlen);
		else if (random && !strcmp(key, "max"))
			rc = value_from(val, f, sub, &p->max, err, errlen);
		else if (random && !strcmp(key, "seed"))
			rc = u32_from(val, sub, 0, &p->seed, err, errlen);
		else if (!strcmp(key, "count"))
			rc = u32_from(val, sub, 1, &p->count, err, errlen);
		else
			rc = fail(err, errlen, "%s: not supported", sub);
		if (rc)
			return -1;
	}
	return 0;
}

int xp_pattern_from_json(struct json_object *j, const struct xp_pj_field *f, const char *path,
			 struct xp_pattern *p, bool *is_auto, char *err, size_t errlen)
{
	char sub[256];
	struct json_object *v;
	unsigned choice = f->def_choice;

	*is_auto = false;
	memset(p, 0, sizeof(*p));
	p->width = (uint8_t)f->width;
	p->value = f->def;
	if (!json_object_is_type(j, json_type_object))
		return fail(err, errlen, "%s: not an object", path);
	/* Every member is one this reader knows: anything else (metric_tags, a typo) is refused, not ignored. */
	json_object_object_foreach(j, key, val) {
		(void)val;
		static const char *const known[] = { "choice", "value", "values", "increment", "decrement",
						     "random", "auto" };
		bool ok = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok = ok || !strcmp(key, known[i]);
		if (!ok)
			return fail(err, errlen, "%s.%s: not supported", path, key);
	}
	if (json_object_object_get_ex(j, "choice", &v)) {
		snprintf(sub, sizeof(sub), "%s.choice", path);
		if (!json_object_is_type(v, json_type_string))
			return fail(err, errlen, "%s: not a string", sub);
		const char *c = json_object_get_string(v);
		choice = 0;
		if (!strcmp(c, "auto"))
			choice = XP_PJ_AUTO;
		for (unsigned k = 0; k <= XP_PAT_RANDOM; k++)
			if (!strcmp(c, choice_names[k]))
				choice = 1u << k;
		if (!(choice & f->choices))
			return fail(err, errlen, "%s: \"%s\" is not a choice of this field", sub, c);
	}
	if (choice == XP_PJ_AUTO) {
		*is_auto = true;
		return 0;
	}
	/* OTG's counters and random sequences default to one value (count 1),
	 * a step of 1 and seed 1; random's range is the whole field. */
	p->step = 1;
	p->count = 1;
	p->seed = 1;
	p->max = width_max(f->width);
	switch (choice) {
	case XP_PJ_VALUE:
		p->kind = XP_PAT_VALUE;
		if (json_object_object_get_ex(j, "value", &v)) {
			snprintf(sub, sizeof(sub), "%s.value", path);
			if (value_from(v, f, sub, &p->value, err, errlen))
				return -1;
		}
		return 0;
	case XP_PJ_VALUES:
		p->kind = XP_PAT_VALUES;
		if (!json_object_object_get_ex(j, "values", &v)) {
			p->nvalues = 1;
			p->values[0] = f->def;
			return 0;
		}
		snprintf(sub, sizeof(sub), "%s.values", path);
		if (!json_object_is_type(v, json_type_array))
			return fail(err, errlen, "%s: not an array", sub);
		size_t n = json_object_array_length(v);
		if (n < 1 || n > XP_PAT_MAX_VALUES)
			return fail(err, errlen, "%s: %zu values, 1 to %u here", sub, n, XP_PAT_MAX_VALUES);
		for (size_t i = 0; i < n; i++) {
			snprintf(sub, sizeof(sub), "%s.values[%zu]", path, i);
			if (value_from(json_object_array_get_idx(v, i), f, sub, &p->values[i], err, errlen))
				return -1;
		}
		p->nvalues = (uint32_t)n;
		return 0;
	case XP_PJ_INCREMENT:
	case XP_PJ_DECREMENT:
		p->kind = choice == XP_PJ_INCREMENT ? XP_PAT_INCREMENT : XP_PAT_DECREMENT;
		if (json_object_object_get_ex(j, choice_names[p->kind], &v)) {
			snprintf(sub, sizeof(sub), "%s.%s", path, choice_names[p->kind]);
			if (sub_from(v, f, sub, false, p, err, errlen))
				return -1;
		}
		return 0;
	default:
		p->kind = XP_PAT_RANDOM;
		p->min = 0;
		if (json_object_object_get_ex(j, "random", &v)) {
			snprintf(sub, sizeof(sub), "%s.random", path);
			if (sub_from(v, f, sub, true, p, err, errlen))
				return -1;
			if (p->min > p->max)
				return fail(err, errlen, "%s: min is above max", sub);
		}
		return 0;
	}
}

bool xp_pattern_eq(const struct xp_pattern *a, const struct xp_pattern *b)
{
	if (a->kind != b->kind || a->width != b->width)
		return false;
	switch (a->kind) {
	case XP_PAT_VALUE:
		return a->value == b->value;
	case XP_PAT_VALUES:
		if (a->nvalues != b->nvalues)
			return false;
		for (uint32_t i = 0; i < a->nvalues && i < XP_PAT_MAX_VALUES; i++)
			if (a->values[i] != b->values[i])
				return false;
		return true;
	case XP_PAT_INCREMENT:
	case XP_PAT_DECREMENT:
		return a->value == b->value && a->step == b->step && a->count == b->count;
	default:
		return a->min == b->min && a->max == b->max && a->seed == b->seed && a->count == b->count;
	}
}

enum xp_pj_fmt xp_flow_field_fmt(const struct xp_flow_hdr *base, enum xp_flow_field ff)
{
	if (ff == XP_FF_DST_MAC || ff == XP_FF_SRC_MAC)
		return XP_PJ_MAC;
	if (ff == XP_FF_SRC || ff == XP_FF_DST)
		return base->src.family == AF_INET6 ? XP_PJ_IPV6 : XP_PJ_IPV4;
	return XP_PJ_INT;
}

/* ---- headers (the spec's own form, not OTG's) ---- */

/* The keys of struct xp_flow_pat's patterns in the spec's JSON. */
static const char *const field_keys[XP_FF_COUNT] = {
	[XP_FF_DST_MAC] = "dst_mac", [XP_FF_SRC_MAC] = "src_mac",
	[XP_FF_VLAN0_PCP] = "vlan0_pcp", [XP_FF_VLAN0_DEI] = "vlan0_dei", [XP_FF_VLAN0_VID] = "vlan0_vid",
	[XP_FF_VLAN1_PCP] = "vlan1_pcp", [XP_FF_VLAN1_DEI] = "vlan1_dei", [XP_FF_VLAN1_VID] = "vlan1_vid",
	[XP_FF_SRC] = "src", [XP_FF_DST] = "dst", [XP_FF_DSCP] = "dscp", [XP_FF_ECN] = "ecn",
	[XP_FF_TTL] = "ttl", [XP_FF_FLOW_LABEL] = "flow_label", [XP_FF_SPORT] = "sport", [XP_FF_DPORT] = "dport",
};

static void put_i(struct json_object *o, const char *k, int64_t v)
{
	json_object_object_add(o, k, json_object_new_int64(v));
}

static struct json_object *addr_json(const struct xp_addr *a)
{
	char buf[INET6_ADDRSTRLEN] = "";
	if (a->family)
		xp_addr_str(a, buf, sizeof(buf));
	return json_object_new_string(buf);
}

struct json_object *xp_flow_pat_to_json(const struct xp_flow_pat *fp)
{
	const struct xp_flow_hdr *h = &fp->base;
	struct json_object *o = json_object_new_object(), *a, *pats;
	struct xp_flow_pat init;

	if (!o)
		return NULL;
	json_object_object_add(o, "dst_mac", value_json(xp_u128_from_bytes(h->dst_mac, 6), XP_PJ_MAC));
	json_object_object_add(o, "src_mac", value_json(xp_u128_from_bytes(h->src_mac, 6), XP_PJ_MAC));
	a = json_object_new_array();
	for (unsigned i = 0; i < h->nvlan && i < XP_FLOW_MAX_VLANS; i++) {
		struct json_object *t = json_object_new_object();
		put_i(t, "tpid", h->vlan[i].tpid);
		put_i(t, "pcp", h->vlan[i].pcp);
		put_i(t, "dei", h->vlan[i].dei);
		put_i(t, "vid", h->vlan[i].vid);
		json_object_array_add(a, t);
	}
	json_object_object_add(o, "vlan", a);
	json_object_object_add(o, "src", addr_json(&h->src));
	json_object_object_add(o, "dst", addr_json(&h->dst));
	put_i(o, "dscp", h->dscp);
	put_i(o, "ecn", h->ecn);
	put_i(o, "ttl", h->ttl);
	put_i(o, "flow_label", h->flow_label);
	json_object_object_add(o, "l4", json_object_new_string(h->l4_proto == IPPROTO_UDP ? "udp" : "tcp"));
	put_i(o, "sport", h->sport);
	put_i(o, "dport", h->dport);
	put_i(o, "tcp_flags", h->tcp_flags);
	put_i(o, "seq", h->seq);
	put_i(o, "ack", h->ack);
	put_i(o, "window", h->window);
	json_object_object_add(o, "syn_options", json_object_new_boolean(h->tcp_syn_options));
	put_i(o, "mss", h->mss);
	/* Only the fields whose pattern is not the base's fixed value. */
	xp_flow_pat_init(&init, h);
	pats = json_object_new_object();
	for (unsigned ff = 0; ff < XP_FF_COUNT; ff++)
		if (!xp_pattern_eq(&fp->f[ff], &init.f[ff]))
			json_object_object_add(pats, field_keys[ff],
					       xp_pattern_to_json(&fp->f[ff], xp_flow_field_fmt(h, ff)));
	json_object_object_add(o, "patterns", pats);
	return o;
}

/* An integer member lo..hi; absent leaves *out. */
static int int_from(struct json_object *o, const char *k, int64_t hi, int64_t *out, char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return fail(err, errlen, "spec: hdr \"%s\" is not an int", k);
	int64_t x = json_object_get_int64(v);
	if (x < 0 || x > hi)
		return fail(err, errlen, "spec: hdr \"%s\" %lld is outside 0..%lld", k, (long long)x, (long long)hi);
	*out = x;
	return 0;
}

#define HDR_INT(o, k, hi, dst)                                            \
	do {                                                              \
		int64_t v_ = (dst);                                       \
		if (int_from(o, k, hi, &v_, err, errlen))                 \
			return -1;                                        \
		(dst) = (__typeof__(dst))v_;                              \
	} while (0)

static int mac_from(struct json_object *o, const char *k, uint8_t *mac, char *err, size_t errlen)
{
	static const struct xp_pj_field f = { XP_PJ_MAC, 48, XP_PJ_VALUE, XP_PJ_VALUE, 0 };
	struct json_object *v;
	char path[64];
	xp_u128 x;

	if (!json_object_object_get_ex(o, k, &v))
		return 0;
	snprintf(path, sizeof(path), "spec: hdr \"%s\"", k);
	if (value_from(v, &f, path, &x, err, errlen))
		return -1;
	xp_u128_to_bytes(x, mac, 6);
	return 0;
}

static int addr_from(struct json_object *o, const char *k, struct xp_addr *a, char *err, size_t errlen)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, k, &v))
		return 0;
	const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
	if (!s)
		return fail(err, errlen, "spec: hdr \"%s\" is not a string", k);
	memset(a, 0, sizeof(*a));
	if (s[0] && xp_addr_parse(s, a))
		return fail(err, errlen, "spec: hdr \"%s\" \"%s\" is not an address", k, s);
	return 0;
}

int xp_flow_pat_from_json(struct json_object *j, struct xp_flow_pat *fp, char *err, size_t errlen)
{
	struct xp_flow_hdr h;
	struct json_object *v;

	memset(&h, 0, sizeof(h));
	h.l4_proto = IPPROTO_TCP;
	if (!json_object_is_type(j, json_type_object))
		return fail(err, errlen, "spec: \"hdr\" is not an object");
	if (mac_from(j, "dst_mac", h.dst_mac, err, errlen) || mac_from(j, "src_mac", h.src_mac, err, errlen))
		return -1;
	if (json_object_object_get_ex(j, "vlan", &v)) {
		if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) > XP_FLOW_MAX_VLANS)
			return fail(err, errlen, "spec: hdr \"vlan\" is not an array of at most %u tags",
				    XP_FLOW_MAX_VLANS);
		h.nvlan = (uint8_t)json_object_array_length(v);
		for (unsigned i = 0; i < h.nvlan; i++) {
			struct json_object *t = json_object_array_get_idx(v, i);
			if (!json_object_is_type(t, json_type_object))
				return fail(err, errlen, "spec: hdr \"vlan\"[%u] is not an object", i);
			HDR_INT(t, "tpid", 0xffff, h.vlan[i].tpid);
			HDR_INT(t, "pcp", 7, h.vlan[i].pcp);
			HDR_INT(t, "dei", 1, h.vlan[i].dei);
			HDR_INT(t, "vid", 4095, h.vlan[i].vid);
		}
	}
	if (addr_from(j, "src", &h.src, err, errlen) || addr_from(j, "dst", &h.dst, err, errlen))
		return -1;
	HDR_INT(j, "dscp", 255, h.dscp);
	HDR_INT(j, "ecn", 255, h.ecn);
	HDR_INT(j, "ttl", 255, h.ttl);
	HDR_INT(j, "flow_label", UINT32_MAX, h.flow_label);
	if (json_object_object_get_ex(j, "l4", &v)) {
		const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
		if (strcmp(s, "tcp") && strcmp(s, "udp"))
			return fail(err, errlen, "spec: hdr \"l4\" is neither \"tcp\" nor \"udp\"");
		h.l4_proto = !strcmp(s, "udp") ? IPPROTO_UDP : IPPROTO_TCP;
	}
	HDR_INT(j, "sport", 65535, h.sport);
	HDR_INT(j, "dport", 65535, h.dport);
	HDR_INT(j, "tcp_flags", 255, h.tcp_flags);
	HDR_INT(j, "seq", UINT32_MAX, h.seq);
	HDR_INT(j, "ack", UINT32_MAX, h.ack);
	HDR_INT(j, "window", 65535, h.window);
	if (json_object_object_get_ex(j, "syn_options", &v))
		h.tcp_syn_options = json_object_get_boolean(v);
	HDR_INT(j, "mss", 65535, h.mss);
	xp_flow_pat_init(fp, &h);
	if (!json_object_object_get_ex(j, "patterns", &v))
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return fail(err, errlen, "spec: hdr \"patterns\" is not an object");
	json_object_object_foreach(v, key, val) {
		unsigned ff;
		for (ff = 0; ff < XP_FF_COUNT && strcmp(key, field_keys[ff]); ff++)
			;
		if (ff == XP_FF_COUNT)
			return fail(err, errlen, "spec: hdr \"patterns\": no field \"%s\"", key);
		struct xp_pj_field f = { xp_flow_field_fmt(&h, ff), xp_flow_field_width(&h, ff), XP_PJ_ALL,
					 XP_PJ_VALUE, fp->f[ff].value };
		char path[96];
		bool is_auto;
		snprintf(path, sizeof(path), "spec: hdr \"patterns\".%s", key);
		if (xp_pattern_from_json(val, &f, path, &fp->f[ff], &is_auto, err, errlen))
			return -1;
	}
	return 0;
}
