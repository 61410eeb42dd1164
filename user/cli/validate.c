/*
 * The rules between options, applied once every value is parsed. One function
 * per group; xp_cli_check runs them in order and the first broken rule is the
 * message, so where two rules can both be broken their order is kept.
 *
 * Which options go with which role, test kind and engine is not here but in
 * the option table (options.c: roles, kinds, engines): check_role and
 * check_applies read it, so an option either takes effect or is refused with
 * a message that names it, what it conflicts with and what to do instead.
 * The rules here are the ones the table cannot say: options that exclude
 * each other, choices that follow from others, values that depend on others.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cli/flow_opts.h"
#include "cli/otg_opts.h"
#include "cli/options.h"
#include "bpf/window.h"
#include "connsearch/search.h"
#include "engine/engine.h"
#include "spec/otg_flows.h"

typedef int rule_fn(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen);

static enum xp_kind kind_of(const struct xp_opts *o)
{
	return o->close_each ? XP_KIND_CONNECT : o->keepalive ? XP_KIND_HOLD : XP_KIND_STREAM;
}

/* "-x", "-k" or "a stream test", for "..., not -x" */
static const char *kind_label(enum xp_kind k)
{
	return k == XP_KIND_CONNECT ? "-x" : k == XP_KIND_HOLD ? "-k" : "a stream test (no -x/-k)";
}

/* The tests of a kinds mask, for "X is for ..." */
static const char *kinds_desc(unsigned kinds)
{
	if (kinds == XP_K_STREAM)
		return "stream tests (no -x/-k)";
	if (kinds == XP_K(XP_KIND_CONNECT))
		return "connection-rate tests (-x)";
	if (kinds == XP_K(XP_KIND_HOLD))
		return "hold tests (-k)";
	if (kinds == XP_K_CONN)
		return "connection tests (-x or -k)";
	return "every test";
}

/* What to add for a kinds mask: "-x", "-k" or "-x (connection rate) or -k (hold)" */
static const char *kinds_advice(unsigned kinds)
{
	if (kinds == XP_K(XP_KIND_CONNECT))
		return "-x";
	if (kinds == XP_K(XP_KIND_HOLD))
		return "-k";
	return "-x (connection rate) or -k (hold)";
}

/* One engine, as messages name it: as it names itself (engine/engine.h), auto as the registry's choice. */
static const char *engine_desc(enum xp_engine_id e)
{
	const struct xp_engine_ops *ops = xp_engine_ops_of(e);

	if (e == XP_ENGINE_AUTO || !ops)
		return "the default engine (auto: live or xsk)";
	return ops->title;
}

/*
 * The engines of a mask, in the order of their ids, engines of a family
 * named together where all of them are in it: "the frame engines (--engine
 * live, xsk) or the socket engine (--engine socket)".
 */
static void engines_desc(unsigned mask, char *buf, size_t len)
{
	char part[XP_ENGINE_COUNT][96];
	int n = 0;

	for (int e = XP_ENGINE_AUTO + 1; e < XP_ENGINE_COUNT; e++) {
		const struct xp_engine_ops *ops = xp_engine_ops_of((enum xp_engine_id)e);
		if (!(mask & XP_E(e)) || !ops)
			continue;
		unsigned family = 0;
		for (int f = XP_ENGINE_AUTO + 1; f < XP_ENGINE_COUNT && ops->family; f++) {
			const struct xp_engine_ops *fo = xp_engine_ops_of((enum xp_engine_id)f);
			if (fo && fo->family && !strcmp(fo->family, ops->family))
				family |= XP_E(f);
		}
		if (!family || (mask & family) != family) {
			snprintf(part[n++], sizeof(part[0]), "%s (--engine %s)", ops->title, ops->name);
			continue;
		}
		if (e != __builtin_ctz(family))
			continue; /* named with the first of its family */
		snprintf(part[n], sizeof(part[0]), "%s (--engine", ops->family);
		for (int f = e; f < XP_ENGINE_COUNT; f++)
			if (family & XP_E(f))
				snprintf(part[n] + strlen(part[n]), sizeof(part[0]) - strlen(part[n]), "%s %s",
					 f == e ? "" : ",", xp_engine_name((enum xp_engine_id)f));
		snprintf(part[n] + strlen(part[n]), sizeof(part[0]) - strlen(part[n]), ")");
		n++;
	}
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ",
			 part[i]);
}

/* The engine and how it came to be chosen: "the xsk engine (--engine xsk)", "the socket engine (selected by -P)". */
static const char *engine_chosen(const struct xp_opts *o, const struct xp_given *g, char *buf, size_t len)
{
	char name[32];

	if (o->spec.engine_set)
		snprintf(buf, len, "%s (--engine %s)", engine_desc(o->spec.engine), xp_engine_name(o->spec.engine));
	else if (o->spec.engine == XP_ENGINE_XDP && g->last[XP_G_XDP_CONN])
		snprintf(buf, len, "%s (selected by %s)", engine_desc(o->spec.engine),
			 xp_option_label(g->last[XP_G_XDP_CONN], name, sizeof(name)));
	else if (o->spec.engine == XP_ENGINE_SOCKET && g->last[XP_G_SOCKET])
		snprintf(buf, len, "%s (selected by %s)", engine_desc(o->spec.engine),
			 xp_option_label(g->last[XP_G_SOCKET], name, sizeof(name)));
	else
		snprintf(buf, len, "%s", engine_desc(o->spec.engine));
	return buf;
}

/* "--otg-token, --otg-cert, ... and -d": the options an OTG front end takes besides itself, from the table. */
static void otg_takes(enum xp_role role, char *buf, size_t len)
{
	const char *self = role == XP_ROLE_OTG ? "otg" : "config";
	const struct xp_option *ops[16];
	size_t n = 0;
	for (size_t i = 0; i < xp_noptions && n < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct xp_option *op = &xp_options[i];
		const char *name = op->name ? op->name : "";
		if ((op->roles & (1u << role)) && strcmp(name, self) && strcmp(name, "help") && strcmp(name, "version"))
			ops[n++] = op;
	}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		char label[32];
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ",
			 xp_option_label(ops[i], label, sizeof(label)));
	}
}

/* -s or -c, not both; every option given must be one of that role's. */
static int check_role(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	char name[32];

	if (xp_given_has(g, "server") + xp_given_has(g, "client") + xp_given_has(g, "probe") + xp_given_has(g, "otg") +
		    xp_given_has(g, "config") > 1)
		return xp_cli_fail(err, errlen, "-s, -c, --probe, --otg and --config exclude each other");
	if (o->role == XP_ROLE_NONE)
		return xp_cli_fail(err, errlen, "say -s to run a server, -c ADDR to run a client, --probe to see "
				   "what this host can do, or --otg/--config for the OTG API (see xdpperf --help)");
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		if (!(g->seen >> i & 1) || (op->roles & (1u << o->role)))
			continue;
		xp_option_label(op, name, sizeof(name));
		/* --probe looks at an interface and runs no test: no test's options. */
		if (o->role == XP_ROLE_PROBE)
			return xp_cli_fail(err, errlen, "--probe takes only --dev, -J and -d, not %s", name);
		/* The OTG front ends: the config or the API client says what to send, not options. */
		if (o->role == XP_ROLE_OTG || o->role == XP_ROLE_CONFIG) {
			char list[256];
			otg_takes(o->role, list, sizeof(list));
			return xp_cli_fail(err, errlen, "%s takes only %s, not %s (the flows are the OTG config's)",
					   o->role == XP_ROLE_OTG ? "--otg" : "--config", list, name);
		}
		if (!(op->roles & (XP_IN_CLIENT | XP_IN_SERVER)))
			return xp_cli_fail(err, errlen, "%s goes with %s (the OTG API), not %s", name,
					   op->roles & XP_IN_OTG ? "--otg" : "--config",
					   o->role == XP_ROLE_SERVER ? "-s" : o->role == XP_ROLE_CLIENT ? "-c" : "--probe");
		return xp_cli_fail(err, errlen, "%s is a %s option", name,
				   o->role == XP_ROLE_SERVER ? "client" : "server");
	}
	return 0;
}

static int check_outputs(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->json && o->json_stream)
		return xp_cli_fail(err, errlen, "-J and --json-stream exclude each other: -J prints one document at the "
				   "end, --json-stream one object per line as the test runs");
	return 0;
}

/* A connection test either closes (-x) or holds (-k) its connections. */
static int check_test_kind(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->close_each && o->keepalive)
		return xp_cli_fail(err, errlen, "-x (close at once) and -k (keep open) exclude each other");
	o->spec.kind = o->close_each ? XP_TEST_CONNECT : o->keepalive ? XP_TEST_HOLD : XP_TEST_STREAM;
	return 0;
}

/* Unless an engine was named: an XDP connection engine option selects that
 * engine, fireperf's flags the socket engine. */
static int resolve_engine(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->spec.engine_set)
		return 0;
	if (g->last[XP_G_XDP_CONN])
		o->spec.engine = XP_ENGINE_XDP;
	else if (g->last[XP_G_SOCKET])
		o->spec.engine = XP_ENGINE_SOCKET;
	return 0;
}

/* The server sends nothing: its only engine is the socket one, standing listeners on -p. */
static int check_server(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->role != XP_ROLE_SERVER)
		return 0;
	if (o->spec.engine != XP_ENGINE_AUTO && o->spec.engine != XP_ENGINE_SOCKET)
		return xp_cli_fail(err, errlen, "--engine %s is a client engine: the server only takes --engine socket "
				   "(standing listeners, like -P N)", xp_engine_name(o->spec.engine));
	if (xp_given_has(g, "port") && o->spec.engine != XP_ENGINE_SOCKET)
		return xp_cli_fail(err, errlen, "-p on the server sets the ports of standing listeners: add -P N (or "
				   "--engine socket); without them the server counts the ports each client's test names");
	return 0;
}

/* --compare runs the socket engine and a fast one: the xsk engine (or --engine live) for a stream, xdp for -x/-k. */
static int check_compare(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (!o->compare)
		return 0;
	bool conn = kind_of(o) != XP_KIND_STREAM;
	enum xp_engine_id e = o->spec.engine_set ? o->spec.engine : XP_ENGINE_AUTO;
	if (e == XP_ENGINE_SOCKET || e == XP_ENGINE_AUTO)
		e = conn ? XP_ENGINE_XDP : XP_ENGINE_XSK;
	if (conn ? e != XP_ENGINE_XDP : (e != XP_ENGINE_XSK && e != XP_ENGINE_LIVE))
		return xp_cli_fail(err, errlen, "--compare %s compares the socket engine with %s: --engine %s does not "
				   "run there", conn ? "with -x/-k" : "of a stream",
				   conn ? "the XDP connection engine (--engine xdp)" : "a frame engine (--engine xsk, the "
				   "default, or live)", xp_engine_name(o->spec.engine));
	o->compare_engine = e;
	return 0;
}

/* The engine runs this kind of test (outside --compare, which picks its engines per kind). */
static int check_engine_kind(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	enum xp_kind k = kind_of(o);
	char name[32], sel[64];

	if (o->role != XP_ROLE_CLIENT || o->compare || (xp_engine_kinds(o->spec.engine) & XP_K(k)))
		return 0;
	if (o->spec.engine == XP_ENGINE_XDP) {
		/* Advise the kinds every given option allows, so one change is enough. */
		unsigned kinds = XP_K_CONN;
		for (size_t i = 0; i < xp_noptions; i++)
			if ((g->seen >> i & 1) && (xp_options[i].kinds & XP_K_CONN))
				kinds &= xp_options[i].kinds;
		if (!kinds)
			kinds = XP_K_CONN;
		if (o->spec.engine_set)
			return xp_cli_fail(err, errlen, "--engine xdp is the XDP connection engine, which runs connection "
					   "tests: add %s", kinds_advice(kinds));
		return xp_cli_fail(err, errlen, "%s selects the XDP connection engine (--engine xdp), which runs "
				   "connection tests: add %s",
				   xp_option_label(g->last[XP_G_XDP_CONN], name, sizeof(name)), kinds_advice(kinds));
	}
	return xp_cli_fail(err, errlen, "%s is for the socket engine (--engine socket) or the XDP connection engine "
			   "(--engine xdp), not %s", kind_label(k), engine_chosen(o, g, sel, sizeof(sel)));
}

/* One option on the client: does it apply to the engine and the test kind? 0 or -1 with the message. */
static int check_one(const struct xp_opts *o, const struct xp_given *g, const struct xp_option *op, char *err,
		     size_t errlen)
{
	enum xp_kind k = kind_of(o);
	char name[32], sel[80], engs[200];

	xp_option_label(op, name, sizeof(name));
	if (o->compare) {
		/* Each option goes to the side that takes it; pacing one side only would compare unlike loads. */
		if (op->groups & XP_OPT_RATE)
			return xp_cli_fail(err, errlen, "%s would pace only one side of --compare (the socket engine has "
					   "no rate limit): drop it, --compare measures both as fast as they go", name);
		if (xp_option_applies(op, XP_ROLE_CLIENT, k, XP_ENGINE_SOCKET) ||
		    xp_option_applies(op, XP_ROLE_CLIENT, k, o->compare_engine))
			return 0;
		engines_desc(xp_option_engines(op), engs, sizeof(engs));
		return xp_cli_fail(err, errlen, "%s is for %s in %s, and --compare runs the socket engine and %s",
				   name, engs, kinds_desc(op->kinds), engine_desc(o->compare_engine));
	}
	if (!(xp_option_engines(op) & XP_E(o->spec.engine))) {
		const char *why = xp_option_instead(op, o->spec.engine);
		engines_desc(xp_option_engines(op), engs, sizeof(engs));
		return xp_cli_fail(err, errlen, "%s is for %s, not %s%s%s", name, engs, engine_chosen(o, g, sel, sizeof(sel)),
				   why ? ": " : "", why ? why : "");
	}
	if (!(op->kinds & XP_K(k))) {
		if (k == XP_KIND_STREAM)
			return xp_cli_fail(err, errlen, "%s is for %s: add %s", name, kinds_desc(op->kinds),
					   kinds_advice(op->kinds));
		return xp_cli_fail(err, errlen, "%s is for %s, not %s%s%s", name, kinds_desc(op->kinds), kind_label(k),
				   op->instead_kind ? ": " : "", op->instead_kind ? op->instead_kind : "");
	}
	return 0;
}

/* Every client option given takes effect in this test with this engine, or is refused. */
static int check_applies(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->role != XP_ROLE_CLIENT)
		return 0;
	for (size_t i = 0; i < xp_noptions; i++)
		if ((g->seen >> i & 1) && check_one(o, g, &xp_options[i], err, errlen))
			return -1;
	return 0;
}

/* The XDP connection engine's options that depend on each other's values. */
static int check_xdp_conn(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->role != XP_ROLE_CLIENT)
		return 0;
	if (xp_spec_check_bytes(&o->spec, err, errlen))
		return -1;
	if (o->spec.data_len && o->compare)
		return xp_cli_fail(err, errlen, "--bytes has no socket-engine counterpart for --compare");
	/* -P is the window: -x keeps at most that many handshakes in flight (fireperf's "in parallel"). */
	if (o->spec.engine == XP_ENGINE_XDP && o->close_each && !xp_given_has(g, "parallel"))
		o->spec.parallel = XP_DEFAULT_CONN_WINDOW;
	return xp_spec_check_window(&o->spec, err, errlen);
}

/* What needs a target rate: --burst shapes it, --require-rate checks it. */
static int check_rate(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	const struct xp_engine_ops *ops = xp_engine_ops_of(o->spec.engine);
	const char *way = ops && (ops->caps & XP_CAP_BIT(XP_CAP_CPS)) ? "--cps N" : "-b RATE"; /* the engine's rate */

	if (o->role != XP_ROLE_CLIENT)
		return 0;
	if (xp_spec_check_rate(&o->spec, way, err, errlen))
		return -1;
	if (o->spec.engine == XP_ENGINE_SOCKET && !o->spec.parallel)
		o->spec.parallel = 1;
	return 0;
}

/* The RFC 2544 suite (issue 11): its settings need it, and it sets what one test's options would. */
static int check_rfc2544(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static const char *const its_own[] = { "bitrate", "burst", "length", "time", "compare", "json-stream",
					       "require-rate", "max-loss", "interval" };
	char lbl[32];
	if (!o->rfc2544) {
		if (g->last[XP_G_RFC2544])
			return xp_cli_fail(err, errlen, "--%s is a setting of the RFC 2544 suite: add --rfc2544",
					   g->last[XP_G_RFC2544]->name);
		return 0;
	}
	for (size_t i = 0; i < sizeof(its_own) / sizeof(its_own[0]); i++) {
		if (xp_given_has(g, its_own[i]))
			return xp_cli_fail(err, errlen, "--rfc2544 picks the rates, sizes and trial lengths itself: drop %s "
					   "(the suite's are --line-rate, --sizes, --trial, --loss-tolerance)",
					   xp_option_label(xp_option_find(its_own[i]), lbl, sizeof(lbl)));
	}
	if (!o->rfc.tests)
		return xp_cli_fail(err, errlen, "--tests chose no test");
	return 0;
}

/* --no-stamps (issue 10 point 9): what needs the stamps cannot be had without them. */
static int check_no_stamps(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static const char *const needs[] = { "clock", "rtt", "rx-timestamp" };
	char lbl[32];
	if (!o->spec.no_stamps)
		return 0;
	if (o->rfc2544)
		return xp_cli_fail(err, errlen, "--no-stamps: the RFC 2544 suite counts each trial's loss and latency "
				   "from the stamps (drop --no-stamps)");
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (xp_given_has(g, needs[i]))
			return xp_cli_fail(err, errlen, "--no-stamps: %s times the stamps, and there would be none "
					   "(drop one of the two)",
					   xp_option_label(xp_option_find(needs[i]), lbl, sizeof(lbl)));
	}
	return 0;
}

/*
 * The connection searches (issue 12 point 4): their settings need --search,
 * and --search's search follows from the test: -x the connection rate, -x
 * --fin the teardown rate, -k the capacity. No retransmission unless
 * --syn-retries says otherwise: a SYN that needed one is a connection the
 * device did not take at that rate. It picks rates and lengths itself.
 * (The option table has already refused --search outside -x/-k and the
 * XDP connection engine.)
 */
static int check_search(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static const char *const its_own[] = { "time", "interval", "compare", "json-stream", "require-rate",
					       "max-loss", "rfc2544", "bytes" };
	char lbl[32];
	if (!o->cs.mode) {
		if (g->last[XP_G_SEARCH])
			return xp_cli_fail(err, errlen, "--%s is a setting of the connection searches: add --search",
					   g->last[XP_G_SEARCH]->name);
		return 0;
	}
	if (o->role != XP_ROLE_CLIENT)
		return 0;
	for (size_t i = 0; i < sizeof(its_own) / sizeof(its_own[0]); i++) {
		if (xp_given_has(g, its_own[i]))
			return xp_cli_fail(err, errlen, "--search picks its trials' rates and lengths and counts "
					   "handshakes and closes: drop %s (its settings are --search-trial, "
					   "--search-floor, --search-ceiling, --search-resolution, --search-settle)",
					   xp_option_label(xp_option_find(its_own[i]), lbl, sizeof(lbl)));
	}
	if (o->keepalive) {
		o->cs.mode = XP_CS_CAPACITY;
		if (o->spec.fin)
			return xp_cli_fail(err, errlen, "--search with -k (capacity) resets the held connections at the "
					   "end: drop --fin (-x --fin --search measures the FIN close's rate)");
		if (!xp_given_has(g, "parallel"))
			o->spec.parallel = 100000;
		if (!(o->spec.cps > 0))
			o->spec.cps = 10000;
	} else {
		o->cs.mode = o->spec.fin ? XP_CS_TEARDOWN : XP_CS_RATE;
		if (xp_given_has(g, "cps"))
			return xp_cli_fail(err, errlen, "--search with -x picks each trial's --cps: drop it (the range is "
					   "--search-floor..--search-ceiling)");
		if (o->cs.ceiling > 0 && o->cs.ceiling <= o->cs.floor)
			return xp_cli_fail(err, errlen, "--search-ceiling %.0f is not above --search-floor %.0f",
					   o->cs.ceiling, o->cs.floor);
	}
	if (!xp_given_has(g, "syn-retries"))
		o->spec.syn_retries = 0;
	return 0;
}

/* Only digits and dots: meant as an IPv4 address, never a name (getaddrinfo would read "198.19.1" as 198.19.0.1). */
/* The client's address, ports and report timing. */
static int check_client(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->role != XP_ROLE_CLIENT)
		return 0;
	/* The address against -4/-6, the ports against the control port: the test's own rules. */
	if (xp_spec_check_peer(&o->spec, err, errlen))
		return -1;
	if (o->spec.interval > o->spec.duration)
		o->spec.interval = o->spec.duration;
	return 0;
}

/* Flows (issue 26): --flows FILE or the one-flow shortcuts, not both; the file says what -l, -b, -u, -p and
 * --no-stamps would. The test's traffic is made here, once the peer and -u are known. */
static int check_flows(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static const char *const shortcuts[] = { "vlan", "dscp", "ttl", "src", "dst" };
	static const char *const file_says[] = { "length", "bitrate", "udp", "port", "no-stamps" };
	const char *shortcut = NULL;
	char lbl[32];

	if (o->role != XP_ROLE_CLIENT)
		return 0;
	for (size_t i = 0; i < sizeof(shortcuts) / sizeof(shortcuts[0]) && !shortcut; i++)
		if (xp_given_has(g, shortcuts[i]))
			shortcut = shortcuts[i];
	if (xp_given_has(g, "flow-top") && !o->flow.file[0] && !shortcut)
		return xp_cli_fail(err, errlen, "--flow-top sets the rows of the per-flow table: give --flows FILE");
	if (!o->flow.file[0] && !shortcut)
		return 0;
	if (o->rfc2544)
		return xp_cli_fail(err, errlen, "--rfc2544 sends its own trials: drop --%s (the suite with flows is "
				   "not done)", o->flow.file[0] ? "flows" : shortcut);
	if (!o->flow.file[0]) {
		unsigned given = (xp_given_has(g, "dscp") ? XP_FLOW_GIVEN_DSCP : 0) |
				 (xp_given_has(g, "ttl") ? XP_FLOW_GIVEN_TTL : 0);
		if (xp_cli_flow_shortcut(o, given, err, errlen))
			return -1;
		return xp_spec_check_flows(&o->spec, err, errlen);
	}
	if (shortcut)
		return xp_cli_fail(err, errlen, "--flows %s: the file says the flows' headers: drop --%s",
				   o->flow.file, shortcut);
	for (size_t i = 0; i < sizeof(file_says) / sizeof(file_says[0]); i++)
		if (xp_given_has(g, file_says[i]))
			return xp_cli_fail(err, errlen, "--flows %s: the file says each flow's size, rate, headers, "
					   "ports and stamps: drop %s", o->flow.file,
					   xp_option_label(xp_option_find(file_says[i]), lbl, sizeof(lbl)));
	/* A share of the line rate would need --line-rate, a setting of the RFC 2544 suite: none here. */
	if (xp_otg_flows_load(o->flow.file, 0, &o->spec, err, errlen))
		return -1;
	return xp_spec_check_flows(&o->spec, err, errlen);
}

/* Server policy (issue 9): its options mean nothing to a client. */
static int check_server_policy(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static const char *const server_only[] = {
		"allow", "max-duration", "test-ports", "max-tests", "max-control-per-addr", "max-parallel",
		"max-parallel-total", "max-workers", "max-workers-total", "max-listen-ports", "allow-lo", "allow-bind",
		"bind-control",
	};

	if (o->role != XP_ROLE_CLIENT)
		return 0;
	for (size_t i = 0; i < sizeof(server_only) / sizeof(server_only[0]); i++) {
		if (xp_given_has(g, server_only[i]))
			return xp_cli_fail(err, errlen, "--%s is a server option", server_only[i]);
	}
	return 0;
}

int xp_cli_check(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static rule_fn *const rules[] = {
		check_role,
		check_outputs,
		check_test_kind,
		resolve_engine,
		check_server,
		check_compare,
		check_engine_kind,
		check_applies,
		check_search,
		check_xdp_conn,
		check_rate,
		check_rfc2544,
		check_no_stamps,
		check_client,
		check_flows,
		check_server_policy,
		xp_cli_check_otg,
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i](o, g, err, errlen))
			return 2;
	}
	return 0;
}
