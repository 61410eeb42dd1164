/* The server program's device-bound variant: see server_hwts.h. */
#include "loader/server_hwts.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bpf/server.h"
#include "bpf/server.skel.h"
#include "bpf/server_hwts.skel.h"
#include "net/xdp_features.h"

/* Debian 12's uapi linux/bpf.h (6.1) predates it (kernel 6.3). */
#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

bool xp_hwts_driver_has(int ifindex)
{
	struct xp_xdp_features f;
	char err[128];

	return !xp_xdp_features_get(ifindex, &f, err, sizeof(err)) && f.known &&
	       (f.rx_meta & XP_XDP_RX_META_TIMESTAMP);
}

struct server_hwts_bpf *xp_hwts_load(struct server_bpf *main, int ifindex, char *err, size_t errlen)
{
	struct server_hwts_bpf *h = server_hwts_bpf__open();
	struct bpf_map *m;
	int r;

	if (!h) {
		snprintf(err, errlen, "cannot open the device-bound XDP program: %s", strerror(errno));
		return NULL;
	}
	/* The same configuration (cookie key, control port) in its own
	 * read-only map, and the main program's maps for everything else:
	 * one set of slots and counters, whichever program a frame meets. */
	h->rodata->config = main->rodata->config;
	bpf_object__for_each_map(m, h->obj) {
		const char *name = bpf_map__name(m);
		struct bpf_map *mine;

		if (bpf_map__is_internal(m))
			continue; /* .rodata: set above */
		mine = bpf_object__find_map_by_name(main->obj, name);
		if (!mine || (r = bpf_map__reuse_fd(m, bpf_map__fd(mine)))) {
			snprintf(err, errlen, "cannot share map %s with the device-bound XDP program", name);
			server_hwts_bpf__destroy(h);
			return NULL;
		}
	}
	bpf_program__set_ifindex(h->progs.xdp_server, (__u32)ifindex);
	/* Multi-buffer as the main program is (server_prog_open). */
	bpf_program__set_flags(h->progs.xdp_server, bpf_program__flags(h->progs.xdp_server) | BPF_F_XDP_DEV_BOUND_ONLY |
						    (bpf_program__flags(main->progs.xdp_server) & BPF_F_XDP_HAS_FRAGS));
	r = server_hwts_bpf__load(h);
	if (r) {
		snprintf(err, errlen, "cannot load the device-bound XDP program for ifindex %d: %s", ifindex,
			 strerror(-r));
		server_hwts_bpf__destroy(h);
		return NULL;
	}
	return h;
}

int xp_hwts_prog_fd(struct server_hwts_bpf *h)
{
	return bpf_program__fd(h->progs.xdp_server);
}

void xp_hwts_destroy(struct server_hwts_bpf *h)
{
	server_hwts_bpf__destroy(h);
}
