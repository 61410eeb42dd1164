/* Per-thread time accounting for the pacing engines; see meas/threadclock.h. */
#include "meas/threadclock.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/time.h"

/* schedstat: "run_ns wait_ns timeslices" */
static uint64_t wait_ns(void)
{
	unsigned long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &run, &wait) != 2)
		wait = 0;
	fclose(f);
	return wait;
}

/* /proc/stat "cpuN user nice system idle iowait irq softirq steal ..." */
static void cpu_ticks(int cpu, uint64_t *softirq, uint64_t *total)
{
	char want[16], line[256];
	*softirq = *total = 0;
	if (cpu < 0)
		return;
	snprintf(want, sizeof(want), "cpu%d ", cpu);
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		unsigned long long v[8] = { 0 };
		int n = sscanf(line + strlen(want), "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			       &v[4], &v[5], &v[6], &v[7]);
		for (int i = 0; i < n; i++)
			*total += v[i];
		*softirq = n > 6 ? v[6] : 0;
		break;
	}
	fclose(f);
}

void xp_thread_clock_start(struct xp_thread_clock *c, int cpu)
{
	c->cpu = cpu;
	c->t = xp_now();
	c->wait_ns = wait_ns();
	cpu_ticks(cpu, &c->softirq, &c->total);
}

void xp_thread_clock_end(const struct xp_thread_clock *c, struct xp_pace_stats *acc)
{
	uint64_t s, t;
	acc->wall_s += xp_now() - c->t;
	acc->cpu_wait_s += (double)(wait_ns() - c->wait_ns) * 1e-9;
	cpu_ticks(c->cpu, &s, &t);
	if (t >= c->total && s >= c->softirq) {
		acc->softirq_ticks += s - c->softirq;
		acc->cpu_ticks += t - c->total;
	}
	acc->known = true;
}

void xp_pace_add(struct xp_pace_stats *acc, const struct xp_pace_stats *one)
{
	if (!one->known)
		return;
	acc->known = true;
	acc->wall_s += one->wall_s;
	acc->wait_s += one->wait_s;
	acc->cpu_wait_s += one->cpu_wait_s;
	acc->softirq_ticks += one->softirq_ticks;
	acc->cpu_ticks += one->cpu_ticks;
	acc->pushback += one->pushback;
	acc->kernel_sleeps += one->kernel_sleeps;
	acc->kernel_sleep_s += one->kernel_sleep_s;
	if (one->longest_call_s > acc->longest_call_s)
		acc->longest_call_s = one->longest_call_s;
	acc->catchups += one->catchups;
	if (one->max_grant > acc->max_grant)
		acc->max_grant = one->max_grant;
}
