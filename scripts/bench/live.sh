# shellcheck shell=bash
# Sourced by scripts/bench.sh; the live section.
#
# live:   the XDP live-frames engine vs the AF_XDP engine vs trafgen, 64-byte
#         frames, one thread each, direct and routed; live with 2 threads; and
#         rate control: the worst 1-second window of the server veth's
#         rx_packets at 10 kpps, 100 kpps, 1 Mpps and 50 % of the live
#         maximum. Targets: live >= 6x trafgen direct, >= 2.5x routed; every
#         window within 2 % of the target. Beside them, live with --no-stamps
#         (frames without stamps, as trafgen's are, and a server that only
#         counts), which the rate-control runs do not use.

bench_live() {
	echo "== Live frames vs AF_XDP vs trafgen, 64-byte TCP frames, one thread/queue, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	local topo
	for topo in direct routed; do
		lab_up "$topo"
		start_server
		# Side 4 (3 routed): the live engine with --no-stamps, like trafgen's frames: no stamp, and the
		# server's XDP program only counts (on veth it runs on the sending CPU: see the stamp section).
		if [[ $topo == direct ]]; then
			echo "$topo: live 1 thread | xsk 1 queue | trafgen -P 1 ${TRAFGEN_OPTS[*]} ($TRAFGEN_CFG frames) | live 2 threads | live 1 thread --no-stamps"
			rounds "live.$topo" "$ROUNDS" "run_engine live 1" "run_engine xsk 1" "run_trafgen 1 ${TRAFGEN_OPTS[*]}" \
				"run_engine live 2" "run_engine live 1 --no-stamps"
		else
			echo "$topo: live 1 thread | xsk 1 queue | trafgen -P 1 ${TRAFGEN_OPTS[*]} ($TRAFGEN_CFG frames) | live 1 thread --no-stamps"
			rounds "live.$topo" "$ROUNDS" "run_engine live 1" "run_engine xsk 1" "run_trafgen 1 ${TRAFGEN_OPTS[*]}" \
				"run_engine live 1 --no-stamps"
		fi
		if [[ $topo == direct ]]; then rate_control; fi
		stop_server
	done
	echo
	printf "%-8s %-44s %-44s %-44s\n" topology "live min / median / max" "xsk min / median / max" "trafgen min / median / max"
	for topo in direct routed; do
		printf "%-8s %-44s %-44s %-44s\n" "$topo" "$(mmm_line "live.$topo" 0)" "$(mmm_line "live.$topo" 1)" \
			"$(mmm_line "live.$topo" 2)"
	done
	echo "direct   live with 2 threads on 2 queues: $(mmm_line live.direct 3)"
	echo "direct   live 1 thread --no-stamps:        $(mmm_line live.direct 4)"
	echo "routed   live 1 thread --no-stamps:        $(mmm_line live.routed 3)"
	echo
	cmp_line "live vs trafgen, direct:" live.direct 0 2 6
	cmp_line "live vs trafgen, routed:" live.routed 0 2 2.5
	cmp_line "live --no-stamps vs trafgen, direct:" live.direct 4 2
	cmp_line "live --no-stamps vs trafgen, routed:" live.routed 3 2
	cmp_line "live vs xsk, direct:" live.direct 0 1
	cmp_line "live vs xsk, routed:" live.routed 0 1
	cmp_line "live 2 threads vs 1 thread, direct:" live.direct 3 0
	echo
	cat "$TMP/rate.txt"
}

# Rate control on the direct pair: the worst full 1-second window of the
# server veth's rx_packets against the target, live and (where it reaches
# the rate) xsk; 50 % of the live engine's median one-thread rate last.
rate_control() {
	local half xmed target fig dl dx
	half=$(printf "%.0f" "$(echo "$(fig_of live.direct 0 med) / 2" | bc -l)")
	xmed=$(fig_of live.direct 1 med)
	{
		echo "== Rate control, direct: the worst 1-second window of the server veth's rx_packets"
		printf "%-14s %-36s %-36s\n" target live xsk
		for target in 10000 100000 1000000 "$half"; do
			measure_rx fig "$target" -- run_engine live 1 -b "${target}pps"
			dl="$(printf "%.3f %%" "${fig##* }") $(target "rate control, live at $(fmt "$target"): worst 1-s window off by" "${fig##* }" "<=" 2 " %")"
			dx="-"
			if (($(echo "$target < $xmed * 0.9" | bc -l))); then
				measure_rx fig "$target" -- run_engine xsk 1 -b "${target}pps"
				dx="$(printf "%.3f %%" "${fig##* }") $(target "rate control, xsk at $(fmt "$target"): worst 1-s window off by" "${fig##* }" "<=" 2 " %")"
			fi
			printf "%-14s %-36s %-36s\n" "$(fmt "$target")" "$dl" "$dx"
		done
		echo "(target: within 2 %; $(fmt "$half") is 50 % of the live engine's median one-thread rate;"
		echo " xsk only where the target is below 90 % of its median maximum)"
		echo
	} >"$TMP/rate.txt"
}
