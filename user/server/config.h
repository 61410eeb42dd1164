/*
 * The server's configuration: what `xdpperf -s` serves with, apart from the
 * command line that the CLI parses (cli/opts.h embeds it as `srv`, the
 * server's option rows point into it, and the options both roles take are
 * copied in after parsing). Anything else that runs a server (the control-
 * path fuzzer, the unit tests) builds one from xp_server_cfg_default.
 */
#ifndef XP_SERVER_CONFIG_H
#define XP_SERVER_CONFIG_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

#include "loader/xdp_attach.h"
#include "util/addr.h"

/* Server policy (--max-* and friends): safe defaults for a host with real services on it. */
#define XP_DEFAULT_MAX_DURATION 3600
#define XP_DEFAULT_MAX_TESTS 8
#define XP_DEFAULT_MAX_CONTROL_PER_ADDR 4
#define XP_DEFAULT_MAX_PARALLEL 100000
#define XP_DEFAULT_MAX_PARALLEL_TOTAL 200000
#define XP_DEFAULT_MAX_WORKERS 8
#define XP_DEFAULT_MAX_WORKERS_TOTAL 16
#define XP_DEFAULT_MAX_LISTEN_PORTS 256
#define XP_MAX_ALLOW 32

struct xp_server_cfg {
	/* Taken from the options both roles have (the CLI copies them in). */
	unsigned short control_port; /* the control connection's port */
	char dev[IF_NAMESIZE];       /* --dev: where tests are counted, empty = the route back to the client */
	enum xp_xdp_mode xdp_mode;   /* --xdp-mode of the counting program */
	bool standing;               /* -P N / --engine socket: standing listeners on port_lo..port_hi */
	uint16_t port_lo, port_hi;   /* -p: the standing listeners' ports */
	unsigned long parallel;      /* -P: connections the standing listeners expect */
	unsigned threads;            /* --threads: the listeners' event loops, 0 = one per CPU */
	int debug;                   /* -d */
	const char *auth_key;        /* --auth-key FILE, NULL = none */
	/* The server's own options. */
	bool one_off;                /* -1: serve one test, then exit */
	struct xp_addr bind_control; /* --bind-control, family 0 = every address */
	double max_duration;         /* --max-duration */
	uint16_t test_port_lo, test_port_hi; /* --test-ports */
	unsigned max_tests;          /* --max-tests */
	unsigned max_control_per_addr; /* --max-control-per-addr */
	unsigned long max_parallel, max_parallel_total; /* --max-parallel, --max-parallel-total */
	unsigned max_workers, max_workers_total;        /* --max-workers, --max-workers-total */
	unsigned max_listen_ports;   /* --max-listen-ports */
	bool allow_lo;               /* --allow-lo */
	struct xp_cidr allow[XP_MAX_ALLOW]; /* --allow, none = any address */
	unsigned nallow;
	struct xp_cidr allow_bind[XP_MAX_ALLOW]; /* --allow-bind: more networks a start's bind addresses may lie in */
	unsigned nallow_bind;
};

/* Every field its default: what `xdpperf -s` alone serves with. */
void xp_server_cfg_default(struct xp_server_cfg *cfg);

#endif
