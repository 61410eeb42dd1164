# shellcheck shell=bash
# Sourced by scripts/bench.sh; the metrics section: what --metrics costs the
# live engine when Prometheus scrapes it every second (issue 29). Side by
# side in $BENCH_ROUNDS alternating rounds, one thread, 64-byte frames,
# direct pair: the live engine with --metrics on the client and a scraper
# that GETs /metrics from the client's and the server's endpoint every
# second (what a 1-s Prometheus job does), against the same run without
# --metrics and without scrapes (the server's endpoint idle); a third side,
# --metrics on but never scraped, tells the endpoint's own cost from the
# scrapers' (two curl processes a second on the same 2 CPUs). Yardstick: the
# server veth's rx_packets. Target: scraped >= 0.98x without (median).

METRICS_SRV_PORT=9464 METRICS_CL_PORT=9465
# scraper: both endpoints once a second until killed; the bodies go to a file (a scrape that
# fails stops nothing here: the run's figure is the point, the e2e test checks the text).
metrics_scraper() {
	ip netns exec "$XP_CLIENT_NS" bash -c 'while :; do curl -s -o /dev/null "http://127.0.0.1:$1/metrics"; sleep 1; done' \
		scraper "$METRICS_CL_PORT" >/dev/null 2>&1 &
	BG+=("$!")
	MSCR1=$!
	ip netns exec "$XP_SERVER_NS" bash -c 'while :; do curl -s "http://127.0.0.1:$1/metrics" >"$2"; sleep 1; done' \
		scraper "$METRICS_SRV_PORT" "$TMP/metrics.scrape" >/dev/null 2>&1 &
	BG+=("$!")
	MSCR2=$!
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
