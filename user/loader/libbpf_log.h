/* libbpf's messages: quiet unless asked for. */
#ifndef XP_LIBBPF_LOG_H
#define XP_LIBBPF_LOG_H

#include <bpf/libbpf.h>
#include <stdarg.h>

/*
 * A libbpf print callback (libbpf_set_print) that drops everything but
 * warnings, and those only with XDPPERF_DEBUG set in the environment: the
 * caller reports failures in its own words, and probes that are expected to
 * fail must not clutter the output.
 */
int xp_libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap);

#endif
