#include "loader/xdp_connect_prog.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf/xdp_connect.skel.h"
#include "loader/percpu.h"

struct xdp_connect_prog {
	struct xdp_connect_bpf *skel;
	int link_fd;
	int tc_link_fd; /* XP_CC_MODE_DATA: tc_connect at TC ingress, or -1 */
};

/* enum bpf_attach_type's BPF_TCX_INGRESS (Linux 6.6), which this system's
 * <linux/bpf.h> may predate. */
#define XP_BPF_TCX_INGRESS 46

int xdp_connect_prog_open(const struct xdp_connect_prog_cfg *c, struct xdp_connect_prog **out, const char **mode_used, char *err,
		  size_t errlen)
{
	struct xdp_connect_prog *cp = calloc(1, sizeof(*cp));
	if (!cp)
		return -ENOMEM;
	cp->link_fd = -1;
	cp->tc_link_fd = -1;
	cp->skel = xdp_connect_bpf__open();
	if (!cp->skel) {
		int e = errno;
		snprintf(err, errlen, "cannot open the client's XDP handshake program: %s", strerror(e));
		free(cp);
		return -e;
	}
	struct xp_xdp_connect_config *ro = &cp->skel->rodata->config;
	ro->family = c->family == AF_INET6 ? 6 : 4;
	ro->cport_lo = c->cport_lo;
	ro->cport_hi = c->cport_hi;
	ro->dport_lo = c->dport_lo;
	ro->dport_hi = c->dport_hi;
	ro->mode = c->mode;
	ro->data_len = c->data_len;
	ro->ctrl_port = c->ctrl_port;
	ro->reply_redirect = c->reply_redirect;
	bool data = c->mode == XP_CC_MODE_DATA;
	bpf_program__set_autoload(cp->skel->progs.tc_connect, data);
	int r = 0;
	if (c->win_size) {
		/* The window's maps, shared with the SYN sender and the keeper. */
		ro->win_size = c->win_size;
		ro->win_shift = c->win_shift;
		if (bpf_map__reuse_fd(cp->skel->maps.win_slots, c->win_slots_fd) ||
		    bpf_map__reuse_fd(cp->skel->maps.win_free, c->win_free_fd) ||
		    bpf_map__reuse_fd(cp->skel->maps.win_ctl, c->win_ctl_fd))
			r = -errno;
	}
	if (!r)
		r = xdp_connect_bpf__load(cp->skel);
	if (r) {
		snprintf(err, errlen, "cannot load the client's XDP handshake program: %s", strerror(-r));
		xdp_connect_prog_close(cp);
		return r;
	}
	r = xp_xdp_attach(bpf_program__fd(cp->skel->progs.xdp_connect), c->ifindex, c->xdp_mode);
	if (r < 0) {
		snprintf(err, errlen, "cannot attach the client's XDP handshake program: %s%s", strerror(-r),
			 (r == -EBUSY || r == -EEXIST) ? " (another XDP program is attached to the interface)" : "");
		xdp_connect_prog_close(cp);
		return r;
	}
	cp->link_fd = r;
	if (data) {
		/* The data mode's fallback for SYN-ACKs whose XDP frame has no
		 * room for the payload (veth): a tcx link, detached with the
		 * process like the XDP one. */
		r = bpf_link_create(bpf_program__fd(cp->skel->progs.tc_connect), c->ifindex, XP_BPF_TCX_INGRESS,
				    NULL);
		if (r < 0) {
			r = -errno;
			snprintf(err, errlen, "cannot attach the client's TC data program (--bytes needs Linux 6.6+): %s",
				 strerror(-r));
			xdp_connect_prog_close(cp);
			return r;
		}
		cp->tc_link_fd = r;
	}
	*mode_used = xp_xdp_mode_name(c->ifindex);
	*out = cp;
	return 0;
}

int xdp_connect_prog_read(struct xdp_connect_prog *cp, struct xp_cc_counters *sum)
{
	__u32 key = 0;
	return xp_percpu_read(cp->skel->maps.cc_counters, &key, sizeof(key), sizeof(*sum), sum, sizeof(*sum));
}

void xdp_connect_prog_close(struct xdp_connect_prog *cp)
{
	if (!cp)
		return;
	if (cp->tc_link_fd >= 0)
		close(cp->tc_link_fd);
	if (cp->link_fd >= 0)
		close(cp->link_fd);
	xdp_connect_bpf__destroy(cp->skel);
	free(cp);
}
