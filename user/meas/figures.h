/*
 * The figures of a test: what the report prints and what engines and the
 * server's counters fill. Three kinds, one per kind of engine (enum
 * xp_figures): frames (sent vs counted by the server's XDP program), sockets
 * (the client's and the server's socket counts) and handshakes (the XDP
 * connection engine's SYNs and what its client program answered). Every
 * period carries all three groups; the kind says which ones the report shows.
 */
#ifndef XP_FIGURES_H
#define XP_FIGURES_H

#include "meas/stall.h"
#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "bpf/server.h"
#include "net/icmp_watch.h"
#include "spec/kind.h"
#include "meas/latency.h"

/* How far below its target an offered load may fall and still count as
 * reached: the rate control's tolerance, which the tests hold every interval to. */
#define XP_RATE_TOLERANCE_PCT 2.0

enum xp_figures {
	XP_FIGS_FRAMES = 0, /* frames sent, frames received, loss */
	XP_FIGS_SOCKETS,    /* connections and payload through the kernel's TCP stack */
	XP_FIGS_HANDSHAKES, /* handshakes completed by XDP programs on both ends */
	XP_FIGS_RECEIVED,   /* frames received only: someone else sent them (--engine none) */
};

/* Does this kind of figures count frames of the client's own (and so loss)? */
static inline bool xp_figs_sent(enum xp_figures f)
{
	return f != XP_FIGS_RECEIVED;
}

/* Socket tests: the client engine's and the server's socket counts (deltas; open_* are gauges). */
/* In a whole-test summary, open_now and s_open_now are the peaks seen at interval ends. */
struct xp_sock_figs {
	uint64_t conn_ok, conn_fail, conn_reset, conn_timeout, conn_closed, open_now, payload_bytes;
	uint64_t in_flight;       /* connects still in flight when the client stopped (not counted above) */
	uint64_t s_accepted, s_closed, s_resets, s_open_now, s_bytes_rx;
	/* The server's kernel (TcpExt, its whole namespace): handshakes completed
	 * but dropped because an accept queue was full, all listen drops, and
	 * handshakes reset before they completed (the client's RST overtook its
	 * ACK: established for the client, never accepted). */
	uint64_t s_listen_overflows, s_listen_drops, s_embryonic_rsts;
};

/* XDP connection tests: what the client's SYN sender and XDP program did (deltas). */
struct xp_handshake_figs {
	uint64_t syn_sent;        /* SYNs the engine sent */
	uint64_t synack_seen;     /* SYN-ACKs the client's XDP program saw */
	uint64_t acks_sent;       /* handshake-completing ACKs it sent */
	uint64_t fins_sent;       /* of those, ACK|FIN (--fin) */
	uint64_t rst_seen;        /* resets from the server */
	uint64_t finack_answered; /* server FIN-ACKs answered with the last ACK */
	uint64_t unanswered;      /* SYN-ACKs and FINs it dropped without a reply (client.h) */
	uint64_t rst_closed;      /* -k: held connections reset at the end */
	/* The window (-P, engine/window.h). */
	uint64_t window;          /* its size (not a delta) */
	uint64_t syn_retries;     /* --syn-retries (not a delta) */
	uint64_t syn_retx;        /* SYNs sent again after their timeout */
	uint64_t fin_retx;        /* --fin: ACK|FINs sent again */
	uint64_t keepalives;      /* -k: keepalives sent */
	uint64_t fail_timeout;    /* SYNs given up after the retries */
	uint64_t fail_reset;      /* SYNs (-k: held connections) reset */
	uint64_t fail_unreach;    /* SYNs answered by ICMP unreachable */
	uint64_t fin_timeout;     /* --fin: no FIN from the server after the retries */
	uint64_t synack_dup;      /* SYN-ACKs answered again (both of a retransmitted SYN's) */
	uint64_t stale_rst;       /* SYN-ACKs of given-up connections, answered with RST */
	uint64_t in_flight;       /* SYNs still waiting at the last sample (not a delta) */
	uint64_t send_errors;     /* retransmissions, keepalives, resets that could not be sent */
};

/*
 * The stamps' figures of a period (the measurement core, bpf/measure.h): by
 * SEND interval, so the loss of an interval is what it sent minus what
 * arrived of it, never negative. Frames that arrived after their interval
 * was closed are "late": in the interval they arrived in (lat.late), and for
 * a whole test not lost.
 */
struct xp_meas_figs {
	bool valid;               /* the period has them */
	bool unknown;             /* the server's bins were reused before they were read: no figures */
	uint64_t first, last;     /* the send intervals it covers */
	uint64_t sent;            /* frames the engine stamped into them */
	int64_t lost;             /* sent - lat.recv (a whole test: - lat.late too) */
	struct xp_lat_hist lat;   /* what the server got of them: received, duplicates, reordered, late, latency */
	bool oneway;              /* lat's latency figures are one-way times on a shared clock */
	bool rtt;                 /* ... or (with oneway) round trips, timed on the client's clock (--rtt) */
	const char *lat_why;      /* when not oneway: why there is no latency ("different clocks ...") */
	unsigned streams;         /* RFC 3550 jitter of the streams: at the end of the period */
	double jitter_mean_ns, jitter_max_ns;
	/* a whole test only, from the per-stream accounting */
	bool have_streams;
	uint64_t reorder_max;     /* largest reorder extent, in sequence numbers */
	uint64_t too_old;         /* frames below the reorder window: counted received, not checked */
	/* --rx-timestamp hw|auto (a whole test): of the frames the server
	 * accounted, how many the NIC timed; the rest are the kernel clock's
	 * (auto) or untimed (hw) */
	unsigned rx_ts;           /* XP_RXTS_* of cli/opts.h */
	bool rx_counts;
	uint64_t rx_stamped, rx_nic;
};

/*
 * One flow's figures of one report interval (a test with flows): the
 * differences of the cumulative counts at the interval's ends. The server's
 * are by arrival (its count when asked), the engine's by sending, so frames
 * in flight at an interval's end are lost in it and received in the next: an
 * interval's loss may be below 0. The last interval runs to the end of the
 * test, so the intervals of a flow sum to its end figures.
 */
struct xp_flow_ival {
	char name[64];            /* the flow's name ("" = none: its number is shown) */
	uint64_t tx_frames, tx_bytes; /* the engine's (read_flows) */
	bool rx_known;            /* the server sent its figures of the flow at both ends */
	bool keyed;               /* no stamps: counted by its headers (frames, bytes; no order, no latency) */
	/* The server's count in the interval: frames .. lat_sum and hist are
	 * differences; lat_max is the cumulative maximum (a bound, so a
	 * percentile errs high, never low); lat_nmin 0 (no interval minimum). */
	struct xp_flow_acct rx;
};

/* One interval's (or the whole test's) deltas. */
struct xp_period {
	double t0, t1;            /* seconds since the start */
	bool interval;            /* one report interval, not the whole test */
	enum xp_figures figures;  /* which groups below the report shows */
	uint64_t tx_pkts, tx_bytes; /* client: frames sent, L2 bytes without FCS */
	struct xp_counters rx;    /* server: XDP counters */
	struct xp_sock_figs sock; /* sockets; with --peer kernel also the server's s_* counts of handshakes */
	struct xp_handshake_figs hs;
	bool client_only;         /* no xdpperf on the server: completed = the client's completing ACKs */
	struct xp_meas_figs meas; /* frame tests with stamps: loss by send interval, latency */
	/* An interval of a test with flows: each flow's figures (NULL: none, the
	 * line as without flows). The client's, valid while the line is reported. */
	struct xp_flow_ival *flows;
	unsigned nflows;
	unsigned flow_top;        /* --flow-top: the text table's rows */
};

/* A connection test's warning about unanswered SYNs (report/diagnosis.h). */
enum xp_diag_cause {
	XP_DIAG_NONE = 0,          /* 1 % or less unanswered */
	XP_DIAG_DEVICE_DROPS,
	XP_DIAG_TABLE_FULL,
	XP_DIAG_RECEIVER_OVERRUN,
	XP_DIAG_UNKNOWN,
};

struct xp_diagnosis {
	enum xp_diag_cause cause;
	uint64_t unanswered;       /* SYNs sent without a completed handshake */
	double pct;                /* of the SYNs sent */
	char text[512];            /* the summary's first line, without newline */
};

/* Hold tests (-k): how fast the connections opened and how many lasted. */
struct xp_hold_figs {
	uint64_t wanted;          /* -P; 0: not a hold test */
	double all_open_s;        /* seconds from the start until all were open; 0: never */
	uint64_t open_at_end;     /* the client's view at the last sample before the end */
	uint64_t s_open_at_end;   /* the server's (socket tests, --peer kernel) */
	bool server_view;         /* s_open_at_end is known */
};

/*
 * A pacing engine's own account of its sending (summed over its threads,
 * complete once it has stopped): where the time went, for "who held the
 * offered load back". Filled by the live and xsk engines.
 */
struct xp_pace_stats {
	bool known;               /* the engine filled this in */
	double wall_s;            /* sender threads' running time */
	double wait_s;            /* of that, waiting for the schedule (ahead of it: sleeping or spinning) */
	double cpu_wait_s;        /* runnable but waiting for a CPU: other processes (schedstat) */
	uint64_t softirq_ticks;   /* the senders' CPUs while they ran (/proc/stat): ticks in softirq */
	uint64_t cpu_ticks;       /* ... and all ticks */
	uint64_t pushback;        /* the kernel or driver took fewer frames than offered (ring full, EAGAIN) */
	/* Sending calls in which the thread slept in the kernel (a voluntary
	 * context switch inside BPF_PROG_RUN: e.g. waiting for the XDP
	 * dispatcher's lock), their wall time, and the longest call of all. */
	uint64_t kernel_sleeps;
	double kernel_sleep_s;
	double longest_call_s;
	uint64_t catchups;        /* grants of more than one unit after falling behind (engine/pacer.h) */
	uint32_t max_grant;       /* the largest of them, frames */
};

/* The offered load against its target (engines that pace: -b, --cps). */
struct xp_pace_figs {
	double target_pps;        /* 0: no target */
	double reached_pps;       /* frames (SYNs) sent per second over the test */
	bool short_of_target;     /* more than XP_RATE_TOLERANCE_PCT below */
	const char *held_back_by; /* "sender", "path" or "kernel" when short */
	char why[320];            /* one line: what held it back, with the figures that say so */
	/* the engine's own account (struct xp_pace_stats) */
	double busy_pct;          /* sender threads busy (not waiting for their schedule), of their time */
	double softirq_pct;       /* of the senders' CPUs' time: the kernel's packet processing */
	double cpu_wait_pct;      /* of the senders' time: waiting for a CPU (other processes) */
	uint64_t pushback;        /* times the kernel or driver took fewer frames than offered */
	double kernel_sleep_pct;  /* of the senders' time: sending calls that slept in the kernel */
	uint64_t kernel_sleeps;   /* how many such calls */
	double longest_call_ms;   /* the longest sending call */
	uint64_t catchups;        /* stalls made up in one grant */
	uint32_t max_grant;       /* the largest such grant, frames */
};

/* One flow of a test with flows (issue 26): what the engine sent of it and
 * what the server counted of it (bpf/measure.h's struct xp_flow_acct). */
struct xp_flow_result {
	char name[64];            /* the flow's name ("" = none: its number is shown) */
	uint64_t tx_frames, tx_bytes; /* the engine's (read_flows) */
	bool rx_known;            /* the server sent its figures of the flow */
	struct xp_flow_acct rx;   /* the server's, cumulative */
	/* No stamps (issue 26): keyed, counted by the headers it declares unique
	 * (frames and bytes received; no duplicates, order or latency); or
	 * uncountable, sent to an address the server does not own (rx_known
	 * false: its frames carry nothing that makes them the test's). */
	bool keyed, uncountable;
};

struct xp_summary {
	enum xp_test_kind kind;
	/* A test with flows: each flow's figures (nflows 0: none, the report as without flows). */
	const struct xp_flow_result *flows;
	unsigned nflows;
	unsigned flow_top;        /* --flow-top: the text table's rows */
	struct xp_period total;
	/* The server went away: the summary covers 0..server_lost_at (its last
	 * sample), and what was sent after that is not counted as lost. */
	bool server_lost;
	double server_lost_at;
	uint64_t sent_after_lost; /* frames (SYNs) sent after its last sample */
	struct xp_hold_figs hold;
	struct xp_pace_figs pace;
	double client_cpu_pct;    /* process CPU / wall time, 100 = one core */
	double server_cpu_pct;    /* -1 when unknown */
	uint64_t tx_errors;
	bool interrupted;         /* stopped by a signal */
	const char *error;        /* why the test ended early, NULL if it did not */
	struct xp_diagnosis diag; /* connection tests: more than 1 % of SYNs unanswered, and why */
	struct xp_stall stall;    /* what it completed fell to a fraction of its running peak (meas/stall.h) */
	struct xp_icmp_figs icmp; /* frame tests: ICMP errors that came back for the test's frames */
};

/* What the report's header says about the test. */
struct xp_spec;

struct xp_report_info {
	char client[64], server[64];
	char dev[16], server_dev[16];
	const char *engine;       /* the engine's name: "live", "xsk", "xdp", "socket", "none" */
	enum xp_figures figures;  /* what the engine reports */
	const char *engine_mode;  /* "copy" / "zerocopy" / "live" ... */
	const char *server_xdp_mode;
	const char *test;         /* "stream", "connect", "hold" */
	const char *proto;        /* "tcp" / "udp" */
	int family;               /* 4 or 6 */
	unsigned frame_size;      /* incl. FCS; 0 when the engine sends no frames of its own; a mix's largest */
	char frame_mix[96];       /* mixed sizes (-l imix): "imix (64:7,570:4,1518:1)", "" = one size */
	double frame_mean;        /* mixed sizes: the mean frame size incl. FCS */
	unsigned queues;
	uint16_t port_lo, port_hi, cport_lo, cport_hi;
	double duration, interval;
	double target_pps;        /* 0 = unlimited */
	unsigned parallel;        /* socket and connection tests: -P */
	/* handshake figures only */
	bool peer_kernel;         /* answered by the server's TCP stack */
	bool client_only;         /* no xdpperf on the server (no control channel): the client's counters only */
	double target_cps;        /* --cps, 0 = unlimited */
	const char *client_xdp_mode; /* the client program's attach mode */
	/* frame tests: the stamps (measurement core) */
	bool stamps;              /* every frame carries one and the server reads them */
	const char *stamp_place;  /* "payload" / "IPv4 ID + payload" */
	const char *stamp_clock;  /* "CLOCK_MONOTONIC" / "CLOCK_TAI" */
	const char *rx_clock;     /* what timed arrivals at the server ("CLOCK_MONOTONIC (bpf_ktime_get_ns)", the NIC's) */
	const char *rx_note;      /* --rx-timestamp hw|auto: the server's word (why no NIC time, or per frame) */
	bool oneway;              /* one-way latency (both ends share the clock) */
	bool rtt;                 /* round-trip latency instead (--rtt: the server reflects, we time) */
	double grace;             /* s interval lines lag their interval's end (late frames' grace) */
	double setup_s;           /* s the stamps' t0 precedes the lines' start (asking the server, starting the engine) */
	uint64_t stamp_t0, stamp_ival; /* interval 0's start and the intervals' length, stamp ticks */
	char stamp_note[200];     /* no stamps: why, and what the report gives instead; one way not: why */
	unsigned window;          /* the XDP connection engine's -P window, 0 = none */
	unsigned syn_retries;     /* its --syn-retries */
	double keepalive_s;       /* its --keepalive-interval, 0 = none */
	/* The test's specification (spec/spec.h), given as -J's start object's "spec" in its
	 * wire form (the control protocol's); NULL: none (a suite's own start). */
	const struct xp_spec *spec;
};

/* Connections the server completed: its XDP program's count, or with --peer kernel its accepts (the
 * engines' verdicts, the searches and the report all count them so). */
static inline uint64_t xp_period_established(const struct xp_period *p)
{
	/* With no xdpperf on the server, a connection is complete when the client sent its completing ACK. */
	if (p->client_only)
		return p->hs.acks_sent;
	return p->sock.s_accepted ? p->sock.s_accepted : p->rx.conn_established;
}

#endif
