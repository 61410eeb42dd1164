# shellcheck shell=bash
# Sourced by scripts/bench.sh; the xsk section.
#
# xsk:    xdpperf's AF_XDP engine vs trafgen (netsniff-ng) with the same 64-byte
#         TCP frames, direct and routed, 1 and 2 queues (trafgen -P 2).
#         Targets: xdpperf >= 1.0x trafgen with one queue, and 2 queues >= 1.8x
#         one queue on the direct pair, which needs both cores free: the
#         2-queue runs also show where each queue was received.

# run_engine with the server veth's per-queue XDP counters (ethtool -S) and
# the NET_RX softirqs per CPU (/proc/softirqs) read around it: where each
# queue was received. One line per run in $TMP/xq.where: seconds, per-queue
# frames, per-CPU NET_RX.
run_engine_where() { # QUEUES
	local t0 a b s0 s1
	a=$(ip netns exec "$XP_SERVER_NS" ethtool -S "$XP_SERVER_DEV" | awk '/rx_queue_[0-9]+_xdp_packets/ {printf "%s ", $2}')
	s0=$(awk '/NET_RX/ {$1 = ""; print}' /proc/softirqs)
	t0=$EPOCHREALTIME
	run_engine xsk "$1"
	b=$(ip netns exec "$XP_SERVER_NS" ethtool -S "$XP_SERVER_DEV" | awk '/rx_queue_[0-9]+_xdp_packets/ {printf "%s ", $2}')
	s1=$(awk '/NET_RX/ {$1 = ""; print}' /proc/softirqs)
	echo "$(echo "$EPOCHREALTIME - $t0" | bc -l) | $a| $b| $s0 | $s1" >>"$TMP/xq.where"
}
# The 2-queue runs' per-queue rates and per-CPU receive softirqs, as medians.
xq_where() {
	awk -F'|' '{ split($2, a, " "); split($3, b, " "); split($4, c, " "); split($5, d, " ")
		printf "%.0f %.0f %.0f %.0f\n", (b[1] - a[1]) / $1, (b[2] - a[2]) / $1, (d[1] - c[1]) / $1, (d[2] - c[2]) / $1 }' "$TMP/xq.where" |
		sort -n -k1 | awk '{ q0[NR] = $1; q1[NR] = $2; s0[NR] = $3; s1[NR] = $4 } END { m = int((NR + 1) / 2);
		printf "%.3f Mpps on queue 0, %.3f Mpps on queue 1; NET_RX softirqs/s: CPU 0 %.0f k, CPU 1 %.0f k\n",
			q0[m] / 1e6, q1[m] / 1e6, s0[m] / 1e3, s1[m] / 1e3 }'
}

bench_xsk() {
	echo "== AF_XDP engine vs trafgen, 64-byte TCP frames, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	local topo q
	for topo in direct routed; do
		lab_up "$topo"
		start_server
		for q in 1 2; do
			echo "$topo, $q queue(s): xdpperf --engine xsk --queues $q | trafgen -P $q ${TRAFGEN_OPTS[*]} ($TRAFGEN_CFG frames)"
			if [[ $topo == direct && $q == 2 ]]; then
				rounds "xsk.$topo.$q" "$ROUNDS" "run_engine_where 2" "run_trafgen $q ${TRAFGEN_OPTS[*]}"
			else
				rounds "xsk.$topo.$q" "$ROUNDS" "run_engine xsk $q" "run_trafgen $q ${TRAFGEN_OPTS[*]}"
			fi
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
	cmp_line "xdpperf vs trafgen, 1 queue, direct:" xsk.direct.1 0 1 1.0
	cmp_line "xdpperf vs trafgen, 1 queue, routed:" xsk.routed.1 0 1
	cmp_line "xdpperf vs trafgen, 2 queues, direct:" xsk.direct.2 0 1
	cmp_line "xdpperf vs trafgen, 2 queues, routed:" xsk.routed.2 0 1
	# 2 queues vs 1: rounds of different runs; their medians and ranges.
	cp "$TMP/xsk.direct.2.0" "$TMP/xq.0"
	cp "$TMP/xsk.direct.1.0" "$TMP/xq.1"
	cmp_line "xdpperf 2 queues vs 1 queue, direct:" xq 0 1 1.8
	# The condition of that target, measured: on veth each queue is received
	# (the server's XDP program, NET_RX) in softirq on its sender's core, so
	# 2 queues need both cores to themselves; another process on either core
	# (the sampler, other users of the machine) comes off one queue's rate.
	echo "  2 queues, direct, per queue (the server veth's per-queue XDP counters; the run with the median queue-0 rate): $(xq_where)"
	echo "  (on veth each queue's receive runs on its sender's core: 2 queues need both cores, with nothing else on"
	echo "   them; load average $(cut -d' ' -f1-3 /proc/loadavg) after the section, on $(nproc) CPUs)"
	echo
}

# trafgen's settings for one core on the direct pair, in alternating rounds
# like every comparison: the xsk and live sections use the best of these
# (TRAFGEN_CFG, TRAFGEN_OPTS above). A run trafgen itself ends with an error
# is counted as failed here (and stops the bench in the other sections).
