# shellcheck shell=bash
# Sourced by scripts/bench.sh; the xsk section.
#
# xsk:    xdpperf's AF_XDP engine vs trafgen (netsniff-ng) with the same 64-byte
#         TCP frames, direct and routed, 1 and 2 queues (trafgen -P 2).
#         Targets: xdpperf >= 1.0x trafgen with one queue, and 2 queues >= 1.8x
#         one queue on the direct pair.

bench_xsk() {
	echo "== AF_XDP engine vs trafgen, 64-byte TCP frames, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	local topo q
	for topo in direct routed; do
		lab_up "$topo"
		start_server
		for q in 1 2; do
			echo "$topo, $q queue(s): xdpperf --engine xsk --queues $q | trafgen -P $q"
			rounds "xsk.$topo.$q" "$ROUNDS" "run_engine xsk $q" "run_trafgen $q ${TRAFGEN_OPTS[*]}"
		done
		stop_server
	done
	echo
	printf "%-8s %-7s %-44s %-44s\n" topology queues "xdpperf min / median / max" "trafgen min / median / max"
	for topo in direct routed; do
		for q in 1 2; do
			printf "%-8s %-7s %-44s %-44s\n" "$topo" "$q" "$(mmm_line "xsk.$topo.$q" 0)" "$(mmm_line "xsk.$topo.$q" 1)"
		done
	done
	echo
	cmp_line "xdpperf vs trafgen, 1 queue, direct:" xsk.direct.1 0 1 ">= 1.0x"
	cmp_line "xdpperf vs trafgen, 1 queue, routed:" xsk.routed.1 0 1
	cmp_line "xdpperf vs trafgen, 2 queues, direct:" xsk.direct.2 0 1
	cmp_line "xdpperf vs trafgen, 2 queues, routed:" xsk.routed.2 0 1
	# 2 queues vs 1: rounds of different runs; their medians and ranges.
	cp "$TMP/xsk.direct.2.0" "$TMP/xq.0"
	cp "$TMP/xsk.direct.1.0" "$TMP/xq.1"
	cmp_line "xdpperf 2 queues vs 1 queue, direct:" xq 0 1 ">= 1.8x"
	echo
}

# trafgen's settings for one core on the direct pair, in alternating rounds
# like every comparison: the xsk and live sections use the best of these
# (TRAFGEN_CFG, TRAFGEN_OPTS above). A run trafgen itself ends with an error
# is counted as failed here (and stops the bench in the other sections).
