/*
 * libFuzzer harness: the frame engines' configuration (frame size, mix,
 * queues, burst, stamps, family, protocol) as the AF_XDP engine lays it out
 * and posts it, without a socket: xsk_prepare, each worker's UMEM shape
 * (xsk_slots_plan) over an area whose end ASan guards (the bytes past
 * area_size poisoned; the real one is an mmap, which ASan does not watch),
 * the prebuilt frames (xsk_slots_fill), and batches
 * posted by xsk_post_batch onto a TX ring of plain memory, then completed
 * onto a completion ring and reaped (xsk_reap). And the live engine's check
 * (xp_gen_check) of the same configuration.
 *
 * Promises checked (a broken one aborts, a crash to libFuzzer):
 * - a refusal is one non-empty line;
 * - every descriptor lies inside the area and inside one UMEM chunk, a
 *   frame's descriptors are chained (XDP_PKT_CONTD on all but the last),
 *   start at its slot's start and add up to the frame's length;
 * - the frames reaped equal the frames posted (one completion per
 *   descriptor, one frame each);
 * - the live engine accepts only frames the kernel takes as live frames.
 *
 * Input: byte 0 flags (bit 0 IPv6, bit 1 UDP, bit 2 stamps, bit 3 a mix),
 * bytes 1-2 the frame size (big-endian), byte 3 queues (1..4, bits 0-1), the
 * UMEM's chunks (64 << bits 2-3, or with bit 7 the engine's 4096), byte 4 the
 * burst, then with a mix up to 8 (size, weight) pairs of 3 bytes, then the
 * batch sizes to post, one byte each.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/xsk_internal.h"
#include "engine/live_prog.h"
#include "bpf/live.h"
#include "frame/mix.h"

#include <sanitizer/asan_interface.h>

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

static void one_line(const char *err)
{
	PROMISE(err[0] != '\0');
	PROMISE(strchr(err, '\n') == NULL);
}

static void base_cfg(struct xp_engine_cfg *c, const uint8_t *d)
{
	struct frame_spec *t = &c->frames.tmpl;
	bool v6 = d[0] & 1;

	memset(c, 0, sizeof(*c));
	c->kind = XP_TEST_STREAM;
	memcpy(t->src_mac, "\x02\x58\x50\x00\x00\x01", 6);
	memcpy(t->dst_mac, "\x02\x58\x50\x00\x00\x02", 6);
	xp_addr_parse(v6 ? "2001:2:0:1::2" : "198.18.1.2", &t->src);
	xp_addr_parse(v6 ? "2001:2:0:2::2" : "198.19.1.2", &t->dst);
	t->l4_proto = (d[0] & 2) ? IPPROTO_UDP : IPPROTO_TCP;
	t->tcp_flags = 0x18;
	t->seq = t->ack = 1;
	t->frame_size = (size_t)(d[1] << 8 | d[2]);
	c->sport_lo = 10000;
	c->sport_hi = 10099;
	c->dport_lo = 63000;
	c->dport_hi = 63015;
	t->sport = c->sport_lo;
	t->dport = c->dport_lo;
	c->frames.queues = 1 + d[3] % 4;
	c->burst = d[4];
	c->pps = 1e6;
	c->max_seconds = 1;
	if (d[0] & 4)
		c->frames.stamp.ival = 1000;
	snprintf(c->ifname, sizeof(c->ifname), "fuzz0");
	c->ifindex = 1;
	c->server = t->dst;
}

/* A fake ring of n entries of sz bytes: producer and consumer words of its own. */
struct fake_ring {
	uint32_t prod, cons;
	void *mem;
};

static void ring_init(struct fake_ring *f, void *ring, uint32_t n, size_t sz, bool producer)
{
	f->prod = f->cons = 0;
	f->mem = calloc(n, sz);
	PROMISE(f->mem);
	struct xsk_ring_prod *r = ring;
	r->cached_prod = 0;
	r->cached_cons = producer ? n : 0; /* libxdp: a producer's cached_cons is size ahead */
	r->mask = n - 1;
	r->size = n;
	r->producer = &f->prod;
	r->consumer = &f->cons;
	r->ring = f->mem;
	r->flags = NULL;
}

/* Posts the batches, checks every descriptor, completes and reaps them. */
static void post_and_reap(struct xp_engine *e, struct xsk_worker *w, const uint8_t *b, size_t nb)
{
	struct fake_ring tx, cq;
	uint64_t next = 0, posted = 0;

	ring_init(&tx, &w->tx, RING_SIZE, sizeof(struct xdp_desc), true);
	ring_init(&cq, &w->cq, RING_SIZE, sizeof(uint64_t), false);
	for (size_t i = 0; i < nb; i++) {
		uint32_t want = 1 + b[i] % BATCH;
		uint32_t from = tx.prod;
		uint64_t slot0 = next;
		uint32_t n = xsk_post_batch(w, &next, want, 12345);
		PROMISE(n == want); /* the ring is emptied after each batch: always room */
		/* Walk the descriptors frame by frame. */
		uint32_t k = from;
		for (uint32_t f = 0; f < n; f++) {
			uint64_t slot = (slot0 + f) % w->nframes;
			uint32_t len = e->mix ? e->mix_lay[xsk_mix_k(e, slot)].len : w->frame_len, sum = 0;
			const struct xdp_desc *d;
			bool first = true;
			do {
				PROMISE(k != tx.prod);
				d = &((const struct xdp_desc *)tx.mem)[k++ & (RING_SIZE - 1)];
				PROMISE(d->len > 0);
				PROMISE(d->addr + d->len <= w->area_size);
				PROMISE(d->addr % w->chunk + d->len <= w->chunk);
				if (first)
					PROMISE(d->addr == slot * w->frame_sz);
				first = false;
				sum += d->len;
				/* The kernel completes every descriptor, in order. */
				((uint64_t *)cq.mem)[cq.prod++ & (RING_SIZE - 1)] = d->addr;
			} while (d->options & XDP_PKT_CONTD);
			PROMISE(sum == len);
		}
		PROMISE(k == tx.prod);
		tx.cons = tx.prod; /* the kernel took them all */
		posted += n;
		while (xsk_reap(w))
			;
		PROMISE(w->done == posted);
	}
	free(tx.mem);
	free(cq.mem);
	memset(&w->tx, 0, sizeof(w->tx));
	memset(&w->cq, 0, sizeof(w->cq));
}

/* One area for every run, touched once: a fresh allocation per run spends
 * the run in page faults. Large enough for the engine's whole UMEM. */
#define AREA_MAX ((size_t)NUM_FRAMES * XSK_CHUNK_MAX * 3)
static uint8_t *area_buf;

static void *area_of(size_t len)
{
	PROMISE(len <= AREA_MAX);
	ASAN_UNPOISON_MEMORY_REGION(area_buf, len);
	ASAN_POISON_MEMORY_REGION(area_buf + len, AREA_MAX - len);
	return area_buf;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	area_buf = malloc(AREA_MAX);
	PROMISE(area_buf);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xp_engine_cfg c;
	char err[256] = "";
	uint8_t tmpl[XSK_TMPL_MAX];
	struct frame_layout lay;
	struct xp_engine *e = NULL;
	size_t at = 5;

	if (size < 5)
		return 0;
	base_cfg(&c, data);
	if ((data[0] & 8) && size > at) {
		/* "SIZE:WEIGHT,..." through the CLI's own parser. */
		char spec[128] = "";
		unsigned n = 1 + data[at++] % XP_MIX_MAX_SIZES;
		for (unsigned i = 0; i < n && at + 3 <= size; i++, at += 3)
			snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%s%u:%u", i ? "," : "",
				 (unsigned)(data[at] << 8 | data[at + 1]), 1u + data[at + 2] % 16);
		if (xp_mix_parse(spec, &c.frames.mix, err, sizeof(err))) {
			one_line(err);
			return 0;
		}
		c.frames.tmpl.frame_size = xp_mix_max(&c.frames.mix);
	}

	/* The live engine: what it accepts the kernel takes as a live frame. */
	err[0] = '\0';
	if (xp_gen_check(&c, err, sizeof(err))) {
		one_line(err);
	} else if (!frame_layout_of(&c.frames.tmpl, &lay, NULL)) {
		PROMISE(lay.len + (c.frames.mix.n ? 1 : 0) <= XP_GEN_LIVE_MAX_LEN);
	}

	/* The AF_XDP engine, socket aside. */
	err[0] = '\0';
	if (xsk_prepare(&c, &e, tmpl, &lay, err, sizeof(err))) {
		one_line(err);
		return 0;
	}
	/* A smaller UMEM than the engine's 4096 chunks keeps runs fast; the
	 * whole one when byte 3's top bit says so. */
	e->umem_chunks = (data[3] & 0x80) ? NUM_FRAMES : 64u << (data[3] >> 2 & 3);
	for (unsigned q = 0; q < e->nw; q++) {
		struct xsk_worker *w = &e->w[q];
		err[0] = '\0';
		if (xsk_slots_plan(e, &lay, w, err, sizeof(err))) {
			one_line(err);
			break;
		}
		PROMISE(w->frame_sz % w->chunk == 0 && w->nframes > 0 && w->nframes <= w->nslots);
		PROMISE((size_t)w->nslots * w->frame_sz == w->area_size);
		w->area = area_of(w->area_size);
		if (xsk_slots_fill(e, w, tmpl, &lay, err, sizeof(err)))
			abort(); /* the plan fits every frame: filling never refuses */
		post_and_reap(e, w, data + at, size > at ? (size - at < 64 ? size - at : 64) : 0);
		w->area = NULL;
	}
	xsk_unprepare(e);
	return 0;
}
