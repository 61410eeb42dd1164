/* The XDP connection engine's window and its keeper; see engine/window.h and bpf/window.h. */
#include "engine/window.h"
#include "engine/window_scan.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bpf/xdp_connect.h"
#include "util/time.h"

/* At the end of -k: how long the resets may take in all. */
#define RST_MAX_SECONDS 2.0

static void *map_mmap(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static size_t page_round(size_t n)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (n + pg - 1) / pg * pg;
}

/* Frames go out through an AF_PACKET socket bound to the test interface. */
static int packet_send(void *arg, const uint8_t *frame, size_t len)
{
	struct xp_window *w = arg;
	return send(w->pkt_fd, frame, len, 0) == (ssize_t)len ? 0 : -errno;
}

int xp_window_open(const struct xp_engine_cfg *cfg, uint32_t mode, struct xp_window **out,
		   struct xp_win_maps *maps, char *err, size_t errlen)
{
	unsigned size = cfg->parallel;
	if (!size || size > XP_WIN_MAX) {
		snprintf(err, errlen, "-P %u: the XDP connection engine's window takes 1 to %u connections", size,
			 XP_WIN_MAX);
		return -EINVAL;
	}
	struct xp_window *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = *cfg;
	w->mode = mode;
	w->hold = cfg->kind == XP_TEST_HOLD;
	w->pkt_fd = -1;
	w->send = packet_send;
	w->send_arg = w;
	struct xp_win_maps *m = &w->maps;
	m->slots_fd = m->free_fd = m->ctl_fd = -1;
	m->size = size;
	m->shift = 32 - xp_win_bits(size);
	int r = xp_tuples_init(&w->tuples, &w->cfg, 0, err, errlen);
	if (r) {
		xp_window_close(w);
		return r;
	}
	/* A window wider than the tuples would put two connections in flight on one tuple. */
	if (size > w->tuples.space) {
		snprintf(err, errlen, "-P %u needs as many distinct tuples, there are %llu (source ports x destination "
			 "ports x source addresses): widen --cport, -p or --bind", size,
			 (unsigned long long)w->tuples.space);
		xp_window_close(w);
		return -EINVAL;
	}
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	m->slots_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "win_slots", 4, sizeof(struct xp_win_slot), size, &mm);
	m->ctl_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "win_ctl", 4, sizeof(struct xp_win_ctl), 1, &mm);
	uint32_t cells = xp_win_ring_cells(m->shift); /* a power of two >= size */
	m->free_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "win_free", 4, sizeof(struct xp_win_cell), cells, &mm);
	if (m->slots_fd < 0 || m->ctl_fd < 0 || m->free_fd < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create the window's maps (-P %u, %zu bytes per connection): %s", size,
			 sizeof(struct xp_win_slot) + sizeof(struct xp_win_cell), strerror(-r));
		xp_window_close(w);
		return r;
	}
	w->slots_len = page_round((size_t)size * sizeof(struct xp_win_slot));
	w->ctl_len = page_round(sizeof(struct xp_win_ctl));
	w->ring_len = page_round((size_t)cells * sizeof(struct xp_win_cell));
	m->slots = map_mmap(m->slots_fd, w->slots_len);
	m->ctl = map_mmap(m->ctl_fd, w->ctl_len);
	m->ring = map_mmap(m->free_fd, w->ring_len);
	if (!m->slots || !m->ctl || !m->ring) {
		r = -errno;
		snprintf(err, errlen, "cannot map the window's slots: %s", strerror(-r));
		xp_window_close(w);
		return r;
	}
	/* Every slot free: cells 0..size-1 hold slots 0..size-1 as if put at
	 * positions 0..size-1 (seq = pos + 1); the rest are empty for their
	 * first lap (seq = pos). No program sees the maps yet. */
	for (uint32_t i = 0; i < cells; i++) {
		m->ring[i].slot = i;
		m->ring[i].seq = i < size ? i + 1 : i;
	}
	m->ctl->ring_head = 0;
	m->ctl->ring_tail = size;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/* The frames the keeper sends: the SYN template's headers, without options but for SYNs. */
	w->spec = cfg->frames.tmpl;
	*maps = *m;
	*out = w;
	return 0;
}

static void *keeper_main(void *arg)
{
	struct xp_window *w = arg;
	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		xp_window_scan(w, xp_win_mono_ns());
		xp_sleep(XP_WIN_SCAN_S);
	}
	return NULL;
}

int xp_window_start(struct xp_window *w, char *err, size_t errlen)
{
	w->pkt_fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0); /* protocol 0: sends only */
	if (w->pkt_fd < 0) {
		snprintf(err, errlen, "cannot open a packet socket for retransmissions: %s", strerror(errno));
		return -errno;
	}
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_ifindex = w->cfg.ifindex };
	if (bind(w->pkt_fd, (struct sockaddr *)&sll, sizeof(sll))) {
		snprintf(err, errlen, "cannot bind a packet socket to %s: %s", w->cfg.ifname, strerror(errno));
		return -errno;
	}
	int r = pthread_create(&w->keeper, NULL, keeper_main, w);
	if (r) {
		snprintf(err, errlen, "cannot start the window's keeper: %s", strerror(r));
		return -r;
	}
	w->running = true;
	return 0;
}

void xp_window_read(struct xp_window *w, struct xp_win_stats *st)
{
	const struct xp_win_ctl *c = w->maps.ctl;
	memset(st, 0, sizeof(*st));
	st->taken = __atomic_load_n(&c->taken, __ATOMIC_RELAXED);
	st->synack_dup = __atomic_load_n(&c->synack_dup, __ATOMIC_RELAXED);
	st->stale = __atomic_load_n(&c->stale, __ATOMIC_RELAXED);
	st->fail_reset = __atomic_load_n(&c->fail_reset, __ATOMIC_RELAXED);
	st->fail_unreach = __atomic_load_n(&c->fail_unreach, __ATOMIC_RELAXED);
	st->fin_dup = __atomic_load_n(&c->fin_dup, __ATOMIC_RELAXED);
#define K(f) st->f = __atomic_load_n(&w->ks.f, __ATOMIC_RELAXED)
	K(syn_retx);
	K(fin_retx);
	K(keepalives);
	K(fail_timeout);
	K(fin_timeout);
	K(in_flight);
	K(open);
	K(rst_closed);
	K(send_errors);
#undef K
}

void xp_window_halt(struct xp_window *w)
{
	__atomic_store_n(&w->stop, true, __ATOMIC_RELAXED);
	if (w->running)
		pthread_join(w->keeper, NULL);
	w->running = false;
}

void xp_window_finish(struct xp_window *w)
{
	xp_window_halt(w);
	if (w->finished || !w->maps.slots || !w->maps.ctl) /* done, or never set up */
		return;
	w->finished = true;
	/* The counts as the test ends, after the last replies. */
	xp_window_count(w);
	/* -k: the held connections end, reset from their state. */
	if (w->hold && w->pkt_fd >= 0)
		xp_window_reset_all(w, xp_now() + RST_MAX_SECONDS);
}

void xp_window_close(struct xp_window *w)
{
	if (!w)
		return;
	xp_window_finish(w);
	if (w->pkt_fd >= 0)
		close(w->pkt_fd);
	if (w->maps.slots)
		munmap(w->maps.slots, w->slots_len);
	if (w->maps.ctl)
		munmap(w->maps.ctl, w->ctl_len);
	if (w->maps.ring)
		munmap(w->maps.ring, w->ring_len);
	if (w->maps.slots_fd >= 0)
		close(w->maps.slots_fd);
	if (w->maps.free_fd >= 0)
		close(w->maps.free_fd);
	if (w->maps.ctl_fd >= 0)
		close(w->maps.ctl_fd);
	free(w);
}
