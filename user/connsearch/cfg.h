/*
 * The connection searches' own settings (--search and its --search-*): what
 * the search is asked to do beyond the test it is made of (spec/spec.h). The
 * command line fills them (cli/opts.h embeds them); connsearch/run.c reads them.
 */
#ifndef XP_CONNSEARCH_CFG_H
#define XP_CONNSEARCH_CFG_H

struct xp_cs_cfg {
	unsigned mode;               /* --search: enum xp_cs_mode (connsearch/search.h), 0 = none */
	double trial_s;              /* --search-trial SECS */
	double floor;                /* --search-floor CPS: the lowest rate, and the probes' */
	double ceiling;              /* --search-ceiling CPS, 0 = the sender's maximum, measured */
	double res_pct;              /* --search-resolution PCT */
	double settle_s;             /* --search-settle SECS: without --device-netns, the wait before each probe */
};

static inline void xp_cs_cfg_default(struct xp_cs_cfg *c)
{
	*c = (struct xp_cs_cfg){ .trial_s = 10, .floor = 100, .res_pct = 1,
				 .settle_s = 10 /* Linux's conntrack keeps a reset connection 10 s (CLOSE) */ };
}

#endif
