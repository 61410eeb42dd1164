/* Option value parsers; see util/values.h. */
#include "util/values.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

__attribute__((format(printf, 3, 4)))
int xp_cli_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Exact powers of ten as doubles (all below 2^53 up to 1e15). */
static const double pow10_tab[] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
	1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
};
#define MAX_FRAC_DIGITS 15u
#define MANT_LIMIT (1ull << 53) /* integers below this are exact doubles */

/*
 * Strict unsigned decimal: DIGITS[.DIGITS] or .DIGITS, at least one digit.
 * Returned as an integer mantissa and a count of fractional digits, so the
 * caller can apply its multiplier before the one division: "1.23" with M
 * becomes 123 * 1e6 / 100, which is exact, where 1.23 * 1e6 is not.
 * strtod is avoided: it takes signs, blanks, hex, "inf" and the locale's
 * decimal point. Sets *end past the number. Returns 0, -1 if no number,
 * -2 if too many digits to be represented exactly.
 */
static int parse_decimal(const char *s, const char **end, uint64_t *mant,
			 unsigned *frac)
{
	uint64_t m = 0;
	unsigned f = 0, ndigits = 0;
	bool dot = false;

	for (;; s++) {
		if (*s == '.' && !dot) {
			dot = true;
			continue;
		}
		if (!is_digit(*s))
			break;
		m = m * 10 + (uint64_t)(*s - '0');
		ndigits++;
		if (dot)
			f++;
		if (m >= MANT_LIMIT || f > MAX_FRAC_DIGITS)
			return -2;
	}
	if (!ndigits)
		return -1;
	*end = s;
	*mant = m;
	*frac = f;
	return 0;
}

/* Strict unsigned integer over the whole string; -1 not a number, -2 overflow. */
static int parse_ulong_str(const char *s, size_t len, unsigned long *out)
{
	unsigned long v = 0;
	size_t i;

	if (!len)
		return -1;
	for (i = 0; i < len; i++) {
		if (!is_digit(s[i]))
			return -1;
	}
	for (i = 0; i < len; i++) {
		unsigned long d = (unsigned long)(s[i] - '0');

		if (v > (~0ul - d) / 10)
			return -2;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_uint(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out, const char *what, char *err, size_t errlen)
{
	unsigned long v;
	int rc;

	if (!what)
		what = "value";
	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty %s", what);
	rc = parse_ulong_str(s, strlen(s), &v);
	if (rc == -1)
		return xp_cli_fail(err, errlen, "invalid %s '%s': not a non-negative integer",
			      what, s);
	if (rc == -2 || v < min || v > max)
		return xp_cli_fail(err, errlen, "%s %s is out of range %lu..%lu",
			      what, s, min, max);
	*out = v;
	return 0;
}

int parse_frame_size(const char *s, unsigned *size, char *err, size_t errlen)
{
	unsigned long v;

	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty frame size");
	int rc = parse_ulong_str(s, strlen(s), &v);
	if (rc == -1)
		return xp_cli_fail(err, errlen, "invalid frame size '%s': not a non-negative integer", s);
	/* The two bounds said apart: the top is not the link's (that check
	 * needs the interface and comes later, naming its MTU). */
	if (rc == -2 || v > XP_FRAME_SIZE_MAX)
		return xp_cli_fail(err, errlen, "frame size %s is above %u, the largest jumbo frame (MTU 9000)", s,
				   XP_FRAME_SIZE_MAX);
	if (v < XP_FRAME_SIZE_MIN)
		return xp_cli_fail(err, errlen, "frame size %s is below Ethernet's minimum of %u bytes", s,
				   XP_FRAME_SIZE_MIN);
	*size = (unsigned)v;
	return 0;
}

/* One port of a range: len bytes at s, 1..65535. */
static int parse_port(const char *s, size_t len, uint16_t *port, const char *whole,
		      char *err, size_t errlen)
{
	unsigned long v;
	int rc = parse_ulong_str(s, len, &v);

	if (rc == -1)
		return xp_cli_fail(err, errlen,
			      "invalid port range '%s': expected PORT or LO:HI", whole);
	if (rc == -2 || v < 1 || v > 65535)
		return xp_cli_fail(err, errlen, "port %.*s is out of range 1..65535",
			      (int)len, s);
	*port = (uint16_t)v;
	return 0;
}

int parse_port_range(const char *s, uint16_t *lo, uint16_t *hi,
		     char *err, size_t errlen)
{
	const char *colon;
	uint16_t a, b;

	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty port range");
	colon = strchr(s, ':');
	if (!colon) {
		if (parse_port(s, strlen(s), &a, s, err, errlen))
			return -1;
		*lo = *hi = a;
		return 0;
	}
	/* A second colon makes the upper part non-numeric: rejected below. */
	if (parse_port(s, (size_t)(colon - s), &a, s, err, errlen) ||
	    parse_port(colon + 1, strlen(colon + 1), &b, s, err, errlen))
		return -1;
	if (a > b)
		return xp_cli_fail(err, errlen, "port range %s is reversed (use %u:%u)",
			      s, b, a);
	*lo = a;
	*hi = b;
	return 0;
}

/* Multiplier for an SI prefix character, or 0 if c is not one. */
static double si_mult(char c)
{
	switch (c) {
	case 'k': case 'K': return 1e3;
	case 'm': case 'M': return 1e6;
	case 'g': case 'G': return 1e9;
	default: return 0;
	}
}

int parse_rate(const char *s, struct xp_rate *r, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		enum xp_rate_unit unit;
	} units[] = {
		{ "", XP_RATE_BPS_L1 },	    { "bps", XP_RATE_BPS_L1 },
		{ "bit", XP_RATE_BPS_L1 },  { "pps", XP_RATE_PPS },
		{ "bps-l2", XP_RATE_BPS_L2 }, { "l2", XP_RATE_BPS_L2 },
		{ "-l2", XP_RATE_BPS_L2 },  { "bit-l2", XP_RATE_BPS_L2 },
	};
	const char *p;
	uint64_t mant;
	unsigned frac;
	double mult = 1, v;
	size_t i;
	int rc;

	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty rate");
	rc = parse_decimal(s, &p, &mant, &frac);
	if (rc == -2)
		return xp_cli_fail(err, errlen, "rate '%s' has too many digits", s);
	if (rc)
		return xp_cli_fail(err, errlen,
			      "invalid rate '%s': expected a number like 100kpps, 1.5G or 800Mbps-l2",
			      s);
	if (si_mult(*p)) {
		mult = si_mult(*p);
		p++;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(p, units[i].name))
			break;
	}
	if (i == sizeof(units) / sizeof(units[0]))
		return xp_cli_fail(err, errlen,
			      "invalid rate unit in '%s': use pps (100kpps), bits/s on the wire (1G) or at L2 (1G-l2)",
			      s);
	if (!mant)
		return xp_cli_fail(err, errlen, "rate must be greater than 0");
	v = (double)mant * mult / pow10_tab[frac];
	r->unit = units[i].unit;
	r->value = v;
	return 0;
}

double xp_rate_to_pps(const struct xp_rate *r, double frame_size)
{
	if (!r || !frame_size)
		return 0;
	switch (r->unit) {
	case XP_RATE_PPS:
		return r->value;
	case XP_RATE_BPS_L1:
		/* preamble+SFD (8) and inter-frame gap (12) cost line time too */
		return r->value / ((frame_size + 20) * 8);
	case XP_RATE_BPS_L2:
		return r->value / (frame_size * 8);
	default:
		return 0;
	}
}

int parse_duration(const char *s, double *secs, char *err, size_t errlen)
{
	return parse_duration_named(s, "duration", secs, err, errlen);
}

int parse_duration_named(const char *s, const char *what, double *secs, char *err, size_t errlen)
{
	const char *p;
	uint64_t mant;
	unsigned frac;
	double mul = 1, div = 1, v;
	int rc;

	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty %s", what);
	rc = parse_decimal(s, &p, &mant, &frac);
	if (rc == -2)
		return xp_cli_fail(err, errlen, "%s '%s' has too many digits", what, s);
	if (rc)
		return xp_cli_fail(err, errlen,
			      "invalid %s '%s': expected seconds like 10, 1.5, 500ms or 2m",
			      what, s);
	if (!strcmp(p, "") || !strcmp(p, "s"))
		;
	else if (!strcmp(p, "ms"))
		div = 1000;
	else if (!strcmp(p, "m"))
		mul = 60;
	else if (!strcmp(p, "h"))
		mul = 3600;
	else
		return xp_cli_fail(err, errlen,
			      "invalid %s unit in '%s': use s, ms, m or h", what, s);
	if (!mant)
		return xp_cli_fail(err, errlen, "%s must be greater than 0", what);
	/* One rounding: mantissa*mul and 10^frac*div are exact. */
	v = (double)mant * mul / (pow10_tab[frac] * div);
	if (v > XP_DURATION_MAX)
		return xp_cli_fail(err, errlen, "%s '%s' exceeds the maximum of %.0f s",
			      what, s, XP_DURATION_MAX);
	*secs = v;
	return 0;
}

int parse_percent(const char *s, double *pct, char *err, size_t errlen)
{
	const char *p;
	uint64_t mant;
	unsigned frac;

	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty percentage");
	if (parse_decimal(s, &p, &mant, &frac) || (*p && strcmp(p, "%")))
		return xp_cli_fail(err, errlen, "invalid percentage '%s': expected a number like 0, 0.1 or 5", s);
	double v = (double)mant / pow10_tab[frac];
	if (v > 100)
		return xp_cli_fail(err, errlen, "percentage %s is out of range 0..100", s);
	*pct = v;
	return 0;
}

static int hex_val(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int parse_mac(const char *s, uint8_t mac[6], char *err, size_t errlen)
{
	uint8_t m[6];
	const char *p = s;
	int i;

	if (!s || !*s)
		return xp_cli_fail(err, errlen, "empty MAC address");
	for (i = 0; i < 6; i++) {
		int hi = hex_val(p[0]), lo;

		if (hi < 0)
			goto bad;
		lo = hex_val(p[1]);
		if (lo >= 0) {
			m[i] = (uint8_t)(hi << 4 | lo);
			p += 2;
		} else {
			m[i] = (uint8_t)hi; /* "a:b:..." as ether_aton accepts */
			p += 1;
		}
		if (i < 5) {
			if (*p != ':')
				goto bad;
			p++;
		}
	}
	if (*p)
		goto bad;
	memcpy(mac, m, 6);
	return 0;
bad:
	return xp_cli_fail(err, errlen,
		      "invalid MAC address '%s': expected aa:bb:cc:dd:ee:ff", s);
}
