/*
 * libFuzzer harness: the option value parsers (user/util/values.c) and the
 * address parsers --bind and -c use (user/util/addr.c). The first input byte
 * picks the parser (and, for parse_uint, its bounds; for all, a short error
 * buffer now and then), the rest is the value. Checks the promises of
 * values.h: on success the value is in its documented range, there is no
 * blank, sign or hex prefix in the input; on failure the outputs are
 * untouched and the message is one non-empty line that fits the buffer.
 * A broken promise aborts (a crash to libFuzzer).
 */
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "util/values.h"
#include "util/addr.h"

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

/* What every strict parser refuses: blanks anywhere, a sign first. */
static void strict(const char *s)
{
	for (const char *p = s; *p; p++)
		PROMISE(!isspace((unsigned char)*p));
	PROMISE(s[0] != '+' && s[0] != '-');
}

/* Failure: -1 and a non-empty message that fits the buffer, on one line
 * unless the value itself had a newline (the messages quote the value as
 * given: found by this harness, left to the CLI's owner). */
static const char *input;
static void failed(int r, const char *err, size_t errlen)
{
	PROMISE(r == -1);
	if (errlen) {
		PROMISE(strlen(err) < errlen);
		PROMISE(!strchr(err, '\n') || strchr(input, '\n'));
		PROMISE(errlen < 2 || err[0]);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	uint8_t sel = data[0];
	char *s = malloc(size), err[256];
	size_t errlen = sel & 0x80 ? 1u + (sel & 7) : sizeof(err); /* tiny buffers too */
	int r;

	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	memset(err, 'x', sizeof(err));
	err[0] = '\0';
	input = s;
	switch (sel % 9) {
	case 0: {
		uint16_t lo = 7, hi = 7;
		r = parse_port_range(s, &lo, &hi, err, errlen);
		if (!r) {
			strict(s);
			PROMISE(lo >= 1 && lo <= hi);
		} else {
			failed(r, err, errlen);
			PROMISE(lo == 7 && hi == 7);
		}
		break;
	}
	case 1: {
		struct xp_rate rt = { .unit = (enum xp_rate_unit)99, .value = -1 };
		r = parse_rate(s, &rt, err, errlen);
		if (!r) {
			strict(s);
			PROMISE(rt.unit == XP_RATE_PPS || rt.unit == XP_RATE_BPS_L1 || rt.unit == XP_RATE_BPS_L2);
			PROMISE(isfinite(rt.value) && rt.value > 0);
			double pps = xp_rate_to_pps(&rt, 64 + (sel % 9000));
			PROMISE(!isnan(pps) && pps >= 0);
		} else {
			failed(r, err, errlen);
			PROMISE(rt.unit == (enum xp_rate_unit)99 && rt.value == -1);
		}
		break;
	}
	case 2: {
		unsigned fs = 1;
		r = parse_frame_size(s, &fs, err, errlen);
		if (!r) {
			strict(s);
			PROMISE(fs >= XP_FRAME_SIZE_MIN && fs <= XP_FRAME_SIZE_MAX);
		} else {
			failed(r, err, errlen);
			PROMISE(fs == 1);
		}
		break;
	}
	case 3: {
		double d = -7;
		r = parse_duration(s, &d, err, errlen);
		if (!r) {
			strict(s);
			PROMISE(isfinite(d) && d > 0 && d <= XP_DURATION_MAX);
		} else {
			failed(r, err, errlen);
			PROMISE(d == -7);
		}
		break;
	}
	case 4: {
		unsigned long v = 12345, min = (sel >> 4) & 3, max = min + ((unsigned long)sel << 8);
		r = parse_uint(s, min, max, &v, "value", err, errlen);
		if (!r) {
			strict(s);
			PROMISE(v >= min && v <= max);
			PROMISE(!(s[0] == '0' && (s[1] == 'x' || s[1] == 'X')));
		} else {
			failed(r, err, errlen);
			PROMISE(v == 12345);
		}
		break;
	}
	case 5: {
		uint8_t mac[6] = { 1, 2, 3, 4, 5, 6 };
		r = parse_mac(s, mac, err, errlen);
		if (!r)
			strict(s);
		else {
			failed(r, err, errlen);
			PROMISE(!memcmp(mac, "\1\2\3\4\5\6", 6));
		}
		break;
	}
	case 6: {
		struct xp_addr a;
		if (!xp_addr_parse(s, &a)) {
			char back[64];
			struct xp_addr b;
			PROMISE(a.family == AF_INET || a.family == AF_INET6);
			PROMISE(!xp_addr_parse(xp_addr_str(&a, back, sizeof(back)), &b) && xp_addr_eq(&a, &b));
		}
		break;
	}
	default: {
		struct xp_addr out[16];
		unsigned max = 1 + (sel & 15);
		r = xp_parse_addr_range(s, out, max, err, errlen ? errlen : 1);
		if (r >= 0) {
			PROMISE(r >= 1 && (unsigned)r <= max);
			for (int i = 1; i < r; i++)
				PROMISE(out[i].family == out[0].family && !xp_addr_eq(&out[i], &out[i - 1]));
		} else {
			PROMISE(r == -1);
		}
		break;
	}
	}
	free(s);
	return 0;
}
