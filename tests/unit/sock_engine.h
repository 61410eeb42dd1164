/*
 * What the socket engine's unit tests share (test_socket_engine.c,
 * test_socket_stream.c): a socket server on a free block of nports ports in
 * 61000-64999, an engine configuration on its ports, and an engine created
 * and started or the test failed with the engine's message. Header only:
 * the unit tests link no tests/lib object. Include after <cmocka.h>.
 */
#ifndef XP_TESTS_SOCK_ENGINE_H
#define XP_TESTS_SOCK_ENGINE_H

#include <string.h>

#include "engine/engine.h"
#include "util/addr.h"
#include "server/listeners.h"

/* A server for max_conns on nports free ports; returns the first port. */
static inline uint16_t xpt_sock_server(struct xp_sock_server **srv, unsigned nports, unsigned long max_conns)
{
	char err[256] = "";
	for (unsigned base = 61000; base + nports <= 65000; base += 16) {
		struct xp_sock_server_cfg c = { .port_lo = (uint16_t)base, .port_hi = (uint16_t)(base + nports - 1),
						.threads = 2, .max_conns = max_conns };
		if (!xp_sock_server_start(&c, srv, err, sizeof(err)))
			return (uint16_t)base;
	}
	fail_msg("no free port block for the server: %s", err);
	return 0;
}

/* A test of `kind` against server:[lo, hi] with `parallel` connections, 2 threads, a 20-s hard stop. */
static inline void xpt_sock_cfg(struct xp_engine_cfg *c, enum xp_test_kind kind, const char *server, uint16_t lo,
				uint16_t hi, unsigned parallel)
{
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	assert_int_equal(xp_addr_parse(server, &c->server), 0);
	c->dport_lo = lo;
	c->dport_hi = hi;
	c->parallel = parallel;
	c->sock.threads = 2;
	c->max_seconds = 20;
}

static inline struct xp_engine *xpt_sock_start(const struct xp_engine_ops *ops, const struct xp_engine_cfg *c)
{
	struct xp_engine *e = NULL;
	char err[256] = "";
	if (ops->create(c, &e, err, sizeof(err)))
		fail_msg("create: %s", err);
	if (ops->start(e, err, sizeof(err)))
		fail_msg("start: %s", err);
	return e;
}

#endif
