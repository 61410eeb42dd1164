/*
 * A test's flows against the rules of a test (spec.h, xp_spec_check_flows):
 * whoever built them (a flow file, the one-flow shortcuts, a spec read back
 * from JSON), every flow's headers are checked field by field, sizes
 * against the headers, and rates across the flows.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "spec/spec.h"

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* How messages name a flow: by its name and its place in the flow file. */
static const char *flow_label(const struct xp_stream *t, unsigned i, char *buf, size_t len)
{
	if (t->name[0])
		snprintf(buf, len, "flow \"%s\" (flows[%u])", t->name, i);
	else
		snprintf(buf, len, "flows[%u]", i);
	return buf;
}

static void set_fixed(struct xp_flow_pat *fp, enum xp_flow_field ff, xp_u128 v)
{
	fp->f[ff] = xp_pattern_fixed((uint8_t)xp_flow_field_width(&fp->base, ff), v);
}

static void placeholder_addr(struct xp_addr *a, int family)
{
	memset(a, 0, sizeof(*a));
	a->family = family;
	if (family == AF_INET6)
		a->v6.s6_addr[15] = 1;
	else
		a->v4.s_addr = htonl(0xc6120001u); /* 198.18.0.1 */
}

/*
 * The flow's headers as the check sees them: the fields the client fills
 * at run time (hdr_auto) get a stand-in of the right kind, so that only
 * what the flow itself says is judged. The family of an address the
 * client fills is the one the headers name (a flow file's ipv4 or ipv6
 * header), else the peer's, else IPv4.
 */
static void resolve_auto(const struct xp_spec *s, const struct xp_stream *t, struct xp_flow_pat *fp)
{
	static const uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 1 };
	struct xp_addr peer;
	int fam = AF_INET;

	*fp = t->hdr;
	if (fp->base.src.family)
		fam = fp->base.src.family;
	else if (fp->base.dst.family)
		fam = fp->base.dst.family;
	else if (s->family)
		fam = s->family;
	else if (!xp_addr_parse(s->host, &peer))
		fam = peer.family;
	if (t->hdr_auto & XP_HDR_AUTO_DST_MAC) {
		memcpy(fp->base.dst_mac, mac, 6);
		set_fixed(fp, XP_FF_DST_MAC, xp_u128_from_bytes(mac, 6));
	}
	if (t->hdr_auto & XP_HDR_AUTO_SRC_MAC) {
		memcpy(fp->base.src_mac, mac, 6);
		set_fixed(fp, XP_FF_SRC_MAC, xp_u128_from_bytes(mac, 6));
	}
	if (t->hdr_auto & XP_HDR_AUTO_SRC) {
		placeholder_addr(&fp->base.src, fam);
		set_fixed(fp, XP_FF_SRC, 1);
	}
	if (t->hdr_auto & XP_HDR_AUTO_DST) {
		placeholder_addr(&fp->base.dst, fam);
		set_fixed(fp, XP_FF_DST, 1);
	}
	if (t->hdr_auto & XP_HDR_AUTO_SPORT) {
		fp->base.sport = t->cport_lo;
		set_fixed(fp, XP_FF_SPORT, t->cport_lo);
	}
	if (t->hdr_auto & XP_HDR_AUTO_DPORT) {
		fp->base.dport = t->port_lo;
		set_fixed(fp, XP_FF_DPORT, t->port_lo);
	}
}

/* The smallest and largest value a size pattern gives (a 16-bit field: an
 * increment's cycle is at most 65536 values, walked). */
static void pat_range(const struct xp_pattern *p, unsigned *lo, unsigned *hi)
{
	uint64_t n = xp_pattern_period(p);

	if (p->kind == XP_PAT_RANDOM) {
		*lo = (unsigned)p->min;
		*hi = (unsigned)p->max;
		return;
	}
	if (n > 65536)
		n = 65536;
	*lo = ~0u;
	*hi = 0;
	for (uint64_t k = 0; k < n; k++) {
		unsigned v = (unsigned)xp_pattern_at(p, k);
		*lo = v < *lo ? v : *lo;
		*hi = v > *hi ? v : *hi;
	}
}

struct flow_ctx {
	const char *label;
	const struct xp_flow_hdr *h;
};

/* One size of the flow against its headers. */
static int check_size(const struct flow_ctx *c, unsigned size, char *err, size_t errlen)
{
	struct frame_layout lay;
	const char *why;

	if (size < XP_FRAME_SIZE_MIN || size > XP_FRAME_SIZE_MAX)
		return fail(err, errlen, "%s: size: frame size %u is outside %u..%u", c->label, size,
			    XP_FRAME_SIZE_MIN, XP_FRAME_SIZE_MAX);
	if (frame_layout_hdr(c->h, size, false, &lay, &why))
		return fail(err, errlen, "%s: size: %s", c->label, why);
	return 0;
}

static int check_one(const struct xp_spec *s, unsigned i, char *err, size_t errlen)
{
	static struct xp_flow_pat fp; /* ~10 KB: not on a caller's stack */
	const struct xp_stream *t = &s->traffic[i];
	struct xp_flow_hdr h;
	struct xp_addr peer;
	const char *why;
	char label[128];

	flow_label(t, i, label, sizeof(label));
	if (t->size_pat_set && t->size_pat.width != XP_SIZE_PAT_WIDTH)
		return fail(err, errlen, "%s: size pattern of %u bits, sizes are %u", label, t->size_pat.width,
			    XP_SIZE_PAT_WIDTH);
	if (t->size_pat_set && xp_pattern_check(&t->size_pat, &why))
		return fail(err, errlen, "%s: size: %s", label, why);
	if (!t->has_hdr)
		return 0;
	resolve_auto(s, t, &fp);
	if (xp_flow_pat_check(&fp, &why))
		return fail(err, errlen, "%s: %s", label, why);
	if ((fp.base.l4_proto == IPPROTO_UDP) != t->udp)
		return fail(err, errlen, "%s: the headers are %s but the stream is %s", label,
			    fp.base.l4_proto == IPPROTO_UDP ? "UDP" : "TCP", t->udp ? "UDP" : "TCP");
	/* The flows go to -c's server: an address of the other family could not. */
	int peer_fam = s->family;
	if (!peer_fam && !xp_addr_parse(s->host, &peer))
		peer_fam = peer.family;
	if (peer_fam && fp.base.src.family != peer_fam)
		return fail(err, errlen, "%s: %s is IPv%c, the server -c %s is IPv%c", label,
			    xp_flow_field_name(&fp.base, (t->hdr_auto & XP_HDR_AUTO_DST) ? XP_FF_SRC : XP_FF_DST),
			    fp.base.src.family == AF_INET6 ? '6' : '4', s->host, peer_fam == AF_INET6 ? '6' : '4');
	/* Sizes: the headers' length does not change from frame to frame (the tags are fixed per flow). */
	xp_flow_pat_at(&fp, 0, &h);
	const struct flow_ctx c = { label, &h };
	if (t->size_pat_set) {
		unsigned lo, hi;
		pat_range(&t->size_pat, &lo, &hi);
		if (check_size(&c, lo, err, errlen) || check_size(&c, hi, err, errlen))
			return -1;
	} else if (t->mix.n) {
		for (unsigned k = 0; k < t->mix.n && k < XP_MIX_MAX_SIZES; k++)
			if (check_size(&c, t->mix.size[k], err, errlen))
				return -1;
	} else if (t->frame_size && t->frame_size_set && check_size(&c, t->frame_size, err, errlen)) {
		/* Without -l the client picks the smallest frame that carries the headers and the stamp. */
		return -1;
	}
	return 0;
}

int xp_spec_check_flows(const struct xp_spec *s, char *err, size_t errlen)
{
	unsigned paced = 0;

	if (s->ntraffic > XP_SPEC_MAX_STREAMS)
		return fail(err, errlen, "flows: %u, a test has at most %u", s->ntraffic,
			    (unsigned)XP_SPEC_MAX_STREAMS);
	for (unsigned i = 0; i < s->ntraffic; i++) {
		if (check_one(s, i, err, errlen))
			return -1;
		paced += s->traffic[i].rate.unit != XP_RATE_NONE;
	}
	/* A flow without a rate goes as fast as it can and starves the paced
	 * ones of the sending threads: the shares would mean nothing. */
	if (paced && paced < s->ntraffic)
		return fail(err, errlen, "flows: %u of %u have a rate: give every flow a rate, or none", paced,
			    s->ntraffic);
	return 0;
}
