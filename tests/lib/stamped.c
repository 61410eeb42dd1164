// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Stamped test frames; see stamped.h. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <time.h>

#include "tests/lib/stamped.h"

static uint64_t ticks(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) >> 2;
}

uint64_t xt_now_ticks(void) { return ticks(CLOCK_MONOTONIC); }
uint64_t xt_tai_ticks(void) { return ticks(CLOCK_TAI); }

void xt_addr(const char *s, uint8_t out[16])
{
	memset(out, 0, 16);
	assert_int_equal(inet_pton(strchr(s, ':') ? AF_INET6 : AF_INET, s, out), 1);
}

void xt_stamp_bytes(uint32_t stream, uint32_t seq, uint64_t ts, uint8_t b[8])
{
	b[0] = (uint8_t)stream;
	b[1] = (uint8_t)(seq >> 16);
	b[2] = (uint8_t)(seq >> 8);
	b[3] = (uint8_t)seq;
	b[4] = (uint8_t)(ts >> 24);
	b[5] = (uint8_t)(ts >> 16);
	b[6] = (uint8_t)(ts >> 8);
	b[7] = (uint8_t)ts;
}

size_t xt_stamped_frame(const struct wf *w, const uint8_t st[8], uint8_t ttl, uint8_t *buf, size_t cap)
{
	int tcp = w->l4 == IPPROTO_TCP;
	size_t len = w_build(w, buf, cap);

	assert_true(len > 0);
	struct wp p = w_parse(buf, len);
	assert_true(p.ok);
	if (w->payload >= 8) {
		memcpy(buf + p.l4 + p.hlen, st, 8);
	} else if (!w->v6 && w->payload >= 6) {
		memcpy(buf + p.l3 + 4, st, 2);
		memcpy(buf + p.l4 + p.hlen, st + 2, 6);
	}
	if (ttl)
		buf[p.l3 + (w->v6 ? 7 : 8)] = ttl;
	/* (Recomputed whether or not the ID or TTL changed: the same sum over
	 * the same header gives the bytes wire.h wrote.) */
	if (!w->v6) {
		buf[p.l3 + 10] = buf[p.l3 + 11] = 0;
		w_put16(buf + p.l3 + 10, w_fold(w_sum(buf + p.l3, 20, 0)));
	}
	size_t co = p.l4 + (tcp ? 16 : 6);
	buf[co] = buf[co + 1] = 0;
	uint16_t c = w_fold(w_sum(buf + p.l4, p.l4len, w_pseudo(p.v6, p.saddr, p.daddr, p.proto, (uint32_t)p.l4len)));
	if (!tcp && c == 0)
		c = 0xffff;
	w_put16(buf + co, c);
	p = w_parse(buf, len);
	assert_true(p.ok && p.ip_csum_ok && p.l4_csum_ok);
	return len;
}

size_t xt_udp4_stamped(const struct xt_udp4_path *path, uint32_t seq, uint8_t *buf, size_t cap)
{
	struct wf w = { .l4 = IPPROTO_UDP, .sport = path->sport, .dport = path->dport, .payload = 18 };
	uint8_t st[8];

	xt_stamp_bytes(0, seq, xt_now_ticks(), st);
	memcpy(w.dmac, path->dmac, 6);
	memcpy(w.smac, path->smac, 6);
	inet_pton(AF_INET, path->cli, w.saddr);
	inet_pton(AF_INET, path->srv, w.daddr);
	size_t len = w_build(&w, buf, cap);
	struct wp p = w_parse(buf, len);
	memcpy(buf + p.l4 + 8, st, 8);
	buf[p.l4 + 6] = buf[p.l4 + 7] = 0; /* UDP checksum 0: none (IPv4) */
	return len;
}
