/* The one-flow shortcuts made into the test's traffic (cli/flow_opts.c); the rules are validate.c's. */
#ifndef XP_CLI_FLOW_OPTS_H
#define XP_CLI_FLOW_OPTS_H

#include <stddef.h>

#include "cli/opts.h"

#define XP_FLOW_GIVEN_DSCP 0x1u /* --dscp given */
#define XP_FLOW_GIVEN_TTL  0x2u /* --ttl given */

/* traffic[0]'s headers of --vlan, --dscp, --ttl, --src and --dst (o->flow), every
 * other field filled from the path at run time (hdr_auto). 0, or -1 with err. */
int xp_cli_flow_shortcut(struct xp_opts *o, unsigned given, char *err, size_t errlen);

#endif
