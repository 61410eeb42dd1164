/*
 * The man page (man/xdpperf.1) against the option table (user/cli/options.c),
 * so that it and --help cannot drift apart: every option has its .TP entry,
 * named as --help names it, and the page names no option that does not
 * exist. And the page renders without a warning from groff or man.
 *
 * Runs from the tree's top (tests/run.sh does); XP_MANPAGE overrides the path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "cli/options.h"

/* Options of the lab script that the page documents beside xdpperf's own. */
static const char *const lab_options[] = { "direct", "firewall", "force", NULL };

static const char *page_path(void)
{
	const char *p = getenv("XP_MANPAGE");
	return p ? p : "man/xdpperf.1";
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

/* s with every '-' as roff's "\-". */
static void roff_dashes(const char *s, char *out, size_t len)
{
	size_t n = 0;
	for (; *s && n + 3 < len; s++) {
		if (*s == '-')
			out[n++] = '\\';
		out[n++] = *s;
	}
	out[n] = '\0';
}

/* The .TP tag the page must have for op: "\fB\-c\fR, \fB\-\-client\fR \fIADDR\fR". */
static void expected_tag(const struct xp_option *op, char *out, size_t len)
{
	char name[64] = "", arg[64] = "";
	if (op->name)
		roff_dashes(op->name, name, sizeof(name));
	if (op->arg)
		roff_dashes(op->arg, arg, sizeof(arg));
	int n;
	if (op->letter && op->name)
		n = snprintf(out, len, "\\fB\\-%c\\fR, \\fB\\-\\-%s\\fR", op->letter, name);
	else if (op->letter)
		n = snprintf(out, len, "\\fB\\-%c\\fR", op->letter);
	else
		n = snprintf(out, len, "\\fB\\-\\-%s\\fR", name);
	if (op->arg)
		snprintf(out + n, len - (size_t)n, " \\fI%s\\fR", arg);
}

/* The line after each ".TP" that starts with a bold option: the page's option entries. */
static int tags_of(char *page, char **tags, int max)
{
	int n = 0;
	for (char *l = strtok(page, "\n"), *prev = NULL; l && n < max; prev = l, l = strtok(NULL, "\n"))
		if (prev && !strcmp(prev, ".TP") && !strncmp(l, "\\fB\\-", 5))
			tags[n++] = l;
	return n;
}

static void test_every_option_has_an_entry(void **state)
{
	char *page = slurp(page_path());
	if (!page)
		fail_msg("cannot read %s", page_path());
	char *tags[256];
	int n = tags_of(page, tags, 256);
	for (size_t i = 0; i < xp_noptions; i++) {
		char want[160];
		expected_tag(&xp_options[i], want, sizeof(want));
		int found = 0;
		for (int t = 0; t < n; t++)
			found += !strcmp(tags[t], want);
		if (found != 1)
			fail_msg("%s: %d entries '.TP' + '%s' (want exactly one)", page_path(), found, want);
	}
	free(page);
}

static void test_every_entry_is_an_option(void **state)
{
	char *page = slurp(page_path());
	assert_non_null(page);
	char *tags[256];
	int n = tags_of(page, tags, 256);
	for (int t = 0; t < n; t++) {
		int found = 0;
		for (size_t i = 0; i < xp_noptions && !found; i++) {
			char want[160];
			expected_tag(&xp_options[i], want, sizeof(want));
			found = !strcmp(tags[t], want);
		}
		if (!found)
			fail_msg("%s: entry '%s' is no option of the table (or names it differently)", page_path(), tags[t]);
	}
	assert_int_equal(n, (int)xp_noptions);
	free(page);
}

/* Anywhere in the page, "\-\-name" is a table option (or one of the lab's). */
static void test_page_mentions_only_real_options(void **state)
{
	char *page = slurp(page_path());
	assert_non_null(page);
	for (char *p = strstr(page, "\\-\\-"); p; p = strstr(p + 1, "\\-\\-")) {
		char name[64];
		size_t n = 0;
		const char *q = p + 4;
		while (n + 1 < sizeof(name) && (((*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')) || !strncmp(q, "\\-", 2))) {
			if (*q == '\\')
				q++;
			name[n++] = *q++;
		}
		name[n] = '\0';
		if (!n)
			continue; /* "<\-\->" in the lab's picture */
		bool ok = xp_option_find(name) != NULL;
		for (int i = 0; lab_options[i] && !ok; i++)
			ok = !strcmp(name, lab_options[i]);
		if (!ok)
			fail_msg("%s mentions --%s, which is no option", page_path(), name);
	}
	free(page);
}

/* The defaults and limits --help prints from constants (help_nums) are in the entry's text too. */
static void test_entries_give_the_tables_numbers(void **state)
{
	char *page = slurp(page_path());
	assert_non_null(page);
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		char tag[160];
		expected_tag(op, tag, sizeof(tag));
		strcat(tag, "\n");
		char *entry = strstr(page, tag);
		if (!entry)
			continue; /* test_every_option_has_an_entry says so */
		char *end = strstr(entry, "\n.TP\n");
		char *sect = strstr(entry, "\n.S");
		if (!end || (sect && sect < end))
			end = sect;
		size_t len = end ? (size_t)(end - entry) : strlen(entry);
		char *text = strndup(entry, len);
		const char *p = op->help;
		for (size_t k = 0; k < sizeof(op->help_nums) / sizeof(op->help_nums[0]); k++) {
			p = p ? strstr(p, "%u") : NULL;
			if (!p)
				break;
			p += 2;
			char num[16];
			snprintf(num, sizeof(num), "%u", op->help_nums[k]);
			if (!strstr(text, num))
				fail_msg("%s: the entry of --%s does not give %s, which --help does", page_path(),
					 op->name ? op->name : "?", num);
		}
		free(text);
	}
	free(page);
}

/* The page's required sections are there. */
static void test_sections(void **state)
{
	char *page = slurp(page_path());
	assert_non_null(page);
	static const char *const want[] = { ".SH NAME\n", ".SH SYNOPSIS\n", ".SH OPTIONS\n", ".SH \"EXIT STATUS\"\n",
					    ".SH EXAMPLES\n", ".SH SECURITY\n", ".SH \"SEE ALSO\"\n" };
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char alt[64];
		/* ".SH EXIT STATUS" unquoted is the same heading. */
		snprintf(alt, sizeof(alt), "%s", want[i]);
		for (char *q = alt; *q; q++)
			if (*q == '"')
				memmove(q, q + 1, strlen(q));
		if (!strstr(page, want[i]) && !strstr(page, alt))
			fail_msg("%s has no section %s", page_path(), alt);
	}
	/* The exit statuses --help promises. */
	for (const char *s = "012"; *s; s++) {
		char tp[16];
		snprintf(tp, sizeof(tp), ".TP\n.B %c\n", *s);
		if (!strstr(page, tp))
			fail_msg("%s: EXIT STATUS has no entry for %c", page_path(), *s);
	}
	free(page);
}

/* Whatever cmd prints (stderr included) while it renders the page, and its status. */
static char *run(const char *fmt, int *status)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), fmt, page_path());
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	char buf[1024];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, m);
	fclose(m);
	*status = pclose(p);
	return out;
}

static void test_renders_without_warnings(void **state)
{
	int st;
	/* -ww: every warning; -z: no output, only the diagnostics. */
	char *out = run("groff -man -ww -z '%s' 2>&1", &st);
	if (st || *out)
		fail_msg("groff -man -ww warns (status %d): %s", st, out);
	free(out);
	/* man's own check, and the page as a reader gets it. */
	out = run("MANWIDTH=80 man --warnings -l '%s' 2>&1 >/dev/null", &st);
	if (st || *out)
		fail_msg("man --warnings -l warns (status %d): %s", st, out);
	free(out);
	out = run("MANWIDTH=80 man -l '%s' 2>/dev/null", &st);
	assert_int_equal(st, 0);
	assert_non_null(strstr(out, "EXIT STATUS"));
	assert_non_null(strstr(out, "--probe"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_option_has_an_entry),
		cmocka_unit_test(test_every_entry_is_an_option),
		cmocka_unit_test(test_page_mentions_only_real_options),
		cmocka_unit_test(test_entries_give_the_tables_numbers),
		cmocka_unit_test(test_sections),
		cmocka_unit_test(test_renders_without_warnings),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
