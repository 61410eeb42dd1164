/* Process-wide state: signal handling and the privilege check. */
#ifndef XP_PROCESS_H
#define XP_PROCESS_H

#include <stddef.h>

/* Set by SIGINT/SIGTERM handlers installed with xp_install_signals(). */
extern volatile int xp_signalled;
void xp_install_signals(void);
/* 0 when the process may load XDP programs and open AF_XDP sockets, else -EPERM with err set. */
int xp_check_privileges(char *err, size_t errlen);

#endif
