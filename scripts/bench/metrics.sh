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
# server veth's rx_packets. Target: scraped >= 0.98x without, the median of
# the rounds' ratios (paired_line: the sides of a round run back to back).

METRICS_SRV_PORT=9464 METRICS_CL_PORT=9465
# The client's and the server's scrapers, for the section (bench_scraper: one
# long-lived process each, GETting once a second while the scraped side runs).
metrics_scrapers() {
	bench_scraper "$XP_CLIENT_NS" "http://127.0.0.1:$METRICS_CL_PORT/metrics" 1 "$TMP/scrape.client"
	MSCR1=$SCRAPER_PID
	bench_scraper "$XP_SERVER_NS" "http://127.0.0.1:$METRICS_SRV_PORT/metrics" 1 "$TMP/metrics.scrape"
	MSCR2=$SCRAPER_PID
}
# One run with --metrics and the scrapers on.
run_scraped() {
	touch "$TMP/scrape.client.on" "$TMP/metrics.scrape.on"
	run_engine live 1 --metrics "127.0.0.1:$METRICS_CL_PORT"
	rm -f "$TMP/scrape.client.on" "$TMP/metrics.scrape.on"
}

bench_metrics() {
	echo "== Cost of --metrics scraped every second: the live engine, 1 thread, 64-byte frames, direct pair,"
	echo "   ${T} s per run, $ROUNDS alternating rounds; with --metrics and a GET of the client's and the server's"
	echo "   /metrics every second vs without; yardstick: the server veth's rx_packets"
	lab_up direct
	start_server --metrics "127.0.0.1:$METRICS_SRV_PORT"
	metrics_scrapers
	echo "live --metrics, scraped 1/s | live | live --metrics, not scraped"
	rounds metrics "$ROUNDS" "run_scraped" "run_engine live 1" "run_engine live 1 --metrics 127.0.0.1:$METRICS_CL_PORT"
	kill "$MSCR1" "$MSCR2" 2>/dev/null
	wait "$MSCR1" "$MSCR2" 2>/dev/null || true
	stop_server
	printf "%-16s %-44s %-44s %-44s\n" "" "scraped min / median / max" "without min / median / max" \
		"not scraped min / median / max"
	printf "%-16s %-44s %-44s %-44s\n" live "$(mmm_line metrics 0)" "$(mmm_line metrics 1)" "$(mmm_line metrics 2)"
	echo "ratio of the medians (each side's median taken apart), [worst - best pairing]:"
	cmp_line "live, --metrics scraped 1/s vs without:" metrics 0 1
	cmp_line "live, --metrics not scraped vs without:" metrics 2 1
	echo "paired: the median of the rounds' ratios (the target), [worst - best round]:"
	paired_line "live, --metrics scraped 1/s vs without:" metrics 0 1 0.98
	paired_line "live, --metrics not scraped vs without:" metrics 2 1
	echo "   scrapes answered in the scraped runs: client $(wc -l <"$TMP/scrape.client.log" 2>/dev/null || echo 0)," \
		"server $(wc -l <"$TMP/metrics.scrape.log" 2>/dev/null || echo 0) (one a second each);" \
		"the server's last: $(grep -c '^xdpperf_' "$TMP/metrics.scrape" 2>/dev/null || echo 0) samples"
	echo
}
