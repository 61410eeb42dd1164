#include <getopt.h>
#include <linux/types.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "bpf/client.h"
#include "proto/channel.h"
#include "cli/opts.h"

#define XP_VERSION "0.1.0"

void xp_opts_default(struct xp_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->control_port = XP_CONTROL_PORT_DEFAULT;
	o->port_lo = XP_DEFAULT_PORT_LO;
	o->port_hi = XP_DEFAULT_PORT_HI;
	o->cport_lo = XP_DEFAULT_CPORT_LO;
	o->cport_hi = XP_DEFAULT_CPORT_HI;
	o->duration = 10;
	o->interval = 1;
	o->frame_size = 64;
	o->engine = XP_ENGINE_AUTO;
	o->xdp_mode = XP_XDP_AUTO;
}

void xp_usage(FILE *f)
{
	fprintf(f,
"Usage: xdpperf -s [options]            run a server\n"
"       xdpperf -c ADDR [options]       run a test against the server at ADDR\n"
"\n"
"Common:\n"
"  -s, --server              server role: answer tests, count with XDP\n"
"  -c, --client ADDR         client role: server address (IPv4, IPv6 or name)\n"
"      --control-port PORT   control channel TCP port (default %u)\n"
"  -D, --dev IFNAME          interface to send on (client) or count on (server);\n"
"                            default: the one the routing table picks\n"
"      --xdp-mode MODE       auto|native|skb for the XDP program (default auto)\n"
"  -p, --port PORT[:PORT]    destination port or range of the test traffic\n"
"                            (default %u:%u); the server counts these ports\n"
"  -d, --debug               more messages on stderr\n"
"  -h, --help                this text;  -V, --version\n"
"\n"
"Client:\n"
"  -4, -6                    use IPv4 / IPv6 (default: from ADDR)\n"
"  -t, --time SECS           test duration (default 10)\n"
"  -i, --interval SECS       report interval (default 1)\n"
"  -l, --length BYTES        Ethernet frame size incl. FCS, 64..MTU+18 (default 64)\n"
"  -b, --bitrate RATE        rate limit: 100kpps, 1.5Mpps (frames/s) or 1G, 800M\n"
"                            (bits/s on the wire, L1); add -l2 (1G-l2) for L2 bits/s\n"
"      --burst N             with -b: N frames back to back, then a pause, so\n"
"                            the average is the rate (default: spread evenly)\n"
"  -u, --udp                 UDP frames instead of TCP data segments\n"
"      --cport PORT[:PORT]   source port range (default %u:%u)\n"
"      --queues N            AF_XDP sockets / sending threads, one per queue\n"
"                            (default: all the interface's TX queues)\n"
"      --first-queue N       use queues N.. (so several clients can share a NIC)\n"
"      --dst-mac MAC         next-hop MAC (default: from the neighbour table)\n"
"      --engine NAME         auto: live where the kernel has it, else xsk (default)\n"
"                            live: XDP live frames (BPF_PROG_RUN), fastest\n"
"                            xsk: AF_XDP raw frames\n"
"                            socket: the kernel's TCP stack (-P/-x/-k tests)\n"
"                            none: send nothing, only report what the server\n"
"                            receives (for an external generator, e.g. trafgen)\n"
"  -J, --json                one JSON document at the end\n"
"      --json-stream         one JSON object per line: start, interval..., end\n"
"\n"
"Socket tests (fireperf's flags; they select --engine socket):\n"
"  -P, --parallel N          parallel connections (server: connections to expect)\n"
"  -x, --close               close each connection once established: connections/s\n"
"  -k, --keepalive           open -P connections and hold them with keepalives,\n"
"                            sending no data: a connection-tracking table test\n"
"                            (without -x/-k: stream data, a throughput test)\n"
"  -z, --zero                send zeroes instead of random data\n"
"      --threads N           event-loop threads (default: one per CPU)\n"
"      --bind ADDR[-ADDR]    source addresses to spread connections over\n"
"      --compare             the same test with the socket engine, then with an\n"
"                            XDP engine (stream: xsk; -x: xdp), and a table of ratios\n"
"\n"
"XDP connection engine (--engine xdp, with -x or -k): raw SYNs (XDP live frames\n"
"or AF_XDP), handshakes completed by XDP programs on both ends, no per-connection\n"
"state:\n"
"      --cps N               SYNs per second (default: as fast as possible)\n"
"      --fin                 close with FIN/FIN-ACK/ACK instead of a reset\n"
"      --bytes N             with -x: each connection carries N bytes (1..%u) in\n"
"                            the handshake's ACK, then closes with FINs\n"
"      --peer kernel         the server's TCP stack answers (xdpperf -s opens\n"
"                            listeners), not its XDP program\n"
"      --syn-engine NAME     what sends the SYNs: live (XDP live frames; the\n"
"                            default for -x, falling back to xsk where the\n"
"                            kernel lacks it) or xsk (AF_XDP; always for -k)\n"
"\n"
"Server:\n"
"  -1, --one-off             serve one test, then exit\n"
"  -P N, --engine socket     also listen on -p's ports at start (like fireperf -s)\n"
"\n"
"Exit status: 0 success, 1 runtime error, 2 usage error.\n",
		XP_CONTROL_PORT_DEFAULT, XP_DEFAULT_PORT_LO, XP_DEFAULT_PORT_HI,
		XP_DEFAULT_CPORT_LO, XP_DEFAULT_CPORT_HI, XP_CC_DATA_MAX);
}

enum {
	OPT_CONTROL_PORT = 256, OPT_CPORT, OPT_QUEUES, OPT_DST_MAC, OPT_ENGINE,
	OPT_XDP_MODE, OPT_JSON_STREAM, OPT_FIRST_QUEUE, OPT_THREADS, OPT_BIND, OPT_COMPARE, OPT_BURST, OPT_CPS, OPT_FIN, OPT_PEER,
	OPT_BYTES, OPT_SYN_ENGINE,
};

static const struct option long_opts[] = {
	{ "server", no_argument, NULL, 's' },
	{ "client", required_argument, NULL, 'c' },
	{ "control-port", required_argument, NULL, OPT_CONTROL_PORT },
	{ "dev", required_argument, NULL, 'D' },
	{ "port", required_argument, NULL, 'p' },
	{ "cport", required_argument, NULL, OPT_CPORT },
	{ "time", required_argument, NULL, 't' },
	{ "interval", required_argument, NULL, 'i' },
	{ "length", required_argument, NULL, 'l' },
	{ "bitrate", required_argument, NULL, 'b' },
	{ "udp", no_argument, NULL, 'u' },
	{ "queues", required_argument, NULL, OPT_QUEUES },
	{ "first-queue", required_argument, NULL, OPT_FIRST_QUEUE },
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
	{ "engine", required_argument, NULL, OPT_ENGINE },
	{ "xdp-mode", required_argument, NULL, OPT_XDP_MODE },
	{ "json", no_argument, NULL, 'J' },
	{ "json-stream", no_argument, NULL, OPT_JSON_STREAM },
	{ "one-off", no_argument, NULL, '1' },
	{ "parallel", required_argument, NULL, 'P' },
	{ "close", no_argument, NULL, 'x' },
	{ "keepalive", no_argument, NULL, 'k' },
	{ "zero", no_argument, NULL, 'z' },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "compare", no_argument, NULL, OPT_COMPARE },
	{ "burst", required_argument, NULL, OPT_BURST },
	{ "cps", required_argument, NULL, OPT_CPS },
	{ "fin", no_argument, NULL, OPT_FIN },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "syn-engine", required_argument, NULL, OPT_SYN_ENGINE },
	{ "debug", no_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ NULL, 0, NULL, 0 },
};

int xp_opts_parse(int argc, char **argv, struct xp_opts *o, char *err, size_t errlen)
{
	unsigned long ul;
	int c;
	bool client_only = false;
	const char *client_opt = NULL, *socket_opt = NULL, *xdp_opt = NULL;

	xp_opts_default(o);
	optind = 0; /* 0, not 1: glibc then also resets its state from a previous parse */
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sc:D:p:t:i:l:b:u46J1dhVP:xkz", long_opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (o->role == XP_ROLE_CLIENT) {
				snprintf(err, errlen, "-s and -c exclude each other");
				return 2;
			}
			o->role = XP_ROLE_SERVER;
			break;
		case 'c':
			if (o->role == XP_ROLE_SERVER) {
				snprintf(err, errlen, "-s and -c exclude each other");
				return 2;
			}
			o->role = XP_ROLE_CLIENT;
			if (!*optarg || strlen(optarg) >= sizeof(o->host)) {
				snprintf(err, errlen, "-c needs a server address");
				return 2;
			}
			strcpy(o->host, optarg);
			break;
		case OPT_CONTROL_PORT:
			if (parse_uint(optarg, 1, 65535, &ul, "control port", err, errlen))
				return 2;
			o->control_port = (unsigned short)ul;
			break;
		case 'D':
			if (!*optarg || strlen(optarg) >= sizeof(o->dev)) {
				snprintf(err, errlen, "interface name '%s' is not valid", optarg);
				return 2;
			}
			strcpy(o->dev, optarg);
			break;
		case 'p':
			if (parse_port_range(optarg, &o->port_lo, &o->port_hi, err, errlen))
				return 2;
			break;
		case OPT_CPORT:
			if (parse_port_range(optarg, &o->cport_lo, &o->cport_hi, err, errlen))
				return 2;
			client_only = true, client_opt = "--cport";
			break;
		case 't':
			if (parse_duration(optarg, &o->duration, err, errlen))
				return 2;
			break;
		case 'i':
			if (parse_duration(optarg, &o->interval, err, errlen))
				return 2;
			if (o->interval < 0.1) {
				snprintf(err, errlen, "interval %s is too short (minimum 0.1 s)", optarg);
				return 2;
			}
			break;
		case 'l':
			if (parse_frame_size(optarg, &o->frame_size, err, errlen))
				return 2;
			o->frame_size_set = true;
			client_only = true, client_opt = "-l";
			break;
		case 'b':
			if (parse_rate(optarg, &o->rate, err, errlen))
				return 2;
			client_only = true, client_opt = "-b";
			break;
		case 'u':
			o->udp = true;
			break;
		case '4':
			o->family = AF_INET;
			break;
		case '6':
			o->family = AF_INET6;
			break;
		case OPT_QUEUES:
			if (parse_uint(optarg, 1, 64, &ul, "queue count", err, errlen))
				return 2;
			o->queues = (unsigned)ul;
			break;
		case OPT_FIRST_QUEUE:
			if (parse_uint(optarg, 0, 63, &ul, "first queue", err, errlen))
				return 2;
			o->first_queue = (unsigned)ul;
			client_only = true, client_opt = "--first-queue";
			break;
		case OPT_DST_MAC:
			if (parse_mac(optarg, o->dst_mac, err, errlen))
				return 2;
			o->dst_mac_set = true;
			break;
		case OPT_ENGINE:
			if (xp_engine_by_name(optarg, &o->engine)) {
				snprintf(err, errlen, "unknown engine '%s' (available: auto, live, xsk, xdp, socket, none)", optarg);
				return 2;
			}
			o->engine_set = true;
			break;
		case OPT_XDP_MODE:
			if (!strcmp(optarg, "auto"))
				o->xdp_mode = XP_XDP_AUTO;
			else if (!strcmp(optarg, "native") || !strcmp(optarg, "drv"))
				o->xdp_mode = XP_XDP_NATIVE;
			else if (!strcmp(optarg, "skb") || !strcmp(optarg, "generic"))
				o->xdp_mode = XP_XDP_SKB;
			else {
				snprintf(err, errlen, "unknown XDP mode '%s' (auto, native or skb)", optarg);
				return 2;
			}
			break;
		case 'J':
			o->json = true;
			break;
		case OPT_JSON_STREAM:
			o->json_stream = true;
			break;
		case '1':
			o->one_off = true;
			break;
		case 'P':
			if (parse_uint(optarg, 1, 10000000, &ul, "parallel connection count (-P)", err, errlen))
				return 2;
			o->parallel = ul;
			socket_opt = "-P";
			break;
		case 'x':
			o->close_each = true;
			socket_opt = "-x";
			break;
		case 'k':
			o->keepalive = true;
			socket_opt = "-k";
			break;
		case 'z':
			o->zero = true;
			socket_opt = "-z";
			break;
		case OPT_THREADS:
			if (parse_uint(optarg, 1, 256, &ul, "thread count", err, errlen))
				return 2;
			o->threads = (unsigned)ul;
			socket_opt = "--threads";
			break;
		case OPT_BIND: {
			int n = xp_parse_addr_range(optarg, o->bind + o->nbind, XP_MAX_BIND_OPT - o->nbind, err, errlen);
			if (n < 0)
				return 2;
			o->nbind += (unsigned)n;
			socket_opt = "--bind";
			client_only = true, client_opt = "--bind";
			break;
		}
		case OPT_BURST:
			if (parse_uint(optarg, 1, 1048576, &ul, "burst size", err, errlen))
				return 2;
			o->burst = (unsigned)ul;
			client_only = true, client_opt = "--burst";
			break;
		case OPT_CPS:
			if (parse_uint(optarg, 1, 100000000, &ul, "connection rate (--cps)", err, errlen))
				return 2;
			o->cps = (double)ul;
			xdp_opt = "--cps";
			break;
		case OPT_FIN:
			o->fin = true;
			xdp_opt = "--fin";
			break;
		case OPT_PEER:
			if (!strcmp(optarg, "kernel")) {
				o->peer_kernel = true;
			} else if (strcmp(optarg, "xdp")) {
				snprintf(err, errlen, "unknown peer '%s' (xdp: the server's XDP program, kernel: its TCP stack)",
					 optarg);
				return 2;
			}
			xdp_opt = "--peer";
			break;
		case OPT_BYTES:
			if (parse_uint(optarg, 1, XP_CC_DATA_MAX, &ul, "--bytes payload", err, errlen))
				return 2;
			o->data_len = (unsigned)ul;
			xdp_opt = "--bytes";
			client_only = true, client_opt = "--bytes";
			break;
		case OPT_SYN_ENGINE:
			if (!strcmp(optarg, "live")) {
				o->syn_engine = XP_SYN_LIVE;
			} else if (!strcmp(optarg, "xsk")) {
				o->syn_engine = XP_SYN_XSK;
			} else {
				snprintf(err, errlen, "unknown SYN engine '%s' (live: XDP live frames, xsk: AF_XDP)", optarg);
				return 2;
			}
			xdp_opt = "--syn-engine";
			client_only = true, client_opt = "--syn-engine";
			break;
		case OPT_COMPARE:
			o->compare = true;
			client_only = true, client_opt = "--compare";
			break;
		case 'd':
			o->debug++;
			break;
		case 'h':
			xp_usage(stdout);
			return 1;
		case 'V':
			printf("xdpperf %s\n", XP_VERSION);
			return 1;
		case ':':
			snprintf(err, errlen, "option %s needs a value", argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				snprintf(err, errlen, "unknown option -%c (see xdpperf --help)", optopt);
			else
				snprintf(err, errlen, "unknown option %s (see xdpperf --help)", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		snprintf(err, errlen, "unexpected argument '%s' (see xdpperf --help)", argv[optind]);
		return 2;
	}
	if (o->role == XP_ROLE_NONE) {
		snprintf(err, errlen, "say -s to run a server or -c ADDR to run a client (see xdpperf --help)");
		return 2;
	}
	if (o->role == XP_ROLE_SERVER && client_only) {
		snprintf(err, errlen, "%s is a client option", client_opt);
		return 2;
	}
	if (o->close_each && o->keepalive) {
		snprintf(err, errlen, "-x (close at once) and -k (keep open) exclude each other");
		return 2;
	}
	if (o->data_len && !o->close_each) {
		snprintf(err, errlen, o->keepalive ? "--bytes closes each connection after its data: use -x, not -k"
						   : "--bytes is for connection tests: add -x (and --engine xdp)");
		return 2;
	}
	/* fireperf's flags select the socket engine unless an engine was named. */
	if (socket_opt && !o->engine_set)
		o->engine = xdp_opt ? XP_ENGINE_XDP : XP_ENGINE_SOCKET;
	bool conn_test = o->close_each || o->keepalive;
	if (o->engine == XP_ENGINE_XDP && !conn_test) {
		snprintf(err, errlen, "the XDP connection engine runs connection tests: add -x (rate) or -k (hold)");
		return 2;
	}
	if (xdp_opt && o->engine != XP_ENGINE_XDP) {
		snprintf(err, errlen, "%s is for the XDP connection engine (--engine xdp)", xdp_opt);
		return 2;
	}
	if (socket_opt && o->engine != XP_ENGINE_SOCKET && o->engine != XP_ENGINE_XDP && !(o->compare && !conn_test)) {
		snprintf(err, errlen, "%s is for the socket engine (--engine socket) or, with -x/-k, the XDP "
				      "connection engine (--engine xdp)", socket_opt);
		return 2;
	}
	if (o->engine == XP_ENGINE_XDP && (o->zero || o->threads)) {
		snprintf(err, errlen, "%s is for the socket engine", o->zero ? "-z" : "--threads");
		return 2;
	}
	if (o->syn_engine == XP_SYN_LIVE && o->keepalive) {
		snprintf(err, errlen, "--syn-engine live: -k needs the held connections reset at the end, which only xsk does");
		return 2;
	}
	if (o->fin && o->keepalive) {
		snprintf(err, errlen, "--fin closes connections; -k holds them");
		return 2;
	}
	if (o->data_len && o->peer_kernel) {
		snprintf(err, errlen, "--bytes needs the server's XDP program to answer, not --peer kernel");
		return 2;
	}
	if (o->data_len && o->compare) {
		snprintf(err, errlen, "--bytes has no socket-engine counterpart for --compare");
		return 2;
	}
	if (o->engine == XP_ENGINE_SOCKET && o->udp) {
		snprintf(err, errlen, "-u: the socket engine tests TCP only");
		return 2;
	}
	if (!o->parallel)
		o->parallel = 1;
	if (o->burst && o->rate.unit == XP_RATE_NONE) {
		snprintf(err, errlen, "--burst shapes a rate limit: give -b too");
		return 2;
	}
	if (o->burst && o->engine == XP_ENGINE_SOCKET) {
		snprintf(err, errlen, "--burst is for the frame engines (live, xsk)");
		return 2;
	}
	if (o->role == XP_ROLE_CLIENT) {
		struct xp_addr a;
		if (!xp_addr_parse(o->host, &a)) {
			if (o->family && o->family != a.family) {
				snprintf(err, errlen, "%s is not an IPv%c address", o->host,
					 o->family == AF_INET ? '4' : '6');
				return 2;
			}
		}
		if (o->control_port >= o->port_lo && o->control_port <= o->port_hi) {
			snprintf(err, errlen, "port range %u:%u includes the control port %u", o->port_lo,
				 o->port_hi, o->control_port);
			return 2;
		}
		if (o->interval > o->duration)
			o->interval = o->duration;
	}
	return 0;
}
