# shellcheck shell=bash
# Sourced by scripts/bench.sh; the flows section (issue 26).
#
# flows:  the live engine sending 64 flows against one stream, side by side
#         on the direct pair, one thread, 64-byte IPv4/TCP frames (stamped:
#         at this size in the IPv4 ID and payload), all through xdpperf:
#         `xdpperf -c SERVER --engine live --flows FILE` with a flow file
#         written here (flows_file: each flow its own source ports, a pattern
#         of 4, the test's server ports, stamps on) against
#         `xdpperf --engine live -l 64`, and 1 flow from such a file beside
#         them. The server counts the flows' frames per flow as it measures
#         the one stream's. A flow file always gives rates (OTG's default is
#         1000 frames/s), so the flows ask for 100 Mpps together: far above
#         what one thread sends, so the pacer grants its largest call every
#         time, as without a rate. Target: 64 flows >= 0.9x one stream.

# flows_file N FILE: an OTG config of N flows, 64-byte IPv4/TCP frames, stamps
# on, source ports 63000 + 4i .. + 3 for flow i, 100 Mpps / N each, for -t.
flows_file() {
	local i sep=""
	{
		echo '{"flows": ['
		for ((i = 0; i < $1; i++)); do
			printf '%s{"name": "f%d", "tx_rx": {"choice": "port", "port": {"tx_name": "p1"}},\n' "$sep" "$i"
			printf ' "packet": [{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}},\n'
			printf '  {"choice": "tcp", "tcp": {"src_port": {"choice": "increment", "increment": {"start": %d, "step": 1, "count": 4}}}}],\n' \
				$((63000 + 4 * i))
			printf ' "size": {"choice": "fixed", "fixed": 64}, "rate": {"choice": "pps", "pps": %d},\n' $((100000000 / $1))
			printf ' "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}}\n'
			sep=","
		done
		echo ']}'
	} >"$2"
}

bench_flows() {
	echo "== Flows on the live engine: 64-byte TCP frames, one thread, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	flows_file 1 "$TMP/flows1.json"
	flows_file 64 "$TMP/flows64.json"
	lab_up direct
	start_server
	echo "direct: live one stream (-l 64) | 1 flow (--flows) | 64 flows (--flows), all xdpperf --engine live"
	rounds flows.direct "$ROUNDS" "run_engine live 1 -l 64" "run_engine live 1 --flows $TMP/flows1.json" \
		"run_engine live 1 --flows $TMP/flows64.json"
	stop_server
	echo
	echo "direct   live one stream:  $(mmm_line flows.direct 0)"
	echo "direct   1 flow:           $(mmm_line flows.direct 1)"
	echo "direct   64 flows:         $(mmm_line flows.direct 2)"
	echo
	cmp_line "64 flows vs one stream, direct:" flows.direct 2 0 0.9
	cmp_line "64 flows vs 1 flow, direct:" flows.direct 2 1
	echo
}
