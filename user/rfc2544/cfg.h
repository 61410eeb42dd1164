/*
 * The RFC 2544 suite's own settings (--sizes, --tests, --trial, ...): what
 * the suite is asked to do beyond the test it is made of (spec/spec.h). The
 * command line fills them (cli/opts.h embeds them); rfc2544/run.c reads them.
 */
#ifndef XP_RFC2544_CFG_H
#define XP_RFC2544_CFG_H

#include <stdbool.h>

#include "spec/spec.h" /* struct xp_mix: the spec's traffic has one (frame/mix.h) */

#define XP_RFC_MAX_SIZES 16

/* --tests: which RFC 2544 tests the suite runs. */
#define XP_RFC_T_THROUGHPUT (1u << 0)
#define XP_RFC_T_LATENCY    (1u << 1)
#define XP_RFC_T_LOSS       (1u << 2)
#define XP_RFC_T_B2B        (1u << 3)
#define XP_RFC_T_ALL        0xfu

struct xp_rfc2544_cfg {
	unsigned sizes[XP_RFC_MAX_SIZES]; /* --sizes, frame bytes with FCS; 0: the mix below */
	struct xp_mix mix;           /* --sizes imix / SIZE:WEIGHT,...: the one mix of the list */
	unsigned nsizes;             /* 0: the default sizes (RFC 2544's, or RFC 5180's for IPv6) */
	unsigned tests;              /* --tests, XP_RFC_T_* bits */
	double trial_s;              /* --trial SECS */
	double loss_tol;             /* --loss-tolerance PCT: the PDR's */
	double line_bps;             /* --line-rate, L1 bits/s; 0: the sender's maximum */
	unsigned lat_trials;         /* --latency-trials */
	unsigned b2b_trials;         /* --b2b-trials */
	unsigned confirm;            /* --confirm-loss N: runs of a losing throughput trial again */
	char plot_dir[256];          /* --plot DIR, "" = no plots */
	bool bidir;                  /* --bidir: every trial both ways at once (rfc2544/bidir.c) */
	bool estimate;               /* --estimate: print the suite's trial count and time, send nothing */
};

/* The defaults (the typed rows of cli/options.c give the same for theirs). */
static inline void xp_rfc2544_cfg_default(struct xp_rfc2544_cfg *c)
{
	*c = (struct xp_rfc2544_cfg){ .tests = XP_RFC_T_ALL, .trial_s = 60, /* RFC 2544 section 24: at least 60 s */
				      .loss_tol = 0.5, /* the PDR's, as CSIT reports it */
				      .lat_trials = 20, .b2b_trials = 50, .confirm = 1 };
}

#endif
