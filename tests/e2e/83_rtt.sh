#!/usr/bin/env bash
# Issue 10, the round-trip mode (--rtt) in a lab of its own (xpt10r-c ->
# xpt10r-r -> xpt10r-s, removed at exit): the server's XDP program sends each
# stamped frame back, the client's round-trip program times and drops it.
# Checked against the router's kernel: it forwards every frame both ways
# (nstat IpForwDatagrams), and frames it drops on the way BACK (an nft rule
# on the stamp's sequence numbers of frames from the server's test ports)
# are exactly the loss xdpperf reports (nft's counter); the report says
# "round trip"; nothing stays attached to the client's interface; --rtt is
# refused where it cannot work. For the live and the xsk engine.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
NC=xpt10r-c NR=xpt10r-r NS=xpt10r-s
S4=198.19.12.2
J=$XP_TMP/run.json

# frames XDP transmits into r0 (the client's) and r1 (the server's reflections) need GRO there
lab() { xp_routed_lab --gro "r0 r1" "$NC" "$NR" "$NS" 198.18.12 198.19.12; }
server() { start_server_in "$NS" || { cat "$SRV_LOG"; return 1; }; }
client() { ip netns exec "$NC" timeout 60 "$BIN" "$@"; }
forwarded() { ip netns exec "$NR" nstat -as IpForwDatagrams | awk '/IpForwDatagrams/ {print $2}'; }
nft_drops() { nft_counted "$NR" xpt10r; }
# 400 of stream 0's reflections dropped on their way back (from the server's test ports).
drop_rule() {
	ip netns exec "$NR" nft delete table inet xpt10r 2>/dev/null
	ip netns exec "$NR" nft -f - <<'NFT'
table inet xpt10r {
	chain drops {
		type filter hook forward priority 0; policy accept;
		# UDP payload byte 0: the stamp's stream, bytes 1-3 its sequence number (bpf/lib/stamp.h)
		udp sport 63000-63015 @th,64,8 0 @th,72,24 20000-20399 counter drop
	}
}
NFT
}
xp_on_exit "ip netns exec $NR nft delete table inet xpt10r 2>/dev/null"

rtt_run() { # ENGINE
	local f0 f1 sent
	drop_rule || return 1
	f0=$(forwarded)
	client -c "$S4" --engine "$1" -u -l 128 -b 20kpps -t 3 --rtt -J >"$J" || { cat "$J"; return 1; }
	f1=$(forwarded)
	sent=$(jq '.end.sum.measurement.sent' "$J")
	echo "engine $1: sent $sent, lost $(jq '.end.sum.measurement.lost' "$J") (nft dropped $(nft_drops) on the way back)," \
		"router forwarded $((f1 - f0)), round trip p50 $(jq '.end.sum.measurement.latency.p50_ns' "$J") ns" \
		"p99 $(jq '.end.sum.measurement.latency.p99_ns' "$J") ns"
	jq -e '.start.stamps.round_trip == true and .start.stamps.oneway == false and
		.end.sum.measurement.round_trip == true' "$J" >/dev/null || { echo "not reported as round trip"; return 1; }
	expect_eq "loss = the router's drops of returning frames" "$(jq '.end.sum.measurement.lost' "$J")" "$(nft_drops)" &&
		expect_eq "drops" "$(nft_drops)" 400 &&
		expect_eq "every frame that came back timed" "$(jq '.end.sum.measurement.latency.timed' "$J")" \
			"$(jq '.end.sum.measurement.received' "$J")" || return 1
	# Both ways through the router: the frames out, the reflections back, and a few
	# control segments. (This kernel counts ForwDatagrams before the forward hook:
	# the 400 nft drops are in it; measured 2 x sent + 38.)
	(( f1 - f0 >= 2 * sent && f1 - f0 <= 2 * sent + 300 )) ||
		{ echo "router forwarded $((f1 - f0)), want 2 x $sent (+ control)"; return 1; }
	[[ -z $(ip -n "$NC" -d link show c0 | grep -o 'prog/xdp') ]] || { echo "XDP left on c0"; return 1; }
}

xp_case rtt_lab
xp_check "private lab xpt10r-*" lab
xp_check "server" server
xp_pass

for eng in live xsk; do
	xp_case "rtt_${eng}_loss_and_router_counts"
	xp_check "--rtt: loss = nft drops on the way back, every frame forwarded both ways" rtt_run "$eng"
	xp_pass
done

xp_case rtt_text_says_round_trip
xp_check "text report" eval '
	out=$(client -c "$S4" -u -l 128 -b 5kpps -t 1 --rtt 2>&1); rc=$?; echo "$out"
	((rc == 0)) && [[ $out == *"round-trip latency"* && $out == *"Latency   round trip"* && $out != *"one way"* ]]'
xp_pass

xp_case rtt_refused_where_it_cannot_work
xp_check "--rtt with the socket engine: exit 2" eval '
	out=$(client -c "$S4" --engine socket -t 1 --rtt 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"--rtt"* ]]'
xp_pass
