/*
 * Opening and closing a socket test's listeners off the event loop.
 *
 * Opening listeners on many ports, forking worker processes past the
 * open-file limit, and closing tens of thousands of held connections take
 * from milliseconds to seconds; done in the control loop they froze every
 * other client. One thread does them instead, in order, and the loop learns
 * of each finished job through an eventfd. It lives as long as the server:
 * worker processes die with the thread that forked them (PR_SET_PDEATHSIG).
 *
 * The thread also keeps two server-wide budgets: worker processes over all
 * tests (--max-workers-total), and the open-file limit, which starting
 * listeners raises and which it puts back once no test's listeners are left.
 */
#ifndef XP_SOCKJOBS_H
#define XP_SOCKJOBS_H

#include <stdint.h>

#include "server/listeners.h"

enum xp_sockjob_kind { XP_SOCKJOB_OPEN, XP_SOCKJOB_CLOSE };

struct xp_sockjob_done {
	enum xp_sockjob_kind kind;
	uint64_t id;                /* what the caller gave */
	struct xp_sock_server *ss;  /* OPEN: the listeners, NULL on failure */
	char err[256];              /* OPEN failed: why */
};

struct xp_sockjobs;

/* Start the thread. 0, or -1 with err. */
int xp_sockjobs_start(struct xp_sockjobs **out, unsigned max_workers_total, char *err, size_t errlen);
/* Readable when a job has finished: then call xp_sockjobs_take until it returns 0. */
int xp_sockjobs_fd(const struct xp_sockjobs *j);
/* Queue: open listeners for cfg (cfg.max_procs further capped by the total budget). 0 or -ENOMEM. */
int xp_sockjobs_open(struct xp_sockjobs *j, uint64_t id, const struct xp_sock_server_cfg *cfg);
/* Queue: close ss (ownership passes to the thread). 0 or -ENOMEM (then it was closed here, blocking). */
int xp_sockjobs_close(struct xp_sockjobs *j, uint64_t id, struct xp_sock_server *ss);
/* One finished job: 1 with *d filled, 0 when none is left. */
int xp_sockjobs_take(struct xp_sockjobs *j, struct xp_sockjob_done *d);
/* Finish what is queued (opens are closed again at once), end the thread, free j. */
void xp_sockjobs_stop(struct xp_sockjobs *j);

#endif
