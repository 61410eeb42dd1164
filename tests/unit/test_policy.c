/*
 * What the server lets a client do: the --auth-key file and the MAC, --allow
 * networks, the request on its own (--max-duration, listen caps) and the port
 * rules (below 1024, the ephemeral range, another program's sockets, read
 * from the kernel over sock_diag).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "net/listening.h"
#include "proto/auth.h"
#include "server/policy.h"

static char dir[] = "/tmp/xp-test-policy.XXXXXX";

static const char *key_file(const char *name, const char *content, mode_t mode)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
	assert_int_equal(chmod(path, mode), 0);
	return path;
}

static void test_key_file(void **state)
{
	struct xp_auth_key k;
	char err[512];
	assert_int_equal(xp_auth_key_load(key_file("ok", "0123456789abcdef0123\n", 0600), &k, err, sizeof(err)), 0);
	assert_int_equal(k.len, 20); /* the newline is not part of the key */
	assert_int_equal(xp_auth_key_load(key_file("ro", "0123456789abcdef0123", 0400), &k, err, sizeof(err)), 0);
	static const struct { const char *content; mode_t mode; const char *word; } bad[] = {
		{ "0123456789abcdef0123", 0640, "chmod 600" },
		{ "0123456789abcdef0123", 0604, "chmod 600" },
		{ "0123456789abcdef0123", 0620, "chmod 600" },
		{ "short\n", 0600, "needs 16" },
		{ "\n\n", 0600, "holds 0 bytes" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (xp_auth_key_load(key_file("bad", bad[i].content, bad[i].mode), &k, err, sizeof(err)) != -1 ||
		    !strstr(err, bad[i].word))
			fail_msg("case %zu: '%s', want '%s'", i, err, bad[i].word);
		assert_false(k.set);
	}
	assert_int_equal(xp_auth_key_load("/nonexistent/xp.key", &k, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "cannot open"));
	assert_int_equal(xp_auth_key_load(dir, &k, err, sizeof(err)), -1); /* a directory */
}

static void test_mac(void **state)
{
	struct xp_auth_key k, other;
	char err[512], n1[XP_AUTH_HEX_LEN + 1], n2[XP_AUTH_HEX_LEN + 1], mac[XP_AUTH_HEX_LEN + 1];
	assert_int_equal(xp_auth_key_load(key_file("k1", "the shared secret, 32 bytes long", 0600), &k, err, sizeof(err)), 0);
	assert_int_equal(xp_auth_key_load(key_file("k2", "another secret of 32 bytes here.", 0600), &other, err, sizeof(err)), 0);
	assert_int_equal(xp_auth_nonce(n1), 0);
	assert_int_equal(xp_auth_nonce(n2), 0);
	assert_int_equal(strlen(n1), XP_AUTH_HEX_LEN);
	assert_string_not_equal(n1, n2); /* fresh per connection */
	const char *req = "{\"op\":\"start\",\"version\":1,\"port_lo\":63000,\"port_hi\":63015,\"duration\":10}";
	assert_int_equal(xp_auth_mac(&k, n1, req, strlen(req), mac), 0);
	assert_true(xp_auth_verify(&k, n1, req, strlen(req), mac));
	/* Another key, another nonce (a replay), one byte of the request changed: all refused. */
	assert_false(xp_auth_verify(&other, n1, req, strlen(req), mac));
	assert_false(xp_auth_verify(&k, n2, req, strlen(req), mac));
	char req2[128];
	snprintf(req2, sizeof(req2), "%s", req);
	req2[strlen(req2) - 3] = '9'; /* "duration":90 */
	assert_false(xp_auth_verify(&k, n1, req2, strlen(req2), mac));
	assert_false(xp_auth_verify(&k, n1, req, strlen(req) - 1, mac));
	/* Malformed answers. */
	char m2[XP_AUTH_HEX_LEN + 1];
	memcpy(m2, mac, sizeof(m2));
	m2[0] = m2[0] == 'a' ? 'b' : 'a';
	assert_false(xp_auth_verify(&k, n1, req, strlen(req), m2));
	m2[0] = 'z';
	assert_false(xp_auth_verify(&k, n1, req, strlen(req), m2));
	assert_false(xp_auth_verify(&k, n1, req, strlen(req), ""));
	assert_false(xp_auth_verify(&k, n1, req, strlen(req), "00"));
	assert_false(xp_auth_verify(&k, "00", req, strlen(req), mac));
	/* Known answer: HMAC-SHA256("the shared secret, 32 bytes long", "xdpperf control auth v1\0" || 32 zero bytes || "x"),
	 * computed independently: python3 -c 'import hmac,hashlib;print(hmac.new(b"the shared secret, 32 bytes long",
	 * b"xdpperf control auth v1\0"+bytes(32)+b"x",hashlib.sha256).hexdigest())' */
	char zero[XP_AUTH_HEX_LEN + 1];
	memset(zero, '0', XP_AUTH_HEX_LEN);
	zero[XP_AUTH_HEX_LEN] = '\0';
	assert_int_equal(xp_auth_mac(&k, zero, "x", 1, mac), 0);
	assert_string_equal(mac, "bfaa8369bf27f47ce41db63dd5b628d7a3106002aaa0b3effb97d60afd2a67ba");
	struct xp_auth_key none = { 0 };
	assert_false(xp_auth_verify(&none, n1, req, strlen(req), mac));
}

static void test_allow(void **state)
{
	struct xp_server_cfg o;
	char err[256];
	struct xp_addr a;
	xp_server_cfg_default(&o);
	assert_int_equal(xp_addr_parse("8.8.8.8", &a), 0);
	assert_true(xp_policy_peer_allowed(&o, &a)); /* no --allow: any */
	assert_int_equal(xp_parse_cidr("198.18.0.0/15", &o.allow[0].net, &o.allow[0].plen, err, sizeof(err)), 0);
	assert_int_equal(xp_parse_cidr("2001:2::/48", &o.allow[1].net, &o.allow[1].plen, err, sizeof(err)), 0);
	assert_int_equal(xp_parse_cidr("192.0.2.7", &o.allow[2].net, &o.allow[2].plen, err, sizeof(err)), 0);
	assert_int_equal(o.allow[2].plen, 32);
	o.nallow = 3;
	static const struct { const char *a; bool ok; } cases[] = {
		{ "198.18.1.2", true }, { "198.19.255.255", true }, { "198.20.0.0", false }, { "198.17.255.255", false },
		{ "2001:2::1", true }, { "2001:2:0:ffff::1", true }, { "2001:3::1", false }, { "192.0.2.7", true },
		{ "192.0.2.8", false }, { "8.8.8.8", false }, { "::ffff:198.18.1.2", false /* parsed as IPv6 here */ },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(xp_addr_parse(cases[i].a, &a), 0);
		if (xp_policy_peer_allowed(&o, &a) != cases[i].ok)
			fail_msg("%s: allowed %d, want %d", cases[i].a, !cases[i].ok, cases[i].ok);
	}
	/* Host bits are cleared; bad networks refused. */
	struct xp_addr net;
	unsigned plen;
	char s[64];
	assert_int_equal(xp_parse_cidr("198.18.7.9/16", &net, &plen, err, sizeof(err)), 0);
	assert_string_equal(xp_addr_str(&net, s, sizeof(s)), "198.18.0.0");
	assert_int_equal(xp_parse_cidr("0.0.0.0/0", &net, &plen, err, sizeof(err)), 0);
	static const char *const bad[] = { "198.18.0.0/33", "198.18.0.0/", "198.18.0.0/x", "2001:2::/129", "host",
					   "198.18.0.0/016", "" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (xp_parse_cidr(bad[i], &net, &plen, err, sizeof(err)) != -1)
			fail_msg("'%s' accepted", bad[i]);
}

static struct xp_test test_on(uint16_t lo, uint16_t hi)
{
	return (struct xp_test){ .version = 1, .engine = "xsk", .family = AF_INET, .port_lo = lo, .port_hi = hi,
				 .duration = 10 };
}

static void expect_refused(const struct xp_server_cfg *o, const struct xp_test *t, const struct xp_port_range *own,
			   unsigned nown, const char *word)
{
	char err[256] = "";
	int r = xp_policy_check_ports(o, t, own, nown, err, sizeof(err));
	if (r != -1 || !strstr(err, word))
		fail_msg("ports %u:%u: %d '%s', want refused with '%s'", t->port_lo, t->port_hi, r, err, word);
}

static void test_request_caps(void **state)
{
	struct xp_server_cfg o;
	char err[256];
	xp_server_cfg_default(&o);
	struct xp_test t = test_on(63000, 63015);
	t.duration = 3600;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), 0);
	t.duration = 3601;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--max-duration"));
	o.max_duration = 5;
	t.duration = 5.5;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), -1);
	t.duration = 5;
	t.listen = true;
	t.parallel = 100000;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), 0);
	t.parallel = 100001; /* finding 3: parallel up to 10 M */
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--max-parallel"));
	t.parallel = 10;
	t.port_lo = 10000;
	t.port_hi = 10255;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), 0);
	t.port_hi = 10256;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--max-listen-ports"));
	t.listen = false; /* an XDP-only test opens nothing: no listen caps */
	t.parallel = 10000000;
	assert_int_equal(xp_policy_check_test(&o, &t, err, sizeof(err)), 0);
}

/* A free port above the ephemeral range with a socket of proto bound to it by us. */
static int hold_port(int type, uint16_t *port)
{
	uint16_t elo, ehi;
	assert_int_equal(xp_ephemeral_range(&elo, &ehi), 0);
	for (unsigned p = ehi + 1u > 61000 ? ehi + 1u : 61000; p < 65000; p++) {
		int fd = socket(AF_INET, type, 0);
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) && (type != SOCK_STREAM || !listen(fd, 1))) {
			*port = (uint16_t)p;
			return fd;
		}
		close(fd);
	}
	fail_msg("no free port");
	return -1;
}

/* A port above the ephemeral range that nobody here listens on or is bound to (the host's namespace is shared). */
static uint16_t free_port(uint16_t ehi)
{
	struct xp_portset tcp, udp;
	assert_int_equal(xp_ports_in_use(IPPROTO_TCP, &tcp), 0);
	assert_int_equal(xp_ports_in_use(IPPROTO_UDP, &udp), 0);
	for (unsigned p = ehi + 1u > 61000 ? ehi + 1u : 61000; p < 65535; p++)
		if (!xp_portset_has(&tcp, (uint16_t)p) && !xp_portset_has(&udp, (uint16_t)p))
			return (uint16_t)p;
	fail_msg("no free port");
	return 0;
}

static void test_ports(void **state)
{
	struct xp_server_cfg o;
	char err[256];
	xp_server_cfg_default(&o);
	uint16_t elo, ehi;
	assert_int_equal(xp_ephemeral_range(&elo, &ehi), 0);
	struct xp_test t = test_on(1, 5300); /* finding 1: two requests covered every port but the control port */
	expect_refused(&o, &t, NULL, 0, "port 1 is outside");
	t = test_on(23, 23); /* finding 3: listen on port 23 */
	expect_refused(&o, &t, NULL, 0, "port 23 is outside");
	t = test_on(5302, 65535);
	expect_refused(&o, &t, NULL, 0, "ephemeral");
	t = test_on(1024, 5302);
	expect_refused(&o, &t, NULL, 0, "control port 5301");
	t = test_on(elo, elo);
	char want[160];
	snprintf(want, sizeof(want), "port %u is in the server's ephemeral", elo);
	expect_refused(&o, &t, NULL, 0, want);
	o.test_port_lo = 60000; /* --test-ports narrows it */
	uint16_t fp = free_port(ehi);
	t = test_on(fp, fp);
	assert_int_equal(xp_policy_check_ports(&o, &t, NULL, 0, err, sizeof(err)), 0);
	t = test_on(59999, 59999);
	expect_refused(&o, &t, NULL, 0, "--test-ports");
	xp_server_cfg_default(&o);

	/* Another program's listener (ours, here, standing in for sshd) is refused by port; UDP likewise. */
	uint16_t port;
	int fd = hold_port(SOCK_STREAM, &port);
	struct xp_portset used;
	assert_int_equal(xp_ports_in_use(IPPROTO_TCP, &used), 0);
	assert_true(xp_portset_has(&used, port));
	/* One port: this namespace is shared, the ports around it may be anyone's. */
	t = test_on(port, port);
	snprintf(want, sizeof(want), "port %u is in use on the server by another program (a TCP listener)", port);
	expect_refused(&o, &t, NULL, 0, want);
	t.udp = true; /* a UDP test does not touch a TCP listener's traffic */
	assert_int_equal(xp_policy_check_ports(&o, &t, NULL, 0, err, sizeof(err)), 0);
	t.udp = false;
	struct xp_port_range own = { port, port }; /* the server's own standing listeners are not foreign */
	assert_int_equal(xp_policy_check_ports(&o, &t, &own, 1, err, sizeof(err)), 0);
	close(fd);
	assert_int_equal(xp_policy_check_ports(&o, &t, NULL, 0, err, sizeof(err)), 0);

	fd = hold_port(SOCK_DGRAM, &port);
	t = test_on(port, port);
	t.udp = true;
	snprintf(want, sizeof(want), "port %u is in use on the server by another program (a bound UDP socket)", port);
	expect_refused(&o, &t, NULL, 0, want);
	close(fd);
	assert_int_equal(xp_policy_check_ports(&o, &t, NULL, 0, err, sizeof(err)), 0);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* A start's bind addresses (issue 28): the connection's own, inside --allow, or inside --allow-bind; nothing else. */
static void test_bind_addresses(void **state)
{
	struct xp_server_cfg o;
	char err[512];
	struct xp_addr peer, peer6;
	xp_server_cfg_default(&o);
	assert_int_equal(xp_addr_parse("198.18.1.2", &peer), 0);
	assert_int_equal(xp_addr_parse("2001:2:0:1::2", &peer6), 0);
	struct xp_test t = test_on(63000, 63015);
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), 0); /* none given */
	t.nbind = 2;
	assert_int_equal(xp_addr_parse("198.18.1.2", &t.bind[0]), 0);
	assert_int_equal(xp_addr_parse("198.18.1.10", &t.bind[1]), 0);
	/* No --allow: only the peer's own address. A neighbour's is another host's. */
	err[0] = '\0';
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "bind address 198.18.1.10 is neither the client's own (198.18.1.2)"));
	assert_non_null(strstr(err, "--allow-bind CIDR"));
	t.nbind = 1;
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), 0);
	/* Inside an --allow network. */
	t.nbind = 2;
	assert_int_equal(xp_parse_cidr("198.18.1.0/28", &o.allow[0].net, &o.allow[0].plen, err, sizeof(err)), 0);
	o.nallow = 1;
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse("198.18.1.20", &t.bind[1]), 0); /* outside the /28 */
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), -1);
	assert_int_equal(xp_addr_parse("8.8.8.8", &t.bind[1]), 0);
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "8.8.8.8"));
	/* --allow-bind opts in to more. */
	assert_int_equal(xp_parse_cidr("8.8.8.0/24", &o.allow_bind[0].net, &o.allow_bind[0].plen, err, sizeof(err)), 0);
	o.nallow_bind = 1;
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse("8.8.9.8", &t.bind[1]), 0);
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), -1);
	/* The first address is checked like the others; IPv6 too. */
	t.nbind = 1;
	assert_int_equal(xp_addr_parse("198.18.2.1", &t.bind[0]), 0);
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer, err, sizeof(err)), -1);
	t.family = AF_INET6;
	assert_int_equal(xp_addr_parse("2001:2:0:1::2", &t.bind[0]), 0);
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer6, err, sizeof(err)), 0);
	assert_int_equal(xp_addr_parse("2001:2:0:1::3", &t.bind[0]), 0);
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer6, err, sizeof(err)), -1);
	assert_int_equal(xp_parse_cidr("2001:2:0:1::/64", &o.allow_bind[1].net, &o.allow_bind[1].plen, err, sizeof(err)), 0);
	o.nallow_bind = 2;
	assert_int_equal(xp_policy_check_bind(&o, &t, &peer6, err, sizeof(err)), 0);
}

/* Per-address limits count by /24 and /64 (issue 28 point 9). */
static void test_addr_block(void **state)
{
	static const struct { const char *a, *net; unsigned plen; } cases[] = {
		{ "198.18.1.77", "198.18.1.0", 24 },
		{ "198.18.1.0", "198.18.1.0", 24 },
		{ "10.255.255.255", "10.255.255.0", 24 },
		{ "2001:2:0:1::1f", "2001:2:0:1::", 64 },
		{ "2001:2:0:1:ffff:ffff:ffff:ffff", "2001:2:0:1::", 64 },
		{ "2001:2:0:2::1", "2001:2:0:2::", 64 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct xp_addr a;
		struct xp_cidr blk;
		char s[64];
		assert_int_equal(xp_addr_parse(cases[i].a, &a), 0);
		xp_policy_addr_block(&a, &blk);
		assert_string_equal(xp_addr_str(&blk.net, s, sizeof(s)), cases[i].net);
		assert_int_equal(blk.plen, cases[i].plen);
		assert_true(xp_cidr_contains(&blk.net, blk.plen, &a));
	}
	struct xp_addr a, b;
	struct xp_cidr blk;
	assert_int_equal(xp_addr_parse("198.18.1.12", &a), 0);
	xp_policy_addr_block(&a, &blk);
	assert_int_equal(xp_addr_parse("198.18.1.250", &b), 0);
	assert_true(xp_cidr_contains(&blk.net, blk.plen, &b));
	assert_int_equal(xp_addr_parse("198.18.2.12", &b), 0);
	assert_false(xp_cidr_contains(&blk.net, blk.plen, &b));
	assert_int_equal(xp_addr_parse("2001:2:0:1::12", &b), 0);
	assert_false(xp_cidr_contains(&blk.net, blk.plen, &b)); /* another family */
}

/* The start-rate bucket (issue 28 point 5): a burst, then a steady rate; time going back gives nothing. */
static void test_rate_bucket(void **state)
{
	struct xp_rate_bucket b = { 0 };
	int n = 0;
	while (xp_policy_rate_take(&b, 100.0, 20, 2))
		n++;
	assert_int_equal(n, 20); /* a fresh block: the burst */
	assert_false(xp_policy_rate_take(&b, 100.4, 20, 2)); /* 0.8 of a token */
	assert_true(xp_policy_rate_take(&b, 100.5, 20, 2));  /* 1 token after 0.5 s */
	assert_false(xp_policy_rate_take(&b, 100.5, 20, 2));
	assert_false(xp_policy_rate_take(&b, 90.0, 20, 2)); /* the clock going back adds nothing */
	/* 30 s of 500 tries evenly: the burst is spent, then 2 a second. */
	struct xp_rate_bucket c = { 0 };
	n = 0;
	for (int i = 0; i < 500; i++)
		n += xp_policy_rate_take(&c, 1000.0 + i * 30.0 / 500, 20, 2);
	assert_in_range(n, 20 + 58, 20 + 60);
	/* A long pause fills it to the burst, not beyond. */
	n = 0;
	while (xp_policy_rate_take(&c, 5000.0, 20, 2))
		n++;
	assert_int_equal(n, 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_file),
		cmocka_unit_test(test_mac),
		cmocka_unit_test(test_allow),
		cmocka_unit_test(test_request_caps),
		cmocka_unit_test(test_ports),
		cmocka_unit_test(test_bind_addresses),
		cmocka_unit_test(test_addr_block),
		cmocka_unit_test(test_rate_bucket),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
