/*
 * The ICMP error watcher's accounting (net/icmp_watch.c) on hand-built
 * ICMP messages: only errors quoting a frame of the test count, each with
 * its sender, kind and named MTU; the summary's line and exit status
 * (report/icmp.c, client/summary.c) say so. The socket side runs in
 * tests/e2e/89_path_mtu.sh against a router's own counters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/client.h"
#include "frame/csum.h"
#include "net/icmp_watch.h"
#include "report/report.h"

static struct xp_addr a4(const char *s)
{
	struct xp_addr a;
	assert_int_equal(xp_addr_parse(s, &a), 0);
	return a;
}

static struct xp_addr ours4;
static struct xp_icmp_match m4(void)
{
	ours4 = a4("198.18.1.2");
	return (struct xp_icmp_match){ .server = a4("198.19.1.2"), .src = &ours4, .nsrc = 1, .l4_proto = IPPROTO_UDP,
				       .sport_lo = 10000, .sport_hi = 59999, .dport_lo = 63000, .dport_hi = 63015 };
}

/* An IPv4 ICMP error as a raw socket reads it: outer IPv4 header from `from`, ICMP type/code and its
 * 4-byte rest (the MTU in the low half), then the quoted IPv4 header and 8 bytes of UDP. Returns the length. */
static size_t icmp4(uint8_t *b, const char *from, uint8_t type, uint8_t code, uint16_t mtu, const char *qsrc,
		    const char *qdst, uint8_t proto, uint16_t sport, uint16_t dport)
{
	memset(b, 0, 64);
	b[0] = 0x45, b[8] = 64, b[9] = IPPROTO_ICMP;
	inet_pton(AF_INET, from, b + 12);
	inet_pton(AF_INET, "198.18.1.2", b + 16);
	uint8_t *i = b + 20;
	i[0] = type, i[1] = code, i[6] = (uint8_t)(mtu >> 8), i[7] = (uint8_t)mtu;
	uint8_t *q = i + 8;
	q[0] = 0x45, q[2] = 0x0b, q[3] = 0xb8 /* 3000 */, q[6] = 0x40, q[8] = 63, q[9] = proto;
	inet_pton(AF_INET, qsrc, q + 12);
	inet_pton(AF_INET, qdst, q + 16);
	uint8_t *u = q + 20;
	u[0] = (uint8_t)(sport >> 8), u[1] = (uint8_t)sport, u[2] = (uint8_t)(dport >> 8), u[3] = (uint8_t)dport;
	return 20 + 8 + 20 + 8;
}

static void test_v4_frag_needed_counted_with_mtu_and_hop(void **state)
{
	(void)state;
	struct xp_icmp_figs f = { .watched = true, .family = AF_INET };
	struct xp_icmp_match m = m4();
	uint8_t b[64];
	size_t n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
	for (int i = 0; i < 3; i++)
		assert_true(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.9.1", 3, 4, 1400, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 59999, 63015);
	assert_true(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	assert_int_equal(f.count, 4);
	assert_int_equal(f.by_kind[XP_ICMP_FRAG_NEEDED], 4);
	assert_int_equal(f.path_mtu, 1400); /* the smallest named */
	assert_int_equal(f.nhops, 2);
	char s[64];
	assert_string_equal(xp_addr_str(&f.hop[0].addr, s, sizeof(s)), "198.18.1.1");
	assert_int_equal(f.hop[0].count, 3);
	assert_int_equal(f.hop[0].mtu, 1500);
	assert_int_equal(f.hop[1].count, 1);

	char t[XP_ICMP_TEXT_LEN];
	assert_non_null(xp_icmp_text(&f, t, sizeof(t)));
	assert_non_null(strstr(t, "ICMP errors: 4 came back"));
	assert_non_null(strstr(t, "3 fragmentation needed from 198.18.1.1 (next-hop MTU 1500)"));
	assert_non_null(strstr(t, "the path MTU is 1400, frames above -l 1418 do not pass"));
	struct json_object *j = xp_icmp_json(&f), *v;
	assert_true(json_object_object_get_ex(j, "path_mtu", &v));
	assert_int_equal(json_object_get_int(v), 1400);
	assert_true(json_object_object_get_ex(j, "hops", &v));
	assert_int_equal(json_object_array_length(v), 2);
	json_object_put(j);
}

static void test_v4_not_ours_not_counted(void **state)
{
	(void)state;
	struct xp_icmp_figs f = { .watched = true, .family = AF_INET };
	struct xp_icmp_match m = m4();
	uint8_t b[64];
	size_t n;
	/* another port (the control connection's), another protocol, another source, another server */
	n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 5301);
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.2", "198.19.1.2", IPPROTO_TCP, 10000, 63000);
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.3", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.2", "198.19.1.3", IPPROTO_UDP, 10000, 63000);
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 9999, 63000);
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	/* truncated: no room for the quoted ports */
	n = icmp4(b, "198.18.1.1", 3, 4, 1500, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, 20 + 8 + 20 + 3));
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, 19));
	assert_int_equal(f.count, 0);
	char t[XP_ICMP_TEXT_LEN];
	assert_null(xp_icmp_text(&f, t, sizeof(t)));
}

static void test_v4_kinds_and_names(void **state)
{
	(void)state;
	struct xp_icmp_figs f = { .watched = true, .family = AF_INET };
	struct xp_icmp_match m = m4();
	uint8_t b[64];
	size_t n = icmp4(b, "198.18.1.1", 3, 1, 0, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
	assert_true(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 11, 0, 0, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
	assert_true(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 12, 0, 0, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
	assert_true(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	n = icmp4(b, "198.18.1.1", 5, 0, 0, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000); /* redirect */
	assert_false(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	assert_int_equal(f.by_kind[XP_ICMP_UNREACH], 1);
	assert_int_equal(f.by_kind[XP_ICMP_TIME_EXCEEDED], 1);
	assert_int_equal(f.by_kind[XP_ICMP_PARAM_PROBLEM], 1);
	assert_int_equal(f.path_mtu, 0);
	assert_string_equal(xp_icmp_name(AF_INET, 3, 1), "destination unreachable (host unreachable)");
	assert_string_equal(xp_icmp_name(AF_INET, 11, 0), "time exceeded (TTL)");
	assert_string_equal(xp_icmp_name(AF_INET6, 2, 0), "packet too big");
	assert_string_equal(xp_icmp_name(AF_INET6, 1, 4), "destination unreachable (port unreachable)");
	assert_string_equal(xp_icmp_name(AF_INET6, 1, 99), "destination unreachable");
	char t[XP_ICMP_TEXT_LEN];
	assert_non_null(xp_icmp_text(&f, t, sizeof(t)));
	assert_null(strstr(t, "path MTU"));
	assert_non_null(strstr(t, "1 time exceeded (TTL) from 198.18.1.1"));
}

static void test_hop_table_overflow(void **state)
{
	(void)state;
	struct xp_icmp_figs f = { .watched = true, .family = AF_INET };
	struct xp_icmp_match m = m4();
	uint8_t b[64];
	for (unsigned i = 0; i < XP_ICMP_MAX_HOPS + 3; i++) {
		char from[32];
		snprintf(from, sizeof(from), "198.18.2.%u", i + 1);
		size_t n = icmp4(b, from, 11, 0, 0, "198.18.1.2", "198.19.1.2", IPPROTO_UDP, 10000, 63000);
		assert_true(xp_icmp_account(&f, &m, AF_INET, NULL, b, n));
	}
	assert_int_equal(f.nhops, XP_ICMP_MAX_HOPS);
	assert_int_equal(f.other_hops, 3);
	assert_int_equal(f.count, XP_ICMP_MAX_HOPS + 3);
	char t[XP_ICMP_TEXT_LEN];
	assert_non_null(strstr(xp_icmp_text(&f, t, sizeof(t)), "; 3 from other hops"));
}

static void test_v6_packet_too_big(void **state)
{
	(void)state;
	struct xp_addr src, srv, from;
	assert_int_equal(xp_addr_parse("2001:2:0:1::2", &src), 0);
	assert_int_equal(xp_addr_parse("2001:2:0:2::2", &srv), 0);
	assert_int_equal(xp_addr_parse("2001:2:0:1::1", &from), 0);
	struct xp_icmp_match m = { .server = srv, .src = &src, .nsrc = 1, .l4_proto = IPPROTO_UDP, .sport_lo = 10000,
				   .sport_hi = 59999, .dport_lo = 63000, .dport_hi = 63015 };
	struct xp_icmp_figs f = { .watched = true, .family = AF_INET6 };
	uint8_t b[8 + 40 + 8] = { 0 };
	b[0] = 2;                           /* packet too big */
	b[4] = 0, b[5] = 0, b[6] = 0x05, b[7] = 0xdc; /* MTU 1500 */
	uint8_t *q = b + 8;
	q[0] = 0x60, q[6] = IPPROTO_UDP, q[7] = 64;
	memcpy(q + 8, &src.v6, 16);
	memcpy(q + 24, &srv.v6, 16);
	q[40] = 10000 >> 8, q[41] = 10000 & 255, q[42] = 63001 >> 8, q[43] = 63001 & 255;
	assert_true(xp_icmp_account(&f, &m, AF_INET6, &from, b, sizeof(b)));
	assert_false(xp_icmp_account(&f, &m, AF_INET6, NULL, b, sizeof(b))); /* no sender: not countable */
	q[6] = IPPROTO_TCP;
	assert_false(xp_icmp_account(&f, &m, AF_INET6, &from, b, sizeof(b)));
	assert_int_equal(f.count, 1);
	assert_int_equal(f.path_mtu, 1500);
	char t[XP_ICMP_TEXT_LEN];
	assert_non_null(strstr(xp_icmp_text(&f, t, sizeof(t)), "1 packet too big from 2001:2:0:1::1 (next-hop MTU 1500)"));
}

/* The exit status: lost frames with ICMP errors fail the run, whatever --max-loss allows; errors without loss
 * are said, not failed. */
static void test_thresholds(void **state)
{
	(void)state;
	static struct xp_spec o;
	memset(&o, 0, sizeof(o));
	o.max_loss = -1;
	struct xp_summary s;
	memset(&s, 0, sizeof(s));
	s.total = (struct xp_period){ .t0 = 0, .t1 = 1, .figures = XP_FIGS_FRAMES, .tx_pkts = 1000 };
	s.icmp = (struct xp_icmp_figs){ .watched = true, .family = AF_INET, .count = 5, .path_mtu = 1500, .nhops = 1 };
	s.icmp.by_kind[XP_ICMP_FRAG_NEEDED] = 5;
	s.icmp.hop[0] = (struct xp_icmp_hop){ .addr = a4("198.18.1.1"), .type = 3, .code = 4,
					      .kind = XP_ICMP_FRAG_NEEDED, .mtu = 1500, .count = 5 };
	char msg[1200];
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), XP_EXIT_RUNTIME);
	assert_non_null(strstr(msg, "lost 100.0000 % of the frames; ICMP errors: 5 came back"));
	o.max_loss = 100;
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), XP_EXIT_RUNTIME);
	s.total.rx.pkts = 1000; /* none lost */
	assert_int_equal(xp_summary_thresholds(&o, &s, msg, sizeof(msg)), 0);
}

/*
 * The watcher itself (socket, filter, thread, drain) on loopback, in a private network namespace of a
 * child (root): ICMP errors sent there through a raw socket are counted, those not quoting the test's
 * frames and the non-error types (an echo reply) are not. Without root, starting it must fail with a
 * reason, not crash. Exit status of the child: 0 ok, else which check failed.
 */
static int watch_child(void)
{
	struct xp_icmp_watch w;
	struct xp_icmp_figs f;
	char err[256] = "";
	struct xp_addr src = a4("127.0.0.1");
	struct xp_icmp_match m = { .server = a4("127.0.0.2"), .src = &src, .nsrc = 1, .l4_proto = IPPROTO_UDP,
				   .sport_lo = 10000, .sport_hi = 10099, .dport_lo = 63000, .dport_hi = 63015 };
	if (unshare(CLONE_NEWNET)) {
		if (errno != EPERM)
			return 10;
		/* Not root: the raw socket is refused, with its reason. */
		int r = xp_icmp_watch_start(&w, &m, err, sizeof(err));
		xp_icmp_watch_stop(&w, &f);
		return r == -EPERM && strstr(err, "raw ICMP socket") && !f.watched ? 0 : 11;
	}
	int s = socket(AF_INET, SOCK_DGRAM, 0);
	struct ifreq ifr = { .ifr_name = "lo" };
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		return 12;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		return 13;
	close(s);
	if (xp_icmp_watch_start(&w, &m, err, sizeof(err))) {
		printf("%s\n", err);
		return 14;
	}
	int tx = socket(AF_INET, SOCK_RAW, IPPROTO_ICMP);
	if (tx < 0)
		return 15;
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	uint8_t b[64];
	for (int i = 0; i < 7; i++) {
		/* 5 of ours, one quoting the control port, one echo reply (type 0: filtered out) */
		size_t n = icmp4(b, "127.0.0.1", i == 6 ? 0 : 3, i == 6 ? 0 : 4, 1400, "127.0.0.1", "127.0.0.2",
				 IPPROTO_UDP, 10000 + (uint16_t)i, i == 5 ? 5301 : 63000);
		uint8_t *icmp = b + 20;
		size_t len = n - 20;
		icmp[2] = icmp[3] = 0;
		uint16_t c = csum_fold(csum_partial(icmp, len, 0)); /* as stored (frame/csum.h) */
		memcpy(icmp + 2, &c, 2);
		if (sendto(tx, icmp, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len)
			return 16;
	}
	close(tx);
	nanosleep(&(struct timespec){ 0, 100 * 1000 * 1000 }, NULL); /* loopback delivers at once; room for the thread */
	xp_icmp_watch_stop(&w, &f);
	char a[64];
	printf("watched %d count %llu mtu %u hops %u from %s\n", f.watched, (unsigned long long)f.count, f.path_mtu,
	       f.nhops, f.nhops ? xp_addr_str(&f.hop[0].addr, a, sizeof(a)) : "-");
	if (!f.watched || f.count != 5 || f.path_mtu != 1400 || f.nhops != 1 || strcmp(a, "127.0.0.1"))
		return 17;
	return 0;
}

static void test_watch_on_loopback(void **state)
{
	(void)state;
	fflush(stdout);
	pid_t p = fork();
	assert_true(p >= 0);
	if (!p) {
		int r = watch_child();
		fflush(stdout);
		_exit(r);
	}
	int st = 0;
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_v4_frag_needed_counted_with_mtu_and_hop),
		cmocka_unit_test(test_v4_not_ours_not_counted),
		cmocka_unit_test(test_v4_kinds_and_names),
		cmocka_unit_test(test_hop_table_overflow),
		cmocka_unit_test(test_v6_packet_too_big),
		cmocka_unit_test(test_thresholds),
		cmocka_unit_test(test_watch_on_loopback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
