/*
 * Control channel between client and server: one TCP connection per test,
 * carrying newline-delimited JSON objects ({"op": ...}). The client asks, the
 * server answers; see docs/protocol.md.
 */
#ifndef XP_CHANNEL_H
#define XP_CHANNEL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "spec/spec.h" /* XP_SPEC_CONTROL_PORT */

#define XP_CONTROL_PORT_DEFAULT XP_SPEC_CONTROL_PORT
#define XP_PROTO_VERSION 1
/* The longest line a peer takes by default (a request: the server's limit on what a client sends). */
#define XP_CTRL_MAX_MSG 65536
/*
 * The longest line the client takes from the server (xp_ctrl_set_max_msg),
 * and so the longest reply a server sends: a sample or stop reply of a test
 * with 256 flows carries each flow's cumulative figures and the non-zero
 * buckets of its latency histogram, up to ~1.1 MB when every bucket of every
 * flow is used (proto/flow_figs.h; test_flow_ival checks the worst case fits).
 */
#define XP_CTRL_MAX_REPLY (2u << 20)

struct xp_ctrl {
	int fd;
	char *buf;  /* received bytes, grown on demand up to max_msg (xp_ctrl_free frees it) */
	size_t cap;
	size_t max_msg; /* a line and its newline must fit in max_msg - 1 bytes, else -EPROTO: XP_CTRL_MAX_MSG unless set */
	size_t len; /* bytes buffered but not yet returned */
	/* Queued mode (the server): what the peer has not taken yet, never more than out_limit. */
	char *out;
	size_t out_len, out_cap, out_limit;
	/* Keep a copy of each line taken (the authenticated request's exact bytes). */
	bool keep_line;
	char *line;
	size_t line_len;
};

/* Blocking mode (the client): a send waits, up to a second at a time, for the peer. */
void xp_ctrl_init(struct xp_ctrl *c, int fd);
/*
 * Queued mode for an event loop that serves many peers: sends never wait.
 * What the socket does not take at once is queued (at most out_limit bytes)
 * and sent by xp_ctrl_flush when poll says POLLOUT; a peer that lets more
 * pile up than that makes xp_ctrl_send fail with -ENOBUFS, and is dropped.
 */
void xp_ctrl_init_queued(struct xp_ctrl *c, int fd, size_t out_limit);
/* Take lines as long as a buffer of n bytes holds from now on (XP_CTRL_MAX_REPLY: the client's). */
void xp_ctrl_set_max_msg(struct xp_ctrl *c, size_t n);
/* Frees the receive buffer and what queued mode and keep_line allocated (does not close fd). */
void xp_ctrl_free(struct xp_ctrl *c);
/* Send one object (does not take ownership). 0 or -errno (-ENOBUFS: output limit reached). */
int xp_ctrl_send(struct xp_ctrl *c, struct json_object *obj);
/* Send one line as it is (the newline is added), e.g. the exact bytes a MAC covers. 0 or -errno. */
int xp_ctrl_send_line(struct xp_ctrl *c, const char *line);
/* Queued mode: send what is queued, without waiting. 0 (maybe some left) or -errno. */
int xp_ctrl_flush(struct xp_ctrl *c);
/* Queued mode: bytes still waiting for the peer. */
static inline size_t xp_ctrl_pending(const struct xp_ctrl *c) { return c->out_len; }
/*
 * Receive one object, waiting up to timeout_ms (-1: forever). Returns 1 with
 * *out set (caller puts it), 0 on orderly close, -ETIMEDOUT, -EPROTO for
 * malformed input, or -errno.
 */
int xp_ctrl_recv(struct xp_ctrl *c, int timeout_ms, struct json_object **out);
/*
 * Non-blocking variant for event loops: reads what is available from the
 * socket once, then returns the first complete object if any (1), 0 on
 * close, -EAGAIN when no complete object is buffered yet.
 */
int xp_ctrl_poll_recv(struct xp_ctrl *c, struct json_object **out);
/* Whether a complete line is buffered already (poll will not say so). */
static inline bool xp_ctrl_has_line(const struct xp_ctrl *c) { return c->len && memchr(c->buf, '\n', c->len); }
/* Extract a complete buffered object without reading the socket (1 / -EAGAIN / -EPROTO). */
int xp_ctrl_take(struct xp_ctrl *c, struct json_object **out);

/* Connect to host:port (numeric address or name), with a timeout. fd or -errno
 * (-ENOENT: the name did not resolve) with a one-line reason in err that names
 * the cause (no route, nothing listening, silent SYN with or without ping). */
int xp_ctrl_connect(const char *host, unsigned short port, int family, int timeout_ms, char *err, size_t errlen);

/* Small accessors that tolerate missing keys (and, for the client's use, loose types). */
const char *xp_json_str(struct json_object *o, const char *key, const char *dflt);
long long xp_json_int(struct json_object *o, const char *key, long long dflt);
double xp_json_double(struct json_object *o, const char *key, double dflt);

#endif
