/*
 * One trial for the RFC 2544 suite (client.h, xp_client_trial): a normal
 * test (xp_client_run_one: its own control session, so the server counts
 * it by its own test id from zero, and its settle for frames in flight) at
 * the trial's rate, size and length, with its report thrown away, then the
 * RFC's wait before the next trial. Only the figures a trial's verdict
 * needs come back.
 */
#include <stdio.h>
#include <string.h>

#include "client/client.h"
#include "util/time.h"

int xp_client_trial(const struct xp_opts *base, const struct xp_trial_req *req, struct xp_trial_out *out)
{
	struct xp_opts o = *base;
	memset(out, 0, sizeof(*out));
	o.rfc2544 = false;
	o.json = o.json_stream = false;
	o.compare = false;
	o.require_rate = false;
	o.max_loss = -1;
	o.duration = req->seconds;
	o.interval = req->seconds;
	o.frame_size = req->frame_len;
	o.frame_size_set = true;
	o.burst = req->burst;
	o.rate = req->pps > 0 ? (struct xp_rate){ XP_RATE_PPS, req->pps } : (struct xp_rate){ XP_RATE_NONE, 0 };

	FILE *null = fopen("/dev/null", "w");
	if (!null) {
		snprintf(out->error, sizeof(out->error), "cannot open /dev/null");
		return out->rc = 1;
	}
	struct xp_report rep;
	struct xp_summary sum;
	memset(&sum, 0, sizeof(sum));
	xp_report_init(&rep, XP_REPORT_TEXT, null);
	out->rc = xp_client_run_one(&o, &rep, &sum);
	xp_report_free(&rep);
	fclose(null);
	/* Exit statuses 3 and 4 are thresholds, not failures; they are off here anyway. */
	if (out->rc || sum.error) {
		snprintf(out->error, sizeof(out->error), "%s",
			 sum.error ? sum.error : *xp_client_last_error() ? xp_client_last_error() : "the test failed");
		if (!out->rc)
			out->rc = 1;
		return out->rc;
	}
	const struct xp_period *p = &sum.total;
	out->sent = p->tx_pkts;
	out->received = p->rx.pkts;
	out->seconds = p->t1 - p->t0;
	out->target_pps = sum.pace.target_pps;
	out->offered_pps = sum.pace.target_pps > 0 ? sum.pace.reached_pps
			   : out->seconds > 0 ? (double)p->tx_pkts / out->seconds : 0;
	out->short_of_target = sum.pace.short_of_target;
	out->held_back_by = sum.pace.short_of_target ? sum.pace.held_back_by : NULL;
	snprintf(out->why, sizeof(out->why), "%s", sum.pace.short_of_target ? sum.pace.why : "");
	out->kernel_sleeps = sum.pace.kernel_sleep_pct >= 1.0;
	out->max_catchup = sum.pace.catchups ? sum.pace.max_grant : 0;
	if (req->settle_s > 0)
		xp_sleep(req->settle_s);
	return 0;
}
