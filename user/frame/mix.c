/* Mixed frame sizes: parsing, the interleaved pattern, the mean; see mix.h. */
#include "frame/mix.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/values.h"
#include "util/units.h"

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

bool xp_mix_syntax(const char *s)
{
	return s && (!strcmp(s, "imix") || strchr(s, ':'));
}

/* Smooth weighted round robin (nginx's): deterministic, evenly spread. */
static void make_pattern(struct xp_mix *m)
{
	long credit[XP_MIX_MAX_SIZES] = { 0 };
	for (unsigned k = 0; k < m->plen; k++) {
		unsigned best = 0;
		for (unsigned i = 0; i < m->n; i++) {
			credit[i] += m->weight[i];
			if (credit[i] > credit[best])
				best = i;
		}
		credit[best] -= m->plen;
		m->pattern[k] = (uint8_t)best;
	}
}

int xp_mix_parse(const char *s, struct xp_mix *m, char *err, size_t errlen)
{
	static const char hint[] = "give imix or SIZE:WEIGHT pairs, like 64:7,570:4,1518:1";
	char buf[256], *save = NULL;
	memset(m, 0, sizeof(*m));
	if (!s || !*s || strlen(s) >= sizeof(buf))
		return fail(err, errlen, "frame mix '%s': %s", s ? s : "", hint);
	if (!strcmp(s, "imix")) {
		strcpy(buf, "64:7,570:4,1518:1");
		m->imix = true;
	} else {
		strcpy(buf, s);
	}
	if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,"))
		return fail(err, errlen, "frame mix '%s': %s", s, hint);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(t, ':');
		if (!colon || colon == t || !colon[1] || strchr(colon + 1, ':'))
			return fail(err, errlen, "frame mix '%s': '%s' is not SIZE:WEIGHT; %s", s, t, hint);
		*colon = '\0';
		if (m->n >= XP_MIX_MAX_SIZES)
			return fail(err, errlen, "frame mix '%s': at most %u sizes", s, XP_MIX_MAX_SIZES);
		unsigned size;
		if (parse_frame_size(t, &size, err, errlen))
			return -1;
		char *end;
		errno = 0;
		unsigned long w = strtoul(colon + 1, &end, 10);
		if (*end || errno || colon[1] == '-' || colon[1] == '+' || w < 1 || w > 1024)
			return fail(err, errlen, "frame mix '%s': weight '%s' is not a whole number 1..1024", s,
				    colon + 1);
		for (unsigned i = 0; i < m->n; i++)
			if (m->size[i] == size)
				return fail(err, errlen, "frame mix '%s': size %u given twice", s, size);
		m->size[m->n] = size;
		m->weight[m->n] = (unsigned)w;
		m->n++;
	}
	if (m->n < 2)
		return fail(err, errlen, "frame mix '%s': a mix needs two sizes or more (one size: -l %u)", s,
			    m->n ? m->size[0] : 64);
	unsigned g = 0, sum = 0;
	for (unsigned i = 0; i < m->n; i++)
		g = xp_gcd(m->weight[i], g);
	for (unsigned i = 0; i < m->n; i++) {
		m->weight[i] /= g;
		sum += m->weight[i];
	}
	if (sum > XP_MIX_MAX_PATTERN)
		return fail(err, errlen, "frame mix '%s': the weights add up to %u, at most %u (after dividing by "
			    "their common divisor)", s, sum, XP_MIX_MAX_PATTERN);
	m->plen = sum;
	make_pattern(m);
	return 0;
}

double xp_mix_mean(const struct xp_mix *m)
{
	double b = 0;
	for (unsigned i = 0; i < m->n; i++)
		b += (double)m->size[i] * m->weight[i];
	return m->plen ? b / m->plen : 0;
}

uint64_t xp_mix_bytes(const struct xp_mix *m, uint64_t k)
{
	if (!m->plen)
		return 0;
	uint64_t cycle = 0, part = 0, rest = k % m->plen;
	for (unsigned i = 0; i < m->plen; i++) {
		uint64_t l = m->size[m->pattern[i]] - 4;
		cycle += l;
		if (i < rest)
			part += l;
	}
	return k / m->plen * cycle + part;
}

unsigned xp_mix_min(const struct xp_mix *m)
{
	unsigned v = m->n ? m->size[0] : 0;
	for (unsigned i = 1; i < m->n; i++)
		v = m->size[i] < v ? m->size[i] : v;
	return v;
}

unsigned xp_mix_max(const struct xp_mix *m)
{
	unsigned v = 0;
	for (unsigned i = 0; i < m->n; i++)
		v = m->size[i] > v ? m->size[i] : v;
	return v;
}

const char *xp_mix_spec(const struct xp_mix *m, char *buf, size_t len)
{
	size_t o = 0;
	if (len)
		buf[0] = '\0';
	for (unsigned i = 0; i < m->n && o < len; i++) {
		int w = snprintf(buf + o, len - o, "%s%u:%u", i ? "," : "", m->size[i], m->weight[i]);
		if (w < 0)
			break;
		o += (size_t)w;
	}
	return buf;
}

const char *xp_mix_name(const struct xp_mix *m, char *buf, size_t len)
{
	char spec[160];
	xp_mix_spec(m, spec, sizeof(spec));
	if (m->imix)
		snprintf(buf, len, "imix (%s)", spec);
	else
		snprintf(buf, len, "%s", spec);
	return buf;
}

double xp_mix_l1_bps(const struct xp_mix *m, double pps)
{
	/* Each frame also costs preamble + SFD (8) and the gap (12) on the line. */
	return pps * (xp_mix_mean(m) + 20) * 8;
}

double xp_mix_l2_bps(const struct xp_mix *m, double pps)
{
	return pps * xp_mix_mean(m) * 8;
}
