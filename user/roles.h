/* The two roles of the program. Each returns the process exit status. */
#ifndef XP_ROLES_H
#define XP_ROLES_H

#include "opts.h"

int xp_server_run(const struct xp_opts *o);
int xp_client_run(const struct xp_opts *o);

/* Set by SIGINT/SIGTERM handlers installed with xp_install_signals(). */
extern volatile int xp_signalled;
void xp_install_signals(void);
/* 0 when the process may load XDP programs and open AF_XDP sockets, else -EPERM with err set. */
int xp_check_privileges(char *err, size_t errlen);

#endif
