// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The server program again, built with XP_SERVER_HWTS: a slot with
 * XP_MEAS_HWTS takes a frame's receive time from the NIC
 * (bpf_xdp_metadata_rx_timestamp) when the driver has one for it. The
 * kernel lets only a device-bound program call that kfunc (loaded for one
 * interface, BPF_F_XDP_DEV_BOUND_ONLY, attachable there only, and not
 * runnable by BPF_PROG_RUN), so it is a program of its own, which
 * user/loader/server_hwts.c loads per interface, sharing the main
 * program's maps. Everything else is server.bpf.c's, line for line.
 */
#define XP_SERVER_HWTS 1
#include "server.bpf.c"
