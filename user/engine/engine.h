/*
 * Engines: what sends a test's traffic. The client drives every engine
 * through this interface and names none of them. Each engine declares what
 * it needs from the path (a frame template, the next hop's MAC), what it asks
 * of the server, whether it can run here (probe), and which kind of figures it
 * reports; then it is created, started, read each interval and stopped.
 *
 * Adding an engine: its own file with a `struct xp_engine_ops` (what it can
 * do in .caps, why not the rest in .lacks: the command line's option table
 * names no engine), its id and name in spec/engine_names.[ch], a line in
 * engine/registry.c's table, and its tests.
 */
#ifndef XP_ENGINE_H
#define XP_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "spec/engine_names.h"
#include "loader/xdp_attach.h"
#include "util/addr.h"
#include "frame/flow_pat.h"
#include "frame/frame.h"
#include "frame/mix.h"
#include "proto/messages.h"
#include "meas/figures.h"
#include "bpf/window.h"

#define XP_MAX_BIND 256

/*
 * A flow as the frame engines take it (issue 26): the client resolved
 * every field the spec left to the path (struct xp_stream's hdr_auto), so
 * hdr is complete; frame n of the flow has the headers xp_flow_pat_at(hdr,
 * n) and the size below. Stamps: frame/flow_streams.h.
 */
struct xp_engine_flow {
	struct xp_flow_pat hdr;      /* frame/flow_pat.h, checked */
	unsigned frame_size;         /* incl. FCS, when neither mix nor size_pat */
	struct xp_mix mix;           /* weighted sizes (n 0: none) */
	bool size_pat_set;
	struct xp_pattern size_pat;  /* sizes incl. FCS as a pattern over the flow's frames */
	double pps;                  /* the flow's rate, frames/s; 0 = an equal share of as fast as possible */
	uint64_t frames;             /* frames to send in all, 0 = until stopped */
	bool stamps;                 /* its frames carry the stamp (where the size leaves room) */
};

/* Frame engines: the frames themselves. */
struct xp_frames_cfg {
	struct frame_spec tmpl;     /* ports (and for SYNs tuple and ISN) are replaced per frame */
	/* Mixed sizes (stream tests; n 0: every frame tmpl.frame_size): frame k
	 * of each thread has size mix.size[mix.pattern[k % mix.plen]], tmpl
	 * being built at the largest (frame/mix.h). */
	struct xp_mix mix;
	unsigned queues;            /* sockets/threads, one per queue */
	unsigned first_queue;       /* queues first_queue..first_queue+queues-1 */
	/* The stamp (bpf/lib/stamp.h) every frame carries, and the send
	 * intervals the engine counts its frames into (bpf/measure.h). */
	struct xp_stamp_cfg {
		uint32_t stream_base;   /* first stream id: thread t stamps stream_base + t */
		uint64_t t0;            /* start of interval 0, stamp ticks of the clock below */
		uint64_t ival;          /* ticks per interval; 0 = no stamps (the engine then counts no bins) */
		bool tai;               /* CLOCK_TAI (hosts synchronised by PTP); else CLOCK_MONOTONIC */
		/* The test's tag key (bpf/lib/stamp.h), from the server's start
		 * reply: frames with room carry xp_stamp_tag after the stamp
		 * (under key 0, 0 when the server gave none: an older one). */
		uint64_t key[2];
	} stamp;
	/* Flows (issue 26): nflows 0 = the one stream of tmpl and mix above.
	 * Else the engine sends these, interleaved per thread by rate as a mix
	 * interleaves sizes, each on the streams of frame/flow_streams.h; pps
	 * of the engine cfg is then the flows' sum. The array is the client's,
	 * alive until destroy(). */
	const struct xp_engine_flow *flows;
	unsigned nflows;
};

/* Socket engine: its event loops. */
struct xp_sockets_cfg {
	unsigned threads;           /* event-loop threads, 0 = one per CPU */
	bool zero;                  /* -z: send zeroes instead of random data */
	bool bind_dev;              /* --dev: connections leave by cfg->ifname (SO_BINDTODEVICE) */
};

/* XDP connection engine: how handshakes end and who answers them. */
struct xp_handshakes_cfg {
	enum xp_engine_id syn_sender; /* XP_ENGINE_LIVE, _XSK, or _AUTO: live for -x where it works, else xsk */
	bool fin;                   /* --fin: close with FIN instead of RST */
	bool peer_kernel;           /* --peer kernel: the server's TCP stack answers */
	unsigned data_len;          /* --bytes: payload per connection, 0 = none */
	uint16_t ctrl_port;         /* the control connection's port: the client program leaves it alone */
	enum xp_xdp_mode xdp_mode;  /* how to attach the client program */
	unsigned syn_retries;       /* --syn-retries: SYNs (and --fin's FINs) sent again, 1 s, 2 s, 4 s... apart */
	double keepalive_s;         /* --keepalive-interval: -k's keepalives, 0 = none */
	/* Connection k uses tuple number (first_tuple + k) mod the tuple space
	 * (engine/tuples.h). 0 for a plain run; a connection search's tests go
	 * on where the last one stopped, so no new SYN lands on an entry the
	 * device still keeps of the test before (a firewall counts such a SYN
	 * as the old connection's, not as a new one). */
	uint64_t first_tuple;
	/* The window (-P; bpf/window.h, engine/window.h), set up by the XDP
	 * connection engine for its SYN sender: size 0 = none. */
	struct xp_win_maps {
		unsigned size, shift;
		int slots_fd, free_fd, ctl_fd;
		struct xp_win_slot *slots;  /* win_slots, mapped */
		struct xp_win_ctl *ctl;     /* win_ctl, mapped */
		struct xp_win_cell *ring;   /* win_free, mapped: the free ring (bpf/window_ring.h) */
	} win;
};

struct xp_engine_cfg {
	enum xp_test_kind kind;     /* stream, connect (-x) or hold (-k) */
	/* where */
	char ifname[16];
	int ifindex;
	struct xp_addr server;      /* destination address */
	struct xp_addr bind[XP_MAX_BIND]; /* source addresses to spread connections over; nbind 0 = the template's/kernel's */
	unsigned nbind;
	uint16_t sport_lo, sport_hi;
	uint16_t dport_lo, dport_hi;
	/* how much, how fast, how long */
	unsigned parallel;          /* -P: connections in flight (connect) / open (stream, hold) */
	double pps;                 /* frames (SYNs) per second in total, 0 = as fast as possible */
	unsigned burst;             /* frames sent back to back per paced unit, 0 = spread evenly */
	double catchup_excess;      /* paced: > 0, a stall is made up at most this fraction above pps (engine/pacer.h) */
	double max_seconds;         /* hard stop even if nobody calls stop() */
	int debug;
	/* per kind of engine */
	struct xp_frames_cfg frames;
	struct xp_sockets_cfg sock;
	struct xp_handshakes_cfg hs;
};

/* Frames the engine put on the wire (frame engines; the XDP connection engine's SYNs). */
struct xp_frame_stats {
	uint64_t pkts;     /* frames the driver took (TX completions) */
	uint64_t bytes;    /* their L2 bytes without FCS */
	uint64_t errors;   /* failed sends other than "try again" */
	uint64_t rst_sent; /* hold tests: RSTs that closed the held connections at the end */
};

/* The socket engine's connections. */
struct xp_sock_stats {
	uint64_t conn_ok;       /* connections established */
	uint64_t conn_fail;     /* connect() failures: refused, unreachable... */
	uint64_t conn_reset;    /* established connections reset by the peer */
	uint64_t conn_timeout;  /* connects that did not complete in time */
	uint64_t conn_closed;   /* connections closed by us */
	uint64_t open_now;      /* connections open at this moment */
	uint64_t payload_bytes; /* bytes written to sockets */
	uint64_t in_flight;     /* after stop(): connects still unanswered when it stopped (in none of the above) */
};

/* Hold tests (-k): how fast the connections opened, and how many are open. */
struct xp_hold_stats {
	double all_open_s;      /* seconds after start() until all cfg->parallel were open at once; 0: not (yet) */
	uint64_t open;          /* open now, as the engine sees them */
};

/* Cumulative counters since create(); each group is zero where it does not apply. */
struct xp_engine_stats {
	const char *mode;       /* e.g. "copy", "zerocopy", "live", "tcp" */
	struct xp_frame_stats tx;
	struct xp_sock_stats sock;
	struct xp_handshake_figs hs; /* syn_sent is left to tx.pkts */
	struct xp_hold_stats hold;
	struct xp_pace_stats pace; /* pacing engines, complete after stop() */
};

/* What an engine needs the client to set up before create(). */
enum xp_template {
	XP_TMPL_NONE = 0,  /* no frames of its own (the kernel's sockets, or nothing) */
	XP_TMPL_DATA,      /* TCP data segments / UDP datagrams at -l bytes */
	XP_TMPL_SYN,       /* SYNs with Linux-like options; -l is the SYN's own size */
};

struct xp_engine;

/*
 * What a test may ask of an engine beyond its kinds. An engine declares the
 * ones it has (.caps) and, for those it has not, why (.lacks); the command
 * line takes an option only with an engine that has what the option needs
 * (cli/options.c, .needs) and otherwise refuses it with that reason. So a new
 * engine says here what it can do, and the option table stays as it is.
 */
enum xp_engine_cap {
	XP_CAP_RATE = 0,   /* an exact offered load in frames or bits per second (-b) */
	XP_CAP_BURST,      /* its pacing in bursts (--burst) */
	XP_CAP_FRAME_SIZE, /* frames of a size the test chooses (-l) */
	XP_CAP_STAMPS,     /* a stamp in every frame: loss by interval, latency (--clock, --no-stamps) */
	XP_CAP_UDP,        /* UDP instead of TCP (-u) */
	XP_CAP_ETH,        /* Ethernet headers of its own, to a next hop it is told (--dst-mac) */
	XP_CAP_LATENCY,    /* its stamps timed: round trips (--rtt), the server's arrival clock (--rx-timestamp) */
	XP_CAP_DEV,        /* an interface it sends on (--dev) */
	XP_CAP_XDP_MODE,   /* an XDP program of its own on the client, attached as --xdp-mode says */
	XP_CAP_SPORTS,     /* source ports of its own choosing (--cport) */
	XP_CAP_QUEUES,     /* a sending thread per TX queue it is given (--queues, --first-queue) */
	XP_CAP_THREADS,    /* event-loop threads (--threads) */
	XP_CAP_LOSS,       /* knows what it sent, so loss against that (--max-loss) */
	XP_CAP_STALL,      /* a rate of its own a stall shows in (--stall) */
	XP_CAP_RATE_CHECK, /* a target rate it can fall short of (--require-rate) */
	XP_CAP_CONNS,      /* connections: -P of them, -x, -k */
	XP_CAP_BIND,       /* source addresses to spread connections over (--bind) */
	XP_CAP_PAYLOAD,    /* stream data of its own choosing (-z) */
	XP_CAP_COMPARE,    /* a run beside the socket engine's (--compare) */
	XP_CAP_CPS,        /* a connection rate (--cps) */
	XP_CAP_HANDSHAKES, /* handshakes of its own: --fin, --bytes, --peer, --syn-engine, --device-netns */
	XP_CAP_SYN_RETRIES, /* SYNs sent again on its own schedule (--syn-retries) */
	XP_CAP_KEEPALIVES, /* keepalives of its own, at an interval (--keepalive-interval) */
	XP_CAP_SEARCH,     /* per-connection counts, for the connection searches (--search and its settings) */
	XP_CAP_RFC2544,    /* the RFC 2544 suite's trials (--rfc2544 and its settings) */
	XP_CAP_FLOWS,      /* several flows with headers of their own (--flows, --vlan, --dscp, --ttl, --src, --dst) */
	XP_CAP_N,
};
#define XP_CAP_BIT(c) (1ull << (c))
_Static_assert(XP_CAP_N <= 64, "xp_engine_ops.caps is 64 bits");

struct xp_engine_ops {
	const char *name;         /* as on the command line, in the protocol and the report */
	const char *title;        /* how messages name it: "the live engine" */
	/* Engines of one family are named together where all of them apply:
	 * "the frame engines (--engine live, xsk)". NULL: none. */
	const char *family;
	enum xp_template tmpl;    /* the frame template it sends, with the interface's limits checked */
	bool nexthop;             /* needs the next hop's MAC (it writes Ethernet headers itself) */
	enum xp_figures figures;  /* what it reports */
	unsigned kinds;           /* the test kinds it runs: XP_TEST_BIT(XP_TEST_*); the CLI refuses the others */
	uint64_t caps;            /* what it can do: XP_CAP_BIT(XP_CAP_*) */
	/* Why it cannot do what XP_CAP_* names (a clause after "not the X engine
	 * (--engine X): "), for those not in caps; NULL: nothing to add. */
	const char *lacks[XP_CAP_N];
	/* Its part of the test request: what the server must do (count, count and
	 * pass, answer handshakes, listen). NULL: count the frames and drop them. */
	void (*ask_server)(const struct xp_engine_cfg *cfg, struct xp_test *t);
	/* Can it run this test here? Cheap checks only (create() is the real one).
	 * 0, or -errno with the reason. NULL: always. */
	int (*probe)(const struct xp_engine_cfg *cfg, char *err, size_t errlen);
	int (*create)(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen);
	int (*start)(struct xp_engine *e, char *err, size_t errlen);
	void (*read)(struct xp_engine *e, struct xp_engine_stats *st);
	/* Flows (cfg.frames.nflows > 0): each flow's frames and bytes (L2,
	 * without FCS) put on the wire so far, all threads, into pkts[0..n) and
	 * bytes[0..n). NULL: the engine sends no flows (the CLI refuses them). */
	void (*read_flows)(struct xp_engine *e, uint64_t *pkts, uint64_t *bytes, unsigned n);
	/* Flows: the most frames of all flows' pattern periods (each flow's
	 * lcm of its fields' and size's periods) it can send; 0: no limit. */
	uint64_t flow_frames_max;
	/* Frames it stamped into send interval i (bpf/measure.h), all threads:
	 * 0, or -ENOENT when its bins no longer (or do not yet) hold i, or
	 * -EOPNOTSUPP when this test's frames carry no stamp (ival 0, SYNs, no
	 * room in the frame). Ask only for an interval that has ended. NULL:
	 * the engine never stamps. */
	int (*sent_in)(struct xp_engine *e, uint64_t interval, uint64_t *sent);
	/* The stamp's t0 (xp_stamp_cfg.t0), when the client learns it only
	 * after create(): call before start(). NULL with sent_in. */
	void (*set_t0)(struct xp_engine *e, uint64_t t0);
	/* The stamps' tag key (xp_stamp_cfg.key), known only from the server's
	 * start reply: call before start(). NULL with sent_in. */
	void (*set_stamp_key)(struct xp_engine *e, const uint64_t key[2]);
	void (*stop)(struct xp_engine *e);   /* stop sending, wait for threads and for replies in flight */
	void (*destroy)(struct xp_engine *e);
	/* Its lines of the report's header (NULL: none beyond the common ones). */
	void (*describe)(struct xp_engine *e, struct xp_report_info *i);
	/* After the run: why it failed by the engine's own figures (e.g. no
	 * connection at all), written into buf; NULL if it did not. */
	const char *(*verdict)(const struct xp_engine_cfg *cfg, const struct xp_period *total, char *buf, size_t len);
};

/* What a frame engine (live, xsk) declares: data frames of its own, Ethernet headers, frame figures, and
 * streams of them at a rate of its own, from the sending threads of the queues it is given. */
#define XP_FRAME_ENGINE .family = "the frame engines", .tmpl = XP_TMPL_DATA, .nexthop = true, .figures = XP_FIGS_FRAMES, \
			.kinds = XP_TEST_BIT(XP_TEST_STREAM), \
			.caps = XP_CAP_BIT(XP_CAP_RATE) | XP_CAP_BIT(XP_CAP_BURST) | XP_CAP_BIT(XP_CAP_FRAME_SIZE) | \
				XP_CAP_BIT(XP_CAP_STAMPS) | XP_CAP_BIT(XP_CAP_UDP) | XP_CAP_BIT(XP_CAP_ETH) | \
				XP_CAP_BIT(XP_CAP_LATENCY) | XP_CAP_BIT(XP_CAP_DEV) | XP_CAP_BIT(XP_CAP_SPORTS) | \
				XP_CAP_BIT(XP_CAP_QUEUES) | XP_CAP_BIT(XP_CAP_LOSS) | XP_CAP_BIT(XP_CAP_STALL) | \
				XP_CAP_BIT(XP_CAP_RATE_CHECK) | XP_CAP_BIT(XP_CAP_COMPARE) | XP_CAP_BIT(XP_CAP_RFC2544) | \
				XP_CAP_BIT(XP_CAP_FLOWS), \
			.lacks = { [XP_CAP_XDP_MODE] = "the server's --xdp-mode sets how it counts", \
				   [XP_CAP_THREADS] = "its sending threads are --queues", \
				   [XP_CAP_CONNS] = "it sends frames, not connections", \
				   [XP_CAP_BIND] = "its frames come from the interface's address, their flows vary by " \
						   "--cport" }

/* The lifecycle ops of an engine whose functions are PREFIX_create, _start, _read, _stop, _destroy. */
#define XP_ENGINE_LIFECYCLE(p) \
	.create = p##_create, .start = p##_start, .read = p##_read, .stop = p##_stop, .destroy = p##_destroy

/* The ops of engine id; for XP_ENGINE_AUTO those of its first candidate (all candidates declare alike). */
const struct xp_engine_ops *xp_engine_ops_of(enum xp_engine_id id);

/*
 * Create engine id for cfg. XP_ENGINE_AUTO takes the first candidate (live,
 * then xsk) whose probe and create succeed; with cfg->debug it says why it
 * passed one over. 0 with *ops and *out set, or -errno with the reason.
 */
int xp_engine_open(enum xp_engine_id id, const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops,
		   struct xp_engine **out, char *err, size_t errlen);
/*
 * The same, telling passed(name, why, next, arg) about each auto candidate
 * that could not run (next: the candidate tried after it, NULL for the last).
 * xp_engine_open is this with a -d message on stderr; --probe collects them.
 */
typedef void xp_engine_passed_fn(const char *name, const char *why, const char *next, void *arg);
int xp_engine_open_traced(enum xp_engine_id id, const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops,
			  struct xp_engine **out, char *err, size_t errlen, xp_engine_passed_fn *passed, void *arg);

extern const struct xp_engine_ops xp_engine_xsk;
extern const struct xp_engine_ops xp_engine_socket;
extern const struct xp_engine_ops xp_engine_none;
extern const struct xp_engine_ops xp_engine_live;
extern const struct xp_engine_ops xp_engine_xdp;

/* The (sport, dport) of flow number i: ports vary fastest over the destination range. */
static inline void xp_flow_ports(const struct xp_engine_cfg *c, uint64_t i, uint16_t *sport, uint16_t *dport)
{
	uint32_t nd = (uint32_t)c->dport_hi - c->dport_lo + 1;
	uint32_t ns = (uint32_t)c->sport_hi - c->sport_lo + 1;
	*dport = (uint16_t)(c->dport_lo + i % nd);
	*sport = (uint16_t)(c->sport_lo + (i / nd) % ns);
}

#endif
