/* Command-line options of xdpperf: the table is cli/options.c, parsing cli/cli.c, the rules cli/validate.c. */
#ifndef XP_OPTS_H
#define XP_OPTS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "connsearch/cfg.h"
#include "rfc2544/cfg.h"
#include "spec/spec.h"
#include "util/addr.h"

enum xp_role { XP_ROLE_NONE = 0, XP_ROLE_SERVER, XP_ROLE_CLIENT, XP_ROLE_PROBE };

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

/* --allow: a network clients may come from. */
struct xp_cidr {
	struct xp_addr net; /* host bits cleared */
	unsigned plen;
};

/*
 * The parsed command line: the test it describes (spec: what the client
 * runs, spec/spec.h; the server reads its peer-independent settings from it
 * too), the suites' settings (rfc, cs), the output's form, and the server's
 * policy. The option table's rows point into it (offsetof(struct xp_opts,
 * spec.duration)): a new test setting is its field in spec/spec.h and its row.
 */
struct xp_opts {
	enum xp_role role;
	struct xp_spec spec;         /* the test (client), or the settings the server shares with it */
	bool json;                   /* -J */
	bool json_stream;            /* --json-stream */
	bool one_off;                /* server: -1, serve one test then exit */
	int debug;                   /* -d */
	/* -x and -k as typed: spec.kind is made of them once they are checked (validate.c) */
	bool close_each;             /* -x: close right after connect (connection rate) */
	bool keepalive;              /* -k: hold connections open with keepalives */
	bool compare;                /* --compare */
	enum xp_engine_id compare_engine; /* --compare: the fast side (xsk or live for streams, xdp for -x/-k) */
	/* server policy and authentication (issue 9) */
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
	struct xp_addr bind_control; /* --bind-control, family 0 = every address */
	/* Issue 11: the RFC 2544 suite (user/rfc2544) */
	bool rfc2544;                /* --rfc2544 */
	struct xp_rfc2544_cfg rfc;   /* its settings */
	/* Issue 12 point 4: the connection searches (user/connsearch) */
	struct xp_cs_cfg cs;         /* --search (cs.mode) and its settings */
};

void xp_opts_default(struct xp_opts *o);
/*
 * Parse argv. Returns 0 to run, 1 when --help/--version was printed (exit 0),
 * 2 on a usage error with a one-line message in err.
 */
int xp_opts_parse(int argc, char **argv, struct xp_opts *o, char *err, size_t errlen);
void xp_usage(FILE *f);
/* --bidir's sender on the server's side (reverse_child.c; client/client.h, XP_REVERSE_CHILD_ARG): the
 * request on stdin made a test as if typed, run as one trial. The process's exit status. */
int xp_reverse_child(const char *host, const char *key_file);

#endif
