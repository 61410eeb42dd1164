#!/usr/bin/env bash
# Issue 26, QoS with xdpperf's own flows: `scripts/lab.sh qos 50mbit 20`
# (htb on the router's egress to the server, DSCP 46 in class 1:10 with
# priority, the rest in 1:20, a pfifo of 100 frames each) and
# docs/examples/flows/qos_ef_be.json with its rates halved (the file is
# written for 100 Mbit/s) sent by xdpperf's AF_XDP engine for 3 s:
# "voice-ef", DSCP 46, 200-byte frames at 5 Mbit/s (10 % of the rate),
# beside "bulk-be", 1000-byte frames at 75 Mbit/s (150 %). Checked against
# counters xdpperf did not write:
#  - the sender was not slowed to the shaper's rate: the client's interface
#    sent every frame the engine counted, well above 50 Mbit/s (veth
#    push-back would hold the sum near it);
#  - nothing was lost before the shaper (the router's ingress counter);
#  - EF: no loss in xdpperf's per-flow figures, no drop in class 1:10;
#  - EF's p99 one-way latency (xdpperf's per-flow histogram) below BE's p50;
#  - each flow's loss equals its class's drops in tc's statistics.
# 50 Mbit/s, not 100: on this busy 2-vCPU host EF's p99 reached 2-5 ms
# (the sending thread preempted), against BE's p50 of 9.4 ms at 100 Mbit/s
# (its full queue) and twice that at 50. The AF_XDP engine, not the live
# one: the machine notes saw a shaper on the router's egress slow an XDP
# live-frames sender (docs/flows.md, QoS).
. "$(dirname "$0")/lib.sh"

FLOWS=$XP_TMP/qos_ef_be.json
J=$XP_TMP/qos.json
SECS=3
RATE=50 # Mbit/s
EF_PPS=$((RATE * 1000000 / 10 / (200 * 8)))     # 3125 frames/s
BE_PPS=$((RATE * 1000000 * 3 / 2 / (1000 * 8))) # 9375 frames/s
jq --argjson r "$RATE" '.flows[0].rate.mbps = $r / 10 | .flows[1].rate.mbps = $r * 3 / 2' \
	"$XP_ROOT/docs/examples/flows/qos_ef_be.json" >"$FLOWS"

# stat CLASSID FIELD: a class's statistic from its leaf pfifo in tc's JSON
# (this iproute2 prints classes as text only; a leaf qdisc's packets, drops
# and backlog are its class's, where `tc -s class show` gets them).
stat() {
	xp_exec router tc -s -j qdisc show dev "$XP_ROUTER_SERVER_DEV" |
		jq --arg c "$1" --arg f "$2" '.[] | select(.parent == $c) | .[$f]'
}
dev_stat() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
flow() { jq -r --arg n "$1" ".end.flows[] | select(.name == \$n) | $2" "$J"; }

# ---------------------------------------------------------------------------
xp_case qos_flows_setup
xp_check "lab up" xp_lab_up
xp_check "qos ${RATE}mbit, EF class 20 %" bash "$XP_LAB" qos "${RATE}mbit" 20
# Everything but UDP (the flows) into EF's class: the control connection's
# segments to the server and the router's own ICMPv6 (neighbour discovery,
# MLD reports) would share class 1:20 with best effort and could be dropped
# there (runs without this rule dropped 1-4 of them), so 1:20 holds
# bulk-be's frames alone and its drops are that flow's. EF's class has the
# room. ARP is not IP (nftables' inet family does not see it) and would
# stay in 1:20: the router's entry for the server is made permanent, so it
# sends none (a run without this had one ARP probe in 1:20).
xp_check "non-UDP into class 1:10" xp_exec router nft insert rule inet xpqos post \
	oifname "$XP_ROUTER_SERVER_DEV" meta l4proto != udp meta priority set 1:10
xp_check "no ARP from the router to the server" xp_exec router ip neigh replace "$XP_SERVER4" \
	lladdr "$XP_SERVER_MAC" dev "$XP_ROUTER_SERVER_DEV" nud permanent
xp_check "server" start_server
xp_pass

# ---------------------------------------------------------------------------
xp_case qos_flows_ef_protected
TX0=$(dev_stat client "$XP_CLIENT_DEV" tx_packets)
TXD0=$(dev_stat client "$XP_CLIENT_DEV" tx_dropped)
TXB0=$(dev_stat client "$XP_CLIENT_DEV" tx_bytes)
RX0=$(dev_stat router "$XP_ROUTER_CLIENT_DEV" rx_packets)
xp_check "xdpperf --flows qos_ef_be.json, xsk, ${SECS} s" eval 'xp_exec client "$XP_BIN" -c "$XP_SERVER4" \
	--engine xsk --queues 1 -t "$SECS" --flows "$FLOWS" -J >"$J"'
TX1=$(dev_stat client "$XP_CLIENT_DEV" tx_packets)
TXD1=$(dev_stat client "$XP_CLIENT_DEV" tx_dropped)
TXB1=$(dev_stat client "$XP_CLIENT_DEV" tx_bytes)
RX1=$(dev_stat router "$XP_ROUTER_CLIENT_DEV" rx_packets)
EF_TX=$(flow voice-ef .frames_tx) BE_TX=$(flow bulk-be .frames_tx)
EF_LOSS=$(flow voice-ef .loss) BE_LOSS=$(flow bulk-be .loss)
EF_P99=$(flow voice-ef .latency.p99_ns) BE_P50=$(flow bulk-be .latency.p50_ns)
EF_DROP=$(stat 1:10 drops) BE_DROP=$(stat 1:20 drops)
EF_PKTS=$(stat 1:10 packets) BE_PKTS=$(stat 1:20 packets)
BACKLOG=$(($(stat 1:10 qlen) + $(stat 1:20 qlen)))
SEND_S=$(jq '.end.sum.seconds' "$J")
jq -c '.end.flows[] | {name, frames_tx, frames_rx, frames_rx_all, loss, p50_ns: .latency.p50_ns, p99_ns: .latency.p99_ns}' "$J"
echo "client $XP_CLIENT_DEV tx +$((TX1 - TX0)) frames +$((TXB1 - TXB0)) bytes (dropped +$((TXD1 - TXD0))); router $XP_ROUTER_CLIENT_DEV rx +$((RX1 - RX0))"
echo "class 1:10 sent $EF_PKTS dropped $EF_DROP; class 1:20 sent $BE_PKTS dropped $BE_DROP; queued $BACKLOG; test ${SEND_S} s"
# The sender was not slowed to the shaper: each flow went out at 85 % of its
# rate at least (a busy host's pacer lags by up to ~11 %; push-back would
# hold both near the shaper's 50 Mbit/s, 62 % of the 80 offered), and the
# client's interface passed every frame (plus the control connection's).
xp_check "EF sent at 10 % of the rate" expect_rc 0 test "$EF_TX" -ge $((EF_PPS * SECS * 85 / 100))
xp_check "BE sent at 150 % of the rate" expect_rc 0 test "$BE_TX" -ge $((BE_PPS * SECS * 85 / 100))
xp_check "client interface sent them all" expect_rc 0 test "$((TX1 - TX0))" -ge "$((EF_TX + BE_TX))"
xp_check "client interface: above the shaper's rate" expect_rc 0 test \
	"$(((TXB1 - TXB0) * 8 / SECS / 1000000))" -gt "$((RATE * 12 / 10))"
xp_check "client interface dropped none" expect_eq tx_dropped "$((TXD1 - TXD0))" 0
xp_check "router took them all in" expect_rc 0 test "$((RX1 - RX0))" -ge "$((EF_TX + BE_TX))"
# EF: nothing lost, nothing dropped in its class.
xp_check "EF: loss 0" expect_eq ef_loss "$EF_LOSS" 0
xp_check "EF: received all" expect_eq ef_rx "$(flow voice-ef .frames_rx)" "$EF_TX"
xp_check "EF: class 1:10 dropped none" expect_eq ef_drops "$EF_DROP" 0
# Best effort took the overload: a quarter at least (75 -> ~45 Mbit/s: 40 %).
xp_check "BE: overload dropped" expect_rc 0 test "$BE_LOSS" -ge $((BE_TX / 4))
xp_check "EF p99 below BE p50" expect_rc 0 test "$EF_P99" -lt "$BE_P50"
# Loss per flow = drops per class. Frames in flight would be the only
# difference: still queued in a class when the server's counts were read.
# xdpperf reads them after its settle wait (until the server's count stops
# moving), and a full BE queue (100 frames) drains in 18 ms, so none are left:
# the classes' backlog is 0 and the counts must be equal.
xp_check "nothing left queued" expect_eq backlog "$BACKLOG" 0
xp_check "class 1:20 held bulk-be's frames alone" expect_eq be_class_in "$((BE_PKTS + BE_DROP))" "$BE_TX"
xp_check "class 1:10 held voice-ef's frames" expect_rc 0 test "$EF_PKTS" -ge "$EF_TX"
xp_check "bulk-be's loss = class 1:20's drops" expect_eq be_loss "$BE_LOSS" "$BE_DROP"
xp_check "voice-ef's loss = class 1:10's drops" expect_eq ef_loss "$EF_LOSS" "$EF_DROP"
xp_pass

# ---------------------------------------------------------------------------
# Flows without stamps (metrics.enable false), told apart by DSCP: the server
# counts each by the headers it declares unique (the client chooses DSCP; the
# key goes in the start request). 1000 frames each at 1000 frames/s, through
# the same router (well below its classes' rates: nothing dropped), each
# flow's received count checked against an nftables counter per DSCP in the
# router's forward chain, counters xdpperf did not write. ~3 s.
xp_case qos_flows_unstamped_by_dscp
KF=$XP_TMP/unstamped.json
KJ=$XP_TMP/unstamped_out.json
cat >"$KF" <<'JSON'
{"flows": [
 {"name": "plain", "packet": [{"choice": "ethernet", "ethernet": {}},
   {"choice": "ipv4", "ipv4": {"priority": {"choice": "dscp", "dscp": {"phb": {"choice": "value", "value": 0}}}}},
   {"choice": "udp", "udp": {"src_port": {"choice": "value", "value": 30000}}}],
  "size": {"choice": "fixed", "fixed": 128}, "rate": {"choice": "pps", "pps": 1000},
  "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": 1000}}, "metrics": {"enable": false}},
 {"name": "expedited", "packet": [{"choice": "ethernet", "ethernet": {}},
   {"choice": "ipv4", "ipv4": {"priority": {"choice": "dscp", "dscp": {"phb": {"choice": "value", "value": 46}}}}},
   {"choice": "udp", "udp": {"src_port": {"choice": "value", "value": 30000}}}],
  "size": {"choice": "fixed", "fixed": 128}, "rate": {"choice": "pps", "pps": 1000},
  "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": 1000}}, "metrics": {"enable": false}}]}
JSON
xp_check "router counters per DSCP" xp_exec router nft -f - <<'NFT'
table inet xpkey {
	chain kfwd {
		type filter hook forward priority 0;
		ip dscp 0 udp sport 30000 counter comment "dscp0"
		ip dscp 46 udp sport 30000 counter comment "dscp46"
	}
}
NFT
xp_on_exit "ip netns exec $(xp_ns router) nft delete table inet xpkey 2>/dev/null"
# nft_dscp COMMENT: the packets of the rule with that comment.
nft_dscp() {
	xp_exec router nft -j list chain inet xpkey kfwd |
		jq --arg c "$1" '[.nftables[] | .rule? // empty | select(.comment == $c) | .expr[] | .counter? // empty | .packets] | add // 0'
}
xp_check "xdpperf --flows (two flows without stamps), xsk" eval 'xp_exec client "$XP_BIN" -c "$XP_SERVER4" \
	--engine xsk --queues 1 -t 2 --flows "$KF" -J >"$KJ"'
jq -c '.end.flows[]' "$KJ"
jq -c '.end.sum | del(.received.counters)' "$KJ"
kflow() { jq -r --arg n "$1" ".end.flows[] | select(.name == \$n) | $2" "$KJ"; }
N0=$(nft_dscp dscp0) N46=$(nft_dscp dscp46)
echo "router: dscp 0 $N0, dscp 46 $N46"
xp_check "plain: sent 1000" expect_eq plain_tx "$(kflow plain .frames_tx)" 1000
xp_check "expedited: sent 1000" expect_eq ef_tx "$(kflow expedited .frames_tx)" 1000
xp_check "both counted, without stamps" expect_eq counted "$(jq -c '[.end.flows[] | [.counted, .stamps]]' "$KJ")" \
	'[[true,false],[true,false]]'
xp_check "plain received = the router's DSCP 0 counter" expect_eq plain_rx "$(kflow plain .frames_rx)" "$N0"
xp_check "expedited received = the router's DSCP 46 counter" expect_eq ef_rx "$(kflow expedited .frames_rx)" "$N46"
xp_check "the router forwarded them all" expect_eq router_both "$((N0 + N46))" 2000
xp_check "no latency, duplicates or order figures (absent, not 0)" expect_eq absent \
	"$(jq -c '[.end.flows[] | has("latency"), has("duplicates"), has("reordered")] | any' "$KJ")" false
xp_pass
