/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tests/bpf/test_frame_fuzz.c's client part: the model of bpf/xdp_connect.bpf.c
 * (xdp_connect and the data mode's tc_connect) and the runs. Included once,
 * by test_frame_fuzz.c, after fuzz_server.h (whose parser up to L4 it
 * shares).
 */
#ifndef XDPPERF_TESTS_FUZZ_CLIENT_H
#define XDPPERF_TESTS_FUZZ_CLIENT_H

/* ==== client ========================================================= */

struct cli {
	struct xdp_connect_bpf *c;
	int fd;
	uint32_t mode, data_len;
	struct xp_cc_counters model;
	struct figs figs;
};

static void cli_compare(struct cli *v)
{
	struct xp_cc_counters got;

	percpu_sum(bpf_map__fd(v->c->maps.cc_counters), 0, sizeof(got), &got);
	for (size_t k = 0; k < sizeof(got) / 8; k++)
		FZ_CHECK(((__u64 *)&got)[k] == ((__u64 *)&v->model)[k], "client counter %zu: %llu, model %llu", k,
			 (unsigned long long)((__u64 *)&got)[k], (unsigned long long)((__u64 *)&v->model)[k]);
}

/* Is it a segment of a test flow (server port -> client port), as
 * xdp_connect.bpf.c's xp_cc_test_seg documents? *shape_ok: a reply can be
 * built for it (no IPv4 options, not a fragment). */
static int client_flow(const uint8_t *f, size_t len, struct wp *w, int *shape_ok)
{
	struct sframe s = classify_server(f, len); /* the same parsers up to L4 */

	*w = w_parse(f, len);
	*shape_ok = 0;
	if (s.cls == C_FRAG) {
		/* A first fragment is a test segment; a later one is not. */
		const uint8_t *p = f + s.l3;
		size_t hdr = (p[0] & 15) * 4u, tot = w_get16(p + 2);
		if (w_get16(p + 6) & 0x1fff || p[9] != IPPROTO_TCP || tot < hdr + 20)
			return 0;
		const uint8_t *t = p + hdr;
		size_t doff = (t[12] >> 4) * 4u;
		if (doff < 20 || doff > tot - hdr)
			return 0;
		uint16_t sp = w_get16(t), dp = w_get16(t + 2);
		w->flags = t[13];
		return sp != CTRL_PORT && dp != CTRL_PORT && dp >= CPORT_LO && dp <= CPORT_HI && sp >= PORTS_LO &&
		       sp <= PORTS_HI;
	}
	if (s.cls == C_MALFORMED || !s.tcp)
		return 0;
	/* classify_server stopped at the control port or a slot lookup;
	 * the client's ranges are its own. */
	uint16_t sp = w_get16(f + s.l4), dp = w_get16(f + s.l4 + 2);
	if (sp == CTRL_PORT || dp == CTRL_PORT || dp < CPORT_LO || dp > CPORT_HI || sp < PORTS_LO || sp > PORTS_HI)
		return 0;
	*shape_ok = !s.ihl_opts;
	w->flags = s.flags;
	return 1;
}

static void cli_one(struct cli *v, const uint8_t *in, size_t len)
{
	uint8_t out[MAXF];
	size_t olen;
	struct wp w;
	int shape_ok, test = client_flow(in, len, &w, &shape_ok);
	int r = run_prog(v->fd, in, len, out, &olen, lo_ifindex);
	uint8_t fl = w.flags;

	cur_buf = in;
	cur_len = len;
	v->figs.frames++;
	FZ_CHECK(r == XDP_PASS || r == XDP_DROP || r == XDP_TX, "client verdict %d", r);
	if (!test || (!(fl & W_RST) && (fl & (W_SYN | W_ACK | W_FIN)) != (W_SYN | W_ACK) &&
		      (fl & (W_SYN | W_ACK | W_FIN)) != (W_ACK | W_FIN))) {
		FZ_CHECK(r == XDP_PASS && olen == len && !memcmp(in, out, len), "client: not its to answer, but touched");
		v->model.passed++;
		v->figs.passed++;
		cli_compare(v);
		return;
	}
	v->figs.test++;
	if (fl & W_RST) {
		FZ_CHECK(r == XDP_DROP, "client: RST not dropped");
		v->model.rst_seen++;
		v->figs.dropped++;
	} else if ((fl & (W_SYN | W_ACK | W_FIN)) == (W_SYN | W_ACK)) {
		v->model.synack_seen++;
		if (!shape_ok) {
			FZ_CHECK(r == XDP_DROP, "client: unanswerable SYN-ACK not dropped");
			v->model.unanswered++;
			v->figs.dropped++;
		} else if (r == XDP_PASS) {
			/* Data mode, no room in this frame: to TC, untouched. */
			FZ_CHECK(v->mode == XP_CC_MODE_DATA && olen == len && !memcmp(in, out, len),
				 "client: SYN-ACK passed");
			v->figs.passed++;
		} else {
			FZ_CHECK(r == XDP_TX, "client: SYN-ACK not answered (%d)", r);
			struct wp b = check_reply(in, len, out, olen);
			v->figs.replies++;
			FZ_CHECK(b.seq == w.ack && b.ack == w.seq + 1, "client: ACK's numbers");
			v->model.acks_sent++;
			if (v->mode == XP_CC_MODE_DATA) {
				FZ_CHECK(b.payload <= v->data_len && (b.flags & W_FIN), "client: data segment");
				v->model.fins_sent++;
				if (b.payload) {
					v->model.data_sent++;
					v->model.data_bytes += b.payload;
				}
			} else {
				FZ_CHECK(b.flags == W_ACK && b.payload == 0, "client: handshake ACK");
			}
		}
	} else {
		if (!shape_ok) {
			FZ_CHECK(r == XDP_DROP, "client: unanswerable FIN not dropped");
			v->model.unanswered++;
			v->figs.dropped++;
		} else {
			FZ_CHECK(r == XDP_TX, "client: FIN not answered (%d)", r);
			struct wp b = check_reply(in, len, out, olen);
			v->figs.replies++;
			FZ_CHECK(b.flags == W_ACK && b.payload == 0 && b.seq == w.ack && b.ack == w.seq + w.payload + 1,
				 "client: final ACK");
			v->model.finack_answered++;
		}
	}
	cli_compare(v);
}

static void client_run(uint32_t mode, uint32_t data_len, const char *name)
{
	struct cli v = { .mode = mode, .data_len = data_len };
	/* Frames of the server's side to the client: reversed roles. */
	struct fz_world wd = { .our_mac = CLI_MAC, .peer_mac = SRV_MAC, .our4 = CLI4, .n_our4 = 2,
			       .our6 = CLI6, .n_our6 = 1, .peer4 = SRV4, .n_peer4 = 1, .peer6 = SRV6,
			       .n_peer6 = 1, .dport_lo = CPORT_LO, .dport_hi = CPORT_HI + 5,
			       .sport_lo = PORTS_LO, .sport_hi = PORTS_HI, .ctrl_port = CTRL_PORT };
	uint8_t buf[MAXF], opt[40];

	fz_state = seed ^ mode;
	v.c = xdp_connect_bpf__open();
	assert_non_null(v.c);
	v.c->rodata->config.mode = mode;
	v.c->rodata->config.data_len = data_len;
	v.c->rodata->config.cport_lo = CPORT_LO;
	v.c->rodata->config.cport_hi = CPORT_HI;
	v.c->rodata->config.dport_lo = PORTS_LO;
	v.c->rodata->config.dport_hi = PORTS_HI;
	v.c->rodata->config.ctrl_port = CTRL_PORT;
	assert_int_equal(xdp_connect_bpf__load(v.c), 0);
	v.fd = bpf_program__fd(v.c->progs.xdp_connect);
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len = fz_frame(&wd, buf, 2048, opt);

		if (fz_pct(40))
			len = fz_mutate(buf, len, 2048);
		cli_one(&v, buf, len);
	}
	report(name, &v.figs);
	assert_true(v.model.acks_sent > 0 && v.model.finack_answered > 0 && v.model.rst_seen > 0 &&
		    v.model.unanswered > 0);
	xdp_connect_bpf__destroy(v.c);
}

/* The data mode's TC fallback (tc_connect) on the same frames: what it
 * does not build a data segment for goes on untouched (TC_ACT_OK); a
 * test flow's SYN-ACK becomes the data segment, redirected back out. (In
 * the real pipeline it only sees the SYN-ACKs XDP had no room for.) */
static void test_client_tc(void **state)
{
	struct xdp_connect_bpf *c = xdp_connect_bpf__open();
	struct fz_world wd = { .our_mac = CLI_MAC, .peer_mac = SRV_MAC, .our4 = CLI4, .n_our4 = 2,
			       .our6 = CLI6, .n_our6 = 1, .peer4 = SRV4, .n_peer4 = 1, .peer6 = SRV6,
			       .n_peer6 = 1, .dport_lo = CPORT_LO, .dport_hi = CPORT_HI + 5,
			       .sport_lo = PORTS_LO, .sport_hi = PORTS_HI, .ctrl_port = CTRL_PORT };
	uint8_t buf[MAXF], out[MAXF], opt[40];
	struct figs figs = { 0 };
	struct xp_cc_counters model = { 0 }, got;

	(void)state;
	assert_non_null(c);
	c->rodata->config.mode = XP_CC_MODE_DATA;
	c->rodata->config.data_len = 1000;
	c->rodata->config.cport_lo = CPORT_LO;
	c->rodata->config.cport_hi = CPORT_HI;
	c->rodata->config.dport_lo = PORTS_LO;
	c->rodata->config.dport_hi = PORTS_HI;
	c->rodata->config.ctrl_port = CTRL_PORT;
	assert_int_equal(xdp_connect_bpf__load(c), 0);
	fz_state = seed ^ 0x7c;
	for (cur_frame = 0; cur_frame < nframes; cur_frame++) {
		size_t len = fz_frame(&wd, buf, 2048, opt);
		struct wp w;
		int shape_ok;

		if (fz_pct(40))
			len = fz_mutate(buf, len, 2048);
		cur_buf = buf;
		cur_len = len;
		figs.frames++;
		int test = client_flow(buf, len, &w, &shape_ok) && (w.flags & (W_SYN | W_ACK | W_FIN)) == (W_SYN | W_ACK);
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len, .data_out = out,
			    .data_size_out = MAXF);
		if (bpf_prog_test_run_opts(bpf_program__fd(c->progs.tc_connect), &o)) {
			/* The kernel makes no skb of an untagged IP frame too
			 * short for its IP header (EINVAL): nothing to run. */
			uint16_t et = w_get16(buf + 12);
			FZ_CHECK(errno == EINVAL && ((et == W_ETH_IP && len < 34) || (et == W_ETH_IPV6 && len < 54)),
				 "BPF_PROG_RUN tc_connect: %s", strerror(errno));
			figs.aborted++;
			continue;
		}
		int r = (int)o.retval;
		if (!test) {
			FZ_CHECK(r == 0 /* TC_ACT_OK */ && o.data_size_out == len && !memcmp(buf, out, len),
				 "tc_connect touched a frame it does not answer (%d)", r);
			figs.passed++;
			continue;
		}
		figs.test++;
		if (!shape_ok) {
			FZ_CHECK(r == 2 /* TC_ACT_SHOT */, "tc_connect: unanswerable SYN-ACK not dropped (%d)", r);
			figs.dropped++;
			continue;
		}
		FZ_CHECK(r == 7 /* TC_ACT_REDIRECT */, "tc_connect: SYN-ACK not answered (%d)", r);
		struct wp b = check_reply(buf, len, out, o.data_size_out);
		FZ_CHECK(b.seq == w.ack && b.ack == w.seq + 1 && (b.flags & W_FIN) && b.payload <= 1000,
			 "tc_connect: data segment's numbers");
		figs.replies++;
		model.acks_sent++;
		model.fins_sent++;
		model.data_tc += b.payload > 0;
		model.data_sent += b.payload > 0;
		model.data_bytes += b.payload;
		/* Zero bytes: the payload adds nothing to the checksum, which
		 * only holds if it really is zeroes. */
		for (size_t i = b.l4 + b.hlen; i < b.l4 + b.l4len; i++)
			FZ_CHECK(out[i] == 0, "tc_connect: payload byte %zu not zero", i);
		percpu_sum(bpf_map__fd(c->maps.cc_counters), 0, sizeof(got), &got);
		for (size_t k = 0; k < sizeof(got) / 8; k++)
			FZ_CHECK(((__u64 *)&got)[k] == ((__u64 *)&model)[k], "tc_connect counter %zu", k);
	}
	report("client TC fallback (data mode; \"aborted\": frames the kernel makes no skb of)", &figs);
	assert_true(figs.replies > 0);
	xdp_connect_bpf__destroy(c);
}

static void test_client_rst(void **state) { (void)state; client_run(XP_CC_MODE_RST, 0, "client (RST mode)"); }
static void test_client_data(void **state) { (void)state; client_run(XP_CC_MODE_DATA, 100, "client (data mode)"); }

#endif /* XDPPERF_TESTS_FUZZ_CLIENT_H */
