/*
 * What the client watches beside a connection test so that its report can
 * say why SYNs went unanswered (report/diagnosis.h): its own interface's
 * receive drops and, with --device-netns, the device's conntrack table and
 * drops. And a mark that a connection test just ran against a server, so a
 * control connection that times out soon after can say why it likely did.
 */
#ifndef XP_CLIENT_DIAG_H
#define XP_CLIENT_DIAG_H

#include <stdbool.h>
#include <stddef.h>

#include "net/devstate.h"
#include "report/diagnosis.h"

struct xp_diag_watch {
	const char *netns;          /* --device-netns, NULL or "" for none */
	int ifindex;                /* the client's test interface */
	bool have_dev, have_rx;
	struct xp_devstate d0, d1;  /* the device at the start and at the end */
	uint64_t ct_peak;
	uint64_t rx0, rx1;
};

/* Take the first readings. 0, or -errno with a one-line reason (a --device-netns that cannot be read). */
int xp_diag_watch_start(struct xp_diag_watch *w, const char *netns, int ifindex, char *err, size_t errlen);
/* At an interval's end: the device table's peak. */
void xp_diag_watch_sample(struct xp_diag_watch *w);
/* The last readings, as the diagnosis's input (have_server and peer_kernel left to the caller). */
void xp_diag_watch_end(struct xp_diag_watch *w, struct xp_diag_input *in);

/* How long after a connection test a timed-out control connection is blamed on the device's table:
 * conntrack keeps closed entries up to 120 s (TIME_WAIT). */
#define XP_CONN_TEST_RECENT 130.0

/* Note that a connection test against host ended now (a stamp under /run/xdpperf). */
void xp_conn_test_mark(const char *host);
/* Seconds since the last connection test against host ended, or -1 if none is known. */
double xp_conn_test_age(const char *host);

#endif
