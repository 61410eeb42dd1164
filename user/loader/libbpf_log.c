/* libbpf's messages: quiet unless asked for. See libbpf_log.h. */
#include "loader/libbpf_log.h"

#include <stdio.h>
#include <stdlib.h>

int xp_libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	if (lvl == LIBBPF_WARN && getenv("XDPPERF_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	return 0;
}
