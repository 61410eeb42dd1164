/*
 * The "none" engine sends nothing: the server still counts the test's ports,
 * so xdpperf reports what an external generator (trafgen, a hardware tester)
 * delivers through the device under test.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"

struct xp_engine {
	int unused;
};

static int none_create(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -12;
}

static int none_start(struct xp_engine *e, char *err, size_t errlen)
{
	return 0;
}

static void none_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->mode = "receive only";
}

static void none_stop(struct xp_engine *e)
{
}

static void none_destroy(struct xp_engine *e)
{
	free(e);
}

/* It sends nothing: no template, no next hop, and figures of what was received only. */
const struct xp_engine_ops xp_engine_none = {
	.name = "none",
	.title = "the none engine",
	/* It sends nothing: no template, no next hop, and figures of what was received only. */
	.tmpl = XP_TMPL_NONE,
	.nexthop = false,
	.figures = XP_FIGS_RECEIVED,
	.kinds = XP_TEST_BIT(XP_TEST_STREAM), /* an outside generator's stream */
	.caps = XP_CAP_BIT(XP_CAP_UDP), /* the server counts an outside generator's UDP */
	.lacks = { [XP_CAP_RATE] = "it sends nothing", [XP_CAP_BURST] = "it sends nothing",
		   [XP_CAP_FRAME_SIZE] = "it sends nothing; the server counts frames of any size",
		   [XP_CAP_STAMPS] = "it sends nothing to stamp", [XP_CAP_ETH] = "it sends nothing",
		   [XP_CAP_LATENCY] = "it sends nothing to time",
		   [XP_CAP_DEV] = "it sends nothing; the server's --dev picks where it counts",
		   [XP_CAP_XDP_MODE] = "the server's --xdp-mode sets how it counts",
		   [XP_CAP_SPORTS] = "it sends nothing", [XP_CAP_QUEUES] = "it sends nothing",
		   [XP_CAP_LOSS] = "it does not know what was sent", [XP_CAP_STALL] = "it does not know what was sent",
		   [XP_CAP_RATE_CHECK] = "it sends nothing", [XP_CAP_CONNS] = "it sends nothing",
		   [XP_CAP_BIND] = "it sends nothing", [XP_CAP_COMPARE] = "it sends nothing to compare",
		   [XP_CAP_RFC2544] = "the suite sends its own trials",
		   [XP_CAP_FLOWS] = "it sends nothing" },
	XP_ENGINE_LIFECYCLE(none),
	.sent_in = NULL, /* no frames, no stamps */
};
