# shellcheck shell=bash
# Sourced by scripts/bench.sh; the flows section (issue 26).
#
# flows:  the live engine sending 64 flows against one flow and against one
#         stream, side by side on the direct pair, one thread, as fast as
#         possible, 64-byte IPv4/TCP frames (stamped: at this size in the
#         IPv4 ID and payload). The flows come from tests/tools/flowlive (the
#         live engine's own ops, its flows path: a header block per frame,
#         the schedule, per-flow counts and streams; each flow its own source
#         ports, a pattern of 4) to the data ports of an idle --engine none
#         test, so the server's XDP program counts and drops them as it does
#         the one stream's (xdpperf --engine live -l 64). Target: 64 flows
#         >= 0.9x one stream. Until the command line takes --flows this runs
#         the engine through the tool, not through xdpperf.

FLOWLIVE=$PWD/build/tests/tools/flowlive

# flowlive NFLOWS for $T s, with the server's program on its veth (an idle test).
run_flowlive() { # NFLOWS
	local n0 cnt i flows=()
	[[ -x $FLOWLIVE ]] || { echo "bench: build first (make: $FLOWLIVE)" >&2; exit 1; }
	n0=$(tests_begun)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 4)) --engine none -J >"$TMP/n.json" 2>"$TMP/n.err" &
	cnt=$!
	BG+=("$cnt")
	wait_receiver "$n0" "$cnt" "xdpperf --engine none (the receiver for flowlive)" "$TMP/n.err"
	for ((i = 0; i < $1; i++)); do flows+=(u); done
	ip netns exec "$XP_CLIENT_NS" "$FLOWLIVE" "$XP_CLIENT_DEV" "$XP_CLIENT_GW_MAC" "$XP_CLIENT4" "$XP_SERVER4" \
		tcp:63000 "${T}s" 64 0 "${flows[@]}" >"$TMP/fl.txt" 2>&1 || die "flowlive, $1 flows" "$TMP/fl.txt"
	kill -INT "$cnt" 2>/dev/null
	wait "$cnt" 2>/dev/null || true
}

bench_flows() {
	echo "== Flows on the live engine: 64-byte TCP frames, one thread, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	lab_up direct
	start_server
	echo "direct: live one stream (xdpperf --engine live -l 64) | 1 flow (flowlive) | 64 flows (flowlive)"
	rounds flows.direct "$ROUNDS" "run_engine live 1 -l 64" "run_flowlive 1" "run_flowlive 64"
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
