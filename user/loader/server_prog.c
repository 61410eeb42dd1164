#include "loader/server_prog.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/server.skel.h"
#include "loader/libbpf_log.h"
#include "loader/percpu.h"
#include "util/random.h"

#define XP_MAX_LINKS 16

struct rx_link {
	int ifindex;
	int fd;   /* bpf_link fd: closing it (or dying) detaches */
	int refs;
	const char *mode;
};

struct slot {
	int used;
	uint16_t lo, hi;
};

struct server_prog {
	struct server_bpf *skel;
	struct bpf_program *prog;
	struct rx_link links[XP_MAX_LINKS];
	struct slot slots[XP_MAX_SLOTS];
};

int server_prog_open(struct server_prog **out, uint16_t ctrl_port, bool reply_redirect, char *err, size_t errlen)
{
	struct server_prog *rp = calloc(1, sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	libbpf_set_print(xp_libbpf_print);
	rp->skel = server_bpf__open();
	if (!rp->skel) {
		int e = errno;
		snprintf(err, errlen, "cannot open the XDP counter program: %s", strerror(e));
		free(rp);
		return -e;
	}
	struct xp_server_config *cfg = &rp->skel->rodata->config;
	cfg->ctrl_port = ctrl_port;
	cfg->reply_redirect = reply_redirect;
	/* SYN cookies are only as good as the secret behind them. */
	if (xp_random_fill(cfg->cookie_key, sizeof(cfg->cookie_key), false)) {
		snprintf(err, errlen, "cannot read random bytes for the SYN cookie key: %s", strerror(errno));
		server_bpf__destroy(rp->skel);
		free(rp);
		return -EIO;
	}
	int r = server_bpf__load(rp->skel);
	if (r) {
		snprintf(err, errlen, "cannot load the XDP counter program: %s%s", strerror(-r),
			 r == -EPERM ? " (run as root or with CAP_BPF and CAP_NET_ADMIN)" : "");
		server_bpf__destroy(rp->skel);
		free(rp);
		return r;
	}
	rp->prog = bpf_object__next_program(rp->skel->obj, NULL);
	*out = rp;
	return 0;
}

void server_prog_close(struct server_prog *rp)
{
	if (!rp)
		return;
	for (int i = 0; i < XP_MAX_LINKS; i++)
		if (rp->links[i].refs)
			close(rp->links[i].fd);
	server_bpf__destroy(rp->skel);
	free(rp);
}

int server_prog_attach(struct server_prog *rp, int ifindex, enum xp_xdp_mode mode, const char **mode_used,
		  char *err, size_t errlen)
{
	struct rx_link *free_l = NULL;
	for (int i = 0; i < XP_MAX_LINKS; i++) {
		struct rx_link *l = &rp->links[i];
		if (l->refs && l->ifindex == ifindex) {
			l->refs++;
			*mode_used = l->mode;
			return 0;
		}
		if (!l->refs && !free_l)
			free_l = l;
	}
	if (!free_l) {
		snprintf(err, errlen, "too many interfaces in use (max %d)", XP_MAX_LINKS);
		return -ENOSPC;
	}
	int fd = xp_xdp_attach(bpf_program__fd(rp->prog), ifindex, mode);
	if (fd < 0) {
		snprintf(err, errlen, "cannot attach XDP to ifindex %d: %s%s", ifindex, strerror(-fd),
			 (fd == -EBUSY || fd == -EEXIST) ? " (another XDP program is attached there)" : "");
		return fd;
	}
	free_l->ifindex = ifindex;
	free_l->fd = fd;
	free_l->refs = 1;
	free_l->mode = xp_xdp_mode_name(ifindex);
	*mode_used = free_l->mode;
	return 0;
}

void server_prog_detach(struct server_prog *rp, int ifindex)
{
	for (int i = 0; i < XP_MAX_LINKS; i++) {
		struct rx_link *l = &rp->links[i];
		if (l->refs && l->ifindex == ifindex) {
			if (--l->refs == 0)
				close(l->fd);
			return;
		}
	}
}

static void set_ports(struct server_prog *rp, uint16_t lo, uint16_t hi, __u32 val)
{
	for (__u32 p = lo; p <= hi; p++)
		bpf_map__update_elem(rp->skel->maps.port_slot, &p, sizeof(p), &val, sizeof(val), 0);
}

int server_prog_slot_alloc(struct server_prog *rp, uint16_t lo, uint16_t hi, uint32_t protos, uint32_t flags,
		      uint32_t close_mode, char *err, size_t errlen)
{
	int slot = -1;
	for (int i = 0; i < XP_MAX_SLOTS; i++) {
		struct slot *s = &rp->slots[i];
		if (s->used && lo <= s->hi && s->lo <= hi) {
			snprintf(err, errlen, "ports %u:%u overlap %u:%u of a test already running; pick another -p range",
				 lo, hi, s->lo, s->hi);
			return -EBUSY;
		}
		if (!s->used && slot < 0)
			slot = i;
	}
	if (slot < 0) {
		snprintf(err, errlen, "server is running its maximum of %d tests; try again later", XP_MAX_SLOTS);
		return -ENOSPC;
	}
	__u32 key = (__u32)slot;
	struct xp_slot_cfg cfg = { .flags = flags | XP_SLOT_ACTIVE, .protos = protos, .close_mode = close_mode };
	int r = xp_percpu_zero(rp->skel->maps.counters, &key, sizeof(key), sizeof(struct xp_counters));
	if (!r)
		r = bpf_map__update_elem(rp->skel->maps.slot_cfg, &key, sizeof(key), &cfg, sizeof(cfg), 0);
	if (r) {
		snprintf(err, errlen, "cannot configure the XDP program's maps: %s", strerror(-r));
		return r;
	}
	set_ports(rp, lo, hi, key + 1);
	rp->slots[slot] = (struct slot){ .used = 1, .lo = lo, .hi = hi };
	return slot;
}

void server_prog_slot_free(struct server_prog *rp, int slot)
{
	if (slot < 0 || slot >= XP_MAX_SLOTS || !rp->slots[slot].used)
		return;
	__u32 key = (__u32)slot;
	struct xp_slot_cfg cfg = { 0 };
	set_ports(rp, rp->slots[slot].lo, rp->slots[slot].hi, 0);
	bpf_map__update_elem(rp->skel->maps.slot_cfg, &key, sizeof(key), &cfg, sizeof(cfg), 0);
	rp->slots[slot].used = 0;
}

int server_prog_read(struct server_prog *rp, int slot, struct xp_counters *sum)
{
	__u32 key = (__u32)slot;
	return xp_percpu_read(rp->skel->maps.counters, &key, sizeof(key), sizeof(*sum), sum, sizeof(*sum));
}

int server_prog_read_global(struct server_prog *rp, uint64_t out[XP_G_NSTATS])
{
	for (__u32 k = 0; k < XP_G_NSTATS; k++) {
		int r = xp_percpu_read(rp->skel->maps.gstats, &k, sizeof(k), sizeof(__u64), &out[k], sizeof(__u64));
		if (r)
			return r;
	}
	return 0;
}
