/*
 * The OTG REST API's front end (issue 27): `xdpperf --otg [ADDR]:PORT`
 * serves the traffic subset of the Open Traffic Generator API over HTTP
 * (libmicrohttpd, a thread per connection) and hands each body to the
 * controller of otg/otg.h:
 *
 *   POST /config, GET /config    xp_otg_set_config, xp_otg_get_config
 *   POST /control/state          xp_otg_set_state
 *   POST /monitor/metrics        xp_otg_metrics
 *   GET  /capabilities/version   xp_otg_version
 *
 * Every failure is OTG's Error object {"code","kind","errors":[...]} with
 * the HTTP status in code: a body that is not JSON 400, an unknown path 404,
 * a wrong method 405 (with Allow), a body over XP_OTG_BODY_MAX 413, a
 * missing or wrong bearer token 401.
 *
 * Listening: loopback unless told otherwise; a listener on any other
 * address needs TLS (--otg-cert, --otg-key) and a token (--otg-token), as a
 * remote API that starts traffic must not be open to whoever reaches it.
 */
#ifndef XP_OTG_HTTP_H
#define XP_OTG_HTTP_H

#include <stdbool.h>
#include <stddef.h>

#include "otg/otg.h"
#include "util/addr.h"

#define XP_OTG_BODY_MAX (4u << 20) /* a request body's bytes; a Config of 256 flows is far below */
#define XP_OTG_CONNS 16            /* API clients at once (a thread each) */
#define XP_OTG_IDLE_S 60           /* s an idle connection is kept */

/* The listener as the options give it (cli/): NULL files are not given. */
struct xp_otg_listen {
	struct xp_addr addr;
	unsigned short port;     /* 0: any free port (the tests') */
	const char *token_file;  /* --otg-token FILE: the bearer token, one line */
	const char *cert_file;   /* --otg-cert FILE: PEM certificate (chain) */
	const char *key_file;    /* --otg-key FILE: PEM private key */
};

/* "[ADDR]:PORT", "ADDR:PORT" or ":PORT" (ADDR default 127.0.0.1). 0, or -1 with a one-line err. */
int xp_otg_listen_parse(const char *s, struct xp_otg_listen *l, char *err, size_t errlen);
/* The rules between the listener's options: a non-loopback address needs TLS and a token;
 * a cert needs its key and the other way round. 0, or -1 with a one-line err. */
int xp_otg_listen_check(const struct xp_otg_listen *l, char *err, size_t errlen);

struct xp_otg_http;

/*
 * Binds the listener and starts serving c (which the caller keeps and frees
 * after xp_otg_http_stop). Reads the token and TLS files now: a file that is
 * missing, empty or not PEM is refused here, before anything listens.
 * NULL with a one-line err on failure.
 */
struct xp_otg_http *xp_otg_http_start(struct xp_otg *c, const struct xp_otg_listen *l, char *err, size_t errlen);
/* The port it listens on (the one the kernel chose for port 0). */
unsigned short xp_otg_http_port(const struct xp_otg_http *h);
/* Stops listening, waits for the connections' threads, frees h. NULL is fine. */
void xp_otg_http_stop(struct xp_otg_http *h);

/*
 * `xdpperf --otg`: a controller and its API until SIGINT or SIGTERM, then
 * traffic stopped and everything freed (xp_otg_free). The exit status.
 */
int xp_otg_serve(const struct xp_otg_opts *co, const struct xp_otg_listen *l);

#endif
