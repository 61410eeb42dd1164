/*
 * The Open Traffic Generator's flows (otg_flows.h). The model is
 * open-traffic-generator/models v1.61.0 (artifacts/openapi.yaml): Flow,
 * Flow.Header, Flow.Ethernet/Vlan/Ipv4/Ipv6/Tcp/Udp with their
 * Pattern.Flow.* fields, Flow.Size, Flow.Rate, Flow.Duration, Flow.Metrics.
 * Each object is read member by member against a list of what is known: a
 * member not on it is refused with its path, so nothing is ignored.
 */
#include "spec/otg_flows.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <json-c/json.h>

#include "spec/flow_json.h"

#define TCP_FLAG_FIN 0x01u
#define TCP_FLAG_SYN 0x02u
#define TCP_FLAG_RST 0x04u
#define TCP_FLAG_PSH 0x08u
#define TCP_FLAG_ACK 0x10u
#define TCP_FLAG_URG 0x20u

/* The model's VLAN TPID default: no TPID given, the implementation's (ours: 802.1ad outside a second tag). */
#define OTG_TPID_UNSET 65535u
/* A random size sequence's length before it repeats (OTG's Flow.SizeRandom has no count). */
#define SIZE_RANDOM_COUNT (1u << 20)

/* A JSON path into buf, cut if longer (paths are short: a flow file's nesting is bounded). */
static void pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}
#define PATHF(buf, ...) pathf(buf, sizeof(buf), __VA_ARGS__)

struct rd {
	char *err;
	size_t errlen;
	double line_rate;
};

static int fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Refuse every member of o not in known (NULL-terminated). */
static int only(struct rd *r, struct json_object *o, const char *path, const char *const *known)
{
	json_object_object_foreach(o, key, val) {
		(void)val;
		const char *const *k;
		for (k = known; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			return fail(r, "%s.%s: not supported", path, key);
	}
	return 0;
}

static struct json_object *get(struct json_object *o, const char *k)
{
	struct json_object *v;
	return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static int want_object(struct rd *r, struct json_object *o, const char *path)
{
	if (!json_object_is_type(o, json_type_object))
		return fail(r, "%s: not an object", path);
	return 0;
}

/* An unsigned integer member lo..hi; absent: *out stays. */
static int get_u64(struct rd *r, struct json_object *o, const char *k, const char *path, uint64_t lo, uint64_t hi,
		   uint64_t *out)
{
	struct json_object *v = get(o, k);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int))
		return fail(r, "%s.%s: not an integer", path, k);
	int64_t x = json_object_get_int64(v);
	if (x < 0 || (uint64_t)x < lo || (uint64_t)x > hi)
		return fail(r, "%s.%s: %lld is outside %llu..%llu", path, k, (long long)x, (unsigned long long)lo,
			    (unsigned long long)hi);
	*out = (uint64_t)x;
	return 0;
}

static int get_num(struct rd *r, struct json_object *o, const char *k, const char *path, double lo, double hi,
		   double *out)
{
	struct json_object *v = get(o, k);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double))
		return fail(r, "%s.%s: not a number", path, k);
	double x = json_object_get_double(v);
	if (!(x >= lo && x <= hi))
		return fail(r, "%s.%s: %g is outside %g..%g", path, k, x, lo, hi);
	*out = x;
	return 0;
}

static int get_bool(struct rd *r, struct json_object *o, const char *k, const char *path, bool *out)
{
	struct json_object *v = get(o, k);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_boolean))
		return fail(r, "%s.%s: not true or false", path, k);
	*out = json_object_get_boolean(v);
	return 0;
}

/* A string member, one of names (NULL-terminated) or any with names NULL; absent: *out stays. */
static int get_choice(struct rd *r, struct json_object *o, const char *k, const char *path,
		      const char *const *names, const char **out)
{
	struct json_object *v = get(o, k);

	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return fail(r, "%s.%s: not a string", path, k);
	const char *s = json_object_get_string(v);
	for (const char *const *n = names; n && *n; n++)
		if (!strcmp(*n, s)) {
			*out = *n;
			return 0;
		}
	if (names)
		return fail(r, "%s.%s: \"%s\" is not supported", path, k, s);
	*out = s;
	return 0;
}

/* ---- header fields ---- */

/* What a header's fields become. */
struct hdr_acc {
	struct xp_flow_hdr base;
	struct xp_pattern pat[XP_FF_COUNT];
	bool set[XP_FF_COUNT];
	unsigned autos;
	unsigned nvlan;
	unsigned tpid[XP_FLOW_MAX_VLANS]; /* as given, OTG_TPID_UNSET when not */
	int family;
	int l4;
	bool tcp_flags_given;
	int ip_protocol; /* ipv4.protocol / ipv6.next_header given as a value, else 0 */
};

/*
 * A patterned field: the pattern object at o[k], read with the field's
 * model (f); into acc->pat[ff], or acc->autos |= auto_bit for "auto".
 * Absent: the model's default choice (auto_bit when that is auto, and
 * when missing is filled from the path), else nothing set (the default
 * value is the base's).
 */
static int field(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *k, const char *path,
		 const struct xp_pj_field *f, enum xp_flow_field ff, unsigned auto_bit)
{
	struct json_object *v = get(o, k);
	char sub[192];
	bool is_auto;

	if (!v) {
		if (auto_bit)
			acc->autos |= auto_bit;
		return 0;
	}
	PATHF(sub, "%s.%s", path, k);
	if (xp_pattern_from_json(v, f, sub, &acc->pat[ff], &is_auto, r->err, r->errlen))
		return -1;
	if (is_auto) {
		acc->autos |= auto_bit;
		return 0;
	}
	acc->set[ff] = true;
	return 0;
}

/*
 * A field this reader sends one way only: given, it must be a single value
 * out of ok[] (n of them; 0: none, only "auto"), or "auto" where
 * allow_auto. *out its value (ok[0] when absent, UINT64_MAX for "auto").
 */
static int fixed(struct rd *r, struct json_object *o, const char *k, const char *path, unsigned width, xp_u128 def,
		 unsigned def_choice, bool allow_auto, const uint64_t *ok, unsigned n, uint64_t *out)
{
	struct xp_pj_field f = { XP_PJ_INT, width, XP_PJ_COUNTERS | (allow_auto ? XP_PJ_AUTO : 0), def_choice, def };
	struct json_object *v = get(o, k);
	struct xp_pattern p;
	char sub[192];
	bool is_auto;

	*out = ok[0];
	if (!v)
		return 0;
	PATHF(sub, "%s.%s", path, k);
	if (xp_pattern_from_json(v, &f, sub, &p, &is_auto, r->err, r->errlen))
		return -1;
	if (is_auto) {
		*out = UINT64_MAX; /* not a value: the caller's "computed" */
		return 0;
	}
	if (p.kind == XP_PAT_VALUE)
		for (unsigned i = 0; i < n; i++)
			if (p.value == ok[i]) {
				*out = ok[i];
				return 0;
			}
	if (n == 0)
		return fail(r, "%s: only \"auto\" is supported (computed)", sub);
	if (n == 1)
		return fail(r, "%s: only %s%llu is supported", sub, allow_auto ? "\"auto\" or the value " : "the value ",
			    (unsigned long long)ok[0]);
	return fail(r, "%s: only %s%llu or %llu is supported", sub, allow_auto ? "\"auto\" or the values " : "the values ",
		    (unsigned long long)ok[0], (unsigned long long)ok[1]);
}

/* A checksum: {"choice": "generated"} only. */
static int checksum(struct rd *r, struct json_object *o, const char *path)
{
	static const char *const known[] = { "choice", "generated", NULL };
	static const char *const gen[] = { "generated", NULL };
	struct json_object *v = get(o, "checksum");
	const char *c = "generated";
	char sub[192];

	if (!v)
		v = get(o, "header_checksum");
	if (!v)
		return 0;
	PATHF(sub, "%s.%s", path, get(o, "checksum") ? "checksum" : "header_checksum");
	if (want_object(r, v, sub) || only(r, v, sub, known) || get_choice(r, v, "choice", sub, gen, &c))
		return -1;
	return 0;
}

static const struct xp_pj_field F_MAC_DST = { XP_PJ_MAC, 48, XP_PJ_COUNTERS | XP_PJ_AUTO, XP_PJ_AUTO, 0 };
static const struct xp_pj_field F_MAC_SRC = { XP_PJ_MAC, 48, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };

static int ethernet(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *path)
{
	static const char *const known[] = { "dst", "src", "ether_type", NULL };

	if (only(r, o, path, known))
		return -1;
	if (field(r, acc, o, "dst", path, &F_MAC_DST, XP_FF_DST_MAC, XP_HDR_AUTO_DST_MAC) ||
	    field(r, acc, o, "src", path, &F_MAC_SRC, XP_FF_SRC_MAC, XP_HDR_AUTO_SRC_MAC))
		return -1;
	/* The EtherType follows the next header: "auto" only. */
	if (get(o, "ether_type")) {
		struct xp_pattern p;
		bool is_auto;
		char sub[192];
		struct xp_pj_field f = { XP_PJ_INT, 16, XP_PJ_COUNTERS | XP_PJ_AUTO, XP_PJ_AUTO, 65535 };
		PATHF(sub, "%s.ether_type", path);
		if (xp_pattern_from_json(get(o, "ether_type"), &f, sub, &p, &is_auto, r->err, r->errlen))
			return -1;
		if (!is_auto)
			return fail(r, "%s: only \"auto\" is supported (the next header's type)", sub);
	}
	return 0;
}

static int vlan(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *path)
{
	static const char *const known[] = { "priority", "cfi", "id", "tpid", NULL };
	static const uint64_t tpids[] = { OTG_TPID_UNSET, XP_TPID_8021Q, XP_TPID_8021AD };
	const struct xp_pj_field fp = { XP_PJ_INT, 3, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
	const struct xp_pj_field fc = { XP_PJ_INT, 1, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
	const struct xp_pj_field fi = { XP_PJ_INT, 12, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
	unsigned i = acc->nvlan;
	uint64_t tpid = OTG_TPID_UNSET;

	if (i >= XP_FLOW_MAX_VLANS)
		return fail(r, "%s: a third VLAN header is not supported (at most %u)", path, XP_FLOW_MAX_VLANS);
	if (only(r, o, path, known))
		return -1;
	enum xp_flow_field base = i ? XP_FF_VLAN1_PCP : XP_FF_VLAN0_PCP;
	if (field(r, acc, o, "priority", path, &fp, base, 0) || field(r, acc, o, "cfi", path, &fc, base + 1, 0) ||
	    field(r, acc, o, "id", path, &fi, base + 2, 0))
		return -1;
	struct json_object *t = get(o, "tpid");
	if (t) {
		struct xp_pj_field ft = { XP_PJ_INT, 16, XP_PJ_COUNTERS, XP_PJ_VALUE, OTG_TPID_UNSET };
		struct xp_pattern p;
		bool is_auto;
		char sub[192];
		PATHF(sub, "%s.tpid", path);
		if (xp_pattern_from_json(t, &ft, sub, &p, &is_auto, r->err, r->errlen))
			return -1;
		if (p.kind != XP_PAT_VALUE || (p.value != tpids[0] && p.value != tpids[1] && p.value != tpids[2]))
			return fail(r, "%s: only the value 33024 (0x8100, 802.1Q) or 34984 (0x88a8, 802.1ad) is "
				    "supported", sub);
		tpid = (uint64_t)p.value;
	}
	acc->tpid[i] = (unsigned)tpid;
	acc->nvlan++;
	return 0;
}

static int addr_fields(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *path, bool v6)
{
	unsigned choices = XP_PJ_COUNTERS | XP_PJ_AUTO | (v6 ? 0 : XP_PJ_RANDOM);
	const struct xp_pj_field f = { v6 ? XP_PJ_IPV6 : XP_PJ_IPV4, v6 ? 128 : 32, choices, XP_PJ_VALUE, 0 };

	return field(r, acc, o, "src", path, &f, XP_FF_SRC, XP_HDR_AUTO_SRC) ||
	       field(r, acc, o, "dst", path, &f, XP_FF_DST, XP_HDR_AUTO_DST);
}

static int ipv4(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *path)
{
	static const char *const known[] = { "version", "header_length", "priority", "total_length",
					     "identification", "reserved", "dont_fragment", "more_fragments",
					     "fragment_offset", "time_to_live", "protocol", "header_checksum",
					     "src", "dst", "options", NULL };
	static const uint64_t four[] = { 4 }, five[] = { 5 }, zero[] = { 0 }, one[] = { 1 }, l4[] = { 6, 17 };
	const struct xp_pj_field fttl = { XP_PJ_INT, 8, XP_PJ_COUNTERS, XP_PJ_VALUE, 64 };
	const struct xp_pj_field fphb = { XP_PJ_INT, 6, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
	const struct xp_pj_field fecn = { XP_PJ_INT, 2, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
	uint64_t x;
	char sub[192];

	acc->family = AF_INET;
	if (only(r, o, path, known))
		return -1;
	if (fixed(r, o, "version", path, 4, 4, XP_PJ_VALUE, false, four, 1, &x) ||
	    fixed(r, o, "header_length", path, 4, 5, XP_PJ_AUTO, true, five, 1, &x) ||
	    fixed(r, o, "total_length", path, 16, 46, XP_PJ_AUTO, true, zero, 0, &x) ||
	    fixed(r, o, "identification", path, 16, 0, XP_PJ_VALUE, false, zero, 1, &x) ||
	    fixed(r, o, "reserved", path, 1, 0, XP_PJ_VALUE, false, zero, 1, &x) ||
	    fixed(r, o, "dont_fragment", path, 1, 0, XP_PJ_VALUE, false, one, 1, &x) ||
	    fixed(r, o, "more_fragments", path, 1, 0, XP_PJ_VALUE, false, zero, 1, &x) ||
	    fixed(r, o, "fragment_offset", path, 13, 0, XP_PJ_VALUE, false, zero, 1, &x) ||
	    fixed(r, o, "protocol", path, 8, 61, XP_PJ_AUTO, true, l4, 2, &x) ||
	    checksum(r, o, path))
		return -1;
	if (get(o, "protocol"))
		acc->ip_protocol = x == 6 || x == 17 ? (int)x : 0;
	struct json_object *opts = get(o, "options");
	if (opts && (!json_object_is_type(opts, json_type_array) || json_object_array_length(opts)))
		return fail(r, "%s.options: IPv4 options are not supported", path);
	if (field(r, acc, o, "time_to_live", path, &fttl, XP_FF_TTL, 0) || addr_fields(r, acc, o, path, false))
		return -1;
	struct json_object *pr = get(o, "priority");
	if (pr) {
		static const char *const pknown[] = { "choice", "dscp", NULL };
		static const char *const dknown[] = { "phb", "ecn", NULL };
		static const char *const dscp_only[] = { "dscp", NULL };
		const char *c = "dscp";
		PATHF(sub, "%s.priority", path);
		if (want_object(r, pr, sub) || get_choice(r, pr, "choice", sub, dscp_only, &c) ||
		    only(r, pr, sub, pknown))
			return -1;
		struct json_object *d = get(pr, "dscp");
		if (d) {
			PATHF(sub, "%s.priority.dscp", path);
			if (want_object(r, d, sub) || only(r, d, sub, dknown) ||
			    field(r, acc, d, "phb", sub, &fphb, XP_FF_DSCP, 0) ||
			    field(r, acc, d, "ecn", sub, &fecn, XP_FF_ECN, 0))
				return -1;
		}
	}
	return 0;
}

static int ipv6(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *path)
{
	static const char *const known[] = { "version", "traffic_class", "flow_label", "payload_length",
					     "next_header", "hop_limit", "src", "dst", NULL };
	static const uint64_t six[] = { 6 }, zero[] = { 0 }, l4[] = { 6, 17 };
	const struct xp_pj_field fhl = { XP_PJ_INT, 8, XP_PJ_COUNTERS, XP_PJ_VALUE, 64 };
	const struct xp_pj_field ffl = { XP_PJ_INT, 20, XP_PJ_ALL, XP_PJ_VALUE, 0 };
	const struct xp_pj_field ftc = { XP_PJ_INT, 8, XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
	uint64_t x;
	char sub[192];

	acc->family = AF_INET6;
	if (only(r, o, path, known))
		return -1;
	if (fixed(r, o, "version", path, 4, 6, XP_PJ_VALUE, false, six, 1, &x) ||
	    fixed(r, o, "payload_length", path, 16, 0, XP_PJ_AUTO, true, zero, 0, &x) ||
	    fixed(r, o, "next_header", path, 8, 59, XP_PJ_AUTO, true, l4, 2, &x))
		return -1;
	if (get(o, "next_header"))
		acc->ip_protocol = x == 6 || x == 17 ? (int)x : 0;
	if (field(r, acc, o, "hop_limit", path, &fhl, XP_FF_TTL, 0) ||
	    field(r, acc, o, "flow_label", path, &ffl, XP_FF_FLOW_LABEL, 0) || addr_fields(r, acc, o, path, true))
		return -1;
	/* The traffic class is DSCP and ECN, two fields here: a value or a list splits exactly. */
	struct json_object *tc = get(o, "traffic_class");
	if (tc) {
		struct xp_pattern p;
		bool is_auto;
		PATHF(sub, "%s.traffic_class", path);
		if (xp_pattern_from_json(tc, &ftc, sub, &p, &is_auto, r->err, r->errlen))
			return -1;
		if (p.kind != XP_PAT_VALUE && p.kind != XP_PAT_VALUES)
			return fail(r, "%s: only \"value\" or \"values\" is supported (the class is DSCP and ECN "
				    "here)", sub);
		struct xp_pattern d = p, e = p;
		d.width = 6;
		e.width = 2;
		d.value = p.value >> 2;
		e.value = p.value & 3;
		for (uint32_t i = 0; i < p.nvalues; i++) {
			d.values[i] = p.values[i] >> 2;
			e.values[i] = p.values[i] & 3;
		}
		acc->pat[XP_FF_DSCP] = d;
		acc->pat[XP_FF_ECN] = e;
		acc->set[XP_FF_DSCP] = acc->set[XP_FF_ECN] = true;
	}
	return 0;
}

static int l4(struct rd *r, struct hdr_acc *acc, struct json_object *o, const char *path, bool udp)
{
	static const char *const tknown[] = { "src_port", "dst_port", "seq_num", "ack_num", "data_offset",
					      "ecn_ns", "ecn_cwr", "ecn_echo", "ctl_urg", "ctl_ack", "ctl_psh",
					      "ctl_rst", "ctl_syn", "ctl_fin", "window", "checksum", NULL };
	static const char *const uknown[] = { "src_port", "dst_port", "length", "checksum", NULL };
	static const char *const ctl[] = { "ctl_fin", "ctl_syn", "ctl_rst", "ctl_psh", "ctl_ack", "ctl_urg" };
	static const uint64_t zero[] = { 0 }, off[] = { 0, 5 }, bit[] = { 0, 1 };
	const struct xp_pj_field fport = { XP_PJ_INT, 16, XP_PJ_ALL, XP_PJ_VALUE, 0 };
	uint64_t x;

	acc->l4 = udp ? IPPROTO_UDP : IPPROTO_TCP;
	if (only(r, o, path, udp ? uknown : tknown) || checksum(r, o, path))
		return -1;
	if (field(r, acc, o, "src_port", path, &fport, XP_FF_SPORT, XP_HDR_AUTO_SPORT) ||
	    field(r, acc, o, "dst_port", path, &fport, XP_FF_DPORT, XP_HDR_AUTO_DPORT))
		return -1;
	if (udp)
		return fixed(r, o, "length", path, 16, 0, XP_PJ_VALUE, false, zero, 1, &x);
	uint64_t seq = 0, ack = 0, win = 0;
	/* Fixed per flow: any single value. */
	struct json_object *v;
	const char *names[] = { "seq_num", "ack_num", "window" };
	uint64_t *dst[] = { &seq, &ack, &win };
	unsigned widths[] = { 32, 32, 16 };
	for (unsigned i = 0; i < 3; i++) {
		struct xp_pj_field f = { XP_PJ_INT, widths[i], XP_PJ_COUNTERS, XP_PJ_VALUE, 0 };
		struct xp_pattern p;
		bool is_auto;
		char sub[192];
		if (!(v = get(o, names[i])))
			continue;
		PATHF(sub, "%s.%s", path, names[i]);
		if (xp_pattern_from_json(v, &f, sub, &p, &is_auto, r->err, r->errlen))
			return -1;
		if (p.kind != XP_PAT_VALUE)
			return fail(r, "%s: only \"value\" is supported (fixed per flow)", sub);
		*dst[i] = (uint64_t)p.value;
	}
	acc->base.seq = (uint32_t)seq;
	acc->base.ack = (uint32_t)ack;
	acc->base.window = (uint16_t)win;
	if (fixed(r, o, "data_offset", path, 4, 0, XP_PJ_VALUE, false, off, 2, &x) ||
	    fixed(r, o, "ecn_ns", path, 1, 0, XP_PJ_VALUE, false, zero, 1, &x) ||
	    fixed(r, o, "ecn_cwr", path, 1, 0, XP_PJ_VALUE, false, zero, 1, &x) ||
	    fixed(r, o, "ecn_echo", path, 1, 0, XP_PJ_VALUE, false, zero, 1, &x))
		return -1;
	for (unsigned i = 0; i < 6; i++) {
		if (!get(o, ctl[i]))
			continue;
		if (fixed(r, o, ctl[i], path, 1, 0, XP_PJ_VALUE, false, bit, 2, &x))
			return -1;
		acc->tcp_flags_given = true;
		if (x)
			acc->base.tcp_flags |= (uint8_t)(1u << i);
	}
	return 0;
}

/* ---- a flow's packet ---- */

static int packet(struct rd *r, struct json_object *a, const char *path, struct xp_stream *t)
{
	static const char *const supported[] = { "ethernet", "vlan", "ipv4", "ipv6", "tcp", "udp", NULL };
	static struct hdr_acc acc;
	char hp[160], sub[192];
	int stage = 0; /* 0: ethernet next, 1: vlan or IP, 2: tcp or udp, 3: done */

	if (!json_object_is_type(a, json_type_array) || !json_object_array_length(a))
		return fail(r, "%s: not an array of headers (ethernet, vlan, ipv4 or ipv6, tcp or udp)", path);
	memset(&acc, 0, sizeof(acc));
	for (size_t i = 0; i < json_object_array_length(a); i++) {
		struct json_object *h = json_object_array_get_idx(a, i);
		const char *c = "ethernet";
		PATHF(hp, "%s[%zu]", path, i);
		if (want_object(r, h, hp) || get_choice(r, h, "choice", hp, NULL, &c))
			return -1;
		const char *const *k;
		for (k = supported; *k && strcmp(*k, c); k++)
			;
		PATHF(sub, "%s.%s", hp, c);
		if (!*k)
			return fail(r, "%s: header not supported", sub);
		/* The header's members: choice and the chosen one; any other header named is refused. */
		json_object_object_foreach(h, key, val) {
			(void)val;
			if (strcmp(key, "choice") && strcmp(key, c))
				return fail(r, "%s.%s: header not supported", hp, key);
		}
		struct json_object *o = get(h, c);
		if (!o)
			o = json_object_new_object(); /* every field its default; freed below */
		else
			json_object_get(o);
		int rc = -1;
		bool is_vlan = !strcmp(c, "vlan"), is_ip = !strncmp(c, "ipv", 3), is_eth = !strcmp(c, "ethernet");
		if (want_object(r, o, sub))
			;
		else if (stage == 0 && !is_eth)
			fail(r, "%s: the first header must be ethernet", sub);
		else if (stage != 0 && is_eth)
			fail(r, "%s: a second ethernet header is not supported", sub);
		else if (is_vlan && stage != 1)
			fail(r, "%s: a VLAN header after the IP header", sub);
		else if (is_ip && stage != 1)
			fail(r, "%s: a second IP header is not supported", sub);
		else if (!is_eth && !is_vlan && !is_ip && stage != 2)
			fail(r, "%s: %s", sub, stage < 2 ? "comes before an ipv4 or ipv6 header" :
						    "a second TCP or UDP header is not supported");
		else if (is_eth)
			rc = ethernet(r, &acc, o, sub), stage = 1;
		else if (is_vlan)
			rc = vlan(r, &acc, o, sub);
		else if (is_ip)
			rc = (c[3] == '4' ? ipv4 : ipv6)(r, &acc, o, sub), stage = 2;
		else
			rc = l4(r, &acc, o, sub, !strcmp(c, "udp")), stage = 3;
		json_object_put(o);
		if (rc)
			return -1;
	}
	if (stage < 3)
		return fail(r, "%s: ends before a tcp or udp header (xdpperf sends TCP or UDP)", path);
	if (acc.ip_protocol && acc.ip_protocol != acc.l4)
		return fail(r, "%s: the IP header's protocol %d is not its %s header", path, acc.ip_protocol,
			    acc.l4 == IPPROTO_UDP ? "udp" : "tcp");
	/* The base: what the patterns do not say. */
	struct xp_flow_hdr *b = &acc.base;
	b->nvlan = (uint8_t)acc.nvlan;
	for (unsigned i = 0; i < acc.nvlan; i++) {
		unsigned tp = acc.tpid[i];
		if (tp == OTG_TPID_UNSET) /* QinQ's outer tag is a service tag, a single or inner tag a customer tag */
			tp = acc.nvlan == 2 && i == 0 ? XP_TPID_8021AD : XP_TPID_8021Q;
		b->vlan[i].tpid = (uint16_t)tp;
	}
	b->src.family = b->dst.family = acc.family;
	b->l4_proto = (uint8_t)acc.l4;
	if (acc.l4 == IPPROTO_TCP && !acc.tcp_flags_given)
		b->tcp_flags = TCP_FLAG_ACK | TCP_FLAG_PSH; /* a data segment, as one stream's frames */
	b->ttl = 64;
	xp_flow_pat_init(&t->hdr, b);
	for (unsigned ff = 0; ff < XP_FF_COUNT; ff++)
		if (acc.set[ff])
			t->hdr.f[ff] = acc.pat[ff];
	/* The base holds frame 0's values: a fixed field reads the same in both. */
	xp_flow_pat_at(&t->hdr, 0, &t->hdr.base);
	t->hdr.base.src.family = t->hdr.base.dst.family = acc.family;
	t->has_hdr = true;
	t->hdr_auto = acc.autos;
	t->udp = acc.l4 == IPPROTO_UDP;
	return 0;
}

/* ---- size, rate, duration, metrics ---- */

static int size(struct rd *r, struct json_object *o, const char *path, struct xp_stream *t)
{
	static const char *const known[] = { "choice", "fixed", "increment", "random", "weight_pairs", NULL };
	static const char *const choices[] = { "fixed", "increment", "random", "weight_pairs", NULL };
	const char *c = "fixed";
	char sub[192];
	uint64_t a, b, step;

	if (want_object(r, o, path) || only(r, o, path, known) || get_choice(r, o, "choice", path, choices, &c))
		return -1;
	struct json_object *v = get(o, c);
	PATHF(sub, "%s.%s", path, c);
	t->frame_size_set = true;
	if (!strcmp(c, "fixed")) {
		a = 64;
		if (get_u64(r, o, "fixed", path, 0, UINT32_MAX, &a))
			return -1;
		t->frame_size = (unsigned)(a > XP_FRAME_SIZE_MAX + 1 ? XP_FRAME_SIZE_MAX + 1 : a);
		if (a < XP_FRAME_SIZE_MIN || a > XP_FRAME_SIZE_MAX)
			return fail(r, "%s: %llu is outside %u..%u", sub, (unsigned long long)a, XP_FRAME_SIZE_MIN,
				    XP_FRAME_SIZE_MAX);
		return 0;
	}
	if (v && want_object(r, v, sub))
		return -1;
	struct xp_pattern *p = &t->size_pat;
	memset(p, 0, sizeof(*p));
	p->width = XP_SIZE_PAT_WIDTH;
	if (!strcmp(c, "increment")) {
		static const char *const ik[] = { "start", "end", "step", NULL };
		a = 64, b = 1518, step = 1;
		if (v && (only(r, v, sub, ik) || get_u64(r, v, "start", sub, 1, UINT32_MAX, &a) ||
			  get_u64(r, v, "end", sub, 64, UINT32_MAX, &b) || get_u64(r, v, "step", sub, 1, UINT32_MAX, &step)))
			return -1;
		if (a < XP_FRAME_SIZE_MIN || b > XP_FRAME_SIZE_MAX || a > b)
			return fail(r, "%s: sizes %llu to %llu: they must rise within %u..%u", sub, (unsigned long long)a,
				    (unsigned long long)b, XP_FRAME_SIZE_MIN, XP_FRAME_SIZE_MAX);
		p->kind = XP_PAT_INCREMENT;
		p->value = a;
		p->step = step;
		p->count = (uint32_t)((b - a) / step + 1);
	} else if (!strcmp(c, "random")) {
		static const char *const rk[] = { "min", "max", NULL };
		a = 64, b = 1518;
		if (v && (only(r, v, sub, rk) || get_u64(r, v, "min", sub, 0, UINT32_MAX, &a) ||
			  get_u64(r, v, "max", sub, 0, UINT32_MAX, &b)))
			return -1;
		if (a < XP_FRAME_SIZE_MIN || b > XP_FRAME_SIZE_MAX || a > b)
			return fail(r, "%s: sizes %llu to %llu: min <= max within %u..%u", sub, (unsigned long long)a,
				    (unsigned long long)b, XP_FRAME_SIZE_MIN, XP_FRAME_SIZE_MAX);
		p->kind = XP_PAT_RANDOM;
		p->min = a;
		p->max = b;
		p->seed = 1;
		p->count = SIZE_RANDOM_COUNT;
	} else {
		static const char *const wk[] = { "choice", "predefined", "custom", NULL };
		static const char *const wc[] = { "predefined", "custom", NULL };
		static const char *const pre[] = { "imix", NULL };
		const char *wch = "predefined", *pd = "imix";
		char spec[256] = "", e[200];
		if (v && (only(r, v, sub, wk) || get_choice(r, v, "choice", sub, wc, &wch)))
			return -1;
		if (!strcmp(wch, "predefined")) {
			if (v && get_choice(r, v, "predefined", sub, pre, &pd))
				return -1;
			PATHF(spec, "imix");
		} else {
			struct json_object *cu = get(v, "custom");
			char cp[224];
			PATHF(cp, "%s.custom", sub);
			if (!cu || !json_object_is_type(cu, json_type_array) || !json_object_array_length(cu))
				return fail(r, "%s: not an array of sizes and weights", cp);
			for (size_t i = 0; i < json_object_array_length(cu); i++) {
				static const char *const ck[] = { "size", "weight", NULL };
				struct json_object *pr = json_object_array_get_idx(cu, i);
				char pp[240];
				uint64_t sz = 64;
				double w = 1;
				PATHF(pp, "%s[%zu]", cp, i);
				if (want_object(r, pr, pp) || only(r, pr, pp, ck) ||
				    get_u64(r, pr, "size", pp, 12, 65535, &sz) || get_num(r, pr, "weight", pp, 0, 1e9, &w))
					return -1;
				if (w != floor(w) || w < 1 || w > 1024)
					return fail(r, "%s.weight: %g: whole numbers 1..1024 here", pp, w);
				size_t l = strlen(spec);
				snprintf(spec + l, sizeof(spec) - l, "%s%llu:%u", i ? "," : "", (unsigned long long)sz,
					 (unsigned)w);
			}
		}
		if (xp_mix_parse(spec, &t->mix, e, sizeof(e)))
			return fail(r, "%s: %s", sub, e);
		t->frame_size = t->mix.size[0];
		for (unsigned i = 1; i < t->mix.n; i++)
			t->frame_size = t->mix.size[i] > t->frame_size ? t->mix.size[i] : t->frame_size;
		return 0;
	}
	t->size_pat_set = true;
	t->frame_size = (unsigned)(p->kind == XP_PAT_RANDOM ? p->max : p->value + (xp_u128)(p->count - 1) * p->step);
	return 0;
}

static int rate(struct rd *r, struct json_object *o, const char *path, struct xp_stream *t)
{
	static const char *const known[] = { "choice", "pps", "bps", "kbps", "mbps", "gbps", "percentage", NULL };
	const char *c = "pps";
	uint64_t x;
	double pct = 100;

	if (want_object(r, o, path) || only(r, o, path, known) || get_choice(r, o, "choice", path, known + 1, &c))
		return -1;
	if (!strcmp(c, "percentage")) {
		if (get_num(r, o, "percentage", path, 0, 100, &pct))
			return -1;
		if (!(r->line_rate > 0))
			return fail(r, "%s.percentage: a share of the line rate: give --line-rate RATE (the link's bit "
				    "rate on the wire, e.g. 10G)", path);
		if (!(pct > 0))
			return fail(r, "%s.percentage: 0 %% sends nothing", path);
		/* OTG's percentage is of the port's line rate: time on the wire, L1 (preamble, FCS and gap counted),
		 * as --line-rate is. */
		t->rate = (struct xp_rate){ XP_RATE_BPS_L1, r->line_rate * pct / 100 };
		t->rate_pct = pct;
		return 0;
	}
	/* The model's defaults and minimums (Flow.Rate). */
	static const struct { const char *n; uint64_t def, lo, hi; double mul; } u[] = {
		{ "pps", 1000, 1, UINT64_MAX, 1 }, { "bps", 1000000000, 672, UINT64_MAX, 1 },
		{ "kbps", 1000000, 1, UINT64_MAX, 1e3 }, { "mbps", 1000, 1, UINT64_MAX, 1e6 },
		{ "gbps", 1, 1, UINT32_MAX, 1e9 },
	};
	for (unsigned i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (strcmp(c, u[i].n))
			continue;
		x = u[i].def;
		if (get_u64(r, o, c, path, u[i].lo, u[i].hi, &x))
			return -1;
		t->rate = (struct xp_rate){ i ? XP_RATE_BPS_L2 : XP_RATE_PPS, (double)x * u[i].mul };
	}
	return 0;
}

/* A duration's gap and delay: only the model's defaults (12 bytes, no delay). */
static int gap_delay(struct rd *r, struct json_object *o, const char *path)
{
	uint64_t gap = 12;
	char sub[224];

	if (get_u64(r, o, "gap", path, 0, UINT32_MAX, &gap))
		return -1;
	if (gap != 12)
		return fail(r, "%s.gap: only 12 bytes (the Ethernet minimum) is supported", path);
	struct json_object *d = get(o, "delay");
	if (d) {
		static const char *const dk[] = { "choice", "bytes", "nanoseconds", "microseconds", NULL };
		double x = 0;
		PATHF(sub, "%s.delay", path);
		if (want_object(r, d, sub) || only(r, d, sub, dk))
			return -1;
		for (unsigned i = 1; dk[i]; i++)
			if (get_num(r, d, dk[i], sub, 0, 1e18, &x))
				return -1;
			else if (x != 0)
				return fail(r, "%s.%s: only no delay (0) is supported", sub, dk[i]);
	}
	return 0;
}

static int duration(struct rd *r, struct json_object *o, const char *path, struct xp_stream *t)
{
	static const char *const known[] = { "choice", "fixed_packets", "fixed_seconds", "continuous", NULL };
	static const char *const choices[] = { "fixed_packets", "fixed_seconds", "continuous", NULL };
	const char *c = "continuous";
	char sub[192];

	if (want_object(r, o, path) || only(r, o, path, known) || get_choice(r, o, "choice", path, choices, &c))
		return -1;
	struct json_object *v = get(o, c);
	PATHF(sub, "%s.%s", path, c);
	if (v && want_object(r, v, sub))
		return -1;
	if (!strcmp(c, "continuous")) {
		static const char *const ck[] = { "gap", "delay", NULL };
		return v && (only(r, v, sub, ck) || gap_delay(r, v, sub)) ? -1 : 0;
	}
	if (!strcmp(c, "fixed_packets")) {
		static const char *const fk[] = { "packets", "gap", "delay", NULL };
		uint64_t n = 1;
		if (v && (only(r, v, sub, fk) || get_u64(r, v, "packets", sub, 1, UINT32_MAX, &n) || gap_delay(r, v, sub)))
			return -1;
		t->frames = n;
		return 0;
	}
	static const char *const sk[] = { "seconds", "gap", "delay", NULL };
	double secs = 1;
	if (v && (only(r, v, sub, sk) || get_num(r, v, "seconds", sub, 0, 86400, &secs) || gap_delay(r, v, sub)))
		return -1;
	if (!(secs > 0))
		return fail(r, "%s.seconds: 0 s sends nothing", sub);
	/* A flow's own length is a frame count: its rate's frames in that time. */
	double pps = t->rate.unit == XP_RATE_PPS ? t->rate.value : 0;
	if (!pps && !t->size_pat_set && !t->mix.n)
		pps = xp_rate_to_pps(&t->rate, t->frame_size);
	if (!(pps > 0))
		return fail(r, "%s: needs a rate in pps or a fixed size (the flow's frames in that time)", sub);
	t->frames = (uint64_t)ceil(secs * pps);
	return 0;
}

static int metrics(struct rd *r, struct json_object *o, const char *path, struct xp_stream *t)
{
	static const char *const known[] = { "enable", "loss", "timestamps", "latency", NULL };
	bool enable = false, loss = false, ts = false, lat = false;
	char sub[192];

	if (want_object(r, o, path) || only(r, o, path, known) || get_bool(r, o, "enable", path, &enable) ||
	    get_bool(r, o, "loss", path, &loss) || get_bool(r, o, "timestamps", path, &ts))
		return -1;
	struct json_object *l = get(o, "latency");
	if (l) {
		static const char *const lk[] = { "enable", "mode", NULL };
		static const char *const modes[] = { "store_forward", NULL };
		const char *m = "store_forward";
		PATHF(sub, "%s.latency", path);
		if (want_object(r, l, sub) || only(r, l, sub, lk) || get_bool(r, l, "enable", sub, &lat) ||
		    get_choice(r, l, "mode", sub, modes, &m))
			return -1;
	}
	/* Loss, timestamps and latency all come from the stamp: they need it on. */
	if (!enable && (loss || ts || lat))
		return fail(r, "%s: loss, timestamps and latency need \"enable\": true (the stamp)", path);
	t->no_stamps = !enable;
	return 0;
}

static int tx_rx(struct rd *r, struct json_object *o, const char *path)
{
	static const char *const known[] = { "choice", "port", "device", NULL };
	static const char *const choices[] = { "port", "device", NULL };
	static const char *const pk[] = { "tx_name", "rx_name", "rx_names", NULL };
	static const char *const dk[] = { "mode", "tx_names", "rx_names", NULL };
	static const char *const modes[] = { "mesh", "one_to_one", NULL };
	const char *c = "port", *m;
	char sub[192];

	if (want_object(r, o, path) || only(r, o, path, known) || get_choice(r, o, "choice", path, choices, &c))
		return -1;
	/* The names are the test bed's; the flows go from this host to -c's server. Read, checked, kept out of the run. */
	struct json_object *v = get(o, c);
	PATHF(sub, "%s.%s", path, c);
	if (!v)
		return 0;
	if (want_object(r, v, sub) || only(r, v, sub, strcmp(c, "port") ? dk : pk))
		return -1;
	if (!strcmp(c, "device"))
		return get_choice(r, v, "mode", sub, modes, &m);
	return get_choice(r, v, "tx_name", sub, NULL, &m) || get_choice(r, v, "rx_name", sub, NULL, &m);
}

static int flow(struct rd *r, struct json_object *f, unsigned i, struct xp_stream *t)
{
	static const char *const known[] = { "name", "tx_rx", "packet", "size", "rate", "duration", "metrics", NULL };
	char path[64], sub[96];
	const char *name = "";
	struct json_object *v;

	PATHF(path, "flows[%u]", i);
	if (want_object(r, f, path) || only(r, f, path, known) || get_choice(r, f, "name", path, NULL, &name))
		return -1;
	if (strlen(name) >= sizeof(t->name))
		return fail(r, "%s.name: longer than %zu bytes", path, sizeof(t->name) - 1);
	snprintf(t->name, sizeof(t->name), "%s", name);
	t->frame_size = 64; /* Flow.Size's default */
	t->frame_size_set = true;
	t->rate = (struct xp_rate){ XP_RATE_PPS, 1000 }; /* Flow.Rate's default */
	t->no_stamps = true; /* Flow.Metrics' enable defaults to false */
	if ((v = get(f, "tx_rx")) && (PATHF(sub, "%s.tx_rx", path), tx_rx(r, v, sub)))
		return -1;
	if (!(v = get(f, "packet")))
		return fail(r, "%s.packet: missing (the headers)", path);
	PATHF(sub, "%s.packet", path);
	if (packet(r, v, sub, t))
		return -1;
	if ((v = get(f, "size")) && (PATHF(sub, "%s.size", path), size(r, v, sub, t)))
		return -1;
	if ((v = get(f, "rate")) && (PATHF(sub, "%s.rate", path), rate(r, v, sub, t)))
		return -1;
	if ((v = get(f, "metrics")) && (PATHF(sub, "%s.metrics", path), metrics(r, v, sub, t)))
		return -1;
	/* Last: fixed_seconds counts the rate's frames. */
	if ((v = get(f, "duration")) && (PATHF(sub, "%s.duration", path), duration(r, v, sub, t)))
		return -1;
	return 0;
}

static int config(struct rd *r, struct json_object *cfg, struct xp_spec *s)
{
	static const char *const known[] = { "flows", "ports", "devices", NULL };
	struct json_object *a;

	if (!json_object_is_type(cfg, json_type_object))
		return fail(r, "not a JSON object (an Open Traffic Generator config)");
	json_object_object_foreach(cfg, key, val) {
		(void)val;
		const char *const *k;
		for (k = known; *k && strcmp(*k, key); k++)
			;
		if (!*k)
			return fail(r, "%s: not supported (only flows, ports and devices are read)", key);
	}
	if (!(a = get(cfg, "flows")) || !json_object_is_type(a, json_type_array) || !json_object_array_length(a))
		return fail(r, "flows: missing or empty (the flows to send)");
	size_t n = json_object_array_length(a);
	if (n > XP_SPEC_MAX_STREAMS)
		return fail(r, "flows: %zu flows, a test has at most %u", n, (unsigned)XP_SPEC_MAX_STREAMS);
	const struct xp_stream tmpl = s->traffic[0];
	for (size_t i = 0; i < n; i++) {
		struct xp_stream *t = &s->traffic[i];
		*t = tmpl;
		memset(t->name, 0, sizeof(t->name));
		t->has_hdr = t->size_pat_set = t->no_stamps = false;
		t->hdr_auto = 0;
		t->frames = 0;
		memset(&t->mix, 0, sizeof(t->mix));
		if (flow(r, json_object_array_get_idx(a, i), (unsigned)i, t))
			return -1;
		/* OTG's flow names are unique (x-unique): the report names flows by them. */
		for (size_t k = 0; k < i && t->name[0]; k++)
			if (!strcmp(s->traffic[k].name, t->name))
				return fail(r, "flows[%zu].name: \"%s\" is flows[%zu]'s name too", i, t->name, k);
	}
	s->ntraffic = (unsigned)n;
	return 0;
}

int xp_otg_flows_parse(struct json_object *cfg, const char *file, double line_rate, struct xp_spec *s,
		       char *err, size_t errlen)
{
	char msg[400];
	struct rd r = { msg, sizeof(msg), line_rate };

	msg[0] = '\0';
	if (config(&r, cfg, s)) {
		snprintf(err, errlen, "--flows %s: %s", file, msg);
		/* Paths quote the file's own keys: a control character in one must not break the line. */
		for (char *c = err; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		return -1;
	}
	return 0;
}

int xp_otg_flows_load(const char *file, double line_rate, struct xp_spec *s, char *err, size_t errlen)
{
	struct json_object *cfg = json_object_from_file(file);

	if (!cfg) {
		snprintf(err, errlen, "--flows %s: %s", file, json_util_get_last_err() ? json_util_get_last_err() :
			 "cannot read it as JSON");
		/* json-c's message ends in a newline: one line. */
		size_t l = strlen(err);
		while (l && (err[l - 1] == '\n' || err[l - 1] == '\r'))
			err[--l] = '\0';
		return -1;
	}
	int rc = xp_otg_flows_parse(cfg, file, line_rate, s, err, errlen);
	json_object_put(cfg);
	return rc;
}
