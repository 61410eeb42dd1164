/*
 * The client role as a process, `xdpperf -c`: privileges, signals, the report
 * on stdout, then one test (client.c) or --compare's two (compare.c).
 */
#include <stdio.h>

#include "client/client.h"
#include "report/report.h"
#include "util/process.h"

int xp_client_run(const struct xp_spec *s, const struct xp_run_opts *ro, enum xp_report_format fmt,
		  const enum xp_engine_id *compare)
{
	char err[256];
	struct xp_report rep;
	struct xp_summary sum;
	xp_report_init(&rep, fmt, stdout);
	if (xp_check_privileges(err, sizeof(err))) {
		fprintf(stderr, "xdpperf: %s\n", err);
		xp_report_error(&rep, err);
		xp_report_free(&rep);
		return 1;
	}
	xp_install_signals();
	if (compare) {
		xp_report_free(&rep);
		return xp_client_compare(s, ro, *compare, fmt);
	}
	int rc = xp_client_test(s, ro, &rep, &sum);
	xp_report_free(&rep);
	return rc;
}
