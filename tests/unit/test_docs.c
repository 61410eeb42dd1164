/*
 * Docs and behaviour cannot drift: every xdpperf command line of the README,
 * of every page of docs/ and of the man page (as tests/tools/doc_commands.sh
 * finds them) parses, the refusals they quote are refused with exactly the
 * message quoted, every example value that --help and the README give for -b
 * is a rate the parser takes, and every relative link of the README and docs/
 * leads to a file and a heading that exist (tests/tools/doc_links.py).
 * tests/e2e/85_docs.sh runs the same client and server command lines in the lab.
 * Run from the repository's top directory (tests/run.sh does).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ctype.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/options.h"

/* Parse "xdpperf ARGS" as main() would. */
static int parse_args(const char *args, char *err, size_t errlen)
{
	static char buf[1024];
	char *argv[64];
	int argc = 0;
	static struct xp_opts o;
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

/* Every command line of one document; at least min_ok that run and min_refused quoted refusals.
 * Returns how many command lines it has. */
static int check_doc(const char *doc, int min_ok, int min_refused)
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
	return ok + refused;
}

static void test_readme_command_lines(void **state)
{
	check_doc("README.md", 5, 2);
}

/* Every page of docs/ (and docs/benchmarks/): the subjects the README links. A page
 * may show no command; together they hold the examples the README once did. */
static void test_docs_pages_command_lines(void **state)
{
	glob_t g;
	int pages = 0, lines = 0;

	assert_int_equal(glob("docs/*.md", 0, NULL, &g), 0);
	assert_int_equal(glob("docs/*/*.md", GLOB_APPEND | GLOB_NOCHECK, NULL, &g), 0);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (strchr(g.gl_pathv[i], '*'))
			continue; /* GLOB_NOCHECK's pattern: no page in a subfolder */
		lines += check_doc(g.gl_pathv[i], 0, 0);
		pages++;
	}
	globfree(&g);
	print_message("docs/: %d pages, %d command lines\n", pages, lines);
	assert_true(pages >= 10);
	assert_true(lines >= 25);
}

/* Run tests/tools/doc_links.py with ARGS; its last line's counts. Returns its exit status. */
static int doc_links(const char *args, int *links, int *pages, int *broken)
{
	char cmd[512], line[1024], last[1024] = "";
	snprintf(cmd, sizeof(cmd), "python3 tests/tools/doc_links.py %s", args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		print_message("%s", line);
		snprintf(last, sizeof(last), "%s", line);
	}
	int st = pclose(p);
	assert_int_equal(sscanf(last, "%d links in %d pages, %d broken", links, pages, broken), 3);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_doc_links(void **state)
{
	int links, pages, broken;

	assert_int_equal(doc_links("", &links, &pages, &broken), 0);
	assert_int_equal(broken, 0);
	assert_true(pages >= 11);  /* README.md and the pages of docs/ */
	assert_true(links >= 25);  /* the README's links to every page, and theirs */

	/* The checker finds what it is for: a missing file, a missing heading;
	 * not a link inside a code span, nor one to a heading that exists. */
	char dir[] = "/tmp/xdpperf-doclinks.XXXXXX", page[64], args[96];
	assert_non_null(mkdtemp(dir));
	snprintf(page, sizeof(page), "%s/p.md", dir);
	FILE *f = fopen(page, "w");
	assert_non_null(f);
	fprintf(f, "# A page\n\n## Its part: `--x`\n\n[ok](#its-part---x) [gone](nothere.md) "
		   "[no heading](p.md#nowhere) `[code](not-a-link.md)`\n");
	fclose(f);
	snprintf(args, sizeof(args), "%s", page);
	assert_int_equal(doc_links(args, &links, &pages, &broken), 1);
	assert_int_equal(links, 3);
	assert_int_equal(broken, 2);
	unlink(page);
	rmdir(dir);
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
		cmocka_unit_test(test_docs_pages_command_lines),
		cmocka_unit_test(test_doc_links),
		cmocka_unit_test(test_manpage_command_lines),
		cmocka_unit_test(test_rate_examples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
