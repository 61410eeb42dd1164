/*
 * Control channel between client and server: one TCP connection per test,
 * carrying newline-delimited JSON objects ({"op": ...}). The client asks, the
 * server answers; see docs in README "Control protocol".
 */
#ifndef XP_CHANNEL_H
#define XP_CHANNEL_H

#include <json-c/json.h>
#include <stddef.h>

#define XP_CONTROL_PORT_DEFAULT 5301
#define XP_PROTO_VERSION 1
#define XP_CTRL_MAX_MSG 65536

struct xp_ctrl {
	int fd;
	char buf[XP_CTRL_MAX_MSG];
	size_t len; /* bytes buffered but not yet returned */
};

void xp_ctrl_init(struct xp_ctrl *c, int fd);
/* Send one object (does not take ownership). 0 or -errno. */
int xp_ctrl_send(struct xp_ctrl *c, struct json_object *obj);
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
/* Extract a complete buffered object without reading the socket (1 / -EAGAIN / -EPROTO). */
int xp_ctrl_take(struct xp_ctrl *c, struct json_object **out);

/* Connect to host:port (numeric address or name), with a timeout. fd or -errno
 * (-ENOENT: the name did not resolve) with a one-line reason in err that names
 * the cause (no route, nothing listening, silent SYN with or without ping). */
int xp_ctrl_connect(const char *host, unsigned short port, int family, int timeout_ms, char *err, size_t errlen);

/* Small accessors that tolerate missing keys. */
const char *xp_json_str(struct json_object *o, const char *key, const char *dflt);
long long xp_json_int(struct json_object *o, const char *key, long long dflt);
double xp_json_double(struct json_object *o, const char *key, double dflt);

#endif
