/* Command-line options of xdpperf: the table is cli/options.c, parsing cli/cli.c, the rules cli/validate.c. */
#ifndef XP_OPTS_H
#define XP_OPTS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "spec/defaults.h"
#include "spec/engine_names.h"
#include "util/addr.h"
#include "frame/mix.h"
#include "util/values.h"
#include "loader/server_prog.h"

enum xp_role { XP_ROLE_NONE = 0, XP_ROLE_SERVER, XP_ROLE_CLIENT, XP_ROLE_PROBE };
/* --syn-engine: what sends the XDP connection engine's SYNs (an engine id). */
#define XP_SYN_AUTO XP_ENGINE_AUTO
#define XP_SYN_LIVE XP_ENGINE_LIVE
#define XP_SYN_XSK XP_ENGINE_XSK

/* The XDP connection engine's retransmissions: Linux's net.ipv4.tcp_syn_retries. */
#define XP_DEFAULT_SYN_RETRIES 6u
#define XP_MAX_SYN_RETRIES     10u
/* -x's window (-P) when none is given: handshakes in flight at most. */
#define XP_DEFAULT_CONN_WINDOW 1024u
#define XP_MAX_BIND_OPT 256

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

#define XP_RFC_MAX_SIZES 16

struct xp_opts {
	enum xp_role role;
	char host[256];              /* -c ADDR as typed */
	unsigned short control_port;
	char dev[IF_NAMESIZE];       /* --dev, empty = from the route */
	int family;                  /* -4 / -6, 0 = from the address */
	uint16_t port_lo, port_hi;   /* -p */
	bool port_set;               /* -p given: else a client asks the server for a free range */
	uint16_t cport_lo, cport_hi; /* --cport */
	double duration;             /* -t */
	double interval;             /* -i */
	unsigned frame_size;         /* -l, incl. FCS */
	bool frame_size_set;         /* -l given */
	struct xp_mix mix;           /* -l imix / -l SIZE:WEIGHT,...: mixed sizes (frame/mix.h), n 0 = one size;
				      * frame_size is then the mix's largest */
	struct xp_rate rate;         /* -b */
	unsigned queues;             /* --queues, 0 = all of the interface's */
	unsigned first_queue;        /* --first-queue */
	bool udp;                    /* -u */
	bool dst_mac_set;
	uint8_t dst_mac[6];          /* --dst-mac */
	enum xp_engine_id engine;    /* --engine */
	enum xp_xdp_mode xdp_mode;   /* --xdp-mode */
	unsigned burst;              /* --burst */
	bool json;                   /* -J */
	bool json_stream;            /* --json-stream */
	bool one_off;                /* server: -1, serve one test then exit */
	int debug;                   /* -d */
	bool engine_set;             /* --engine given explicitly */
	/* socket tests (fireperf's flags) */
	unsigned long parallel;      /* -P: parallel connections (server: connections to expect) */
	bool close_each;             /* -x: close right after connect (connection rate) */
	bool keepalive;              /* -k: hold connections open with keepalives */
	bool zero;                   /* -z: send zeroes */
	unsigned threads;            /* --threads, 0 = one per CPU */
	struct xp_addr bind[XP_MAX_BIND_OPT]; /* --bind ADDR[-ADDR] */
	unsigned nbind;
	bool compare;                /* --compare */
	enum xp_engine_id compare_engine; /* --compare: the fast side (xsk or live for streams, xdp for -x/-k) */
	/* XDP connection engine */
	double cps;                  /* --cps: SYNs per second, 0 = as fast as possible */
	unsigned syn_retries;        /* --syn-retries: SYNs (and --fin's FINs) sent again before giving up */
	double keepalive_s;          /* --keepalive-interval: -k's keepalives, 0 = none */
	bool fin;                    /* --fin: close with FIN instead of RST */
	bool peer_kernel;            /* --peer kernel: the server's TCP stack answers */
	unsigned data_len;           /* --bytes: payload per connection (-x), 0 = none */
	enum xp_engine_id syn_engine; /* --syn-engine, auto: live for -x where it works, else xsk */
	/* pass/fail for scripts: see XP_EXIT_* */
	double max_loss;             /* --max-loss PCT, < 0 = not given */
	double stall_pct;            /* --stall PCT: an interval below PCT % of the running peak is a stall */
	bool stall_set;              /* --stall given: a stall sets the exit status (as --max-loss does) */
	bool require_rate;           /* --require-rate: fail if the target (-b, --cps) is not reached */
	/* server policy and authentication (issue 9) */
	const char *auth_key;        /* --auth-key FILE (both roles), NULL = none */
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
	/* Issue 10 (measurement core) */
	bool clock_tai;              /* --clock tai: stamps in CLOCK_TAI, the user says both hosts are synchronised */
	bool clock_set;              /* --clock given */
	bool rtt;                    /* --rtt: round-trip latency (the server reflects, we time) */
	bool no_stamps;              /* --no-stamps: frames carry no stamp, the server accounts none (issue 10 point 9) */
	unsigned rx_ts;              /* --rx-timestamp: XP_RXTS_SW (default), XP_RXTS_AUTO or XP_RXTS_HW */
	bool rx_ts_set;              /* --rx-timestamp given */
	/* Issue 12 (connection tests) */
	char device_netns[64];       /* --device-netns: the device under test's namespace, "" = none */
	/* Issue 11: the RFC 2544 suite (user/rfc2544) */
	bool rfc2544;                /* --rfc2544 */
	unsigned rfc_sizes[XP_RFC_MAX_SIZES]; /* --sizes, frame bytes with FCS; 0: the mix rfc_mix */
	struct xp_mix rfc_mix;       /* --sizes imix / SIZE:WEIGHT,...: the one mix of the list */
	unsigned rfc_nsizes;         /* 0: the default sizes (RFC 2544's, or RFC 5180's for IPv6) */
	unsigned rfc_tests;          /* --tests, XP_RFC_T_* bits */
	double rfc_trial_s;          /* --trial SECS */
	double rfc_loss_tol;         /* --loss-tolerance PCT: the PDR's */
	double rfc_line_bps;         /* --line-rate, L1 bits/s; 0: the sender's maximum */
	unsigned rfc_lat_trials;     /* --latency-trials */
	unsigned rfc_b2b_trials;     /* --b2b-trials */
	double pace_catchup_excess;  /* no option: the RFC 2544 trials' smooth catch-up (client/trial.c) */
	unsigned rfc_confirm;        /* --confirm-loss N: runs of a losing throughput trial again */
	char rfc_plot_dir[256];      /* --plot DIR, "" = no plots */
	/* Issue 12 point 4: the connection searches (user/connsearch) */
	unsigned search;             /* --search: enum xp_cs_mode (connsearch/search.h), 0 = none */
	double search_trial_s;       /* --search-trial SECS */
	double search_floor;         /* --search-floor CPS: the lowest rate, and the probes' */
	double search_ceiling;       /* --search-ceiling CPS, 0 = the sender's maximum, measured */
	double search_res_pct;       /* --search-resolution PCT */
	double search_settle_s;      /* --search-settle SECS: without --device-netns, the wait before each probe */
	bool rfc_bidir;              /* --bidir: every trial both ways at once (rfc2544/bidir.c) */
	bool rfc_estimate;           /* --estimate: print the suite's trial count and time, send nothing */
	bool trial_quiet;            /* no option: a suite's trial (client/trial.c), whose error the suite prints in its own line */
	uint64_t first_tuple;        /* no option: a connection search's test starts at this tuple number (connsearch/run.c) */
	/* --metrics [ADDR]:PORT (both roles, issue 29): the Prometheus endpoint (report/metrics.h); port 0: none */
	struct xp_addr metrics_addr;
	unsigned short metrics_port;
};

/* --tests: which RFC 2544 tests the suite runs. */
#define XP_RFC_T_THROUGHPUT (1u << 0)
#define XP_RFC_T_LATENCY    (1u << 1)
#define XP_RFC_T_LOSS       (1u << 2)
#define XP_RFC_T_B2B        (1u << 3)
#define XP_RFC_T_ALL        0xfu

/* Exit statuses (documented in --help, the man page and the README). */
#define XP_EXIT_OK       0
#define XP_EXIT_RUNTIME  1 /* the test could not run or ended early */
#define XP_EXIT_USAGE    2
/* --stall's default: an interval below 10 % of the running peak is a stall (meas/stall.h). */
#define XP_STALL_DEFAULT_PCT 10.0
#define XP_EXIT_LOSS     3 /* --max-loss: more was lost than allowed */
#define XP_EXIT_SHORT    4 /* --require-rate: the offered load fell short of the target (XP_RATE_TOLERANCE_PCT) */

void xp_opts_default(struct xp_opts *o);
/*
 * Parse argv. Returns 0 to run, 1 when --help/--version was printed (exit 0),
 * 2 on a usage error with a one-line message in err.
 */
int xp_opts_parse(int argc, char **argv, struct xp_opts *o, char *err, size_t errlen);
void xp_usage(FILE *f);

#endif
