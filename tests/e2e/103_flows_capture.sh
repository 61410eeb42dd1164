#!/usr/bin/env bash
# Issue 26: the AF_XDP engine sending flows (tests/tools/flowxsk drives it:
# the command line names no flows yet). Two flows, one with its destination
# incrementing over 100 addresses, its port over 10 and its source port
# random (20 000 draws), the other with DSCP 46, at a fixed frame count each, are captured
# by tcpdump where the router's kernel receives them (xpr0; AF_XDP frames
# pass no tap on the sender) and read by tshark: the capture holds exactly
# the frames the engine says it sent per flow (read_flows), the declared
# sequences frame by frame (one thread) or value by value (two), and the
# random field passes a chi-square test. The router's interface counters
# (not xdpperf's) saw at least those frames.
. "$(dirname "$0")/lib.sh"

FLOWXSK=$XP_ROOT/build/tests/tools/flowxsk
CHECK=$XP_ROOT/tests/e2e/flows_capture_check.py
DST=198.18.2.0
PORT=7200
F0=20000
F1=10000

rx_packets() { xp_exec router cat "/sys/class/net/$XP_ROUTER_CLIENT_DEV/statistics/rx_packets"; }
flow_field() { # LOG FLOW FIELD
	awk -v f="flow=$2" -v k="$3=" '$1 == f { for (i = 2; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }' "$1"
}

run_case() { # QUEUES ORDERED
	local q=$1 ordered=$2 cap=$XP_TMP/flows$1.pcap log=$XP_TMP/flowxsk$1.log rx0 rx1
	xp_capture_bg router tcpdump -n -i "$XP_ROUTER_CLIENT_DEV" -w "$cap" -B 65536 --immediate-mode udp
	local cap_pid=$XP_BG_PID cap_log=$XP_BG_LOG
	rx0=$(rx_packets)
	xp_check "flowxsk: 2 flows, $q thread(s)" eval 'xp_exec client "$FLOWXSK" "$XP_CLIENT_DEV" "$XP_CLIENT_GW_MAC" \
		"$XP_CLIENT4" "$DST" "$PORT" "$q" 10000 "$F0" "$F1" >"$log"'
	cat "$log"
	sleep 1
	rx1=$(rx_packets)
	kill -INT "$cap_pid"
	wait "$cap_pid" 2>/dev/null
	cat "$cap_log"
	xp_check "tcpdump dropped none" grep -q '^0 packets dropped by kernel' "$cap_log"
	echo "router $XP_ROUTER_CLIENT_DEV rx_packets +$((rx1 - rx0))"
	xp_check "engine: flow 0 sent $F0" expect_eq flow0 "$(flow_field "$log" 0 pkts)" "$F0"
	xp_check "engine: flow 1 sent $F1" expect_eq flow1 "$(flow_field "$log" 1 pkts)" "$F1"
	xp_check "engine: flow 0 bytes" expect_eq bytes0 "$(flow_field "$log" 0 bytes)" "$((F0 * 124))"
	xp_check "router's interface took them all" expect_rc 0 test "$((rx1 - rx0))" -ge "$((F0 + F1))"
	xp_check "capture: sequences, counts, chi-square" eval 'tshark -r "$cap" -T fields -e frame.len -e ip.dst \
		-e udp.srcport -e udp.dstport -e ip.dsfield.dscp 2>/dev/null |
		python3 "$CHECK" "$DST" "$PORT" "$(flow_field "$log" 0 pkts)" "$(flow_field "$log" 1 pkts)" "$ordered"'
}

xp_case flows_lab_up
xp_check "lab up, 2 queues" xp_lab_up --queues 2
xp_check "2 queues" expect_eq queues "${XP_QUEUES:-}" 2
xp_pass

xp_case flows_one_thread
run_case 1 1
xp_pass

# Two threads: each sends every flow, its own stream per flow; together
# every frame number of a flow once.
xp_case flows_two_threads
run_case 2 0
xp_pass
