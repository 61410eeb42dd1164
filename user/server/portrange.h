/*
 * The port range a server hands a client that did not choose one with -p
 * (issue 30 point 6): the {"op":"ports"} request (ports_op.c) comes before
 * the client opens its engine, which bakes the ports into its frames and
 * programs. What is taken (running tests, other clients' reservations,
 * listeners of other programs, the control port, the ephemeral range, what
 * --test-ports leaves out) is marked in a port set; the range is the first
 * run of free ports from the default -p range upwards, then from the bottom.
 */
#ifndef XP_PORTRANGE_H
#define XP_PORTRANGE_H

#include <stdint.h>

#include "net/listening.h"

/* Mark lo..hi (inclusive, in any order of calls; lo > hi marks nothing). */
void xp_portset_add_range(struct xp_portset *s, unsigned lo, unsigned hi);

/*
 * The first run of width ports inside lo..hi with none in taken: looked for
 * from start upwards, then from lo up to start. 0 with *out its first port,
 * or -ENOSPC (none: width 0 or wider than lo..hi included).
 */
int xp_port_run(const struct xp_portset *taken, unsigned lo, unsigned hi, unsigned start, unsigned width,
		uint16_t *out);

#endif
