/*
 * The engine's configuration from the options and the path: the frame
 * template (a data segment, a datagram or a SYN), the size and queue checks
 * that need the interface, the target rate, and the stamps' settings.
 */
#include <stdio.h>
#include <string.h>

#include "client/session.h"

/* The engine's frame template: a data segment (or datagram), or a SYN. */
static void build_template(struct client *c, struct frame_spec *s)
{
	const struct xp_spec *sp = c->spec;
	memset(s, 0, sizeof(*s));
	memcpy(s->src_mac, c->link.mac, 6);
	memcpy(s->dst_mac, c->nh_mac, 6);
	s->src = c->local;
	s->dst = c->server;
	s->l4_proto = sp->traffic[0].udp ? IPPROTO_UDP : IPPROTO_TCP;
	s->sport = sp->traffic[0].cport_lo;
	s->dport = sp->traffic[0].port_lo;
	s->tcp_flags = 0x18; /* ACK|PSH: a data segment */
	s->seq = 1;
	s->ack = 1;
	s->frame_size = sp->traffic[0].frame_size;
	if (c->ops->tmpl == XP_TMPL_SYN) {
		/* Options like Linux's; the engine varies tuple and ISN per SYN. */
		s->l4_proto = IPPROTO_TCP;
		s->tcp_flags = 0x02; /* SYN */
		s->ack = 0;
		s->tcp_syn_options = true;
		s->no_payload = true;
		s->window = 64240;
		s->frame_size = (unsigned)frame_min_size(s);
	}
}

/* Frame size and queue checks that need the interface. Exit status or 0. */
static int check_limits(struct client *c, const struct frame_spec *s, unsigned *queues)
{
	const struct xp_spec *sp = c->spec;
	size_t min = frame_min_size(s);
	size_t max = (size_t)c->link.mtu + 18;
	if (sp->traffic[0].mix.n && xp_mix_min(&sp->traffic[0].mix) < min)
		return xp_client_fail(c, 2, "frame size %u of the mix is too small for %s/IPv%d (minimum %zu)",
				      xp_mix_min(&sp->traffic[0].mix), sp->traffic[0].udp ? "UDP" : "TCP", c->local.family == AF_INET6 ? 6 : 4, min);
	if (sp->traffic[0].frame_size < min)
		return xp_client_fail(c, 2, "frame size %u is too small for %s/IPv%d (minimum -l %zu)", sp->traffic[0].frame_size,
			    sp->traffic[0].udp ? "UDP" : "TCP", c->local.family == AF_INET6 ? 6 : 4, min);
	/* A flow file's size is its flow's size field, not -l (which --flows refuses): name that. */
	if (sp->traffic[0].frame_size > max && sp->traffic[0].has_hdr && sp->traffic[0].name[0])
		return xp_client_fail(c, 2, "flow 1 (%s): frame size %u (its size, flows[0].size in the flow file) exceeds "
				      "the MTU %u of %s (maximum %zu)", sp->traffic[0].name, sp->traffic[0].frame_size,
				      c->link.mtu, c->link.name, max);
	if (sp->traffic[0].frame_size > max)
		return xp_client_fail(c, 2, "frame size %u exceeds the MTU %u of %s (maximum -l %zu)", sp->traffic[0].frame_size, c->link.mtu,
			    c->link.name, max);
	unsigned avail = c->link.tx_queues ? c->link.tx_queues : 1;
	if (sp->first_queue >= avail)
		return xp_client_fail(c, 2, "%s has %u TX queue%s, cannot use --first-queue %u", c->link.name, avail,
			    avail == 1 ? "" : "s", sp->first_queue);
	*queues = sp->queues ? sp->queues : avail - sp->first_queue;
	if (sp->first_queue + *queues > avail)
		return xp_client_fail(c, 2, "%s has %u TX queue%s, cannot use %u from queue %u", c->link.name, avail,
			    avail == 1 ? "" : "s", *queues, sp->first_queue);
	return 0;
}

static enum xp_test_kind test_kind(const struct xp_spec *sp)
{
	return sp->kind;
}

/* The engine's frame rate: --cps counts SYNs, -b the frames of -l; sockets take neither. */
static double target_pps(const struct xp_spec *sp, enum xp_template t)
{
	if (t == XP_TMPL_SYN)
		return sp->cps;
	/* A frame mix's bit rate is in frames of its mean size. */
	if (t == XP_TMPL_DATA && sp->traffic[0].rate.unit != XP_RATE_NONE)
		return xp_rate_to_pps(&sp->traffic[0].rate, sp->traffic[0].mix.n ? xp_mix_mean(&sp->traffic[0].mix) : sp->traffic[0].frame_size);
	return 0;
}

/* Tests whose frames are not ours to stamp: what the report says instead of latency figures. */
static void no_stamp_note(struct client *c)
{
	const char *what = c->ops->figures == XP_FIGS_SOCKETS ? "TCP segments through the kernel"
			   : c->ops->figures == XP_FIGS_HANDSHAKES ? "handshake frames"
			   : "nothing of its own (an outside generator's frames)";
	snprintf(c->meas.note, sizeof(c->meas.note), "none: the %s engine sends %s, with no stamp: no per-frame loss, "
		 "duplicates, reordering or latency", c->ops->name, what);
}

/* The engine's configuration from the options and the path. Exit status or 0. */
int xp_client_engine_cfg(struct client *c, struct xp_spec *sp)
{
	struct xp_engine_cfg *ec = &c->ec;
	*ec = (struct xp_engine_cfg){
		.kind = test_kind(sp),
		.sport_lo = sp->traffic[0].cport_lo, .sport_hi = sp->traffic[0].cport_hi,
		.dport_lo = sp->traffic[0].port_lo, .dport_hi = sp->traffic[0].port_hi,
		.ifindex = c->link.ifindex,
		.max_seconds = sp->duration + 1,
		.debug = c->ro->debug,
		.server = c->server,
		.nbind = sp->nbind,
		.parallel = (unsigned)sp->parallel,
		.burst = sp->burst,
		.catchup_excess = sp->pace_catchup_excess,
		.frames = { .queues = 1, .first_queue = sp->first_queue },
		.sock = { .threads = sp->threads, .zero = sp->traffic[0].zero, .bind_dev = sp->dev[0] != '\0' },
		.hs = {
			.syn_sender = sp->syn_engine,
			.fin = sp->fin,
			.peer_kernel = sp->peer_kernel,
			.data_len = sp->data_len,
			.ctrl_port = sp->control_port,
			.xdp_mode = sp->xdp_mode,
			.syn_retries = sp->syn_retries,
			.keepalive_s = sp->keepalive_s,
			.first_tuple = sp->first_tuple,
		},
	};
	memcpy(ec->bind, sp->bind, sizeof(ec->bind[0]) * sp->nbind);
	snprintf(ec->ifname, sizeof(ec->ifname), "%s", c->link.name);
	/* Engines without frames of their own (sockets, none) never see -l. */
	if (sp->traffic[0].mix.n && c->ops->tmpl != XP_TMPL_NONE && (c->ops->tmpl != XP_TMPL_DATA || ec->kind != XP_TEST_STREAM))
		return xp_client_fail(c, 2, "-l with a frame mix is for frame streams (engines live and xsk), not "
				      "connection tests");
	if (c->ops->tmpl != XP_TMPL_NONE) {
		build_template(c, &ec->frames.tmpl);
		/* No -l: the smallest valid frame of the family and protocol that carries a stamp (with
		 * --no-stamps, the smallest valid one: the template's own). */
		if (c->ops->tmpl == XP_TMPL_DATA && !sp->traffic[0].frame_size_set) {
			unsigned n = sp->no_stamps ? (unsigned)frame_min_size(&ec->frames.tmpl)
						  : xp_stamp_min_frame(&ec->frames.tmpl);
			if (n)
				ec->frames.tmpl.frame_size = n;
		}
		sp->traffic[0].frame_size = ec->frames.tmpl.frame_size;
		int rc = check_limits(c, &ec->frames.tmpl, &ec->frames.queues);
		if (rc)
			return rc;
		if (c->ops->tmpl == XP_TMPL_DATA)
			ec->frames.mix = sp->traffic[0].mix; /* the template is the mix's largest (-l) */
	}
	ec->pps = target_pps(sp, c->ops->tmpl);
	/* Flows (issue 26): each stream's frames and rate; ec->pps becomes their sum. */
	int frc = xp_client_flows(c, sp);
	if (frc)
		return frc;
	/* Last, just before the engine is made: the stamps' interval 0 starts now (or, where the engine takes
	 * it later, just before the request: xp_cmeas_t0). */
	if (c->ops->tmpl == XP_TMPL_DATA && ec->kind == XP_TEST_STREAM) {
		char err[200];
		int rc = xp_cmeas_setup(&c->meas, sp, ec, err, sizeof(err));
		if (rc)
			return xp_client_fail(c, rc, "%s", err);
	} else {
		no_stamp_note(c);
	}
	return 0;
}
