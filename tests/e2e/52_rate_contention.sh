#!/usr/bin/env bash
# Rate control of the live engine when something outside it holds the load
# back (issue 11), and that a run short of its target says so first in its
# summary:
#  - another process churning the kernel's XDP dispatcher (xdpchurn: an XDP
#    program test-run with repeat 2, attached nowhere, as BPF unit tests and
#    fuzzers do) makes every live-frames call wait for the dispatcher's
#    mutex through an RCU grace period. Before the fix the engine made that
#    up one 100 us unit per call (9 frames per ~20 ms wait at 90 kpps) and
#    blamed itself; now it catches up in one call and, when still short,
#    names the kernel;
#  - a tbf qdisc in the router holds the sender back (veth: the router's
#    forwarding and the qdisc run on the sender's CPU): the run falls short,
#    and its summary's first line says so. Past its queue the qdisc pushed
#    back with no loss in some runs and dropped in others (the same kernel,
#    6.18.44): the loss reported must be its own drop count either way.
# Figures are checked against the server veth's own rx_packets counter.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
CHURN=$XP_ROOT/build/tests/tools/xdpchurn
client() { xp_exec client "$BIN" "$@"; }
rx_packets() { xp_exec server cat /sys/class/net/xps0/statistics/rx_packets; }
ge() { awk -v a="$2" -v b="$3" 'BEGIN { exit !(a >= b) }' || { echo "$1: $2 < $3"; return 1; }; }

# ---------------------------------------------------------------------------
xp_case live_catches_up_under_dispatcher_churn
xp_check "xdpchurn built" test -x "$CHURN"
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "90 kpps for 3 s beside xdpchurn (5 ms gaps)" eval '
	"$CHURN" -t 4 -g 5 >"$XP_TMP/churn.out" & CH=$!
	sleep 0.3
	R0=$(rx_packets)
	client -c "$XP_SERVER4" --engine live -t 3 -b 90kpps -J >"$J"
	R1=$(rx_packets)
	wait $CH'
xp_check "the churn reached the engine (calls slept in the kernel)" ge "kernel sleeps" "$(jqv .end.offered_load.kernel_sleeps)" 1
xp_check "received == sent (no loss)" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
xp_check "the server veth saw them (rx_packets)" ge "xps0 rx_packets" "$((R1 - R0))" "$(jqv .end.sum.received.packets)"
# One 9-frame unit per wait would be a few percent of the target; catching up
# in one call gives most of it even while every call waits.
xp_check "at least half the target" ge "reached %" "$(jqv .end.offered_load.reached_percent)" 50
xp_check "on target, or short with the kernel named" eval '
	[[ $(jqv .end.offered_load.short_of_target) == false ]] ||
	[[ $(jqv .end.offered_load.held_back_by) == kernel && $(jqv .end.offered_load.why) == *"XDP dispatcher"* ]] ||
	{ jq -c .end.offered_load "$J"; false; }'
xp_pass

# ---------------------------------------------------------------------------
xp_case churn_shortfall_named_first_in_summary
xp_check "150 kpps for 3 s beside xdpchurn (no gaps)" eval '
	"$CHURN" -t 4 >"$XP_TMP/churn.out" & CH=$!
	sleep 0.3
	client -c "$XP_SERVER4" --engine live -t 3 -b 150kpps >"$XP_TMP/out.txt"
	wait $CH'
# The line after the summary separator: the warning (short) or the note (made up in bursts).
xp_check "first summary line names the kernel" eval '
	first=$(grep -A1 "^- - - -" "$XP_TMP/out.txt" | tail -1)
	[[ $first == "Warning: the offered load reached "*"held back by the kernel"* || $first == "Note: "*"slept in the kernel"* ]] ||
	{ echo "first line: $first"; false; }'
xp_pass

# ---------------------------------------------------------------------------
xp_case backpressure_shortfall_said_first
xp_check "tbf 50 Mbit/s on the router's egress" xp_exec router tc qdisc add dev xpr1 root tbf rate 50mbit burst 32kb latency 20ms
xp_check "150 kpps of 64-byte frames for 3 s" eval 'R0=$(rx_packets); client -c "$XP_SERVER4" --engine live -t 3 -b 150kpps >"$XP_TMP/out.txt"; R1=$(rx_packets)'
xp_check "first summary line is the warning" eval '
	first=$(grep -A1 "^- - - -" "$XP_TMP/out.txt" | tail -1)
	[[ $first == "Warning: the offered load reached "*"% of the target 150.00 kpps: held back by the path"* ]] || { echo "first line: $first"; false; }'
# tbf's rate in frames: 50e6 / (60 * 8) = 104 kpps of 60-byte L2 frames; the server veth agrees.
xp_check "the server veth saw about the tbf rate" eval 'n=$((R1 - R0)); ((n > 3 * 95000 && n < 3 * 110000)) || { echo "rx $n"; false; }'
xp_check "the loss reported is what tbf dropped (its own counter; 0 when it pushed back)" eval '
	d=$(xp_exec router tc -s -j qdisc show dev xpr1 root | jq ".[0].drops")
	lost=$(awk "/^Lost / {print \$2; exit}" "$XP_TMP/out.txt")
	echo "tbf dropped $d, xdpperf lost $lost"
	[[ -n $lost && -n $d ]] && expect_near lost "$lost" "$d" 5'
xp_check "exit 4 with --require-rate" expect_rc 4 client -c "$XP_SERVER4" --engine live -t 1 -b 150kpps --require-rate
xp_pass
