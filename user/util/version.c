/*
 * --version. The version is baked in at build time (Makefile: git describe,
 * or the VERSION file outside a git tree) into build/xp_version.h. libbpf
 * tells its run-time version (libbpf_version_string); libxdp has no such call
 * (1.3), so for it the version built against is all there is, and the line
 * says so.
 */
#include <bpf/libbpf.h>

#include "util/version.h"
#include "xp_version.h"

const char *xp_version(void)
{
	return XP_VERSION;
}

void xp_version_print(FILE *f)
{
	fprintf(f, "xdpperf %s\n", XP_VERSION);
	fprintf(f, "libbpf %s (run time; built with %s)\n", libbpf_version_string(), XP_LIBBPF_BUILT);
	fprintf(f, "libxdp %s (built with; libxdp reports no run-time version)\n", XP_LIBXDP_BUILT);
}
