/* A flow's frames for one period of its patterns (engine/flow_table.h). */
#include <linux/types.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/lib/consts.h"
#include "bpf/lib/stamp.h"
#include "engine/flow_table.h"
#include "frame/flow_hdr.h"
#include "util/units.h"

unsigned xp_flow_size_at(const struct xp_engine_flow *f, uint64_t n)
{
	if (f->size_pat_set)
		return (unsigned)xp_pattern_at(&f->size_pat, n);
	if (f->mix.n)
		return f->mix.size[f->mix.pattern[n % f->mix.plen]];
	return f->frame_size;
}

/* lcm(a, b), or cap + 1 past cap (a, b >= 1). */
static uint64_t lcm_cap(uint64_t a, uint64_t b, uint64_t cap)
{
	if (a > cap || b > cap)
		return cap + 1;
	uint64_t l = a / xp_gcd(a, b) * b; /* both <= cap <= 2^32: no overflow */
	return l > cap ? cap + 1 : l;
}

uint64_t xp_flow_period(const struct xp_engine_flow *f, uint64_t cap)
{
	uint64_t p = 1;
	for (unsigned i = 0; i < XP_FF_COUNT; i++)
		p = lcm_cap(p, xp_pattern_period(&f->hdr.f[i]), cap);
	if (f->size_pat_set)
		p = lcm_cap(p, xp_pattern_period(&f->size_pat), cap);
	else if (f->mix.n)
		p = lcm_cap(p, f->mix.plen, cap);
	return p;
}

int xp_flow_table_build(const struct xp_engine_flow *f, uint64_t cap, bool stamps, struct xp_flow_table *t,
			char *err, size_t errlen)
{
	static __thread uint8_t buf[65536];
	memset(t, 0, sizeof(*t));
	t->period = xp_flow_period(f, cap);
	if (t->period > cap) {
		snprintf(err, errlen, "its headers and sizes repeat after more than %llu frames (the product of its "
			 "patterns' counts): shorten a pattern", (unsigned long long)cap);
		return -1;
	}
	t->e = calloc(t->period, sizeof(*t->e));
	if (!t->e) {
		snprintf(err, errlen, "out of memory for %llu frames", (unsigned long long)t->period);
		return -1;
	}
	t->seq_adv = f->hdr.base.l4_proto == IPPROTO_TCP && !(f->hdr.base.tcp_flags & XP_TCPF_SYN);
	t->seq0 = f->hdr.base.seq;
	for (uint64_t n = 0; n < t->period; n++) {
		struct xp_flow_hdr h;
		struct xp_flow_entry *en = &t->e[n];
		const char *ferr = NULL;
		unsigned size = xp_flow_size_at(f, n);
		xp_flow_pat_at(&f->hdr, n, &h);
		size_t len = frame_layout_hdr(&h, size, false, &en->lay, &ferr) ? 0
			     : frame_build_hdr(&h, size, false, 0, buf, sizeof(buf), &ferr);
		if (!len) {
			snprintf(err, errlen, "frame %llu (%u bytes): %s", (unsigned long long)n, size,
				 ferr ? ferr : "cannot be built");
			xp_flow_table_free(t);
			return -1;
		}
		/* The prefix must hold every header and the stamp with its tag. */
		if (en->lay.payload_off + XP_STAMP_BYTES + XP_STAMP_TAG_BYTES > XP_FLOW_PRE) {
			snprintf(err, errlen, "internal: %u bytes of headers", en->lay.payload_off);
			xp_flow_table_free(t);
			return -1;
		}
		memcpy(en->pre, buf, len < XP_FLOW_PRE ? len : XP_FLOW_PRE);
		en->seq_rel = (uint32_t)t->period_payload;
		t->period_payload += en->lay.payload_len;
		en->place = XP_STAMP_NONE;
		if (stamps && f->stamps && !(en->lay.payload_off & 1)) {
			en->place = (uint8_t)xp_stamp_place_of(h.src.family == AF_INET6, en->lay.payload_len);
			if (en->place == XP_STAMP_NONE) {
				snprintf(err, errlen, "its %u-byte frames have no room for the stamp: give sizes from %u "
					 "up, or no stamps", size, size + XP_STAMP_BYTES);
				xp_flow_table_free(t);
				return -1;
			}
		}
	}
	return 0;
}

void xp_flow_table_free(struct xp_flow_table *t)
{
	free(t->e);
	t->e = NULL;
}
