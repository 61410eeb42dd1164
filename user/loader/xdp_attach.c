#include "loader/xdp_attach.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/if_link.h>

static int link_create(int prog_fd, int ifindex, __u32 flags)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts, .flags = flags);
	int fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	return fd < 0 ? -errno : fd;
}

int xp_xdp_attach(int prog_fd, int ifindex, enum xp_xdp_mode mode)
{
	if (mode == XP_XDP_SKB)
		return link_create(prog_fd, ifindex, XDP_FLAGS_SKB_MODE);
	int fd = link_create(prog_fd, ifindex, XDP_FLAGS_DRV_MODE);
	/* auto: fall back to generic mode where the driver has no XDP (not when the slot is taken) */
	if (fd < 0 && mode == XP_XDP_AUTO && fd != -EBUSY && fd != -EEXIST)
		fd = link_create(prog_fd, ifindex, XDP_FLAGS_SKB_MODE);
	return fd;
}

const char *xp_xdp_mode_name(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	if (bpf_xdp_query(ifindex, 0, &q))
		return "unknown";
	switch (q.attach_mode) {
	case XDP_ATTACHED_DRV: return "native";
	case XDP_ATTACHED_SKB: return "skb";
	case XDP_ATTACHED_HW: return "hw";
	case XDP_ATTACHED_MULTI: return "multi";
	default: return "none";
	}
}
