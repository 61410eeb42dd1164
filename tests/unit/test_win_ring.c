/*
 * The window's free ring (bpf/window_ring.h), the code both the BPF side
 * and userspace run, here on plain memory: FIFO order, empty and refill,
 * positions wrapping past 2^32, and under threads taking and giving back
 * slots at once, never one slot out twice (-P exact), and every refused put
 * counted and parked, so that none is lost.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <linux/types.h>

#include "bpf/window.h"

static inline struct xp_win_cell *xp_win_cell_at(void *ring, __u32 i)
{
	return (struct xp_win_cell *)ring + i;
}
#include "bpf/window_ring.h"

struct ring {
	struct xp_win_ctl ctl;
	struct xp_win_cell *cells;
	uint32_t mask;
};

/* As user/engine/window.c fills it, but with the first position p0: slots
 * 0..size-1 put at p0..p0+size-1, the rest of the cells empty for their lap. */
static void ring_init(struct ring *r, uint32_t size, uint32_t shift, uint32_t p0)
{
	memset(&r->ctl, 0, sizeof(r->ctl));
	r->mask = xp_win_ring_mask(shift);
	r->cells = calloc((size_t)r->mask + 1, sizeof(*r->cells));
	assert_non_null(r->cells);
	for (uint32_t k = 0; k <= r->mask; k++) {
		uint32_t pos = p0 + k;
		struct xp_win_cell *c = &r->cells[pos & r->mask];
		c->slot = k;
		c->seq = k < size ? pos + 1 : pos;
	}
	r->ctl.ring_head = p0;
	r->ctl.ring_tail = p0 + size;
}

static int get(struct ring *r, uint32_t *slot)
{
	return xp_win_ring_get(r->cells, &r->ctl, r->mask, slot);
}

static int put(struct ring *r, uint32_t slot)
{
	return xp_win_ring_put(r->cells, &r->ctl, r->mask, slot);
}

/* -P 5 (shift 29: 8 cells): slots 0..4 in order, then none; given back, they come out in that order. */
static void test_fifo_and_empty(void **state)
{
	(void)state;
	struct ring r;
	uint32_t s;

	ring_init(&r, 5, 32 - xp_win_bits(5), 0);
	assert_int_equal(r.mask, 7);
	for (uint32_t i = 0; i < 5; i++) {
		assert_int_equal(get(&r, &s), 0);
		assert_int_equal(s, i);
	}
	assert_int_equal(get(&r, &s), -1); /* the window is full */
	assert_int_equal(put(&r, 3), 0);
	assert_int_equal(put(&r, 1), 0);
	assert_int_equal(get(&r, &s), 0);
	assert_int_equal(s, 3);
	assert_int_equal(get(&r, &s), 0);
	assert_int_equal(s, 1);
	assert_int_equal(get(&r, &s), -1);
	assert_int_equal(r.ctl.ring_parked, 0);
	free(r.cells);
}

/* A full window (size a power of two, every cell used) across the wrap of
 * the 32-bit positions: 3 x 1024 takes and gives back, in FIFO order. */
static void test_positions_wrap(void **state)
{
	(void)state;
	struct ring r;
	uint32_t s, want = 0;

	ring_init(&r, 1024, 32 - xp_win_bits(1024), 0xffffffffu - 1500);
	assert_int_equal(r.mask, 1023);
	for (uint32_t i = 0; i < 3 * 1024; i++) {
		assert_int_equal(get(&r, &s), 0);
		assert_int_equal(s, want);
		assert_int_equal(put(&r, s), 0);
		want = (want + 1) % 1024;
	}
	assert_true(r.ctl.ring_head < 0x10000000u); /* it did wrap */
	assert_int_equal(r.ctl.ring_tail - r.ctl.ring_head, 1024);
	assert_int_equal(r.ctl.ring_parked, 0);
	free(r.cells);
}

#define NTHREADS 4
#define ROUNDS   200000
#define SLOTS    1000

struct shared {
	struct ring r;
	int out[SLOTS];        /* 1 while a thread holds the slot */
	int twice;             /* a slot taken while out: -P broken */
	unsigned long taken[NTHREADS];
	uint32_t parked[SLOTS]; /* puts the ring refused: the keeper's to put back */
	unsigned nparked;
	pthread_mutex_t mu;
};

struct arg {
	struct shared *sh;
	int id;
};

/* What the BPF side and xp_win_unpop do with a refused put: XP_WIN_PARKED. */
static void park(struct shared *sh, uint32_t s)
{
	pthread_mutex_lock(&sh->mu);
	sh->parked[sh->nparked++] = s;
	pthread_mutex_unlock(&sh->mu);
}

static void *worker(void *p)
{
	struct arg *a = p;
	struct shared *sh = a->sh;
	uint32_t held[8], n = 0;

	for (int i = 0; i < ROUNDS; i++) {
		uint32_t s;
		/* Take up to 8, then give back: a sender and a releaser at once. */
		if (n < 8 && get(&sh->r, &s) == 0) {
			if (s >= SLOTS || __atomic_exchange_n(&sh->out[s], 1, __ATOMIC_SEQ_CST))
				__atomic_store_n(&sh->twice, 1, __ATOMIC_SEQ_CST);
			held[n++] = s;
			a->sh->taken[a->id]++;
		} else if (n) {
			s = held[--n];
			__atomic_store_n(&sh->out[s], 0, __ATOMIC_SEQ_CST);
			if (put(&sh->r, s))
				park(sh, s);
		}
	}
	while (n) {
		uint32_t s = held[--n];
		__atomic_store_n(&sh->out[s], 0, __ATOMIC_SEQ_CST);
		if (put(&sh->r, s))
			park(sh, s);
	}
	return NULL;
}

/* -P 1000, four threads taking and giving back slots at once: no slot is
 * out twice at any time, and at the end every slot is on the ring once. */
static void test_threads_keep_p_exact(void **state)
{
	(void)state;
	struct shared *sh = calloc(1, sizeof(*sh));
	pthread_t t[NTHREADS];
	struct arg a[NTHREADS];
	uint32_t s, seen[SLOTS] = { 0 }, n = 0;
	unsigned long total = 0;

	assert_non_null(sh);
	pthread_mutex_init(&sh->mu, NULL);
	ring_init(&sh->r, SLOTS, 32 - xp_win_bits(SLOTS), 0);
	for (int i = 0; i < NTHREADS; i++) {
		a[i] = (struct arg){ sh, i };
		assert_int_equal(pthread_create(&t[i], NULL, worker, &a[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		total += sh->taken[i];
	}
	assert_int_equal(sh->twice, 0);
	assert_true(total > 0);
	/* Refused puts were counted and parked, one for one; the keeper's
	 * scan puts them back (here: with nobody else on the ring). */
	assert_int_equal(sh->r.ctl.ring_parked, sh->nparked);
	print_message("%lu slots taken, %u puts parked\n", total, sh->nparked);
	for (unsigned i = 0; i < sh->nparked; i++)
		assert_int_equal(put(&sh->r, sh->parked[i]), 0);
	while (get(&sh->r, &s) == 0) {
		assert_true(s < SLOTS);
		assert_int_equal(seen[s]++, 0);
		n++;
	}
	assert_int_equal(n, SLOTS);
	free(sh->r.cells);
	free(sh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo_and_empty),
		cmocka_unit_test(test_positions_wrap),
		cmocka_unit_test(test_threads_keep_p_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
