/*
 * `xdpperf --config FILE.json` (issue 27 point 4): the OTG controller of
 * otg/otg.h without the REST API. The file is an OTG Config with the
 * ports' locations in it; its flows run once, and their figures are printed
 * as a test's are: a text table, or with -J OTG's MetricsResponse.
 */
#ifndef XP_OTG_RUN_FILE_H
#define XP_OTG_RUN_FILE_H

#include <stdbool.h>

#include "otg/otg.h"

/* The exit status: 0, 1 (runtime: an agent failed, a flow was cut short) or 2 (the config is refused). */
int xp_otg_run_file(const struct xp_otg_opts *co, const char *path, bool json);

#endif
