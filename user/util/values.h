/*
 * Value parsers (rates, ports, sizes, addresses): the command line's, and
 * of anything below it that reads such a value (frame/mix.c, sizes). Strict on
 * purpose: a benchmark that silently reads "10x" as 10 or "-5" as 4294967291
 * measures the wrong thing.
 * No leading/trailing blanks, no signs, no hex, no exponents.
 *
 * Each parser returns 0, or -1 with a one-line message (no trailing newline)
 * in err (errlen bytes, may be 0/NULL). Outputs are written only on success.
 * Pure functions: no syscalls, no locale dependence.
 */
#ifndef XP_VALUES_H
#define XP_VALUES_H

#include <stddef.h>
#include <stdint.h>

/* A rate limit as given by the user; converted to frames/s once the frame
 * size is known (xp_rate_to_pps). */
enum xp_rate_unit {
	XP_RATE_NONE = 0, /* no limit */
	XP_RATE_PPS,      /* frames per second */
	XP_RATE_BPS_L1,   /* bits/s on the wire: frame + FCS + preamble + IFG */
	XP_RATE_BPS_L2,   /* bits/s of frames including the FCS */
};

struct xp_rate {
	enum xp_rate_unit unit;
	double value;
};

/* "PORT" or "LO:HI" (fireperf syntax), each 1..65535, LO <= HI. */
int parse_port_range(const char *s, uint16_t *lo, uint16_t *hi,
		     char *err, size_t errlen);

/*
 * NUMBER[SI][UNIT]: NUMBER is decimal ("1.5"), SI is k/K, m/M, g/G (x1000,
 * x1000^2, x1000^3; m is mega here, not milli), UNIT is
 *   "pps"                    -> frames/s
 *   "" | "bps" | "bit"       -> bits/s on the wire (L1)
 *   "-l2" | "bps-l2" | "bit-l2" | "l2" -> bits/s at L2 (frame incl. FCS)
 * e.g. "100kpps", "1.5Mpps", "1G", "800M", "1G-l2", "1Gbps-l2". Must be > 0.
 */
int parse_rate(const char *s, struct xp_rate *r, char *err, size_t errlen);

/* Frames/s that rate r means for frames of frame_size bytes incl. FCS
 * (L1 adds 20 bytes of preamble + IFG per frame). 0 for XP_RATE_NONE or a
 * zero frame size. */
double xp_rate_to_pps(const struct xp_rate *r, double frame_size);

/* Integer 64..9018 (frame size incl. FCS); checking against the MTU is the
 * caller's job once the interface is known. */
#define XP_FRAME_SIZE_MIN 64u
#define XP_FRAME_SIZE_MAX 9018u
int parse_frame_size(const char *s, unsigned *size, char *err, size_t errlen);

/* Seconds: "10", "1.5", "500ms", "10s", "2m", "1h". > 0 and <= 86400. */
#define XP_DURATION_MAX 86400.0
int parse_duration(const char *s, double *secs, char *err, size_t errlen);
/* The same, naming the value `what` in messages ("interval must be greater than 0"). */
int parse_duration_named(const char *s, const char *what, double *secs, char *err, size_t errlen);

/* A percentage 0..100: "0", "0.1", "5", "5%". */
int parse_percent(const char *s, double *pct, char *err, size_t errlen);

/* Decimal integer in min..max; messages name the value as `what`
 * (e.g. "queue count 99 is out of range 1..64"). */
int parse_uint(const char *s, unsigned long min, unsigned long max,
	       unsigned long *out, const char *what, char *err, size_t errlen);

/* "aa:bb:cc:dd:ee:ff" (hex, either case; 1 or 2 digits per byte). */
int parse_mac(const char *s, uint8_t mac[6], char *err, size_t errlen);

/* Writes a one-line message (printf-style) into err, if given, and returns -1. */
int xp_cli_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif /* XP_VALUES_H */
