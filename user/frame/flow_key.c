/*
 * The key of flows without stamps: see frame/flow_key.h.
 */
#include "frame/flow_key.h"
#include "util/units.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* The fields xp_key_choose tries, in its order, and the pattern of each. */
static const struct {
	uint32_t bit;
	enum xp_flow_field ff;
} cand_fields[] = {
	{ XP_KEY_DSCP, XP_FF_DSCP },
	{ XP_KEY_SPORT, XP_FF_SPORT },
	{ XP_KEY_DPORT, XP_FF_DPORT },
	{ XP_KEY_SRC, XP_FF_SRC },
};
#define NCAND (sizeof(cand_fields) / sizeof(cand_fields[0]))

const char *xp_key_field_name(uint32_t bit)
{
	switch (bit) {
	case XP_KEY_VID0: return "vid0";
	case XP_KEY_VID1: return "vid1";
	case XP_KEY_DSCP: return "dscp";
	case XP_KEY_SPORT: return "sport";
	case XP_KEY_DPORT: return "dport";
	case XP_KEY_SRC: return "src";
	default: return NULL;
	}
}

/* The source address as the server folds it: IPv4 as it is on the wire,
 * IPv6 its four 32-bit words XORed (bpf/server.bpf.c's xp_key_count). */
static uint32_t src_fold(const struct xp_flow_hdr *base, xp_u128 v)
{
	uint8_t b[16];
	uint32_t w[4];
	if (base->src.family == AF_INET6) {
		xp_u128_to_bytes(v, b, 16);
		memcpy(w, b, 16);
		return w[0] ^ w[1] ^ w[2] ^ w[3];
	}
	xp_u128_to_bytes(v, b, 4);
	memcpy(w, b, 4);
	return w[0];
}

void xp_key_of(const struct xp_flow_pat *fp, uint64_t n, uint32_t mask, struct xp_flow_key *k)
{
	memset(k, 0, sizeof(*k));
	if (mask & XP_KEY_VID0)
		k->vid[0] = fp->base.nvlan >= 1 ? (uint16_t)xp_pattern_at(&fp->f[XP_FF_VLAN0_VID], n) : XP_KEY_NO_VID;
	if (mask & XP_KEY_VID1)
		k->vid[1] = fp->base.nvlan >= 2 ? (uint16_t)xp_pattern_at(&fp->f[XP_FF_VLAN1_VID], n) : XP_KEY_NO_VID;
	if (mask & XP_KEY_DSCP)
		k->dscp = (uint8_t)xp_pattern_at(&fp->f[XP_FF_DSCP], n);
	if (mask & XP_KEY_SPORT)
		k->sport = (uint16_t)xp_pattern_at(&fp->f[XP_FF_SPORT], n);
	if (mask & XP_KEY_DPORT)
		k->dport = (uint16_t)xp_pattern_at(&fp->f[XP_FF_DPORT], n);
	if (mask & XP_KEY_SRC)
		k->src = src_fold(&fp->base, xp_pattern_at(&fp->f[XP_FF_SRC], n));
}

static int key_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct xp_flow_key));
}

/* The pattern of key field bit in fp. */
static const struct xp_pattern *pat_of(const struct xp_flow_pat *fp, uint32_t bit)
{
	for (unsigned c = 0; c < NCAND; c++)
		if (cand_fields[c].bit == bit)
			return &fp->f[cand_fields[c].ff];
	return NULL;
}

/* fp's distinct keys under mask into out (sorted), at most cap: their
 * count, or -1 when there are more or the fields repeat together only
 * after more than XP_KEY_MAX_PERIOD frames. out holds XP_KEY_MAX_PERIOD. */
static int flow_keys(const struct xp_flow_pat *fp, uint32_t mask, struct xp_flow_key *out, unsigned cap)
{
	uint64_t L = 1;
	for (unsigned c = 0; c < NCAND; c++) {
		if (!(mask & cand_fields[c].bit))
			continue;
		uint64_t p = xp_pattern_period(pat_of(fp, cand_fields[c].bit));
		if (p > XP_KEY_MAX_PERIOD)
			return -1;
		L = L / xp_gcd(L, p) * p;
		if (L > XP_KEY_MAX_PERIOD)
			return -1;
	}
	for (uint64_t n = 0; n < L; n++)
		xp_key_of(fp, n, mask, &out[n]);
	qsort(out, (size_t)L, sizeof(*out), key_cmp);
	unsigned d = 0;
	for (uint64_t n = 0; n < L; n++)
		if (!d || key_cmp(&out[d - 1], &out[n]))
			out[d++] = out[n];
	return d > cap ? -1 : (int)d;
}

struct owned {
	struct xp_flow_key k;
	uint16_t flow;
};

static int owned_cmp(const void *a, const void *b)
{
	const struct owned *x = a, *y = b;
	int c = key_cmp(&x->k, &y->k);
	return c ? c : (x->flow > y->flow) - (x->flow < y->flow);
}

/* The fields of mask as "a, b and c" into buf. */
static const char *fields_str(uint32_t mask, char *buf, size_t len)
{
	unsigned n = 0, k = 0;
	for (unsigned c = 0; c < NCAND; c++)
		n += !!(mask & cand_fields[c].bit);
	buf[0] = '\0';
	for (unsigned c = 0; c < NCAND; c++) {
		if (!(mask & cand_fields[c].bit))
			continue;
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "%s%s", k == 0 ? "" : k + 1 == n ? " and " : ", ",
			 xp_key_field_name(cand_fields[c].bit));
		k++;
	}
	return buf;
}

/* k's values of mask's fields as "46, 20000" into buf. */
static const char *values_str(const struct xp_flow_pat *fp, const struct xp_flow_key *k, uint32_t mask, char *buf,
			      size_t len)
{
	buf[0] = '\0';
	for (unsigned c = 0; c < NCAND; c++) {
		uint32_t b = cand_fields[c].bit;
		size_t l = strlen(buf);
		if (!(mask & b))
			continue;
		const char *sep = l ? ", " : "";
		if (b == XP_KEY_DSCP)
			snprintf(buf + l, len - l, "%s%u", sep, k->dscp);
		else if (b == XP_KEY_SPORT)
			snprintf(buf + l, len - l, "%s%u", sep, k->sport);
		else if (b == XP_KEY_DPORT)
			snprintf(buf + l, len - l, "%s%u", sep, k->dport);
		else if (fp->base.src.family == AF_INET6)
			snprintf(buf + l, len - l, "%ssource fold 0x%08x", sep, k->src);
		else {
			const uint8_t *a = (const uint8_t *)&k->src;
			snprintf(buf + l, len - l, "%s%u.%u.%u.%u", sep, a[0], a[1], a[2], a[3]);
		}
	}
	return buf;
}

enum try_res { TRY_OK, TRY_OVERLAP, TRY_TOO_MANY };

/*
 * The picked flows' keys under mask into plan, each flow at most cap keys:
 * TRY_OK, TRY_TOO_MANY (*a the flow, or nflows: all together too many), or
 * TRY_OVERLAP (*a, *b the flows, *k a key both take). scratch holds
 * XP_KEY_MAX_PERIOD keys, all XP_FLOW_ENTRIES + XP_KEY_MAX_PERIOD.
 */
static enum try_res try_mask(const struct xp_flow_pat *const *fps, const bool *pick, unsigned nflows, uint32_t mask,
			     unsigned cap, struct xp_flow_key *scratch, struct owned *all, unsigned all_cap,
			     struct xp_key_plan *plan, unsigned *a, unsigned *b, struct xp_flow_key *k)
{
	unsigned n = 0;
	for (unsigned f = 0; f < nflows; f++) {
		if (!pick[f])
			continue;
		int d = flow_keys(fps[f], mask, scratch, cap);
		if (d < 0) {
			*a = f;
			return TRY_TOO_MANY;
		}
		if (n + (unsigned)d > all_cap) {
			*a = nflows;
			return TRY_TOO_MANY;
		}
		for (int i = 0; i < d; i++)
			all[n++] = (struct owned){ .k = scratch[i], .flow = (uint16_t)f };
	}
	qsort(all, n, sizeof(*all), owned_cmp);
	for (unsigned i = 1; i < n; i++) {
		if (!key_cmp(&all[i - 1].k, &all[i].k)) {
			*a = all[i - 1].flow;
			*b = all[i].flow;
			*k = all[i].k;
			return TRY_OVERLAP;
		}
	}
	if (plan) {
		plan->mask = XP_KEY_ON | mask;
		plan->n = n;
		for (unsigned i = 0; i < n; i++) {
			plan->key[i] = all[i].k;
			plan->flow[i] = all[i].flow;
		}
	}
	return TRY_OK;
}

int xp_key_choose(const struct xp_flow_pat *const *fps, const bool *pick, const char *const *names,
		  unsigned nflows, struct xp_key_plan *plan, char *err, size_t errlen)
{
	memset(plan, 0, sizeof(*plan));
	unsigned npick = 0;
	for (unsigned f = 0; f < nflows; f++)
		npick += pick[f];
	if (!npick)
		return 0;
	/* The candidates: no picked flow has the field random or with more values than a flow may have keys. */
	uint32_t cand[NCAND];
	unsigned ncand = 0;
	for (unsigned c = 0; c < NCAND; c++) {
		bool ok = true;
		for (unsigned f = 0; f < nflows && ok; f++) {
			const struct xp_pattern *p = &fps[f]->f[cand_fields[c].ff];
			ok = !pick[f] || (p->kind != XP_PAT_RANDOM && xp_pattern_period(p) <= XP_KEY_MAX_PER_FLOW);
		}
		if (ok)
			cand[ncand++] = cand_fields[c].bit;
	}
	struct xp_flow_key *scratch = malloc(XP_KEY_MAX_PERIOD * sizeof(*scratch));
	struct owned *all = malloc(((size_t)XP_FLOW_ENTRIES + XP_KEY_MAX_PERIOD) * sizeof(*all));
	if (!scratch || !all) {
		free(scratch);
		free(all);
		snprintf(err, errlen, "out of memory choosing the flows' keys");
		return -1;
	}
	unsigned a = 0, b = 0;
	struct xp_flow_key k;
	int rc = -1;
	/* Fewest fields first; among as many, the earlier fields first (subsets
	 * as bit sets over cand[], in increasing order, within each size). */
	for (unsigned size = 0; size <= ncand && rc; size++) {
		for (unsigned s = 0; s < (1u << ncand) && rc; s++) {
			if ((unsigned)__builtin_popcount(s) != size)
				continue;
			uint32_t mask = 0;
			for (unsigned c = 0; c < ncand; c++)
				if (s & (1u << c))
					mask |= cand[c];
			if (try_mask(fps, pick, nflows, mask, XP_KEY_MAX_PER_FLOW, scratch, all, XP_FLOW_ENTRIES, plan,
				     &a, &b, &k) == TRY_OK)
				rc = 0;
		}
	}
	if (rc) {
		/* Why not: with every candidate field and no bound but the period's, two flows that
		 * still meet cannot be told apart by any of them; else the bound was in the way. */
		uint32_t full = 0;
		char fs[64], vs[128];
		for (unsigned c = 0; c < ncand; c++)
			full |= cand[c];
		enum try_res r = try_mask(fps, pick, nflows, full, XP_KEY_MAX_PERIOD, scratch, all,
					  XP_FLOW_ENTRIES + XP_KEY_MAX_PERIOD, NULL, &a, &b, &k);
		if (r == TRY_OVERLAP && full)
			snprintf(err, errlen, "flows \"%s\" and \"%s\" have the same %s (%s): without stamps the server "
				 "cannot tell them apart; give them stamps or a field of their own", names[a], names[b],
				 fields_str(full, fs, sizeof(fs)), values_str(fps[a], &k, full, vs, sizeof(vs)));
		else if (r == TRY_OVERLAP)
			snprintf(err, errlen, "flows \"%s\" and \"%s\" cannot be told apart without stamps: the server "
				 "reads dscp, sport, dport and src, and in the flows without stamps each is random or "
				 "takes more than %u values (VLAN IDs are not read); give them stamps", names[a],
				 names[b], XP_KEY_MAX_PER_FLOW);
		else
			snprintf(err, errlen, "without stamps the server counts a flow by at most %u combinations of "
				 "the fields that tell it apart (%s), repeating within %u frames, and %u in all: %s%s%s "
				 "takes more; give it stamps or fewer values", XP_KEY_MAX_PER_FLOW,
				 full ? fields_str(full, fs, sizeof(fs)) : "none", XP_KEY_MAX_PERIOD, XP_FLOW_ENTRIES,
				 a < nflows ? "flow \"" : "the flows together", a < nflows ? names[a] : "",
				 a < nflows ? "\"" : "");
		memset(plan, 0, sizeof(*plan));
	}
	free(scratch);
	free(all);
	return rc;
}
