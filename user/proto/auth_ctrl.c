/*
 * The client's half of --auth-key's exchange on a control connection
 * (auth.h has the wire): the start request's (client/request.c) and
 * --bidir's reverse request's (client/reverse.c), so both send the same
 * challenge, MAC and line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "proto/auth.h"
#include "proto/channel.h"
#include "proto/messages.h"

#define CHALLENGE_WAIT_MS 10000

int xp_auth_send_line(struct xp_ctrl *c, const struct xp_auth_key *k, const char *line, char *err, size_t errlen)
{
	if (!k || !k->set)
		return xp_ctrl_send_line(c, line);
	struct json_object *q = json_object_new_object(), *r = NULL;
	json_object_object_add(q, "op", json_object_new_string("challenge"));
	int e = xp_ctrl_send(c, q);
	json_object_put(q);
	if (!e)
		e = xp_ctrl_recv(c, CHALLENGE_WAIT_MS, &r);
	if (e <= 0)
		return e == 0 ? -ECONNRESET : e;
	char mac[XP_AUTH_HEX_LEN + 1], msg[200];
	const char *nonce = xp_json_str(r, "nonce", "");
	if (strcmp(xp_json_str(r, "op", ""), "challenge") || xp_auth_mac(k, nonce, line, strlen(line), mac)) {
		xp_msg_printable(xp_json_str(r, "msg", "no challenge from the server"), msg, sizeof(msg));
		snprintf(err, errlen, "authentication: %s", msg);
		json_object_put(r);
		return -EPROTO;
	}
	json_object_put(r);
	q = json_object_new_object();
	json_object_object_add(q, "op", json_object_new_string("auth"));
	json_object_object_add(q, "mac", json_object_new_string(mac));
	e = xp_ctrl_send(c, q);
	json_object_put(q);
	return e ? e : xp_ctrl_send_line(c, line);
}
