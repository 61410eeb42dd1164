// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for the XDP connection engine: the XP_SLOT_RESPOND path of
 * bpf/server.bpf.c (server) and bpf/xdp_connect.bpf.c (client). Frames go
 * through the loaded programs with BPF_PROG_RUN; what one program sends
 * (XDP_TX, the rewritten frame in data_out) is fed to the other, so a whole
 * handshake and close run without any traffic:
 *
 *   client SYN (user/frame/frame.c) -> server: SYN-ACK with a SYN cookie
 *                             -> client: ACK (or ACK|FIN, or ACK|PSH|FIN
 *                                with data)
 *                             -> server: established; RST (or FIN-ACK)
 *                             -> client: RST dropped (or final ACK) ...
 *
 * Every frame out is parsed and checked field by field, with both checksums
 * verified by user/frame/csum.c. The cookie is recomputed here from the design in
 * bpf/lib/syncookie.h (SipHash-2-4 reference below, checked against the
 * reference vector of the SipHash paper) with the key the test loads, which
 * also lets the tests forge cookies from other time steps. Needs root.
 *
 * This file: the handshake and its closes (RST, FIN, none, keepalives),
 * forged ACKs, cookie time steps, SYN options. Data mode is in
 * test_handshake_data.c, what is not a test connection in test_handshake_paths.c.
 */
#include "tests/bpf/handshake_fixture.h"

/* ---------------------------------------------------------------------- */
/* Tests                                                                  */
/* ---------------------------------------------------------------------- */

static void test_siphash_reference(void **state)
{
	/* The SipHash paper's vector: key 00..0f, message 00..0e. */
	uint8_t key[16], msg[64];

	(void)state;
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	assert_int_equal(siphash24(key, msg, 15), 0xa129ca6149be45e5ULL);
	assert_int_equal(siphash24(key, msg, 0), 0x726fdb47dd0e0e31ULL);
	assert_int_equal(siphash24(key, msg, 8), 0x93f5f5799a932462ULL);
}

/* The full RST-mode connection, for one address family / VLAN setup. */
static void rst_connection(struct env *e, const struct peer *p, uint16_t sport)
{
	struct conn c = { .p = p, .sport = sport, .dport = PORT_LO + 5 };
	struct xp_counters srv = { 0 };
	struct xp_cc_counters cli = { 0 };
	struct seg in, out;
	size_t rst_len;
	int v6 = strchr(p->caddr, ':') != NULL;

	do_syn(e, &c);
	srv.pkts = 1; srv.tcp_syn = 1; srv.synack_sent = 1;
	if (v6) srv.ipv6_pkts = 1; else srv.ipv4_pkts = 1;
	expect_srv(e, srv);

	do_client_ack(e, &c, 0);
	cli.synack_seen = 1; cli.acks_sent = 1;
	expect_cli(e, cli);

	/* ACK -> server: established, and a RST with seq = its ack. */
	in = parse(c.ack, c.ack_len);
	assert_int_equal(run_srv(e, c.ack, c.ack_len, c.last, &rst_len), XDP_TX);
	out = parse(c.last, rst_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_RST);
	assert_int_equal(out.seq, c.cookie + 1);
	assert_int_equal(out.ack, 0);
	assert_int_equal(out.optlen, 0);
	assert_int_equal(rst_len, (v6 ? 54u : 34u) + (p->vlan ? 4 : 0) + 20);
	srv.pkts++; srv.tcp_ack_only++; srv.conn_established = 1; srv.rst_sent = 1;
	if (v6) srv.ipv6_pkts++; else srv.ipv4_pkts++;
	expect_srv(e, srv);

	/* RST -> client: counted, dropped. */
	assert_int_equal(run_cli(e, c.last, rst_len, NULL, NULL), XDP_DROP);
	cli.rst_seen = 1;
	expect_cli(e, cli);
}

static void test_rst_connection_v4(void **state) { rst_connection(*state, &P4, 40000); }
static void test_rst_connection_v6(void **state) { rst_connection(*state, &P6, 40001); }
static void test_rst_connection_v4_vlan(void **state) { rst_connection(*state, &P4V, 12345); }
static void test_rst_connection_v6_vlan(void **state) { rst_connection(*state, &P6V, 59999); }

/* FIN mode: ACK|FIN -> server: established + FIN-ACK -> client: final ACK
 * -> server: recognised as the ACK of our FIN, dropped quietly. */
static void fin_connection(struct env *e, const struct peer *p)
{
	struct conn c = { .p = p, .sport = 33333, .dport = PORT_HI };
	struct xp_counters srv;
	struct xp_cc_counters cli = { 0 };
	uint8_t finack[256], last[256];
	size_t finack_len, last_len;
	struct seg in, out;

	do_syn(e, &c);
	do_client_ack(e, &c, 1);
	cli.synack_seen = 1; cli.acks_sent = 1; cli.fins_sent = 1;
	expect_cli(e, cli);

	in = parse(c.ack, c.ack_len);
	assert_int_equal(run_srv(e, c.ack, c.ack_len, finack, &finack_len), XDP_TX);
	out = parse(finack, finack_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_FIN | F_ACK);
	assert_int_equal(out.seq, c.cookie + 1);
	assert_int_equal(out.ack, CLIENT_ISN + 2); /* the client's FIN took one */
	assert_int_equal(out.window, 502);
	assert_int_equal(out.optlen, 12);
	assert_int_equal(out.tsecr, in.tsval);
	srv = srv_counters(e);
	assert_int_equal(srv.conn_established, 1);
	assert_int_equal(srv.fin_answered, 1);
	assert_int_equal(srv.tcp_fin, 1);
	assert_int_equal(srv.rst_sent, 0);

	in = out;
	assert_int_equal(run_cli(e, finack, finack_len, last, &last_len), XDP_TX);
	out = parse(last, last_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_ACK);
	assert_int_equal(out.seq, CLIENT_ISN + 2);
	assert_int_equal(out.ack, c.cookie + 2);
	assert_int_equal(out.tsecr, in.tsval);
	cli.finack_answered = 1;
	expect_cli(e, cli);

	assert_int_equal(run_srv(e, last, last_len, NULL, NULL), XDP_DROP);
	srv = srv_counters(e);
	assert_int_equal(srv.pkts, 3);
	assert_int_equal(srv.tcp_ack_only, 1);
	assert_int_equal(srv.conn_established, 1); /* not twice */
	assert_int_equal(srv.cookie_invalid, 0);   /* not a forgery either */
	assert_int_equal(srv.fin_answered, 1);
	assert_int_equal(srv.synack_sent, 1);
}

static void test_fin_connection_v4(void **state) { fin_connection(*state, &P4); }
static void test_fin_connection_v6(void **state) { fin_connection(*state, &P6V); }

/* close_mode NONE: the connection is counted, the ACK dropped, no RST. */
static void test_close_none(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 20000, .dport = PORT_LO };

	do_syn(e, &c);
	do_client_ack(e, &c, 0);
	assert_int_equal(run_srv(e, c.ack, c.ack_len, NULL, NULL), XDP_DROP);
	expect_srv(e, (struct xp_counters){ .pkts = 2, .tcp_syn = 1, .tcp_ack_only = 1,
		.ipv4_pkts = 2, .synack_sent = 1, .conn_established = 1, .noreply_other = 1 });
}

/* What the slot's SYN-ACKs note in ka_steps (bpf/server.h) when they send
 * a cookie of step t: written here for steps a test cannot send in (the
 * past), as the server would have noted them then. */
static void ka_noted(struct env *e, uint32_t t)
{
	struct xp_ka_steps *ks = calloc(1, sizeof(*ks));
	uint32_t key = SLOT;
	int fd = bpf_map__fd(e->srv->maps.ka_steps);

	assert_non_null(ks);
	assert_int_equal(bpf_map_lookup_elem(fd, &key, ks), 0);
	ks->step[t % XP_KA_STEPS] = t;
	if (!ks->first || (int32_t)(t - (uint32_t)ks->first) < 0)
		ks->first = (1ull << 32) | t;
	assert_int_equal(bpf_map_update_elem(fd, &key, ks, BPF_ANY), 0);
	free(ks);
}

/*
 * Keepalives of held connections (seq = the client's ISN, ack = cookie + 1,
 * no data) are counted as keepalives, not invalid cookies, however old the
 * cookie up to 274 s (512 rounds of 8 steps of 67.1 ms): one from this step,
 * one from 1000 steps (67 s) ago. One from 4100 steps ago (275 s), one with
 * another ISN, and one with data are not keepalives (cookie_invalid). None
 * is answered. (The slot issued cookies in those three steps, ka_noted: the
 * search looks only at steps the slot issued cookies in, since its first,
 * test_keepalive_bound.c.)
 */
static void test_keepalives(void **state)
{
	struct env *e = *state;
	struct flow f = flow_of(&P4, 20300, PORT_LO);
	uint8_t buf[2048], out[2048];
	size_t len, olen;
	uint32_t t = now_step();
	struct {
		uint32_t seq, cookie;
		size_t data;
	} rows[] = {
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t, 3), 0 },
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t - 1000, 3), 0 },
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t - 4100, 3), 0 },
		{ CLIENT_ISN + 7, ref_cookie(&f, CLIENT_ISN, t - 1000, 3), 0 },
		{ CLIENT_ISN, ref_cookie(&f, CLIENT_ISN, t, 3), DATA_LEN },
	};

	ka_noted(e, t - 4100);
	ka_noted(e, t - 1000);
	ka_noted(e, t);

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		len = client_frame(&P4, 20300, PORT_LO, F_ACK, rows[i].seq, rows[i].cookie + 1, 0, rows[i].data,
				   buf, sizeof(buf));
		if (run_srv(e, buf, len, out, &olen) != XDP_DROP)
			fail_msg("keepalive row %zu answered", i);
		assert_memory_equal(out, buf, len);
	}
	expect_srv(e, (struct xp_counters){ .pkts = 5, .tcp_ack_only = 4, .data_pkts = 1, .data_bytes = DATA_LEN,
		.ipv4_pkts = 5, .keepalives = 2, .cookie_invalid = 3, .noreply_other = 5 });
}

/* Forged ACKs: random ack, right cookie on the wrong flow / wrong ISN. */
static void test_forged_ack(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 20001, .dport = PORT_LO + 1 };
	uint8_t buf[256], out[256];
	size_t len, olen;
	uint32_t invalid = 0;

	srandom((unsigned)time(NULL));
	for (int i = 0; i < 50; i++) {
		len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1,
				   (uint32_t)random() * 2654435761u + 1, 0, 0, buf, sizeof(buf));
		assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
		assert_memory_equal(out, buf, len); /* dropped untouched */
		invalid++;
	}
	do_syn(e, &c);
	/* Right cookie, other source port / other destination port / other
	 * client ISN / IPv6 instead of IPv4: all forgeries. */
	len = client_frame(&P4, 20002, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 20001, PORT_LO + 2, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 2, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	len = client_frame(&P6, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	/* Cookie with a flipped MSS index bit. */
	len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, (c.cookie ^ 1) + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	invalid += 5;
	expect_srv(e, (struct xp_counters){ .pkts = 56, .tcp_syn = 1, .tcp_ack_only = 55,
		.ipv4_pkts = 55, .ipv6_pkts = 1, .synack_sent = 1, .cookie_invalid = invalid,
		.noreply_other = invalid });

	/* And the genuine one still works (plain ACK without options). */
	len = client_frame(&P4, 20001, PORT_LO + 1, F_ACK, CLIENT_ISN + 1, c.cookie + 1, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	assert_int_equal(parse(out, olen).flags, F_RST);
	assert_int_equal(srv_counters(e).conn_established, 1);
}

/* Cookies from other time steps, made with the reference and the key. */
static void test_cookie_time_steps(void **state)
{
	struct env *e = *state;
	struct flow f = flow_of(&P4, 30000, PORT_LO + 3);
	uint8_t buf[256];
	size_t len;
	struct {
		int age;     /* steps before now; negative = future */
		int valid;
	} rows[] = {
		{ 0, 1 }, { 3, 1 }, { 5, 1 },       /* within 0..7 (margin for a step change) */
		{ 12, 0 }, { 100, 0 }, { 100000, 0 }, /* far past: alias to a younger step */
		{ -3, 0 },                            /* future */
	};
	uint64_t est = 0, inv = 0;

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		uint32_t t = now_step() - (uint32_t)rows[i].age;
		uint32_t ck = ref_cookie(&f, CLIENT_ISN, t, 3);

		len = client_frame(&P4, 30000, PORT_LO + 3, F_ACK, CLIENT_ISN + 1, ck + 1, 0, 0,
				   buf, sizeof(buf));
		assert_int_equal(run_srv(e, buf, len, NULL, NULL), rows[i].valid ? XDP_TX : XDP_DROP);
		if (rows[i].valid)
			est++;
		else
			inv++;
		if (srv_counters(e).conn_established != est || srv_counters(e).cookie_invalid != inv)
			fail_msg("cookie aged %d steps: established %llu invalid %llu", rows[i].age,
				 (unsigned long long)srv_counters(e).conn_established,
				 (unsigned long long)srv_counters(e).cookie_invalid);
	}
	assert_int_equal(srv_counters(e).rst_sent, 3);
}

/* SYNs with fewer options get fewer options back, and the frame resizes. */
static void test_syn_option_variants(void **state)
{
	struct env *e = *state;
	uint8_t buf[256], out[256];
	size_t len, olen;
	struct seg s;

	/* No options at all: MSS only; 60-byte padded SYN -> 58-byte SYN-ACK;
	 * MSS index 0 (TCP's default 536). */
	len = client_frame(&P4, 40010, PORT_LO, F_SYN, 7, 0, 0, 0, buf, sizeof(buf));
	assert_int_equal(len, 60);
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(olen, 58);
	assert_int_equal(s.optlen, 4);
	assert_true(s.has_mss && !s.has_ts && !s.has_sack && !s.has_ws);
	assert_int_equal(s.seq & 3, 0);
	assert_int_equal(s.ack, 8);

	/* MSS 1300, SACK-perm, WS, no timestamps (built by hand on a
	 * SYN without options: 02 04 05 14 | 01 03 03 05 | 01 01 04 02). */
	len = client_frame(&P4, 40011, PORT_LO, F_SYN, 9, 0, 1, 0, buf, sizeof(buf));
	{
		uint8_t *th = buf + 34;
		static const uint8_t o[12] = { 2, 4, 0x05, 0x14, 1, 3, 3, 5, 1, 1, 4, 2 };
		struct in_addr sa, da;

		memcpy(th + 20, o, 12);
		th[12] = (32 / 4) << 4;
		len = 14 + 20 + 32;
		buf[16] = 0; buf[17] = 52;              /* IP total length */
		buf[24] = buf[25] = 0;
		{
			uint16_t ck = csum_ipv4_hdr(buf + 14, 20);
			memcpy(buf + 24, &ck, 2);
		}
		th[16] = th[17] = 0;
		memcpy(&sa, buf + 26, 4);
		memcpy(&da, buf + 30, 4);
		{
			uint16_t ck = csum_l4_v4(&sa, &da, IPPROTO_TCP, th, 32);
			memcpy(th + 16, &ck, 2);
		}
	}
	parse(buf, len); /* our hand edit is valid */
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	/* MSS, NOP+WS, NOP NOP SACK-perm: Linux's order without timestamps. */
	assert_int_equal(s.optlen, 12);
	assert_memory_equal(s.opt + 4, "\x01\x03\x03\x07", 4);
	assert_memory_equal(s.opt + 8, "\x01\x01\x04\x02", 4);
	assert_int_equal(s.seq & 3, 1); /* 1300 -> index 1 */
	assert_int_equal(srv_counters(e).synack_sent, 2);
}

/* Only the segment that completes a handshake may carry data (the client's
 * data mode): data whose seq - 1 / ack - 1 is not a valid cookie (a forgery,
 * or the data of a real TCP client after its handshake, which nothing here
 * acknowledges) is counted as data and as cookie_invalid and dropped
 * untouched, FIN or not. A FIN without data is still answered unvalidated
 * (after a real client's data its ISN is unknown), with a headers-only frame. */
static void test_data_without_cookie(void **state)
{
	struct env *e = *state;
	uint8_t buf[512], out[512];
	size_t len, olen;
	struct seg s;

	len = client_frame(&P4, 40020, PORT_LO, F_ACK | F_PSH, 1000, 5000, 0, 100, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P6, 40020, PORT_LO, F_ACK | F_FIN, 1100, 5000, 0, 37, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_DROP);
	assert_memory_equal(out, buf, len);
	len = client_frame(&P6, 40020, PORT_LO, F_ACK | F_FIN, 1137, 5000, 0, 0, buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(s.flags, F_FIN | F_ACK);
	assert_int_equal(s.seq, 5000);
	assert_int_equal(s.ack, 1137 + 1);
	assert_int_equal(olen, 14 + 40 + 20);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_fin = 2, .data_pkts = 2,
		.data_bytes = 137, .ipv4_pkts = 1, .ipv6_pkts = 2, .cookie_invalid = 2,
		.fin_answered = 1, .noreply_other = 2 });
}


int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		cmocka_unit_test(test_siphash_reference),
		T(test_rst_connection_v4, setup_rst),
		T(test_rst_connection_v6, setup_rst),
		T(test_rst_connection_v4_vlan, setup_rst),
		T(test_rst_connection_v6_vlan, setup_rst),
		T(test_fin_connection_v4, setup_fin),
		T(test_fin_connection_v6, setup_fin),
		T(test_close_none, setup_none),
		T(test_keepalives, setup_none),
		T(test_forged_ack, setup_rst),
		T(test_cookie_time_steps, setup_rst),
		T(test_syn_option_variants, setup_rst),
		T(test_data_without_cookie, setup_rst),
#undef T
	};

	return handshake_main("test_handshake", "handshake", tests, sizeof(tests) / sizeof(tests[0]));
}
