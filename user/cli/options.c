/* The option table: every option's names, --help text and value handler. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <sys/socket.h>

#include "bpf/xdp_connect.h"
#include "proto/channel.h"
#include "cli/handlers.h"
#include "cli/options.h"
#include "cli/otg_opts.h"
#include "connsearch/search.h"
#include "engine/engine.h"
#include "meas/figures.h"
#include "util/version.h"

/* ---- the table, in --help's order ---- */

#define SOCKET XP_OPT_SOCKET
#define XDPC   XP_OPT_XDP_CONN
#define RATE   XP_OPT_RATE
#define RFC    XP_OPT_RFC2544
/* The suite sends streams of frames of its own: the frame engines. */
#define RFC_OPT .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM, .needs = XP_NEEDS(XP_CAP_RFC2544), \
	.instead_kind = "the RFC 2544 suite sends streams of frames, not connections"
/* The searches run the XDP connection engine's -x or -k trials. */
#define SRCH   XP_OPT_SEARCH
#define SEARCH_OPT .roles = XP_IN_CLIENT, .kinds = XP_K_CONN, .needs = XP_NEEDS(XP_CAP_SEARCH), \
	.instead_kind = "a search runs -x (rate) or -k (capacity) trials"

/* Flows: streams of frames with headers of their own, from the engines that send them. */
#define FLOWS_OPT .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM, .needs = XP_NEEDS(XP_CAP_FLOWS), \
	.instead_kind = "flows are streams of frames, not connections"

/* Where an option applies: roles, client test kinds, client engines. */
#define EVERYWHERE  .roles = XP_IN_BOTH, .kinds = XP_K_ANY, .engines = XP_E_ANY
#define ANY_ROLE    .roles = XP_IN_BOTH | XP_IN_PROBE | XP_IN_OTG | XP_IN_CONFIG, .kinds = XP_K_ANY, .engines = XP_E_ANY
#define CLIENT_ANY  .roles = XP_IN_CLIENT, .kinds = XP_K_ANY, .engines = XP_E_ANY
#define SERVER_ONLY .roles = XP_IN_SERVER, .kinds = XP_K_ANY, .engines = XP_E_ANY
/* The OTG front ends (issue 27): --otg's API, --config's one run. */
#define OTG_OPT     .roles = XP_IN_OTG, .kinds = XP_K_ANY, .engines = XP_E_ANY
#define CONFIG_OPT  .roles = XP_IN_CONFIG, .kinds = XP_K_ANY, .engines = XP_E_ANY
/* What the controller needs to reach its agents: their control port and key. */
#define TO_AGENTS   (XP_IN_OTG | XP_IN_CONFIG)

const struct xp_option xp_options[] = {
	/* Common */
	{ "server", 's', NULL, XP_SEC_COMMON, 0, opt_server, EVERYWHERE,
	  .help = "server role: answer tests, count with XDP" },
	{ "client", 'c', "ADDR", XP_SEC_COMMON, 0, opt_client, EVERYWHERE,
	  .help = "client role: server address (IPv4, IPv6 or name)", .sample = "198.19.1.2" },
	{ "control-port", 0, "PORT", XP_SEC_COMMON, 0, NULL, .roles = XP_IN_BOTH | TO_AGENTS, .kinds = XP_K_ANY,
	  .engines = XP_E_ANY,
	  XP_NUM_DEF(spec.control_port, 1, 65535, "control port", XP_CONTROL_PORT_DEFAULT),
	  .help = "control channel TCP port (default %u)",
	  .help_nums = { XP_CONTROL_PORT_DEFAULT }, .sample = "5400" },
	{ "dev", 'D', "IFNAME", XP_SEC_COMMON, 0, opt_dev, .roles = XP_IN_BOTH | XP_IN_PROBE, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_DEV),
	  .help = "interface to send on (client), count on (server)\n"
	          "or look at (--probe); default: the one the routing\n"
	          "table picks", .sample = "eth1" },
	{ "xdp-mode", 0, "MODE", XP_SEC_COMMON, 0, opt_xdp_mode, .roles = XP_IN_BOTH, .kinds = XP_K_CONN,
	  .needs = XP_NEEDS(XP_CAP_XDP_MODE),
	  .help = "auto|native|skb for the XDP program: the server's, or\n"
	          "the XDP connection engine's on the client (default auto)", .sample = "native" },
	{ "port", 'p', "PORT[:PORT]", XP_SEC_COMMON, 0, opt_port, EVERYWHERE,
	  .help = "destination port or range of the test traffic;\n"
	          "without it the server hands out a free range of 16\n"
	          "(%u:%u when free); the server counts these ports\n"
	          "(server: the ports of -P's standing listeners)",
	  .help_nums = { XP_DEFAULT_PORT_LO, XP_DEFAULT_PORT_HI }, .sample = "7000:7003" },
	{ "metrics", 0, "[ADDR]:PORT", XP_SEC_COMMON, 0, opt_metrics, .roles = XP_IN_BOTH | TO_AGENTS,
	  .kinds = XP_K_ANY, .engines = XP_E_ANY,
	  .help = "serve the last tests' figures for Prometheus on\n"
	          "http://ADDR:PORT/metrics (read-only; ADDR default\n"
	          "127.0.0.1; --otg/--config: per flow); docs/metrics.md", .sample = "127.0.0.1:9464" },
	{ "debug", 'd', NULL, XP_SEC_COMMON, 0, opt_debug, ANY_ROLE,
	  .help = "more messages on stderr" },
	{ "help", 'h', NULL, XP_SEC_COMMON, 0, opt_help, ANY_ROLE,
	  .help = "this text" },
	{ "version", 'V', NULL, XP_SEC_COMMON, 0, opt_version, ANY_ROLE,
	  .help = "the version" },

	/* Client */
	{ NULL, '4', NULL, XP_SEC_CLIENT, 0, opt_ipv4, CLIENT_ANY, .help = "use IPv4 (default: from ADDR)" },
	{ NULL, '6', NULL, XP_SEC_CLIENT, 0, opt_ipv6, CLIENT_ANY, .help = "use IPv6 (default: from ADDR)" },
	{ "time", 't', "SECS", XP_SEC_CLIENT, 0, opt_time, CLIENT_ANY, .help = "test duration (default 10)", .sample = "5" },
	{ "interval", 'i', "SECS", XP_SEC_CLIENT, 0, opt_interval, CLIENT_ANY,
	  .help = "report interval (default 1); with stamps each line\n"
	          "is printed 1 s after its interval ends (the grace\n"
	          "for late frames; at most 2 intervals)", .sample = "0.5" },
	{ "length", 'l', "BYTES", XP_SEC_CLIENT, 0, opt_length, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_FRAME_SIZE),
	  .help = "Ethernet frame size incl. FCS, 64..MTU+18 (default:\n"
	          "the smallest that carries a stamp: 64, IPv6 UDP 74,\n"
	          "IPv6 TCP 86); or a mix sent interleaved frame by\n"
	          "frame: imix (64:7,570:4,1518:1) or SIZE:WEIGHT,...", .sample = "1518" },
	{ "clock", 0, "CLOCK", XP_SEC_CLIENT, 0, opt_clock, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_STAMPS),
	  .instead_kind = "connection tests' frames carry no stamp",
	  .help = "the stamps' clock: mono (default; one-way latency\n"
	          "only when the server is this host) or tai (CLOCK_TAI:\n"
	          "you say both hosts are PTP-synchronised)", .sample = "tai" },
	{ "rtt", 0, NULL, XP_SEC_CLIENT, 0, opt_rtt, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_LATENCY),
	  .instead_kind = "connection tests' frames carry no stamp",
	  .help = "round-trip latency, for hosts whose clocks differ:\n"
	          "the server sends every stamped frame back and this\n"
	          "host times it (the path carries the test both ways)" },
	{ "no-stamps", 0, NULL, XP_SEC_CLIENT, 0, opt_no_stamps, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_STAMPS),
	  .instead_kind = "connection tests' frames carry no stamp",
	  .help = "frames without a stamp, and no per-frame accounting\n"
	          "at the server: loss by count only, no latency,\n"
	          "reordering, duplicates or per-interval loss (what\n"
	          "the stamps cost: scripts/bench.sh stamp)" },
	{ "rx-timestamp", 0, "MODE", XP_SEC_CLIENT, 0, opt_rx_timestamp, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_LATENCY),
	  .instead_kind = "connection tests' frames carry no stamp",
	  .help = "what times arrivals at the server: sw (default, its\n"
	          "kernel clock at XDP), hw (the NIC's receive time, or\n"
	          "refuse; frames without one are counted, not timed) or\n"
	          "auto (the NIC's where it has one, else sw, said);\n"
	          "hw and auto need --clock tai (a PTP-disciplined NIC)", .sample = "auto" },
	{ "bitrate", 'b', "RATE", XP_SEC_CLIENT, RATE, opt_bitrate, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_RATE),
	  .help = "offered load: 100kpps, 1.5Mpps (frames/s) or 1G, 800M\n"
	          "(bits/s on the wire, L1); add -l2 (1G-l2) for L2 bits/s", .sample = "1.5Mpps" },
	{ "burst", 0, "N", XP_SEC_CLIENT, RATE, NULL, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  XP_NUM(spec.burst, 1, 1048576, "burst size"),
	  .needs = XP_NEEDS(XP_CAP_BURST),
	  .help = "with -b (or --cps): N frames back to back, then a\n"
	          "pause, so the average is the rate (default: spread evenly)", .sample = "32" },
	{ "udp", 'u', NULL, XP_SEC_CLIENT, 0, opt_udp, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_UDP), /* none: the server counts an outside generator's UDP */
	  .help = "UDP frames instead of TCP data segments (for stateful\n"
	          "firewalls: TCP frames belong to no opened connection)" },
	{ "cport", 0, "PORT[:PORT]", XP_SEC_CLIENT, 0, opt_cport, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_SPORTS),
	  .help = "source port range (default %u:%u)",
	  .help_nums = { XP_DEFAULT_CPORT_LO, XP_DEFAULT_CPORT_HI }, .sample = "2000:2999" },
	{ "queues", 0, "N", XP_SEC_CLIENT, 0, NULL, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  XP_NUM(spec.queues, 1, 64, "queue count"),
	  .needs = XP_NEEDS(XP_CAP_QUEUES),
	  .help = "AF_XDP sockets / sending threads, one per queue\n"
	          "(default: all the interface's TX queues)", .sample = "2" },
	{ "first-queue", 0, "N", XP_SEC_CLIENT, 0, NULL, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  XP_NUM(spec.first_queue, 0, 63, "first queue"),
	  .needs = XP_NEEDS(XP_CAP_QUEUES),
	  .help = "use queues N.. (so several clients can share a NIC)", .sample = "1" },
	{ "dst-mac", 0, "MAC", XP_SEC_CLIENT, 0, opt_dst_mac, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_ETH),
	  .help = "next-hop MAC (default: from the neighbour table)", .sample = "02:00:00:00:00:01" },
	/* Issue 26: flows, each with headers of its own (docs/flows.md) */
	{ "flows", 0, "FILE", XP_SEC_CLIENT, 0, opt_flows, FLOWS_OPT,
	  .help = "send the flows of an Open Traffic Generator config\n"
	          "(JSON, models v1.61.0): up to 256, each with its own\n"
	          "headers, size, rate, length and stamps (docs/flows.md)",
	  .sample = "docs/examples/flows/vlan_pair.json" },
	{ "vlan", 0, "VID[,VID]", XP_SEC_CLIENT, 0, opt_vlan, FLOWS_OPT,
	  .help = "one flow in a VLAN: an 802.1Q tag, or two for QinQ\n"
	          "(outer 802.1ad S-tag, inner 802.1Q C-tag); 0..4094", .sample = "10,100" },
	{ "dscp", 0, "N", XP_SEC_CLIENT, 0, opt_dscp, FLOWS_OPT,
	  .help = "one flow's DSCP, 0..63 (46: EF)", .sample = "46" },
	{ "ttl", 0, "N", XP_SEC_CLIENT, 0, opt_ttl, FLOWS_OPT,
	  .help = "one flow's TTL or IPv6 hop limit, 1..255 (default 64)", .sample = "8" },
	{ "src", 0, "ADDR[-ADDR]", XP_SEC_CLIENT, 0, opt_src, FLOWS_OPT,
	  .help = "one flow's source address, or a range counted up\n"
	          "frame by frame (default: the route's source)", .sample = "198.19.1.9" },
	{ "dst", 0, "ADDR[-ADDR]", XP_SEC_CLIENT, 0, opt_dst, FLOWS_OPT,
	  .help = "one flow's destination address, or a range counted\n"
	          "up frame by frame (default: -c's address)", .sample = "198.19.0.1-198.19.3.232" },
	{ "flow-top", 0, "N", XP_SEC_CLIENT, 0, NULL, FLOWS_OPT,
	  XP_NUM_DEF(spec.flow_top, 1, XP_SPEC_MAX_STREAMS, "flow table rows", XP_FLOW_TOP_DEFAULT),
	  .help = "rows of the per-flow table: the flows with the most\n"
	          "loss (default %u; -J has every flow)", .help_nums = { XP_FLOW_TOP_DEFAULT }, .sample = "20" },
	/* Not the suite's alone: a flow file's percentage rates are shares of it (cli/validate.c, check_line_rate). */
	{ "line-rate", 0, "RATE", XP_SEC_CLIENT, 0, opt_line_rate,
	  .roles = XP_IN_CLIENT | TO_AGENTS, .kinds = XP_K_STREAM, .needs = XP_NEEDS(XP_CAP_FLOWS),
	  .instead_kind = "flows are streams of frames, not connections",
	  .help = "the link's L1 bit rate (10G): a flow file's rates in\n"
	          "percent are of it; with --rfc2544 the top of the\n"
	          "searches and the percent of it in the tables\n"
	          "(default: the sender's maximum); --otg/--config:\n"
	          "each port's, a flow above it refused", .sample = "10G" },
	{ "engine", 0, "NAME", XP_SEC_CLIENT, 0, opt_engine, .roles = XP_IN_BOTH, .kinds = XP_K_ANY,
	  .engines = XP_E_ANY,
	  .help = "auto: live where the kernel and the device take it,\n"
	          "else xsk (default)\n"
	          "live: XDP live frames (BPF_PROG_RUN), fastest\n"
	          "xsk: AF_XDP raw frames\n"
	          "xdp: the XDP connection engine (-x/-k, below)\n"
	          "socket: the kernel's TCP stack (-P/-x/-k tests)\n"
	          "none: send nothing, only report what the server\n"
	          "receives (for an external generator, e.g. trafgen)\n"
	          "(server: socket opens standing listeners, like -P)", .sample = "live" },
	{ "json", 'J', NULL, XP_SEC_CLIENT, 0, opt_json, .roles = XP_IN_CLIENT | XP_IN_PROBE | XP_IN_CONFIG, .kinds = XP_K_ANY,
	  .engines = XP_E_ANY,
	  .help = "one JSON document at the end (errors too: {\"error\": ...})" },
	{ "json-stream", 0, NULL, XP_SEC_CLIENT, 0, opt_json_stream, CLIENT_ANY,
	  .help = "one JSON object per line: start, interval..., end" },
	{ "max-loss", 0, "PCT", XP_SEC_CLIENT, 0, opt_max_loss, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_LOSS),
	  .help = "exit %u if more than PCT percent of the frames were\n"
	          "lost (of the SYNs, for the XDP connection engine)",
	  .help_nums = { XP_EXIT_LOSS }, .sample = "0.1" },
	{ "stall", 0, "PCT", XP_SEC_CLIENT, 0, opt_stall, .roles = XP_IN_CLIENT,
	  .kinds = XP_K_STREAM | XP_K(XP_KIND_CONNECT), .needs = XP_NEEDS(XP_CAP_STALL),
	  .instead_kind = "a hold test opens -P connections once: its rate falls by design",
	  .help = "exit %u if the test stalled: an interval whose\n"
	          "connections (frames received) fell below PCT percent\n"
	          "of the running peak (default %u, always reported;\n"
	          "--max-loss also fails a stalled test)",
	  .help_nums = { XP_EXIT_LOSS, (unsigned)XP_STALL_DEFAULT_PCT }, .sample = "10" },
	{ "require-rate", 0, NULL, XP_SEC_CLIENT, 0, opt_require_rate, .roles = XP_IN_CLIENT,
	  .kinds = XP_K_STREAM | XP_K(XP_KIND_CONNECT), .needs = XP_NEEDS(XP_CAP_RATE_CHECK),
	  .instead_kind = "a hold test sends -P SYNs, not a rate",
	  .help = "exit %u if the offered load fell more than %u percent\n"
	          "short of the target (-b, or --cps)",
	  .help_nums = { XP_EXIT_SHORT, (unsigned)XP_RATE_TOLERANCE_PCT } },

	/* Socket tests */
	{ "parallel", 'P', "N", XP_SEC_SOCKET, SOCKET, NULL, .roles = XP_IN_BOTH, .kinds = XP_K_ANY,
	  XP_NUM(spec.parallel, 1, 10000000, "parallel connection count (-P)"),
	  .needs = XP_NEEDS(XP_CAP_CONNS),
	  .help = "parallel connections (XDP connection engine: at most\n"
	          "N handshakes in flight with -x, default %u; server:\n"
	          "connections to expect)", .help_nums = { XP_DEFAULT_CONN_WINDOW }, .sample = "64" },
	{ "close", 'x', NULL, XP_SEC_SOCKET, SOCKET, opt_close, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_CONNS),
	  .help = "close each connection once established: connections/s" },
	{ "keepalive", 'k', NULL, XP_SEC_SOCKET, SOCKET, opt_keepalive, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_CONNS),
	  .help = "open -P connections and hold them with keepalives,\n"
	          "sending no data: a connection-tracking table test\n"
	          "(without -x/-k: stream data, a throughput test)" },
	{ "zero", 'z', NULL, XP_SEC_SOCKET, SOCKET, opt_zero, .roles = XP_IN_CLIENT, .kinds = XP_K_STREAM,
	  .needs = XP_NEEDS(XP_CAP_PAYLOAD), .instead_kind = "only socket streams send data",
	  .help = "send zeroes instead of random data" },
	{ "threads", 0, "N", XP_SEC_SOCKET, SOCKET, NULL, .roles = XP_IN_BOTH, .kinds = XP_K_ANY,
	  XP_NUM(spec.threads, 1, 256, "thread count"),
	  .needs = XP_NEEDS(XP_CAP_THREADS),
	  .help = "event-loop threads (default: one per CPU; -x: one per connection, up to 32 per CPU)", .sample = "3" },
	{ "bind", 0, "ADDR[-ADDR]", XP_SEC_SOCKET, SOCKET, opt_bind, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_BIND),
	  .help = "source addresses to spread connections over (each\n"
	          "must be an address of this host)", .sample = "198.18.1.10-198.18.1.25" },
	{ "compare", 0, NULL, XP_SEC_SOCKET, 0, opt_compare, .roles = XP_IN_CLIENT, .kinds = XP_K_ANY,
	  .needs = XP_NEEDS(XP_CAP_COMPARE),
	  .help = "the same test with the socket engine, then with an\n"
	          "XDP engine (stream: xsk, or --engine live; -x/-k:\n"
	          "xdp), and a table of ratios" },

	/* XDP connection engine */
	{ "cps", 0, "N", XP_SEC_XDP_CONN, XDPC | RATE, NULL, .roles = XP_IN_CLIENT, .kinds = XP_K_CONN,
	  XP_NUM(spec.cps, 1, 100000000, "connection rate (--cps)"),
	  .needs = XP_NEEDS(XP_CAP_CPS),
	  .help = "SYNs per second (default: as fast as possible)", .sample = "50000" },
	{ "fin", 0, NULL, XP_SEC_XDP_CONN, XDPC, opt_fin, .roles = XP_IN_CLIENT, .kinds = XP_K(XP_KIND_CONNECT),
	  .needs = XP_NEEDS(XP_CAP_HANDSHAKES), .instead_kind = "-k holds its connections and resets them at the end", .help = "close with FIN/FIN-ACK/ACK instead of a reset" },
	{ "bytes", 0, "N", XP_SEC_XDP_CONN, XDPC, NULL, .roles = XP_IN_CLIENT, .kinds = XP_K(XP_KIND_CONNECT),
	  XP_NUM(spec.data_len, 1, XP_CC_DATA_MAX, "--bytes payload"),
	  .needs = XP_NEEDS(XP_CAP_HANDSHAKES), .instead_kind = "each connection closes after its data",
	  .help = "with -x: each connection carries N bytes (1..%u) in\n"
	          "the handshake's ACK, then closes with FINs",
	  .help_nums = { XP_CC_DATA_MAX }, .sample = "1000" },
	{ "peer", 0, "kernel", XP_SEC_XDP_CONN, XDPC, opt_peer, .roles = XP_IN_CLIENT, .kinds = XP_K_CONN,
	  .needs = XP_NEEDS(XP_CAP_HANDSHAKES),
	  .help = "the server's TCP stack answers (xdpperf -s opens\n"
	          "listeners), not its XDP program; with no xdpperf\n"
	          "there, any TCP server on -p (the client's counters)", .sample = "kernel" },
	{ "syn-engine", 0, "NAME", XP_SEC_XDP_CONN, XDPC, opt_syn_engine, .roles = XP_IN_CLIENT, .kinds = XP_K_CONN,
	  .needs = XP_NEEDS(XP_CAP_HANDSHAKES),
	  .help = "what sends the SYNs: live (XDP live frames; the\n"
	          "default, falling back to xsk where the kernel\n"
	          "lacks it) or xsk (AF_XDP)", .sample = "xsk" },
	/* Issue 12 (connection tests): its options, one block. */
	{ "syn-retries", 0, "N", XP_SEC_XDP_CONN, XDPC, NULL, .roles = XP_IN_CLIENT, .kinds = XP_K_CONN,
	  XP_NUM_DEF(spec.syn_retries, 0, XP_MAX_SYN_RETRIES, "--syn-retries", XP_DEFAULT_SYN_RETRIES),
	  .needs = XP_NEEDS(XP_CAP_SYN_RETRIES),
	  .help = "send an unanswered SYN (and --fin's FIN) again after\n"
	          "1 s, 2 s, 4 s...: N times (0..%u, default %u, as\n"
	          "Linux), then count it as timed out",
	  .help_nums = { XP_MAX_SYN_RETRIES, XP_DEFAULT_SYN_RETRIES }, .sample = "3" },
	{ "keepalive-interval", 0, "SECS", XP_SEC_XDP_CONN, XDPC, opt_keepalive_interval, .roles = XP_IN_CLIENT,
	  .kinds = XP_K(XP_KIND_HOLD), .needs = XP_NEEDS(XP_CAP_KEEPALIVES), .instead_kind = "only -k holds connections open",
	  .help = "with -k: a TCP keepalive on every held connection\n"
	          "every SECS seconds, so that a firewall's idle\n"
	          "timeout keeps them (default: none)", .sample = "5" },
	{ "device-netns", 0, "NAME", XP_SEC_XDP_CONN, XDPC, opt_device_netns, .roles = XP_IN_CLIENT, .kinds = XP_K_CONN,
	  .needs = XP_NEEDS(XP_CAP_HANDSHAKES),
	  .help = "the device under test is namespace NAME on this\n"
	          "host (a lab): its conntrack table and drops tell\n"
	          "why SYNs went unanswered", .sample = "xp-router" },

	/* Issue 11: the RFC 2544 suite, one block. */
	{ "rfc2544", 0, NULL, XP_SEC_RFC2544, 0, opt_rfc2544, RFC_OPT,
	  .help = "the RFC 2544 benchmark instead of one test: per frame\n"
	          "size, the tests of --tests as series of trials, then\n"
	          "tables (-J: every trial); picks rates and sizes itself" },
	{ "sizes", 0, "LIST", XP_SEC_RFC2544, RFC, opt_sizes, RFC_OPT,
	  .help = "frame sizes, e.g. 64,512,1518 (default RFC 2544's\n"
	          "64..1518; with IPv6, RFC 5180's 78..1518); imix in\n"
	          "the list is IMIX 7:4:1 of 64/570/1518 bytes, and a\n"
	          "list of SIZE:WEIGHT pairs (64:7,570:4,1518:1) is one\n"
	          "mix: each trial sends it interleaved frame by frame", .sample = "64,1518" },
	{ "tests", 0, "LIST", XP_SEC_RFC2544, RFC, opt_tests, RFC_OPT,
	  .help = "throughput,latency,loss,b2b or all (default all)", .sample = "throughput,loss" },
	{ "trial", 0, "SECS", XP_SEC_RFC2544, RFC, opt_trial, RFC_OPT,
	  .help = "trial length (default %u, RFC 2544's; shorter for a\n"
	          "quick look)", .help_nums = { 60 }, .sample = "2" },
	{ "loss-tolerance", 0, "PCT", XP_SEC_RFC2544, RFC, opt_loss_tolerance, RFC_OPT,
	  .help = "loss a trial may have for the PDR beside the\n"
	          "zero-loss NDR (default 0.5)", .sample = "0.1" },
	{ "confirm-loss", 0, "N", XP_SEC_RFC2544, RFC, NULL, RFC_OPT,
	  XP_NUM_DEF(rfc.confirm, 0, 9, "--confirm-loss count", 1), /* a losing throughput trial runs once more (rfc2544/run.c) */
	  .help = "a throughput trial that lost frames (or fell short\n"
	          "of its rate) runs again at its rate, up to N times;\n"
	          "the rate fails only if every run failed\n"
	          "(default %u; 0: one trial per rate)", .help_nums = { 1 }, .sample = "0" },
	{ "latency-trials", 0, "N", XP_SEC_RFC2544, RFC, NULL, RFC_OPT,
	  XP_NUM_DEF(rfc.lat_trials, 1, 1000, "latency trial count", 20), /* section 26.2 */
	  .help = "latency trials per size (default %u)", .help_nums = { 20 }, .sample = "2" },
	{ "b2b-trials", 0, "N", XP_SEC_RFC2544, RFC, NULL, RFC_OPT,
	  XP_NUM_DEF(rfc.b2b_trials, 1, 1000, "back-to-back trial count", 50), /* section 26.4 */
	  .help = "back-to-back searches per size (default %u)", .help_nums = { 50 }, .sample = "2" },
	{ "plot", 0, "DIR", XP_SEC_RFC2544, RFC, opt_plot, RFC_OPT,
	  .help = "gnuplot plots (SVG, PNG) and summary.md in DIR", .sample = "/tmp/xp-plots" },
	{ "bidir", 0, NULL, XP_SEC_RFC2544, RFC, opt_bidir, RFC_OPT,
	  .help = "both directions at once (RFC 2544 section 14): the\n"
	          "server's side sends each trial back; figures per\n"
	          "direction and combined (a server on control port+1 here)" },
	{ "estimate", 0, NULL, XP_SEC_RFC2544, RFC, opt_estimate, RFC_OPT,
	  .help = "print how many trials and about how long the suite\n"
	          "would take with these settings, then exit: no traffic" },

	/* Issue 12 point 4: the connection searches, one block. */
	{ "search", 0, NULL, XP_SEC_SEARCH, XDPC, opt_search, SEARCH_OPT,
	  .help = "a search instead of one test: with -x the highest\n"
	          "--cps with no failed connection (with --fin: of FIN\n"
	          "closes); with -k the most connections held at once\n"
	          "(opened at --cps, default %u, up to -P, default %u);\n"
	          "a line per trial, a table (-J: every trial)", .help_nums = { 10000, 100000 } },
	{ "search-trial", 0, "SECS", XP_SEC_SEARCH, XDPC | SRCH, opt_search_trial, SEARCH_OPT,
	  .help = "trial length (default %u; capacity trials last until\n"
	          "-P could be open, then 2 s)", .help_nums = { 10 }, .sample = "3" },
	{ "search-floor", 0, "CPS", XP_SEC_SEARCH, XDPC | SRCH, NULL, SEARCH_OPT,
	  XP_NUM_DEF(cs.floor, 1, 100000000, "--search-floor rate", 100),
	  .help = "the lowest rate, and the rate of the probe before\n"
	          "each trial that shows the device accepts new\n"
	          "connections again (default %u)", .help_nums = { 100 }, .sample = "500" },
	{ "search-ceiling", 0, "CPS", XP_SEC_SEARCH, XDPC | SRCH, NULL, .roles = XP_IN_CLIENT,
	  XP_NUM(cs.ceiling, 2, 100000000, "--search-ceiling rate"),
	  .kinds = XP_K(XP_KIND_CONNECT), .needs = XP_NEEDS(XP_CAP_SEARCH),
	  .instead_kind = "a capacity search (-k) searches a count up to -P",
	  .help = "-x: the first trial's rate (default: the sender's\n"
	          "maximum, measured in a first trial)", .sample = "50000" },
	{ "search-resolution", 0, "PCT", XP_SEC_SEARCH, XDPC | SRCH, opt_search_res, SEARCH_OPT,
	  .help = "done when the bounds are this close, in percent\n"
	          "(default %u)", .help_nums = { 1 }, .sample = "0.5" },
	{ "search-settle", 0, "SECS", XP_SEC_SEARCH, XDPC | SRCH, opt_search_settle, SEARCH_OPT,
	  .help = "without --device-netns: wait this long before each\n"
	          "probe, for the device to drop the last trial's\n"
	          "entries (default %u: a reset entry's life in Linux)", .help_nums = { 10 }, .sample = "2" },

	/* Server */
	{ "one-off", '1', NULL, XP_SEC_SERVER, 0, opt_one_off, .roles = XP_IN_SERVER, .kinds = XP_K_ANY,
	  .engines = XP_E_ANY, .help = "serve one test, then exit" },

	/* Server policy and authentication (issue 9): kept together */
	{ "auth-key", 0, "FILE", XP_SEC_SERVER, 0, opt_auth_key, .roles = XP_IN_BOTH | TO_AGENTS, .kinds = XP_K_ANY,
	  .engines = XP_E_ANY,
	  .help = "shared secret (both ends): the client proves it knows\n"
	          "it (HMAC over a fresh nonce); mode 600 or refused\n"
	          "(--otg, --config: the key of the ports' agents)", .sample = "/etc/xdpperf.key" },
	{ "allow", 0, "CIDR", XP_SEC_SERVER, 0, opt_allow, SERVER_ONLY,
	  .help = "serve only clients from this network (repeatable;\n"
	          "default: any)", .sample = "198.18.0.0/15" },
	{ "allow-bind", 0, "CIDR", XP_SEC_SERVER, 0, opt_allow_bind, SERVER_ONLY,
	  .help = "a client's --bind addresses may also lie in this\n"
	          "network (repeatable; default: only the client's own\n"
	          "address and the --allow networks)", .sample = "198.18.1.0/24" },
	{ "bind-control", 0, "ADDR", XP_SEC_SERVER, 0, opt_bind_control, SERVER_ONLY,
	  .help = "listen for control connections on this address only\n"
	          "(default: every address)", .sample = "198.18.1.1" },
	{ "max-duration", 0, "SECS", XP_SEC_SERVER, 0, opt_max_duration, SERVER_ONLY,
	  .help = "longest test a client may ask for (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_DURATION }, .sample = "60" },
	{ "test-ports", 0, "LO:HI", XP_SEC_SERVER, 0, opt_test_ports, SERVER_ONLY,
	  .help = "ports tests may use (default %u:%u); never the\n"
	          "ephemeral range nor a port another program uses",
	  .help_nums = { XP_DEFAULT_TEST_PORT_LO, XP_DEFAULT_TEST_PORT_HI }, .sample = "60000:65000" },
	{ "max-tests", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_tests, 1, 64, "--max-tests", XP_DEFAULT_MAX_TESTS),
	  .help = "tests running at once (default %u)", .help_nums = { XP_DEFAULT_MAX_TESTS }, .sample = "2" },
	{ "max-control-per-addr", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_control_per_addr, 1, 64, "--max-control-per-addr", XP_DEFAULT_MAX_CONTROL_PER_ADDR),
	  .help = "control connections from one IPv4 /24 or IPv6\n"
	          "/64 (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_CONTROL_PER_ADDR }, .sample = "2" },
	{ "max-parallel", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_parallel, 1, 10000000, "--max-parallel", XP_DEFAULT_MAX_PARALLEL),
	  .help = "connections one socket test may ask the server to\n"
	          "accept (default %u)", .help_nums = { XP_DEFAULT_MAX_PARALLEL }, .sample = "1000" },
	{ "max-parallel-total", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_parallel_total, 1, 10000000, "--max-parallel-total", XP_DEFAULT_MAX_PARALLEL_TOTAL),
	  .help = "the same over all tests at once (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_PARALLEL_TOTAL }, .sample = "5000" },
	{ "max-workers", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_workers, 0, 64, "--max-workers", XP_DEFAULT_MAX_WORKERS),
	  .help = "worker processes one test may fork past the\n"
	          "open-file limit (default %u)", .help_nums = { XP_DEFAULT_MAX_WORKERS }, .sample = "2" },
	{ "max-workers-total", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_workers_total, 0, 1024, "--max-workers-total", XP_DEFAULT_MAX_WORKERS_TOTAL),
	  .help = "the same over all tests at once (default %u)",
	  .help_nums = { XP_DEFAULT_MAX_WORKERS_TOTAL }, .sample = "4" },
	{ "max-listen-ports", 0, "N", XP_SEC_SERVER, 0, NULL, SERVER_ONLY,
	  XP_NUM_DEF(srv.max_listen_ports, 1, 65535, "--max-listen-ports", XP_DEFAULT_MAX_LISTEN_PORTS),
	  .help = "ports one test may have the server listen on\n"
	          "(default %u)", .help_nums = { XP_DEFAULT_MAX_LISTEN_PORTS }, .sample = "16" },
	{ "allow-lo", 0, NULL, XP_SEC_SERVER, 0, opt_allow_lo, SERVER_ONLY,
	  .help = "allow tests that count on the loopback device\n"
	          "(refused by default: the host's own traffic)" },

	/* Host probe */
	{ "probe", 0, NULL, XP_SEC_PROBE, 0, opt_probe, .roles = XP_IN_PROBE, .kinds = XP_K_ANY, .engines = XP_E_ANY,
	  .help = "what this kernel and the --dev interface (default:\n"
	          "every interface that is up) support, each with its\n"
	          "reason, and the engine auto picks; -J for JSON" },

	/* Issue 27: the Open Traffic Generator API, one block. */
	{ "otg", 0, "[ADDR]:PORT", XP_SEC_OTG, 0, opt_otg, OTG_OPT,
	  .help = "serve the Open Traffic Generator REST API (models\n"
	          "v" XP_OTG_API_VERSION ": /config, /control/state, /monitor/metrics,\n"
	          "/capabilities/version) on ADDR (default 127.0.0.1)\n"
	          "until SIGINT/SIGTERM; ports are xdpperf -s agents", .sample = "127.0.0.1:8443" },
	{ "otg-token", 0, "FILE", XP_SEC_OTG, 0, opt_otg_token, OTG_OPT,
	  .help = "every request must carry Authorization: Bearer\n"
	          "TOKEN, the file's one line (mode 600 or refused)", .sample = "/etc/xdpperf-otg.token" },
	{ "otg-cert", 0, "FILE", XP_SEC_OTG, 0, opt_otg_cert, OTG_OPT,
	  .help = "HTTPS with this PEM certificate, with --otg-key; an\n"
	          "ADDR other than loopback needs TLS and --otg-token", .sample = "/etc/xdpperf-otg.pem" },
	{ "otg-key", 0, "FILE", XP_SEC_OTG, 0, opt_otg_key, OTG_OPT,
	  .help = "the certificate's PEM private key (mode 600)", .sample = "/etc/xdpperf-otg.key" },
	{ "config", 0, "FILE", XP_SEC_OTG, 0, opt_config, CONFIG_OPT,
	  .help = "run the flows of an OTG config (JSON, the ports'\n"
	          "locations in it) once through the same controller,\n"
	          "then print their figures; -J: OTG's MetricsResponse", .sample = "docs/examples/otg/hello.json" },
};
const size_t xp_noptions = sizeof(xp_options) / sizeof(xp_options[0]);
_Static_assert(sizeof(xp_options) / sizeof(xp_options[0]) <= XP_OPTIONS_MAX, "raise XP_OPTIONS_MAX");

unsigned xp_engine_kinds(enum xp_engine_id engine)
{
	/* What the engine declares (auto: its first candidate's, as all of them declare alike). */
	_Static_assert(XP_K(XP_KIND_STREAM) == XP_TEST_BIT(XP_TEST_STREAM) &&
			       XP_K(XP_KIND_CONNECT) == XP_TEST_BIT(XP_TEST_CONNECT) &&
			       XP_K(XP_KIND_HOLD) == XP_TEST_BIT(XP_TEST_HOLD),
		       "the CLI's kinds are the tests' kinds");
	const struct xp_engine_ops *ops = xp_engine_ops_of(engine);
	return ops ? ops->kinds : 0;
}

bool xp_option_applies(const struct xp_option *op, enum xp_role role, enum xp_kind kind, enum xp_engine_id engine)
{
	if (!(op->roles & (1u << role)))
		return false;
	if (role != XP_ROLE_CLIENT)
		return true; /* the server has no test kind or engine of its own */
	return (op->kinds & XP_K(kind)) && (xp_option_engines(op) & XP_E(engine));
}

/* The engines that declare what op needs (engine/engine.h; auto: as its first candidate declares). */
unsigned xp_option_engines(const struct xp_option *op)
{
	if (!op->needs)
		return op->engines;
	unsigned mask = 0;
	for (unsigned e = 0; e < XP_ENGINE_COUNT; e++) {
		const struct xp_engine_ops *ops = xp_engine_ops_of((enum xp_engine_id)e);
		if (ops && (ops->caps & XP_CAP_BIT(op->needs - 1)))
			mask |= XP_E(e);
	}
	return mask;
}

/* Why engine e cannot do what op needs, in the engine's words. */
const char *xp_option_instead(const struct xp_option *op, enum xp_engine_id e)
{
	const struct xp_engine_ops *ops = xp_engine_ops_of(e);
	if (!op->needs || !ops || (ops->caps & XP_CAP_BIT(op->needs - 1)))
		return NULL;
	return ops->lacks[op->needs - 1];
}

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

/* An option of the table's typed rows (XP_NUM): an integer in its range, stored in its field's type. */
int xp_opt_num(const struct xp_option *op, struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	unsigned long ul;
	if (op->num.store == XP_ST_NONE)
		return xp_cli_fail(err, errlen, "option --%s has neither a handler nor a type", op->name);
	if (parse_uint(arg, op->num.lo, op->num.hi, &ul, op->num.what, err, errlen))
		return -1;
	xp_opt_num_store(op, o, (double)ul);
	return 0;
}

void xp_opt_num_store(const struct xp_option *op, struct xp_opts *o, double v)
{
	char *field = (char *)o + op->num.off;
	switch (op->num.store) {
	case XP_ST_USHORT:
		*(unsigned short *)field = (unsigned short)v;
		break;
	case XP_ST_UINT:
		*(unsigned *)field = (unsigned)v;
		break;
	case XP_ST_ULONG:
		*(unsigned long *)field = (unsigned long)v;
		break;
	case XP_ST_DOUBLE:
		*(double *)field = v;
		break;
	case XP_ST_NONE:
		break;
	}
}
