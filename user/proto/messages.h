/*
 * The control protocol's messages: what a client asks the server for
 * (struct xp_test) and the counters the server sends back (its XDP counters,
 * its socket counts), with their JSON forms for the control channel.
 */
#ifndef XP_MESSAGES_H
#define XP_MESSAGES_H

#include <json-c/json.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/server.h"
#include "util/addr.h"
#include "spec/kind.h"
#include "meas/latency.h"

/* Most --bind addresses a start request carries (the XDP program's limit). */
#define XP_TEST_MAX_BIND XP_SLOT_MAX_PEERS

/*
 * The stamps a frame test's frames carry (bpf/lib/stamp.h) and the send
 * intervals both ends bin them by (bpf/measure.h): what the server's XDP
 * program needs to count them. ival 0: the frames carry none.
 */
struct xp_test_stamp {
	uint64_t t0, ival;    /* start of interval 0 and its length, ticks of the client's stamp clock */
	bool tai;             /* the clock is CLOCK_TAI (PTP), else CLOCK_MONOTONIC */
	bool oneway;          /* the user says both ends' clocks agree (--clock tai): time frames one way */
	bool hwts;            /* time arrivals by the NIC's RX timestamp where it has one */
	bool hwts_only;       /* with hwts: the NIC's or none (--rx-timestamp hw): refuse where it cannot be had */
	bool reflect;         /* round trip (--rtt): send every stamped frame back to the client */
	char boot_id[40];     /* the client's boot id: a server with the same one shares its clock */
};
/* --rx-timestamp (cli/opts.h rx_ts, meas/figures.h): what times a frame's arrival at the server. */
#define XP_RXTS_SW 0   /* the server's kernel clock at XDP */
#define XP_RXTS_AUTO 1 /* the NIC's receive time where it gives one, else the kernel clock (said) */
#define XP_RXTS_HW 2   /* the NIC's or none: refused where the driver has none, untimed frames said */

/* Limits of a request's interval: 1 ms .. a day, in ticks. */
#define XP_STAMP_IVAL_MIN (1000000ull >> 2)
#define XP_STAMP_IVAL_MAX (86400000000000ull >> 2)

/* One key of a flow without stamps in a start request: flow index, and
 * the key's fields (src: the fold's four bytes as a big-endian number). */
struct xp_test_key {
	uint16_t flow;
	uint16_t vid[2];
	uint8_t dscp;
	uint16_t sport, dport;
	uint32_t src;
};

struct xp_test {
	int version;
	enum xp_test_kind kind;
	const char *engine;   /* the engine's name, spec/engine_names.h (static string) */
	int family;           /* AF_INET / AF_INET6 */
	bool udp;             /* UDP frames instead of TCP */
	bool pass;            /* server counts and passes to its stack (socket tests) */
	uint16_t port_lo, port_hi;
	double duration;
	unsigned frame_size;  /* incl. FCS; 0 for socket tests */
	unsigned long parallel; /* socket tests: connections the client will open */
	bool respond;         /* XDP connection tests: the server's XDP program answers SYNs */
	bool listen;          /* the server opens TCP listeners on the ports (socket tests, --peer kernel) */
	unsigned close_mode;  /* XP_CLOSE_*: what the server does with a handshake's ACK */
	/* The client's source addresses besides its control connection's
	 * (--bind): the server's XDP program counts (and answers) the test's
	 * frames from these and that one only. Same family as the test. */
	struct xp_addr bind[XP_TEST_MAX_BIND];
	unsigned nbind;
	struct xp_test_stamp stamp; /* frame tests: the stamps' settings ("stamp", absent: none) */
	/*
	 * "flows" (issue 26): a test with flows has nflows (1..256) of them, sent
	 * by threads sending threads; the server counts stream s into flow
	 * xp_flow_of_stream(s, nflows, threads) (frame/flow_streams.h). Absent:
	 * nflows 0, the slot's totals only (as before).
	 */
	struct {
		unsigned nflows, threads;
		/*
		 * "key" and "keys": the flows without stamps, counted by their
		 * headers (bpf/measure.h's struct xp_flow_key; frame/flow_key.h
		 * chooses). key_mask: XP_KEY_ON | the XP_KEY_* fields "key"
		 * names (0: absent, no flow counted so); keys[0..nkeys-1], each
		 * a flow's index and the values of those fields (the others 0),
		 * at most XP_FLOW_ENTRIES; an owned array (xp_test_release).
		 */
		uint32_t key_mask;
		unsigned nkeys;
		struct xp_test_key *keys;
	} flows;
	/*
	 * "spec": the test's specification as the client resolved it, in its
	 * wire form (spec/spec.h, xp_spec_to_wire_json: no auth key path). The
	 * fields above are the resolved part the server acts on and checks
	 * against its limits; the spec is what the test is, for the server's
	 * log and report, never trusted over those fields. A reference the
	 * struct owns (xp_test_release); NULL: none (a client before the spec
	 * was sent, accepted as before).
	 */
	struct json_object *spec;
};

/* The longest test any server runs (the CLI's -t limit); a server's --max-duration can only lower it. */
#define XP_TEST_DURATION_MAX 86400.0

const char *xp_test_kind_name(enum xp_test_kind k);
struct json_object *xp_test_to_json(const struct xp_test *t);
/*
 * Fills t from a "start" message; 0 or -1 with a one-line err. Strict: a field
 * of the wrong type (1.9 for an integer, "1" for a boolean), an unknown name,
 * a value out of range or a duration that is not finite and positive is an
 * error. "spec", when there, must be an object xp_spec_from_json accepts
 * (the error names the member); t->spec then holds a reference to it, which
 * the caller drops with xp_test_release (on -1 nothing is held). Strings
 * point into static names.
 */
int xp_test_from_json(struct json_object *o, struct xp_test *t, char *err, size_t errlen);
/* Drop t's reference to its spec (t->spec NULL after). */
void xp_test_release(struct xp_test *t);

/*
 * Copy a string that came from the other end into out (len bytes, always
 * terminated) for printing: every byte outside printable ASCII (control
 * characters, terminal escapes, DEL, bytes of other encodings) becomes '?'.
 */
void xp_msg_printable(const char *in, char *out, size_t len);

struct json_object *xp_counters_to_json(const struct xp_counters *c);
void xp_counters_from_json(struct json_object *o, struct xp_counters *c);
/* a - b, field by field (for interval deltas). */
void xp_counters_sub(const struct xp_counters *a, const struct xp_counters *b, struct xp_counters *out);

/* The server's socket counts for a test (deltas since its start; open_now a gauge). */
struct xp_sock_counts {
	uint64_t accepted, closed, resets, open_now, bytes_rx;
	uint64_t listen_overflows, listen_drops, embryonic_rsts; /* the server namespace's TcpExt counters (deltas) */
};
struct json_object *xp_sock_counts_to_json(const struct xp_sock_counts *c);
void xp_sock_counts_from_json(struct json_object *o, struct xp_sock_counts *c);

/*
 * The stamps' tag key (bpf/lib/stamp.h's xp_stamp_tag): the per-test secret
 * the server chooses and sends in its "started" reply, "stamps": {"key":
 * "<32 hex digits>"} (key[0] first, each as 16 digits, most significant
 * first). Never 0, 0 (that is "no key").
 */
struct json_object *xp_stamp_key_to_json(const uint64_t key[2]);
/* From the reply's "stamps" object p: 1 with key set, 0 if p has none (an
 * older server), -1 with err if it has one that is not exactly 32 hex
 * digits or is all zeros (strict: the server may be hostile). */
int xp_stamp_key_from_json(struct json_object *p, uint64_t key[2], char *err, size_t errlen);

/* This host's boot id (/proc/sys/kernel/random/boot_id) into buf, "" if unreadable. */
void xp_boot_id(char *buf, size_t len);

/*
 * A final interval (the reply to {"op":"sample","final":i}): what the server
 * got of send interval i, summed over its CPUs, once it closed it; or that
 * its ring no longer held it (read too late: the figures are unknown). The
 * streams' RFC 3550 jitter as of the read (a running estimate, like iperf3's).
 */
struct xp_final_ival {
	uint64_t index;
	bool unknown;            /* the bins of i were overwritten before they were read */
	struct xp_lat_hist lat;
	unsigned streams;        /* that had seen a frame at the read */
	double jitter_mean_ns, jitter_max_ns; /* NAN when none */
};
struct json_object *xp_final_to_json(const struct xp_final_ival *f);
/* 0 or -1 with err: strict, the server may be hostile. */
int xp_final_from_json(struct json_object *o, struct xp_final_ival *f, char *err, size_t errlen);
/* The stop reply's per-stream figures: an array of at most XP_STAMP_MAX_STREAMS. */
struct json_object *xp_streams_to_json(const struct xp_stream_figs *s, unsigned n);
/* Their count (at most max), or -1 with err. */
int xp_streams_from_json(struct json_object *o, struct xp_stream_figs *s, unsigned max, char *err, size_t errlen);

/*
 * --bidir (RFC 2544 section 14): {"op":"reverse", ...} asks the server to
 * send one trial's frames towards the client (B->A) while the client sends
 * its own (A->B). The server does not send itself: it starts a child of its
 * own binary (server/reverse.c) that runs the trial as a client of the
 * xdpperf server the client runs on its side for the suite (rfc2544/bidir.c),
 * on control port `port` of the address the request came from. So each
 * direction is an ordinary test: the same engines, pacing, stamps and
 * counting by test id, the same figures. The reply {"op":"reversed"} carries
 * the child's figures (struct xp_reverse_res).
 */
struct xp_reverse_req {
	uint16_t port;        /* the control port of the server on the client's side */
	const char *engine;   /* "live" or "xsk" (static string) */
	int family;           /* AF_INET / AF_INET6 */
	bool udp;
	unsigned frame_size;  /* incl. FCS; with a mix its largest */
	char mix[96];         /* "" or a mix as -l takes it (frame/mix.h: "64:7,570:4,1518:1") */
	double pps;           /* 0: as fast as the sender goes */
	unsigned burst;       /* back-to-back: one burst of this many frames; 0: paced */
	double seconds;       /* the trial's length */
	bool no_stamps;       /* --no-stamps */
};
/* The reverse trial's figures, as the client's own trial gives them (client.h's xp_trial_out). */
struct xp_reverse_res {
	int rc;               /* 0: it ran; else the child's exit status */
	char error[256];
	uint64_t sent, received;
	double seconds, target_pps, offered_pps;
	bool short_of_target;
	char held_back_by[16]; /* "" or "sender", "path", "kernel" */
	bool kernel_sleeps;
	uint32_t max_catchup;
	bool lat_known;
	double lat_min_us, lat_mean_us, lat_max_us, lat_p50_us, lat_p99_us, lat_p999_us;
	uint64_t lat_timed;
	struct xp_lat_hist lat_hist;
	char lat_why[160];
};
#define XP_REVERSE_PPS_MAX 1e9 /* above any sender; the trial's "as fast as it goes" asks 1e8 */
struct json_object *xp_reverse_req_to_json(const struct xp_reverse_req *q);
/* Strict, as xp_test_from_json: the client may be hostile. 0 or -1 with a one-line err. */
int xp_reverse_req_from_json(struct json_object *o, struct xp_reverse_req *q, char *err, size_t errlen);
struct json_object *xp_reverse_res_to_json(const struct xp_reverse_res *r);
/* Strict too: the server (or its child) may be hostile. 0 or -1 with err. */
int xp_reverse_res_from_json(struct json_object *o, struct xp_reverse_res *r, char *err, size_t errlen);

#endif
