/*
 * The client side of the XDP connection engine (bpf/xdp_connect.bpf.c):
 * loaded for one test, attached to the sending interface through a bpf_link
 * (the kernel detaches it if the process dies), it answers the server's
 * SYN-ACKs with the ACK that completes each handshake. In XP_CC_MODE_DATA
 * (--bytes) its TC fallback is attached too, by a tcx link: it builds the
 * data segments XDP has no room for (see bpf/xdp_connect.bpf.c).
 */
#ifndef XP_CLIENT_PROG_H
#define XP_CLIENT_PROG_H

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/xdp_connect.h"
#include "loader/server_prog.h"

struct xdp_connect_prog_cfg {
	int ifindex;
	int family;                 /* AF_INET / AF_INET6 */
	uint16_t cport_lo, cport_hi; /* the client's source ports */
	uint16_t dport_lo, dport_hi; /* the server's test ports */
	uint16_t ctrl_port;
	uint32_t mode;              /* XP_CC_MODE_* */
	unsigned data_len;          /* XP_CC_MODE_DATA: payload bytes per connection, 1..XP_CC_DATA_MAX */
	bool reply_redirect;        /* see server_prog_open */
	enum xp_xdp_mode xdp_mode;
	/* The window (bpf/window.h): its maps, size 0 = none (stateless). */
	unsigned win_size, win_shift;
	int win_slots_fd, win_free_fd, win_ctl_fd;
};

struct xdp_connect_prog;

int xdp_connect_prog_open(const struct xdp_connect_prog_cfg *cfg, struct xdp_connect_prog **out, const char **mode_used, char *err,
		  size_t errlen);
/* Counters summed over CPUs. */
int xdp_connect_prog_read(struct xdp_connect_prog *cp, struct xp_cc_counters *sum);
void xdp_connect_prog_close(struct xdp_connect_prog *cp);

#endif
