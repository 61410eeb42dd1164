/*
 * Issue 26 on the command line: --flows FILE (the Open Traffic Generator's
 * flows, spec/otg_flows.h) and the shortcuts for one flow (--vlan, --dscp,
 * --ttl, --src, --dst). The handlers keep what was typed; once every
 * option is read, validate.c applies the rules and makes the test's
 * traffic of them (the peer's family and -u may come after a shortcut):
 * xp_cli_flow_shortcut here, or the flow file's reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "cli/flow_opts.h"
#include "cli/handlers.h"

#define TCP_ACK_PSH 0x18u /* a data segment's flags, as one stream's frames */

int opt_flows(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	if (!*arg || strlen(arg) >= sizeof(o->flow.file))
		return xp_cli_fail(err, errlen, "--flows takes a file name (an Open Traffic Generator config, JSON)");
	snprintf(o->flow.file, sizeof(o->flow.file), "%s", arg);
	return 0;
}

static int parse_num(const char *opt, const char *s, unsigned long lo, unsigned long hi, const char *what,
		     unsigned *out, char *err, size_t errlen)
{
	char *end;
	unsigned long v;

	if (*s < '0' || *s > '9')
		return xp_cli_fail(err, errlen, "%s %s: not a number (%s is %lu..%lu)", opt, s, what, lo, hi);
	v = strtoul(s, &end, 10);
	if (*end || v < lo || v > hi)
		return xp_cli_fail(err, errlen, "%s %s: %s is %lu..%lu", opt, s, what, lo, hi);
	*out = (unsigned)v;
	return 0;
}

/* --vlan VID or OUTER,INNER (QinQ: an 802.1ad S-tag outside an 802.1Q C-tag). */
int opt_vlan(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	char buf[64], *inner;

	if (strlen(arg) >= sizeof(buf))
		return xp_cli_fail(err, errlen, "--vlan %s: a VID or two (QinQ: OUTER,INNER), each 0..4094", arg);
	snprintf(buf, sizeof(buf), "%s", arg);
	inner = strchr(buf, ',');
	if (inner)
		*inner++ = '\0';
	if (inner && strchr(inner, ','))
		return xp_cli_fail(err, errlen, "--vlan %s: one VID or two (QinQ: OUTER,INNER)", arg);
	o->flow.nvlan = 0;
	for (const char *v = buf; v; v = inner, inner = NULL) {
		char *end;
		unsigned long vid = strtoul(v, &end, 10);
		if (*v < '0' || *v > '9' || *end || vid > 4095)
			return xp_cli_fail(err, errlen, "--vlan %s: a VID is 0..4094 (two for QinQ: OUTER,INNER)", arg);
		if (vid == 4095)
			return xp_cli_fail(err, errlen, "--vlan %s: VID 4095 is reserved (0..4094)", arg);
		o->flow.vid[o->flow.nvlan++] = (unsigned)vid;
	}
	return 0;
}

int opt_dscp(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_num("--dscp", arg, 0, 63, "DSCP", &o->flow.dscp, err, errlen);
}

int opt_ttl(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	return parse_num("--ttl", arg, 1, 255, "the TTL (IPv6: hop limit)", &o->flow.ttl, err, errlen);
}

/* ADDR or ADDR-ADDR: lo and the count of addresses (1..2^32-1). */
static int addr_range(const char *opt, const char *s, struct xp_addr *lo, uint32_t *count, char *err, size_t errlen)
{
	char buf[128], *dash;
	struct xp_addr hi;

	if (strlen(s) >= sizeof(buf))
		return xp_cli_fail(err, errlen, "%s %s: an address or a range ADDR-ADDR", opt, s);
	snprintf(buf, sizeof(buf), "%s", s);
	dash = strchr(buf, '-');
	if (dash)
		*dash++ = '\0';
	if (xp_addr_parse(buf, lo) || (dash && xp_addr_parse(dash, &hi)))
		return xp_cli_fail(err, errlen, "%s %s: an IPv4 or IPv6 address, or a range ADDR-ADDR", opt, s);
	*count = 1;
	if (!dash)
		return 0;
	if (hi.family != lo->family)
		return xp_cli_fail(err, errlen, "%s %s: both ends of the range of one family", opt, s);
	xp_u128 a = lo->family == AF_INET6 ? xp_u128_from_bytes(lo->v6.s6_addr, 16) :
					     xp_u128_from_bytes((const uint8_t *)&lo->v4, 4);
	xp_u128 b = hi.family == AF_INET6 ? xp_u128_from_bytes(hi.v6.s6_addr, 16) :
					    xp_u128_from_bytes((const uint8_t *)&hi.v4, 4);
	if (b < a)
		return xp_cli_fail(err, errlen, "%s %s: the range must rise", opt, s);
	if (b - a >= UINT32_MAX)
		return xp_cli_fail(err, errlen, "%s %s: at most %u addresses", opt, s, UINT32_MAX);
	*count = (uint32_t)(b - a + 1);
	return 0;
}

int opt_src(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	struct xp_addr a;
	uint32_t n;

	if (addr_range("--src", arg, &a, &n, err, errlen))
		return -1;
	snprintf(o->flow.src, sizeof(o->flow.src), "%s", arg);
	return 0;
}

int opt_dst(struct xp_opts *o, const char *arg, char *err, size_t errlen)
{
	struct xp_addr a;
	uint32_t n;

	if (addr_range("--dst", arg, &a, &n, err, errlen))
		return -1;
	snprintf(o->flow.dst, sizeof(o->flow.dst), "%s", arg);
	return 0;
}

/* An address shortcut into the flow: base and an increment over the range. */
static int put_addr(const char *opt, const char *typed, int peer_fam, struct xp_addr *dst, struct xp_pattern *p,
		    char *err, size_t errlen)
{
	uint32_t n;

	if (addr_range(opt, typed, dst, &n, err, errlen))
		return -1;
	if (peer_fam && dst->family != peer_fam)
		return xp_cli_fail(err, errlen, "%s %s: IPv%c, the server -c is IPv%c", opt, typed,
				   dst->family == AF_INET6 ? '6' : '4', peer_fam == AF_INET6 ? '6' : '4');
	unsigned w = dst->family == AF_INET6 ? 128 : 32;
	xp_u128 v = w == 128 ? xp_u128_from_bytes(dst->v6.s6_addr, 16) : xp_u128_from_bytes((const uint8_t *)&dst->v4, 4);
	memset(p, 0, sizeof(*p));
	p->width = (uint8_t)w;
	p->value = v;
	p->kind = n > 1 ? XP_PAT_INCREMENT : XP_PAT_VALUE;
	p->step = 1;
	p->count = n;
	return 0;
}

/* The one flow of the shortcuts: traffic[0]'s headers, the rest filled from the path (hdr_auto). */
int xp_cli_flow_shortcut(struct xp_opts *o, unsigned given, char *err, size_t errlen)
{
	static struct xp_flow_pat fp;
	struct xp_stream *t = &o->spec.traffic[0];
	struct xp_flow_hdr b;
	struct xp_pattern psrc, pdst;
	struct xp_addr peer;
	int peer_fam = o->spec.family;

	if (!peer_fam && !xp_addr_parse(o->spec.host, &peer))
		peer_fam = peer.family;
	memset(&b, 0, sizeof(b));
	b.nvlan = (uint8_t)o->flow.nvlan;
	for (unsigned i = 0; i < o->flow.nvlan; i++) {
		b.vlan[i].vid = (uint16_t)o->flow.vid[i];
		b.vlan[i].tpid = o->flow.nvlan == 2 && i == 0 ? XP_TPID_8021AD : XP_TPID_8021Q;
	}
	b.dscp = (given & XP_FLOW_GIVEN_DSCP) ? (uint8_t)o->flow.dscp : 0;
	b.ttl = (given & XP_FLOW_GIVEN_TTL) ? (uint8_t)o->flow.ttl : 64;
	b.l4_proto = t->udp ? IPPROTO_UDP : IPPROTO_TCP;
	if (!t->udp)
		b.tcp_flags = TCP_ACK_PSH;
	t->hdr_auto = XP_HDR_AUTO_DST_MAC | XP_HDR_AUTO_SRC_MAC | XP_HDR_AUTO_SPORT | XP_HDR_AUTO_DPORT;
	if (o->flow.src[0] && put_addr("--src", o->flow.src, peer_fam, &b.src, &psrc, err, errlen))
		return -1;
	if (o->flow.dst[0] && put_addr("--dst", o->flow.dst, peer_fam, &b.dst, &pdst, err, errlen))
		return -1;
	if (o->flow.src[0] && o->flow.dst[0] && b.src.family != b.dst.family)
		return xp_cli_fail(err, errlen, "--src %s and --dst %s: one family for both", o->flow.src, o->flow.dst);
	/* An address not given is the path's, of the family of the one given (else the peer's, at run time). */
	int fam = b.src.family ? b.src.family : b.dst.family ? b.dst.family : peer_fam;
	if (!o->flow.src[0]) {
		t->hdr_auto |= XP_HDR_AUTO_SRC;
		b.src.family = fam;
	}
	if (!o->flow.dst[0]) {
		t->hdr_auto |= XP_HDR_AUTO_DST;
		b.dst.family = fam;
	}
	xp_flow_pat_init(&fp, &b);
	if (o->flow.src[0])
		fp.f[XP_FF_SRC] = psrc;
	if (o->flow.dst[0])
		fp.f[XP_FF_DST] = pdst;
	t->hdr = fp;
	t->has_hdr = true;
	return 0;
}
