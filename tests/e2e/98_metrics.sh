#!/usr/bin/env bash
# Issue 29 point 1, --metrics: the server serves its tests' figures for
# Prometheus in the lab's server namespace, and a real Prometheus (Debian's,
# started here on the namespace's 127.0.0.1, its config and data in this
# script's temporary directory, removed at exit) scrapes it every second
# during a stamped stream test. Its HTTP API then gives the frames-received
# series' last value = the test's received count = the server veth's XDP
# drops (ethtool), and histogram_quantile(0.99) within one bucket of
# xdpperf's own p99 (tests/e2e/metrics_check.py). `promtool check metrics`
# accepts the endpoint's text. The endpoint is read-only (405, 404), serves
# before any test, and the client's own endpoint serves while it runs.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
PORT=9464
URL=http://127.0.0.1:$PORT/metrics
PROM=http://127.0.0.1:19090
SCRAPE=$XP_TMP/scrape.txt
client() { xp_exec client "$BIN" "$@"; }
xdp_drops() { xp_exec server ethtool -S "$XP_SERVER_DEV" | awk '/xdp_drops:/{s+=$2} END{print s+0}'; }
http_code() { xp_exec "$1" curl -s -o /dev/null -w '%{http_code}' "${@:2}"; }

start_prometheus() {
	local d=$XP_TMP/prom
	mkdir -p "$d/data"
	cat >"$d/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: xdpperf
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
	promtool check config "$d/prometheus.yml" || return 1
	# xp_run_bg: killed at exit with the script's other background processes; its data goes with $XP_TMP.
	xp_run_bg server prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/data" \
		--web.listen-address=127.0.0.1:19090 --storage.tsdb.retention.time=1h
	PROM_LOG=$XP_BG_LOG
	xp_wait 30 "Prometheus ready" xp_exec server curl -sf "$PROM/-/ready" || { tail -20 "$PROM_LOG"; return 1; }
	# Its first scrape of the endpoint went well.
	xp_wait 15 "Prometheus scraped the endpoint" eval \
		'xp_exec server curl -sf "$PROM/api/v1/query?query=up" | jq -e ".data.result[0].value[1] == \"1\""'
}

# ---------------------------------------------------------------------------
xp_case metrics_endpoint
xp_check "lab up" xp_lab_up
xp_check "server with --metrics 127.0.0.1:$PORT" start_server --metrics "127.0.0.1:$PORT"
xp_check "GET /metrics before any test: 200, no sample" eval '
	[[ $(http_code server "$URL") == 200 ]] && ! xp_exec server curl -sf "$URL" | grep -q "^xdpperf_"'
xp_check "read-only: POST 405, PUT 405, /other 404" eval '
	[[ $(http_code server -X POST -d x "$URL") == 405 && $(http_code server -X PUT "$URL") == 405 &&
	   $(http_code server "http://127.0.0.1:$PORT/") == 404 ]]'
xp_check "listens on the namespace's loopback only" eval '
	[[ $(xp_exec server ss -Hltn "sport = :$PORT" | awk "{print \$4}") == "127.0.0.1:$PORT" ]]'
xp_check "a bad --metrics is a usage error (exit 2) naming the form" eval '
	out=$(client --metrics "::1:9" -c "$XP_SERVER4" -t 1 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"[ADDR]:PORT"* ]]'
xp_check "a port in use is a runtime error (exit 1)" eval '
	out=$(xp_exec server "$BIN" -s --control-port 5299 --metrics "127.0.0.1:$PORT" 2>&1); rc=$?; echo "$out"
	((rc == 1)) && [[ $out == *"cannot listen on 127.0.0.1:$PORT"* ]]'
xp_pass

# ---------------------------------------------------------------------------
xp_case metrics_prometheus_scrape
xp_check "Prometheus in the server namespace, scraping every second" start_prometheus
d0=$(xdp_drops)
xp_check "stamped UDP stream, live engine, 4 s at 20 kpps; the client serves its own --metrics too" eval '
	xp_run_bg client sh -c "sleep 2.5; curl -sf http://127.0.0.1:9465/metrics"; CL=$XP_BG_PID; CL_LOG=$XP_BG_LOG
	client -c "$XP_SERVER4" -u -t 4 -b 20kpps --engine live --metrics 127.0.0.1:9465 -J >"$J"; rc=$?
	wait $CL; ((rc == 0))'
d1=$(xdp_drops)
xp_check "the client endpoint had the running test (role client, engine live, frames sent > 0)" eval '
	grep -E "^xdpperf_frames_sent_total\{test=\"1\",role=\"client\",engine=\"live\",kind=\"stream\",peer=\"$XP_SERVER4\"\} [1-9]" "$CL_LOG" &&
	grep -q "^xdpperf_test_running{.*role=\"client\".*} 1$" "$CL_LOG"'
# Two more scrapes after the stop reply: the ended test's last figures are in Prometheus.
sleep 2.5
xp_check "promtool check metrics accepts the endpoint's text" eval '
	xp_exec server curl -sf "$URL" >"$SCRAPE" && promtool check metrics <"$SCRAPE"'
xp_check "Prometheus: last frames received = report = veth XDP drops; p99 within one bucket" \
	xp_exec server python3 "$XP_ROOT/tests/e2e/metrics_check.py" "$PROM" "$J" "$((d1 - d0))" "$SCRAPE"
xp_pass
