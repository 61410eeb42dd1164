/* What --version says: this build's version and the libraries it runs with. */
#ifndef XP_VERSION_H
#define XP_VERSION_H

#include <stdio.h>

/* The version from git (or the VERSION file), as the build baked it in. */
const char *xp_version(void);
/* "xdpperf VERSION" and the libbpf and libxdp lines. */
void xp_version_print(FILE *f);

#endif
