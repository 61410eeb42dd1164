/* Per-CPU values summed (user/loader/percpu.c): every field, or only the leading ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "loader/percpu.h"

struct three {
	uint64_t a, b, c;
};

static void test_sum_every_field(void **state)
{
	struct three v[4] = { { 1, 10, 100 }, { 2, 20, 200 }, { 3, 30, 300 }, { 4, 40, 400 } };
	struct three s;
	memset(&s, 0xff, sizeof(s));
	xp_percpu_sum(v, 4, sizeof(v[0]), &s, sizeof(s));
	assert_int_equal(s.a, 10);
	assert_int_equal(s.b, 100);
	assert_int_equal(s.c, 1000);
}

/* A leading counter of a larger value (the generator's `sent`): the stride
 * is the value's size, only the first out_size bytes are summed. */
static void test_sum_leading_field(void **state)
{
	struct three v[3] = { { 5, 1, 1 }, { 6, 1, 1 }, { 7, 1, 1 } };
	uint64_t s[2] = { 99, 99 };
	xp_percpu_sum(v, 3, sizeof(v[0]), s, sizeof(s[0]));
	assert_int_equal(s[0], 18);
	assert_int_equal(s[1], 99); /* untouched */
	xp_percpu_sum(v, 0, sizeof(v[0]), s, sizeof(s[0]));
	assert_int_equal(s[0], 0); /* no CPUs: zero */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sum_every_field),
		cmocka_unit_test(test_sum_leading_field),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
