// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Tests for the XDP connection engine's data mode (XP_CC_MODE_DATA): the
 * client's ACK carries the request, in XDP (bpf/xdp_connect.bpf.c) or from the
 * TC program; the server answers, caps and closes it. Frames go through the
 * loaded programs with BPF_PROG_RUN, as in test_handshake.c. Needs root.
 */
#include "tests/bpf/handshake_fixture.h"

/* ---------------------------------------------------------------------- */
/* Data mode (XP_CC_MODE_DATA)                                            */
/* ---------------------------------------------------------------------- */

static size_t l2l3_len(const struct peer *p)
{
	return (strchr(p->caddr, ':') ? 54u : 34u) + (p->vlan ? 4 : 0);
}

static int all_zero(const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

/* SYN-ACK (plus trailer bytes after it in the frame) -> client in data
 * mode: checks the ACK|PSH|FIN segment with n zero bytes (the checksums,
 * which cover them, are checked by parse()). */
static struct seg do_client_data_tr(struct env *e, struct conn *c, size_t trailer, uint8_t *out,
				    size_t *olen, uint32_t n)
{
	struct seg in = parse(c->synack, c->synack_len), s;

	if (c->via_tc)
		assert_int_equal(run_tc(e, c->synack, c->synack_len + trailer, out, olen), TC_ACT_REDIRECT_);
	else
		assert_int_equal(run_cli(e, c->synack, c->synack_len + trailer, out, olen), XDP_TX);
	s = parse(out, *olen);
	expect_addressed_back(&in, &s);
	assert_int_equal(s.flags, n ? (F_ACK | F_PSH | F_FIN) : (F_ACK | F_FIN));
	assert_int_equal(s.seq, CLIENT_ISN + 1);  /* the data starts at ISN + 1 */
	assert_int_equal(s.ack, c->cookie + 1);
	assert_int_equal(s.window, 502);
	assert_int_equal(s.optlen, 12);
	assert_memory_equal(s.opt, "\x01\x01\x08\x0a", 4);
	assert_int_equal(s.tsval, in.tsecr);
	assert_int_equal(s.tsecr, in.tsval);
	assert_int_equal(s.payload, n);
	assert_int_equal(*olen, l2l3_len(c->p) + 32 + n);
	assert_true(all_zero(out + *olen - n, n));
	return s;
}

static struct seg do_client_data(struct env *e, struct conn *c, uint8_t *out, size_t *olen,
				 uint32_t n)
{
	return do_client_data_tr(e, c, 0, out, olen, n);
}

/* The whole data-mode connection: SYN -> SYN-ACK -> ACK|PSH|FIN + n bytes ->
 * server: established, n data bytes, FIN-ACK -> client: final ACK -> server:
 * recognised as the ACK of its FIN (not a forgery), dropped. */
static void data_connection_via(struct env *e, const struct peer *p, uint16_t sport, uint32_t n,
				int via_tc)
{
	struct conn c = { .p = p, .sport = sport, .dport = PORT_LO + 7, .via_tc = via_tc };
	int v6 = strchr(p->caddr, ':') != NULL;
	uint8_t data[2048], finack[256], last[256];
	size_t data_len_out, finack_len, last_len;
	struct xp_counters srv = { 0 };
	struct seg in, out;

	do_syn(e, &c);
	in = do_client_data(e, &c, data, &data_len_out, n);
	/* (XDP counts the SYN-ACKs it sees, before it hands one to TC) */
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = !via_tc, .acks_sent = 1, .fins_sent = 1,
		.data_sent = 1, .data_bytes = n, .data_tc = !!via_tc });

	assert_int_equal(run_srv(e, data, data_len_out, finack, &finack_len), XDP_TX);
	out = parse(finack, finack_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_FIN | F_ACK);
	assert_int_equal(out.seq, c.cookie + 1);
	assert_int_equal(out.ack, CLIENT_ISN + 1 + n + 1); /* the data, then the FIN */
	assert_int_equal(out.window, 502);
	assert_int_equal(out.optlen, 12);
	assert_int_equal(out.tsecr, in.tsval);
	assert_int_equal(finack_len, l2l3_len(p) + 32);
	srv.pkts = 2; srv.tcp_syn = 1; srv.tcp_fin = 1; srv.data_pkts = 1; srv.data_bytes = n;
	srv.synack_sent = 1; srv.conn_established = 1; srv.fin_answered = 1;
	if (v6) srv.ipv6_pkts = 2; else srv.ipv4_pkts = 2;
	expect_srv(e, srv);

	in = out;
	assert_int_equal(run_cli(e, finack, finack_len, last, &last_len), XDP_TX);
	out = parse(last, last_len);
	expect_reply_of(&in, &out);
	assert_int_equal(out.flags, F_ACK);
	assert_int_equal(out.seq, CLIENT_ISN + 1 + n + 1);
	assert_int_equal(out.ack, c.cookie + 2);
	assert_int_equal(out.tsecr, in.tsval);
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = !via_tc, .acks_sent = 1, .fins_sent = 1,
		.data_sent = 1, .data_bytes = n, .data_tc = !!via_tc, .finack_answered = 1 });

	assert_int_equal(run_srv(e, last, last_len, NULL, NULL), XDP_DROP);
	srv.pkts++; srv.tcp_ack_only++; srv.noreply_other++;
	if (v6) srv.ipv6_pkts++; else srv.ipv4_pkts++;
	expect_srv(e, srv); /* established once, cookie_invalid 0 */
}

static void data_connection(struct env *e, const struct peer *p, uint16_t sport, uint32_t n)
{
	data_connection_via(e, p, sport, n, 0);
}

static void test_data_connection_v4(void **state) { data_connection(*state, &P4, 40100, DATA_LEN); }
static void test_data_connection_v6(void **state) { data_connection(*state, &P6, 40101, DATA_LEN); }
static void test_data_connection_v4_vlan(void **state) { data_connection(*state, &P4V, 40102, DATA_LEN); }
static void test_data_connection_v6_vlan(void **state) { data_connection(*state, &P6V, 40103, DATA_LEN); }
static void test_data_connection_max(void **state)
{
	data_connection(*state, &P6V, 40104, XP_CC_DATA_MAX); /* the largest frame: 1494 bytes */
}

/* Forged data segments: random ack, the right cookie with another ISN /
 * source port / time step, data without FIN. All counted, cookie_invalid,
 * dropped untouched, no FIN-ACK. Then a final ACK one off the data length. */
static void test_forged_data(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 20101, .dport = PORT_LO + 1 };
	uint8_t buf[2048], out[2048];
	size_t len, olen;
	const uint8_t dfin = F_ACK | F_PSH | F_FIN;
	struct {
		uint16_t sport;
		uint8_t flags;
		uint32_t seq, ack;
	} rows[5];

	do_syn(e, &c);
	rows[0] = (typeof(rows[0])){ 20101, dfin, CLIENT_ISN + 1, (uint32_t)time(NULL) * 2654435761u };
	rows[1] = (typeof(rows[0])){ 20101, dfin, CLIENT_ISN + 2, c.cookie + 1 };
	rows[2] = (typeof(rows[0])){ 20102, dfin, CLIENT_ISN + 1, c.cookie + 1 };
	rows[3] = (typeof(rows[0])){ 20101, dfin, CLIENT_ISN + 1, (c.cookie ^ 0x10) + 1 };
	rows[4] = (typeof(rows[0])){ 20101, F_ACK | F_PSH, CLIENT_ISN + 1, c.cookie + 7 };
	for (size_t i = 0; i < 5; i++) {
		len = client_frame(&P4, rows[i].sport, PORT_LO + 1, rows[i].flags, rows[i].seq,
				   rows[i].ack, 0, DATA_LEN, buf, sizeof(buf));
		if (run_srv(e, buf, len, out, &olen) != XDP_DROP)
			fail_msg("forged data segment %zu answered", i);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	expect_srv(e, (struct xp_counters){ .pkts = 6, .tcp_syn = 1, .tcp_fin = 4, .data_pkts = 5,
		.data_bytes = 5 * DATA_LEN, .ipv4_pkts = 6, .synack_sent = 1, .cookie_invalid = 5,
		.noreply_other = 5 });

	/* The genuine one still completes... */
	do_client_data(e, &c, buf, &len, DATA_LEN);
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	assert_int_equal(parse(out, olen).flags, F_FIN | F_ACK);
	/* ...and a final ACK with another data length is no ACK of our FIN. */
	len = client_frame(&P4, 20101, PORT_LO + 1, F_ACK, CLIENT_ISN + DATA_LEN + 3, c.cookie + 2, 0, 0,
			   buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	assert_int_equal(srv_counters(e).conn_established, 1);
	assert_int_equal(srv_counters(e).cookie_invalid, 6);
	/* The right one is. */
	len = client_frame(&P4, 20101, PORT_LO + 1, F_ACK, CLIENT_ISN + DATA_LEN + 2, c.cookie + 2, 0, 0,
			   buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, NULL, NULL), XDP_DROP);
	assert_int_equal(srv_counters(e).cookie_invalid, 6);
	assert_int_equal(srv_counters(e).fin_answered, 1);
}

/* Rewrite a 16-bit TCP field of a frame (no VLAN, IPv4), fixing the checksum. */
static void patch_tcp16(uint8_t *f, size_t off, uint16_t val)
{
	uint8_t *th = f + 34;
	uint16_t old, nv = htons(val), ck;

	memcpy(&old, th + off, 2);
	memcpy(&ck, th + 16, 2);
	ck = csum_replace16(ck, old, nv);
	memcpy(th + off, &nv, 2);
	memcpy(th + 16, &ck, 2);
}

/* The client sends no more than the SYN-ACK allows: its window (never
 * scaled in a SYN-ACK) and its MSS less our options (RFC 6691); a window of
 * 0 leaves a plain ACK|FIN.
 * Whatever trails the SYN-ACK's IP datagram (Ethernet padding) is not sent
 * as payload: the payload is zeroes. */
static void test_data_capped_by_synack(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 40200, .dport = PORT_LO };
	uint8_t buf[2048];
	size_t len;
	uint64_t sent = 0;

	do_syn(e, &c);
	/* MSS option at TCP offset 22 (MSS is the first option). */
	assert_int_equal(c.synack[34 + 20], 2);
	patch_tcp16(c.synack, 14, 300);          /* window 300 */
	parse(c.synack, c.synack_len);
	do_client_data(e, &c, buf, &len, 300);
	sent += 300;
	patch_tcp16(c.synack, 14, 65535);
	patch_tcp16(c.synack, 22, 536);          /* MSS 536, less 12 for timestamps */
	do_client_data(e, &c, buf, &len, 524);
	sent += 524;
	patch_tcp16(c.synack, 22, 1460);
	patch_tcp16(c.synack, 14, 0);            /* zero window: no data */
	do_client_data(e, &c, buf, &len, 0);
	patch_tcp16(c.synack, 14, 65535);
	/* 40 bytes of non-zero trailer after the datagram. */
	memset(c.synack + c.synack_len, 0xee, 40);
	do_client_data_tr(e, &c, 40, buf, &len, XP_CC_DATA_MAX);
	sent += XP_CC_DATA_MAX;
	expect_cli(e, (struct xp_cc_counters){ .synack_seen = 4, .acks_sent = 4, .fins_sent = 4,
		.data_sent = 3, .data_bytes = sent });
}

/* Close mode RST: a valid handshake segment with data and no FIN is
 * established and reset (seq = its ack); with FIN it gets the FIN-ACK. */
/* The TC fallback (SYN-ACKs whose XDP frame had no room) builds the same
 * segment from an skb that must grow (BPF_PROG_RUN's skb has almost no
 * tailroom: bpf_skb_change_tail reallocates), with the payload zeroed. */
static void test_tc_data_connection_v4(void **state) { data_connection_via(*state, &P4, 40400, DATA_LEN, 1); }
static void test_tc_data_connection_v6(void **state) { data_connection_via(*state, &P6, 40401, DATA_LEN, 1); }
static void test_tc_data_connection_v4_vlan(void **state) { data_connection_via(*state, &P4V, 40402, DATA_LEN, 1); }
static void test_tc_data_connection_v6_vlan(void **state)
{
	data_connection_via(*state, &P6V, 40403, XP_CC_DATA_MAX, 1);
}

/* The TC program leaves alone everything but SYN-ACKs of test flows in
 * data mode; in other modes it is not even that. */
static void test_tc_passes_the_rest(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P4, .sport = 40410, .dport = PORT_LO, .via_tc = 1 };
	uint8_t buf[256], out[2048];
	size_t len, olen;
	struct {
		const struct peer *p;
		uint16_t sport, dport;
		uint8_t flags;
	} rows[] = {
		{ &P4, PORT_LO, 40000, F_ACK | F_FIN },   /* a server FIN: XDP's */
		{ &P6, PORT_LO, 40000, F_RST },
		{ &P4, PORT_LO, 40000, F_ACK },
		{ &P4, CTRL_PORT, 40000, F_SYN | F_ACK }, /* control connection */
		{ &P4, PORT_LO - 1, 40000, F_SYN | F_ACK }, /* not a test port */
		{ &P6, PORT_LO, CPORT_HI + 1, F_SYN | F_ACK },
		{ &P4, 40000, PORT_LO, F_SYN },           /* the other way */
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		len = client_frame(rows[i].p, rows[i].sport, rows[i].dport, rows[i].flags, 1, 2,
				   rows[i].flags & F_SYN, 0, buf, sizeof(buf));
		assert_int_equal(run_tc(e, buf, len, out, &olen), TC_ACT_OK_);
		assert_int_equal(olen, len);
		assert_memory_equal(out, buf, len);
	}
	expect_cli(e, (struct xp_cc_counters){ 0 });
	do_syn(e, &c);
	do_client_data(e, &c, out, &olen, DATA_LEN);
	assert_int_equal(cli_counters(e).data_tc, 1);
}

static void test_tc_idle_in_other_modes(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P6, .sport = 40420, .dport = PORT_LO };
	uint8_t out[256];
	size_t olen;

	do_syn(e, &c);
	assert_int_equal(run_tc(e, c.synack, c.synack_len, out, &olen), TC_ACT_OK_);
	assert_int_equal(olen, c.synack_len);
	assert_memory_equal(out, c.synack, c.synack_len);
	expect_cli(e, (struct xp_cc_counters){ 0 });
}

static void test_data_close_rst(void **state)
{
	struct env *e = *state;
	struct conn c = { .p = &P6, .sport = 40300, .dport = PORT_HI };
	uint8_t buf[512], out[512];
	size_t len, olen;
	struct seg s;

	do_syn(e, &c);
	len = client_frame(&P6, 40300, PORT_HI, F_ACK | F_PSH, CLIENT_ISN + 1, c.cookie + 1, 0, 10,
			   buf, sizeof(buf));
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(s.flags, F_RST);
	assert_int_equal(s.seq, c.cookie + 1);
	do_client_data(e, &c, buf, &len, 1);
	assert_int_equal(run_srv(e, buf, len, out, &olen), XDP_TX);
	s = parse(out, olen);
	assert_int_equal(s.flags, F_FIN | F_ACK);
	assert_int_equal(s.ack, CLIENT_ISN + 3);
	expect_srv(e, (struct xp_counters){ .pkts = 3, .tcp_syn = 1, .tcp_fin = 1, .data_pkts = 2,
		.data_bytes = 11, .ipv6_pkts = 3, .synack_sent = 1, .conn_established = 2,
		.fin_answered = 1, .rst_sent = 1 });
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(fn, setup) cmocka_unit_test_setup_teardown(fn, setup, teardown)
		T(test_data_connection_v4, setup_data),
		T(test_data_connection_v6, setup_data),
		T(test_data_connection_v4_vlan, setup_data),
		T(test_data_connection_v6_vlan, setup_data),
		T(test_data_connection_max, setup_data_max),
		T(test_forged_data, setup_data),
		T(test_data_capped_by_synack, setup_data_max),
		T(test_data_close_rst, setup_data_rst),
		T(test_tc_data_connection_v4, setup_data),
		T(test_tc_data_connection_v6, setup_data),
		T(test_tc_data_connection_v4_vlan, setup_data),
		T(test_tc_data_connection_v6_vlan, setup_data_max),
		T(test_tc_passes_the_rest, setup_data),
		T(test_tc_idle_in_other_modes, setup_fin),
#undef T
	};

	return handshake_main("test_handshake_data", "handshake_data", tests, sizeof(tests) / sizeof(tests[0]));
}
