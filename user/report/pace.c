/*
 * The offered load against its target: short or not, and if short, who held
 * it back. The engine gives its own account (struct xp_pace_stats): how much
 * of their time its sending threads were busy rather than waiting for their
 * schedule, how long they waited for a CPU, how much of their CPUs went to
 * the kernel's packet processing (softirq), and how often the kernel or
 * driver took fewer frames than offered.
 *
 * On veth the receive path of the next hop (a router, a firewall, the
 * server) runs in softirq on the sender's CPU (in its context, or deferred
 * to ksoftirqd, which then takes the CPU from it), so a slow path does not
 * push back: it takes the sender's CPU time. A sending CPU mostly in softirq
 * is held back by the path's work; busy with little in softirq, by its own.
 */
#include <inttypes.h>
#include <stdio.h>

#include "report/report.h"

#define BUSY_PCT 90.0     /* busy at least this much: it could not go faster */
#define CPU_WAIT_PCT 25.0 /* waited this much for a CPU: others took it */
#define SOFTIRQ_PCT 40.0  /* this much of the sending CPUs in softirq: the path's work */
#define KSLEEP_PCT 25.0   /* this much of the senders' time in sending calls that slept in the kernel */

void xp_pace_judge(const struct xp_pace_stats *st, struct xp_pace_figs *p)
{
	p->short_of_target = p->target_pps > 0 && p->reached_pps < p->target_pps * (1 - XP_RATE_TOLERANCE_PCT / 100);
	if (st->known && st->wall_s > 0) {
		p->busy_pct = 100 * (st->wall_s - st->wait_s) / st->wall_s;
		p->cpu_wait_pct = 100 * st->cpu_wait_s / st->wall_s;
	}
	p->softirq_pct = st->cpu_ticks ? 100.0 * (double)st->softirq_ticks / (double)st->cpu_ticks : 0;
	p->pushback = st->pushback;
	if (st->known && st->wall_s > 0)
		p->kernel_sleep_pct = 100 * st->kernel_sleep_s / st->wall_s;
	p->kernel_sleeps = st->kernel_sleeps;
	p->longest_call_ms = st->longest_call_s * 1e3;
	p->catchups = st->catchups;
	p->max_grant = st->max_grant;
	if (!p->short_of_target)
		return;
	if (!st->known) {
		p->held_back_by = "sender";
		snprintf(p->why, sizeof(p->why), "the engine gives no account of its time");
	} else if (st->pushback) {
		p->held_back_by = "path";
		snprintf(p->why, sizeof(p->why), "the kernel or driver took fewer frames than offered %llu times: TX "
			 "ring full or EAGAIN, backpressure from the interface or the path",
			 (unsigned long long)st->pushback);
	} else if (p->kernel_sleep_pct >= KSLEEP_PCT) {
		/* Before softirq and busy: a call asleep in the kernel looks "busy" to the account above. */
		p->held_back_by = "kernel";
		snprintf(p->why, sizeof(p->why), "%" PRIu64 " of its sending calls slept in the kernel, %.0f %% of its "
			 "time (longest call %.1f ms): on live frames the kernel's XDP dispatcher lock, held by another "
			 "process that attaches, detaches or test-runs XDP programs; rerun when it is done, or use "
			 "--engine xsk", p->kernel_sleeps, p->kernel_sleep_pct, p->longest_call_ms);
	} else if (p->softirq_pct >= SOFTIRQ_PCT) {
		/* Whether run in the sender's context or deferred to ksoftirqd (then it shows as CPU wait too). */
		p->held_back_by = "path";
		snprintf(p->why, sizeof(p->why), "%.0f %% of the sending CPUs' time went to the kernel's packet "
			 "processing (softirq), with the threads busy %.0f %% and waiting for a CPU %.0f %%: the "
			 "receiving side's work (on veth the next hop's receive path, a router, a firewall or the "
			 "server, runs on the sender's CPU)", p->softirq_pct, p->busy_pct, p->cpu_wait_pct);
	} else if (p->cpu_wait_pct >= CPU_WAIT_PCT) {
		p->held_back_by = "sender";
		snprintf(p->why, sizeof(p->why), "its threads waited %.0f %% of their time for a CPU: other processes "
			 "compete for it", p->cpu_wait_pct);
	} else if (p->busy_pct >= BUSY_PCT) {
		p->held_back_by = "sender";
		snprintf(p->why, sizeof(p->why), "its threads were busy %.0f %% of the time, %.0f %% of their CPUs in "
			 "softirq: the engine's own limit here (more --queues, or a faster engine)", p->busy_pct,
			 p->softirq_pct);
	} else {
		p->held_back_by = "sender";
		snprintf(p->why, sizeof(p->why), "its threads were busy only %.0f %% of the time: it fell behind its "
			 "schedule in stalls, which it forgives rather than catch up in a burst", p->busy_pct);
	}
}
