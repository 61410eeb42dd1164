/*
 * Several senders' figures as one (issue 27): counts summed, latency
 * histograms merged bucket by bucket, and percentiles read from the merged
 * histogram, never averaged from each sender's. The smallest and largest
 * latency stay the smallest and largest of either.
 */
#include "otg/ctl_internal.h"
#include "proto/flow_figs.h"

void otg_flow_merge(struct xp_flow_result *a, const struct xp_flow_result *b)
{
	a->tx_frames += b->tx_frames;
	a->tx_bytes += b->tx_bytes;
	if (!b->rx_known)
		return;
	/* lat_nmin is ~(smallest latency), 0 for none: the larger one is the smaller latency, and 0 loses. */
	uint64_t nmin = a->rx_known && a->rx.lat_nmin > b->rx.lat_nmin ? a->rx.lat_nmin : b->rx.lat_nmin;
	if (a->rx_known)
		xp_flow_acct_add(&a->rx, &b->rx);
	else
		a->rx = b->rx;
	a->rx.lat_nmin = nmin;
	a->rx_known = true;
}
