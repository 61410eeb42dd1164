// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for what reaches the XDP connection engine's programs and is not a
 * test connection's next step: the rest of a client's segments, SYNs with
 * IP options, slots without XP_SLOT_RESPOND, other traffic, the client's
 * family filter, the reply redirect, many connections at once. Frames go
 * through the loaded programs with BPF_PROG_RUN, as in test_handshake.c.
 * Needs root.
 */
#include "tests/bpf/handshake_fixture.h"


/* Client RSTs and other segments to a RESPOND slot are counted and dropped. */
static void test_server_drops_rest(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;

	len = client_frame(&P4, 40030, PORT_LO, F_RST, 1, 0, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P4, 40030, PORT_LO, F_RST | F_ACK, 1, 2, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 40030, PORT_LO, F_SYN | F_ACK, 1, 2, 1, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 40030, PORT_LO, 0, 1, 2, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 4, .tcp_rst = 2, .tcp_synack = 1,
		.ipv4_pkts = 4, .noreply_other = 4 });
}

/* A SYN with IPv4 options is counted but not answered (what would we echo?). */
static void test_syn_ip_options_not_answered(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], opt[256];
	size_t len;

	len = client_frame(&P4, 40040, PORT_LO, F_SYN, 1, 0, 1, 0, buf, sizeof(buf));
	/* Insert 4 bytes of NOP options: IHL 6. */
	memcpy(opt, buf, 34);
	memset(opt + 34, 1, 4);
	memcpy(opt + 38, buf + 34, len - 34);
	opt[14] = 0x46;
	opt[17] = (uint8_t)(opt[17] + 4);
	opt[24] = opt[25] = 0;
	{
		uint16_t ck = csum_ipv4_hdr(opt + 14, 24);
		memcpy(opt + 24, &ck, 2);
	}
	assert_int_equal(run_srv(e, opt, len + 4, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 1, .tcp_syn = 1, .ipv4_pkts = 1,
		.noreply_shape = 1 });
}

/* A slot without XP_SLOT_RESPOND behaves as before: count, drop, untouched. */
static void test_slot_without_respond(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;

	set_slot(e->srv, XP_SLOT_ACTIVE, XP_CLOSE_RST);
	len = client_frame(&P4, 40050, PORT_LO, F_SYN, 1, 0, 1, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_int_equal(olen, len);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P4, 40050, PORT_LO, F_ACK, 2, 12345, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 40050, PORT_LO, F_ACK | F_FIN, 2, 12345, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_syn = 1, .tcp_ack_only = 1,
		.tcp_fin = 1, .ipv4_pkts = 3 });

	/* With XP_SLOT_PASS: passed, as socket tests need. */
	set_slot(e->srv, XP_SLOT_ACTIVE | XP_SLOT_PASS, XP_CLOSE_NONE);
	len = client_frame(&P6, 40050, PORT_LO, F_SYN, 1, 0, 1, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_PASS);
	assert_memory_equal(out, buf, len);
	/* RESPOND|PASS: answered frames go back out, the rest is passed. */
	set_slot(e->srv, XP_SLOT_ACTIVE | XP_SLOT_PASS | XP_SLOT_RESPOND, XP_CLOSE_NONE);
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_TX);
	len = client_frame(&P6, 40050, PORT_LO, F_ACK, 2, 12345, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_PASS);
	assert_int_equal(srv_counters(e).cookie_invalid, 1);
}

/* Non-test traffic and the control connection pass both programs untouched. */
static void test_non_test_traffic_passes(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;
	uint8_t arp[60] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0xc1, 0, 0, 0, 0x01,
		0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01,
	};
	struct {
		const struct peer *p;
		uint16_t sport, dport;
		uint8_t flags;
	} srv_rows[] = {
		{ &P4, 40000, CTRL_PORT, F_SYN },       /* control connection */
		{ &P6, 40000, CTRL_PORT, F_ACK },
		{ &P4, CTRL_PORT, PORT_LO, F_SYN },     /* control port as source */
		{ &P4, 40000, PORT_LO - 1, F_SYN },     /* not a test port */
		{ &P6, 40000, 22, F_ACK | F_PSH },
	}, cli_rows[] = {
		/* Seen from the client: server -> client segments. */
		{ &P4, CTRL_PORT, 40000, F_SYN | F_ACK },  /* control connection */
		{ &P4, PORT_LO, CTRL_PORT, F_SYN | F_ACK },
		{ &P4, PORT_LO - 1, 40000, F_SYN | F_ACK }, /* not from a test port */
		{ &P6, PORT_HI + 1, 40000, F_RST },
		{ &P4, PORT_LO, CPORT_LO - 1, F_SYN | F_ACK }, /* not to a client port */
		{ &P6, PORT_LO, CPORT_HI + 1, F_FIN | F_ACK },
		{ &P4, PORT_LO, 40000, F_ACK },            /* test flow, nothing to answer */
		{ &P6, 80, 55555, F_ACK | F_PSH },
	};

	/* The control port is mapped to the slot: it must pass anyway. */
	{
		uint32_t p = CTRL_PORT, v = SLOT + 1;
		assert_int_equal(bpf_map_update_elem(bpf_map__fd(e->srv->maps.port_slot), &p, &v, 0), 0);
	}
	for (size_t i = 0; i < sizeof(srv_rows) / sizeof(srv_rows[0]); i++) {
		len = client_frame(srv_rows[i].p, srv_rows[i].sport, srv_rows[i].dport,
				   srv_rows[i].flags, 1, 0, srv_rows[i].flags == F_SYN, 0,
				   buf, sizeof(buf));
		assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_PASS);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	assert_int_equal(run_srv(e, arp, sizeof(arp), out, &olen), XDP_PASS);
	assert_memory_equal(out, arp, sizeof(arp));
	expect_srv(e, (struct xp_counters){ 0 });

	for (size_t i = 0; i < sizeof(cli_rows) / sizeof(cli_rows[0]); i++) {
		len = client_frame(cli_rows[i].p, cli_rows[i].sport, cli_rows[i].dport,
				   cli_rows[i].flags, 1, 2, cli_rows[i].flags & F_SYN, 0,
				   buf, sizeof(buf));
		assert_int_equal(run_cli(e, buf, len, out, &olen), XDP_PASS);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	assert_int_equal(run_cli(e, arp, sizeof(arp), out, &olen), XDP_PASS);
	/* UDP from a test port to a client port is not TCP: passed. */
	{
		struct frame_spec s = { 0 };
		const char *err;

		assert_int_equal(xp_addr_parse(P4.saddr, &s.src), 0);
		assert_int_equal(xp_addr_parse(P4.caddr, &s.dst), 0);
		s.l4_proto = IPPROTO_UDP;
		s.sport = PORT_LO;
		s.dport = 40000;
		s.frame_size = 64;
		len = frame_build(&s, buf, sizeof(buf), &err);
		assert_int_equal(run_cli(e, buf, len, out, &olen), XDP_PASS);
		assert_memory_equal(out, buf, len);
	}
	expect_cli(e, (struct xp_cc_counters){ .passed = 10 });
}

/* config.family 4: IPv6 SYN-ACKs are not ours. */
static void test_client_family_filter(void **state)
{
	struct env *e = *state;
	struct conn c4 = { .p = &P4, .sport = 41000, .dport = PORT_LO };
	struct conn c6 = { .p = &P6, .sport = 41000, .dport = PORT_LO };
	uint8_t out[256];
	size_t olen;

	do_syn(e, &c6);
	assert_int_equal(run_cli(e, c6.synack, c6.synack_len, out, &olen), XDP_PASS);
	assert_memory_equal(out, c6.synack, c6.synack_len);
	do_syn(e, &c4);
	do_client_ack(e, &c4, 0);
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = 1, .acks_sent = 1, .passed = 1 });
}

/* With the redirect knob, replies leave as XDP_REDIRECT (to the ingress
 * interface) instead of XDP_TX, rewritten exactly the same way. */
static void test_reply_redirect(void **state)
{
	struct env *e = *state;
	uint8_t syn[256], synack[256], ack[256], finack[256], last[256];
	size_t l1, l2, l3, l4, l5;
	struct seg s;

	l1 = client_frame(&P6V, 44444, PORT_LO, F_SYN, CLIENT_ISN, 0, 1, 0, syn, sizeof(syn));
	assert_int_equal(run_srv(e, syn, l1, synack, &l2), XDP_REDIRECT);
	s = parse(synack, l2);
	assert_int_equal(s.flags, F_SYN | F_ACK);
	assert_int_equal(run_cli(e, synack, l2, ack, &l3), XDP_REDIRECT);
	assert_int_equal(parse(ack, l3).flags, F_ACK | F_FIN);
	assert_int_equal(run_srv(e, ack, l3, finack, &l4), XDP_REDIRECT);
	assert_int_equal(parse(finack, l4).flags, F_ACK | F_FIN);
	assert_int_equal(run_cli(e, finack, l4, last, &l5), XDP_REDIRECT);
	assert_int_equal(parse(last, l5).ack, s.seq + 2);
	assert_int_equal(run_srv(e, last, l5, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_syn = 1, .tcp_fin = 1,
		.tcp_ack_only = 1, .ipv6_pkts = 3, .synack_sent = 1, .conn_established = 1,
		.fin_answered = 1, .noreply_other = 1 });
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = 1, .acks_sent = 1,
		.fins_sent = 1, .finack_answered = 1 });
}

/* Many flows in one go: every handshake validates (cookies per flow). */
static void test_many_connections(void **state)
{
	struct env *e = *state;
	const int n = 2000;

	for (int i = 0; i < n; i++) {
		const struct peer *p = (i & 1) ? &P6 : &P4;
		uint8_t syn[256], synack[256], ack[256], rst[256];
		size_t l1, l2, l3, l4;
		uint16_t sport = (uint16_t)(CPORT_LO + i * 7);
		uint16_t dport = (uint16_t)(PORT_LO + i % 16);

		l1 = client_frame(p, sport, dport, F_SYN, (uint32_t)i * 0x9e3779b9u, 0, 1, 0,
				  syn, sizeof(syn));
		assert_int_equal(run_srv(e, syn, l1, synack, &l2), XDP_TX);
		assert_int_equal(run_cli(e, synack, l2, ack, &l3), XDP_TX);
		assert_int_equal(run_srv(e, ack, l3, rst, &l4), XDP_TX);
		assert_int_equal(run_cli(e, rst, l4, NULL, NULL), XDP_DROP);
	}
	expect_srv(e, (struct xp_counters){ .pkts = 2 * n, .tcp_syn = n, .tcp_ack_only = n,
		.ipv4_pkts = n, .ipv6_pkts = n, .synack_sent = n, .conn_established = n,
		.rst_sent = n });
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = n, .acks_sent = n, .rst_seen = n });
}


int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_server_drops_rest, setup_rst),
		T(test_syn_ip_options_not_answered, setup_rst),
		T(test_slot_without_respond, setup_rst),
		T(test_non_test_traffic_passes, setup_rst),
		T(test_client_family_filter, setup_v4only),
		T(test_reply_redirect, setup_redirect),
		T(test_many_connections, setup_rst),
#undef T
	};

	return handshake_main("test_handshake_paths", "handshake_paths", tests, sizeof(tests) / sizeof(tests[0]));
}
