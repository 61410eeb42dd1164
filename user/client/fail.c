/*
 * How the client stops: the one line of an error, on stderr and in the
 * report, and kept for --compare's report. Every step of a test (path.c,
 * engine_cfg.c, request.c, client.c) ends through here, so none of them calls
 * back into client.c.
 */
#include <stdarg.h>
#include <stdio.h>

#include "client/session.h"

/* Why the client stopped, for --compare's report; see xp_client_last_error. */
static char last_error[512];

const char *xp_client_last_error(void)
{
	return last_error;
}

const char *xp_client_error_set(const char *msg)
{
	snprintf(last_error, sizeof(last_error), "%s", msg);
	return last_error;
}

/* The client cannot go on: one line on stderr and, with -J, in the report. Returns rc. */
__attribute__((format(printf, 3, 4)))
int xp_client_fail(struct client *c, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	if (!c->ro->quiet)
		fprintf(stderr, "xdpperf: %s\n", last_error);
	xp_report_error(&c->rep, last_error);
	return rc;
}
