# shellcheck shell=bash
# Sourced by scripts/bench.sh; the otg section (issue 27): one flow driven
# through the OTG REST API against the same flow run with `xdpperf -c`, side
# by side in $BENCH_ROUNDS alternating rounds on the direct pair.
#
# The flow: 64-byte IPv4/UDP frames, stamped (metrics.enable), continuous,
# at 100 Mpps (far above what the sender reaches, so the pacer grants its
# largest call every time, as without a rate). Both sides use the engine
# and queues either front end picks by default (auto), on the client veth:
# - API: `xdpperf --otg 127.0.0.1:PORT` in the client namespace (port p1 is
#   the controller's own host, p2 the agent `xdpperf -s` in the server
#   namespace); curl sends what a snappi script sends: POST /config, POST
#   /control/state start, $T s, POST /control/state stop, POST
#   /monitor/metrics (its frames_rx must be > 0: a run that counted nothing
#   stops the bench);
# - CLI: `xdpperf -c SERVER -t $T --flows FILE` with the same file.
# The controller stays up across the rounds (as an API server does); each
# round sets the config afresh. Yardstick: the server veth's rx_packets.
# Target: API >= 0.98x CLI (median).

OTG_API_PORT=8443
OTG_API=""

otg_file() { # FILE: the config both sides run
	cat >"$1" <<JSON
{"ports": [{"name": "p1", "location": "localhost;$XP_CLIENT_DEV"}, {"name": "p2", "location": "$XP_SERVER4"}],
 "flows": [{"name": "f1", "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
   "packet": [{"choice": "ethernet", "ethernet": {}},
              {"choice": "ipv4", "ipv4": {"src": {"choice": "value", "value": "$XP_CLIENT4"},
                                          "dst": {"choice": "value", "value": "$XP_SERVER4"}}},
              {"choice": "udp", "udp": {}}],
   "size": {"choice": "fixed", "fixed": 64}, "rate": {"choice": "pps", "pps": 100000000},
   "duration": {"choice": "continuous", "continuous": {}},
   "metrics": {"enable": true}}]}
JSON
}

# otg_post PATH BODY|@FILE: a POST to the API; stops the bench unless 200.
otg_post() {
	local code
	code=$(ip netns exec "$XP_CLIENT_NS" curl -sS -o "$TMP/otg.resp" -w '%{http_code}' -X POST \
		-H 'Content-Type: application/json' --data-binary "$2" "http://127.0.0.1:$OTG_API_PORT$1") || code=000
	[[ $code == 200 ]] || { echo "HTTP $code" >>"$TMP/otg.resp"; die "POST $1" "$TMP/otg.resp"; }
}

run_otg_api() {
	otg_post /config "@$TMP/otg.json"
	otg_post /control/state '{"choice":"traffic","traffic":{"choice":"flow_transmit","flow_transmit":{"state":"start"}}}'
	sleep "$T" # the test's length, as snappi scripts wait it out
	otg_post /control/state '{"choice":"traffic","traffic":{"choice":"flow_transmit","flow_transmit":{"state":"stop"}}}'
	otg_post /monitor/metrics '{"choice":"flow","flow":{"flow_names":[]}}'
	local rx
	rx=$(jq -r '.flow_metrics[0].frames_rx // 0' "$TMP/otg.resp")
	((rx > 0)) || die "the API's flow (frames_rx $rx)" "$TMP/otg.resp"
	echo "$rx" >>"$TMP/otg.frames_rx"
}

run_otg_cli() {
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t "$T" --flows "$TMP/otg.json" -J \
		>"$TMP/x.json" 2>"$TMP/x.err" || die "xdpperf -c --flows" "$TMP/x.err"
}

bench_otg() {
	echo "== One flow through the OTG API vs xdpperf -c: 64-byte UDP frames, stamped, default engine and queues,"
	echo "   direct pair, ${T} s per run, $ROUNDS alternating rounds; yardstick: the server veth's rx_packets"
	lab_up direct
	otg_file "$TMP/otg.json"
	start_server
	: >"$TMP/otg.log"
	ip netns exec "$XP_CLIENT_NS" "$BIN" --otg "127.0.0.1:$OTG_API_PORT" >"$TMP/otg.log" 2>&1 &
	OTG_API=$!
	BG+=("$OTG_API")
	local t0=$SECONDS
	until grep -q '^OTG API' "$TMP/otg.log"; do
		kill -0 "$OTG_API" 2>/dev/null || die "xdpperf --otg" "$TMP/otg.log"
		((SECONDS - t0 < 4)) || die "xdpperf --otg (not listening after 4 s)" "$TMP/otg.log"
		sleep 0.05
	done
	echo "the API (--otg, curl as snappi) | xdpperf -c --flows (the same file)"
	rounds otg "$ROUNDS" run_otg_api run_otg_cli
	kill "$OTG_API" 2>/dev/null
	wait "$OTG_API" 2>/dev/null || true
	stop_server
	printf "%-10s %-44s %-44s\n" "" "API min / median / max" "xdpperf -c min / median / max"
	printf "%-10s %-44s %-44s\n" direct "$(mmm_line otg 0)" "$(mmm_line otg 1)"
	cmp_line "one flow, the OTG API vs xdpperf -c:" otg 0 1 0.98
	echo "   the API's metrics, frames_rx per round: $(tr '\n' ' ' <"$TMP/otg.frames_rx")"
	echo
}
