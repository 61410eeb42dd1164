/* The option handlers (cli/handlers.h): each converts one option's value, nothing more. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <sys/socket.h>

#include "bpf/xdp_connect.h"
#include "proto/channel.h"
#include "proto/messages.h"
#include "cli/handlers.h"
#include "connsearch/search.h"
#include "meas/figures.h"
#include "report/metrics.h"
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
	int fn(struct xp_opts *o, const char *arg, char *err, size_t errlen) \
	{                                                                              \
		o->field = true;                                                       \
		return 0;                                                              \
	}

FLAG(opt_udp, spec.traffic[0].udp)
FLAG(opt_json, json)
FLAG(opt_json_stream, json_stream)
FLAG(opt_one_off, srv.one_off)
FLAG(opt_close, close_each)
FLAG(opt_keepalive, keepalive)
FLAG(opt_zero, spec.traffic[0].zero)
FLAG(opt_compare, compare)
FLAG(opt_fin, spec.fin)
FLAG(opt_rtt, spec.rtt)
FLAG(opt_no_stamps, spec.no_stamps)
FLAG(opt_require_rate, spec.require_rate)


int opt_keepalive_interval(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_duration_named(arg, "keepalive interval", &o->spec.keepalive_s, err, errlen))
		return -1;
	/* The keeper scans every 10 ms; keepalives far faster would be a flood, not keepalives. */
	if (o->spec.keepalive_s < 0.1)
		return xp_cli_fail(err, errlen, "keepalive interval %s is too short (minimum 0.1 s)", arg);
	return 0;
}

int opt_server(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_SERVER;
	return 0;
}

int opt_probe(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_PROBE;
	return 0;
}

int opt_client(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->role = XP_ROLE_CLIENT;
	if (!*arg || strlen(arg) >= sizeof(o->spec.host))
		return xp_cli_fail(err, errlen, "-c needs a server address");
	strcpy(o->spec.host, arg);
	return 0;
}

int opt_dev(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= sizeof(o->spec.dev))
		return xp_cli_fail(err, errlen, "interface name '%s' is not valid", arg);
	strcpy(o->spec.dev, arg);
	return 0;
}

int opt_port(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->spec.traffic[0].port_set = true;
	return parse_port_range(arg, &o->spec.traffic[0].port_lo, &o->spec.traffic[0].port_hi, err, errlen);
}

int opt_cport(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_port_range(arg, &o->spec.traffic[0].cport_lo, &o->spec.traffic[0].cport_hi, err, errlen);
}

int opt_time(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_duration(arg, &o->spec.duration, err, errlen);
}

int opt_interval(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_duration_named(arg, "interval", &o->spec.interval, err, errlen))
		return -1;
	/* A bound on the value alone, so the value's parser checks it. */
	if (o->spec.interval < 0.1)
		return xp_cli_fail(err, errlen, "interval %s is too short (minimum 0.1 s)", arg);
	return 0;
}

int opt_length(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	/* -l imix / -l 64:7,570:4,1518:1: mixed sizes (frame/mix.h); the
	 * template is built at the largest, which the MTU check sees. */
	if (xp_mix_syntax(arg)) {
		if (xp_mix_parse(arg, &o->spec.traffic[0].mix, err, errlen))
			return -1;
		o->spec.traffic[0].frame_size = xp_mix_max(&o->spec.traffic[0].mix);
	} else {
		if (parse_frame_size(arg, &o->spec.traffic[0].frame_size, err, errlen))
			return -1;
		o->spec.traffic[0].mix.n = 0;
	}
	o->spec.traffic[0].frame_size_set = true;
	return 0;
}

int opt_bitrate(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_rate(arg, &o->spec.traffic[0].rate, err, errlen);
}

int opt_ipv4(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->spec.family = AF_INET;
	return 0;
}

int opt_ipv6(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->spec.family = AF_INET6;
	return 0;
}

int opt_dst_mac(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_mac(arg, o->spec.traffic[0].dst_mac, err, errlen))
		return -1;
	o->spec.traffic[0].dst_mac_set = true;
	return 0;
}

int opt_engine(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_engine(arg, &o->spec.engine, err, errlen))
		return -1;
	o->spec.engine_set = true;
	return 0;
}

int opt_syn_engine(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	enum xp_engine_id k;

	if (parse_engine(arg, &k, err, errlen) || (k != XP_ENGINE_LIVE && k != XP_ENGINE_XSK))
		return xp_cli_fail(err, errlen, "unknown SYN engine '%s' (live: XDP live frames, xsk: AF_XDP)", arg);
	o->spec.syn_engine = k;
	return 0;
}

int opt_xdp_mode(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "auto"))
		o->spec.xdp_mode = XP_XDP_AUTO;
	else if (!strcmp(arg, "native") || !strcmp(arg, "drv"))
		o->spec.xdp_mode = XP_XDP_NATIVE;
	else if (!strcmp(arg, "skb") || !strcmp(arg, "generic"))
		o->spec.xdp_mode = XP_XDP_SKB;
	else
		return xp_cli_fail(err, errlen, "unknown XDP mode '%s' (auto, native or skb)", arg);
	return 0;
}

int opt_bind(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	int n = xp_parse_addr_range(arg, o->spec.bind + o->spec.nbind, XP_MAX_BIND_OPT - o->spec.nbind, err, errlen);

	if (n < 0)
		return -1;
	o->spec.nbind += (unsigned)n;
	return 0;
}

int opt_peer(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	/* "xdp" is the default and leaves an earlier "kernel" as it was. */
	if (!strcmp(arg, "kernel"))
		o->spec.peer_kernel = true;
	else if (strcmp(arg, "xdp"))
		return xp_cli_fail(err, errlen,
				   "unknown peer '%s' (xdp: the server's XDP program, kernel: its TCP stack)", arg);
	return 0;
}

int opt_max_loss(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_percent(arg, &o->spec.max_loss, err, errlen);
}

/* --stall PCT (issue 30): the threshold, and that a stall fails the test. */
int opt_stall(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_percent(arg, &o->spec.stall_pct, err, errlen))
		return -1;
	if (o->spec.stall_pct <= 0 || o->spec.stall_pct >= 100)
		return xp_cli_fail(err, errlen, "--stall %s: give a percentage above 0 and below 100", arg);
	o->spec.stall_set = true;
	return 0;
}

/* --clock: the stamps' clock (issue 10). */
int opt_clock(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "tai"))
		o->spec.clock_tai = true;
	else if (!strcmp(arg, "mono"))
		o->spec.clock_tai = false;
	else
		return xp_cli_fail(err, errlen, "unknown clock '%s' (mono: this host's monotonic clock, tai: CLOCK_TAI of "
				   "PTP-synchronised hosts)", arg);
	o->spec.clock_set = true;
	return 0;
}

/* --rx-timestamp: which clock times a frame's arrival at the server (issue 10 item 5). */
int opt_rx_timestamp(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "sw"))
		o->spec.rx_ts = XP_RXTS_SW;
	else if (!strcmp(arg, "auto"))
		o->spec.rx_ts = XP_RXTS_AUTO;
	else if (!strcmp(arg, "hw"))
		o->spec.rx_ts = XP_RXTS_HW;
	else
		return xp_cli_fail(err, errlen, "unknown receive timestamp '%s' (sw: the server's kernel clock, hw: the "
				   "NIC's or refuse, auto: the NIC's where it has one, else the kernel's)", arg);
	o->spec.rx_ts_set = true;
	return 0;
}

/* ---- issue 11: the RFC 2544 suite's settings ---- */
FLAG(opt_rfc2544, rfc2544)
FLAG(opt_bidir, rfc.bidir)
FLAG(opt_estimate, rfc.estimate)

/*
 * --sizes 64,128,1518: frame sizes as -l takes them, at most
 * XP_RFC_MAX_SIZES. One of them may be imix (--sizes 64,imix,1518); a list
 * with SIZE:WEIGHT pairs is one user mix as a whole (--sizes
 * 64:7,570:4,1518:1: the commas belong to the mix). A mix is entry 0 of
 * rfc_sizes, its sizes in rfc_mix.
 */
int opt_sizes(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	char buf[256], *save = NULL;
	if (!*arg || strlen(arg) >= sizeof(buf))
		return xp_cli_fail(err, errlen, "--sizes needs a list of frame sizes, like 64,512,1518");
	if (strchr(arg, ':')) {
		if (xp_mix_parse(arg, &o->rfc.mix, err, errlen))
			return -1;
		o->rfc.sizes[0] = 0;
		o->rfc.nsizes = 1;
		return 0;
	}
	strcpy(buf, arg);
	unsigned n = 0;
	bool mix = false;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n >= XP_RFC_MAX_SIZES)
			return xp_cli_fail(err, errlen, "--sizes takes at most %u sizes", XP_RFC_MAX_SIZES);
		if (!strcmp(t, "imix")) {
			if (mix)
				return xp_cli_fail(err, errlen, "--sizes '%s': imix given twice", arg);
			mix = true;
			if (xp_mix_parse("imix", &o->rfc.mix, err, errlen))
				return -1;
			o->rfc.sizes[n++] = 0;
			continue;
		}
		if (parse_frame_size(t, &o->rfc.sizes[n], err, errlen))
			return -1;
		n++;
	}
	if (!n || arg[strlen(arg) - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
		return xp_cli_fail(err, errlen, "--sizes '%s': give frame sizes separated by commas, like 64,512,1518", arg);
	if (!mix)
		o->rfc.mix.n = 0;
	o->rfc.nsizes = n;
	return 0;
}

/* --tests throughput,latency,loss,b2b (or all). */
int opt_tests(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	static const struct { const char *name; unsigned bit; } names[] = {
		{ "throughput", XP_RFC_T_THROUGHPUT }, { "latency", XP_RFC_T_LATENCY },
		{ "loss", XP_RFC_T_LOSS }, { "b2b", XP_RFC_T_B2B }, { "all", XP_RFC_T_ALL },
	};
	char buf[128], *save = NULL;
	if (!*arg || strlen(arg) >= sizeof(buf) || arg[strlen(arg) - 1] == ',' || arg[0] == ',' || strstr(arg, ",,"))
		return xp_cli_fail(err, errlen, "--tests '%s': give a list of throughput, latency, loss, b2b or all", arg);
	strcpy(buf, arg);
	unsigned bits = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]) && strcmp(t, names[i].name); i++)
			;
		if (i == sizeof(names) / sizeof(names[0]))
			return xp_cli_fail(err, errlen, "--tests: unknown test '%s' (throughput, latency, loss, b2b or all)", t);
		bits |= names[i].bit;
	}
	o->rfc.tests = bits;
	return 0;
}

int opt_trial(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_duration_named(arg, "trial length", &o->rfc.trial_s, err, errlen))
		return -1;
	if (o->rfc.trial_s < 0.5)
		return xp_cli_fail(err, errlen, "--trial %s is too short (at least 0.5 s; RFC 2544 asks for 60)", arg);
	return 0;
}

int opt_loss_tolerance(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_percent(arg, &o->rfc.loss_tol, err, errlen);
}

/* --line-rate 10G: the link's L1 bit rate: the test's (a flow's percentage rate is a share of it), and the RFC
 * 2544 suite's top of the searches (its own copy: the suite reads its settings, rfc2544/cfg.h). */
int opt_line_rate(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	struct xp_rate r;
	if (parse_rate(arg, &r, err, errlen))
		return -1;
	if (r.unit != XP_RATE_BPS_L1)
		return xp_cli_fail(err, errlen, "--line-rate is the link's bit rate on the wire, like 10G or 1000M");
	o->spec.line_bps = r.value;
	o->rfc.line_bps = r.value;
	return 0;
}

int opt_plot(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= sizeof(o->rfc.plot_dir))
		return xp_cli_fail(err, errlen, "--plot needs a directory");
	strcpy(o->rfc.plot_dir, arg);
	return 0;
}

/* --device-netns: issue 12's connection-test options start here. */
int opt_device_netns(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= sizeof(o->spec.device_netns) || strchr(arg, '/'))
		return xp_cli_fail(err, errlen, "namespace name '%s' is not valid (a name under /var/run/netns)", arg);
	strcpy(o->spec.device_netns, arg);
	return 0;
}

int opt_debug(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->debug++;
	return 0;
}

int opt_help(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	/* Printed by xp_opts_parse (cli.c): --help reads the option table, which names this handler. */
	o->help = true;
	return 1;
}

int opt_version(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	xp_version_print(stdout);
	return 1;
}

/* ---- server policy and authentication (issue 9): kept together ---- */

FLAG(opt_allow_lo, srv.allow_lo)

int opt_auth_key(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	/* Read (and its mode checked) when the role starts: a handler only converts. */
	if (!*arg)
		return xp_cli_fail(err, errlen, "--auth-key needs a file name");
	if (strlen(arg) >= sizeof(o->spec.auth_key))
		return xp_cli_fail(err, errlen, "--auth-key: file name longer than %zu bytes", sizeof(o->spec.auth_key) - 1);
	snprintf(o->spec.auth_key, sizeof(o->spec.auth_key), "%s", arg);
	return 0;
}

int opt_max_duration(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_duration(arg, &o->srv.max_duration, err, errlen);
}

int opt_test_ports(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_port_range(arg, &o->srv.test_port_lo, &o->srv.test_port_hi, err, errlen);
}

int opt_allow(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (o->srv.nallow >= XP_MAX_ALLOW)
		return xp_cli_fail(err, errlen, "at most %d --allow networks", XP_MAX_ALLOW);
	struct xp_cidr *n = &o->srv.allow[o->srv.nallow];
	if (xp_parse_cidr(arg, &n->net, &n->plen, err, errlen))
		return -1;
	o->srv.nallow++;
	return 0;
}

int opt_allow_bind(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (o->srv.nallow_bind >= XP_MAX_ALLOW)
		return xp_cli_fail(err, errlen, "at most %d --allow-bind networks", XP_MAX_ALLOW);
	struct xp_cidr *n = &o->srv.allow_bind[o->srv.nallow_bind];
	if (xp_parse_cidr(arg, &n->net, &n->plen, err, errlen))
		return -1;
	o->srv.nallow_bind++;
	return 0;
}

int opt_bind_control(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (xp_addr_parse(arg, &o->srv.bind_control))
		return xp_cli_fail(err, errlen, "--bind-control '%s' is not an IPv4 or IPv6 address (give one of this host's)",
				   arg);
	return 0;
}

/* ---- issue 12 point 4: the connection searches ---- */
/* Which search follows from the test (validate.c check_search): -x rate, -x --fin teardown, -k capacity. */
int opt_search(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	o->cs.mode = XP_CS_RATE;
	return 0;
}

int opt_search_trial(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_duration_named(arg, "search trial length", &o->cs.trial_s, err, errlen))
		return -1;
	/* A lost SYN times out after 1 s: a shorter trial could not see its failures. */
	if (o->cs.trial_s < 2)
		return xp_cli_fail(err, errlen, "--search-trial %s is too short (at least 2 s)", arg);
	return 0;
}


int opt_search_res(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (parse_percent(arg, &o->cs.res_pct, err, errlen))
		return -1;
	if (o->cs.res_pct < 0.01 || o->cs.res_pct > 50)
		return xp_cli_fail(err, errlen, "--search-resolution %s: give 0.01 to 50 (percent)", arg);
	return 0;
}

int opt_search_settle(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!strcmp(arg, "0")) {
		o->cs.settle_s = 0;
		return 0;
	}
	return parse_duration_named(arg, "search settle time", &o->cs.settle_s, err, errlen);
}

/* ---- --metrics (issue 29): the address is bound when the role starts ---- */

int opt_metrics(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return xp_metrics_parse(arg, &o->metrics_addr, &o->metrics_port, err, errlen);
}
