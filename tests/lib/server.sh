# shellcheck shell=bash
# The one way an xdpperf server is started for the end-to-end tests
# (tests/e2e/lib.sh: start_server, start_server_in), the bench
# (scripts/bench/lib.sh) and the demo (scripts/demo.sh):
#
#   xp_server_start NS BIN LOG [SERVER OPTIONS...]
#
# runs `BIN -s OPTIONS` in network namespace NS in the background, its stdout
# and stderr appended to LOG, and sets XP_SERVER_PID to the server's own pid
# (the subshell execs `ip netns exec`, which execs BIN), also when the start
# fails, so the caller's cleanup can stop it. Returns 0 once the server
# listens on its control port (5301, or the one --control-port names), as
# the kernel's socket table in NS says (ss: the check opens no connection the
# server would log); 1, with a line on stderr that says why and the log's last
# lines, when the server exited first or no listener came within
# XP_SERVER_WAIT seconds (5). The caller stops it: kill "$XP_SERVER_PID".
xp_server_start() {
	local ns=$1 bin=$2 log=$3 port=5301 prev="" a t0=$SECONDS
	shift 3
	for a in "$@"; do
		[[ $prev == --control-port ]] && port=$a
		[[ $a == --control-port=* ]] && port=${a#*=}
		prev=$a
	done
	(
		trap - EXIT INT TERM
		exec ip netns exec "$ns" "$bin" -s "$@" >>"$log" 2>&1
	) &
	XP_SERVER_PID=$!
	until [[ -n $(ip netns exec "$ns" ss -Hltn "sport = :$port" 2>/dev/null) ]]; do
		if ! kill -0 "$XP_SERVER_PID" 2>/dev/null; then
			echo "the xdpperf server in $ns exited before it listened on port $port: $(tail -n 3 "$log")" >&2
			return 1
		fi
		if ((SECONDS - t0 >= ${XP_SERVER_WAIT:-5})); then
			echo "no TCP listener on port $port in $ns after ${XP_SERVER_WAIT:-5}s: $(tail -n 3 "$log")" >&2
			return 1
		fi
		sleep 0.05
	done
}
