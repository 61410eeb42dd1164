/* The option table: every option's names, --help text and value handler. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <sys/socket.h>

#include "bpf/client.h"
#include "proto/channel.h"
#include "cli/options.h"
#include "util/version.h"


/*
 * The engine names, for --engine and --syn-engine. The only place that maps
 * them, so that a shared table of engine names can replace it.
 */
int parse_engine(const char *s, enum xp_engine_id *id, char *err, size_t errlen)
{
	if (!xp_engine_by_name(s, id))
		return 0;
	/* The list of names in the message is the engine table's, so it cannot drift. */
	char list[128] = "";
	for (unsigned i = 0; i < XP_ENGINE_COUNT; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", i ? ", " : "",
			 xp_engine_name((enum xp_engine_id)i));
	return xp_cli_fail(err, errlen, "unknown engine '%s' (available: %s)", s, list);
}

/* ---- handlers: each converts one option's value, nothing more ---- */

/* A flag handler that sets a bool of struct xp_opts. */
#define FLAG(fn, field)                                                                \
	static int fn(struct xp_opts *o, const char *arg, char *err, size_t errlen) \
	{                                                                              \
		o->field = true;                                                       \
		return 0;                                                              \
	}

/* A handler for an integer in LO..HI, named WHAT in messages, stored as TYPE. */
#define UINT(fn, field, type, lo, hi, what)                                                \
	static int fn(struct xp_opts *o, const char *arg, char *err, size_t errlen)     \
	{                                                                                  \
		unsigned long ul;                                                          \
		if (parse_uint(arg, lo, hi, &ul, what, err, errlen))                       \
			return -1;                                                         \
		o->field = (type)ul;                                                       \
		return 0;                                                                  \
	}

FLAG(opt_udp, udp)
FLAG(opt_json, json)
FLAG(opt_json_stream, json_stream)
FLAG(opt_one_off, one_off)
FLAG(opt_close, close_each)
FLAG(opt_keepalive, keepalive)
FLAG(opt_zero, zero)
FLAG(opt_compare, compare)
FLAG(opt_fin, fin)

UINT(opt_control_port, control_port, unsigned short, 1, 65535, "control port")
UINT(opt_queues, queues, unsigned, 1, 64, "queue count")
UINT(opt_first_queue, first_queue, unsigned, 0, 63, "first queue")
UINT(opt_parallel, parallel, unsigned long, 1, 10000000, "parallel connection count (-P)")
UINT(opt_threads, threads, unsigned, 1, 256, "thread count")
UINT(opt_burst, burst, unsigned, 1, 1048576, "burst size")
UINT(opt_cps, cps, double, 1, 100000000, "connection rate (--cps)")
UINT(opt_bytes, data_len, unsigned, 1, XP_CC_DATA_MAX, "--bytes payload")

static int opt_server(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_SERVER;
	return 0;
}

static int opt_probe(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_PROBE;
	return 0;
}

static int opt_client(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_CLIENT;
	if (!*arg || strlen(arg) >= sizeof(o->host))
		return xp_cli_fail(err, errlen, "-c needs a server address");
	strcpy(o->host, arg);
	return 0;
}

static int opt_dev(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= sizeof(o->dev))
		return xp_cli_fail(err, errlen, "interface name '%s' is not valid", arg);
	strcpy(o->dev, arg);
	return 0;
}

static int opt_port(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_port_range(arg, &o->port_lo, &o->port_hi, err, errlen);
}

static int opt_cport(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_port_range(arg, &o->cport_lo, &o->cport_hi, err, errlen);
}

static int opt_time(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_duration(arg, &o->duration, err, errlen);
}

static int opt_interval(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_duration(arg, &o->interval, err, errlen))
		return -1;
	/* A bound on the value alone, so the value's parser checks it. */
	if (o->interval < 0.1)
		return xp_cli_fail(err, errlen, "interval %s is too short (minimum 0.1 s)", arg);
	return 0;
}

static int opt_length(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_frame_size(arg, &o->frame_size, err, errlen))
		return -1;
	o->frame_size_set = true;
	return 0;
}

static int opt_bitrate(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_rate(arg, &o->rate, err, errlen);
}

static int opt_ipv4(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->family = AF_INET;
	return 0;
}

static int opt_ipv6(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->family = AF_INET6;
	return 0;
}

static int opt_dst_mac(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_mac(arg, o->dst_mac, err, errlen))
		return -1;
	o->dst_mac_set = true;
	return 0;
}

static int opt_engine(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_engine(arg, &o->engine, err, errlen))
		return -1;
	o->engine_set = true;
	return 0;
}

static int opt_syn_engine(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	enum xp_engine_id k;

	if (parse_engine(arg, &k, err, errlen) || (k != XP_ENGINE_LIVE && k != XP_ENGINE_XSK))
		return xp_cli_fail(err, errlen, "unknown SYN engine '%s' (live: XDP live frames, xsk: AF_XDP)", arg);
	o->syn_engine = k;
	return 0;
}

static int opt_xdp_mode(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "auto"))
		o->xdp_mode = XP_XDP_AUTO;
	else if (!strcmp(arg, "native") || !strcmp(arg, "drv"))
		o->xdp_mode = XP_XDP_NATIVE;
	else if (!strcmp(arg, "skb") || !strcmp(arg, "generic"))
		o->xdp_mode = XP_XDP_SKB;
	else
		return xp_cli_fail(err, errlen, "unknown XDP mode '%s' (auto, native or skb)", arg);
	return 0;
}

static int opt_bind(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	int n = xp_parse_addr_range(arg, o->bind + o->nbind, XP_MAX_BIND_OPT - o->nbind, err, errlen);

	if (n < 0)
		return -1;
	o->nbind += (unsigned)n;
	return 0;
}

static int opt_peer(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	/* "xdp" is the default and leaves an earlier "kernel" as it was. */
	if (!strcmp(arg, "kernel"))
		o->peer_kernel = true;
	else if (strcmp(arg, "xdp"))
		return xp_cli_fail(err, errlen,
				   "unknown peer '%s' (xdp: the server's XDP program, kernel: its TCP stack)", arg);
	return 0;
}

/* --device-netns: issue 12's connection-test options start here. */
static int opt_device_netns(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= sizeof(o->device_netns) || strchr(arg, '/'))
		return xp_cli_fail(err, errlen, "namespace name '%s' is not valid (a name under /var/run/netns)", arg);
	strcpy(o->device_netns, arg);
	return 0;
}

static int opt_debug(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->debug++;
	return 0;
}

static int opt_help(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	xp_usage(stdout);
	return 1;
}

static int opt_version(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	xp_version_print(stdout);
	return 1;
}

/* ---- server policy and authentication (issue 9): kept together ---- */

FLAG(opt_allow_lo, allow_lo)
UINT(opt_max_tests, max_tests, unsigned, 1, 64, "--max-tests")
UINT(opt_max_control_per_addr, max_control_per_addr, unsigned, 1, 64, "--max-control-per-addr")
UINT(opt_max_parallel, max_parallel, unsigned long, 1, 10000000, "--max-parallel")
UINT(opt_max_parallel_total, max_parallel_total, unsigned long, 1, 10000000, "--max-parallel-total")
UINT(opt_max_workers, max_workers, unsigned, 0, 64, "--max-workers")
UINT(opt_max_workers_total, max_workers_total, unsigned, 0, 1024, "--max-workers-total")
UINT(opt_max_listen_ports, max_listen_ports, unsigned, 1, 65535, "--max-listen-ports")

static int opt_auth_key(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	/* Read (and its mode checked) when the role starts: a handler only converts. */
	if (!*arg)
		return xp_cli_fail(err, errlen, "--auth-key needs a file name");
	o->auth_key = arg;
	return 0;
}

static int opt_max_duration(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_duration(arg, &o->max_duration, err, errlen);
}

static int opt_test_ports(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_port_range(arg, &o->test_port_lo, &o->test_port_hi, err, errlen);
}

static int opt_allow(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (o->nallow >= XP_MAX_ALLOW)
		return xp_cli_fail(err, errlen, "at most %d --allow networks", XP_MAX_ALLOW);
	if (xp_parse_cidr(arg, &o->allow[o->nallow].net, &o->allow[o->nallow].plen, err, errlen))
		return -1;
	o->nallow++;
	return 0;
}

/* ---- the table, in --help's order ---- */

#define CLIENT XP_OPT_CLIENT_ONLY
#define SOCKET XP_OPT_SOCKET
#define XDPC   XP_OPT_XDP_CONN

const struct xp_option xp_options[] = {
	/* Common */
	{ "server", 's', NULL, XP_SEC_COMMON, 0, opt_server,
	  .help = "server role: answer tests, count with XDP" },
	{ "client", 'c', "ADDR", XP_SEC_COMMON, 0, opt_client,
	  .help = "client role: server address (IPv4, IPv6 or name)", .sample = "198.19.1.2" },
	{ "control-port", 0, "PORT", XP_SEC_COMMON, 0, opt_control_port,
	  .help = "control channel TCP port (default %u)",
	  .help_nums = { XP_CONTROL_PORT_DEFAULT }, .sample = "5400" },
	{ "dev", 'D', "IFNAME", XP_SEC_COMMON, 0, opt_dev,
	  .help = "interface to send on (client), count on (server)\n"
	          "or look at (--probe); default: the one the routing\n"
	          "table picks", .sample = "eth1" },
	{ "xdp-mode", 0, "MODE", XP_SEC_COMMON, 0, opt_xdp_mode,
	  .help = "auto|native|skb for the XDP program (default auto)", .sample = "native" },
	{ "port", 'p', "PORT[:PORT]", XP_SEC_COMMON, 0, opt_port,
	  .help = "destination port or range of the test traffic\n"
	          "(default %u:%u); the server counts these ports",
	  .help_nums = { XP_DEFAULT_PORT_LO, XP_DEFAULT_PORT_HI }, .sample = "7000:7003" },
	{ "debug", 'd', NULL, XP_SEC_COMMON, 0, opt_debug, .help = "more messages on stderr" },
	{ "help", 'h', NULL, XP_SEC_COMMON, 0, opt_help, .help = "this text" },
	{ "version", 'V', NULL, XP_SEC_COMMON, 0, opt_version, .help = "the version" },

	/* Client */
	{ NULL, '4', NULL, XP_SEC_CLIENT, 0, opt_ipv4, .help = "use IPv4 (default: from ADDR)" },
	{ NULL, '6', NULL, XP_SEC_CLIENT, 0, opt_ipv6, .help = "use IPv6 (default: from ADDR)" },
	{ "time", 't', "SECS", XP_SEC_CLIENT, 0, opt_time, .help = "test duration (default 10)", .sample = "5" },
	{ "interval", 'i', "SECS", XP_SEC_CLIENT, 0, opt_interval, .help = "report interval (default 1)", .sample = "0.5" },
	{ "length", 'l', "BYTES", XP_SEC_CLIENT, CLIENT, opt_length,
	  .help = "Ethernet frame size incl. FCS, 64..MTU+18 (default 64)", .sample = "1518" },
	{ "bitrate", 'b', "RATE", XP_SEC_CLIENT, CLIENT, opt_bitrate,
	  .help = "rate limit: 100kpps, 1.5Mpps (frames/s) or 1G, 800M\n"
	          "(bits/s on the wire, L1); add -l2 (1G-l2) for L2 bits/s", .sample = "1.5Mpps" },
	{ "burst", 0, "N", XP_SEC_CLIENT, CLIENT, opt_burst,
	  .help = "with -b: N frames back to back, then a pause, so\n"
	          "the average is the rate (default: spread evenly)", .sample = "32" },
	{ "udp", 'u', NULL, XP_SEC_CLIENT, 0, opt_udp, .help = "UDP frames instead of TCP data segments" },
	{ "cport", 0, "PORT[:PORT]", XP_SEC_CLIENT, CLIENT, opt_cport,
	  .help = "source port range (default %u:%u)",
	  .help_nums = { XP_DEFAULT_CPORT_LO, XP_DEFAULT_CPORT_HI }, .sample = "2000:2999" },
	{ "queues", 0, "N", XP_SEC_CLIENT, 0, opt_queues,
	  .help = "AF_XDP sockets / sending threads, one per queue\n"
	          "(default: all the interface's TX queues)", .sample = "2" },
	{ "first-queue", 0, "N", XP_SEC_CLIENT, CLIENT, opt_first_queue,
	  .help = "use queues N.. (so several clients can share a NIC)", .sample = "1" },
	{ "dst-mac", 0, "MAC", XP_SEC_CLIENT, 0, opt_dst_mac,
	  .help = "next-hop MAC (default: from the neighbour table)", .sample = "02:00:00:00:00:01" },
	{ "engine", 0, "NAME", XP_SEC_CLIENT, 0, opt_engine,
	  .help = "auto: live where the kernel has it, else xsk (default)\n"
	          "live: XDP live frames (BPF_PROG_RUN), fastest\n"
	          "xsk: AF_XDP raw frames\n"
	          "socket: the kernel's TCP stack (-P/-x/-k tests)\n"
	          "none: send nothing, only report what the server\n"
	          "receives (for an external generator, e.g. trafgen)", .sample = "live" },
	{ "json", 'J', NULL, XP_SEC_CLIENT, 0, opt_json, .help = "one JSON document at the end" },
	{ "json-stream", 0, NULL, XP_SEC_CLIENT, 0, opt_json_stream,
	  .help = "one JSON object per line: start, interval..., end" },

	/* Socket tests */
	{ "parallel", 'P', "N", XP_SEC_SOCKET, SOCKET, opt_parallel,
	  .help = "parallel connections (server: connections to expect)", .sample = "64" },
	{ "close", 'x', NULL, XP_SEC_SOCKET, SOCKET, opt_close,
	  .help = "close each connection once established: connections/s" },
	{ "keepalive", 'k', NULL, XP_SEC_SOCKET, SOCKET, opt_keepalive,
	  .help = "open -P connections and hold them with keepalives,\n"
	          "sending no data: a connection-tracking table test\n"
	          "(without -x/-k: stream data, a throughput test)" },
	{ "zero", 'z', NULL, XP_SEC_SOCKET, SOCKET, opt_zero, .help = "send zeroes instead of random data" },
	{ "threads", 0, "N", XP_SEC_SOCKET, SOCKET, opt_threads,
	  .help = "event-loop threads (default: one per CPU)", .sample = "3" },
	{ "bind", 0, "ADDR[-ADDR]", XP_SEC_SOCKET, SOCKET | CLIENT, opt_bind,
	  .help = "source addresses to spread connections over", .sample = "198.18.1.10-198.18.1.25" },
	{ "compare", 0, NULL, XP_SEC_SOCKET, CLIENT, opt_compare,
	  .help = "the same test with the socket engine, then with an\n"
	          "XDP engine (stream: xsk; -x: xdp), and a table of ratios" },

	/* XDP connection engine */
	{ "cps", 0, "N", XP_SEC_XDP_CONN, XDPC, opt_cps,
	  .help = "SYNs per second (default: as fast as possible)", .sample = "50000" },
	{ "fin", 0, NULL, XP_SEC_XDP_CONN, XDPC, opt_fin, .help = "close with FIN/FIN-ACK/ACK instead of a reset" },
	{ "bytes", 0, "N", XP_SEC_XDP_CONN, XDPC | CLIENT, opt_bytes,
	  .help = "with -x: each connection carries N bytes (1..%u) in\n"
	          "the handshake's ACK, then closes with FINs",
	  .help_nums = { XP_CC_DATA_MAX }, .sample = "1000" },
	{ "peer", 0, "kernel", XP_SEC_XDP_CONN, XDPC, opt_peer,
	  .help = "the server's TCP stack answers (xdpperf -s opens\n"
	          "listeners), not its XDP program; with no xdpperf\n"
	          "there, any TCP server on -p (the client's counters)", .sample = "kernel" },
	{ "syn-engine", 0, "NAME", XP_SEC_XDP_CONN, XDPC | CLIENT, opt_syn_engine,
	  .help = "what sends the SYNs: live (XDP live frames; the\n"
	          "default for -x, falling back to xsk where the\n"
	          "kernel lacks it) or xsk (AF_XDP; always for -k)", .sample = "xsk" },
	/* Issue 12 (connection tests): its options, one block. */
	{ "device-netns", 0, "NAME", XP_SEC_XDP_CONN, XDPC | CLIENT, opt_device_netns,
	  .help = "the device under test is namespace NAME on this\n"
	          "host (a lab): its conntrack table and drops tell\n"
	          "why SYNs went unanswered", .sample = "xp-router" },

	/* Server */
	{ "one-off", '1', NULL, XP_SEC_SERVER, 0, opt_one_off, .help = "serve one test, then exit" },

	/* Server policy and authentication (issue 9): kept together */
	{ "auth-key", 0, "FILE", XP_SEC_SERVER, 0, opt_auth_key,
	  .help = "shared secret (both ends): the client proves it knows\n"
	          "it (HMAC over a fresh nonce); mode 600 or refused", .sample = "/etc/xdpperf.key" },
	{ "allow", 0, "CIDR", XP_SEC_SERVER, 0, opt_allow,
	  .help = "serve only clients from this network (repeatable;\n"
	          "default: any)", .sample = "198.18.0.0/15" },
	{ "max-duration", 0, "SECS", XP_SEC_SERVER, 0, opt_max_duration,
	  .help = "longest test a client may ask for (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_DURATION }, .sample = "60" },
	{ "test-ports", 0, "LO:HI", XP_SEC_SERVER, 0, opt_test_ports,
	  .help = "ports tests may use (default %u:%u); never the\n"
	          "ephemeral range nor a port another program uses",
	  .help_nums = { XP_DEFAULT_TEST_PORT_LO, XP_DEFAULT_TEST_PORT_HI }, .sample = "60000:65000" },
	{ "max-tests", 0, "N", XP_SEC_SERVER, 0, opt_max_tests,
	  .help = "tests running at once (default %u)", .help_nums = { XP_DEFAULT_MAX_TESTS }, .sample = "2" },
	{ "max-control-per-addr", 0, "N", XP_SEC_SERVER, 0, opt_max_control_per_addr,
	  .help = "control connections from one address (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_CONTROL_PER_ADDR }, .sample = "2" },
	{ "max-parallel", 0, "N", XP_SEC_SERVER, 0, opt_max_parallel,
	  .help = "connections one socket test may ask the server to\n"
	          "accept (default %u)", .help_nums = { XP_DEFAULT_MAX_PARALLEL }, .sample = "1000" },
	{ "max-parallel-total", 0, "N", XP_SEC_SERVER, 0, opt_max_parallel_total,
	  .help = "the same over all tests at once (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_PARALLEL_TOTAL }, .sample = "5000" },
	{ "max-workers", 0, "N", XP_SEC_SERVER, 0, opt_max_workers,
	  .help = "worker processes one test may fork past the\n"
	          "open-file limit (default %u)", .help_nums = { XP_DEFAULT_MAX_WORKERS }, .sample = "2" },
	{ "max-workers-total", 0, "N", XP_SEC_SERVER, 0, opt_max_workers_total,
	  .help = "the same over all tests at once (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_WORKERS_TOTAL }, .sample = "4" },
	{ "max-listen-ports", 0, "N", XP_SEC_SERVER, 0, opt_max_listen_ports,
	  .help = "ports one test may have the server listen on\n"
	          "(default %u)", .help_nums = { XP_DEFAULT_MAX_LISTEN_PORTS }, .sample = "16" },
	{ "allow-lo", 0, NULL, XP_SEC_SERVER, 0, opt_allow_lo,
	  .help = "allow tests that count on the loopback device\n"
	          "(refused by default: the host's own traffic)" },

	/* Host probe */
	{ "probe", 0, NULL, XP_SEC_PROBE, 0, opt_probe,
	  .help = "what this kernel and the --dev interface (default:\n"
	          "every interface that is up) support, each with its\n"
	          "reason, and the engine auto picks; -J for JSON" },
};
const size_t xp_noptions = sizeof(xp_options) / sizeof(xp_options[0]);
_Static_assert(sizeof(xp_options) / sizeof(xp_options[0]) <= XP_OPTIONS_MAX, "raise XP_OPTIONS_MAX");

const struct xp_option *xp_option_find(const char *name)
{
	for (size_t i = 0; i < xp_noptions; i++) {
		if (xp_options[i].name && !strcmp(xp_options[i].name, name))
			return &xp_options[i];
	}
	return NULL;
}

bool xp_given_has(const struct xp_given *g, const char *name)
{
	const struct xp_option *op = xp_option_find(name);

	return op && (g->seen >> (op - xp_options) & 1);
}

const char *xp_option_label(const struct xp_option *op, char *buf, size_t len)
{
	if (op->letter)
		snprintf(buf, len, "-%c", op->letter);
	else
		snprintf(buf, len, "--%s", op->name);
	return buf;
}
