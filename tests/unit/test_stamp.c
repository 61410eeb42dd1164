/*
 * The stamp (bpf/lib/stamp.h): packing, where it goes, the receiver's
 * extension of seq24 and ts32 back to 64 bits across wrap-around; the
 * userspace writer (user/frame/frame_stamp.h) checked against a plain RFC 1071
 * sum written here; and a sending thread's send-interval bins
 * (user/engine/send_bins.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <linux/types.h>

#include "bpf/lib/stamp.h"
#include "engine/send_bins.h"
#include "frame/frame.h"
#include "frame/frame_stamp.h"
#include "tests/lib/ref_sum.h" /* RFC 1071 written out */

/* xorshift64: a fixed pseudo-random walk, the same every run. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void test_pack_fields(void **state)
{
	uint64_t s = xp_stamp_pack(0x1ab, 0x123456789ull, 0x1cafebabeull);

	assert_int_equal(xp_stamp_stream(s), 0xab);        /* 8 bits */
	assert_int_equal(xp_stamp_seq24(s), 0x456789);     /* low 24 bits */
	assert_int_equal(xp_stamp_ts32(s), 0xcafebabe);    /* low 32 bits */
	assert_true(s == 0xab456789cafebabeull);
}

static void test_place(void **state)
{
	/* IPv4/TCP 64 bytes: 6 payload bytes -> ID + payload; 66: payload. */
	assert_int_equal(xp_stamp_place_of(0, 6), XP_STAMP_AT_IPID);
	assert_int_equal(xp_stamp_place_of(0, 7), XP_STAMP_AT_IPID);
	assert_int_equal(xp_stamp_place_of(0, 8), XP_STAMP_AT_PAYLOAD);
	assert_int_equal(xp_stamp_place_of(0, 5), XP_STAMP_NONE);
	/* IPv6 has no ID field: 8 payload bytes or nothing (78-byte TCP: 0). */
	assert_int_equal(xp_stamp_place_of(1, 6), XP_STAMP_NONE);
	assert_int_equal(xp_stamp_place_of(1, 0), XP_STAMP_NONE);
	assert_int_equal(xp_stamp_place_of(1, 8), XP_STAMP_AT_PAYLOAD);
}

static void test_seq_extend(void **state)
{
	const uint64_t W = 1ull << 24, H = 1ull << 23;

	assert_int_equal(xp_stamp_seq_extend(0, 5), 5);
	assert_int_equal(xp_stamp_seq_extend(10, 7), 7);                 /* reordered, back by 3 */
	assert_int_equal(xp_stamp_seq_extend(W - 1, 0), W);              /* forward across the wrap */
	assert_int_equal(xp_stamp_seq_extend(W + 3, W - 2), W - 2);      /* backward across it */
	assert_int_equal(xp_stamp_seq_extend(5 * W + 100, 100 + H - 1), 5 * W + 100 + H - 1);
	assert_int_equal(xp_stamp_seq_extend(5 * W + 100, 100 + H), 5 * W + 100 - H); /* -2^23 */
	/* Before the first frame of a stream: not below 0 (seq24 as is). */
	assert_int_equal(xp_stamp_seq_extend(3, W - 1), W - 1);
	/* A walk across many wraps: steps forward up to 2^23 - 1, some back. */
	uint64_t x = 0x9e3779b97f4a7c15ull, truth = 0, ref = 0;
	for (int i = 0; i < 200000; i++) {
		uint64_t r = rnd(&x);
		int64_t step = (int64_t)(r % H);
		if ((r >> 40) % 4 == 0)
			step = -(int64_t)(r % 5000); /* reordered frames */
		if ((int64_t)truth + step < 0)
			step = -step;
		truth += step;
		uint64_t got = xp_stamp_seq_extend(ref, (uint32_t)(truth & XP_STAMP_SEQ_MASK));
		if (got != truth)
			fail_msg("step %d: ref %llu seq24 %llu -> %llu, want %llu", i, (unsigned long long)ref,
				 (unsigned long long)(truth & XP_STAMP_SEQ_MASK), (unsigned long long)got,
				 (unsigned long long)truth);
		ref = got;
	}
	assert_true(truth > 100 * W); /* the walk really wrapped, many times */
}

static void test_ts_extend(void **state)
{
	const uint64_t W = 1ull << 32;

	assert_true(xp_stamp_ts_extend(W - 0x10, 0x10) == W + 0x10);      /* wrapped forward */
	assert_true(xp_stamp_ts_extend(W + 0x10, 0xfffffff0u) == W - 0x10); /* back across it */
	assert_true(xp_stamp_ts_extend(7 * W + 5, 5) == 7 * W + 5);
	/* Send times within +-2^31 ticks (8.6 s) of the reference, from a
	 * t0 far up the clock: back to the full value, wraps included. */
	uint64_t x = 12345, t0 = 0x123456789abcull;
	for (int i = 0; i < 100000; i++) {
		uint64_t r = rnd(&x);
		int64_t d = (int64_t)(r % (1ull << 31)) * ((r >> 63) ? -1 : 1);
		uint64_t t = t0 + (uint64_t)d;
		assert_true(xp_stamp_ts_extend(t0, (uint32_t)t) == t);
		t0 += r % 100000000; /* the reference moves on */
	}
}

static struct frame_spec spec(int family, uint8_t proto, size_t size)
{
	struct frame_spec s;

	memset(&s, 0, sizeof(s));
	s.src.family = s.dst.family = family;
	if (family == AF_INET) {
		inet_pton(AF_INET, "198.18.0.1", &s.src.v4);
		inet_pton(AF_INET, "198.19.0.1", &s.dst.v4);
	} else {
		inet_pton(AF_INET6, "2001:2::1", &s.src.v6);
		inet_pton(AF_INET6, "2001:2:0:1::1", &s.dst.v6);
	}
	s.l4_proto = proto;
	s.sport = 10000;
	s.dport = 63000;
	s.tcp_flags = 0x18;
	s.frame_size = size;
	s.payload_fill = 0x5a;
	return s;
}

/*
 * A frame rewritten again and again with new stamps (as the AF_XDP engine
 * rewrites its UMEM frames): after each write the stamp is where the place
 * says, the rest is the template's, and both checksums verify by ref_sum.
 */
static void stamp_rewrites(int family, uint8_t proto, size_t size, enum xp_stamp_place want)
{
	struct frame_spec s = spec(family, proto, size);
	struct frame_layout lay;
	uint8_t tmpl[1600], f[1600];
	size_t len;
	uint64_t x = size * 7919 + proto;
	const uint64_t key[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

	assert_int_equal(frame_layout_of(&s, &lay, NULL), 0);
	/* The tag follows the stamp where the payload has 4 bytes to spare. */
	int tagged = want == XP_STAMP_AT_PAYLOAD && lay.payload_len >= 12;
	size_t stamp_len = want == XP_STAMP_AT_IPID ? 6 : tagged ? 12 : 8;
	len = frame_build(&s, tmpl, sizeof(tmpl), NULL);
	assert_int_equal(len, size - 4);
	assert_int_equal(frame_stamp_place(&s, &lay), want);
	memcpy(f, tmpl, len);
	for (int i = 0; i < 3000; i++) {
		uint64_t st = xp_stamp_pack((uint32_t)rnd(&x), rnd(&x), rnd(&x));
		uint8_t be[8], *ip = f + lay.l3_off, *l4 = f + lay.l4_off;
		size_t l4len = lay.payload_off - lay.l4_off + lay.payload_len;

		if (i % 500 == 0)
			st = i ? ~0ull : 0; /* all ones and all zeros too */
		frame_put_stamp(f, &lay, want, st, key);
		for (int k = 0; k < 8; k++)
			be[k] = (uint8_t)(st >> (56 - 8 * k));
		if (want == XP_STAMP_AT_PAYLOAD) {
			assert_memory_equal(f + lay.payload_off, be, 8);
			if (tagged) {
				uint32_t tag = xp_stamp_tag(key[0], key[1], st);
				uint8_t tb[4] = { (uint8_t)(tag >> 24), (uint8_t)(tag >> 16), (uint8_t)(tag >> 8),
						  (uint8_t)tag };
				assert_memory_equal(f + lay.payload_off + 8, tb, 4);
				/* Another key, another tag (for these stamps). */
				assert_int_not_equal(tag, xp_stamp_tag(key[0] ^ 1, key[1], st));
			}
		} else if (want == XP_STAMP_AT_IPID) {
			assert_memory_equal(ip + 4, be, 2);
			assert_memory_equal(f + lay.payload_off, be + 2, 6);
		}
		if (family == AF_INET) {
			assert_int_equal(ref_sum(ip, 20, NULL, 0, 0), 0xffff);
			assert_int_equal(ref_sum(ip + 12, 8, l4, l4len, proto + (uint32_t)l4len), 0xffff);
		} else {
			assert_int_equal(ref_sum(ip + 8, 32, l4, l4len, proto + (uint32_t)l4len), 0xffff);
		}
		if (proto == IPPROTO_UDP) /* never 0: that means "no checksum" */
			assert_true(l4[6] | l4[7]);
		/* Everything but the stamp and the checksums is the template's. */
		uint8_t a[1600], b[1600];
		memcpy(a, f, len);
		memcpy(b, tmpl, len);
		memset(a + lay.l3_off + 4, 0, 2);
		memset(b + lay.l3_off + 4, 0, 2);
		if (family == AF_INET) {
			memset(a + lay.l3_off + 10, 0, 2);
			memset(b + lay.l3_off + 10, 0, 2);
		}
		size_t ck = lay.l4_off + (proto == IPPROTO_TCP ? 16 : 6);
		memset(a + ck, 0, 2);
		memset(b + ck, 0, 2);
		if (want != XP_STAMP_NONE) {
			memset(a + lay.payload_off, 0, stamp_len);
			memset(b + lay.payload_off, 0, stamp_len);
		}
		assert_memory_equal(a, b, len);
	}
	if (want == XP_STAMP_NONE)
		assert_memory_equal(f, tmpl, len);
}

static void test_write_v4_tcp_64(void **state) { stamp_rewrites(AF_INET, IPPROTO_TCP, 64, XP_STAMP_AT_IPID); }
static void test_write_v4_udp_64(void **state) { stamp_rewrites(AF_INET, IPPROTO_UDP, 64, XP_STAMP_AT_PAYLOAD); }
static void test_write_v4_tcp_128(void **state) { stamp_rewrites(AF_INET, IPPROTO_TCP, 128, XP_STAMP_AT_PAYLOAD); }
static void test_write_v4_udp_1518(void **state) { stamp_rewrites(AF_INET, IPPROTO_UDP, 1518, XP_STAMP_AT_PAYLOAD); }
static void test_write_v4_tcp_1518(void **state) { stamp_rewrites(AF_INET, IPPROTO_TCP, 1518, XP_STAMP_AT_PAYLOAD); }
static void test_write_v6_udp_74(void **state) { stamp_rewrites(AF_INET6, IPPROTO_UDP, 74, XP_STAMP_AT_PAYLOAD); }
static void test_write_v6_udp_66(void **state) { stamp_rewrites(AF_INET6, IPPROTO_UDP, 66, XP_STAMP_NONE); }
static void test_write_v6_tcp_86(void **state) { stamp_rewrites(AF_INET6, IPPROTO_TCP, 86, XP_STAMP_AT_PAYLOAD); }
static void test_write_v6_tcp_78(void **state) { stamp_rewrites(AF_INET6, IPPROTO_TCP, 78, XP_STAMP_NONE); }
/* Room for the stamp, not yet for its tag (8..11 payload bytes), and the first size with both. */
static void test_write_v4_tcp_69(void **state) { stamp_rewrites(AF_INET, IPPROTO_TCP, 69, XP_STAMP_AT_PAYLOAD); }
static void test_write_v4_tcp_70(void **state) { stamp_rewrites(AF_INET, IPPROTO_TCP, 70, XP_STAMP_AT_PAYLOAD); }
static void test_write_v6_udp_77(void **state) { stamp_rewrites(AF_INET6, IPPROTO_UDP, 77, XP_STAMP_AT_PAYLOAD); }
static void test_write_v6_tcp_90(void **state) { stamp_rewrites(AF_INET6, IPPROTO_TCP, 90, XP_STAMP_AT_PAYLOAD); }

/* Which sizes carry the tag: from 12 payload bytes, at the payload place only. */
static void test_tagged_sizes(void **state)
{
	(void)state;
	assert_false(xp_stamp_tagged(XP_STAMP_AT_IPID, 6));
	assert_false(xp_stamp_tagged(XP_STAMP_AT_PAYLOAD, 11));
	assert_true(xp_stamp_tagged(XP_STAMP_AT_PAYLOAD, 12));
	assert_false(xp_stamp_tagged(XP_STAMP_NONE, 100));
	/* Every stamp bit moves the tag: a flipped bit gives another tag. */
	for (int b = 0; b < 64; b++)
		assert_int_not_equal(xp_stamp_tag(1, 2, 0x0102030405060708ull),
				     xp_stamp_tag(1, 2, 0x0102030405060708ull ^ (1ull << b)));
}

/* ---- send-interval bins ------------------------------------------------ */

static uint64_t sent_of(const struct xp_send_bins *s, uint64_t i, int *r)
{
	uint64_t n = 0;

	*r = xp_send_bins_read(s, i, &n);
	return n;
}

/* Frames at known times: each interval gets exactly its frames, frames
 * before t0 go to interval 0, an interval without frames reads 0, and the
 * ring forgets an interval XP_IBINS later. */
static void test_bins_exact(void **state)
{
	struct xp_send_bins s = { 0 };
	const uint64_t t0 = 1000000, iv = 250;
	int r;

	xp_send_bins_count(&s, t0, iv, t0 - 500, 3);       /* before t0: interval 0 */
	xp_send_bins_count(&s, t0, iv, t0 + 10, 4);        /* interval 0 */
	assert_int_equal(sent_of(&s, 0, &r), 7);
	assert_int_equal(r, 0);
	xp_send_bins_count(&s, t0, iv, t0 + 250, 1);       /* exactly at the boundary: 1 */
	xp_send_bins_count(&s, t0, iv, t0 + 499, 2);
	xp_send_bins_count(&s, t0, iv, t0 + 3 * 250 + 1, 5); /* 3: interval 2 had none */
	assert_int_equal(sent_of(&s, 0, &r), 7);
	assert_int_equal(r, 0);
	assert_int_equal(sent_of(&s, 1, &r), 3);
	assert_int_equal(sent_of(&s, 2, &r), 0);
	assert_int_equal(r, 0);
	assert_int_equal(sent_of(&s, 3, &r), 5);
	xp_send_bins_count(&s, t0, iv, t0 + 4 * 250, 6);   /* 4 takes 0's bin */
	assert_int_equal(sent_of(&s, 0, &r), 0);
	assert_int_equal(r, -ENOENT);
	assert_int_equal(sent_of(&s, 4, &r), 6);
	assert_int_equal(sent_of(&s, 1, &r), 3);           /* still held */
	/* A jump far ahead: everything older is gone or empty. */
	xp_send_bins_count(&s, t0, iv, t0 + 1000 * 250 + 7, 9);
	assert_int_equal(sent_of(&s, 1000, &r), 9);
	assert_int_equal(sent_of(&s, 4, &r), 0);  /* 1000 took its bin */
	assert_int_equal(r, -ENOENT);
	assert_int_equal(sent_of(&s, 996, &r), 0);
	assert_int_equal(r, -ENOENT);
	assert_int_equal(sent_of(&s, 999, &r), 0); /* its bin holds 3, older: none sent in 999 */
	assert_int_equal(r, 0);
	/* Not yet reached: an older tag, 0. */
	assert_int_equal(sent_of(&s, 1001, &r), 0);
	assert_int_equal(r, 0);
}

/* Frames posted and never sent come back out, newest interval first. */
static void test_bins_uncount(void **state)
{
	struct xp_send_bins s = { 0 };
	int r;

	xp_send_bins_uncount(&s, 5); /* nothing counted yet: no-op */
	xp_send_bins_count(&s, 0, 100, 50, 10);  /* interval 0 */
	xp_send_bins_count(&s, 0, 100, 150, 4);  /* interval 1 */
	xp_send_bins_uncount(&s, 6);
	assert_int_equal(sent_of(&s, 1, &r), 0);
	assert_int_equal(sent_of(&s, 0, &r), 8);
	xp_send_bins_uncount(&s, 100); /* more than counted: down to 0, no wrap */
	assert_int_equal(sent_of(&s, 0, &r), 0);
	assert_int_equal(r, 0);
}

/* A random run of batches: the bins of each interval equal the frames a
 * plain division puts there, read while the interval is still in the ring. */
static void test_bins_random(void **state)
{
	struct xp_send_bins s = { 0 };
	const uint64_t t0 = 77777, iv = 1000;
	uint64_t x = 42, t = t0 - 3000, want[4096] = { 0 };
	int r;

	for (int k = 0; k < 20000; k++) {
		uint64_t n = rnd(&x) % 64 + 1, i;
		t += rnd(&x) % 300;
		i = t < t0 ? 0 : (t - t0) / iv;
		assert_true(i < 4096);
		want[i] += n;
		xp_send_bins_count(&s, t0, iv, t, n);
		for (uint64_t j = i >= XP_IBINS - 1 ? i - (XP_IBINS - 1) : 0; j <= i; j++) {
			assert_int_equal(sent_of(&s, j, &r), want[j]);
			assert_int_equal(r, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pack_fields),
		cmocka_unit_test(test_place),
		cmocka_unit_test(test_seq_extend),
		cmocka_unit_test(test_ts_extend),
		cmocka_unit_test(test_write_v4_tcp_64),
		cmocka_unit_test(test_write_v4_udp_64),
		cmocka_unit_test(test_write_v4_tcp_128),
		cmocka_unit_test(test_write_v4_udp_1518),
		cmocka_unit_test(test_write_v4_tcp_1518),
		cmocka_unit_test(test_write_v6_udp_74),
		cmocka_unit_test(test_write_v6_udp_66),
		cmocka_unit_test(test_write_v6_tcp_86),
		cmocka_unit_test(test_write_v6_tcp_78),
		cmocka_unit_test(test_write_v4_tcp_69),
		cmocka_unit_test(test_write_v4_tcp_70),
		cmocka_unit_test(test_write_v6_udp_77),
		cmocka_unit_test(test_write_v6_tcp_90),
		cmocka_unit_test(test_tagged_sizes),
		cmocka_unit_test(test_bins_exact),
		cmocka_unit_test(test_bins_uncount),
		cmocka_unit_test(test_bins_random),
	};
	return cmocka_run_group_tests_name("stamp", tests, NULL, NULL);
}
