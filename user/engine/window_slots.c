/*
 * The window's slots and free ring (engine/window_slots.h), what the SYN
 * senders, the keeper's scan and the window itself share: below all three,
 * so none of them calls back into another.
 */
#include "engine/window_slots.h"

#include <time.h>

/* The free ring, the same code as the BPF side's (bpf/window_ring.h), on the mapped cells. */
static inline struct xp_win_cell *xp_win_cell_at(void *ring, __u32 i)
{
	return (struct xp_win_cell *)ring + i;
}
#include "bpf/window_ring.h"

uint64_t xp_win_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* bpf_ktime_get_ns()'s clock */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint32_t xp_win_ring_cells(unsigned shift)
{
	return xp_win_ring_mask(shift) + 1;
}

int xp_win_pop(const struct xp_win_maps *m, uint32_t *slot)
{
	return xp_win_ring_get(m->ring, m->ctl, xp_win_ring_mask(m->shift), slot) || *slot >= m->size ? -1 : 0;
}

int xp_win_unpop(const struct xp_win_maps *m, uint32_t slot)
{
	if (xp_win_ring_put(m->ring, m->ctl, xp_win_ring_mask(m->shift), slot) == 0)
		return 0;
	/* Parked (its word FREE: nobody else moves it), for the keeper's scan. */
	uint32_t word = __atomic_load_n(&m->slots[slot].word, __ATOMIC_ACQUIRE);
	if (XP_WIN_STATE(word) == XP_WIN_FREE)
		__atomic_compare_exchange_n(&m->slots[slot].word, &word, XP_WIN_WORD(XP_WIN_GEN(word), XP_WIN_PARKED),
					    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	return -1;
}

uint32_t xp_win_record(const struct xp_win_maps *m, uint32_t slot, uint64_t k, uint16_t sport, uint16_t dport,
		       uint32_t hashed)
{
	struct xp_win_slot *s = &m->slots[slot];
	uint32_t word = __atomic_load_n(&s->word, __ATOMIC_RELAXED);
	s->isn = xp_win_isn(hashed, slot, m->shift);
	s->srv_nxt = 0;
	s->sport = sport;
	s->dport = dport;
	s->k = k;
	s->t_ns = xp_win_mono_ns();
	s->tries = 0;
	/* Release: the fields above are there for whoever sees the new state. */
	__atomic_store_n(&s->word, XP_WIN_WORD(XP_WIN_GEN(word) + 1, XP_WIN_SYN_SENT), __ATOMIC_RELEASE);
	__atomic_fetch_add(&m->ctl->taken, 1, __ATOMIC_RELAXED);
	return s->isn;
}

int xp_win_take(const struct xp_win_maps *m, uint64_t k, uint16_t sport, uint16_t dport, uint32_t hashed,
		uint32_t *isn)
{
	uint32_t slot;
	if (xp_win_pop(m, &slot))
		return -1;
	*isn = xp_win_record(m, slot, k, sport, dport, hashed);
	return 0;
}

uint64_t xp_win_avail(const struct xp_win_maps *m)
{
	uint64_t taken = __atomic_load_n(&m->ctl->taken, __ATOMIC_RELAXED);
	uint64_t freed = __atomic_load_n(&m->ctl->freed, __ATOMIC_RELAXED);
	uint64_t used = taken > freed ? taken - freed : 0;
	return used < m->size ? m->size - used : 0;
}
