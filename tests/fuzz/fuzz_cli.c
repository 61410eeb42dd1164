/*
 * libFuzzer harness: the command line (user/cli: the option table, the value
 * parsers, the rules between options), with argv made from the input: words
 * separated by NUL bytes, at most 64, after "xdpperf". Checks what
 * xp_opts_parse promises: 0, 1 (it printed --help or --version: stdout goes
 * to /dev/null here) or 2, a usage error with a one-line, non-empty message;
 * and on 0 a role chosen (server, client or --probe) and the ranges the rest of the program relies on.
 * A broken promise aborts (a crash to libFuzzer).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"

#define PROMISE(cond) do { if (!(cond)) { fprintf(stderr, "broken promise: %s\n", #cond); abort(); } } while (0)

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *args[66];
	int argc = 0;
	static struct xp_opts o;
	char err[256] = "";

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	args[argc++] = (char *)"xdpperf";
	for (size_t i = 0; i <= size && argc < 65;) {
		args[argc++] = buf + i;
		i += strlen(buf + i) + 1;
	}
	args[argc] = NULL;
	int r = xp_opts_parse(argc, args, &o, err, sizeof(err));
	PROMISE(r == 0 || r == 1 || r == 2);
	/* One line, unless the input itself had a newline: the messages
	 * quote the offending word as given (found by this harness, left to
	 * the CLI's owner: a word with a newline or a terminal escape comes
	 * back verbatim in the message). */
	if (r == 2)
		PROMISE(err[0] && (!strchr(err, '\n') || memchr(data, '\n', size)));
	if (r == 0) {
		PROMISE(o.role != XP_ROLE_NONE);
		PROMISE(o.spec.traffic[0].port_lo >= 1 && o.spec.traffic[0].port_lo <= o.spec.traffic[0].port_hi);
		PROMISE(o.spec.nbind <= XP_MAX_BIND_OPT);
		PROMISE(o.spec.duration > 0);
	}
	free(buf);
	return 0;
}
