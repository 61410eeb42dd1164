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
#include "server/config.h"
#include "otg/http.h"

/* XP_ROLE_OTG: --otg, the OTG REST API; XP_ROLE_CONFIG: --config FILE, the same controller once (issue 27). */
enum xp_role { XP_ROLE_NONE = 0, XP_ROLE_SERVER, XP_ROLE_CLIENT, XP_ROLE_PROBE, XP_ROLE_OTG, XP_ROLE_CONFIG };

/*
 * The parsed command line: the test it describes (spec: what the client
 * runs, spec/spec.h), the suites' settings (rfc, cs), the output's form, and
 * the server's configuration (srv: server/config.h). The option table's rows point into it (offsetof(struct xp_opts,
 * spec.duration)): a new test setting is its field in spec/spec.h and its row.
 */
struct xp_opts {
	enum xp_role role;
	struct xp_spec spec;         /* the test (client), or the settings the server shares with it */
	bool json;                   /* -J */
	bool json_stream;            /* --json-stream */
	int debug;                   /* -d */
	bool help;                   /* -h: xp_opts_parse prints --help and returns 1 */
	/* -x and -k as typed: spec.kind is made of them once they are checked (validate.c) */
	bool close_each;             /* -x: close right after connect (connection rate) */
	bool keepalive;              /* -k: hold connections open with keepalives */
	bool compare;                /* --compare */
	enum xp_engine_id compare_engine; /* --compare: the fast side (xsk or live for streams, xdp for -x/-k) */
	/* The server's configuration: its own options' rows point into it; the
	 * options both roles take (control port, --dev, -p, -P, --auth-key, ...)
	 * are copied in by xp_opts_parse once the rules passed. */
	struct xp_server_cfg srv;
	/* Issue 11: the RFC 2544 suite (user/rfc2544) */
	bool rfc2544;                /* --rfc2544 */
	struct xp_rfc2544_cfg rfc;   /* its settings */
	/* Issue 12 point 4: the connection searches (user/connsearch) */
	struct xp_cs_cfg cs;         /* --search (cs.mode) and its settings */
	/* --metrics [ADDR]:PORT (both roles, issue 29): the Prometheus endpoint (report/metrics.h); port 0: none */
	struct xp_addr metrics_addr;
	unsigned short metrics_port;
	/* Issue 26: --flows FILE and the one-flow shortcuts as typed; cli/flow_opts.c makes the spec's
	 * traffic of them once every option is read (the family and -u may come later). */
	struct {
		char file[4096];             /* --flows, "" = none */
		unsigned nvlan;              /* --vlan VID[,VID]: 0..2 tags, [0] outermost */
		unsigned vid[2];
		unsigned dscp, ttl;          /* --dscp, --ttl (given: as xp_given says) */
		char src[128], dst[128];     /* --src / --dst ADDR[-ADDR], "" = none */
	} flow;
	/* Issue 27: the Open Traffic Generator front ends (otg/http.h, otg/run_file.h) */
	struct {
		struct xp_otg_listen listen;  /* --otg [ADDR]:PORT; its files point into the names below */
		char token[4096], cert[4096], key[4096]; /* --otg-token, --otg-cert, --otg-key; "" = none */
		char config[4096];            /* --config FILE */
	} otg;
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
/* An OTG controller's sender on the agent's side (send_child.c): `xdpperf --send-test [KEYFILE]`, the request on stdin. */
int xp_send_child(const char *key_file);

#endif
