/* The listener thread: socket tests' listeners opened and closed off the event loop. See sockjobs.h. */
#include "server/sockjobs.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

struct job {
	struct xp_sockjob_done d;
	struct xp_sock_server_cfg cfg; /* OPEN */
	struct job *next;
};

struct xp_sockjobs {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct job *todo, **todo_tail; /* queued, in order */
	struct job *done, **done_tail; /* finished, for take() */
	bool stopping;
	int efd;
	/* The thread's own: worker processes in use, listener sets open, the limit to put back. */
	unsigned max_workers_total, workers_used, open_sets;
	struct rlimit nofile0;
};

static void push(struct job **head, struct job ***tail, struct job *j)
{
	j->next = NULL;
	**tail = j;
	*tail = &j->next;
}

static struct job *pop(struct job **head, struct job ***tail)
{
	struct job *j = *head;
	if (j) {
		*head = j->next;
		if (!*head)
			*tail = head;
	}
	return j;
}

/* Worker processes a set of listeners uses (in-process listeners: none). */
static unsigned procs_of(struct xp_sock_server *ss)
{
	unsigned n = xp_sock_server_procs(ss);
	return n > 1 ? n : 0;
}

static void run_job(struct xp_sockjobs *s, struct job *j)
{
	if (j->d.kind == XP_SOCKJOB_OPEN) {
		unsigned left = s->max_workers_total > s->workers_used ? s->max_workers_total - s->workers_used : 0;
		if (j->cfg.cap_procs && j->cfg.max_procs > left) {
			j->cfg.max_procs = left;
			j->cfg.cap_is_total = true;
		}
		if (xp_sock_server_start(&j->cfg, &j->d.ss, j->d.err, sizeof(j->d.err))) {
			j->d.ss = NULL;
		} else {
			s->workers_used += procs_of(j->d.ss);
			s->open_sets++;
		}
		/* A failed start may have raised the limit too. */
		if (!s->open_sets)
			setrlimit(RLIMIT_NOFILE, &s->nofile0);
		return;
	}
	unsigned procs = procs_of(j->d.ss);
	xp_sock_server_stop(j->d.ss);
	j->d.ss = NULL;
	s->workers_used -= procs < s->workers_used ? procs : s->workers_used;
	if (s->open_sets)
		s->open_sets--;
	/* Raised for the tests' listeners, not for good. */
	if (!s->open_sets)
		setrlimit(RLIMIT_NOFILE, &s->nofile0);
}

static void *jobs_main(void *arg)
{
	struct xp_sockjobs *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		struct job *j = pop(&s->todo, &s->todo_tail);
		if (!j) {
			if (s->stopping)
				break;
			pthread_cond_wait(&s->cv, &s->mu);
			continue;
		}
		pthread_mutex_unlock(&s->mu);
		run_job(s, j);
		if (s->stopping && j->d.kind == XP_SOCKJOB_OPEN && j->d.ss) {
			/* Nobody will take it: close it again. */
			j->d.kind = XP_SOCKJOB_CLOSE;
			run_job(s, j);
		}
		pthread_mutex_lock(&s->mu);
		push(&s->done, &s->done_tail, j);
		uint64_t one = 1;
		if (write(s->efd, &one, sizeof(one)) < 0) {
			/* an eventfd counter cannot overflow at this rate; take() also runs without it */
		}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int xp_sockjobs_start(struct xp_sockjobs **out, unsigned max_workers_total, char *err, size_t errlen)
{
	struct xp_sockjobs *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->todo_tail = &s->todo;
	s->done_tail = &s->done;
	s->max_workers_total = max_workers_total;
	getrlimit(RLIMIT_NOFILE, &s->nofile0);
	s->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	int r = s->efd < 0 ? errno : pthread_create(&s->thread, NULL, jobs_main, s);
	if (r) {
		snprintf(err, errlen, "cannot start the listener thread: %s", strerror(r));
		if (s->efd >= 0)
			close(s->efd);
		free(s);
		return -1;
	}
	*out = s;
	return 0;
}

int xp_sockjobs_fd(const struct xp_sockjobs *j)
{
	return j->efd;
}

static int queue(struct xp_sockjobs *s, struct job *j)
{
	pthread_mutex_lock(&s->mu);
	push(&s->todo, &s->todo_tail, j);
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

int xp_sockjobs_open(struct xp_sockjobs *s, uint64_t id, const struct xp_sock_server_cfg *cfg)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->d.kind = XP_SOCKJOB_OPEN;
	j->d.id = id;
	j->cfg = *cfg;
	return queue(s, j);
}

int xp_sockjobs_close(struct xp_sockjobs *s, uint64_t id, struct xp_sock_server *ss)
{
	struct job *j = calloc(1, sizeof(*j));
	if (!j) {
		xp_sock_server_stop(ss);
		return -ENOMEM;
	}
	j->d.kind = XP_SOCKJOB_CLOSE;
	j->d.id = id;
	j->d.ss = ss;
	return queue(s, j);
}

int xp_sockjobs_take(struct xp_sockjobs *s, struct xp_sockjob_done *d)
{
	uint64_t n;
	if (read(s->efd, &n, sizeof(n)) < 0) {
		/* EAGAIN: nothing signalled since the last read; the list says what is done */
	}
	pthread_mutex_lock(&s->mu);
	struct job *j = pop(&s->done, &s->done_tail);
	pthread_mutex_unlock(&s->mu);
	if (!j)
		return 0;
	*d = j->d;
	free(j);
	return 1;
}

void xp_sockjobs_stop(struct xp_sockjobs *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stopping = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	struct job *j;
	while ((j = pop(&s->done, &s->done_tail))) {
		if (j->d.kind == XP_SOCKJOB_OPEN && j->d.ss)
			xp_sock_server_stop(j->d.ss); /* finished before stop, never taken */
		free(j);
	}
	close(s->efd);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}
