/*
 * The port range a server hands a client without -p (server/portrange.c,
 * issue 30 point 6): the default range when it is free, the next free run
 * past running tests and listeners, a run across a gap too small refused,
 * the wrap below the default range, and exhaustion. What the server marks
 * as taken (tests, reservations, listeners) and the refusal naming -p are
 * tests/e2e/92_two_clients.sh's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "server/portrange.h"

static struct xp_portset taken;

static int run(unsigned lo, unsigned hi, unsigned start, unsigned width, uint16_t *out)
{
	*out = 0;
	return xp_port_run(&taken, lo, hi, start, width, out);
}

static void test_free_default(void **state)
{
	uint16_t p;
	memset(&taken, 0, sizeof(taken));
	assert_int_equal(run(1024, 65535, 63000, 16, &p), 0);
	assert_int_equal(p, 63000);
}

static void test_past_a_running_test(void **state)
{
	uint16_t p;
	memset(&taken, 0, sizeof(taken));
	xp_portset_add_range(&taken, 63000, 63015); /* the first client's test */
	assert_int_equal(run(1024, 65535, 63000, 16, &p), 0);
	assert_int_equal(p, 63016);
	/* a partial overlap: a listener at 63020 pushes the run past it */
	xp_portset_add(&taken, 63020);
	assert_int_equal(run(1024, 65535, 63000, 16, &p), 0);
	assert_int_equal(p, 63021);
	/* a gap of 15 is not enough for 16 */
	memset(&taken, 0, sizeof(taken));
	xp_portset_add_range(&taken, 63000, 63015);
	xp_portset_add_range(&taken, 63031, 63031);
	assert_int_equal(run(1024, 65535, 63000, 16, &p), 0);
	assert_int_equal(p, 63032);
	assert_int_equal(run(1024, 65535, 63000, 15, &p), 0);
	assert_int_equal(p, 63016);
}

static void test_wraps_below(void **state)
{
	uint16_t p;
	memset(&taken, 0, sizeof(taken));
	xp_portset_add_range(&taken, 62990, 65535);
	assert_int_equal(run(1024, 65535, 63000, 16, &p), 0);
	assert_int_equal(p, 1024);
	/* and below the default, a run that ends just under the taken part */
	xp_portset_add_range(&taken, 1024, 62973);
	assert_int_equal(run(1024, 65535, 63000, 16, &p), 0);
	assert_int_equal(p, 62974);
	assert_int_equal(run(1024, 65535, 63000, 17, &p), -ENOSPC);
}

static void test_exhausted(void **state)
{
	uint16_t p;
	memset(&taken, 0, sizeof(taken));
	/* --test-ports 63000:63031 with two tests on it */
	xp_portset_add_range(&taken, 63000, 63031);
	assert_int_equal(run(63000, 63031, 63000, 16, &p), -ENOSPC);
	/* wider than the allowed range, or nothing asked */
	memset(&taken, 0, sizeof(taken));
	assert_int_equal(run(63000, 63031, 63000, 33, &p), -ENOSPC);
	assert_int_equal(run(63000, 63031, 63000, 0, &p), -ENOSPC);
	/* exactly the range */
	assert_int_equal(run(63000, 63031, 63000, 32, &p), 0);
	assert_int_equal(p, 63000);
	/* the start outside lo..hi: from lo */
	assert_int_equal(run(2000, 3000, 63000, 16, &p), 0);
	assert_int_equal(p, 2000);
	/* the top port */
	memset(&taken, 0, sizeof(taken));
	xp_portset_add_range(&taken, 0, 65534);
	assert_int_equal(run(1024, 65535, 63000, 1, &p), 0);
	assert_int_equal(p, 65535);
	assert_int_equal(run(1024, 65535, 63000, 2, &p), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_default),
		cmocka_unit_test(test_past_a_running_test),
		cmocka_unit_test(test_wraps_below),
		cmocka_unit_test(test_exhausted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
