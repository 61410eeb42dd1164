/*
 * The server's capability drop (util/privdrop.c, issue 28 point 13): which
 * set a server keeps for which options, the names --probe and the docs
 * print, and the drop itself, in a forked child: afterwards the child's
 * /proc/self/status shows exactly the kept set in CapEff, CapPrm and CapBnd,
 * nothing inheritable or ambient, and no_new_privs; a second thread makes
 * the drop refuse (capabilities are per thread). What a running server
 * shows is tests/e2e/91_caps.sh's.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/privdrop.h"

static void test_server_set(void **state)
{
	size_t n;
	const struct xp_cap_use *u = xp_server_cap_uses(&n);
	uint64_t fixed = 0;
	for (size_t i = 0; i < n; i++) {
		assert_non_null(u[i].why);
		assert_int_equal(strncmp(u[i].name, "CAP_", 4), 0);
		fixed |= 1ULL << u[i].cap;
	}
	assert_int_equal(__builtin_popcountll(fixed), 5);
	/* the default --test-ports 1024:65535 against the default start: no low port */
	assert_true(xp_server_caps(1024, 1024) == fixed);
	assert_true(xp_server_caps(1024, 1025) == (fixed | 1ULL << CAP_NET_BIND_SERVICE));
	assert_true(xp_server_caps(80, 1024) == (fixed | 1ULL << CAP_NET_BIND_SERVICE));
	/* a namespace where every port is unprivileged */
	assert_true(xp_server_caps(1, 0) == fixed);
	assert_int_equal(xp_server_cap_bind()->cap, CAP_NET_BIND_SERVICE);
	assert_false(fixed >> CAP_DAC_OVERRIDE & 1);
	assert_false(fixed >> CAP_SETUID & 1);
	assert_false(fixed >> CAP_SYS_MODULE & 1);
	assert_false(fixed >> CAP_SYS_ADMIN & 1);
}

static void test_names(void **state)
{
	char b[256];
	xp_caps_names(1ULL << CAP_NET_ADMIN | 1ULL << CAP_BPF | 1ULL << CAP_NET_RAW, b, sizeof(b));
	assert_string_equal(b, "CAP_NET_ADMIN CAP_NET_RAW CAP_BPF");
	xp_caps_names(0, b, sizeof(b));
	assert_string_equal(b, "");
	/* too small a buffer: cut, still terminated */
	xp_caps_names(1ULL << CAP_NET_ADMIN | 1ULL << CAP_BPF, b, 8);
	assert_int_equal(strlen(b), 7);
}

static uint64_t status_hex(const char *key)
{
	char line[256];
	unsigned long long v = ~0ULL;
	FILE *f = fopen("/proc/self/status", "r");
	assert_non_null(f);
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = strtoull(line + kl + 1, NULL, 16);
	fclose(f);
	return v;
}

/* In a child: drop to fixed (minus what the test runner lacks), then 0 if /proc/self/status agrees. */
static int child_drop(void)
{
	uint64_t eff, prm, kept = 0, keep = xp_server_caps(1024, 1024);
	char err[256];
	if (xp_caps_current(&eff, &prm))
		return 10;
	uint64_t want = keep & prm;
	if (xp_caps_drop_to(keep, &kept, err, sizeof(err))) {
		fprintf(stderr, "drop: %s\n", err);
		return 11;
	}
	if (kept != want || status_hex("CapEff") != want || status_hex("CapPrm") != want)
		return 12;
	if (status_hex("CapInh") != 0 || status_hex("CapAmb") != 0)
		return 13;
	/* The bounding set goes too when we could drop it (CAP_SETPCAP: root). */
	if ((prm >> CAP_SETPCAP & 1) && status_hex("CapBnd") != want)
		return 14;
	if (status_hex("NoNewPrivs") != 1)
		return 15;
	return 0;
}

static void *idle(void *arg)
{
	pause();
	return NULL;
}

static int child_threaded(void)
{
	pthread_t t;
	uint64_t kept;
	char err[256];
	if (pthread_create(&t, NULL, idle, NULL))
		return 20;
	int r = xp_caps_drop_to(xp_server_caps(1024, 1024), &kept, err, sizeof(err));
	return r == -16 /* EBUSY */ && strstr(err, "threads") ? 0 : 21;
}

static int in_child(int (*fn)(void))
{
	pid_t p = fork();
	if (!p)
		_exit(fn());
	int st;
	assert_int_equal(waitpid(p, &st, 0), p);
	assert_true(WIFEXITED(st));
	return WEXITSTATUS(st);
}

static void test_drop(void **state)
{
	assert_int_equal(in_child(child_drop), 0);
	assert_int_equal(in_child(child_threaded), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_server_set),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_drop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
