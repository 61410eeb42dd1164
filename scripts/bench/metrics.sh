# shellcheck shell=bash
# Sourced by scripts/bench.sh; the metrics section: what --metrics costs the
# live engine when Prometheus scrapes it every second (issue 29). Side by
# side in $BENCH_ROUNDS alternating rounds, one thread, 64-byte frames,
# direct pair: the live engine with --metrics on the client and a scraper
# that GETs /metrics from the client's and the server's endpoint every
# second (what a 1-s Prometheus job does), against the same run without
# --metrics and without scrapes (the server's endpoint idle); a third side,
# --metrics on but never scraped, tells the endpoint's own cost from the
# scrapers' (two python processes on the same 2 CPUs, one GET a second each). Yardstick: the
# server veth's rx_packets. Target: scraped >= 0.98x without (median).

METRICS_SRV_PORT=9464 METRICS_CL_PORT=9465
# scraper: both endpoints once a second until killed, each by one long-lived process (as
# Prometheus is: no process started per scrape, whose cost would be the scraper's, not the
# endpoint's); the server's last body goes to a file.
METRICS_SCRAPER='import sys, time, urllib.request
url, out = sys.argv[1], sys.argv[2]
while True:
    t = time.monotonic()
    try:
        body = urllib.request.urlopen(url, timeout=2).read()
        if out != "-":
            open(out, "wb").write(body)
    except OSError:
        pass
    time.sleep(max(0, 1 - (time.monotonic() - t)))'
metrics_scraper() {
	ip netns exec "$XP_CLIENT_NS" python3 -c "$METRICS_SCRAPER" "http://127.0.0.1:$METRICS_CL_PORT/metrics" - \
		>/dev/null 2>&1 &
	MSCR1=$!
	BG+=("$MSCR1")
	ip netns exec "$XP_SERVER_NS" python3 -c "$METRICS_SCRAPER" "http://127.0.0.1:$METRICS_SRV_PORT/metrics" \
		"$TMP/metrics.scrape" >/dev/null 2>&1 &
	MSCR2=$!
	BG+=("$MSCR2")
}
# One run with --metrics and the scrapers on.
run_scraped() {
	metrics_scraper
	run_engine live 1 --metrics "127.0.0.1:$METRICS_CL_PORT"
	kill "$MSCR1" "$MSCR2" 2>/dev/null
	wait "$MSCR1" "$MSCR2" 2>/dev/null || true
}

bench_metrics() {
	echo "== Cost of --metrics scraped every second: the live engine, 1 thread, 64-byte frames, direct pair,"
	echo "   ${T} s per run, $ROUNDS alternating rounds; with --metrics and a GET of the client's and the server's"
	echo "   /metrics every second vs without; yardstick: the server veth's rx_packets"
	lab_up direct
	start_server --metrics "127.0.0.1:$METRICS_SRV_PORT"
	echo "live --metrics, scraped 1/s | live | live --metrics, not scraped"
	rounds metrics "$ROUNDS" "run_scraped" "run_engine live 1" "run_engine live 1 --metrics 127.0.0.1:$METRICS_CL_PORT"
	stop_server
	printf "%-16s %-44s %-44s %-44s\n" "" "scraped min / median / max" "without min / median / max" \
		"not scraped min / median / max"
	printf "%-16s %-44s %-44s %-44s\n" live "$(mmm_line metrics 0)" "$(mmm_line metrics 1)" "$(mmm_line metrics 2)"
	cmp_line "live, --metrics scraped 1/s vs without:" metrics 0 1 0.98
	cmp_line "live, --metrics not scraped vs without:" metrics 2 1
	echo "   the last scrape of the server: $(grep -c '^xdpperf_' "$TMP/metrics.scrape" 2>/dev/null || echo 0) samples"
	echo
}
