/*
 * cpuspeed: how fast this CPU runs a fixed loop right now, for the bench's
 * context (scripts/bench/xconn.sh). On a shared virtual machine the host
 * gives a vCPU more or less of a core from one second to the next (other
 * guests, frequency): a run-to-run spread of a benchmark is at least the
 * spread of the CPU's own speed over the same runs, and this measures that,
 * with no part of xdpperf involved.
 *
 *   cpuspeed [-t SECONDS]    (default 1; 0.1 to 60)
 *
 * Prints "loops_per_s=N": blocks of 1000 dependent integer steps (a
 * multiply-add chain the compiler cannot fold or vectorise) per second,
 * in millions ("mloops_per_s=X.XXX"). Pin it with taskset to the CPU of
 * interest. Exit 2 on bad usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/time.h"

int main(int argc, char **argv)
{
	double secs = 1.0;
	int o;
	while ((o = getopt(argc, argv, "t:")) != -1) {
		char *end;
		switch (o) {
		case 't':
			secs = strtod(optarg, &end);
			if (*end || secs < 0.1 || secs > 60) {
				fprintf(stderr, "cpuspeed: -t takes 0.1 to 60 seconds, not '%s'\n", optarg);
				return 2;
			}
			break;
		default:
			fprintf(stderr, "usage: cpuspeed [-t SECONDS]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: cpuspeed [-t SECONDS]\n");
		return 2;
	}
	/* A dependent chain: each step needs the last, so the loop's speed is
	 * the core's (latency of a multiply-add), not the memory's. The clock
	 * is read once per 1000 steps (~1 us), a small share of the work. */
	uint64_t x = 1, loops = 0;
	double t0 = xp_now(), t = t0, end = t0 + secs;
	while (t < end) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		__asm__ volatile("" : "+r"(x));
		loops++;
		t = xp_now();
	}
	double rate = (double)loops / (t - t0);
	printf("loops_per_s=%.0f mloops_per_s=%.3f check=%llu\n", rate, rate / 1e6, (unsigned long long)(x & 1));
	return 0;
}
