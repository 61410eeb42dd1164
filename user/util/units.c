/* SI formatting for reports; see units.h. */
#include "util/units.h"

#include <math.h>
#include <stdio.h>

const char *fmt_si(double v, char *buf, size_t len)
{
	static const char *const prefix[] = { "", "k", "M", "G", "T", "P", "E" };
	const size_t nprefix = sizeof(prefix) / sizeof(prefix[0]);
	double a = fabs(v);
	size_t i = 0;

	if (!buf || !len)
		return buf;
	if (!isfinite(v)) {
		snprintf(buf, len, "%s ", isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf"));
		return buf;
	}
	/* Compare against 999.995, not 1000: anything at or above it would
	 * print as "1000.00" with %.2f, so it belongs to the next prefix. */
	while (a >= 999.995 && i + 1 < nprefix) {
		a /= 1000.0;
		i++;
	}
	snprintf(buf, len, "%s%.2f %s", v < 0 ? "-" : "", a, prefix[i]);
	return buf;
}
