/*
 * Tests' command lines: parse a space-separated line (e.g. "xdpperf -c
 * 198.18.1.1 -l imix") with the real option parser. Shared by the unit
 * tests of the options (test_cli, test_cli_table, test_mix, test_rx_timestamp).
 */
#ifndef XDPPERF_TESTS_CLI_PARSE_H
#define XDPPERF_TESTS_CLI_PARSE_H

#include <stdio.h>
#include <string.h>

#include "cli/options.h"

/* xp_opts_parse's result for line; err is "" when it says nothing. */
static int parse(const char *line, struct xp_opts *o, char *err, size_t errlen)
{
	static char buf[512];
	char *argv[64];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
		argv[argc++] = t;
	argv[argc] = NULL;
	err[0] = '\0';
	return xp_opts_parse(argc, argv, o, err, errlen);
}

#endif
