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
# (not xdpperf's) saw at least those frames. The last two cases do the same
# for xdpperf's own --flows on the AF_XDP and the live engine, with every
# kind of pattern (increment, decrement, values, random, a size increment).
. "$(dirname "$0")/lib.sh"

FLOWXSK=$XP_ROOT/build/tests/tools/flowxsk
CHECK=$XP_ROOT/tests/e2e/flows_capture_check.py
DST=198.18.2.0
PORT=7200
F0=20000
F1=10000
# 5000 frames/s a flow: tcpdump keeps up on a busy 2-core host (it must drop none)
PPS=5000

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
		"$XP_CLIENT4" "$DST" "$PORT" "$q" "$PPS" "$F0" "$F1" >"$log"'
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

# ---------------------------------------------------------------------------
# xdpperf's own --flows, on the AF_XDP and the live engine: one flow of
# 10 000 frames without stamps (the frames go to 198.18.2.x, which the router
# does not route: captured where it receives them), every kind of pattern:
# the destination an increment (step 3, 50 values), the TTL a values list,
# the DSCP and the destination port decrements, the size an increment
# (100..130 by 10), the source port random in 20000..20999 (10 000 draws).
# tests/e2e/flows_pattern_check.py computes each sequence from the file
# itself and checks the capture frame by frame (one thread) and the random
# field's range and chi-square.
PAT=$XP_TMP/patterns.json
PN=10000
cat >"$PAT" <<JSON
{"flows": [{"name": "patterns",
  "packet": [{"choice": "ethernet", "ethernet": {}},
             {"choice": "ipv4", "ipv4": {
                "dst": {"choice": "increment", "increment": {"start": "$DST", "step": "0.0.0.3", "count": 50}},
                "time_to_live": {"choice": "values", "values": [17, 33, 65]},
                "priority": {"choice": "dscp", "dscp": {"phb": {"choice": "decrement",
                             "decrement": {"start": 46, "step": 5, "count": 4}}}}}},
             {"choice": "udp", "udp": {
                "src_port": {"choice": "random", "random": {"min": 20000, "max": 20999, "seed": 9, "count": $PN}},
                "dst_port": {"choice": "decrement", "decrement": {"start": 7299, "step": 2, "count": 25}}}}],
  "size": {"choice": "increment", "increment": {"start": 100, "end": 130, "step": 10}},
  "rate": {"choice": "pps", "pps": $PPS},
  "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": $PN}},
  "metrics": {"enable": false}}]}
JSON

pattern_case() { # ENGINE
	local eng=$1 cap=$XP_TMP/pat_$1.pcap j=$XP_TMP/pat_$1.json rx0 rx1
	xp_capture_bg router tcpdump -n -i "$XP_ROUTER_CLIENT_DEV" -w "$cap" -B 65536 --immediate-mode \
		udp and dst net 198.18.2.0/24
	local cap_pid=$XP_BG_PID cap_log=$XP_BG_LOG
	rx0=$(rx_packets)
	xp_check "xdpperf --engine $eng --flows" eval 'xp_exec client "$XP_BIN" -c "$XP_SERVER4" --engine "$eng" \
		--queues 1 -t 3 --flows "$PAT" -J >"$j"'
	sleep 0.5
	rx1=$(rx_packets)
	kill -INT "$cap_pid"
	wait "$cap_pid" 2>/dev/null
	cat "$cap_log"
	echo "router $XP_ROUTER_CLIENT_DEV rx_packets +$((rx1 - rx0))"
	xp_check "engine sent $PN" expect_eq frames_tx "$(jq '.end.flows[0].frames_tx' "$j")" "$PN"
	xp_check "router's interface took them" expect_rc 0 test "$((rx1 - rx0))" -ge "$PN"
	xp_check "tcpdump dropped none" grep -q '^0 packets dropped by kernel' "$cap_log"
	xp_check "capture: the file's patterns, frame by frame" eval 'tshark -r "$cap" -T fields -e frame.len -e ip.dst \
		-e ip.ttl -e ip.dsfield.dscp -e udp.srcport -e udp.dstport 2>/dev/null |
		python3 "$XP_ROOT/tests/e2e/flows_pattern_check.py" "$PAT" "$PN"'
}

xp_case xdpperf_patterns_xsk
xp_check "server" start_server
pattern_case xsk
xp_pass

xp_case xdpperf_patterns_live
pattern_case live
xp_pass
