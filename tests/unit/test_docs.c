/*
 * Docs and behaviour cannot drift: every xdpperf command line of the README
 * and the man page (as tests/tools/doc_commands.sh finds them) parses, the refusals it quotes
 * are refused with exactly the message quoted, and every example value that
 * --help and the README give for -b is a rate the parser takes.
 * tests/e2e/80_docs.sh runs the README's client command lines in the lab.
 * Run from the repository's top directory (tests/run.sh does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/options.h"

/* Parse "xdpperf ARGS" as main() would. */
static int parse_args(const char *args, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;
	struct xp_opts o;
	snprintf(buf, sizeof(buf), "xdpperf %s", args);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = '\0';
	FILE *saved = stdout;
	stdout = fopen("/dev/null", "w"); /* --help prints */
	int r = xp_opts_parse(argc, argv, &o, err, errlen);
	fclose(stdout);
	stdout = saved;
	return r;
}

/* Every command line of one document; at least min_ok that run and min_refused quoted refusals. */
static void check_doc(const char *doc, int min_ok, int min_refused)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "bash tests/tools/doc_commands.sh %s", doc);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char line[2048];
	int ok = 0, refused = 0;
	while (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		char *kind = strtok(line, "\t"), *args = strtok(NULL, "\t"), *msg = strtok(NULL, "\t");
		char err[512];
		assert_non_null(kind);
		assert_non_null(args);
		int r = parse_args(args, err, sizeof(err));
		if (!strcmp(kind, "ok")) {
			if (r != 0 && r != 1)
				fail_msg("%s: 'xdpperf %s' does not parse: %s", doc, args, err);
			ok++;
		} else {
			assert_non_null(msg);
			if (r != 2 || strcmp(err, msg))
				fail_msg("%s: 'xdpperf %s' should be refused with '%s'; got %d '%s'", doc, args, msg, r, err);
			refused++;
		}
	}
	assert_int_equal(pclose(p), 0);
	print_message("%s: %d command lines parse, %d quoted refusals match\n", doc, ok, refused);
	assert_true(ok >= min_ok && refused >= min_refused);
}

static void test_readme_command_lines(void **state)
{
	check_doc("README.md", 15, 2);
}

static void test_manpage_command_lines(void **state)
{
	check_doc("man/xdpperf.1", 10, 0);
}

/* Every token of s that starts with a digit (a rate example like "100kpps," or "(1G-l2)") parses as a rate. */
static int check_rates_in(const char *where, const char *s)
{
	int n = 0;
	for (const char *p = s; *p; p++) {
		if (!isdigit((unsigned char)*p) || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '.')))
			continue;
		char tok[32];
		size_t k = 0;
		while ((isalnum((unsigned char)p[k]) || p[k] == '.' || p[k] == '-') && k + 1 < sizeof(tok))
			tok[k] = p[k], k++;
		tok[k] = '\0';
		while (k && (tok[k - 1] == '.' || tok[k - 1] == '-'))
			tok[--k] = '\0';
		struct xp_rate r;
		char err[256];
		if (parse_rate(tok, &r, err, sizeof(err)))
			fail_msg("%s gives '%s' as a rate: %s", where, tok, err);
		n++;
		p += k ? k - 1 : 0;
	}
	return n;
}

static void test_rate_examples(void **state)
{
	/* --help's -b text */
	const struct xp_option *b = xp_option_find("bitrate");
	assert_non_null(b);
	assert_true(check_rates_in("--help (-b)", b->help) >= 5);
	/* the README's -b row: the backquoted values */
	FILE *f = fopen("README.md", "r");
	assert_non_null(f);
	char line[4096];
	int n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "| `-b RATE`", 11))
			continue;
		for (char *q = strchr(line + 11, '`'); q; q = strchr(q + 1, '`')) {
			char *e = strchr(q + 1, '`');
			if (!e)
				break;
			*e = '\0';
			if (isdigit((unsigned char)q[1]))
				n += check_rates_in("README (-b)", q + 1);
			q = e;
		}
	}
	fclose(f);
	assert_true(n >= 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readme_command_lines),
		cmocka_unit_test(test_manpage_command_lines),
		cmocka_unit_test(test_rate_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
