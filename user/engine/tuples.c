/* Connection numbering for the AF_XDP engine; see engine/tuples.h. */
#include "engine/tuples.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>

int xp_tuples_init(struct xp_tuples *m, const struct xp_engine_cfg *c, uint64_t seed,
		      char *err, size_t errlen)
{
	if (c->frames.tmpl.l4_proto != IPPROTO_TCP) {
		snprintf(err, errlen, "connection tests send TCP SYNs: the frame template is not TCP");
		return -EINVAL;
	}
	if (c->sport_hi < c->sport_lo || c->dport_hi < c->dport_lo) {
		snprintf(err, errlen, "empty port range (%u:%u -> %u:%u)", c->sport_lo, c->sport_hi,
			 c->dport_lo, c->dport_hi);
		return -EINVAL;
	}
	if (c->nbind > XP_MAX_BIND) {
		snprintf(err, errlen, "at most %u source addresses", XP_MAX_BIND);
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->nbind; i++) {
		if (c->bind[i].family != c->frames.tmpl.src.family) {
			snprintf(err, errlen, "source address %u of %u is not of the destination's family",
				 i + 1, c->nbind);
			return -EINVAL;
		}
	}
	m->cfg = c;
	m->naddr = c->nbind ? c->nbind : 1;
	m->space = (uint64_t)m->naddr * (c->sport_hi - c->sport_lo + 1u) * (c->dport_hi - c->dport_lo + 1u);
	m->first = c->hs.first_tuple % m->space;
	m->seed = seed;
	/* Held connections must all be distinct: a second SYN on an open tuple
	 * is not a new connection to a firewall. */
	if (c->kind == XP_TEST_HOLD && c->parallel > m->space) {
		snprintf(err, errlen,
			 "cannot hold %u connections with %" PRIu64 " distinct tuples (source ports x "
			 "destination ports x source addresses): widen --cport, -p or --bind",
			 c->parallel, m->space);
		return -EINVAL;
	}
	return 0;
}

void xp_tuple_write(const struct xp_tuples *m, uint8_t *frame, const struct frame_layout *lay,
		    uint64_t t, uint32_t seq)
{
	uint16_t sp, dp;
	unsigned a;

	xp_tuple_of(m, t, &sp, &dp, &a);
	frame_set_ports(frame, lay, sp, dp);
	if (m->cfg->nbind)
		frame_set_saddr(frame, lay, &m->cfg->bind[a]);
	frame_set_seq(frame, lay, seq);
}

size_t xp_tuple_build_rst(const struct frame_spec *syn, uint8_t *buf, size_t buflen,
			  struct frame_layout *lay, const char **err)
{
	struct frame_spec s = *syn;

	/* A bare RST, as Linux sends for a connection it aborts without having
	 * heard from the peer. No ACK: we never learn the server's ISN (a SYN
	 * cookie), and a tracker accepts an RST without ACK whose seq is the
	 * next one expected (ISN + 1). */
	s.tcp_flags = TH_RST;
	s.tcp_syn_options = false;
	s.no_payload = true;
	s.ack = 0;
	/* window: the SYN's; a receiver ignores an RST's window */
	if (frame_layout_of(&s, lay, err))
		return 0;
	return frame_build(&s, buf, buflen, err);
}
