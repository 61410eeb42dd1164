#!/usr/bin/env bash
# Issue 26, QoS in the lab (scripts/lab.sh qos): the router's egress to the
# server shaped to 100 Mbit/s by htb, DSCP 46 (EF) in a class of its own with
# priority. An EF stream at 10 % of the rate beside a best-effort one at
# 150 % (iperf3 UDP, 1000-byte datagrams, 5 s): the overload is dropped in
# the best-effort class's queue (tc -s class show), not pushed back to the
# sender (the client's own interface counter shows it sent the full 150 %),
# and EF loses nothing in the router. All figures from tc, the kernel's
# interface counters and iperf3: none from xdpperf. docs/flows.md has the
# numbers of one run.
. "$(dirname "$0")/lib.sh"

command -v iperf3 >/dev/null || { xp_case qos_classes; xp_fail "iperf3 is not installed (make deps)"; exit 1; }

# class_stat CLASSID FIELD: a class's statistic, from its leaf pfifo's in
# tc's JSON (this iproute2 prints classes as text only; a leaf qdisc's drops
# and packets are its class's, where tc -s class show gets them).
class_stat() {
	xp_exec router tc -s -j qdisc show dev "$XP_ROUTER_SERVER_DEV" |
		jq --arg c "$1" --arg f "$2" '.[] | select(.parent == $c) | .[$f]'
}
tx_packets() { xp_exec client cat "/sys/class/net/$XP_CLIENT_DEV/statistics/tx_packets"; }

# ---------------------------------------------------------------------------
xp_case qos_setup
xp_check "lab up" xp_lab_up
xp_check "qos bad rate" expect_rc 2 bash "$XP_LAB" qos fast
xp_check "qos bad share" expect_rc 2 bash "$XP_LAB" qos 100mbit 95
xp_check "qos 100mbit" bash "$XP_LAB" qos 100mbit 20
xp_check "htb root" expect_eq qdisc \
	"$(xp_exec router tc -j qdisc show dev "$XP_ROUTER_SERVER_DEV" | jq -r '.[] | select(.root == true) | .kind')" htb
xp_check "EF and BE classes' queues" expect_eq classes \
	"$(xp_exec router tc -j qdisc show dev "$XP_ROUTER_SERVER_DEV" | jq -r '[.[] | .parent // empty] | sort | join(" ")')" "1:10 1:20"
xp_pass

# ---------------------------------------------------------------------------
xp_case qos_overload_in_class_queue
xp_run_bg server iperf3 -s -p 5311 -1
xp_run_bg server iperf3 -s -p 5312 -1
xp_check "iperf3 servers" eval 'xp_wait_port server 5311 && xp_wait_port server 5312'
TX0=$(tx_packets)
xp_run_bg client iperf3 -c "$XP_SERVER4" -p 5311 -u -b 10M -l 1000 --tos 184 -t 5 -J
EF_LOG=$XP_BG_LOG EF_PID=$XP_BG_PID
xp_check "best effort at 150 %" xp_exec client iperf3 -c "$XP_SERVER4" -p 5312 -u -b 150M -l 1000 -t 5 -J \
	-O 0 --logfile "$XP_TMP/be.json"
xp_check "EF done" wait "$EF_PID"
TX1=$(tx_packets)
EF_SENT=$(jq '.end.sum.packets' "$EF_LOG")
BE_SENT=$(jq '.end.sum.packets' "$XP_TMP/be.json")
EF_DROP=$(class_stat 1:10 drops) BE_DROP=$(class_stat 1:20 drops)
EF_PKTS=$(class_stat 1:10 packets) BE_PKTS=$(class_stat 1:20 packets)
echo "EF sent $EF_SENT, class 1:10 $EF_PKTS sent $EF_DROP dropped; BE sent $BE_SENT, class 1:20 $BE_PKTS sent $BE_DROP dropped; client tx $((TX1 - TX0))"
# The sender was not slowed: the client's interface sent both streams whole
# (150 Mbit/s of 1000-byte datagrams for 5 s is ~93 750; 10 % slack).
xp_check "sender not pushed back" expect_rc 0 test "$((TX1 - TX0))" -ge $((EF_SENT + 84000))
xp_check "EF: nothing dropped in its class" expect_eq ef_drops "$EF_DROP" 0
xp_check "EF: every datagram through its class" expect_rc 0 test "$EF_PKTS" -ge "$EF_SENT"
# Best effort took the overload: a third of it at least (150 -> ~90 Mbit/s).
xp_check "BE: overload dropped in its class queue" expect_rc 0 test "$BE_DROP" -ge $((BE_SENT / 3))
xp_check "qos off" bash "$XP_LAB" qos off
xp_check "no qdisc left" expect_eq qdisc \
	"$(xp_exec router tc -j qdisc show dev "$XP_ROUTER_SERVER_DEV" | jq -r '[.[] | select(.root == true) | .kind] | join(" ")')" noqueue
xp_pass
