#!/usr/bin/env bash
# Issue 26, the route table: `scripts/lab.sh routes 1250` puts 1250 /29
# routes on the router (198.18.128.0/29 ... 198.18.167.8/29, toward the
# server; /29s because 198.18.0.0/15 holds only 512 /24s), and one flow of
# xdpperf's (AF_XDP engine) sends 10 000 frames at 5000/s, its destination
# incrementing by one over 198.18.128.0 ... 198.18.167.15: eight addresses
# in each route, all through the router, none of them the server's. The
# server's XDP program counts them by the test's stamp and tag alone ("only
# our frames are ours"): the same frames without stamps pass to the server's
# kernel, which drops them as not its own (nstat IpInAddrErrors). Checked
# against counters xdpperf did not write: a tshark capture of the router's
# egress to the server holds the 10 000 destinations in the declared order;
# the router's forwarded frames (its egress interface's tx_packets, and an
# nftables counter for the routes' prefix) equal xdpperf's frames_rx; no loss.
. "$(dirname "$0")/lib.sh"

ROUTES=1250
N=10000
PPS=5000 # tcpdump keeps up at this rate on a busy 2-core host (it must drop none)
FIRST=198.18.128.0
J=$XP_TMP/routes.json
FLOWS=$XP_TMP/routes_flow.json
CAP=$XP_TMP/routes.pcap

# flow_file STAMPS(true|false): one flow, the destination an increment over N addresses.
flow_file() {
	cat >"$FLOWS" <<JSON
{"flows": [{"name": "spread",
  "packet": [{"choice": "ethernet", "ethernet": {}},
             {"choice": "ipv4", "ipv4": {"dst": {"choice": "increment",
                 "increment": {"start": "$FIRST", "step": "0.0.0.1", "count": $N}}}},
             {"choice": "udp", "udp": {}}],
  "size": {"choice": "fixed", "fixed": 128},
  "rate": {"choice": "pps", "pps": $PPS},
  "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": $N}},
  "metrics": {"enable": $1}}]}
JSON
}
dev_stat() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# The router's forward-chain counter for the routes' prefix (nft's JSON).
nft_routed() {
	xp_exec router nft -j list table inet xproutes |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add'
}
in_addr_errors() { xp_exec server nstat -asz -j IpInAddrErrors | jq '.kernel.IpInAddrErrors'; }
flow() { jq -r ".end.flows[0] | $1" "$J"; }

# ---------------------------------------------------------------------------
xp_case routes_setup
xp_check "lab up" xp_lab_up
xp_check "routes: bad N refused" expect_rc 2 bash "$XP_LAB" routes 0
xp_check "routes $ROUTES" bash "$XP_LAB" routes "$ROUTES"
xp_check "$ROUTES routes on the router" expect_eq routes \
	"$(xp_exec router ip -j route show root 198.18.128.0/17 | jq length)" "$ROUTES"
xp_check "the last route" expect_eq last \
	"$(xp_exec router ip -j route get 198.18.167.15 | jq -r '.[0].gateway')" 198.19.1.2
xp_check "beyond the routes: none" expect_rc 0 bash -c \
	"! ip netns exec $(xp_ns router) ip route get 198.18.167.16 >/dev/null 2>&1"
xp_check "nft counter for the prefix" eval 'xp_exec router nft -f - <<<"
table inet xproutes {
	chain routed {
		type filter hook forward priority filter; policy accept;
		oifname \"$XP_ROUTER_SERVER_DEV\" ip daddr 198.18.128.0/17 counter
	}
}"'
xp_check "server" start_server
xp_pass

# ---------------------------------------------------------------------------
xp_case routes_spread_counted
flow_file true
xp_capture_bg router tcpdump -n -i "$XP_ROUTER_SERVER_DEV" -w "$CAP" -B 65536 --immediate-mode \
	udp and dst net 198.18.128.0/17
CAP_PID=$XP_BG_PID CAP_LOG=$XP_BG_LOG
TX0=$(dev_stat router "$XP_ROUTER_SERVER_DEV" tx_packets)
NFT0=$(nft_routed) ERR0=$(in_addr_errors)
xp_check "xdpperf: one flow over $N destinations" eval 'xp_exec client "$XP_BIN" -c "$XP_SERVER4" \
	--engine xsk --queues 1 -t 3 --flows "$FLOWS" -J >"$J"'
TX1=$(dev_stat router "$XP_ROUTER_SERVER_DEV" tx_packets)
NFT1=$(nft_routed) ERR1=$(in_addr_errors)
sleep 0.5
kill -INT "$CAP_PID"
wait "$CAP_PID" 2>/dev/null
cat "$CAP_LOG"
jq -c '.end.flows[0] | {name, frames_tx, frames_rx, frames_rx_all, duplicates, loss}' "$J"
echo "router $XP_ROUTER_SERVER_DEV tx +$((TX1 - TX0)); nft routed +$((NFT1 - NFT0)); server IpInAddrErrors +$((ERR1 - ERR0))"
xp_check "sent $N" expect_eq frames_tx "$(flow .frames_tx)" "$N"
xp_check "received all, loss 0" expect_eq frames_rx "$(flow .frames_rx)" "$N"
xp_check "loss 0" expect_eq loss "$(flow .loss)" 0
xp_check "no duplicates" expect_eq frames_rx_all "$(flow .frames_rx_all)" "$N"
xp_check "router forwarded = frames_rx (nft)" expect_eq routed "$((NFT1 - NFT0))" "$(flow .frames_rx)"
# The router's egress counter also has the control connection's segments to
# the server and the router's own (ICMPv6): at most a few dozen in 3 s.
xp_check "router egress >= frames_rx" expect_rc 0 test "$((TX1 - TX0))" -ge "$(flow .frames_rx)"
xp_check "router egress: frames_rx and the control's" expect_rc 0 test "$((TX1 - TX0))" -le "$(($(flow .frames_rx) + 100))"
xp_check "server's kernel got none of them" expect_eq in_addr_errors "$((ERR1 - ERR0))" 0
xp_check "tcpdump dropped none" grep -q '^0 packets dropped by kernel' "$CAP_LOG"
# The capture: every destination once, in the declared order (one thread:
# the flow's frames 0, 1, 2...), each inside one of the routes.
xp_check "capture: $N destinations in order" eval 'tshark -r "$CAP" -T fields -e ip.dst 2>/dev/null | python3 -c "
import ipaddress, sys
first = int(ipaddress.IPv4Address(\"$FIRST\"))
got = [int(ipaddress.IPv4Address(l.strip())) - first for l in sys.stdin if l.strip()]
wrong = [k for k, d in enumerate(got) if d != k]
routes = {d // 8 for d in got}
print(f\"captured {len(got)} frames, {len(set(got))} distinct destinations, {len(routes)} routes (/29s) hit, {len(got) - len(wrong)} at their place\")
sys.exit(0 if len(got) == $N and not wrong and len(routes) == $ROUTES else 1)
"'
xp_pass

# ---------------------------------------------------------------------------
# Only our frames are ours: the same flow without stamps is not the
# server's (none of its addresses, no stamp): its XDP program passes every
# frame to the kernel, which drops them as addressed elsewhere.
xp_case routes_unstamped_passed
flow_file false
NFT0=$(nft_routed) ERR0=$(in_addr_errors)
xp_check "xdpperf: the flow without stamps" eval 'xp_exec client "$XP_BIN" -c "$XP_SERVER4" \
	--engine xsk --queues 1 -t 3 --flows "$FLOWS" -J >"$J"'
NFT1=$(nft_routed) ERR1=$(in_addr_errors)
jq -c '.end.flows[0] | {name, frames_tx, counted, frames_rx, frames_rx_all}' "$J"
echo "nft routed +$((NFT1 - NFT0)); server IpInAddrErrors +$((ERR1 - ERR0)); server received $(jq '.end.sum.received.packets' "$J")"
xp_check "sent $N" expect_eq frames_tx "$(flow .frames_tx)" "$N"
xp_check "router forwarded them" expect_eq routed "$((NFT1 - NFT0))" "$N"
xp_check "server's program took none" expect_eq received "$(jq '.end.sum.received.packets' "$J")" 0
xp_check "server's kernel got every one" expect_eq in_addr_errors "$((ERR1 - ERR0))" "$N"
xp_check "routes off" bash "$XP_LAB" routes off
xp_check "no route left" expect_eq routes "$(xp_exec router ip -j route show root 198.18.128.0/17 | jq length)" 0
xp_pass
