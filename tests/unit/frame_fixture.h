/*
 * What the frame tests share (test_frame_build.c, test_frame_csum.c,
 * test_frame_rewrite.c): a deterministic random source, the textbook RFC 1071
 * sum they check csum.c against, the frame specs of the golden cases (the
 * CASES of tests/unit/gen_frames.py) and the independent checks of the
 * checksums in a built frame. Functions are static inline: not every test
 * file uses every one.
 */
#ifndef XDPPERF_TESTS_FRAME_FIXTURE_H
#define XDPPERF_TESTS_FRAME_FIXTURE_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "frame/csum.h"
#include "frame/frame.h"
#include "util/units.h"
#include "tests/lib/ref_sum.h" /* ref_csum: the tests' one RFC 1071 reference */

/* The generator's state: each test binary starts from this seed unless its
 * main() sets another. */
static uint32_t rng_state = 12345;

/* Deterministic xorshift so failures reproduce. */
static inline uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 17;
	rng_state ^= rng_state << 5;
	return rng_state;
}


/* The specs behind test_frame_build.c's GOLDEN; mirrors CASES in
 * gen_frames.py. Zero window/ttl exercise the defaults (65535 / 64). */
struct gcase {
	const char *name;
	bool v6;
	uint8_t proto;
	size_t size;
	uint8_t flags;
	uint32_t seq, ack;
	uint16_t window;
	uint8_t ttl;
	uint16_t vlan;
	uint8_t fill;
	bool syn_opts;
	uint16_t mss;
	bool no_payload;
};

#define DATA (TH_ACK | TH_PUSH)
static const struct gcase CASES[] = {
	{ "v4_tcp_64", false, IPPROTO_TCP, 64, DATA, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, false },
	{ "v4_tcp_1518", false, IPPROTO_TCP, 1518, DATA, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, false },
	{ "v6_tcp_78", true, IPPROTO_TCP, 78, DATA, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, false },
	{ "v4_udp_64", false, IPPROTO_UDP, 64, 0, 0, 0, 0, 0, 0, 0xab, false, 0, false },
	{ "v6_udp_66", true, IPPROTO_UDP, 66, 0, 0, 0, 0, 0, 0, 0xab, false, 0, false },
	{ "v6_udp_200", true, IPPROTO_UDP, 200, 0, 0, 0, 0, 3, 0, 0x5a, false, 0, false },
	{ "v4_tcp_vlan_64", false, IPPROTO_TCP, 64, DATA, 0x11223344, 0x55667788, 0, 0, 100, 0xab, false, 0, false },
	{ "v6_udp_vlan_128", true, IPPROTO_UDP, 128, 0, 0, 0, 0, 0, 4094, 0xab, false, 0, false },
	{ "v4_syn_opts", false, IPPROTO_TCP, 78, TH_SYN, 0x11223344, 0, 64240, 64, 0, 0xab, true, 0, false },
	{ "v6_syn_opts_mss", true, IPPROTO_TCP, 98, TH_SYN, 0x11223344, 0, 64240, 0, 0, 0xab, true, 8940, false },
	/* frame_size deliberately bogus: no_payload ignores it */
	{ "v4_ack_nopayload", false, IPPROTO_TCP, 1, TH_ACK, 0x11223344, 0x55667788, 0, 0, 0, 0xab, false, 0, true },
	{ "v4_udp_nopayload", false, IPPROTO_UDP, 0, 0, 0, 0, 0, 0, 0, 0xab, false, 0, true },
};
#define NCASES (sizeof(CASES) / sizeof(CASES[0]))

static inline void make_spec(const struct gcase *c, struct frame_spec *s)
{
	static const uint8_t smac[6] = { 2, 0, 0, 0, 0, 1 }, dmac[6] = { 2, 0, 0, 0, 0, 2 };

	memset(s, 0, sizeof(*s));
	memcpy(s->src_mac, smac, 6);
	memcpy(s->dst_mac, dmac, 6);
	assert_int_equal(xp_addr_parse(c->v6 ? "fd00::1" : "10.0.0.1", &s->src), 0);
	assert_int_equal(xp_addr_parse(c->v6 ? "fd00::2" : "10.0.0.2", &s->dst), 0);
	s->vlan_id = c->vlan;
	s->l4_proto = c->proto;
	s->sport = 40000;
	s->dport = 5001;
	s->tcp_flags = c->flags;
	s->seq = c->seq;
	s->ack = c->ack;
	s->window = c->window;
	s->ttl = c->ttl;
	s->tcp_syn_options = c->syn_opts;
	s->mss = c->mss;
	s->frame_size = c->size;
	s->payload_fill = c->fill;
	s->no_payload = c->no_payload;
}

/* Independent checks of the checksums in a built frame, neither using
 * user/frame/csum.c: here with ref_csum (tests/lib/ref_sum.h, the textbook sum) over the IPv4
 * header and over pseudo-header + L4 bytes (both must come out 0), and
 * again at the end of the test by tests/unit/gen_frames.py --verify (Python,
 * its own RFC 1071 sum and header parsing), which gets every frame as hex. */
static FILE *py_frames;
static unsigned py_count;

static inline void verify_checksums(const uint8_t *f, const struct frame_layout *lay)
{
	const uint8_t *ip = f + lay->l3_off;
	size_t l4_len = (size_t)(lay->payload_off - lay->l4_off) + lay->payload_len;
	static uint8_t buf[40 + 9200];
	size_t ph;

	assert_true(l4_len <= 9200);
	if ((ip[0] >> 4) == 4) {
		assert_int_equal(ref_csum(ip, 20), 0);
		assert_int_equal(ip[2] << 8 | ip[3], 20 + l4_len);
		/* pseudo-header: source, destination, zero, protocol, L4 length */
		memcpy(buf, ip + 12, 8);
		buf[8] = 0;
		buf[9] = lay->l4_proto;
		buf[10] = (uint8_t)(l4_len >> 8);
		buf[11] = (uint8_t)l4_len;
		ph = 12;
	} else {
		assert_int_equal(ip[4] << 8 | ip[5], l4_len);
		memcpy(buf, ip + 8, 32);
		buf[32] = buf[33] = 0;
		buf[34] = (uint8_t)(l4_len >> 8);
		buf[35] = (uint8_t)l4_len;
		buf[36] = buf[37] = buf[38] = 0;
		buf[39] = lay->l4_proto;
		ph = 40;
	}
	memcpy(buf + ph, f + lay->l4_off, l4_len);
	assert_int_equal(ref_csum(buf, ph + l4_len), 0);

	if (!py_frames) {
		/* The tests run from the top of the tree (tests/run.sh). */
		py_frames = popen("python3 tests/unit/gen_frames.py --verify", "w");
		if (!py_frames)
			fail_msg("cannot run python3 tests/unit/gen_frames.py --verify (run from the tree's top)");
		py_count = 0;
	}
	for (size_t k = 0; k < lay->len; k++)
		fprintf(py_frames, "%02x", f[k]);
	fputc('\n', py_frames);
	py_count++;
}

/* End of a test that called verify_checksums: the Python check's verdict. */
static inline void py_verify_done(void)
{
	assert_non_null(py_frames);
	assert_true(py_count > 0);
	int st = pclose(py_frames);
	py_frames = NULL;
	if (st != 0)
		fail_msg("gen_frames.py --verify found bad checksums in the %u frames (status %d)", py_count, st);
}

#endif
