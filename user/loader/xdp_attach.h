/*
 * Attaching XDP programs the same way everywhere (a bpf_link, so the kernel
 * detaches when the process dies) and naming the mode the kernel chose.
 */
#ifndef XP_XDP_ATTACH_H
#define XP_XDP_ATTACH_H

#include <stddef.h>

#include "spec/xdp_mode.h" /* enum xp_xdp_mode */

/* Link prog_fd to ifindex: skb mode, native, or auto (native, else skb). Link fd or -errno. */
int xp_xdp_attach(int prog_fd, int ifindex, enum xp_xdp_mode mode);
/* How XDP is attached to ifindex: "native", "skb", "hw", "multi", "none" or "unknown". */
const char *xp_xdp_mode_name(int ifindex);

#endif
