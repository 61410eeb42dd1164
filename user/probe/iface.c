/*
 * The interface's part of --probe: what its driver does with XDP (the
 * kernel's netdev family), whether BPF_PROG_RUN takes it as a live-frames
 * device, and which engine `auto` opens on it, through the same
 * xp_engine_open a test uses (so the answer is auto's, not a guess).
 */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "spec/defaults.h"
#include "engine/engine.h"
#include "net/netdev.h"
#include "loader/live_out.h"
#include "probe/probe.h"
#include "net/xdp_features.h"

/* "basic, redirect, ndo-xmit": the names the kernel's netdev family uses. */
static void act_names(uint64_t v, char *buf, size_t len)
{
	static const char *const names[] = { "basic", "redirect", "ndo-xmit", "xsk-zerocopy",
					     "hw-offload", "rx-sg", "ndo-xmit-sg" };
	buf[0] = '\0';
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (v & (1ull << i))
			snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", *buf ? ", " : "", names[i]);
	if (!*buf)
		snprintf(buf, len, "none");
}

/* What auto passed over, as "live: why; " for the reason line. */
struct passed {
	char *buf;
	size_t len;
};
static void note_passed(const char *name, const char *why, const char *next, void *arg)
{
	struct passed *p = arg;
	size_t n = strlen(p->buf);
	snprintf(p->buf + n, p->len - n, "%s%s passed over: %s", n ? "; " : "", name, why);
}

/* A stream test's engine configuration on this interface, as the client would make it
 * for a server on the link: only what create() looks at matters, nothing is sent. */
static void probe_cfg(const struct xp_netdev *l, int debug, struct xp_engine_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = XP_TEST_STREAM;
	c->ifindex = l->ifindex;
	snprintf(c->ifname, sizeof(c->ifname), "%s", l->name);
	c->sport_lo = XP_DEFAULT_CPORT_LO;
	c->sport_hi = XP_DEFAULT_CPORT_HI;
	c->dport_lo = XP_DEFAULT_PORT_LO;
	c->dport_hi = XP_DEFAULT_PORT_HI;
	c->parallel = 1;
	c->max_seconds = 1;
	c->debug = debug;
	c->frames.queues = 1;

	struct frame_spec *s = &c->frames.tmpl;
	memcpy(s->src_mac, l->mac, 6);
	memcpy(s->dst_mac, l->mac, 6);
	/* The interface's own IPv4 address if it has one, else benchmark-range ones
	 * (RFC 2544): the template is never sent. */
	struct xp_addr a[4];
	int n = xp_netdev_addrs(l->ifindex, AF_INET, a, 4);
	if (n > 0)
		s->src = a[0];
	else
		xp_addr_parse("198.18.0.1", &s->src);
	xp_addr_parse("198.18.0.2", &s->dst);
	c->server = s->dst;
	s->l4_proto = IPPROTO_TCP;
	s->sport = XP_DEFAULT_CPORT_LO;
	s->dport = XP_DEFAULT_PORT_LO;
	s->tcp_flags = 0x18;
	s->seq = s->ack = 1;
	s->frame_size = 64;
}

static void pick_auto(const struct xp_netdev *l, int debug, struct xp_probe_iface *p)
{
	struct xp_engine_cfg cfg;
	const struct xp_engine_ops *ops = NULL;
	struct xp_engine *e = NULL;
	char err[256] = "", why[384] = "";
	struct passed pw = { why, sizeof(why) };

	probe_cfg(l, debug, &cfg);
	int r = xp_engine_open_traced(XP_ENGINE_AUTO, &cfg, &ops, &e, err, sizeof(err), note_passed, &pw);
	if (r) {
		snprintf(p->auto_engine, sizeof(p->auto_engine), "none");
		snprintf(p->auto_reason, sizeof(p->auto_reason), "no engine auto tries can run: %s", why);
		return;
	}
	/* What the engine reports about itself: e.g. the AF_XDP engine's copy or zero-copy. */
	struct xp_engine_stats st = { 0 };
	ops->read(e, &st);
	snprintf(p->auto_engine, sizeof(p->auto_engine), "%s", ops->name);
	/* auto passes live over where the driver has no ndo-xmit (engine/devcheck.c), except
	 * on a veth, whose peer may get an XDP program (the server's) once a test starts:
	 * there the warning stays. */
	bool dropped = ops == &xp_engine_live && p->item[XP_PI_LIVE].state == XP_PROBE_NO;
	snprintf(p->auto_reason, sizeof(p->auto_reason), "%s%sthe %s engine opened on %s (mode %s)%s", why,
		 *why ? "; " : "", ops->name, l->name, st.mode ? st.mode : "-",
		 dropped ? "; but see live frames out: its frames would be dropped here, use --engine xsk" : "");
	ops->destroy(e);
}

int xp_probe_iface(const struct xp_probe_kernel *k, const char *ifname, int debug, struct xp_probe_iface *p,
		   char *err, size_t errlen)
{
	struct xp_netdev l;
	memset(p, 0, sizeof(*p));
	int r = xp_netdev_by_name(ifname, &l);
	if (r) {
		snprintf(err, errlen, r == -ENODEV ? "no interface %s in this network namespace (see ip link)"
						   : "cannot read interface %s: %s", ifname, strerror(-r));
		return r;
	}
	snprintf(p->name, sizeof(p->name), "%s", l.name);
	p->ifindex = l.ifindex;
	p->mtu = l.mtu;
	p->rx_queues = l.rx_queues;
	p->tx_queues = l.tx_queues;
	p->up = l.up;
	p->carrier = l.carrier;
	xp_probe_driver(l.name, p->driver, sizeof(p->driver));

	struct xp_xdp_features f;
	char ferr[256] = "", acts[160];
	xp_xdp_features_get(l.ifindex, &f, ferr, sizeof(ferr));
	act_names(f.xdp, acts, sizeof(acts));
	const char *drv = *p->driver ? p->driver : "its driver";
	const char *nofam = *ferr ? ferr : "the kernel has no netdev netlink family (Linux 6.3 or later has it)";

	struct xp_probe_item *it = &p->item[XP_PI_NATIVE];
	it->title = "native XDP";
	if (!f.known)
		xp_probe_set(it, "native_xdp", XP_PROBE_UNKNOWN, "%s: --xdp-mode native tells by trying", nofam);
	else if (f.xdp & XP_XDP_ACT_BASIC)
		xp_probe_set(it, "native_xdp", XP_PROBE_YES, "%s runs XDP in the driver (xdp-features: %s)", drv, acts);
	else
		xp_probe_set(it, "native_xdp", XP_PROBE_NO,
			     "%s has no XDP of its own (xdp-features: %s): the server falls back to skb mode", drv, acts);

	/* Live frames need the kernel's BPF_PROG_RUN mode, the device as its ingress
	 * device, and a driver that transmits XDP frames (ndo_xdp_xmit). */
	it = &p->item[XP_PI_LIVE];
	it->title = "live frames out";
	if (k->item[XP_PK_LIVE].state != XP_PROBE_YES) {
		xp_probe_set(it, "live_frames", k->item[XP_PK_LIVE].state, "%s", k->item[XP_PK_LIVE].reason);
	} else {
		struct xp_live_out lo;
		xp_live_out(l.ifindex, l.name, true, "--engine xsk", &lo);
		xp_probe_set(it, "live_frames", lo.state, "%s", lo.reason);
	}

	it = &p->item[XP_PI_ZC];
	it->title = "AF_XDP zero-copy";
	if (!f.known)
		xp_probe_set(it, "xsk_zerocopy", XP_PROBE_UNKNOWN, "%s", nofam);
	else if (f.xdp & XP_XDP_ACT_XSK_ZEROCOPY)
		xp_probe_set(it, "xsk_zerocopy", XP_PROBE_YES,
			     "%s binds AF_XDP sockets in zero-copy mode (xdp-features: xsk-zerocopy; at most %u "
			     "buffer%s per frame)", drv, f.zc_max_segs ? f.zc_max_segs : 1, f.zc_max_segs > 1 ? "s" : "");
	else
		xp_probe_set(it, "xsk_zerocopy", XP_PROBE_NO,
			     "%s has no xsk-zerocopy: AF_XDP sockets on %s run in copy mode", drv, l.name);

	it = &p->item[XP_PI_FRAGS];
	it->title = "XDP multi-buffer";
	if (!f.known)
		xp_probe_set(it, "multi_buffer", XP_PROBE_UNKNOWN, "%s", nofam);
	else if (k->item[XP_PK_FRAGS].state == XP_PROBE_NO)
		xp_probe_set(it, "multi_buffer", XP_PROBE_NO, "%s", k->item[XP_PK_FRAGS].reason);
	else if (f.xdp & XP_XDP_ACT_RX_SG)
		xp_probe_set(it, "multi_buffer", k->item[XP_PK_FRAGS].state,
			     "%s passes multi-buffer frames to XDP (xdp-features: rx-sg%s); the server's XDP program "
			     "takes them (native XDP at a jumbo MTU), the client's programs are single-buffer", drv,
			     f.xdp & XP_XDP_ACT_NDO_XMIT_SG ? ", ndo-xmit-sg" : "");
	else
		xp_probe_set(it, "multi_buffer", XP_PROBE_NO, "%s has no rx-sg: XDP sees single-buffer frames only", drv);

	it = &p->item[XP_PI_TSTAMP];
	it->title = "XDP RX timestamp";
	if (k->item[XP_PK_TSTAMP].state != XP_PROBE_YES)
		xp_probe_set(it, "rx_timestamp", k->item[XP_PK_TSTAMP].state, "%s", k->item[XP_PK_TSTAMP].reason);
	else if (!f.known)
		xp_probe_set(it, "rx_timestamp", XP_PROBE_UNKNOWN, "%s", nofam);
	else if (f.rx_meta & XP_XDP_RX_META_TIMESTAMP)
		xp_probe_set(it, "rx_timestamp", XP_PROBE_YES,
			     "%s implements bpf_xdp_metadata_rx_timestamp (xdp-rx-metadata-features: timestamp); a NIC "
			     "gives values once hardware timestamping is on", drv);
	else
		xp_probe_set(it, "rx_timestamp", XP_PROBE_NO,
			     "%s does not implement bpf_xdp_metadata_rx_timestamp (not in xdp-rx-metadata-features)", drv);

	pick_auto(&l, debug, p);
	return 0;
}
