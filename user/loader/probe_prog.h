/* The probe's own tiny XDP program, made from instructions (no object file to ship). */
#ifndef XP_PROBE_PROGS_H
#define XP_PROBE_PROGS_H

#include <stddef.h>

/* Load "return XDP_DROP" with the given prog_flags. fd, or -errno with err set. */
int xp_probe_prog_load(unsigned prog_flags, char *err, size_t errlen);
/* Run it once with BPF_F_TEST_XDP_LIVE_FRAMES on ifindex, rx queue 0: the frame is
 * dropped, nothing is sent. 0 or -errno. */
int xp_probe_live_run(int prog_fd, int ifindex);

#endif
