/*
 * The bash completion (completions/xdpperf) against the option table and
 * the engine table: completing "-" offers every option and nothing else,
 * after an option that takes a value no option is offered, and each value
 * list offers exactly what the parser accepts. Bash runs the real script.
 *
 * Runs from the tree's top (tests/run.sh does); XP_COMPLETION overrides the path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/options.h"

static const char *script(void)
{
	const char *p = getenv("XP_COMPLETION");
	return p ? p : "completions/xdpperf";
}

/* What the completion offers for the words (the last one being completed), one per line. */
static char *complete(const char *const *words, int n)
{
	static const char prog[] = "source \"$0\" || exit 3; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
				   "_xdpperf; printf '%s\\n' \"${COMPREPLY[@]}\"";
	const char *argv[32] = { "bash", "--norc", "--noprofile", "-c", prog, script() };
	int a = 6;
	for (int i = 0; i < n && a < 31; i++)
		argv[a++] = words[i];
	argv[a] = NULL;
	int fd[2];
	assert_int_equal(pipe(fd), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp("bash", (char **)argv);
		_exit(127);
	}
	close(fd[1]);
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	char buf[4096];
	ssize_t r;
	while ((r = read(fd[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)r, m);
	close(fd[0]);
	fclose(m);
	int st;
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		fail_msg("bash with %s exited with status %d", script(), st);
	return out;
}

static bool offered(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)); p++)
		if ((p == list || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static int lines(const char *list)
{
	int n = 0;
	for (const char *p = list; *p; p++)
		n += *p == '\n';
	return n;
}

static void test_dash_offers_every_option(void **state)
{
	const char *w[] = { "xdpperf", "-" };
	char *all = complete(w, 2);
	int want = 0;
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		char name[64];
		if (op->letter) {
			snprintf(name, sizeof(name), "-%c", op->letter);
			want++;
			if (!offered(all, name))
				fail_msg("completing '-' does not offer %s", name);
		}
		if (op->name) {
			snprintf(name, sizeof(name), "--%s", op->name);
			want++;
			if (!offered(all, name))
				fail_msg("completing '-' does not offer %s", name);
		}
	}
	/* ...and nothing that is not an option. */
	assert_int_equal(lines(all), want);
	free(all);
	const char *w2[] = { "xdpperf", "--pro" };
	all = complete(w2, 2);
	assert_string_equal(all, "--probe\n");
	free(all);
}

/* A flag is followed by another option; an option with a value by its value, not an option. */
static void test_after_each_option(void **state)
{
	for (size_t i = 0; i < xp_noptions; i++) {
		const struct xp_option *op = &xp_options[i];
		char name[64];
		if (op->name)
			snprintf(name, sizeof(name), "--%s", op->name);
		else
			snprintf(name, sizeof(name), "-%c", op->letter);
		const char *w[] = { "xdpperf", name, "" };
		char *after = complete(w, 3);
		if (op->arg && offered(after, "--server"))
			fail_msg("after %s (it takes %s) the completion offers options", name, op->arg);
		free(after);
		const char *w2[] = { "xdpperf", name, "--serv" };
		after = complete(w2, 3);
		if (!op->arg && !offered(after, "--server"))
			fail_msg("after the flag %s the completion offers no options", name);
		free(after);
	}
}

/* Every value offered after opt is accepted by the parser (with -c, or --probe for --dev). */
static void values_parse(const char *opt, const char *values)
{
	char *copy = strdup(values);
	for (char *v = strtok(copy, "\n"); v; v = strtok(NULL, "\n")) {
		char *argv[] = { "xdpperf", "-c", "198.18.0.1", (char *)opt, v, NULL };
		static struct xp_opts o;
		struct xp_given g;
		char err[256] = "";
		if (xp_cli_read(5, argv, &o, &g, err, sizeof(err)))
			fail_msg("the completion offers '%s %s', which the parser refuses: %s", opt, v, err);
	}
	free(copy);
}

static void test_value_lists(void **state)
{
	static const char *const enums[] = { "--engine", "--syn-engine", "--xdp-mode", "--peer", "-l" };
	for (size_t i = 0; i < sizeof(enums) / sizeof(enums[0]); i++) {
		const char *w[] = { "xdpperf", enums[i], "" };
		char *vals = complete(w, 3);
		if (!*vals)
			fail_msg("no values offered after %s", enums[i]);
		values_parse(enums[i], vals);
		/* Every engine name the parser takes for this option is offered. */
		if (!strcmp(enums[i], "--engine") || !strcmp(enums[i], "--syn-engine")) {
			for (int id = 0; id < XP_ENGINE_COUNT; id++) {
				const char *name = xp_engine_name((enum xp_engine_id)id);
				char *argv[] = { "xdpperf", "-c", "198.18.0.1", (char *)enums[i], (char *)name, NULL };
				static struct xp_opts o;
				struct xp_given g;
				char err[256];
				if (!xp_cli_read(5, argv, &o, &g, err, sizeof(err)) && !offered(vals, name))
					fail_msg("%s %s is accepted but not offered", enums[i], name);
			}
		}
		free(vals);
	}
	/* Interfaces: this namespace's, lo at least. */
	const char *w[] = { "xdpperf", "--dev", "l" };
	char *vals = complete(w, 3);
	assert_true(offered(vals, "lo"));
	free(vals);
	const char *w2[] = { "xdpperf", "-D", "" };
	vals = complete(w2, 3);
	assert_true(offered(vals, "lo"));
	free(vals);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dash_offers_every_option),
		cmocka_unit_test(test_after_each_option),
		cmocka_unit_test(test_value_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
