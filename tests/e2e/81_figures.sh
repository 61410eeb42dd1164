#!/usr/bin/env bash
# Issue 14, in the lab: every figure says what it is, checked against counters
# xdpperf did not write (interface counters, ethtool's XDP drops, nft and
# conntrack counters, ss, trafgen's own count): --engine none reports only
# what it can; a server that vanishes costs no made-up loss; the offered load
# against its target, and who held it back; --max-loss and --require-rate
# exit statuses; hold tests' time to open all and how many lasted; byte
# counts in whole frames with their units; the server's room for
# connections; TCP stream frames through a stateful firewall vs -u.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN

client() { xp_exec client "$BIN" "$@"; }
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
xdp_drops() { xp_exec server ethtool -S "$XP_SERVER_DEV" | awk '/xdp_drops:/{s+=$2} END{print s+0}'; }
expect_ge() { (($2 >= $3)) || { echo "$1: $2 < $3"; return 1; }; }
expect_le() { (($2 <= $3)) || { echo "$1: $2 > $3"; return 1; }; }
within() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' || { echo "$1: $2 not in $3..$4"; return 1; }; }

# ---------------------------------------------------------------------------
xp_case none_reports_only_what_it_can
xp_check "lab up" xp_lab_up
xp_check "server" start_server
cat >"$XP_TMP/udp.cfg" <<CFG
{
  eth(da=$XP_CLIENT_GW_MAC, sa=$XP_CLIENT_MAC, type=0x0800),
  ipv4(saddr=$XP_CLIENT4, daddr=$XP_SERVER4, ttl=64, df),
  udp(sp=dinc(10000, 10015), dp=dinc(63000, 63015)),
  fill(0x00, 18)
}
CFG
d0=$(xdp_drops); f0=$(stat_of router "$XP_ROUTER_SERVER_DEV" tx_packets)
# The outside generator starts before the test and runs on after its end.
xp_check "trafgen at 20 kpps for 4 s, an --engine none test of 2 s in between" eval '
	xp_run_bg client trafgen -o "$XP_CLIENT_DEV" -i "$XP_TMP/udp.cfg" -b 20000pps -P 1 -n 80000 -Q; TG=$XP_BG_PID; TGLOG=$XP_BG_LOG
	xp_wait 10 "1000 trafgen frames forwarded by the router" eval "(( \$(stat_of router \"\$XP_ROUTER_SERVER_DEV\" tx_packets) > f0 + 1000 ))"
	client -c "$XP_SERVER4" -u --engine none -t 2 -J >"$J"; rc=$?
	wait $TG; (( rc == 0 ))'
d1=$(xdp_drops); f1=$(stat_of router "$XP_ROUTER_SERVER_DEV" tx_packets)
rx=$(jqv .end.sum.received.packets)
tg=$(tr -d '\r' <"$TGLOG" | awk '/packets outgoing/ {s += $1} END {print s + 0}')
echo "none: received $rx in the test's window; trafgen sent $tg, the router forwarded $((f1 - f0));" \
	"the server's XDP program (attached for the test) dropped $((d1 - d0))"
xp_check "no sent count, no loss in the report" jq -e '.end.sum | (has("sent") or has("lost_packets")) | not' "$J"
xp_check "no frame size claimed" expect_eq frame_size "$(jqv .start.frame_size)" 0
xp_check "the summary is the sum of the intervals (frames after the end not counted)" \
	expect_eq received "$rx" "$(jqv '[.intervals[].received.packets] | add')"
xp_check "its rate is no higher than every interval's" eval \
	'jq -e "(.end.sum.received.packets_per_second) <= ([.intervals[].received.packets_per_second] | max) * 1.001" "$J"'
# About 2 s of trafgen's 20 kpps, not its whole 80000: its pacing on a loaded
# host makes up lost time in bursts (45467 in one run), so 20 %, which still
# tells the test's window (40000) from the generator's run (80000).
xp_check "about 2 s of 20 kpps (not trafgen's whole 4 s)" expect_near received "$rx" 40000 8000
xp_check "trafgen sent all 80000" expect_eq trafgen "$tg" 80000
xp_check "the router forwarded all of them" expect_ge "router tx" "$((f1 - f0))" 80000
# Attached from the test's start to its stop, a few ms after the last sample.
xp_check "the server's XDP drops (ethtool) match the window" eval \
	'expect_ge "xdp drops" "$((d1 - d0))" "$rx" && expect_le "xdp drops" "$((d1 - d0))" "$((rx + 2000))"'
xp_check "text: says it sends nothing, no loss line" eval '
	xp_run_bg client trafgen -o "$XP_CLIENT_DEV" -i "$XP_TMP/udp.cfg" -b 5000pps -P 1 -n 10000 -Q; TG=$XP_BG_PID
	out=$(client -c "$XP_SERVER4" -u --engine none -t 1); wait $TG; echo "$out"
	[[ $out == *"this client sends nothing"* && $out != *Sending* && $out != *"Lost "* ]]'
xp_pass

# ---------------------------------------------------------------------------
xp_case server_vanishes_no_made_up_loss
r0=$(stat_of router "$XP_ROUTER_CLIENT_DEV" rx_packets); d0=$(xdp_drops)
xp_check "kill -9 the server 2.5 s into a 6 s test" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" --engine xsk --queues 1 -t 6 -b 20kpps -J >"$J" 2>"$XP_TMP/k.err" & A=$!
	# (sleep: the moment of the kill is the subject: 2 s after the test began in the server'"'"'s log)
	wait_test_started $n0; sleep 2; kill -9 $SRV_PID; wait $A; rc=$?; wait $SRV_PID 2>/dev/null; echo "exit $rc: $(cat "$XP_TMP/k.err")"; (( rc == 1 ))'
r1=$(stat_of router "$XP_ROUTER_CLIENT_DEV" rx_packets); d1=$(xdp_drops)
sent=$(jqv .end.sum.sent.packets); after=$(jqv .end.sent_after_server_lost)
echo "server lost at $(jqv .end.server_lost_at) s: sent $sent up to then, $after after, lost $(jqv .end.sum.lost_packets);" \
	"router rx +$((r1 - r0)), server XDP drops +$((d1 - d0))"
xp_check "the summary stops at the server's last sample" within server_lost_at "$(jqv .end.server_lost_at)" 1.5 3
xp_check "no loss made up from frames it could not count" expect_near lost "$(jqv .end.sum.lost_packets)" 0 100
xp_check "what was sent after is reported apart" eval '(( after > 0 ))'
xp_check "sent + sent after == what the router received (+ control)" expect_near "router rx" "$((r1 - r0))" "$((sent + after))" 200
xp_check "the server's XDP counted at least what the summary says it received" \
	expect_ge "xdp drops" "$((d1 - d0))" "$(jqv .end.sum.received.packets)"
xp_check "server again" start_server
xp_pass

# ---------------------------------------------------------------------------
xp_case target_not_reached_says_who
r0=$(stat_of router "$XP_ROUTER_CLIENT_DEV" rx_packets)
xp_check "-b 50Mpps, one thread" eval 'client -c "$XP_SERVER4" --queues 1 -t 2 -b 50Mpps -J >"$J"'
r1=$(stat_of router "$XP_ROUTER_CLIENT_DEV" rx_packets)
jq .end.offered_load "$J"
xp_check "short of the target, with who and why" eval '
	[[ $(jqv .end.offered_load.short_of_target) == true && $(jqv .end.offered_load.held_back_by) =~ ^(sender|path)$ &&
	   -n $(jqv .end.offered_load.why) ]]'
# Over the samples: what the engine had sent by the last one, over its time.
xp_check "reached == the engine's sent rate over the intervals" eval \
	'jq -e "(.end.offered_load.reached_packets_per_second / (([.intervals[].sent.packets] | add) / .intervals[-1].end) - 1) | fabs < 1e-6" "$J"'
xp_check "sent == the server's XDP count" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
xp_check "sent == the router's rx counter (+ control)" expect_near "router rx" "$((r1 - r0))" "$(jqv .end.sum.sent.packets)" 200
xp_check "per interval too: the sent rate in each" eval 'jq -e "[.intervals[].sent.packets_per_second] | all(. > 0)" "$J"'
xp_check "text: the warning is the summary's first line" eval '
	out=$(client -c "$XP_SERVER4" --queues 1 -t 1 -b 50Mpps); echo "$out"
	grep -A1 "^- - - -" <<<"$out" | tail -1 | grep -qE "^Warning: the offered load reached .* of the target 50.00 Mpps: held back by the (sender|path)"'
xp_check "a target within reach: no warning" eval '
	out=$(client -c "$XP_SERVER4" --queues 1 -t 2 -b 20kpps); ! grep -q Warning <<<"$out"'
xp_check "--require-rate: exit 4 when short, 0 when reached" eval '
	client -c "$XP_SERVER4" --queues 1 -t 1 -b 50Mpps --require-rate >/dev/null 2>"$XP_TMP/r.err"; rc=$?; cat "$XP_TMP/r.err"
	(( rc == 4 )) && grep -q -- "--require-rate" "$XP_TMP/r.err" &&
	client -c "$XP_SERVER4" --queues 1 -t 1 -b 20kpps --require-rate >/dev/null'
# A rate limiter in the path: tbf on the router's way out. The router's forwarding and the
# qdisc run on the sender's CPU (veth), so the sender falls short, held back by the path. What
# the qdisc does past its queue is not fixed: it pushed back with no loss on the machines of
# earlier CI runs, and on 6.18.44 it drops what exceeds its queue, in every xsk run here and in
# some live-engine runs (52_rate_contention). Either way the loss xdpperf reports must be the
# qdisc's own drop count, and sent = received + dropped.
xp_on_exit 'xp_exec router tc qdisc del dev "$XP_ROUTER_SERVER_DEV" root 2>/dev/null'
xp_check "tbf 30 Mbit/s on the router" xp_exec router tc qdisc add dev "$XP_ROUTER_SERVER_DEV" root tbf rate 30mbit burst 20kb latency 50ms
tbf_drops() { xp_exec router tc -s -j qdisc show dev "$XP_ROUTER_SERVER_DEV" root | jq '.[0].drops'; }
d0=$(tbf_drops)
xp_check "-b 200kpps through it: held back by the path" eval '
	client -c "$XP_SERVER4" --engine xsk --queues 1 -t 2 -b 200kpps -J >"$J"; jq .end.offered_load "$J"
	[[ $(jqv .end.offered_load.short_of_target) == true && $(jqv .end.offered_load.held_back_by) == path ]]'
d1=$(tbf_drops)
echo "    tbf dropped $((d1 - d0)); xdpperf: sent $(jqv .end.sum.sent.packets), received $(jqv .end.sum.received.packets), lost $(jqv .end.sum.lost_packets)"
xp_check "the loss reported is the tbf qdisc's own drop count" expect_near lost "$(jqv .end.sum.lost_packets)" "$((d1 - d0))" 5
xp_check "sent = received + what the qdisc dropped" expect_near sent "$(jqv .end.sum.sent.packets)" \
	"$(( $(jqv .end.sum.received.packets) + d1 - d0 ))" 5
xp_check "tbf removed" xp_exec router tc qdisc del dev "$XP_ROUTER_SERVER_DEV" root
xp_pass

# ---------------------------------------------------------------------------
xp_case max_loss_exit_status
xp_on_exit 'xp_exec router nft delete table inet xp81 2>/dev/null'
xp_check "router drops one test frame in ten" eval 'xp_exec router nft -f - <<-EOF
	table inet xp81 {
		chain forward_xp81 {
			type filter hook forward priority -10; policy accept;
			udp dport 63000-63015 numgen random mod 10 == 0 counter drop
		}
	}
	EOF'
xp_check "--max-loss 1: exit 3" eval '
	client -c "$XP_SERVER4" -u --queues 1 -t 2 -b 20kpps --max-loss 1 -J >"$J" 2>"$XP_TMP/l.err"; rc=$?; cat "$XP_TMP/l.err"
	(( rc == 3 )) && grep -q -- "more than --max-loss 1 %" "$XP_TMP/l.err"'
dropped=$(xp_exec router nft list table inet xp81 | grep -o 'packets [0-9]*' | awk '{print $2}')
echo "lost $(jqv .end.sum.lost_packets) ($(jqv .end.sum.loss_percent) %), the router's nft counter dropped $dropped"
xp_check "loss == the router's drop counter" expect_near lost "$(jqv .end.sum.lost_packets)" "$dropped" 2
xp_check "about 10 %" within loss_percent "$(jqv .end.sum.loss_percent)" 7 13
xp_check "--max-loss 50: exit 0" client -c "$XP_SERVER4" -u --queues 1 -t 1 -b 20kpps --max-loss 50
xp_check "rule removed" xp_exec router nft delete table inet xp81
xp_pass

# ---------------------------------------------------------------------------
xp_case hold_reports_time_to_open_and_what_lasted
xp_check "socket -k -P 2000 for 3 s; ss on the server at 2 s" eval '
	client -c "$XP_SERVER4" -k -P 2000 -t 3 -J >"$J" & A=$!; sleep 2
	SS=$(xp_exec server ss -Htn state established "( sport >= :63000 and sport <= :63015 )" | wc -l)
	wait $A'
jq .end.hold "$J"
xp_check "all 2000 open at once, in under 3 s" within seconds_to_open_all "$(jqv .end.hold.seconds_to_open_all)" 0.0001 2.9
xp_check "opening rate = 2000 / that time" eval \
	'jq -e "(.end.hold.opening_connections_per_second * .end.hold.seconds_to_open_all - 2000) | fabs < 1" "$J"'
xp_check "2000 still open at the end, client and server" eval \
	'[[ $(jqv .end.hold.open_at_end)/$(jqv .end.hold.server_open_at_end) == 2000/2000 ]]'
xp_check "the server's kernel held 2000 (ss)" expect_eq "ss established" "$SS" 2000
xp_check "no rate over the whole run" expect_eq connections_per_second "$(jqv .end.sum.sockets.connections_per_second)" null
xp_check "XDP engine -k -P 5000 at 5000 SYN/s" eval 'client -c "$XP_SERVER4" --engine xdp -k -P 5000 --cps 5000 -t 3 -J >"$J"'
jq .end.hold "$J"
xp_check "opened all in about 1 s" within seconds_to_open_all "$(jqv .end.hold.seconds_to_open_all)" 0.9 1.3
xp_check "5000 open at the end" expect_eq open_at_end "$(jqv .end.hold.open_at_end)" 5000
xp_check "the server's XDP completed 5000" expect_eq established "$(jqv .end.sum.connections.established)" 5000
xp_check "-k --compare compares the time to open all, not a rate over the run" eval '
	client -c "$XP_SERVER4" -k -P 500 -t 2 --compare -J >"$J"; jq .compare "$J"
	jq -e ".compare | (.seconds_to_open_all.socket > 0 and .seconds_to_open_all.xdp > 0 and
		.open_at_end.socket == 500 and .open_at_end.xdp == 500 and (has(\"connections_per_second\") | not))" "$J"'
xp_check "-x: no \"0 open at most\" for the client, the counts side by side" eval '
	out=$(client -c "$XP_SERVER4" -x -P 64 -t 1); echo "$out" | grep -E "^(Connections|  |Server|Counts)"
	! grep -A1 "^Connections" <<<"$out" | grep -q "open at most" && grep -q "in flight at the end" <<<"$out"'
xp_pass

# ---------------------------------------------------------------------------
xp_case bytes_in_whole_frames_with_units
xp_check "xsk, 100-byte frames, 50 kpps, 3 s" eval 'client -c "$XP_SERVER4" --engine xsk --queues 1 -l 100 -b 50kpps -t 3 -J >"$J"'
xp_check "every interval's bytes are 96 per frame (100 - FCS)" eval '
	jq -e "[.intervals[], .end.sum] | all(.sent.bytes == .sent.packets * 96 and .received.bytes == .received.packets * 96)" "$J" ||
	{ jq -c "[.intervals[] | {p: .sent.packets, b: .sent.bytes}]" "$J"; false; }'
xp_check "units say what bytes include" eval '[[ $(jqv .start.units.bytes) == *"without the 4-byte FCS"* ]]'
xp_check "and the server's own count agrees (ethtool XDP drops)" eval '
	d0=$(xdp_drops); client -c "$XP_SERVER4" --engine xsk --queues 1 -b 10kpps -t 1 -J >"$J"; d1=$(xdp_drops)
	expect_eq "xdp drops" "$((d1 - d0))" "$(jqv .end.sum.received.packets)"'
xp_pass

# ---------------------------------------------------------------------------
xp_case server_says_what_room_it_has
xp_check "stop the server" eval 'kill $SRV_PID; wait $SRV_PID 2>/dev/null; true'
xp_check "-s --engine socket" start_server --engine socket
xp_check "no 'up to 1 connections'" eval 'cat "$SRV_LOG"; grep -q "room for about [0-9]* connections" "$SRV_LOG" && ! grep -q "up to 1 " "$SRV_LOG"'
xp_check "and it takes more than 1" eval 'client -c "$XP_SERVER4" -P 50 -k -t 1 -J >"$J" && (( $(jqv .end.hold.server_open_at_end) == 50 ))'
xp_check "stop it" eval 'kill $SRV_PID; wait $SRV_PID 2>/dev/null; true'
xp_check "-s -P 10000 -p 63000:63010" start_server -P 10000 -p 63000:63010
xp_check "says what -P planned" eval 'cat "$SRV_LOG"; grep -q "planned for -P 10000 connections" "$SRV_LOG"'
xp_pass

# ---------------------------------------------------------------------------
xp_case stateful_firewall_tcp_frames_vs_udp
xp_check "lab up --firewall" xp_lab_up --firewall
xp_check "server" start_server
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "TCP stream, 10 kpps, 2 s: the header says what the frames are" eval '
	client -c "$XP_SERVER4" --queues 1 -b 10kpps -t 2 >"$XP_TMP/tcp.txt"; cat "$XP_TMP/tcp.txt"
	grep -q "connections never opened" "$XP_TMP/tcp.txt" && grep -q "use -u" "$XP_TMP/tcp.txt"'
sent=$(awk '/^Sent /{print $2}' "$XP_TMP/tcp.txt"); ct=$(xp_exec router conntrack -C)
echo "TCP: $sent frames sent, conntrack holds $ct entries"
xp_check "the firewall made a table entry per frame (why the header warns)" expect_ge "conntrack -C" "$ct" "$((sent * 9 / 10))"
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "-u with 16 source ports: every frame arrives" eval '
	client -c "$XP_SERVER4" -u --cport 10000:10015 --queues 1 -b 10kpps -t 2 -J >"$J"
	expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"'
ct=$(xp_exec router conntrack -C)
echo "UDP: $(jqv .end.sum.sent.packets) frames, conntrack holds $ct entries"
xp_check "and the table holds only its 256 flows (+ control)" expect_le "conntrack -C" "$ct" 266
xp_check "no TCP note for UDP" eval '! client -c "$XP_SERVER4" -u --cport 10000:10015 --queues 1 -b 1kpps -t 1 | grep -q "never opened"'
xp_check "flush conntrack" xp_exec router conntrack -F
r0=$(stat_of router "$XP_ROUTER_CLIENT_DEV" rx_packets)
xp_check "a target above what the firewall forwards: short, and the path held it back" eval '
	client -c "$XP_SERVER4" -u --cport 10000:10015 --queues 1 -b 5Mpps -t 2 -J >"$J"; jq .end.offered_load "$J"
	[[ $(jqv .end.offered_load.short_of_target) == true && $(jqv .end.offered_load.held_back_by) == path ]]'
r1=$(stat_of router "$XP_ROUTER_CLIENT_DEV" rx_packets)
xp_check "what it reached is what the firewall took in (router rx counter)" \
	expect_near "router rx" "$((r1 - r0))" "$(jqv .end.sum.sent.packets)" 200
xp_pass
