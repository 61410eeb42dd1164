/*
 * `xdpperf --otg [ADDR]:PORT`: one controller (otg/otg.h) behind the REST
 * API (otg/http.c) until SIGINT or SIGTERM. Then the API stops first (no
 * request can start traffic any more), then the controller stops what runs
 * and detaches everything (xp_otg_free).
 *
 * SIGINT and SIGTERM are blocked before any thread starts, so every thread
 * (the controller's, libmicrohttpd's) inherits the mask and only sigwait
 * here takes them.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "otg/http.h"
#include "spec/spec.h" /* XP_EXIT_* */

int xp_otg_serve(const struct xp_otg_opts *co, const struct xp_otg_listen *l)
{
	char err[512];
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &old);

	struct xp_otg *c = xp_otg_new(co);
	if (!c) {
		fprintf(stderr, "xdpperf: --otg: cannot set up the controller: %s\n", strerror(errno));
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return XP_EXIT_RUNTIME;
	}
	struct xp_otg_http *h = xp_otg_http_start(c, l, err, sizeof(err));
	if (!h) {
		fprintf(stderr, "xdpperf: %s\n", err);
		xp_otg_free(c);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return XP_EXIT_RUNTIME;
	}
	char as[INET6_ADDRSTRLEN];
	xp_addr_str(&l->addr, as, sizeof(as));
	bool v6 = l->addr.family == AF_INET6;
	printf("OTG API (models v%s) on %s://%s%s%s:%u%s; SIGINT or SIGTERM stops it\n", XP_OTG_API_VERSION,
	       l->cert_file ? "https" : "http", v6 ? "[" : "", as, v6 ? "]" : "", xp_otg_http_port(h),
	       l->token_file ? ", bearer token required" : "");
	fflush(stdout);

	int sig = 0;
	while (sigwait(&set, &sig))
		;
	xp_otg_http_stop(h);
	xp_otg_free(c);
	printf("OTG API stopped by %s: traffic stopped, nothing left attached\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return XP_EXIT_OK;
}
