/*
 * Without -p the client asks the server for its test's ports (issue 30
 * point 6): {"op":"ports"} before the engine is opened, because the engines
 * bake the ports into their frames and programs. Two clients against one
 * server then get different ranges instead of the second one being refused.
 * A server that does not know the request (an older xdpperf) answers
 * "unknown request": the test keeps the default range, as before. With -p,
 * nothing is asked and the range is the user's (server/ports_op.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "client/session.h"

int xp_client_ask_ports(struct client *c, struct xp_spec *sp)
{
	if (sp->traffic[0].port_set || c->no_server)
		return 0;
	unsigned width = (unsigned)sp->traffic[0].port_hi - sp->traffic[0].port_lo + 1;
	struct json_object *m = json_object_new_object(), *r = NULL, *v;
	json_object_object_add(m, "op", json_object_new_string("ports"));
	json_object_object_add(m, "width", json_object_new_int((int)width));
	json_object_object_add(m, "udp", json_object_new_boolean(sp->traffic[0].udp));
	/* Socket tests (and --peer kernel) use the server's listeners: a server with standing ones hands out theirs. */
	json_object_object_add(m, "listen", json_object_new_boolean(sp->engine == XP_ENGINE_SOCKET || sp->peer_kernel));
	const char *line = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN);
	int e = xp_auth_send_line(&c->ctrl, &c->key, line, c->errbuf, sizeof(c->errbuf));
	json_object_put(m);
	if (!e)
		e = xp_ctrl_recv(&c->ctrl, 10000, &r);
	/* The first answer tells an xdpperf server from whatever else listens there, as the start's does (request.c). */
	if ((e = xp_client_first_answer(c, sp, e, r, "ports", "not an xdpperf server, one that dropped us (see its log), "
					"or an older one with --auth-key that hands out no port ranges (give -p LO:HI)",
					"asking the server for a port range: ")))
		return e;
	const char *op = xp_json_str(r, "op", "");
	char msg[200];
	xp_msg_printable(xp_json_str(r, "msg", "no reason given"), msg, sizeof(msg));
	if (!strcmp(op, "error") && !strncmp(msg, "unknown request", 15)) {
		json_object_put(r); /* an older server: the default range, as before it had the request */
		return 0;
	}
	if (!strcmp(op, "error")) {
		json_object_put(r);
		return xp_client_fail(c, 1, "server refused a port range: %s", msg);
	}
	int64_t lo = json_object_object_get_ex(r, "lo", &v) ? json_object_get_int64(v) : -1;
	int64_t hi = json_object_object_get_ex(r, "hi", &v) ? json_object_get_int64(v) : -1;
	json_object_put(r);
	/* A standing listeners' range may have another width than ours; anything else must be what we asked. */
	if (strcmp(op, "ports") || lo < 1 || hi > 65535 || lo > hi)
		return xp_client_fail(c, 1, "%s port %u answered the port-range request with something else: is that an "
			    "xdpperf server? (or give -p LO:HI)", sp->host, sp->control_port);
	sp->traffic[0].port_lo = (uint16_t)lo;
	sp->traffic[0].port_hi = (uint16_t)hi;
	return 0;
}
