#!/usr/bin/env bash
# Issue 27, the OTG controller (user/otg/) with real agents in the lab,
# driven by build/tests/tools/otgdrive (the controller's calls as a snappi
# script makes them: set_config, start, metrics, stop), no HTTP:
# - hello world: p1 is this host (the client namespace), p2 the agent
#   `xdpperf -s` in the server namespace, through the lab's router: 1000
#   UDP frames at 1000 frames/s: flow and port metrics say 1000 sent and
#   1000 received, equal to the router's forwarded count (an nftables
#   counter of its forward hook) and to what the sender's interface sent
#   (a counter on the router's ingress from it: the interface's own tx
#   counter also has the control connection's segments); a config while the
#   traffic runs is 409; a stop ends a continuous flow and leaves nothing
#   attached.
# - two agents that send (issue 27): p1's agent in the client namespace, p2's in a third namespace of
#   the case's own, p3 the server's, the controller in the router namespace; both flows started at one
#   instant, each sender's count against the router's and its interface's, merged figures against the
#   router's forwarded count, the start skew reported under 10 ms.
. "$(dirname "$0")/lib.sh"

DRIVE=$XP_ROOT/build/tests/tools/otgdrive
J=$XP_TMP/out.json
CFG=$XP_TMP/cfg.json
N=1000

# The router's counters of the test's UDP frames: as they come in from the client (netdev ingress of
# xpr0) and as it forwards them (inet forward); counters xdpperf did not write.
count_setup() {
	xp_exec router nft -f - <<'NFT'
table netdev xpotgin {
	chain cin {
		type filter hook ingress device "xpr0" priority 0;
		ip protocol udp counter
	}
}
table inet xpotgfwd {
	chain fw {
		type filter hook forward priority 0;
		ip protocol udp counter
	}
}
NFT
}
count_of() { # FAMILY TABLE
	xp_exec router nft -j list table "$1" "$2" |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0'
}
flowm() { jq -r --arg n "$1" ".flow.flow_metrics[] | select(.name == \$n) | $2" "$J"; }
portm() { jq -r --arg n "$1" ".port.port_metrics[] | select(.name == \$n) | $2" "$J"; }
# No XDP program on any lab device: none on the sender's side once the controller's test returned; the
# agent's stays XP_SRV_XDP_LINGER (5 s, server/churn.c) after its last test, so that is waited for.
xdp_on() { xp_exec "$1" ip -j link show | jq -e '[.[] | select(.xdp != null)] | length > 0' >/dev/null; }
none_attached() { ! xdp_on client && ! xdp_on router && ! xdp_on server; }
nothing_attached() {
	local ns
	! xdp_on client && xp_wait 8 "no XDP program left on the lab's devices" none_attached && return
	for ns in client router server; do
		xp_exec "$ns" ip -j link show | jq -c --arg ns "$ns" '.[] | select(.xdp != null) | {ns: $ns, dev: .ifname, xdp}'
	done
	return 1
}

hello_cfg() { # DURATION-JSON
	cat >"$CFG" <<JSON
{"ports": [{"name": "p1", "location": "$XP_CLIENT4"}, {"name": "p2", "location": "$XP_SERVER4"}],
 "flows": [{"name": "f1", "tx_rx": {"choice": "port", "port": {"tx_name": "p1", "rx_names": ["p2"]}},
            "packet": [{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}},
                       {"choice": "udp", "udp": {}}],
            "size": {"choice": "fixed", "fixed": 128},
            "rate": {"choice": "pps", "pps": 1000},
            "duration": $1,
            "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}}]}
JSON
}

# ---------------------------------------------------------------------------
xp_case otg_hello_world_local_sender
xp_check "lab up" xp_lab_up
xp_check "agent in the server namespace" start_server
hello_cfg '{"choice": "fixed_packets", "fixed_packets": {"packets": '$N'}}'
xp_check "router counters" count_setup
xp_check "otgdrive: config, start, metrics during, wait" eval \
	'xp_exec client "$DRIVE" "$CFG" --metrics-during 0.5 --timeout 20 >"$J"'
IN=$(count_of netdev xpotgin) FWD=$(count_of inet xpotgfwd)
echo "router: in from the client $IN, forwarded $FWD"
jq -c . "$J"
xp_check "during: transmit started" expect_eq transmit "$(jq -r '.during.flow_metrics[0].transmit' "$J")" started
xp_check "during: a config is 409" expect_eq code "$(jq -r '.config_while_running' "$J")" 409
xp_check "flow f1: frames_tx $N" expect_eq frames_tx "$(flowm f1 .frames_tx)" "$N"
xp_check "flow f1: frames_rx $N" expect_eq frames_rx "$(flowm f1 .frames_rx)" "$N"
xp_check "flow f1: stopped at the end" expect_eq transmit "$(flowm f1 .transmit)" stopped
xp_check "flow f1: loss 0" expect_eq loss "$(flowm f1 .loss)" 0
xp_check "flow f1: latency measured (0 < min <= avg <= max)" eval \
	'jq -e ".flow.flow_metrics[0].latency | .minimum_ns > 0 and .minimum_ns <= .average_ns and .average_ns <= .maximum_ns" "$J"'
xp_check "port p1: frames_tx = the router's count of what came from the client" expect_eq p1 "$(portm p1 .frames_tx)" "$IN"
xp_check "port p2: frames_rx = the router's forwarded count" expect_eq p2 "$(portm p2 .frames_rx)" "$FWD"
xp_check "nothing attached" nothing_attached
xp_pass

xp_case otg_stop_continuous
hello_cfg '{"choice": "continuous", "continuous": {}}'
xp_check "otgdrive: a continuous flow stopped after 1.5 s" eval \
	'xp_exec client "$DRIVE" "$CFG" --metrics-during 0.5 --stop-after 1.5 >"$J"'
jq -c . "$J"
xp_check "stopped" expect_eq transmit "$(flowm f1 .transmit)" stopped
xp_check "about 1.5 s of 1000 frames/s sent (1000..2000)" eval \
	'n=$(flowm f1 .frames_tx); ((n >= 1000 && n <= 2000))'
xp_check "every frame sent received" expect_eq frames_rx "$(flowm f1 .frames_rx)" "$(flowm f1 .frames_tx)"
xp_check "nothing attached" nothing_attached
xp_pass

xp_case otg_two_agents_send_together
# Issue 27's several senders, three agents in three namespaces: p1's agent in the client namespace
# (control port 5311), p2's in a namespace of this case's own (xp-client2, 198.18.2.2, a veth of its own
# into the router, control port 5312), each --allow admitting the controller and the receiving agent; p3's
# agent in the server namespace receives, and the controller runs in the router namespace, so it sends
# nothing itself. Flows p1->p3 and p2->p3 start at one instant (a start time each agent's clock offset
# turns into its own): each 1000 frames sent and received; each sender's frames_tx equal to the router's
# ingress count on its veth and to its own interface's tx counter (tx_packets less what the kernel's
# stack sent there, the control connection and ARP, which a netdev egress counter sees and the engines'
# frames bypass); the merged count at p3 equal to the router's forwarded count; the start skew under 10 ms.
C2=xp-client2
KEEP_PID=$SRV_PID KEEP_LOG=$SRV_LOG
xp_check "a third namespace, $C2 (198.18.2.2), on a veth of its own into the router" eval '
	xp_netns_add "$C2" && netns_pair "$C2" xpc2 "$(xp_ns router)" xpr2 &&
	netns_addr "$C2" xpc2 198.18.2.2/24 && netns_addr "$(xp_ns router)" xpr2 198.18.2.1/24 &&
	ip -n "$C2" route add default via 198.18.2.1 && netns_gro "$(xp_ns router)" xpr2 &&
	xp_exec "$C2" timeout 3 bash -c "exec 3<>/dev/tcp/$XP_SERVER4/5301"'
xp_check "sending agent p1 (client namespace, control port 5311)" \
	start_server_in client --control-port 5311 --allow 198.18.0.0/15
A1_LOG=$SRV_LOG A1_PID=$SRV_PID
xp_check "sending agent p2 ($C2, control port 5312)" \
	start_server_in "$C2" --control-port 5312 --allow 198.18.0.0/15
A2_LOG=$SRV_LOG
SRV_PID=$KEEP_PID SRV_LOG=$KEEP_LOG
flow_json() { # NAME TX
	cat <<JSON
{"name": "$1", "tx_rx": {"choice": "port", "port": {"tx_name": "$2", "rx_names": ["p3"]}},
 "packet": [{"choice": "ethernet", "ethernet": {}}, {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}],
 "size": {"choice": "fixed", "fixed": 128}, "rate": {"choice": "pps", "pps": 1000},
 "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": $N}},
 "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}}
JSON
}
cat >"$CFG" <<JSON
{"ports": [{"name": "p1", "location": "$XP_CLIENT4:5311"}, {"name": "p2", "location": "198.18.2.2:5312"},
           {"name": "p3", "location": "$XP_SERVER4"}],
 "flows": [$(flow_json f1 p1), $(flow_json f2 p2)]}
JSON
xp_exec router nft delete table netdev xpotgin
xp_exec router nft delete table inet xpotgfwd
xp_check "router counters" count_setup
xp_check "router counts what comes in on xpr2 too" eval 'xp_exec router nft -f - <<-NFT
	table netdev xpotgin2 {
		chain cin2 {
			type filter hook ingress device "xpr2" priority 0;
			ip protocol udp counter
		}
	}
	NFT'
# What each sender's kernel stack sends on its interface (the engines' frames bypass the egress hook).
stack_setup() { # NS DEV
	xp_exec "$1" nft -f - <<-NFT
	table netdev xpotgeg {
		chain eg {
			type filter hook egress device "$2" priority 0;
			counter
		}
	}
	NFT
}
xp_check "senders' stacks counted on their interfaces (netdev egress)" eval 'stack_setup client xpc0 && stack_setup "$C2" xpc2'
tx_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/tx_packets"; }
T1A=$(tx_of client xpc0) T2A=$(tx_of "$C2" xpc2)
xp_check "otgdrive in the router namespace: config, start, wait" eval \
	'xp_exec router "$DRIVE" "$CFG" --timeout 20 >"$J"'
T1B=$(tx_of client xpc0) T2B=$(tx_of "$C2" xpc2)
IN1=$(count_of netdev xpotgin) IN2=$(count_of netdev xpotgin2) FWD=$(count_of inet xpotgfwd)
S1=$(xp_exec client nft -j list table netdev xpotgeg | jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0')
S2=$(xp_exec "$C2" nft -j list table netdev xpotgeg | jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0')
echo "router: in on xpr0 $IN1, on xpr2 $IN2, forwarded $FWD; xpc0 tx $((T1B - T1A)) ($S1 by the stack), xpc2 tx $((T2B - T2A)) ($S2 by the stack)"
xp_exec client nft delete table netdev xpotgeg
xm() { jq -r ".flow.xdpperf | $1" "$J"; }
for f in f1 f2; do
	xp_check "flow $f: frames_tx $N" expect_eq frames_tx "$(flowm $f .frames_tx)" "$N"
	xp_check "flow $f: frames_rx $N" expect_eq frames_rx "$(flowm $f .frames_rx)" "$N"
done
xp_check "p1 frames_tx = the router's count in on xpr0" expect_eq p1 "$(portm p1 .frames_tx)" "$IN1"
xp_check "p2 frames_tx = the router's count in on xpr2" expect_eq p2 "$(portm p2 .frames_tx)" "$IN2"
xp_check "p1 frames_tx = xpc0's tx_packets less its stack's" expect_eq p1 "$(portm p1 .frames_tx)" "$((T1B - T1A - S1))"
xp_check "p2 frames_tx = xpc2's tx_packets less its stack's" expect_eq p2 "$(portm p2 .frames_tx)" "$((T2B - T2A - S2))"
xp_check "p3 frames_rx (both senders merged) = the router's forwarded count" expect_eq p3 "$(portm p3 .frames_rx)" "$FWD"
xp_check "xdpperf.rx_ports p3: merged frames_rx = forwarded, its merged histogram timed them all" eval \
	'[[ $(xm ".rx_ports[] | select(.port == \"p3\") | .frames_rx") == "$FWD" &&
	    $(xm ".rx_ports[] | select(.port == \"p3\") | .latency.timed") == "$FWD" ]]'
xp_check "both sent by their agents, clocks measured" eval \
	'[[ $(xm "[.senders[] | select(.agent and .clock_rtt_ns > 0)] | length") == 2 ]]'
SKEW=$(xm .start_skew_ns)
echo "start skew ${SKEW} ns"
xp_check "start skew reported, under 10 ms" eval '[[ $SKEW =~ ^[0-9]+$ ]] && ((SKEW < 10000000))'
xp_check "each agent logged its send" eval \
	'grep -q "send (OTG controller)" "$A1_LOG" && grep -q "send (OTG controller)" "$A2_LOG"'
# A stop reaches the agents: both flows continuous, stopped after 1.5 s (each agent's test ends as on
# Ctrl-C and its figures still come): each flow about 1.5 s of 1000 frames/s, all of it received.
jq '.flows[].duration = {"choice": "continuous", "continuous": {}}' "$CFG" >"$XP_TMP/cont.json"
xp_check "otgdrive: two agents' continuous flows stopped after 1.5 s" eval \
	'xp_exec router "$DRIVE" "$XP_TMP/cont.json" --stop-after 1.5 >"$J"'
jq -c '.flow.flow_metrics' "$J"
for f in f1 f2; do
	xp_check "flow $f: stopped, 1000..2500 sent, every frame received" eval \
		'[[ $(flowm $f .transmit) == stopped ]] && n=$(flowm $f .frames_tx) && ((n >= 1000 && n <= 2500)) &&
		 [[ $(flowm $f .frames_rx) == "$n" ]]'
done
# Not an open relay: the server's agent (no --allow) asked to send to p1's agent, which is neither the
# controller (the router) nor inside an --allow network, refuses; the start says so and nothing runs.
sed -e 's/"tx_name": "p1", "rx_names": \["p3"\]/"tx_name": "p3", "rx_names": ["p1"]/' "$CFG" |
	jq '.flows |= [.[0]]' >"$XP_TMP/relay.json"
xp_check "a send to a third party is refused by the agent" eval \
	'! xp_exec router "$DRIVE" "$XP_TMP/relay.json" --timeout 10 >"$J" &&
	 jq -r ".errors[0]" "$J" | tee /dev/stderr | grep -q "sends only to the controller.s own address or inside its --allow"'
# A sending agent killed mid-test (its sender child with it): its port says so, link down, and its counts
# are left out, never 0.
jq '.flows |= [.[0]]' "$XP_TMP/cont.json" >"$XP_TMP/kill.json"
xp_check "p1's agent killed 1.2 s into a continuous flow" eval '
	xp_exec router "$DRIVE" "$XP_TMP/kill.json" --stop-after 3 >"$J" & DR=$!
	sleep 1.2; pkill -9 -P "$A1_PID"; kill -9 "$A1_PID"; wait $DR'
xp_check "port p1: its test failed, link down, no frames_tx" eval '
	[[ $(portm p1 .link) == down && $(portm p1 .location) == *"its test failed"* && $(portm p1 .frames_tx) == null &&
	   $(flowm f1 .frames_tx) == null ]] || { jq -c .port.port_metrics "$J"; false; }'
xp_check "nothing attached" nothing_attached
xp_check "nothing attached in $C2 either" xp_wait 8 "no XDP program left on xpc2" eval '! xdp_on "$C2"'
xp_pass

xp_case otg_agent_killed
# The receiving agent killed 1.5 s into a continuous flow: the test ends, the metrics say p2's agent went
# away (its port's location and link), and nothing stays attached anywhere.
hello_cfg '{"choice": "continuous", "continuous": {}}'
xp_exec client "$DRIVE" "$CFG" --timeout 20 >"$J" 2>"$XP_TMP/drive.err" &
DRV=$!
sleep 1.5
kill -9 "$SRV_PID"
xp_check "otgdrive returns once the test ended" wait "$DRV"
jq -c . "$J"
xp_check "flow stopped" expect_eq transmit "$(flowm f1 .transmit)" stopped
xp_check "frames were received before the kill" eval 'n=$(flowm f1 .frames_rx); ((n > 500))'
# Both counts are of one sample, read from the engine and the agent a few ms apart: 20 ms at 1000 frames/s.
xp_check "sent and received both up to the agent's last sample (within 20 frames)" eval \
	'tx=$(flowm f1 .frames_tx) rx=$(flowm f1 .frames_rx); ((tx - rx <= 20 && rx - tx <= 20))'
xp_check "p2's link is down" expect_eq link "$(portm p2 .link)" down
xp_check "p2's location says its agent went away" eval \
	'portm p2 .location | grep -E "^$XP_SERVER4 \(agent gone [0-9.]+ s into the test"'
xp_check "p1's link is up" expect_eq link "$(portm p1 .link)" up
xp_check "nothing attached" nothing_attached
xp_pass
