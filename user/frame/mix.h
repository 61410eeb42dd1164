/*
 * Mixed frame sizes (issue 11's IMIX): a weighted set of frame sizes and the
 * fixed, interleaved order the engines send them in, frame by frame.
 *
 * Syntax (-l and --sizes take it; cli/options.c):
 *   imix                        the simple IMIX 7:4:1 of 64, 570 and 1518 bytes
 *   SIZE:WEIGHT,SIZE:WEIGHT...  a user mix, e.g. 64:7,570:4,1518:1 (sizes as
 *                               -l takes them, incl. FCS; weights 1..1024)
 * The weights are reduced by their common divisor; their sum (the pattern's
 * length) may be at most XP_MIX_MAX_PATTERN, sizes at most XP_MIX_MAX_SIZES.
 *
 * The order: smooth weighted round robin (each step every size gains its
 * weight, the one with the most credit goes and pays the total), so a size
 * of weight w appears every total/w frames, as evenly as integers allow:
 * IMIX's 12-frame pattern is 64 570 64 64 570 64 1518 64 570 64 570 64, not 7
 * small frames, then 4, then 1 (that would be bursts of one size).
 */
#ifndef XP_NET_MIX_H
#define XP_NET_MIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define XP_MIX_MAX_SIZES   8u
#define XP_MIX_MAX_PATTERN 256u

struct xp_mix {
	unsigned n;                           /* sizes; 0 = no mix (one frame size) */
	unsigned size[XP_MIX_MAX_SIZES];      /* frame bytes incl. FCS, as given */
	unsigned weight[XP_MIX_MAX_SIZES];    /* reduced by their gcd */
	unsigned plen;                        /* pattern length = sum of weights */
	uint8_t pattern[XP_MIX_MAX_PATTERN];  /* index into size[] of frame k % plen */
	bool imix;                            /* given as "imix" */
};

/* Does s look like a mix ("imix" or containing ':')? */
bool xp_mix_syntax(const char *s);
/* Parse s into m (pattern included). 0, or -1 with a one-line err. */
int xp_mix_parse(const char *s, struct xp_mix *m, char *err, size_t errlen);
/* Mean frame size incl. FCS (IMIX: 353.83). */
double xp_mix_mean(const struct xp_mix *m);
/* Bytes (each size minus the 4-byte FCS, as the engines count) of the first
 * k frames of the pattern, repeated: the frames sent by one thread. */
uint64_t xp_mix_bytes(const struct xp_mix *m, uint64_t k);
unsigned xp_mix_min(const struct xp_mix *m);
unsigned xp_mix_max(const struct xp_mix *m);
/* "imix (64:7,570:4,1518:1)" or "64:2,1518:1"; returns buf. */
const char *xp_mix_name(const struct xp_mix *m, char *buf, size_t len);
/* "64:7,570:4,1518:1" (the weights as reduced); returns buf. */
const char *xp_mix_spec(const struct xp_mix *m, char *buf, size_t len);
/* Frames per second of pps frames/s of this mix as L1 / L2 bits/s. */
double xp_mix_l1_bps(const struct xp_mix *m, double pps);
double xp_mix_l2_bps(const struct xp_mix *m, double pps);

#endif
