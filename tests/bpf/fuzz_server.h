/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tests/bpf/test_frame_fuzz.c's server part: the model of bpf/server.bpf.c
 * a frame is judged against (which frames are a test's, what is counted,
 * what the responder may answer and how), and the run. Included once, by
 * test_frame_fuzz.c, after its common helpers.
 */
#ifndef XDPPERF_TESTS_FUZZ_SERVER_H
#define XDPPERF_TESTS_FUZZ_SERVER_H

/* ==== server ========================================================= */

enum cls { C_MALFORMED, C_PASS, C_FRAG, C_FOREIGN, C_TEST };

struct sframe {
	enum cls cls;
	int for_us;         /* C_TEST: addressed to us (else taken by its stamp's tag) */
	const struct sdef *sd;
	int v6, tcp, ihl_opts;
	size_t l3, l4, l4len, hlen, payload;
	uint8_t flags, saddr[16], daddr[16];
};

static int in_list(const uint8_t *a, int v6, const char *const *l, unsigned n)
{
	uint8_t b[16];

	for (unsigned i = 0; i < n; i++) {
		memset(b, 0, 16);
		inet_pton(v6 ? AF_INET6 : AF_INET, l[i], b);
		if (!memcmp(a, b, v6 ? 16 : 4))
			return 1;
	}
	return 0;
}

/* Each slot's tag key (slot_meas.key; lib/stamp.h), set by srv_load. */
static uint64_t slot_key[NSLOTS][2];
/* Frames given a stamp and tag (srv_put_tag), and test frames not addressed to us. */
static uint64_t srv_tags, srv_by_tag;

/* Does the frame carry its slot's stamp with the right tag: the stamp at
 * the payload (8 bytes, big-endian) and 4 more bytes of room, the tag
 * xp_stamp_tag(key, stamp) (lib/stamp.h, restated by calling it: the
 * function is the shared definition; what is modelled is where it is and
 * when it counts). */
static int tag_ok(const uint8_t *f, const struct sframe *s, size_t slot_i)
{
	const uint8_t *p = f + s->l4 + s->hlen;
	uint64_t st = 0;

	if (s->payload < 12)
		return 0;
	for (int i = 0; i < 8; i++)
		st = st << 8 | p[i];
	return w_get16(p + 8) == (xp_stamp_tag(slot_key[slot_i][0], slot_key[slot_i][1], st) >> 16) &&
	       w_get16(p + 10) == (uint16_t)xp_stamp_tag(slot_key[slot_i][0], slot_key[slot_i][1], st);
}

/* The server's view of a frame, from its documentation (server.bpf.c,
 * server_slot.h, parsing.h): malformed, passed, fragment, foreign or the
 * test's. */
static struct sframe classify_server(const uint8_t *f, size_t len)
{
	struct sframe s = { .cls = C_MALFORMED };
	size_t off = 12;
	uint16_t et, sport, dport;
	uint8_t proto;
	int tags = 0;

	if (len < 14)
		return s;
	et = w_get16(f + 12);
	while (tags < 2 && (et == W_ETH_8021Q || et == W_ETH_8021AD)) {
		if (len < off + 6)
			return s;
		et = w_get16(f + off + 4);
		off += 4;
		tags++;
	}
	s.l3 = off + 2;
	s.cls = C_PASS;
	if (et == W_ETH_IP) {
		const uint8_t *p = f + s.l3;
		size_t hdr, tot;

		s.cls = C_MALFORMED;
		if (len < s.l3 + 20 || p[0] >> 4 != 4 || (hdr = (p[0] & 15) * 4u) < 20 || s.l3 + hdr > len)
			return s;
		tot = w_get16(p + 2);
		if (tot < hdr || s.l3 + tot > len)
			return s;
		s.cls = C_FRAG;
		if (w_get16(p + 6) & 0x3fff)
			return s;
		s.cls = C_PASS;
		proto = p[9];
		s.l4 = s.l3 + hdr;
		s.l4len = tot - hdr;
		s.ihl_opts = hdr > 20;
		memcpy(s.saddr, p + 12, 4);
		memcpy(s.daddr, p + 16, 4);
	} else if (et == W_ETH_IPV6) {
		const uint8_t *p = f + s.l3;

		s.cls = C_MALFORMED;
		if (len < s.l3 + 40 || p[0] >> 4 != 6 || s.l3 + 40 + w_get16(p + 4) > len)
			return s;
		s.cls = C_PASS;
		s.v6 = 1;
		proto = p[6];
		s.l4 = s.l3 + 40;
		s.l4len = w_get16(p + 4);
		memcpy(s.saddr, p + 8, 16);
		memcpy(s.daddr, p + 24, 16);
	} else {
		return s;
	}
	if (proto == IPPROTO_TCP) {
		s.cls = C_MALFORMED;
		if (len < s.l4 + 20)
			return s;
		s.hlen = (f[s.l4 + 12] >> 4) * 4u;
		if (s.hlen < 20 || s.hlen > s.l4len)
			return s;
		s.cls = C_PASS;
		sport = w_get16(f + s.l4);
		dport = w_get16(f + s.l4 + 2);
		if (sport == CTRL_PORT || dport == CTRL_PORT)
			return s;
		s.tcp = 1;
		s.flags = f[s.l4 + 13];
	} else if (proto == IPPROTO_UDP) {
		s.cls = C_MALFORMED;
		if (len < s.l4 + 8 || s.l4len < 8)
			return s;
		s.cls = C_PASS;
		s.hlen = 8;
		dport = w_get16(f + s.l4 + 2);
	} else {
		return s;
	}
	s.payload = s.l4len - s.hlen;
	for (size_t i = 0; i < NSLOTS; i++)
		if (dport >= SLOTS[i].lo && dport <= SLOTS[i].hi)
			s.sd = &SLOTS[i];
	if (!s.sd || !(s.sd->protos & (s.tcp ? XP_PROTO_TCP : XP_PROTO_UDP)))
		return s;
	/* The test's only if from its client (its address or a --bind one)
	 * AND addressed to this host: sent to our MAC and to our address on
	 * the interface (issue 28), or else carrying the test's stamp with
	 * its right tag. Anything else to its ports, a frame we would forward
	 * whoever sent it, is foreign. */
	s.for_us = !memcmp(f, SRV_MAC, 6) && in_list(s.daddr, s.v6, s.v6 ? SRV6 : SRV4, 1);
	s.cls = in_list(s.saddr, s.v6, s.v6 ? CLI6 : CLI4, s.v6 ? 1 : 2) &&
			(s.for_us || tag_ok(f, &s, (size_t)(s.sd - SLOTS)))
		? C_TEST : C_FOREIGN;
	return s;
}

/* A TCP stack would answer it at all: to our MAC and address, from a
 * unicast MAC and a unicast address that is not ours (bpf/lib/addr.h's
 * rules, restated), with a valid checksum (*csum_ok). */
/* One host's address (lib/addr.h's rules, restated). */
static int ip_unicast(const uint8_t *a, int v6)
{
	if (!v6)
		return a[0] != 0 && a[0] != 127 && a[0] < 224;
	static const uint8_t zero[16], one[16] = { [15] = 1 }, mapped[12] = { [10] = 0xff, [11] = 0xff };
	return a[0] != 0xff && memcmp(a, zero, 16) && memcmp(a, one, 16) && memcmp(a, mapped, 12);
}

static int addressed_to_us(const uint8_t *f, const struct sframe *s)
{
	const uint8_t *a = s->saddr;

	if (memcmp(f, SRV_MAC, 6) || (f[6] & 1))
		return 0;
	if (!in_list(s->daddr, s->v6, s->v6 ? SRV6 : SRV4, 1) || in_list(a, s->v6, s->v6 ? SRV6 : SRV4, 1))
		return 0;
	return ip_unicast(a, s->v6);
}

static void swap_bytes(uint8_t *a, uint8_t *b, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		uint8_t t = a[k];
		a[k] = b[k];
		b[k] = t;
	}
}

/* XP_SLOT_REFLECT (lib/reflect.h, restated): a stamped frame goes back
 * unless a MAC or an IP address on either side is a group's. Its
 * reflection is the frame with MACs, addresses, ports and TCP seq/ack
 * swapped and TTL / hop limit 64, nothing else changed but the IPv4 header
 * checksum, which stays valid if it was (and wrong if it was: an
 * incremental update keeps the error). */
static int reflectable(const uint8_t *f, const struct sframe *s)
{
	return !(f[0] & 1) && !(f[6] & 1) && ip_unicast(s->saddr, s->v6) && ip_unicast(s->daddr, s->v6);
}

static void check_reflection(const uint8_t *in, size_t len, const uint8_t *out, size_t olen, const struct sframe *s)
{
	uint8_t exp[MAXF];

	FZ_CHECK(olen == len, "reflection of %zu bytes is %zu", len, olen);
	memcpy(exp, in, len);
	swap_bytes(exp, exp + 6, 6);
	if (s->v6) {
		swap_bytes(exp + s->l3 + 8, exp + s->l3 + 24, 16);
		exp[s->l3 + 7] = 64;
	} else {
		size_t hdr = (in[s->l3] & 15) * 4u;
		int ok_in = w_fold(w_sum(in + s->l3, hdr, 0)) == 0, ok_out = w_fold(w_sum(out + s->l3, hdr, 0)) == 0;

		FZ_CHECK(ok_in == ok_out, "IPv4 header checksum %s by the reflection", ok_in ? "broken" : "repaired");
		swap_bytes(exp + s->l3 + 12, exp + s->l3 + 16, 4);
		exp[s->l3 + 8] = 64;
		memcpy(exp + s->l3 + 10, out + s->l3 + 10, 2); /* judged above */
	}
	swap_bytes(exp + s->l4, exp + s->l4 + 2, 2);
	if (s->tcp)
		swap_bytes(exp + s->l4 + 4, exp + s->l4 + 8, 4);
	FZ_CHECK(!memcmp(exp, out, len), "reflection differs from the frame turned around");
}

struct srv {
	struct server_bpf *s;
	int fd;
	struct xp_counters model[NSLOTS];
	/* The measurement core (every slot measures, one-way): frames the
	 * model says carry a stamp (lib/stamp.h's places, restated) or not. */
	uint64_t stamped[NSLOTS], nostamp[NSLOTS];
	uint64_t reflected[NSLOTS], refused[NSLOTS]; /* XP_SLOT_REFLECT */
	uint64_t g[XP_G_NSTATS];
	struct figs figs;
	uint32_t cookie_seen[2];      /* a SYN-ACK's cookie and our ISN, for the next ACK */
	uint8_t hs[MAXF];             /* the SYN it answered */
	size_t hs_len;
};

static void srv_load(struct srv *v)
{
	uint32_t one = 1, local = XP_LOCAL_UNICAST;

	memset(v, 0, sizeof(*v));
	v->s = server_bpf__open();
	assert_non_null(v->s);
	v->s->rodata->config.ctrl_port = CTRL_PORT;
	v->s->rodata->config.cookie_key[0] = fz_next();
	v->s->rodata->config.cookie_key[1] = fz_next();
	assert_int_equal(server_bpf__load(v->s), 0);
	v->fd = bpf_program__fd(v->s->progs.xdp_server);
	for (size_t i = 0; i < NSLOTS; i++) {
		const struct sdef *d = &SLOTS[i];
		struct xp_slot_cfg cfg = { .flags = d->flags | XP_SLOT_ACTIVE, .protos = d->protos,
					   .close_mode = d->close_mode, .ifindex = lo_ifindex,
					   .peer_family = XP_FAMILY_V4, .npeers = 2 };
		struct xp_peer_key k = { .slot = d->slot };
		uint32_t val = d->slot + 1;

		memcpy(cfg.mac, SRV_MAC, 6);
		inet_pton(AF_INET, CLI4[0], cfg.peer);
		k.family = XP_FAMILY_V4;
		inet_pton(AF_INET, CLI4[1], k.addr);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_peers), &k, &one, 0), 0);
		memset(k.addr, 0, 16);
		k.family = XP_FAMILY_V6;
		inet_pton(AF_INET6, CLI6[0], k.addr);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_peers), &k, &one, 0), 0);
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_cfg), &d->slot, &cfg, 0), 0);
		/* Accounting on, with intervals of 2^20 ticks (4 ms): random
		 * stamps land in every interval, late and not. */
		slot_key[i][0] = fz_next();
		slot_key[i][1] = fz_next() | 1; /* never 0, 0 */
		struct xp_slot_meas m = { .t0 = fz_next() & 0xffffffffffull, .ival = 1u << 20,
					  .closed_upto = fz_next() & 0x3ff, .flags = XP_MEAS_ONEWAY,
					  .key = { slot_key[i][0], slot_key[i][1] } };
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.slot_meas), &d->slot, &m, 0), 0);
		for (uint32_t p = d->lo; p <= d->hi; p++)
			assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.port_slot), &p, &val, 0), 0);
	}
	struct xp_local_key lk = { .ifindex = lo_ifindex, .family = XP_FAMILY_V4 };
	inet_pton(AF_INET, SRV4[0], lk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.local_addr), &lk, &local, 0), 0);
	memset(lk.addr, 0, 16);
	lk.family = XP_FAMILY_V6;
	inet_pton(AF_INET6, SRV6[0], lk.addr);
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(v->s->maps.local_addr), &lk, &local, 0), 0);
}

/* The model's counters against the program's, every field. */
static void srv_compare(struct srv *v, size_t i)
{
	struct xp_counters got;

	percpu_sum(bpf_map__fd(v->s->maps.counters), SLOTS[i].slot, sizeof(got), &got);
	for (size_t k = 0; k < sizeof(got) / 8; k++)
		FZ_CHECK(((__u64 *)&got)[k] == ((__u64 *)&v->model[i])[k],
			 "slot %u counter %zu: %llu, model %llu", SLOTS[i].slot, k,
			 (unsigned long long)((__u64 *)&got)[k], (unsigned long long)((__u64 *)&v->model[i])[k]);
	struct xp_meas_stats ms;
	percpu_sum(bpf_map__fd(v->s->maps.meas_stats), SLOTS[i].slot, sizeof(ms), &ms);
	FZ_CHECK(ms.reflected == v->reflected[i] && ms.reflect_refused == v->refused[i],
		 "slot %u: %llu reflected, %llu refused, model %llu, %llu", SLOTS[i].slot,
		 (unsigned long long)ms.reflected, (unsigned long long)ms.reflect_refused,
		 (unsigned long long)v->reflected[i], (unsigned long long)v->refused[i]);
	FZ_CHECK(ms.stamped == v->stamped[i] && ms.nostamp == v->nostamp[i] && ms.hw_timed == 0,
		 "slot %u: %llu stamped, %llu without, model %llu, %llu", SLOTS[i].slot,
		 (unsigned long long)ms.stamped, (unsigned long long)ms.nostamp, (unsigned long long)v->stamped[i],
		 (unsigned long long)v->nostamp[i]);
}

static void srv_compare_all(struct srv *v)
{
	uint64_t g;
	struct xp_counters z;

	for (size_t i = 0; i < NSLOTS; i++)
		srv_compare(v, i);
	for (uint32_t s = 0; s < XP_MAX_SLOTS; s++) {
		int ours = 0;
		for (size_t i = 0; i < NSLOTS; i++)
			ours |= SLOTS[i].slot == s;
		if (ours)
			continue;
		percpu_sum(bpf_map__fd(v->s->maps.counters), s, sizeof(z), &z);
		for (size_t k = 0; k < sizeof(z) / 8; k++)
			FZ_CHECK(((__u64 *)&z)[k] == 0, "slot %u (no test) counted", s);
	}
	for (uint32_t k = 0; k < XP_G_NSTATS; k++) {
		percpu_sum(bpf_map__fd(v->s->maps.gstats), k, sizeof(g), &g);
		FZ_CHECK(g == v->g[k], "global stat %u: %llu, model %llu", k, (unsigned long long)g,
			 (unsigned long long)v->g[k]);
	}
	/* SEEN == counted in slots + PASSED + MALFORMED; sub-counts fit. */
	uint64_t counted = 0;
	for (size_t i = 0; i < NSLOTS; i++) {
		struct xp_counters *c = &v->model[i];
		counted += c->pkts;
		if (SLOTS[i].flags & XP_SLOT_RESPOND)
			FZ_CHECK(c->pkts - c->udp_pkts == c->synack_sent + c->fin_answered + c->rst_sent +
				 c->noreply_addr + c->noreply_shape + c->noreply_csum + c->noreply_room +
				 c->noreply_other, "slot %u: answered + not answered != TCP frames", SLOTS[i].slot);
		FZ_CHECK(c->cookie_invalid <= c->noreply_other, "cookie_invalid > noreply_other");
	}
	FZ_CHECK(v->g[XP_G_SEEN] == counted + v->g[XP_G_PASSED] + v->g[XP_G_MALFORMED], "global counts do not add up");
	FZ_CHECK(v->g[XP_G_FOREIGN] + v->g[XP_G_FRAGMENT] <= v->g[XP_G_PASSED], "sub-counts exceed PASSED");
}

/* One frame through the server, checked against the model. */
static void srv_one(struct srv *v, const uint8_t *in, size_t len)
{
	uint8_t out[MAXF];
	size_t olen;
	struct sframe s = classify_server(in, len);
	int r = run_prog(v->fd, in, len, out, &olen, lo_ifindex);

	cur_buf = in;
	cur_len = len;
	v->figs.frames++;
	v->g[XP_G_SEEN]++;
	FZ_CHECK(r == XDP_PASS || r == XDP_DROP || r == XDP_TX, "verdict %d", r);
	if (s.cls != C_TEST) {
		FZ_CHECK(r == XDP_PASS, "not the test's (class %d) but verdict %d", s.cls, r);
		FZ_CHECK(olen == len && !memcmp(in, out, len), "not the test's but changed");
		v->g[s.cls == C_MALFORMED ? XP_G_MALFORMED : XP_G_PASSED]++;
		if (s.cls == C_FRAG)
			v->g[XP_G_FRAGMENT]++;
		if (s.cls == C_FOREIGN)
			v->g[XP_G_FOREIGN]++;
		v->figs.passed++;
		return;
	}
	v->figs.test++;
	if (!s.for_us)
		srv_by_tag++;
	size_t i = (size_t)(s.sd - SLOTS);
	struct xp_counters *c = &v->model[i];
	c->pkts++;
	c->bytes += len;
	if (s.v6)
		c->ipv6_pkts++;
	else
		c->ipv4_pkts++;
	if (!s.tcp) {
		c->udp_pkts++;
	} else {
		if (s.flags & W_SYN) {
			if (s.flags & W_ACK)
				c->tcp_synack++;
			else
				c->tcp_syn++;
		}
		if (s.flags & W_FIN)
			c->tcp_fin++;
		if (s.flags & W_RST)
			c->tcp_rst++;
		if ((s.flags & (W_ACK | W_SYN | W_FIN | W_RST)) == W_ACK && !s.payload)
			c->tcp_ack_only++;
	}
	if (s.payload) {
		c->data_pkts++;
		c->data_bytes += s.payload;
	}
	int stamped = s.payload >= 8 || (!s.v6 && s.payload >= 6);
	if (stamped)
		v->stamped[i]++;
	else
		v->nostamp[i]++;
	if (s.sd->flags & XP_SLOT_REFLECT) {
		/* Only what was sent to us goes back (a tagged frame to
		 * another host would leave from an address not ours). */
		if (stamped && s.for_us && reflectable(in, &s)) {
			FZ_CHECK(r == XDP_TX, "stamped frame of a reflecting slot: verdict %d", r);
			check_reflection(in, len, out, olen, &s);
			v->reflected[i]++;
			v->figs.replies++;
		} else {
			FZ_CHECK(r == XDP_DROP && olen == len && !memcmp(in, out, len),
				 "%s frame of a reflecting slot not dropped untouched",
				 stamped ? "unreflectable" : "unstamped");
			if (stamped)
				v->refused[i]++;
			v->figs.dropped++;
		}
		srv_compare(v, i);
		return;
	}
	int other = s.sd->flags & XP_SLOT_PASS ? XDP_PASS : XDP_DROP;
	if (!(s.sd->flags & XP_SLOT_RESPOND) || !s.tcp) {
		FZ_CHECK(r == other && olen == len && !memcmp(in, out, len), "counted frame not %s untouched",
			 other == XDP_PASS ? "passed" : "dropped");
		if (r == XDP_PASS) v->figs.passed++; else v->figs.dropped++;
		srv_compare(v, i);
		return;
	}

	/* The responder. What a TCP stack would not answer is never answered. */
	struct wp w = w_parse(in, len);
	__u64 *reason = NULL;
	if (!s.for_us)
		reason = &c->noreply_addr; /* taken by its tag: never answered */
	else if (s.ihl_opts)
		reason = &c->noreply_shape;
	else if (!addressed_to_us(in, &s))
		reason = &c->noreply_addr;
	else if (!w.ok || !w.l4_csum_ok)
		reason = &c->noreply_csum;
	else if (s.flags & W_RST)
		reason = &c->noreply_other;
	else if ((s.flags & (W_SYN | W_ACK | W_FIN)) != W_SYN && (s.flags & (W_SYN | W_ACK)) != W_ACK)
		reason = &c->noreply_other;
	if (reason) {
		FZ_CHECK(r == other && olen == len && !memcmp(in, out, len), "unanswerable frame not %s untouched",
			 other == XDP_PASS ? "passed" : "dropped");
		(*reason)++;
	} else if (r == XDP_TX) {
		struct wp b = check_reply(in, len, out, olen);
		v->figs.replies++;
		FZ_CHECK(b.payload == 0, "server reply with %zu payload bytes", b.payload);
		if ((s.flags & (W_SYN | W_ACK | W_FIN)) == W_SYN) {
			FZ_CHECK(b.flags == (W_SYN | W_ACK) && b.ack == w.seq + 1, "SYN not answered by its SYN-ACK");
			c->synack_sent++;
			/* Keep it: the next frames may complete this handshake. */
			v->cookie_seen[0] = b.seq;
			v->cookie_seen[1] = w.seq;
			memcpy(v->hs, in, len);
			v->hs_len = len;
		} else if (b.flags == (W_FIN | W_ACK)) {
			FZ_CHECK((s.flags & W_FIN) && b.seq == w.ack && b.ack == w.seq + w.payload + 1,
				 "FIN-ACK that does not answer a FIN");
			c->fin_answered++;
		} else {
			FZ_CHECK(b.flags == W_RST && !(s.flags & W_FIN) && s.sd->close_mode == XP_CLOSE_RST &&
				 b.seq == w.ack, "unexpected reply flags %#x to %#x", b.flags, s.flags);
			c->rst_sent++;
		}
	} else {
		/* An ACK whose cookie did not check out (or a valid one the
		 * slot keeps quiet about): no reply. A FIN without data is
		 * always answered. */
		FZ_CHECK(!((s.flags & W_FIN) && !s.payload), "a FIN without data not answered");
		FZ_CHECK(r == other && olen == len && !memcmp(in, out, len), "unanswered frame changed");
		c->noreply_other++;
	}
	if (r == XDP_PASS) v->figs.passed++; else if (r == XDP_DROP) v->figs.dropped++;
	/* The cookie counters depend on the key: take the program's, bounded. */
	struct xp_counters got;
	percpu_sum(bpf_map__fd(v->s->maps.counters), s.sd->slot, sizeof(got), &got);
	FZ_CHECK(got.conn_established - c->conn_established <= 1 && got.cookie_invalid - c->cookie_invalid <= 1,
		 "cookie counters moved by more than one frame");
	c->conn_established = got.conn_established;
	c->cookie_invalid = got.cookie_invalid;
	srv_compare(v, i);
}

/* The ACK (or ACK|FIN, or data + FIN, or the final ACK after our FIN) that
 * completes the last answered SYN, with its real cookie. */
static size_t srv_handshake_frame(struct srv *v, uint8_t *buf)
{
	struct wp w = w_parse(v->hs, v->hs_len);
	size_t len = v->hs_len;
	uint32_t seq = v->cookie_seen[1] + 1, ack = v->cookie_seen[0] + 1;

	memcpy(buf, v->hs, len);
	if (!w.ok)
		return len;
	uint8_t *t = buf + w.l4;
	switch (fz_below(4)) {
	case 0: t[13] = W_ACK; break;
	case 1: t[13] = W_ACK | W_FIN; break;
	case 2: t[13] = W_ACK | W_PSH | W_FIN; break; /* with the SYN's payload as data */
	default: t[13] = W_ACK; seq += 1; ack += 1; break; /* the ACK of our FIN */
	}
	w_put32(t + 4, seq);
	w_put32(t + 8, ack);
	w_put16(t + 16, 0);
	w_put16(t + 16, w_fold(w_sum(t, w.l4len, w_pseudo(w.v6, w.saddr, w.daddr, IPPROTO_TCP,
							    (uint32_t)w.l4len))));
	return len;
}

/* Give the frame a stamp and its slot's tag (right, or one bit off),
 * where it has a slot and room: the tag path gets frames that pass it and
 * frames that do not, to us and (more often, fz_frame's addresses) not. */
static void srv_put_tag(uint8_t *f, size_t len, int right)
{
	struct sframe s = classify_server(f, len);

	if (!s.sd || s.payload < 12 || s.l4 + s.hlen + 12 > len)
		return;
	uint8_t *p = f + s.l4 + s.hlen;
	uint64_t st = fz_next();
	size_t i = (size_t)(s.sd - SLOTS);
	uint32_t tag = xp_stamp_tag(slot_key[i][0], slot_key[i][1], st) ^ (right ? 0 : 1u << fz_below(32));

	for (int k = 0; k < 8; k++)
		p[k] = (uint8_t)(st >> (56 - 8 * k));
	w_put32(p + 8, tag);
	srv_tags++;
}

static void test_server(void **state)
{
	struct srv *v = calloc(1, sizeof(*v));
	struct fz_world wd = { .our_mac = SRV_MAC, .peer_mac = CLI_MAC, .our4 = SRV4, .n_our4 = 1,
			       .our6 = SRV6, .n_our6 = 1, .peer4 = CLI4, .n_peer4 = 2, .peer6 = CLI6,
			       .n_peer6 = 1, .dport_lo = PORTS_LO, .dport_hi = PORTS_HI + 5,
			       .sport_lo = CPORT_LO, .sport_hi = CPORT_HI, .ctrl_port = CTRL_PORT };
	uint8_t buf[MAXF], opt[40];

	(void)state;
	assert_non_null(v);
	fz_state = seed;
	srv_load(v);
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len;

		if (v->hs_len && fz_pct(15)) {
			len = srv_handshake_frame(v, buf);
			if (fz_pct(30))
				len = fz_mutate(buf, len, 2048);
		} else {
			len = fz_frame(&wd, buf, 2048, opt);
			if (fz_pct(30))
				srv_put_tag(buf, len, fz_pct(80));
			if (fz_pct(40))
				len = fz_mutate(buf, len, 2048);
		}
		srv_one(v, buf, len);
		if (cur_frame % 512 == 511)
			srv_compare_all(v);
	}
	srv_compare_all(v);
	/* Every stamped frame is in its stream's state once: received or a
	 * duplicate; and no bin holds more than that. */
	for (size_t i = 0; i < NSLOTS; i++) {
		uint64_t in_streams = 0, in_bins = 0;
		for (uint32_t st = 0; st < 256; st++) {
			uint32_t k = SLOTS[i].slot * 256 + st;
			struct xp_stream_acct a;
			assert_int_equal(bpf_map_lookup_elem_flags(bpf_map__fd(v->s->maps.stream_acct), &k, &a,
								   BPF_F_LOCK), 0);
			in_streams += a.recv + a.dup;
		}
		for (uint32_t b = 0; b < XP_IBINS; b++) {
			uint32_t k = SLOTS[i].slot * XP_IBINS + b;
			int n = libbpf_num_possible_cpus();
			struct xp_ibin *bins = calloc((size_t)n, sizeof(*bins));
			assert_non_null(bins);
			assert_int_equal(bpf_map_lookup_elem(bpf_map__fd(v->s->maps.ibins), &k, bins), 0);
			for (int c = 0; c < n; c++)
				in_bins += bins[c].recv + bins[c].dup + bins[c].late;
			free(bins);
		}
		FZ_CHECK(in_streams == v->stamped[i], "slot %u: %llu frames in its streams, %llu stamped",
			 SLOTS[i].slot, (unsigned long long)in_streams, (unsigned long long)v->stamped[i]);
		FZ_CHECK(in_bins <= v->stamped[i], "slot %u: %llu frames in its bins, %llu stamped", SLOTS[i].slot,
			 (unsigned long long)in_bins, (unsigned long long)v->stamped[i]);
		printf("figures: server: slot %u measured %llu stamped frames (%llu without room), %llu still in the "
		       "ring's bins\n", SLOTS[i].slot, (unsigned long long)v->stamped[i],
		       (unsigned long long)v->nostamp[i], (unsigned long long)in_bins);
	}
	report("server", &v->figs);
	for (size_t i = 0; i < NSLOTS; i++) {
		if (!(SLOTS[i].flags & XP_SLOT_REFLECT))
			continue;
		printf("figures: server: reflecting slot %u: %llu reflected, %llu refused (group address, or not sent to us)\n",
		       SLOTS[i].slot, (unsigned long long)v->reflected[i], (unsigned long long)v->refused[i]);
		assert_true(v->reflected[i] > 0 && v->refused[i] > 0);
	}
	struct xp_counters *c = &v->model[0];
	printf("figures: server: responding slot: %llu SYN-ACKs, %llu FIN-ACKs, %llu RSTs, %llu established; not answered: "
	       "%llu addressing, %llu shape, %llu checksum, %llu room, %llu other\n",
	       (unsigned long long)c->synack_sent, (unsigned long long)c->fin_answered,
	       (unsigned long long)c->rst_sent, (unsigned long long)c->conn_established,
	       (unsigned long long)c->noreply_addr, (unsigned long long)c->noreply_shape,
	       (unsigned long long)c->noreply_csum, (unsigned long long)c->noreply_room,
	       (unsigned long long)c->noreply_other);
	/* The run must have reached every path it claims to check. */
	assert_true(c->synack_sent > 0 && c->fin_answered > 0 && c->rst_sent > 0 && c->conn_established > 0);
	assert_true(c->noreply_addr > 0 && c->noreply_shape > 0 && c->noreply_csum > 0 && c->noreply_other > 0);
	assert_true(v->g[XP_G_MALFORMED] > 0 && v->g[XP_G_FOREIGN] > 0 && v->g[XP_G_FRAGMENT] > 0);
	printf("figures: server: %llu frames given a stamp and tag, %llu of them the test's by the tag alone\n",
	       (unsigned long long)srv_tags, (unsigned long long)srv_by_tag);
	assert_true(srv_by_tag > 0);
	server_bpf__destroy(v->s);
	free(v);
}

#endif /* XDPPERF_TESTS_FUZZ_SERVER_H */
