/*
 * What a network device's driver says it does with XDP, as the kernel's
 * "netdev" generic-netlink family reports it (kernel 6.3 and later): the
 * XDP actions it implements, the XDP RX metadata kfuncs it implements, and
 * its AF_XDP TX metadata features. Older kernels have no such family: then
 * `known` is false and nothing is claimed either way.
 */
#ifndef XP_XDP_FEATURES_H
#define XP_XDP_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bits of xdp (enum netdev_xdp_act in the kernel's uapi linux/netdev.h;
 * Debian 12's linux-libc-dev is 6.1, older than that header). */
#define XP_XDP_ACT_BASIC        (1u << 0) /* XDP_PASS/DROP/ABORTED/TX: native XDP */
#define XP_XDP_ACT_REDIRECT     (1u << 1)
#define XP_XDP_ACT_NDO_XMIT     (1u << 2) /* takes XDP frames to transmit (ndo_xdp_xmit) */
#define XP_XDP_ACT_XSK_ZEROCOPY (1u << 3) /* AF_XDP zero-copy */
#define XP_XDP_ACT_HW_OFFLOAD   (1u << 4)
#define XP_XDP_ACT_RX_SG        (1u << 5) /* multi-buffer (fragmented) frames on RX */
#define XP_XDP_ACT_NDO_XMIT_SG  (1u << 6) /* multi-buffer frames on ndo_xdp_xmit */
/* Bits of rx_meta (enum netdev_xdp_rx_metadata). */
#define XP_XDP_RX_META_TIMESTAMP (1u << 0) /* bpf_xdp_metadata_rx_timestamp */
#define XP_XDP_RX_META_HASH      (1u << 1)
#define XP_XDP_RX_META_VLAN_TAG  (1u << 2)

struct xp_xdp_features {
	bool known;           /* the kernel answered (it has the netdev family) */
	uint64_t xdp;         /* XP_XDP_ACT_* */
	uint64_t rx_meta;     /* XP_XDP_RX_META_* (0 if the kernel does not report it) */
	uint32_t zc_max_segs; /* AF_XDP zero-copy: at most this many buffers per frame */
};

/*
 * Ask the kernel about ifindex (in the calling thread's network namespace).
 * 0 with f filled in; 0 with f->known false if the kernel has no netdev
 * family; -errno otherwise (-ENODEV: no such device), with err set.
 */
int xp_xdp_features_get(int ifindex, struct xp_xdp_features *f, char *err, size_t errlen);

#endif
