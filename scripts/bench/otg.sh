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
#
# The scrape cost of the controller's --metrics (issue 29) in the same
# rounds: a second controller, the same but with --metrics, runs the same
# API sequence while one long-lived scraper (as Prometheus is) GETs its
# /metrics every second, and again every 100 ms (the hard case). Target:
# scraped every second >= 0.98x the controller without --metrics, the median
# of the rounds' ratios (paired_line).

OTG_API_PORT=8443 OTG_MET_API_PORT=8444 OTG_MET_PORT=9467
OTG_PORT=$OTG_API_PORT
OTG_PIDS=() OTG_SCRAPERS=()
# otg_scraper PERIOD: the section's scraper of the --metrics controller (bench_scraper), every PERIOD s
# while $TMP/otg.scrapePERIOD.on exists; keeps the last body that had a flow's series.
otg_scraper() {
	bench_scraper "$XP_CLIENT_NS" "http://127.0.0.1:$OTG_MET_PORT/metrics" "$1" "$TMP/otg.scrape$1" \
		"xdpperf_flow_frames_sent_total{"
	OTG_SCRAPERS+=("$SCRAPER_PID")
}

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
		-H 'Content-Type: application/json' --data-binary "$2" "http://127.0.0.1:$OTG_PORT$1") || code=000
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

# run_otg_scraped PERIOD: the API sequence on the controller with --metrics, scraped every PERIOD s.
run_otg_scraped() {
	local n0
	n0=$(cat "$TMP/otg.scrape$1.log" 2>/dev/null | wc -l)
	touch "$TMP/otg.scrape$1.on"
	OTG_PORT=$OTG_MET_API_PORT
	run_otg_api
	OTG_PORT=$OTG_API_PORT
	rm -f "$TMP/otg.scrape$1.on"
	echo $(($(cat "$TMP/otg.scrape$1.log" 2>/dev/null | wc -l) - n0)) >>"$TMP/otg.scrapes$1"
}

# otg_controller PORT [OPTIONS...]: xdpperf --otg in the client namespace, once it listens.
otg_controller() {
	local port=$1 log=$TMP/otg.$1.log t0=$SECONDS
	shift
	ip netns exec "$XP_CLIENT_NS" "$BIN" --otg "127.0.0.1:$port" "$@" >"$log" 2>&1 &
	OTG_PIDS+=($!)
	BG+=($!)
	until grep -q '^OTG API' "$log"; do
		kill -0 "${OTG_PIDS[-1]}" 2>/dev/null || die "xdpperf --otg" "$log"
		((SECONDS - t0 < 4)) || die "xdpperf --otg (not listening after 4 s)" "$log"
		sleep 0.05
	done
}

run_otg_cli() {
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t "$T" --flows "$TMP/otg.json" -J \
		>"$TMP/x.json" 2>"$TMP/x.err" || die "xdpperf -c --flows" "$TMP/x.err"
}

bench_otg() {
	echo "== One flow through the OTG API vs xdpperf -c: 64-byte UDP frames, stamped, default engine and queues,"
	echo "   direct pair, ${T} s per run, $ROUNDS alternating rounds; yardstick: the server veth's rx_packets;"
	echo "   and the same API run on a controller with --metrics, scraped every 1 s and every 100 ms"
	lab_up direct
	otg_file "$TMP/otg.json"
	start_server
	otg_controller "$OTG_API_PORT"
	otg_controller "$OTG_MET_API_PORT" --metrics "127.0.0.1:$OTG_MET_PORT"
	otg_scraper 1
	otg_scraper 0.1
	echo "the API (--otg, curl as snappi) | xdpperf -c --flows (the same file) | the API with --metrics scraped 1/s | 10/s"
	rounds otg "$ROUNDS" run_otg_api run_otg_cli "run_otg_scraped 1" "run_otg_scraped 0.1"
	kill "${OTG_PIDS[@]}" "${OTG_SCRAPERS[@]}" 2>/dev/null
	wait "${OTG_PIDS[@]}" "${OTG_SCRAPERS[@]}" 2>/dev/null || true
	OTG_PIDS=() OTG_SCRAPERS=()
	stop_server
	echo "API:                     $(mmm_line otg 0)"
	echo "xdpperf -c:              $(mmm_line otg 1)"
	echo "API, --metrics 1/s:      $(mmm_line otg 2)"
	echo "API, --metrics 10/s:     $(mmm_line otg 3)"
	cmp_line "one flow, the OTG API vs xdpperf -c:" otg 0 1 0.98
	cmp_line "the API, --metrics scraped 1/s vs without:" otg 2 0
	cmp_line "the API, --metrics scraped 10/s vs without:" otg 3 0
	echo "paired: the median of the rounds' ratios (the scrape cost's target), [worst - best round]:"
	paired_line "the API, --metrics scraped 1/s vs without:" otg 2 0 0.98
	paired_line "the API, --metrics scraped 10/s vs without:" otg 3 0
	echo "   the API's metrics, frames_rx per call: $(tr '\n' ' ' <"$TMP/otg.frames_rx")"
	echo "   scrapes per run, 1/s: $(tr '\n' ' ' <"$TMP/otg.scrapes1"); 10/s: $(tr '\n' ' ' <"$TMP/otg.scrapes0.1")"
	echo "   the last scrape with flow series (10/s): $(grep -c '^xdpperf_flow_' "$TMP/otg.scrape0.1" 2>/dev/null || echo 0) flow samples, $(grep '^xdpperf_flow_frames_sent_total' "$TMP/otg.scrape0.1" 2>/dev/null | head -1)"
	echo
}
