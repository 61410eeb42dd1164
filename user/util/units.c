/* The numbers of reports in words: SI prefixes, rates, durations; see units.h. */
#include "util/units.h"

#include <math.h>
#include <stdio.h>

const char *xp_fmt_secs(double v, char *buf, size_t len)
{
	/* As given: -t 1.5 is "1.5 s", -t 10 is "10 s". */
	snprintf(buf, len, "%g s", v);
	return buf;
}

const char *xp_fmt_rate(double v, const char *unit, char *buf, size_t len)
{
	char n[32];
	snprintf(buf, len, "%s%s", fmt_si(v, n, sizeof(n)), unit);
	return buf;
}

/* "812ns", "12.3us", "1.25ms", "1.002s": a duration a tester reads at a glance. */
const char *xp_fmt_ns(double ns, char *buf, size_t len)
{
	if (!isfinite(ns))
		snprintf(buf, len, "-");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0fns", ns);
	else if (ns < 1e5)
		snprintf(buf, len, "%.2fus", ns / 1e3);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1fus", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else
		snprintf(buf, len, "%.4gs", ns / 1e9);
	return buf;
}

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
