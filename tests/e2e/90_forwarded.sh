#!/usr/bin/env bash
# Issue 28, point 1: the server takes only frames addressed to this host. In
# a lab of its own (xpt28f-c -> xpt28f-r -> xpt28f-s -> xpt28f-d, removed at
# exit) the server's namespace also routes to a fourth one, which runs an HTTP
# server on one of the test's ports (63005). While a TCP stream test runs from
# the client to the server on ports 63000-63015, the client's own host (its
# control connection's address: a source the test's slot owns) fetches pages
# from the fourth namespace on port 63005, through the server. The server's
# XDP program, attached to the interface those frames arrive on, must let
# them through: every fetch succeeds, the router forwarded exactly the
# frames the fourth namespace received (nft counters, which xdpperf did not
# write), the test counted exactly what its client sent, and the server's
# veth dropped exactly the test's frames (ethtool's xdp_drops), not one more.
# (Run against the program without the addressed-to-us rule: 15 of 20
# fetches answered, the router forwarded 110 frames, the fourth namespace
# received 105: the server had eaten the client's SYNs to it.)
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
NC=xpt28f-c NR=xpt28f-r NS=xpt28f-s ND=xpt28f-d
S4=198.19.28.2 D4=198.19.29.2 DPORT=63005
J=$XP_TMP/run.json

lab() {
	xp_routed_lab "$NC" "$NR" "$NS" 198.18.28 198.19.28 &&
		xp_netns_add "$ND" && netns_pair "$NS" s1 "$ND" d0 &&
		netns_addr "$NS" s1 198.19.29.1/24 && netns_addr "$ND" d0 "$D4/24" &&
		ip netns exec "$NS" sysctl -qw net.ipv4.ip_forward=1 &&
		ip -n "$ND" route add default via 198.19.29.1 &&
		ip -n "$NR" route add 198.19.29.0/24 via "$S4" &&
		ip netns exec "$NC" ping -c 1 -W 2 "$D4" >/dev/null
}
# nft counters of the client's frames to the fourth namespace's port: on the
# router (forward) and in the fourth namespace (input)
counters() {
	ip netns exec "$NR" nft -f - <<NFT &&
table inet xpt28f {
	chain xp_fwd {
		type filter hook forward priority 0; policy accept;
		ip daddr $D4 tcp dport $DPORT counter
	}
}
NFT
		ip netns exec "$ND" nft -f - <<NFT
table inet xpt28f {
	chain xp_in {
		type filter hook input priority 0; policy accept;
		ip daddr $D4 tcp dport $DPORT counter
	}
}
NFT
}
xdp_drops() { ip netns exec "$NS" ethtool -S s0 | awk '/xdp_drops:/{s+=$2} END{print s+0}'; }
# fetch N: N pages from the fourth namespace, from the client, each given 1 s
# (a dropped SYN would wait for its 1 s retransmission); prints how many
# answered 200
fetch() {
	local n=0
	for _ in $(seq "$1"); do
		ip netns exec "$NC" timeout 1 bash -c 'exec 3<>/dev/tcp/'"$D4/$DPORT"' &&
			printf "GET / HTTP/1.0\r\n\r\n" >&3 && head -1 <&3' 2>/dev/null | grep -q "200 OK" && n=$((n + 1))
		sleep 0.05
	done
	echo $n
}

# ---------------------------------------------------------------------------
xp_case forwarded_traffic_on_test_ports_flows
xp_check "lab up (server namespace forwards to a fourth)" lab
xp_check "nft counters" counters
xp_check "HTTP server on port $DPORT in the fourth namespace" \
	eval 'xp_run_bg "$ND" python3 -m http.server "$DPORT" --bind "$D4" && xp_wait_port "$ND" "$DPORT" 5'
xp_check "server" eval 'start_server_in "$NS" || { cat "$SRV_LOG"; false; }'
d0=$(xdp_drops)
xp_check "client: TCP stream test, ports 63000:63015, 5 s at 20 kpps" \
	eval 'xp_run_bg "$NC" bash -c "exec timeout 60 \"\$0\" --engine xsk -c $S4 -t 5 -b 20kpps --queues 1 -J >$J" "$BIN"; CLI=$XP_BG_PID'
xp_check "test started" wait_test_started 0
ok=$(fetch 20)
xp_check "the fetches were during the test (its client still runs)" kill -0 "$CLI"
xp_check "client done" eval 'wait "$CLI" || { cat "$XP_BG_LOG"; false; }'
d1=$(xdp_drops)
recv=$(jqv .end.sum.received.packets) sent=$(jqv .end.sum.sent.packets)
fwd=$(nft_counted "$NR" xpt28f) got=$(nft_counted "$ND" xpt28f)
echo "figures: $ok of 20 fetches answered through the server during the test; router forwarded $fwd frames" \
	"to $D4:$DPORT, the fourth namespace received $got; the client sent $sent test frames, the server counted" \
	"$recv, its veth dropped $((d1 - d0)) (ethtool xdp_drops)"
xp_check "the test counted frames" eval '((recv > 50000))'
xp_check "the test counted its own frames, none of the forwarded ones" expect_eq received "$recv" "$sent"
xp_check "every fetch through the server answered" expect_eq fetches "$ok" 20
xp_check "router forwarded frames to the fourth namespace" eval '((fwd >= 20 * 5))'
xp_check "the fourth namespace received every one" expect_eq "received in $ND" "$got" "$fwd"
xp_check "server XDP drops (ethtool) == the test's frames, none more" expect_eq "xdp_drops delta" "$((d1 - d0))" "$recv"
xp_pass
