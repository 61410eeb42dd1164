/*
 * {"op":"ports","width":N,"udp":B,"listen":B}: a client that did not choose
 * its ports (-p) asks for a range before it opens its engine; the answer is
 * {"op":"ports","lo":L,"hi":H}, reserved for this connection until it ends
 * (its test's ports then hold the range), so two clients that ask at once
 * get different ranges and another client's explicit -p is refused on it.
 * A socket test on a server with standing listeners (-s -P N -p RANGE) gets
 * their range, as without the request. See portrange.h.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "server/policy.h"
#include "server/portrange.h"
#include "server/state.h"
#include "spec/defaults.h"

/* A connection whose ports count as taken: reserved, or its test's. */
static void taken_by(const struct srv_client *k, struct xp_portset *taken)
{
	if (k->state == SRV_FREE)
		return;
	if (k->resv_hi)
		xp_portset_add_range(taken, k->resv_lo, k->resv_hi);
	if (k->slot >= 0 || k->ss)
		xp_portset_add_range(taken, k->test.port_lo, k->test.port_hi);
}

int srv_ports_reserved(const struct server *s, const struct srv_client *c, unsigned lo, unsigned hi, char *err,
		       size_t errlen)
{
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		const struct srv_client *k = &s->cl[i];
		if (k == c || k->state == SRV_FREE || !k->resv_hi || hi < k->resv_lo || k->resv_hi < lo)
			continue;
		snprintf(err, errlen, "ports %u:%u overlap %u:%u, which this server handed to another client's test; "
			 "pick another -p range", lo, hi, k->resv_lo, k->resv_hi);
		return -1;
	}
	return 0;
}

static int get_uint(struct json_object *m, const char *key, unsigned max, unsigned *v)
{
	struct json_object *j;
	if (!json_object_object_get_ex(m, key, &j) || !json_object_is_type(j, json_type_int))
		return -1;
	int64_t x = json_object_get_int64(j);
	if (x < 1 || x > (int64_t)max)
		return -1;
	*v = (unsigned)x;
	return 0;
}

static bool get_bool(struct json_object *m, const char *key)
{
	struct json_object *j;
	return json_object_object_get_ex(m, key, &j) && json_object_is_type(j, json_type_boolean) &&
	       json_object_get_boolean(j);
}

static void reply(struct srv_client *c, unsigned lo, unsigned hi)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("ports"));
	json_object_object_add(o, "lo", json_object_new_int((int)lo));
	json_object_object_add(o, "hi", json_object_new_int((int)hi));
	xp_ctrl_send(&c->ctrl, o);
	json_object_put(o);
}

void srv_on_ports(struct server *s, struct srv_client *c, struct json_object *m)
{
	const struct xp_server_cfg *cfg = s->cfg;
	char err[256];
	unsigned width;
	if (c->state != SRV_IDLE) {
		srv_refuse(s, c, "a test is already running on this connection", NULL);
		return;
	}
	if (get_uint(m, "width", 65535, &width)) {
		srv_refuse(s, c, "bad ports request: \"width\" must be a number of ports, 1 to 65535", NULL);
		return;
	}
	bool udp = get_bool(m, "udp");
	if (get_bool(m, "listen") && s->listeners) {
		/* The standing listeners are where a socket test without -p goes (session.c, uses_standing). */
		reply(c, cfg->port_lo, cfg->port_hi);
		return;
	}
	/* 8 KiB each: not on the event loop's stack. */
	static struct xp_portset taken, used;
	memset(&taken, 0, sizeof(taken));
	if (cfg->test_port_lo > 0)
		xp_portset_add_range(&taken, 0, cfg->test_port_lo - 1u);
	xp_portset_add_range(&taken, cfg->test_port_hi + 1u, 65535);
	xp_portset_add(&taken, cfg->control_port);
	uint16_t elo, ehi;
	if (!xp_ephemeral_range(&elo, &ehi))
		xp_portset_add_range(&taken, elo, ehi);
	else
		xp_portset_add_range(&taken, 0, 65535); /* unknown: nothing is safe to hand out */
	if (s->listeners)
		xp_portset_add_range(&taken, cfg->port_lo, cfg->port_hi);
	for (int i = 0; i < XP_SRV_MAX_CLIENTS; i++) {
		taken_by(&s->cl[i], &taken);
		if (s->closing[i].used)
			xp_portset_add_range(&taken, s->closing[i].ports.lo, s->closing[i].ports.hi);
	}
	/* Other programs' sockets: the start's own check (policy.c) looks at the test's protocol only. */
	int r = xp_ports_in_use(udp ? IPPROTO_UDP : IPPROTO_TCP, &used);
	if (r) {
		snprintf(err, sizeof(err), "cannot list the server's sockets (sock_diag): %s; give -p LO:HI", strerror(-r));
		srv_refuse(s, c, err, err);
		return;
	}
	for (size_t i = 0; i < sizeof(used.bits); i++)
		taken.bits[i] |= used.bits[i];
	uint16_t lo;
	if (xp_port_run(&taken, cfg->test_port_lo, cfg->test_port_hi, XP_DEFAULT_PORT_LO, width, &lo)) {
		snprintf(err, sizeof(err),
			 "no free range of %u ports on this server (its tests, listeners and ephemeral ports hold the "
			 "rest of %u:%u, --test-ports); give -p LO:HI with fewer ports, or try again later",
			 width, cfg->test_port_lo, cfg->test_port_hi);
		srv_refuse(s, c, err, err);
		return;
	}
	c->resv_lo = lo;
	c->resv_hi = (uint16_t)(lo + width - 1);
	reply(c, c->resv_lo, c->resv_hi);
	printf("[%s] ports %u:%u handed out for its test (it gave no -p)\n", c->peer_s, c->resv_lo, c->resv_hi);
	fflush(stdout);
}
