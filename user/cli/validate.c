/*
 * The rules between options, applied once every value is parsed. One function
 * per group; xp_cli_check runs them in order and the first broken rule is the
 * message, so where two rules can both be broken their order is kept.
 */
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cli/options.h"

typedef int rule_fn(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen);

/* -s or -c, not both; client-only options refused with -s. */
static int check_role(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	char name[32];

	if (xp_given_has(g, "server") + xp_given_has(g, "client") + xp_given_has(g, "probe") > 1)
		return xp_cli_fail(err, errlen, "-s, -c and --probe exclude each other");
	if (o->role == XP_ROLE_NONE)
		return xp_cli_fail(err, errlen, "say -s to run a server, -c ADDR to run a client or --probe to see "
				   "what this host can do (see xdpperf --help)");
	if (o->role == XP_ROLE_SERVER && g->last[XP_G_CLIENT_ONLY])
		return xp_cli_fail(err, errlen, "%s is a client option",
				   xp_option_label(g->last[XP_G_CLIENT_ONLY], name, sizeof(name)));
	return 0;
}

/* --probe looks at an interface and runs no test: no test's options. */
static int check_probe(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	char name[32];

	if (o->role != XP_ROLE_PROBE)
		return 0;
	for (size_t i = 0; i < xp_noptions; i++) {
		const char *n = xp_options[i].name;
		if (!(g->seen >> i & 1) || (n && (!strcmp(n, "probe") || !strcmp(n, "dev") || !strcmp(n, "json") ||
		    !strcmp(n, "debug"))))
			continue;
		return xp_cli_fail(err, errlen, "--probe takes only --dev, -J and -d, not %s",
				   xp_option_label(&xp_options[i], name, sizeof(name)));
	}
	return 0;
}

/* A connection test either closes (-x) or holds (-k) its connections. */
static int check_test_kind(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->close_each && o->keepalive)
		return xp_cli_fail(err, errlen, "-x (close at once) and -k (keep open) exclude each other");
	return 0;
}

/* fireperf's flags select the socket engine unless an engine was named;
 * with an XDP connection engine option, that engine. */
static int resolve_engine(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (g->last[XP_G_SOCKET] && !o->engine_set)
		o->engine = g->last[XP_G_XDP_CONN] ? XP_ENGINE_XDP : XP_ENGINE_SOCKET;
	return 0;
}

/* The XDP connection engine and its options go together, and with -x or -k. */
static int check_xdp_conn_engine(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	char name[32];

	if (o->data_len && !o->close_each)
		return xp_cli_fail(err, errlen, o->keepalive
				   ? "--bytes closes each connection after its data: use -x, not -k"
				   : "--bytes is for connection tests: add -x (and --engine xdp)");
	if (o->engine == XP_ENGINE_XDP && !o->close_each && !o->keepalive)
		return xp_cli_fail(err, errlen,
				   "the XDP connection engine runs connection tests: add -x (rate) or -k (hold)");
	if (g->last[XP_G_XDP_CONN] && o->engine != XP_ENGINE_XDP)
		return xp_cli_fail(err, errlen, "%s is for the XDP connection engine (--engine xdp)",
				   xp_option_label(g->last[XP_G_XDP_CONN], name, sizeof(name)));
	if (o->engine == XP_ENGINE_XDP && (o->zero || o->threads))
		return xp_cli_fail(err, errlen, "%s is for the socket engine", o->zero ? "-z" : "--threads");
	return 0;
}

/* How the XDP connection engine may close (or hold) its connections. */
static int check_xdp_conn_close(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->syn_engine == XP_SYN_LIVE && o->keepalive)
		return xp_cli_fail(err, errlen,
				   "--syn-engine live: -k needs the held connections reset at the end, which only xsk does");
	if (o->fin && o->keepalive)
		return xp_cli_fail(err, errlen, "--fin closes connections; -k holds them");
	if (o->data_len && o->peer_kernel)
		return xp_cli_fail(err, errlen, "--bytes needs the server's XDP program to answer, not --peer kernel");
	if (o->data_len && o->compare)
		return xp_cli_fail(err, errlen, "--bytes has no socket-engine counterpart for --compare");
	return 0;
}

/* Socket-test flags need an engine that runs socket tests. */
static int check_socket_test(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	const struct xp_option *flag = g->last[XP_G_SOCKET];
	bool conn_test = o->close_each || o->keepalive;
	char name[32];

	/* --compare runs a stream test on the socket engine too, whatever --engine says. */
	if (flag && o->engine != XP_ENGINE_SOCKET && o->engine != XP_ENGINE_XDP && !(o->compare && !conn_test))
		return xp_cli_fail(err, errlen,
				   "%s is for the socket engine (--engine socket) or, with -x/-k, the XDP "
				   "connection engine (--engine xdp)", xp_option_label(flag, name, sizeof(name)));
	if (o->engine == XP_ENGINE_SOCKET && o->udp)
		return xp_cli_fail(err, errlen, "-u: the socket engine tests TCP only");
	if (!o->parallel)
		o->parallel = 1;
	return 0;
}

/* --burst shapes the frame engines' rate limit. */
static int check_frames(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	if (o->burst && o->rate.unit == XP_RATE_NONE)
		return xp_cli_fail(err, errlen, "--burst shapes a rate limit: give -b too");
	if (o->burst && o->engine == XP_ENGINE_SOCKET)
		return xp_cli_fail(err, errlen, "--burst is for the frame engines (live, xsk)");
	return 0;
}

/* The client's address, ports and report timing. */
static int check_client(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	struct xp_addr a;

	if (o->role != XP_ROLE_CLIENT)
		return 0;
	/* A name is resolved later, for the family -4/-6 asks for. */
	if (!xp_addr_parse(o->host, &a) && o->family && o->family != a.family)
		return xp_cli_fail(err, errlen, "%s is not an IPv%c address", o->host,
				   o->family == AF_INET ? '4' : '6');
	if (o->control_port >= o->port_lo && o->control_port <= o->port_hi)
		return xp_cli_fail(err, errlen, "port range %u:%u includes the control port %u", o->port_lo,
				   o->port_hi, o->control_port);
	if (o->interval > o->duration)
		o->interval = o->duration;
	return 0;
}

/* Server policy (issue 9): its options mean nothing to a client. */
static int check_server_policy(struct xp_opts *o, const struct xp_given *g, char *err, size_t errlen)
{
	static const char *const server_only[] = {
		"allow", "max-duration", "test-ports", "max-tests", "max-control-per-addr", "max-parallel",
		"max-parallel-total", "max-workers", "max-workers-total", "max-listen-ports", "allow-lo",
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
		check_probe,
		check_test_kind,
		resolve_engine,
		check_xdp_conn_engine,
		check_xdp_conn_close,
		check_socket_test,
		check_frames,
		check_client,
		check_server_policy,
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		if (rules[i](o, g, err, errlen))
			return 2;
	}
	return 0;
}
