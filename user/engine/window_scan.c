/*
 * The window keeper's work (engine/window.h): one scan of the slots, the
 * frames it sends (retransmitted SYNs and FINs, keepalives, the resets at
 * the end of -k), all built from a slot's state with the frame builder.
 */
#include "engine/window_scan.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <string.h>

#include "bpf/xdp_connect.h"
#include "util/time.h"

/* Our window in the frames we send: what the client program's ACKs say (7-bit scale). */
#define KEEPER_WINDOW 502

size_t xp_window_frame(const struct xp_window *w, const struct xp_win_slot *s, uint8_t flags, uint8_t *buf,
		       size_t len)
{
	struct frame_spec sp = w->spec;
	uint16_t sport, dport;
	unsigned a;
	const char *err = NULL;

	xp_tuple_of(&w->tuples, xp_tuple_num(&w->tuples, s->k), &sport, &dport, &a);
	if (w->cfg.nbind)
		sp.src = w->cfg.bind[a];
	/* The slot's ports are the ones its SYN carried (the SYN sender wrote them). */
	sp.sport = s->sport;
	sp.dport = s->dport;
	sp.tcp_flags = flags;
	if (flags == TH_SYN) {
		sp.seq = s->isn; /* the same SYN again: options and size from the template */
		sp.ack = 0;
	} else {
		sp.tcp_syn_options = false;
		sp.no_payload = true;
		sp.window = KEEPER_WINDOW;
		if (flags & TH_RST) {
			sp.seq = s->isn + 1; /* a bare RST, as xp_tuple_build_rst's */
			sp.ack = 0;
			sp.window = 0;
		} else {
			/* ACK|FIN: after the SYN (ISN + 1); a keepalive: one before that,
			 * so the peer must answer (RFC 9293 3.8.4), as Linux sends them. */
			sp.seq = flags & TH_FIN ? s->isn + 1 : s->isn;
			sp.ack = s->srv_nxt;
		}
	}
	return frame_build(&sp, buf, len, &err);
}

/* Send, riding out a full device queue for a moment. */
static int keeper_send(struct xp_window *w, const uint8_t *f, size_t len)
{
	int r = -EINVAL;
	for (int i = 0; len && i < 20; i++) {
		r = w->send(w->send_arg, f, len);
		if (r != -ENOBUFS && r != -EAGAIN)
			break;
		xp_sleep(1e-4);
	}
	if (r)
		__atomic_fetch_add(&w->ks.send_errors, 1, __ATOMIC_RELAXED);
	return r;
}

static void count(uint64_t *c)
{
	__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
}

/* The slot is done with (its word FREE): back on the free ring for the next
 * SYN (-k: never), or parked when the ring would not take it now. */
static void release(struct xp_window *w, uint32_t i)
{
	if (xp_win_unpop(&w->maps, i) == 0)
		__atomic_fetch_add(&w->maps.ctl->freed, 1, __ATOMIC_RELAXED);
}

/* A parked slot (bpf/window_ring.h): FREE again, and onto the ring, or parked again. */
static void unpark(struct xp_window *w, uint32_t i, uint32_t word)
{
	if (__atomic_compare_exchange_n(&w->maps.slots[i].word, &word, XP_WIN_WORD(XP_WIN_GEN(word), XP_WIN_FREE),
					false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		release(w, i);
}

void xp_window_scan(struct xp_window *w, uint64_t now)
{
	struct xp_win_maps *m = &w->maps;
	unsigned retries = w->cfg.hs.syn_retries;
	uint64_t ka_ns = (uint64_t)(w->cfg.hs.keepalive_s * 1e9);
	uint64_t in_flight = 0, open = 0;
	uint8_t buf[256];

	for (uint32_t i = 0; i < m->size; i++) {
		struct xp_win_slot *s = &m->slots[i];
		uint32_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		uint32_t st = XP_WIN_STATE(word);
		uint64_t t = __atomic_load_n(&s->t_ns, __ATOMIC_RELAXED);

		if (st == XP_WIN_PARKED) {
			unpark(w, i, word);
			continue;
		}
		if (st == XP_WIN_OPEN) {
			open++;
			if (ka_ns && now >= t + ka_ns) {
				size_t len = xp_window_frame(w, s, TH_ACK, buf, sizeof(buf));
				if (__atomic_load_n(&s->word, __ATOMIC_ACQUIRE) != word)
					continue;
				s->t_ns = now;
				if (!keeper_send(w, buf, len))
					count(&w->ks.keepalives);
			}
			continue;
		}
		if (st != XP_WIN_SYN_SENT && st != XP_WIN_FIN_WAIT)
			continue;
		if (st == XP_WIN_SYN_SENT)
			in_flight++;
		else
			open++;
		uint32_t tries = s->tries;
		if (now < t || (double)(now - t) < xp_win_rto(tries) * 1e9)
			continue;
		if (tries < retries) {
			size_t len = xp_window_frame(w, s, st == XP_WIN_SYN_SENT ? TH_SYN : TH_ACK | TH_FIN, buf,
						     sizeof(buf));
			/* Still that connection, still waiting (the reply may have come meanwhile). */
			if (__atomic_load_n(&s->word, __ATOMIC_ACQUIRE) != word)
				continue;
			s->tries = tries + 1;
			s->t_ns = now;
			if (!keeper_send(w, buf, len))
				count(st == XP_WIN_SYN_SENT ? &w->ks.syn_retx : &w->ks.fin_retx);
			continue;
		}
		/* Given up after the retries. */
		uint32_t next = w->hold ? XP_WIN_DONE : XP_WIN_FREE;
		if (!__atomic_compare_exchange_n(&s->word, &word, XP_WIN_WORD(XP_WIN_GEN(word), next), false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue; /* answered just now */
		count(st == XP_WIN_SYN_SENT ? &w->ks.fail_timeout : &w->ks.fin_timeout);
		if (st == XP_WIN_SYN_SENT)
			in_flight--;
		else
			open--;
		if (next == XP_WIN_FREE)
			release(w, i);
	}
	__atomic_store_n(&w->ks.in_flight, in_flight, __ATOMIC_RELAXED);
	__atomic_store_n(&w->ks.open, open, __ATOMIC_RELAXED);
}

void xp_window_reset_all(struct xp_window *w, double deadline)
{
	struct xp_win_maps *m = &w->maps;
	uint8_t buf[256];

	for (uint32_t i = 0; i < m->size; i++) {
		struct xp_win_slot *s = &m->slots[i];
		uint32_t word = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		uint32_t st = XP_WIN_STATE(word);

		if (st != XP_WIN_OPEN && st != XP_WIN_SYN_SENT)
			continue;
		if ((i & 255) == 0 && xp_now() > deadline)
			break;
		if (!__atomic_compare_exchange_n(&s->word, &word, XP_WIN_WORD(XP_WIN_GEN(word), XP_WIN_DONE), false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		size_t len = xp_window_frame(w, s, TH_RST, buf, sizeof(buf));
		if (!keeper_send(w, buf, len))
			count(&w->ks.rst_closed);
	}
}

void xp_window_count(struct xp_window *w)
{
	uint64_t in_flight = 0, open = 0;
	for (uint32_t i = 0; i < w->maps.size; i++) {
		uint32_t st = XP_WIN_STATE(__atomic_load_n(&w->maps.slots[i].word, __ATOMIC_ACQUIRE));
		in_flight += st == XP_WIN_SYN_SENT;
		open += st == XP_WIN_OPEN || st == XP_WIN_FIN_WAIT;
	}
	__atomic_store_n(&w->ks.in_flight, in_flight, __ATOMIC_RELAXED);
	__atomic_store_n(&w->ks.open, open, __ATOMIC_RELAXED);
}
