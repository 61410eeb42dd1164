/* A flow's field patterns; see flow_pat.h. Pure functions, no syscalls. */
#include "frame/flow_pat.h"

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

struct field_info {
	const char *v4, *v6; /* names: OTG's header.field (v6 NULL: the same) */
	unsigned width;      /* 0: the address family's */
	unsigned max;        /* largest allowed value when below 2^width - 1, else 0 */
};

static const struct field_info FIELDS[XP_FF_COUNT] = {
	[XP_FF_DST_MAC]    = { "ethernet.dst", NULL, 48, 0 },
	[XP_FF_SRC_MAC]    = { "ethernet.src", NULL, 48, 0 },
	[XP_FF_VLAN0_PCP]  = { "vlan[0].priority", NULL, 3, 0 },
	[XP_FF_VLAN0_DEI]  = { "vlan[0].cfi", NULL, 1, 0 },
	[XP_FF_VLAN0_VID]  = { "vlan[0].id", NULL, 12, XP_VID_MAX },
	[XP_FF_VLAN1_PCP]  = { "vlan[1].priority", NULL, 3, 0 },
	[XP_FF_VLAN1_DEI]  = { "vlan[1].cfi", NULL, 1, 0 },
	[XP_FF_VLAN1_VID]  = { "vlan[1].id", NULL, 12, XP_VID_MAX },
	[XP_FF_SRC]        = { "ipv4.src", "ipv6.src", 0, 0 },
	[XP_FF_DST]        = { "ipv4.dst", "ipv6.dst", 0, 0 },
	[XP_FF_DSCP]       = { "ipv4.priority.dscp.phb", "ipv6.traffic_class (DSCP)", 6, 0 },
	[XP_FF_ECN]        = { "ipv4.priority.dscp.ecn", "ipv6.traffic_class (ECN)", 2, 0 },
	[XP_FF_TTL]        = { "ipv4.time_to_live", "ipv6.hop_limit", 8, 0 },
	[XP_FF_FLOW_LABEL] = { "ipv6.flow_label", NULL, 20, 0 },
	[XP_FF_SPORT]      = { "src_port", NULL, 16, 0 },
	[XP_FF_DPORT]      = { "dst_port", NULL, 16, 0 },
};

unsigned xp_flow_field_width(const struct xp_flow_hdr *base, enum xp_flow_field ff)
{
	if (ff >= XP_FF_COUNT)
		return 0;
	if (FIELDS[ff].width)
		return FIELDS[ff].width;
	return base->src.family == AF_INET6 ? 128 : 32;
}

const char *xp_flow_field_name(const struct xp_flow_hdr *base, enum xp_flow_field ff)
{
	static const char *const tcp[] = { "tcp.src_port", "tcp.dst_port" };
	static const char *const udp[] = { "udp.src_port", "udp.dst_port" };

	if (ff >= XP_FF_COUNT)
		return "?";
	if (ff == XP_FF_SPORT || ff == XP_FF_DPORT)
		return (base->l4_proto == IPPROTO_UDP ? udp : tcp)[ff - XP_FF_SPORT];
	if (base->src.family == AF_INET6 && FIELDS[ff].v6)
		return FIELDS[ff].v6;
	return FIELDS[ff].v4;
}

/* The base's value of a field. */
static xp_u128 base_value(const struct xp_flow_hdr *h, enum xp_flow_field ff)
{
	const struct xp_addr *a;

	switch (ff) {
	case XP_FF_DST_MAC: return xp_u128_from_bytes(h->dst_mac, 6);
	case XP_FF_SRC_MAC: return xp_u128_from_bytes(h->src_mac, 6);
	case XP_FF_VLAN0_PCP: return h->vlan[0].pcp;
	case XP_FF_VLAN0_DEI: return h->vlan[0].dei;
	case XP_FF_VLAN0_VID: return h->vlan[0].vid;
	case XP_FF_VLAN1_PCP: return h->vlan[1].pcp;
	case XP_FF_VLAN1_DEI: return h->vlan[1].dei;
	case XP_FF_VLAN1_VID: return h->vlan[1].vid;
	case XP_FF_SRC:
	case XP_FF_DST:
		a = ff == XP_FF_SRC ? &h->src : &h->dst;
		if (a->family == AF_INET6)
			return xp_u128_from_bytes(a->v6.s6_addr, 16);
		return xp_u128_from_bytes((const uint8_t *)&a->v4, 4);
	case XP_FF_DSCP: return h->dscp;
	case XP_FF_ECN: return h->ecn;
	case XP_FF_TTL: return h->ttl;
	case XP_FF_FLOW_LABEL: return h->flow_label;
	case XP_FF_SPORT: return h->sport;
	case XP_FF_DPORT: return h->dport;
	default: return 0;
	}
}

static void set_value(struct xp_flow_hdr *h, enum xp_flow_field ff, xp_u128 v)
{
	struct xp_addr *a;

	switch (ff) {
	case XP_FF_DST_MAC: xp_u128_to_bytes(v, h->dst_mac, 6); break;
	case XP_FF_SRC_MAC: xp_u128_to_bytes(v, h->src_mac, 6); break;
	case XP_FF_VLAN0_PCP: h->vlan[0].pcp = (uint8_t)v; break;
	case XP_FF_VLAN0_DEI: h->vlan[0].dei = (uint8_t)v; break;
	case XP_FF_VLAN0_VID: h->vlan[0].vid = (uint16_t)v; break;
	case XP_FF_VLAN1_PCP: h->vlan[1].pcp = (uint8_t)v; break;
	case XP_FF_VLAN1_DEI: h->vlan[1].dei = (uint8_t)v; break;
	case XP_FF_VLAN1_VID: h->vlan[1].vid = (uint16_t)v; break;
	case XP_FF_SRC:
	case XP_FF_DST:
		a = ff == XP_FF_SRC ? &h->src : &h->dst;
		if (a->family == AF_INET6)
			xp_u128_to_bytes(v, a->v6.s6_addr, 16);
		else
			xp_u128_to_bytes(v, (uint8_t *)&a->v4, 4);
		break;
	case XP_FF_DSCP: h->dscp = (uint8_t)v; break;
	case XP_FF_ECN: h->ecn = (uint8_t)v; break;
	case XP_FF_TTL: h->ttl = (uint8_t)v; break;
	case XP_FF_FLOW_LABEL: h->flow_label = (uint32_t)v; break;
	case XP_FF_SPORT: h->sport = (uint16_t)v; break;
	case XP_FF_DPORT: h->dport = (uint16_t)v; break;
	default: break;
	}
}

void xp_flow_pat_init(struct xp_flow_pat *fp, const struct xp_flow_hdr *base)
{
	memset(fp, 0, sizeof(*fp));
	fp->base = *base;
	for (unsigned ff = 0; ff < XP_FF_COUNT; ff++)
		fp->f[ff] = xp_pattern_fixed((uint8_t)xp_flow_field_width(base, ff), base_value(base, ff));
}

static __thread char err_buf[200];

/* Does pattern p ever give a value above max? Its field is narrow (these
 * are 12 bits at most), so an increment's cycle is walked: it repeats
 * after 2^width steps whatever count says. */
static int exceeds(const struct xp_pattern *p, unsigned max)
{
	uint64_t n;

	switch (p->kind) {
	case XP_PAT_VALUE:
		return p->value > max;
	case XP_PAT_VALUES:
		for (uint32_t i = 0; i < p->nvalues; i++)
			if (p->values[i] > max)
				return 1;
		return 0;
	case XP_PAT_RANDOM:
		return p->max > max;
	default:
		n = p->count < (1ull << p->width) ? p->count : (1ull << p->width);
		for (uint64_t k = 0; k < n; k++)
			if (xp_pattern_at(p, k) > max)
				return 1;
		return 0;
	}
}

int xp_flow_pat_check(const struct xp_flow_pat *fp, const char **err)
{
	const char *why;

	if (xp_flow_hdr_check(&fp->base, err))
		return -1;
	for (unsigned ff = 0; ff < XP_FF_COUNT; ff++) {
		const struct xp_pattern *p = &fp->f[ff];
		unsigned w = xp_flow_field_width(&fp->base, ff);
		const char *name = xp_flow_field_name(&fp->base, ff);

		/* Tags the flow does not have: their fields must stay unset. */
		if ((ff >= XP_FF_VLAN0_PCP && ff <= XP_FF_VLAN0_VID && fp->base.nvlan < 1) ||
		    (ff >= XP_FF_VLAN1_PCP && ff <= XP_FF_VLAN1_VID && fp->base.nvlan < 2) ||
		    (ff == XP_FF_FLOW_LABEL && fp->base.src.family != AF_INET6)) {
			if (p->kind != XP_PAT_VALUE || p->value) {
				snprintf(err_buf, sizeof(err_buf), "%s: the flow has no such header", name);
				goto out;
			}
			continue;
		}
		if (p->width != w) {
			snprintf(err_buf, sizeof(err_buf), "%s: pattern of %u bits for a field of %u", name,
				 p->width, w);
			goto out;
		}
		if (xp_pattern_check(p, &why)) {
			snprintf(err_buf, sizeof(err_buf), "%s: %s", name, why);
			goto out;
		}
		if (FIELDS[ff].max && exceeds(p, FIELDS[ff].max)) {
			snprintf(err_buf, sizeof(err_buf), "%s: a value above %u (reserved)", name, FIELDS[ff].max);
			goto out;
		}
	}
	return 0;
out:
	if (err)
		*err = err_buf;
	return -1;
}

void xp_flow_pat_at(const struct xp_flow_pat *fp, uint64_t n, struct xp_flow_hdr *h)
{
	*h = fp->base;
	for (unsigned ff = 0; ff < XP_FF_COUNT; ff++) {
		/* Every field, the fixed ones too: a caller may have changed a
		 * VALUE pattern's value after xp_flow_pat_init. */
		set_value(h, ff, xp_pattern_at(&fp->f[ff], n));
	}
}
