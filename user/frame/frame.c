/* Frame builder; see frame.h. Pure userspace code, no syscalls. */
#include "frame/frame.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "frame/csum.h"

#define TCP_CHECK_OFF 16u
#define UDP_CHECK_OFF 6u

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

void frame_spec_hdr(const struct frame_spec *s, struct xp_flow_hdr *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->dst_mac, s->dst_mac, 6);
	memcpy(h->src_mac, s->src_mac, 6);
	if (s->vlan_id) {
		h->nvlan = 1;
		h->vlan[0].tpid = XP_TPID_8021Q;
		h->vlan[0].vid = s->vlan_id;
	}
	h->src = s->src;
	h->dst = s->dst;
	h->ttl = s->ttl;
	h->l4_proto = s->l4_proto;
	h->sport = s->sport;
	h->dport = s->dport;
	h->tcp_flags = s->tcp_flags;
	h->seq = s->seq;
	h->ack = s->ack;
	h->window = s->window;
	h->tcp_syn_options = s->tcp_syn_options;
	h->mss = s->mss;
}

size_t frame_min_size(const struct frame_spec *s)
{
	struct xp_flow_hdr h;
	size_t n;

	if (!s)
		return 0;
	frame_spec_hdr(s, &h);
	n = xp_flow_hdr_len(&h);
	if (!n)
		return 0;
	return n + 4 > FRAME_MIN_SIZE ? n + 4 : FRAME_MIN_SIZE;
}

int frame_layout_of(const struct frame_spec *s, struct frame_layout *lay,
		    const char **err)
{
	struct xp_flow_hdr h;

	if (!s || !lay) {
		if (err)
			*err = "no frame spec";
		return -1;
	}
	/* frame_spec's one tag is 1..4094; a flow's may be 0 (priority tag). */
	if (s->vlan_id > XP_VID_MAX) {
		if (err)
			*err = "VLAN id must be 1..4094 (0 = untagged)";
		return -1;
	}
	frame_spec_hdr(s, &h);
	return frame_layout_hdr(&h, s->frame_size, s->no_payload, lay, err);
}

size_t frame_build(const struct frame_spec *s, uint8_t *buf, size_t buflen,
		   const char **err)
{
	struct xp_flow_hdr h;
	struct frame_layout lay;

	/* frame_layout_of first: its checks and messages are frame_spec's. */
	if (frame_layout_of(s, &lay, err))
		return 0;
	frame_spec_hdr(s, &h);
	return frame_build_hdr(&h, s->frame_size, s->no_payload, s->payload_fill, buf, buflen, err);
}

void frame_set_ports(uint8_t *frame, const struct frame_layout *lay,
		     uint16_t sport, uint16_t dport)
{
	uint8_t *l4 = frame + lay->l4_off;
	uint16_t old_s, old_d, new_s = htons(sport), new_d = htons(dport), check;
	size_t coff;
	uint32_t sum;

	if (lay->l4_proto == IPPROTO_TCP)
		coff = TCP_CHECK_OFF;
	else if (lay->l4_proto == IPPROTO_UDP)
		coff = UDP_CHECK_OFF;
	else
		return;

	memcpy(&old_s, l4, 2);
	memcpy(&old_d, l4 + 2, 2);
	memcpy(l4, &new_s, 2);
	memcpy(l4 + 2, &new_d, 2);
	memcpy(&check, l4 + coff, 2);

	/* UDP checksum 0 means "none" (IPv4 only, but we never build one):
	 * nothing to keep consistent. */
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		return;
	/* RFC 1624 eqn 3 for both words in one sum; same as two
	 * csum_replace16 calls, one fold. */
	sum = (uint16_t)~check;
	sum += (uint16_t)~old_s;
	sum += new_s;
	sum += (uint16_t)~old_d;
	sum += new_d;
	check = csum_fold(sum);
	/* A full recomputation gives UDP 0xffff where the sum is zero. */
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		check = 0xffff;
	memcpy(l4 + coff, &check, 2);
}

/* ~old + new over n 16-bit words, in the memory-order convention of csum.h:
 * the RFC 1624 (eqn 3) difference term for replacing old by new, which a
 * caller adds to ~HC and folds. At most 16 words, so no carry is lost. */
static uint32_t csum_diff_words(const uint8_t *old, const uint8_t *new, size_t nwords)
{
	uint32_t d = 0;

	for (size_t i = 0; i < nwords; i++) {
		uint16_t o, n;

		memcpy(&o, old + 2 * i, 2);
		memcpy(&n, new + 2 * i, 2);
		d += (uint16_t)~o;
		d += n;
	}
	return d;
}

/* Apply a difference term to the frame's L4 checksum, keeping UDP's rules
 * (0 = no checksum: leave it; a computed 0 is sent as ffff), as
 * frame_set_ports does. */
static void l4_check_apply(uint8_t *frame, const struct frame_layout *lay, uint32_t d)
{
	uint8_t *l4 = frame + lay->l4_off;
	size_t coff = lay->l4_proto == IPPROTO_TCP ? TCP_CHECK_OFF : UDP_CHECK_OFF;
	uint16_t check;

	memcpy(&check, l4 + coff, 2);
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		return;
	check = csum_fold((uint16_t)~check + d);
	if (lay->l4_proto == IPPROTO_UDP && check == 0)
		check = 0xffff;
	memcpy(l4 + coff, &check, 2);
}

int frame_set_saddr(uint8_t *frame, const struct frame_layout *lay,
		    const struct xp_addr *a)
{
	uint8_t *ip = frame + lay->l3_off;
	const uint8_t *na;
	uint8_t *sa;
	size_t alen;
	uint32_t d;

	if (lay->l4_proto != IPPROTO_TCP && lay->l4_proto != IPPROTO_UDP)
		return -1;
	if ((ip[0] >> 4) == 4 && a->family == AF_INET) {
		sa = ip + 12;
		na = (const uint8_t *)&a->v4;
		alen = 4;
	} else if ((ip[0] >> 4) == 6 && a->family == AF_INET6) {
		sa = ip + 8;
		na = (const uint8_t *)&a->v6;
		alen = 16;
	} else {
		return -1;
	}
	/* The same difference goes into both checksums: the address is summed
	 * as-is by the IPv4 header checksum and by the pseudo-header. */
	d = csum_diff_words(sa, na, alen / 2);
	if (alen == 4) {
		uint16_t check;

		memcpy(&check, ip + 10, 2);
		check = csum_fold((uint16_t)~check + d);
		memcpy(ip + 10, &check, 2);
	}
	l4_check_apply(frame, lay, d);
	memcpy(sa, na, alen);
	return 0;
}

void frame_set_seq(uint8_t *frame, const struct frame_layout *lay, uint32_t seq)
{
	uint8_t *p = frame + lay->l4_off + 4;
	uint8_t n[4];

	if (lay->l4_proto != IPPROTO_TCP)
		return;
	put32(n, seq);
	l4_check_apply(frame, lay, csum_diff_words(p, n, 2));
	memcpy(p, n, 4);
}
