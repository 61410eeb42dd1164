/*
 * The client: runs a test's specification (spec/spec.h) against a server
 * and puts its results into a sink (report/report.h: text, -J,
 * --json-stream, or memory for a caller that reads them). The front ends
 * build the spec: the command line (cli/), the suites for each trial
 * (rfc2544/, connsearch/), --compare for each of its two sides.
 */
#ifndef XP_CLIENT_H
#define XP_CLIENT_H

#include "engine/engine.h"
#include "meas/latency.h"
#include "proto/messages.h"
#include "report/report.h"
#include "spec/spec.h"

/* How one run goes, beyond what the test is: the caller's, not the test's. */
struct xp_run_opts {
	int debug;      /* -d */
	bool quiet;     /* a suite's trial: its error and --max-loss/--require-rate verdict are not printed on
			 * stderr; the suite reads them from the memory sink and says them in its own line */
	/* Not NULL: another thread ends the test early by setting *stop (the OTG
	 * controller's stop, otg/run.c), as a signal does: the summary says
	 * interrupted. Seen within 50 ms. */
	const volatile int *stop;
	/* Not 0: the engine starts sending at this CLOCK_REALTIME instant (ns), set up and
	 * waiting before it (an OTG agent sending on the controller's request, several
	 * senders started together: proto/send_msg.h); at once if it is past. */
	uint64_t start_ns;
	/* Not NULL: the CLOCK_REALTIME (ns) as the engine started, 0 if it never did. */
	uint64_t *started_ns;
};

/*
 * Run test s (the peer, the engine, the traffic: everything it is), its
 * results into rep (made by xp_report_init: the sink); fills sum. ro may be
 * NULL (not quiet, no debug). Returns the exit status (XP_EXIT_*); the error
 * that ended it is in sum->error and, for a memory sink, in rep->mem.error.
 */
int xp_client_test(const struct xp_spec *s, const struct xp_run_opts *ro, struct xp_report *rep,
		   struct xp_summary *sum);
/*
 * The client role as a process, `xdpperf -c`: privileges, signals, then
 * test s reported on stdout in format fmt; with compare (--compare) not
 * NULL, the socket engine's test and then *compare's, and a table of their
 * ratios. Returns the exit status.
 */
int xp_client_run(const struct xp_spec *s, const struct xp_run_opts *ro, enum xp_report_format fmt,
		  const enum xp_engine_id *compare);
/* Midway between two readings (p1, b1) and (p2, b2) of a packet and a byte
 * count: bytes at the same point as the packets, so whole frames stay whole. */
void xp_midpoint(uint64_t p1, uint64_t b1, uint64_t p2, uint64_t b2, uint64_t *p, uint64_t *b);
/* Loss in percent by a period's figures: frames not received, or for handshakes SYNs not completed. */
double xp_summary_loss_pct(const struct xp_period *p);
/* Frames lost while ICMP errors came back for them (XP_EXIT_RUNTIME), then --max-loss, then --require-rate:
 * XP_EXIT_LOSS or XP_EXIT_SHORT with a one-line message, or 0. */
int xp_summary_thresholds(const struct xp_spec *sp, const struct xp_summary *sum, char *msg, size_t len);
/* The message of the error that ended the last xp_client_test, "" if none. */
const char *xp_client_last_error(void);
/*
 * One benchmark trial (the RFC 2544 suite, user/rfc2544/trial.c): the test
 * of base's options, but at pps frames/s (0: as fast as the sender goes;
 * with burst, one burst of that many frames back to back), frame_len bytes,
 * for seconds, reported nowhere; then a settle wait. Fills *out (rc: the
 * test's exit status, 0 when it ran).
 */
/* A trial's pacer makes up a stall at most this fraction above the rate (trial.c). */
#define XP_TRIAL_CATCHUP_EXCESS 0.01

struct xp_trial_req {
	double pps;
	unsigned frame_len;
	const struct xp_mix *mix;   /* mixed sizes: every frame_len ignored but as the largest; NULL: one size */
	unsigned burst;
	double seconds;
	double settle_s;        /* wait after the test: the device drains and restabilises */
};
struct xp_trial_out {
	int rc;                 /* 0, or the exit status of a test that did not run */
	char error[256];
	uint64_t sent, received;
	double seconds;         /* the test's sending time */
	double target_pps, offered_pps;
	bool short_of_target;
	const char *held_back_by;
	char why[320];
	bool kernel_sleeps;     /* sending calls slept in the kernel: the load came in bursts */
	uint32_t max_catchup;   /* the largest catch-up after a stall, frames (0: none) */
	/* Latency from the measurement core's stamps (every frame timed by the
	 * server): known only when the figures are one-way times on a shared
	 * clock; else lat_why says why. lat_hist: the whole trial's histogram. */
	bool lat_known;
	double lat_min_us, lat_mean_us, lat_max_us, lat_p50_us, lat_p99_us, lat_p999_us;
	uint64_t lat_timed;     /* frames timed */
	struct xp_lat_hist lat_hist;
	char lat_why[160];
	/* A test with flows: each flow's sent and received figures (malloc'ed, the caller frees it; NULL: none). */
	struct xp_flow_result *flows;
	unsigned nflows;
};
int xp_client_trial(const struct xp_spec *base, const struct xp_run_opts *ro, const struct xp_trial_req *req,
		    struct xp_trial_out *out);
/* device_table.c: the live entries of the device under test's conntrack table in namespace netns
 * (--device-netns; a dump, as conntrack -L). 0 or -errno with a one-line err. */
int xp_client_device_table(const char *netns, uint64_t *count, char *err, size_t errlen);
/*
 * --bidir's other direction, B->A (reverse.c): the server of test s sends
 * a trial back to a server the caller runs on its own side, on control
 * port `port`, while the caller runs its own A->B trial (the RFC 2544
 * suite: rfc2544/bidir.c). Open loads s's --auth-key (a bad file fails
 * there, before anything starts): NULL with a one-line err. s must outlive
 * the handle.
 */
struct xp_client_reverse;
struct xp_client_reverse *xp_client_reverse_open(const struct xp_spec *s, unsigned short port, char *err,
						 size_t errlen);
void xp_client_reverse_close(struct xp_client_reverse *r);
/* One reverse trial of req's size, mix, burst and length at pps frames/s: asks the server on a control
 * connection of its own and waits for the figures (the trial's length and a margin). Fills *res: rc 0 when
 * it ran, else rc and a one-line error. */
void xp_client_reverse(const struct xp_client_reverse *r, const struct xp_trial_req *req, double pps,
		       struct xp_reverse_res *res);
/*
 * A trial of a test with flows (several streams, or one with headers of its
 * own): req->pps is the flows' aggregate, and every flow's rate is scaled by
 * the same factor, so each keeps its share (req->frame_len and mix are not
 * used: each flow has its own sizes). xp_trial_flow_shares: flow i's share
 * of the aggregate's frames (shares[i], summing to 1: its rate in frames/s
 * at its mean frame size, over the sum; equal shares when no flow has a
 * rate) and its mean frame bytes (means[i], means may be NULL); returns the
 * aggregate's mean frame bytes. xp_trial_flow_rates: every flow's rate set
 * to pps times its share (pps 0: unpaced).
 */
double xp_trial_flow_shares(const struct xp_spec *s, double *shares, double *means);
void xp_trial_flow_rates(struct xp_spec *s, double pps);
/*
 * --bidir's sender on the server's side (cli/reverse_child.c): the server runs
 * its own binary as `xdpperf --reverse-trial ADDR` (not an option: only
 * main() knows the word, before option parsing), the request on stdin;
 * with the server's --auth-key, its key file as the word after ADDR.
 */
#define XP_REVERSE_CHILD_ARG "--reverse-trial"
/* An OTG controller's sender on the agent's side (cli/send_child.c, server/send_op.c): `xdpperf --send-test
 * [KEYFILE]`, the request on stdin, not an option either. */
#define XP_SEND_CHILD_ARG "--send-test"
/* --compare (compare.c): test s on the socket engine, then on engine fast, then a table with ratios. */
int xp_client_compare(const struct xp_spec *s, const struct xp_run_opts *ro, enum xp_engine_id fast,
		      enum xp_report_format fmt);

#endif
