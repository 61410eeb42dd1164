/*
 * The server program's device-bound variant (bpf/server_hwts.bpf.c): the
 * same program, which may read the NIC's RX timestamp of a frame, loaded
 * for one interface and sharing every map with the main program (so slots,
 * counters and the measurement core are one). Used by
 * loader/server_prog.c's attach when server_prog_set_hwts asked for it.
 */
#ifndef XP_SERVER_HWTS_H
#define XP_SERVER_HWTS_H

#include <stdbool.h>
#include <stddef.h>

struct server_bpf;
struct server_hwts_bpf;

/* Does ifindex's driver implement bpf_xdp_metadata_rx_timestamp (the
 * kernel's xdp-rx-metadata-features)? false if the kernel cannot say. */
bool xp_hwts_driver_has(int ifindex);
/* Load the variant for ifindex with main's maps and configuration. NULL
 * with err set when the kernel or the driver refuses. */
struct server_hwts_bpf *xp_hwts_load(struct server_bpf *main, int ifindex, char *err, size_t errlen);
int xp_hwts_prog_fd(struct server_hwts_bpf *h);
void xp_hwts_destroy(struct server_hwts_bpf *h);

#endif
