/* The server's port-range finder for clients without -p. See portrange.h. */
#include "server/portrange.h"

#include <errno.h>

void xp_portset_add_range(struct xp_portset *s, unsigned lo, unsigned hi)
{
	for (unsigned p = lo; p <= hi && p <= 65535; p++)
		xp_portset_add(s, (uint16_t)p);
}

/* The first free run of width ports in first..hi whose first port is at most last_start. */
static int scan(const struct xp_portset *taken, unsigned first, unsigned last_start, unsigned hi, unsigned width,
		uint16_t *out)
{
	unsigned run = 0;
	for (unsigned p = first; p <= hi; p++) {
		if (xp_portset_has(taken, (uint16_t)p)) {
			run = 0;
			if (p >= last_start) /* every run from here starts after last_start */
				return -ENOSPC;
			continue;
		}
		if (++run == width) {
			*out = (uint16_t)(p - width + 1);
			return 0;
		}
	}
	return -ENOSPC;
}

int xp_port_run(const struct xp_portset *taken, unsigned lo, unsigned hi, unsigned start, unsigned width,
		uint16_t *out)
{
	if (!width || hi > 65535 || lo > hi || width > hi - lo + 1)
		return -ENOSPC;
	if (start < lo || start > hi)
		start = lo;
	if (!scan(taken, start, hi, hi, width, out))
		return 0;
	return start > lo ? scan(taken, lo, start - 1, hi, width, out) : -ENOSPC;
}
