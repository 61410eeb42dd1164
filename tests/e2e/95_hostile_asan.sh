#!/usr/bin/env bash
# 80_hostile again, with the server built with ASan and UBSan
# (build/asan/xdpperf, `make sanitize`): the hostile clients' requests, the
# authentication and reverse trials run through a server whose memory errors,
# undefined behaviour and leaks end it with a report; each server the script
# starts must stop with status 0 and no report in its log (issue 28 point
# 10). The cases that wait out the server's own clocks (30-s deadlines,
# keepalive, lockout, churn) are the plain run's only (XP_HOSTILE_QUICK).
root=$(cd "$(dirname "$0")/../.." && pwd)
XP_HOSTILE_SERVER=${XP_HOSTILE_SERVER:-$root/build/asan/xdpperf} XP_HOSTILE_QUICK=1 \
	exec bash "$(dirname "$0")/80_hostile.sh"
