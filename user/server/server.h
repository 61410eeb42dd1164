/* The server role: `xdpperf -s`. */
#ifndef XP_SERVER_H
#define XP_SERVER_H

#include "server/config.h"

/* Serve tests until a signal (or one test with -1). Returns the process exit status. */
int xp_server_run(const struct xp_server_cfg *cfg);

#endif
