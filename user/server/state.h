/*
 * The server's state, shared by its event loop (server.c) and its tests
 * (session.c). One thread owns all of it; only sockjobs.c has a thread of
 * its own, and it talks to this one through its queue.
 */
#ifndef XP_SERVER_STATE_H
#define XP_SERVER_STATE_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "loader/server_prog.h"
#include "meas/flow_pool.h"
#include "util/addr.h"
#include "net/netstat.h"
#include "proto/auth.h"
#include "proto/channel.h"
#include "server/config.h"
#include "server/listeners.h"
#include "server/policy.h"
#include "server/sockjobs.h"

#define XP_SRV_MAX_CLIENTS 64   /* control connections at once, over all addresses */
/* Replies a client may leave unread before it is dropped: one of the largest
 * (a test with 256 flows' sample or stop reply, proto/channel.h); the client
 * reads each before it asks again. */
#define XP_SRV_OUT_LIMIT XP_CTRL_MAX_REPLY
#define XP_SRV_PRETEST_TIME 30  /* s from accept to a started test (auth included); never extended */
#define XP_SRV_TEST_MARGIN 30   /* s a test may run past its duration (settling, closing held connections) */
#define XP_SRV_DRAIN_TIME 2     /* s a refused client's input is read and discarded before the close */
#define XP_SRV_MAX_REFUSED 8    /* refused requests on one connection, then it is dropped */
#define XP_SRV_REVERSE_MARGIN 20 /* s a reverse trial's child may take past the trial's length (its set-up, the settle) */
#define XP_SRV_MSGS_PER_ROUND 32 /* messages read from one client per loop round: the others get theirs */
#define XP_SRV_ACCEPT_PAUSE 0.1  /* s the listener is not polled after accept4 ran out of files */
#define XP_SRV_MAX_CHILDREN (2 * XP_SRV_MAX_CLIENTS) /* reverse senders running or being reaped */
#define XP_SRV_CHILD_TERM_GRACE 1.0 /* s from SIGTERM to SIGKILL for a reverse sender we stop */
#define XP_SRV_CHILD_EXIT_GRACE 2.0 /* s a sender that closed its output has to exit, then SIGKILL */
#define SRV_MAP_CHILD (-1000)    /* serve()'s poll map: an ended child's pidfd */
#define XP_SRV_XDP_LINGER 5.0    /* s the XDP program stays on an interface after its last test (churn.c) */
#define XP_SRV_MAX_LINGER 16     /* interfaces it may linger on at once (the loader's link table) */
#define XP_SRV_START_BURST 20.0  /* test starts from one /24 or /64 at once (churn.c) */
#define XP_SRV_START_PER_S 4.0   /* ... and then this many a second (a --bidir suite of 0.5-s trials: about 4) */
#define XP_SRV_RATE_BLOCKS 64    /* blocks whose start rate is tracked (the least recent is forgotten) */

enum srv_state {
	SRV_FREE = 0,
	SRV_IDLE,      /* connected, no test yet (or authenticating) */
	SRV_STARTING,  /* listeners being opened by the listener thread; its input waits */
	SRV_RUNNING,   /* a test is running */
	SRV_DRAINING,  /* told why it is refused: shut down for writing, input discarded until close */
	SRV_REVERSE,   /* --bidir: our child sends a trial towards the client (reverse.c); input means it left */
};

struct srv_client {
	enum srv_state state;
	struct xp_ctrl ctrl;
	struct xp_addr peer;
	char peer_s[64];
	double deadline;     /* hard: pre-test, test end + margin, or the end of draining */
	unsigned refused;    /* requests refused on this connection */
	/* authentication (--auth-key) */
	bool authed;
	char nonce[XP_AUTH_HEX_LEN + 1]; /* "" until a challenge was sent */
	char mac[XP_AUTH_HEX_LEN + 1];   /* "" until the client's answer came */
	/* the port range handed out for its test ({"op":"ports"}, ports_op.c); resv_hi 0: none */
	uint16_t resv_lo, resv_hi;
	/* the test */
	uint64_t test_id;    /* ties listener-thread results to this test */
	int slot;            /* -1 until a test starts */
	int ifindex;         /* where its counting program is attached */
	bool counted_tc;     /* by the TC program (socket tests), else by the XDP program */
	double t_start, cpu_start;
	struct xp_test test;
	const char *mode;
	/* socket tests: listeners of this test, or the server's standing ones */
	struct xp_sock_server *ss;
	bool ss_owned;
	struct xp_sock_server_stats ss_base;
	struct xp_tcpext tcpext_base; /* the namespace's TcpExt counters at the test's start */
	bool tcpext_ok;
	/* frame tests with stamps (measure.c): the XDP program reads them */
	bool meas;           /* server_prog_meas_start took the test's settings */
	bool meas_oneway;    /* it times frames one way (same host, or the client says --clock tai) */
	char meas_why[160];  /* why not, for the "started" reply ("" when meas) */
	uint64_t meas_key[2]; /* the stamps' tag key (bpf/lib/stamp.h), sent in the "started" reply */
	/* a test with flows (issue 26): its entries flow_base..+nflows-1 of
	 * flow_acct, taken from the server's pool (meas/flow_pool.h) */
	unsigned flow_base, nflows; /* nflows 0: none held */
	bool keyed;                 /* its flows without stamps have keys in the program (flow_key) */
	int key_slot;               /* ... of this slot (the slot may be freed before the keys go) */
	/* --bidir's reverse trial (reverse.c): the child that sends it, its stdout */
	int rev_pid;         /* 0: none */
	int rev_fd;          /* -1: none */
	char *rev_out;       /* what the child wrote so far (its one JSON line) */
	size_t rev_len;
	/* the child is an OTG controller's sender ({"op":"send"}, send_op.c), not a reverse trial */
	bool rev_send;
	bool send_stopping;  /* the controller half-closed: the child was told to stop, its figures come */
};

/* Listeners handed to the listener thread to close: their ports are still taken. */
struct srv_closing {
	bool used;
	uint64_t id;
	struct xp_port_range ports;
	unsigned long parallel;
};

/* A reverse sender that ended or was told to: reaped by the event loop
 * when its pidfd says it exited, killed at kill_at if it has not. */
struct srv_child {
	int pid;             /* 0: free entry */
	int pidfd;           /* -1: none (pidfd_open failed): polled every round */
	double kill_at;
	bool killed;         /* SIGKILL sent */
};

/* An interface whose XDP program has no test but stays attached until `until` (churn.c). */
struct srv_linger {
	int ifindex;         /* 0: free */
	double until;
};

/* One /24 or /64's test starts (churn.c). */
struct srv_rate {
	struct xp_cidr blk;  /* plen 0: free */
	struct xp_rate_bucket b;
};

struct server {
	const struct xp_server_cfg *cfg;
	struct server_prog *rp;
	struct xp_auth_key key;
	int lfd;
	struct srv_client cl[XP_SRV_MAX_CLIENTS];
	unsigned tests_done;
	uint64_t next_id;
	struct xp_sock_server *listeners; /* -P / --engine socket: fireperf-style standing listeners */
	struct xp_sockjobs *jobs;
	struct srv_closing closing[XP_SRV_MAX_CLIENTS];
	double accept_paused_until; /* accept4 ran out of files: the listener rests until then */
	bool accept_failing;        /* said so in the log (once per episode) */
	struct srv_child children[XP_SRV_MAX_CHILDREN];
	struct srv_linger linger[XP_SRV_MAX_LINGER];
	struct srv_rate rates[XP_SRV_RATE_BLOCKS];
	struct xp_flow_pool flows; /* flow_acct's entries, shared by the running tests */
};

/* conn.c: what every part does to a client (and none calls back into another for it). */
void srv_send_error(struct srv_client *c, const char *msg);
/* Tell the client why (one error line), log it with the peer's address; after
 * XP_SRV_MAX_REFUSED refusals on one connection, drain and close it. */
void srv_refuse(struct server *s, struct srv_client *c, const char *msg, const char *log);
/* The last word: one error line (msg), log logged, the test released, then input drained until the close. */
void srv_reject(struct server *s, struct srv_client *c, const char *msg, const char *log);
void srv_drop(struct server *s, struct srv_client *c, const char *why);
/* End the client's test, if any: slot freed, listeners queued for closing, its reverse sender stopped. */
void srv_release(struct server *s, struct srv_client *c);
/* The test's counting program off c's interface (the last reference detaches it); ran: after a test
 * that ran, the XDP program lingers (churn.c). */
void srv_detach_counter(struct server *s, struct srv_client *c, bool ran);

/* session.c */
/* Tests starting or running and --bidir reverse trials: what --max-tests caps. */
unsigned srv_tests_running(const struct server *s);
void srv_on_start(struct server *s, struct srv_client *c, struct json_object *m);
/* m: the request ("sample" may ask for a final interval). */
void srv_on_counters(struct server *s, struct srv_client *c, const char *reply, struct json_object *m);

/* ports_op.c: a port range for a client without -p (issue 30 point 6). */
void srv_on_ports(struct server *s, struct srv_client *c, struct json_object *m);
/* 0, or -1 with err when lo..hi overlaps a range handed to another connection. */
int srv_ports_reserved(const struct server *s, const struct srv_client *c, unsigned lo, unsigned hi, char *err,
		       size_t errlen);

/* measure.c: the measurement core of frame tests with stamps. */
/* Hand the test's stamp settings to the XDP program (before its first frame). */
/* Before the interface's attach: which program it gets (--rx-timestamp). */
void srv_meas_prepare(struct server *s, const struct xp_test *t);
/* Whether the test asks for NIC receive times (the device-bound program variant). */
bool srv_meas_wants_hwts(const struct xp_test *t);
/* 0, or -1 with err: the test cannot be run as asked (--rx-timestamp hw
 * where no NIC time can be had); the caller refuses it. */
int srv_meas_start(struct server *s, struct srv_client *c, char *err, size_t errlen);
/* A test with flows: stream_entry[st] = base + its flow + 1 for the test's
 * streams (frame/flow_streams.h), the rest left as they are (0: none). */
void srv_meas_flow_map(unsigned base, unsigned nflows, unsigned threads, __u32 *stream_entry);
/* Give the test's flow entries back to the pool (every release path). */
void srv_meas_flows_free(struct server *s, struct srv_client *c);
/* The "started" reply's part: our boot id, whether and how the stamps are read. */
void srv_meas_started_json(struct server *s, struct srv_client *c, struct json_object *o);
/* A sample's "final": i: close intervals up to i, add i summed over CPUs to o. 0 or -1 with err. */
int srv_meas_final(struct server *s, struct srv_client *c, struct json_object *m, struct json_object *o, char *err,
		   size_t errlen);
/* The stop reply's per-stream figures. */
void srv_meas_streams_json(struct server *s, struct srv_client *c, struct json_object *o);
/* An interval sample that asks "flows": true of a test with flows: every
 * flow's cumulative figures, compact (proto/flow_figs.h), into o. 0, or -1
 * with err (a "flows" that is not a boolean). */
int srv_meas_flows_sample(struct server *s, struct srv_client *c, struct json_object *m, struct json_object *o,
			  char *err, size_t errlen);
/* Results from the listener thread. */
void srv_on_jobs(struct server *s);

/* churn.c: starts and stops must not make the XDP program come and go (issue 28 point 5). */
/* A test's reference to ifindex's XDP program is done: kept XP_SRV_XDP_LINGER s more, then dropped. */
void srv_xdp_release(struct server *s, int ifindex);
/* Drop ifindex's lingering reference now (a socket test: any XDP program on a veth costs its stream GSO). */
void srv_xdp_linger_drop(struct server *s, int ifindex);
/* Before an attach: drop ifindex's lingering reference if its program is not the variant the test wants. */
void srv_xdp_linger_check(struct server *s, int ifindex, bool want_hwts);
/* Drop the references whose time is up (all: the server stops); next: the earliest still to come. */
void srv_xdp_linger_expire(struct server *s, bool all, double *next);
/* A test start from peer's /24 or /64: 0, or -1 with err when it starts tests faster than the server takes. */
int srv_start_rate(struct server *s, const struct xp_addr *peer, char *err, size_t errlen);

/* reverse.c: --bidir's reverse trial, sent by a child of ours. */
/* Starts the child for req (its stdin) and sets c->rev_pid and c->rev_fd (its stdout): 0, or -1 with err.
 * Always reverse.c's spawn_child, except in the control-path fuzzer, which has a stand-in. */
extern int (*srv_reverse_spawn)(const struct server *s, struct srv_client *c, const char *req, char *err,
				size_t errlen);
/* Starts the child for req (taken: put here) with a buffer of out_size for its output, c in SRV_REVERSE:
 * 0, or -1 with err (nothing left allocated). A reverse trial's and an OTG controller's send. */
int srv_child_start(struct server *s, struct srv_client *c, struct json_object *req, size_t out_size, char *err,
		    size_t errlen);
void srv_on_reverse(struct server *s, struct srv_client *c, struct json_object *m);
/* The child's stdout is readable: take what it wrote; at its end, the reply and the close. */
void srv_reverse_read(struct server *s, struct srv_client *c);
/* A child's output (a reverse trial's or a send's) read into c->rev_out: 0 more to come, 1 it ended (its exit
 * status in *status, -1 unknown; rev_out terminated), -1 it wrote too much (c dropped). */
int srv_child_collect(struct server *s, struct srv_client *c, int *status);

/* send_op.c: issue 27's agent that sends on the OTG controller's request (proto/send_msg.h). */
void srv_on_time(struct server *s, struct srv_client *c);
void srv_on_send(struct server *s, struct srv_client *c, struct json_object *m);
/* The controller half-closed its side: the sender stops its test, its figures still come. */
void srv_send_stop(struct server *s, struct srv_client *c);
/* The sender's output: read; once it ended, {"op":"sent"} with its figures, then the close. */
void srv_send_read(struct server *s, struct srv_client *c);

/* children.c: the reverse senders that are to go. */
/* Stop the child (if any), to be reaped by the loop: the client left, the deadline passed, or we stop. */
void srv_reverse_end(struct server *s, struct srv_client *c);
/* A child that is to go: reaped now if it has exited, else kept for the loop, SIGKILLed after grace s. */
void srv_bury(struct server *s, pid_t pid, double grace);
/* The ended children's pidfds into the poll set (their count); next: the earliest SIGKILL due. */
int srv_children_poll(struct server *s, struct pollfd *pf, int *map, double *next);
/* Reap the children that exited, SIGKILL those past their grace. all: the server stops, wait for each. */
void srv_children_reap(struct server *s, bool all);

#endif
