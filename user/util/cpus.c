/* The CPUs this process may run on. See cpus.h. */
#include "util/cpus.h"

#include <sched.h>
#include <unistd.h>

int xp_allowed_cpus(int *cpus, int max)
{
	cpu_set_t set;
	int n = 0;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		for (int c = 0; c < CPU_SETSIZE && n < max; c++)
			if (CPU_ISSET(c, &set))
				cpus[n++] = c;
	}
	if (!n) {
		long on = sysconf(_SC_NPROCESSORS_ONLN);
		for (long c = 0; c < on && n < max; c++)
			cpus[n++] = (int)c;
	}
	if (!n && max > 0)
		cpus[n++] = 0;
	return n;
}

int xp_allowed_cpu_count(void)
{
	int cpus[CPU_SETSIZE];
	return xp_allowed_cpus(cpus, CPU_SETSIZE);
}
