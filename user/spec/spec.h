/*
 * A test's specification: everything a test is, as a value that any front
 * end builds (the command line over its option table, cli/; a suite for each
 * of its trials, rfc2544/ and connsearch/; --compare for each of its two
 * sides) and the client runs (client/client.h, xp_client_test). Role-free:
 * the peer, the engine and how it sends, the test's kind, its traffic, its
 * length and interval, its stamps and its pass/fail limits.
 *
 * What is not here: how one run is reported (a sink, report/report.h), a
 * suite's own settings (rfc2544/cfg.h, connsearch/cfg.h), the server's
 * policy, and how the command line was typed (cli/opts.h).
 */
#ifndef XP_SPEC_H
#define XP_SPEC_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame/flow_pat.h"
#include "frame/mix.h"
#include "spec/defaults.h"
#include "spec/engine_names.h"
#include "spec/kind.h"
#include "spec/xdp_mode.h"
#include "util/addr.h"
#include "util/values.h"

struct json_object;

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
/* --stall's default: an interval below 10 % of the running peak is a stall (meas/stall.h). */
#define XP_STALL_DEFAULT_PCT 10.0
/* Exit statuses: a test's outcome against its limits (documented in --help, the man page and the README). */
#define XP_EXIT_OK       0
#define XP_EXIT_RUNTIME  1 /* the test could not run or ended early */
#define XP_EXIT_USAGE    2
#define XP_EXIT_LOSS     3 /* --max-loss: more was lost than allowed */
#define XP_EXIT_SHORT    4 /* --require-rate: the offered load fell short of the target (XP_RATE_TOLERANCE_PCT) */
/* The control channel's TCP port when none is given (proto/channel.h says the same). */
#define XP_SPEC_CONTROL_PORT 5301

/*
 * One stream of traffic: its frames (size or mix), rate, protocol and
 * ports. A test holds an array of them; today every test has exactly one
 * (traffic[0]). The flows issue (26) grows the array: several streams per
 * test, each with its own size, rate and ports.
 */
struct xp_stream {
	unsigned frame_size;         /* -l, incl. FCS; 0 = the largest the interface's MTU allows */
	bool frame_size_set;         /* -l given */
	struct xp_mix mix;           /* -l imix / -l SIZE:WEIGHT,...: mixed sizes (frame/mix.h), n 0 = one size;
				      * frame_size is then the mix's largest */
	struct xp_rate rate;         /* -b */
	bool udp;                    /* -u */
	bool zero;                   /* -z: send zeroes */
	uint16_t port_lo, port_hi;   /* -p: the server's ports */
	bool port_set;               /* -p given: else a client asks the server for a free range */
	uint16_t cport_lo, cport_hi; /* --cport: the client's source ports */
	bool dst_mac_set;
	uint8_t dst_mac[6];          /* --dst-mac */
	/*
	 * A flow's own headers (issue 26): set by a flow file (--flows, the
	 * Open Traffic Generator's config) or a one-flow shortcut (--vlan,
	 * --dscp, --ttl, address ranges). has_hdr false: the engines build
	 * today's frame from the path and the ports above, as before flows.
	 * With has_hdr, hdr is the whole header (frame/flow_pat.h) except the
	 * fields named in hdr_auto, which the client fills from the path at
	 * run time (OTG's "auto"); ports, size (frame_size / mix / size_pat)
	 * and rate are the stream's own. See docs/flows.md for the stamp's
	 * stream ids of flows (frame/flow_streams.h).
	 */
	char name[64];               /* the flow's name (OTG flows[].name), "" = none */
	bool has_hdr;
	unsigned hdr_auto;           /* XP_HDR_AUTO_* */
	struct xp_flow_pat hdr;
	bool size_pat_set;           /* size_pat (OTG size.increment / size.random) instead of frame_size/mix */
	struct xp_pattern size_pat;  /* frame size incl. FCS, a pattern over the flow's frames */
	uint64_t frames;             /* OTG duration.fixed_packets: frames to send, 0 = for the test's -t */
	bool no_stamps;              /* this flow's frames carry no stamp */
	double rate_pct;             /* OTG rate.percentage as given, 0 = none: rate is then that share of the
				      * spec's line_bps in L1 bits/s (resolved when the flow file is read) */
};
/* Header fields the client fills from the path at run time (hdr_auto bits). */
#define XP_HDR_AUTO_DST_MAC 0x01u /* the next hop's MAC, as for one stream */
#define XP_HDR_AUTO_SRC_MAC 0x02u /* the sending interface's MAC */
#define XP_HDR_AUTO_SRC     0x04u /* the source address of the route to the peer */
#define XP_HDR_AUTO_DST     0x08u /* the peer's address (-c) */
#define XP_HDR_AUTO_SPORT   0x10u /* the stream's cport range, spread as for one stream */
#define XP_HDR_AUTO_DPORT   0x20u /* the ports the server grants, spread as for one stream */
/* Streams (flows) a test has at most: the stamp's stream byte names them (docs/flows.md). */
#define XP_SPEC_MAX_STREAMS 256
/* size_pat's width in bits (a frame size incl. FCS, XP_FRAME_SIZE_MIN..XP_FRAME_SIZE_MAX). */
#define XP_SIZE_PAT_WIDTH 16u
/* --flow-top: rows of the per-flow text table when none is given. */
#define XP_FLOW_TOP_DEFAULT 10u

struct xp_spec {
	/* the peer */
	char host[256];              /* -c ADDR as typed */
	unsigned short control_port;
	int family;                  /* -4 / -6, 0 = from the address */
	char dev[IF_NAMESIZE];       /* --dev, empty = from the route */
	char auth_key[256];          /* --auth-key FILE, "" = none */
	/* the engine and how it sends */
	enum xp_engine_id engine;    /* --engine */
	bool engine_set;             /* --engine given explicitly */
	enum xp_xdp_mode xdp_mode;   /* --xdp-mode */
	unsigned queues;             /* --queues, 0 = all of the interface's */
	unsigned first_queue;        /* --first-queue */
	unsigned burst;              /* --burst */
	/* the test */
	enum xp_test_kind kind;      /* a stream, -x (connection rate), -k (held connections) */
	unsigned long parallel;      /* -P: parallel connections */
	unsigned threads;            /* --threads, 0 = one per CPU */
	struct xp_addr bind[XP_MAX_BIND_OPT]; /* --bind ADDR[-ADDR] */
	unsigned nbind;
	double duration;             /* -t */
	double interval;             /* -i */
	/* stamps (the measurement core) */
	bool clock_tai;              /* --clock tai: stamps in CLOCK_TAI, the user says both hosts are synchronised */
	bool clock_set;              /* --clock given */
	bool rtt;                    /* --rtt: round-trip latency (the server reflects, we time) */
	bool no_stamps;              /* --no-stamps: frames carry no stamp, the server accounts none */
	unsigned rx_ts;              /* --rx-timestamp: XP_RXTS_SW (default), XP_RXTS_AUTO or XP_RXTS_HW */
	bool rx_ts_set;              /* --rx-timestamp given */
	/* pass/fail for scripts */
	double max_loss;             /* --max-loss PCT, < 0 = not given */
	double stall_pct;            /* --stall PCT: an interval below PCT % of the running peak is a stall */
	bool stall_set;              /* --stall given: a stall sets the exit status (as --max-loss does) */
	bool require_rate;           /* --require-rate: fail if the target (-b, --cps) is not reached */
	/* the XDP connection engine */
	double cps;                  /* --cps: SYNs per second, 0 = as fast as possible */
	unsigned syn_retries;        /* --syn-retries: SYNs (and --fin's FINs) sent again before giving up */
	double keepalive_s;          /* --keepalive-interval: -k's keepalives, 0 = none */
	bool fin;                    /* --fin: close with FIN instead of RST */
	bool peer_kernel;            /* --peer kernel: the server's TCP stack answers */
	unsigned data_len;           /* --bytes: payload per connection (-x), 0 = none */
	enum xp_engine_id syn_engine; /* --syn-engine, auto: live for -x where it works, else xsk */
	uint64_t first_tuple;        /* the test's first tuple number (engine/tuples.h): a connection search's
				      * tests each start past the last one's */
	char device_netns[64];       /* --device-netns: the device under test's namespace, "" = none */
	/* The pacer's smooth catch-up after a stall, as a fraction above the
	 * rate (engine/pacer.h); 0 = the pacer's own. No option: the RFC 2544
	 * trials set it (client/trial.c). */
	double pace_catchup_excess;
	/* the traffic: see struct xp_stream */
	struct xp_stream traffic[XP_SPEC_MAX_STREAMS];
	unsigned ntraffic;
	unsigned flow_top;           /* --flow-top: the per-flow text table's rows (the flows with most loss) */
	double line_bps;             /* --line-rate: the link's L1 bit rate, 0 = not given; a flow's percentage
				      * rate is a share of it, and the RFC 2544 suite's search tops out at it */
};

/* A copy on the heap (a spec is megabytes with its XP_SPEC_MAX_STREAMS
 * flows: keep it off the stack), NULL without memory; free() it. */
struct xp_spec *xp_spec_dup(const struct xp_spec *s);
/* The defaults: what a test is when nothing says otherwise (one stream of 64-byte TCP frames, 10 s). */
void xp_spec_default(struct xp_spec *s);
/* A test's own rules (values that cannot go together, whoever built the spec):
 * 0, or -1 with a one-line message naming the setting (its option) and why. */
int xp_spec_validate(const struct xp_spec *s, char *err, size_t errlen);
/* The rules one at a time, for a front end that checks in its own order (cli/validate.c):
 * the peer's address and family, and the ports against the control port; --bytes
 * against --peer kernel; -P against the XDP connection engine's window; --burst and
 * --require-rate against a target rate. Each 0 or -1 with err. */
int xp_spec_check_peer(const struct xp_spec *s, char *err, size_t errlen);
int xp_spec_check_bytes(const struct xp_spec *s, char *err, size_t errlen);
int xp_spec_check_window(const struct xp_spec *s, char *err, size_t errlen);
int xp_spec_check_rate(const struct xp_spec *s, const char *way, char *err, size_t errlen);
/* The flows (flow_check.c): each stream's headers (xp_flow_pat_check, the
 * message names the flow and the field), their family against the peer's,
 * every size it sends against its headers, rates on every flow or none. */
int xp_spec_check_flows(const struct xp_spec *s, char *err, size_t errlen);
/* Its JSON form (a new reference, NULL without memory), and back: from_json
 * starts from the defaults and sets what the object has; 0, or -1 with a
 * one-line message naming the member. */
struct json_object *xp_spec_to_json(const struct xp_spec *s);
int xp_spec_from_json(struct json_object *j, struct xp_spec *s, char *err, size_t errlen);
/* The form that leaves this host: the control protocol's start request and
 * -J's start object (and --json-stream's start event). As xp_spec_to_json,
 * but the auth key's file path stays here: "auth" says only whether there is
 * one. from_json reads it back with no key. */
struct json_object *xp_spec_to_wire_json(const struct xp_spec *s);

#endif
