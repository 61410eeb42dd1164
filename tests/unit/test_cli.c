/* Command-line parsing: what each invocation turns into, and usage errors.
 * The option table as a whole (--help against the table, every option in
 * every context) is checked by test_cli_table.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "cli/options.h"
#include "tests/unit/cli_parse.h"


struct usage_case {
	const char *line, *word;
};

/* Each line must be a usage error (2) with a one-line message containing word. */
static void expect_usage_errors(const struct usage_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		static struct xp_opts o;
		char err[256];
		int r = parse(cases[i].line, &o, err, sizeof(err));
		if (r != 2 || !strstr(err, cases[i].word))
			fail_msg("'%s': result %d, message '%s' (want 2 and '%s')", cases[i].line, r, err,
				 cases[i].word);
		assert_null(strchr(err, '\n'));
	}
}

static void test_defaults(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 198.19.1.2", &o, err, sizeof(err)), 0);
	assert_int_equal(o.role, XP_ROLE_CLIENT);
	assert_string_equal(o.spec.host, "198.19.1.2");
	assert_int_equal(o.spec.control_port, 5301);
	assert_int_equal(o.spec.traffic[0].port_lo, 63000);
	assert_int_equal(o.spec.traffic[0].port_hi, 63015);
	assert_true(o.spec.duration == 10);
	assert_true(o.spec.interval == 1);
	assert_int_equal(o.spec.traffic[0].frame_size, 64);
	assert_int_equal(o.spec.traffic[0].rate.unit, XP_RATE_NONE);
	assert_int_equal(o.spec.engine, XP_ENGINE_AUTO);
	assert_int_equal(o.spec.queues, 0);
}

static void test_client_options(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 2001:2:0:2::2 -6 -t 5 -i 0.5 -l 1518 -b 1.5Mpps -p 7000:7003 "
			       "--cport 2000:2999 --queues 2 --first-queue 1 -u -J --dst-mac 02:00:00:00:00:01 "
			       "--control-port 6000 -D eth1",
			       &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.family, AF_INET6);
	assert_true(o.spec.duration == 5);
	assert_true(o.spec.interval == 0.5);
	assert_int_equal(o.spec.traffic[0].frame_size, 1518);
	assert_int_equal(o.spec.traffic[0].rate.unit, XP_RATE_PPS);
	assert_true(o.spec.traffic[0].rate.value == 1.5e6);
	assert_int_equal(o.spec.traffic[0].port_lo, 7000);
	assert_int_equal(o.spec.traffic[0].port_hi, 7003);
	assert_int_equal(o.spec.traffic[0].cport_lo, 2000);
	assert_int_equal(o.spec.traffic[0].cport_hi, 2999);
	assert_int_equal(o.spec.queues, 2);
	assert_int_equal(o.spec.first_queue, 1);
	assert_true(o.spec.traffic[0].udp);
	assert_true(o.json);
	assert_true(o.spec.traffic[0].dst_mac_set);
	assert_int_equal(o.spec.traffic[0].dst_mac[5], 1);
	assert_int_equal(o.spec.control_port, 6000);
	assert_string_equal(o.spec.dev, "eth1");
	/* On the client, --xdp-mode attaches the XDP connection engine's program (issue 14: taken or refused). */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -x --xdp-mode skb", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.xdp_mode, XP_XDP_SKB);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine live -b 1Mpps --burst 32", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_LIVE);
	assert_int_equal(o.spec.burst, 32);
}

static void test_server_options(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -s -D xps0 -1 --control-port 5400", &o, err, sizeof(err)), 0);
	assert_int_equal(o.role, XP_ROLE_SERVER);
	assert_true(o.srv.one_off);
	assert_string_equal(o.spec.dev, "xps0");
	/* The options both roles take reach the server's configuration too. */
	assert_string_equal(o.srv.dev, "xps0");
	assert_int_equal(o.srv.control_port, 5400);
	assert_false(o.srv.standing);
	assert_int_equal(o.srv.xdp_mode, XP_XDP_AUTO);
	assert_null(o.srv.auth_key);
	assert_int_equal(parse("xdpperf -s -P 40 -p 6000:6007 --threads 2 -d --xdp-mode skb --auth-key /k", &o, err,
			       sizeof(err)), 0);
	assert_true(o.srv.standing); /* -P: standing listeners (the socket engine) */
	assert_int_equal(o.srv.port_lo, 6000);
	assert_int_equal(o.srv.port_hi, 6007);
	assert_int_equal(o.srv.parallel, 40);
	assert_int_equal(o.srv.threads, 2);
	assert_int_equal(o.srv.debug, 1);
	assert_int_equal(o.srv.xdp_mode, XP_XDP_SKB);
	assert_string_equal(o.srv.auth_key, "/k");
	assert_int_equal(o.srv.control_port, 5301);
	assert_int_equal(parse("xdpperf -s --engine socket", &o, err, sizeof(err)), 0);
	assert_true(o.srv.standing);
	assert_int_equal(o.srv.port_lo, 63000);

	assert_int_equal(parse("xdpperf -s -b 1G", &o, err, sizeof(err)), 2);
	assert_non_null(strstr(err, "client option"));
}

static void test_interval_clamped_to_duration(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -t 0.5 -i 2", &o, err, sizeof(err)), 0);
	assert_true(o.spec.interval == 0.5);
}

static void test_usage_errors(void **state)
{
	struct usage_case cases[] = {
		{ "xdpperf", "-s" },
		{ "xdpperf -s -c 1.2.3.4", "exclude" },
		{ "xdpperf -c", "needs a value" },
		{ "xdpperf -c 1.2.3.4 --bogus", "unknown option" },
		{ "xdpperf -c 1.2.3.4 -Q", "unknown option -Q" },
		{ "xdpperf -c 1.2.3.4 extra", "unexpected argument" },
		{ "xdpperf -c 1.2.3.4 -p 63010:63000", "reversed" },
		{ "xdpperf -c 1.2.3.4 -p 0", "port" },
		{ "xdpperf -c 1.2.3.4 -l 63", "64" },
		{ "xdpperf -c 1.2.3.4 -b 0", "rate" },
		{ "xdpperf -c 1.2.3.4 -t 0", "duration" },
		{ "xdpperf -c 1.2.3.4 -i 0.01", "interval" },
		{ "xdpperf -c 1.2.3.4 --queues 0", "queue count" },
		{ "xdpperf -c 1.2.3.4 --engine warp", "unknown engine" },
		{ "xdpperf -c 1.2.3.4 --xdp-mode turbo", "XDP mode" },
		{ "xdpperf -c 1.2.3.4 -6", "not an IPv6 address" },
		{ "xdpperf -c 1.2.3.4 -p 5300:5302", "control port" },
		{ "xdpperf -c 1.2.3.4 --dst-mac 02:00", "MAC" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_help_and_version(void **state)
{
	static struct xp_opts o;
	char err[256];
	FILE *saved = stdout;
	stdout = fopen("/dev/null", "w");
	int h = parse("xdpperf --help", &o, err, sizeof(err));
	int v = parse("xdpperf -V", &o, err, sizeof(err));
	fclose(stdout);
	stdout = saved;
	assert_int_equal(h, 1);
	assert_int_equal(v, 1);
}

/* fireperf's own invocations, verbatim with xdpperf's name, select the socket engine. */
static void test_fireperf_invocations(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -s -P 10000 -p 63000:63010", &o, err, sizeof(err)), 0);
	assert_int_equal(o.role, XP_ROLE_SERVER);
	assert_int_equal(o.spec.engine, XP_ENGINE_SOCKET);
	assert_int_equal(o.spec.parallel, 10000);
	assert_int_equal(o.spec.traffic[0].port_lo, 63000);
	assert_int_equal(o.spec.traffic[0].port_hi, 63010);

	assert_int_equal(parse("xdpperf -c 198.19.1.2 -P 1 -x -p 63000:63010", &o, err, sizeof(err)), 0);
	assert_int_equal(o.role, XP_ROLE_CLIENT);
	assert_int_equal(o.spec.engine, XP_ENGINE_SOCKET);
	assert_int_equal(o.spec.parallel, 1);
	assert_true(o.close_each);
	assert_false(o.keepalive);

	assert_int_equal(parse("xdpperf -c 198.19.1.2 -P 10000 -x -p 63000:63010", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.parallel, 10000);
	assert_true(o.close_each);

	assert_int_equal(parse("xdpperf -c 198.19.1.2 -P 100000 -k -p 63000:63010 -t 60", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_SOCKET);
	assert_true(o.keepalive);
	assert_int_equal(o.spec.parallel, 100000);

	/* no -x/-k: a stream; -z zeroes; -d debug */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -P 8 -z -d -t 5", &o, err, sizeof(err)), 0);
	assert_false(o.close_each);
	assert_false(o.keepalive);
	assert_true(o.spec.traffic[0].zero);
	assert_int_equal(o.debug, 1);
}

static void test_socket_options(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine socket --threads 3 --bind 198.18.1.10-198.18.1.25 "
			       "--bind 198.18.1.2", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.threads, 3);
	assert_int_equal(o.spec.nbind, 17);
	char a[64];
	assert_string_equal(xp_addr_str(&o.spec.bind[0], a, sizeof(a)), "198.18.1.10");
	assert_string_equal(xp_addr_str(&o.spec.bind[15], a, sizeof(a)), "198.18.1.25");
	assert_string_equal(xp_addr_str(&o.spec.bind[16], a, sizeof(a)), "198.18.1.2");
	assert_int_equal(parse("xdpperf -c 2001:2:0:2::2 --bind 2001:2:0:1::10-2001:2:0:1::1f -P 2", &o, err,
			       sizeof(err)), 0);
	assert_int_equal(o.spec.nbind, 16);
	assert_string_equal(xp_addr_str(&o.spec.bind[15], a, sizeof(a)), "2001:2:0:1::1f");
	/* --compare runs a stream test on both engines */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -P 4 --compare", &o, err, sizeof(err)), 0);
	assert_true(o.compare);
	/* the XDP connection engine: named, or picked by its own flags */
	/* (no -P: it does nothing for the XDP connection engine's -x, issue 14) */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -x --engine xdp --cps 50000 --fin", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_true(o.spec.cps == 50000);
	assert_true(o.spec.fin);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -k -P 1000 --cps 10000", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -x --peer kernel", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_true(o.spec.peer_kernel);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -x -P 64 --compare", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_SOCKET);
	assert_int_equal(o.spec.data_len, 0);
}

/* --bytes: the XDP connection engine's data mode (-x only, one segment). */
static void test_bytes(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -x --bytes 1000 --cps 10000 -t 2 -J", &o, err,
			       sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_true(o.close_each);
	assert_int_equal(o.spec.data_len, 1000);
	assert_false(o.spec.fin);
	assert_int_equal(parse("xdpperf -c 2001:2::2 --engine xdp -x --bytes 1", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.data_len, 1);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -x --bytes 1400 --fin", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.data_len, 1400);
	/* like --cps and --fin, it picks the XDP connection engine by itself */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -x --bytes 64", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_int_equal(o.spec.data_len, 64);
}

static void test_bytes_usage_errors(void **state)
{
	struct usage_case cases[] = {
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --bytes 0", "1..1400" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --bytes 1401", "1..1400" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --bytes 1k", "--bytes" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --bytes -5", "--bytes" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --bytes", "needs a value" },
		{ "xdpperf -c 1.2.3.4 --bytes 100", "-x" },
		{ "xdpperf -c 1.2.3.4 --engine xdp --bytes 100", "-x" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -k --bytes 100", "not -k" },
		{ "xdpperf -c 1.2.3.4 --engine socket -x --bytes 100", "--engine xdp" },
		{ "xdpperf -c 1.2.3.4 --engine xsk -x --bytes 100", "--engine xdp" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --peer kernel --bytes 100", "--peer kernel" },
		{ "xdpperf -c 1.2.3.4 -x -P 64 --compare --bytes 100", "--compare" },
		{ "xdpperf -s --bytes 100", "client option" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
	/* one line each */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct xp_opts o;
		char err[256];
		parse(cases[i].line, &o, err, sizeof(err));
		assert_null(strchr(err, '\n'));
	}
}

/* --no-stamps (issue 10 point 9): taken by frame stream tests, refused where there are no stamps to leave
 * out or where something needs them. */
static void test_no_stamps(void **state)
{
	(void)state;
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 198.18.1.1 --no-stamps", &o, err, sizeof(err)), 0);
	assert_true(o.spec.no_stamps);
	assert_int_equal(parse("xdpperf -c 198.18.1.1 --engine xsk --no-stamps -l 1518 -b 1Mpps", &o, err, sizeof(err)),
			 0);
	assert_true(o.spec.no_stamps);
	assert_int_equal(parse("xdpperf -c 198.18.1.1", &o, err, sizeof(err)), 0);
	assert_false(o.spec.no_stamps);
	struct usage_case cases[] = {
		{ "xdpperf -c 1.2.3.4 --no-stamps --rfc2544", "RFC 2544" },
		{ "xdpperf -c 1.2.3.4 --no-stamps --rtt", "--rtt" },
		{ "xdpperf -c 1.2.3.4 --no-stamps --clock tai", "--clock" },
		{ "xdpperf -c 1.2.3.4 --rx-timestamp sw --no-stamps", "--rx-timestamp" },
		{ "xdpperf -c 1.2.3.4 --no-stamps --engine socket", "segments carry no stamp" },
		{ "xdpperf -c 1.2.3.4 --no-stamps -x --engine xdp", "carry no stamp" },
		{ "xdpperf -s --no-stamps", "client option" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

static void test_socket_usage_errors(void **state)
{
	struct usage_case cases[] = {
		{ "xdpperf -c 1.2.3.4 -P 0", "-P" },
		{ "xdpperf -c 1.2.3.4 -P many", "-P" },
		{ "xdpperf -c 1.2.3.4 -x -k", "exclude" },
		{ "xdpperf -c 1.2.3.4 -x --engine xsk", "socket engine" },
		{ "xdpperf -c 1.2.3.4 --engine xdp", "-x" },
		{ "xdpperf -c 1.2.3.4 --cps 1000 -P 4", "-x" },
		{ "xdpperf -c 1.2.3.4 --cps 1000 --engine socket -x", "--engine xdp" },
		{ "xdpperf -c 1.2.3.4 -x --engine xdp -z", "socket engine" },
		{ "xdpperf -c 1.2.3.4 -k --fin --engine xdp", "--fin" },
		{ "xdpperf -c 1.2.3.4 -x --engine xdp --peer mars", "unknown peer" },
		{ "xdpperf -c 1.2.3.4 -P 2 -u", "TCP only" },
		{ "xdpperf -c 1.2.3.4 --bind 198.18.1.25-198.18.1.10", "reversed" },
		{ "xdpperf -c 1.2.3.4 --bind 198.18.1.1-2001:2::1", "families" },
		{ "xdpperf -c 1.2.3.4 --bind 10.0.0.0-10.0.255.255", "more than" },
		{ "xdpperf -c 1.2.3.4 --bind nowhere", "not an address" },
		{ "xdpperf -c 1.2.3.4 --threads 0", "thread" },
		{ "xdpperf -s --bind 198.18.1.2", "client option" },
		{ "xdpperf -c 1.2.3.4 --burst 10", "-b" },
		{ "xdpperf -c 1.2.3.4 --burst 0 -b 1kpps", "burst" },
		{ "xdpperf -c 1.2.3.4 -P 2 --burst 10 -b 1kpps", "frame engines" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

/* --syn-engine: who sends the XDP connection engine's SYNs. */
static void test_syn_engine(void **state)
{
	static struct xp_opts o;
	char err[256];
	(void)state;
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -x", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.syn_engine, XP_SYN_AUTO);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -x --syn-engine live", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_int_equal(o.spec.syn_engine, XP_SYN_LIVE);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -x --syn-engine xsk --cps 1000", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.syn_engine, XP_SYN_XSK);
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --engine xdp -k -P 100 --syn-engine xsk", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.syn_engine, XP_SYN_XSK);
	/* Like --cps, it selects the XDP connection engine with -x. */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 -x --syn-engine live", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
}

static void test_syn_engine_usage_errors(void **state)
{
	(void)state;
	static const struct usage_case cases[] = {
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --syn-engine socket", "unknown SYN engine" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --syn-engine", "needs a value" },
		{ "xdpperf -c 1.2.3.4 --syn-engine live", "--engine xdp" },
		{ "xdpperf -c 1.2.3.4 --engine xsk --syn-engine xsk", "--engine xdp" },
		{ "xdpperf -s --syn-engine live", "client option" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

/* A test kind an engine does not run: refused, naming both; --engine on the server only takes socket. */
static void test_engine_kinds(void **state)
{
	struct usage_case cases[] = {
		{ "xdpperf -c 1.2.3.4 --engine live -x", "--engine live" },
		{ "xdpperf -c 1.2.3.4 --engine xsk -k", "--engine xsk" },
		{ "xdpperf -c 1.2.3.4 --engine none -x", "--engine none" },
		{ "xdpperf -c 1.2.3.4 --engine xdp", "add -x" },
		{ "xdpperf -c 1.2.3.4 --cps 1000", "--cps selects the XDP connection engine" },
		{ "xdpperf -c 1.2.3.4 --bytes 1000", "add -x" },
		{ "xdpperf -s --engine xsk", "--engine socket" },
		{ "xdpperf -s --engine live", "--engine socket" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
	/* --bytes picks its engine and its test by itself: one message, one fix. */
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 1.2.3.4 --bytes 1000 -x", &o, err, sizeof(err)), 0);
	assert_int_equal(parse("xdpperf -c 1.2.3.4 --cps 1000 -x", &o, err, sizeof(err)), 0);
	assert_int_equal(o.spec.engine, XP_ENGINE_XDP);
	assert_int_equal(parse("xdpperf -s --engine socket", &o, err, sizeof(err)), 0);
}

/* The cases of issue 14: what was silently ignored is now refused, saying what to do. */
static void test_ignored_options_refused(void **state)
{
	struct usage_case cases[] = {
		{ "xdpperf -c 1.2.3.4 -P 4 -b 100M", "no rate limit" },
		{ "xdpperf -c 1.2.3.4 -l 200 -P 4", "-l is for the frame engines" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x -b 1kpps", "--cps" },
		{ "xdpperf -c 1.2.3.4 -u --engine xdp -x", "TCP only" },
		{ "xdpperf -c 1.2.3.4 -J --json-stream", "exclude" },
		{ "xdpperf -s -t 5", "-t is a client option" },
		{ "xdpperf -s -i 2", "client option" },
		{ "xdpperf -s -x", "client option" },
		{ "xdpperf -s -J", "client option" },
		{ "xdpperf -s -p 7000:7003", "-P N" },
		{ "xdpperf -c 1.2.3.4 -1", "server option" },
		{ "xdpperf -c 1.2.3.4 --xdp-mode skb", "--xdp-mode is for the XDP connection engine" },
		{ "xdpperf -c 1.2.3.4 --engine none -l 100", "none engine" },
		{ "xdpperf -c 1.2.3.4 --engine none -b 1Mpps", "none engine" },
		{ "xdpperf -c 1.2.3.4 -P 4 --cport 2000:2001", "source ports" },
		{ "xdpperf -c 1.2.3.4 -P 4 --queues 2", "--threads" },
		{ "xdpperf -c 1.2.3.4 -P 4 -x -z", "-z is for stream tests" },
		/* Issue 12 made -P the XDP connection engine's window: refused only beyond its limit. */
		{ "xdpperf -c 1.2.3.4 --engine xdp -x -P 2000000", "at most 1048576 connections in its window" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --keepalive-interval 5", "only -k holds connections open" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -k --keepalive-interval 0.01", "too short" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --syn-retries 11", "0..10" },
		{ "xdpperf -c 1.2.3.4 --engine socket -x --syn-retries 3", "net.ipv4.tcp_syn_retries" },
		{ "xdpperf -c 1.2.3.4 -P 4 --compare -b 1M", "one side" },
		{ "xdpperf -c 1.2.3.4 -P 4 --compare --engine none", "--compare" },
		{ "xdpperf -c 1.2.3.4 -x --compare --engine xsk", "--engine xdp" },
		{ "xdpperf -c 1.2.3.4 --engine xdp -x --burst 8", "--cps" },
		{ "xdpperf -c 1.2.3.4 --require-rate", "-b" },
		{ "xdpperf -c 1.2.3.4 -P 4 --max-loss 1", "--max-loss is for" },
		{ "xdpperf -c 1.2.3.4 --max-loss 101", "0..100" },
		{ "xdpperf -c 1.2.3.4 -i 0", "interval must be greater than 0" },
		{ "xdpperf -c 999.1.1.1", "resolve" },
		{ "xdpperf -c 198.19.1", "not a valid IPv4 address" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
	/* and what goes together still parses */
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -c 1.2.3.4 --engine live -b 1Mpps --require-rate --max-loss 0.5", &o, err,
			       sizeof(err)), 0);
	assert_true(o.spec.require_rate);
	assert_true(o.spec.max_loss == 0.5);
	assert_int_equal(parse("xdpperf -c 1.2.3.4 -P 4 --compare --engine live", &o, err, sizeof(err)), 0);
	assert_int_equal(o.compare_engine, XP_ENGINE_LIVE);
	assert_int_equal(parse("xdpperf -c 1.2.3.4 -P 4 --compare", &o, err, sizeof(err)), 0);
	assert_int_equal(o.compare_engine, XP_ENGINE_XSK);
	assert_int_equal(parse("xdpperf -c 1.2.3.4 -x -P 4 --compare", &o, err, sizeof(err)), 0);
	assert_int_equal(o.compare_engine, XP_ENGINE_XDP);
	assert_int_equal(parse("xdpperf -c 1.2.3.4 --engine xdp -x -P 64 --peer kernel", &o, err, sizeof(err)), 0);
	assert_int_equal(parse("xdpperf -s -P 4 -p 7000:7003", &o, err, sizeof(err)), 0);
	assert_int_equal(parse("xdpperf -c 1.2.3.4 --engine xdp -x --cps 1000 --burst 8 --require-rate", &o, err,
			       sizeof(err)), 0);
}

/* L2 bit rates as --help and the README write them. */
static void test_l2_rates_as_documented(void **state)
{
	static struct xp_opts o;
	char err[256];
	const char *rates[] = { "1G-l2", "800M-l2", "1Gbps-l2", "100Ml2" };
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line), "xdpperf -c 1.2.3.4 -b %s", rates[i]);
		if (parse(line, &o, err, sizeof(err)) != 0 || o.spec.traffic[0].rate.unit != XP_RATE_BPS_L2)
			fail_msg("'%s': %s", line, err);
	}
}

/* Server policy (issue 9): safe defaults, each limit a flag, server options refused with -c. */
static void test_server_policy_options(void **state)
{
	static struct xp_opts o;
	char err[256];
	assert_int_equal(parse("xdpperf -s", &o, err, sizeof(err)), 0);
	assert_true(o.srv.max_duration == 3600);
	assert_int_equal(o.srv.test_port_lo, 1024);
	assert_int_equal(o.srv.test_port_hi, 65535);
	assert_int_equal(o.srv.max_tests, 8);
	assert_int_equal(o.srv.max_control_per_addr, 4);
	assert_int_equal(o.srv.max_parallel, 100000);
	assert_int_equal(o.srv.max_workers, 8);
	assert_int_equal(o.srv.nallow, 0);
	assert_false(o.srv.allow_lo);
	assert_string_equal(o.spec.auth_key, "");

	assert_int_equal(parse("xdpperf -s --allow 198.18.0.0/15 --allow 2001:2::/48 --max-duration 1m --test-ports "
			       "60000:65000 --max-tests 2 --max-control-per-addr 1 --max-parallel 10 "
			       "--max-parallel-total 20 --max-workers 0 --max-workers-total 1 --max-listen-ports 4 "
			       "--allow-lo --auth-key /k", &o, err, sizeof(err)), 0);
	assert_int_equal(o.srv.nallow, 2);
	assert_int_equal(o.srv.allow[1].plen, 48);
	assert_true(o.srv.max_duration == 60);
	assert_int_equal(o.srv.test_port_lo, 60000);
	assert_int_equal(o.srv.max_tests, 2);
	assert_int_equal(o.srv.max_control_per_addr, 1);
	assert_int_equal(o.srv.max_parallel, 10);
	assert_int_equal(o.srv.max_parallel_total, 20);
	assert_int_equal(o.srv.max_workers, 0);
	assert_int_equal(o.srv.max_workers_total, 1);
	assert_int_equal(o.srv.max_listen_ports, 4);
	assert_true(o.srv.allow_lo);
	assert_string_equal(o.spec.auth_key, "/k");

	/* Issue 28: more networks for bind addresses (repeatable), the control port on one address. */
	assert_int_equal(o.srv.nallow_bind, 0);
	assert_int_equal(o.srv.bind_control.family, 0);
	assert_int_equal(parse("xdpperf -s --allow-bind 198.18.1.0/24 --allow-bind 2001:2:0:1::/64 --bind-control "
			       "2001:2:0:2::2", &o, err, sizeof(err)), 0);
	assert_int_equal(o.srv.nallow_bind, 2);
	assert_int_equal(o.srv.allow_bind[0].plen, 24);
	assert_int_equal(o.srv.allow_bind[1].plen, 64);
	assert_int_equal(o.srv.bind_control.family, AF_INET6);
	assert_int_equal(parse("xdpperf -s --bind-control 198.19.1.2", &o, err, sizeof(err)), 0);
	assert_int_equal(o.srv.bind_control.family, AF_INET);
	/* The key is for both ends. */
	assert_int_equal(parse("xdpperf -c 198.19.1.2 --auth-key /k", &o, err, sizeof(err)), 0);
	static const struct usage_case cases[] = {
		{ "xdpperf -c 198.19.1.2 --max-tests 2", "--max-tests is a server option" },
		{ "xdpperf -c 198.19.1.2 --allow 198.18.0.0/15", "--allow is a server option" },
		{ "xdpperf -c 198.19.1.2 --allow-lo", "--allow-lo is a server option" },
		{ "xdpperf -c 198.19.1.2 --max-duration 5", "--max-duration is a server option" },
		{ "xdpperf -s --allow 198.18.0.0/33", "prefix length" },
		{ "xdpperf -s --allow nowhere", "not a network" },
		{ "xdpperf -c 198.19.1.2 --allow-bind 198.18.1.0/24", "--allow-bind is a server option" },
		{ "xdpperf -c 198.19.1.2 --bind-control 198.18.1.2", "--bind-control is a server option" },
		{ "xdpperf -s --allow-bind 198.18.1.0/33", "prefix length" },
		{ "xdpperf -s --bind-control 198.18.1.0/24", "--bind-control '198.18.1.0/24' is not an IPv4 or IPv6 address" },
		{ "xdpperf -s --bind-control host", "not an IPv4 or IPv6 address" },
		{ "xdpperf -s --max-duration 0", "duration" },
		{ "xdpperf -s --max-duration 1e308", "duration" },
		{ "xdpperf -s --max-tests 0", "--max-tests" },
		{ "xdpperf -s --max-tests 1.5", "--max-tests" },
		{ "xdpperf -s --max-parallel -1", "--max-parallel" },
		{ "xdpperf -s --test-ports 2000:1000", "reversed" },
	};
	expect_usage_errors(cases, sizeof(cases) / sizeof(cases[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_client_options),
		cmocka_unit_test(test_server_options),
		cmocka_unit_test(test_interval_clamped_to_duration),
		cmocka_unit_test(test_usage_errors),
		cmocka_unit_test(test_help_and_version),
		cmocka_unit_test(test_fireperf_invocations),
		cmocka_unit_test(test_socket_options),
		cmocka_unit_test(test_socket_usage_errors),
		cmocka_unit_test(test_bytes),
		cmocka_unit_test(test_bytes_usage_errors),
		cmocka_unit_test(test_syn_engine),
		cmocka_unit_test(test_syn_engine_usage_errors),
		cmocka_unit_test(test_engine_kinds),
		cmocka_unit_test(test_ignored_options_refused),
		cmocka_unit_test(test_l2_rates_as_documented),
		cmocka_unit_test(test_no_stamps),
		cmocka_unit_test(test_server_policy_options),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
