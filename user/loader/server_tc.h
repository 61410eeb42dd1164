/*
 * The server's TC ingress program (bpf/server_tc.bpf.c), which counts socket
 * tests' frames where an XDP program would slow them (see the program). It
 * shares the XDP program's maps (port_slot, slot_cfg, slot_peers, counters,
 * ...), so a slot is claimed, configured and read the same way whichever
 * program counts it (server_prog.h, XP_SLOT_TC).
 *
 * Attached per interface, reference counted like the XDP program: a tcx
 * bpf_link (Linux 6.6+), which the kernel removes when the process dies; on a
 * kernel without tcx a clsact qdisc filter (cls_bpf, direct action), removed
 * on detach and on close (the qdisc too, if we created it).
 */
#ifndef XP_SERVER_TC_H
#define XP_SERVER_TC_H

#include <stddef.h>
#include <stdint.h>

struct server_tc;
struct server_bpf;
struct server_tc_bpf;

/* Load it with xdp's maps. 0 or -errno with err set. */
int server_tc_open(struct server_tc **out, struct server_bpf *xdp, uint16_t ctrl_port, char *err, size_t errlen);
/* Detach everywhere and unload. */
void server_tc_close(struct server_tc *t);
/*
 * Attach to ifindex's ingress unless already attached (then a reference).
 * *how: "tcx" (a bpf_link) or "tc" (a clsact filter, where the kernel has no
 * tcx or XDPPERF_TC_HOOK=1 asks for it). 0 or -errno with err set.
 */
int server_tc_attach(struct server_tc *t, int ifindex, const char **how, char *err, size_t errlen);
/* Drop a reference; the last one detaches. */
void server_tc_detach(struct server_tc *t, int ifindex);
/* The loaded skeleton, for tests that run the program with BPF_PROG_RUN. */
struct server_tc_bpf *server_tc_skel(struct server_tc *t);

#endif
