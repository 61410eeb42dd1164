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
#include "net/addr.h"

/* Most --bind addresses a start request carries (the XDP program's limit). */
#define XP_TEST_MAX_BIND XP_SLOT_MAX_PEERS

enum xp_test_kind {
	XP_TEST_STREAM = 0,  /* data frames / streams */
	XP_TEST_CONNECT,     /* connection rate (-x) */
	XP_TEST_HOLD,        /* held connections (-k) */
};

struct xp_test {
	int version;
	enum xp_test_kind kind;
	const char *engine;   /* the engine's name, engine/names.h (static string) */
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
};

/* The longest test any server runs (the CLI's -t limit); a server's --max-duration can only lower it. */
#define XP_TEST_DURATION_MAX 86400.0

const char *xp_test_kind_name(enum xp_test_kind k);
struct json_object *xp_test_to_json(const struct xp_test *t);
/*
 * Fills t from a "start" message; 0 or -1 with a one-line err. Strict: a field
 * of the wrong type (1.9 for an integer, "1" for a boolean), an unknown name,
 * a value out of range or a duration that is not finite and positive is an
 * error. Strings point into static names.
 */
int xp_test_from_json(struct json_object *o, struct xp_test *t, char *err, size_t errlen);

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

#endif
