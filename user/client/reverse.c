/*
 * --bidir's other direction, asked of the server (client.h,
 * xp_client_reverse_*): B->A is an ordinary test the server's side runs, by
 * a child it starts, against a server the caller runs on its own side (the
 * RFC 2544 suite: rfc2544/bidir.c; the design there and in
 * server/reverse.c). Here is only the exchange: a control connection of
 * its own, {"op":"reverse"} with the trial's size, rate and length, the
 * answer to the server's challenge with --auth-key's key (proto/auth.h, as
 * a start request answers it), and the wait for {"op":"reversed"} with the
 * child's figures. It blocks for the trial's length: the caller runs its
 * own A->B trial meanwhile from another thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client.h"
#include "proto/auth.h"
#include "proto/channel.h"
#include "proto/messages.h"

#define REPLY_MARGIN_S 30  /* the reverse trial's figures come within its length + this (the server's own margin is 20 s) */

struct xp_client_reverse {
	const struct xp_spec *s;   /* the caller's: the server, its control port, the engine and traffic */
	unsigned short port;       /* the control port of the caller's server, which counts B->A */
	struct xp_auth_key *key;   /* --auth-key, or NULL */
};

struct xp_client_reverse *xp_client_reverse_open(const struct xp_spec *s, unsigned short port, char *err,
						 size_t errlen)
{
	struct xp_client_reverse *r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->s = s;
	r->port = port;
	if (s->auth_key[0]) {
		/* Loaded here once (a trial's client loads it for each test): a bad file fails before anything starts. */
		r->key = calloc(1, sizeof(*r->key));
		if (!r->key) {
			snprintf(err, errlen, "out of memory");
			free(r);
			return NULL;
		}
		if (xp_auth_key_load(s->auth_key, r->key, err, errlen)) {
			xp_client_reverse_close(r);
			return NULL;
		}
	}
	return r;
}

void xp_client_reverse_close(struct xp_client_reverse *r)
{
	if (!r)
		return;
	if (r->key) {
		xp_auth_key_clear(r->key);
		free(r->key);
	}
	free(r);
}

/* The request for one reverse trial: the test's engine, family and protocol, the trial's size, burst and length. */
static void make_req(const struct xp_client_reverse *r, const struct xp_trial_req *req, double pps,
		     struct xp_reverse_req *q)
{
	const struct xp_spec *s = r->s;
	memset(q, 0, sizeof(*q));
	q->port = r->port;
	q->engine = s->engine == XP_ENGINE_XSK ? "xsk" : "live";
	q->family = s->family == AF_INET6 || strchr(s->host, ':') ? AF_INET6 : AF_INET;
	q->udp = s->traffic[0].udp;
	q->frame_size = req->frame_len;
	if (req->mix)
		xp_mix_spec(req->mix, q->mix, sizeof(q->mix));
	q->pps = pps;
	q->burst = req->burst;
	q->seconds = req->seconds;
	q->no_stamps = s->no_stamps;
}

void xp_client_reverse(const struct xp_client_reverse *r, const struct xp_trial_req *req, double pps,
		       struct xp_reverse_res *res)
{
	const struct xp_spec *s = r->s;
	struct xp_reverse_req q;
	char err[256];
	memset(res, 0, sizeof(*res));
	make_req(r, req, pps, &q);
	int fd = xp_ctrl_connect(s->host, s->control_port, s->family, 3000, err, sizeof(err));
	if (fd < 0) {
		res->rc = 1;
		snprintf(res->error, sizeof(res->error), "reverse trial: %.230s", err);
		return;
	}
	struct xp_ctrl *c = malloc(sizeof(*c));
	if (!c) {
		close(fd);
		res->rc = 1;
		snprintf(res->error, sizeof(res->error), "out of memory");
		return;
	}
	xp_ctrl_init(c, fd);
	struct json_object *m = xp_reverse_req_to_json(&q), *rep = NULL;
	err[0] = '\0';
	int e = xp_auth_send_line(c, r->key, json_object_to_json_string_ext(m, JSON_C_TO_STRING_PLAIN), err, sizeof(err));
	json_object_put(m);
	if (!e)
		e = xp_ctrl_recv(c, (int)((q.seconds + REPLY_MARGIN_S) * 1000), &rep);
	if (e <= 0) {
		res->rc = 1;
		snprintf(res->error, sizeof(res->error), "reverse trial: %.230s", e == 0 ? "the server closed the connection"
			 : e == -ETIMEDOUT ? "no figures from the server in time" : e == -EPROTO && err[0] ? err : strerror(-e));
	} else if (!strcmp(xp_json_str(rep, "op", ""), "reversed")) {
		struct json_object *v = NULL;
		json_object_object_get_ex(rep, "result", &v);
		if (xp_reverse_res_from_json(v, res, err, sizeof(err))) {
			res->rc = 1;
			snprintf(res->error, sizeof(res->error), "reverse trial: bad figures from the server: %.200s", err);
		}
	} else {
		char msg[200];
		xp_msg_printable(xp_json_str(rep, "msg", "unexpected reply"), msg, sizeof(msg));
		res->rc = 1;
		snprintf(res->error, sizeof(res->error), "reverse trial: the server says: %s", msg);
	}
	json_object_put(rep);
	close(fd);
	xp_ctrl_free(c);
	free(c);
}
