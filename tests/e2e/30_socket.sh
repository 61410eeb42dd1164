#!/usr/bin/env bash
# End-to-end tests of xdpperf's socket mode (fireperf's flags: -P -x -k
# --bind --compare) in the lab: throughput and connection counts through the
# router cross-checked with the server's XDP counters and the kernel's own
# TCP counters (nstat), a conntrack table held full through the firewall,
# fireperf's own command lines, IPv6, source address ranges on the wire, the
# socket/xsk comparison, and faults (dropped SYNs, the server dying, bad -P).
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN

stop_server() {
	kill "$SRV_PID" 2>/dev/null
	wait "$SRV_PID" 2>/dev/null
	return 0
}
client() { xp_exec client "$BIN" "$@"; }
# sock NAME: .end.sum.sockets.NAME; xdp NAME: .end.sum.received.counters.NAME
sock() { jqv ".end.sum.sockets.$1"; }
xdp() { jqv ".end.sum.received.counters.$1"; }
# A kernel TCP counter (absolute value) in a namespace. -s: leave nstat's
# history file alone (it is per user, not per namespace).
nstat_of() { xp_exec "$1" nstat -asz "$2" | awk -v k="$2" '$1 == k {print $2}'; }
# The server veth's own counters (rx_packets, rx_bytes): written by the
# kernel, not by xdpperf.
srv_if() { xp_exec server cat "/sys/class/net/xps0/statistics/$1"; }
# The server kernel's IPv4 segment count: IpExtIn*Pkts count each segment of
# a GRO/GSO packet, as the TC counter that counts socket tests does (a veth's
# rx_packets and TcpInSegs count the GSO packet once).
srv_segs() { xp_exec server nstat -asz IpExtInNoECTPkts IpExtInECT1Pkts IpExtInECT0Pkts IpExtInCEPkts |
	awk '$1 !~ /^#/ {s += $2} END {printf "%.0f\n", s}'; }
# expect_gt WHAT GOT MIN: GOT > MIN (integers)
expect_gt() { (($2 > $3)) || { echo "$1: got $2, want > $3"; return 1; }; }
expect_ge() { (($2 >= $3)) || { echo "$1: got $2, want >= $3"; return 1; }; }
# wait_log FILE PATTERN [SECS]: until FILE has a line matching PATTERN
wait_log() {
	local t0=$SECONDS
	until grep -q "$2" "$1" 2>/dev/null; do
		((SECONDS - t0 < ${3:-5})) || { echo "no '$2' in $1 after ${3:-5}s"; cat "$1"; return 1; }
		sleep 0.05
	done
}
# One-line error with the given exit status: expect_msg RC PATTERN ARGS...
expect_msg() {
	local want=$1 pat=$2 out rc=0
	shift 2
	out=$(client "$@" 2>&1 >/dev/null) || rc=$?
	((rc == want)) || { echo "xdpperf $*: exit $rc, want $want: $out"; return 1; }
	[[ $(wc -l <<<"$out") -eq 1 && $out == xdpperf:*$pat* ]] || { echo "xdpperf $*: message '$out'"; return 1; }
	echo "xdpperf $*: exit $rc: $out"
}

# ---------------------------------------------------------------------------
xp_case stream_through_router
xp_check "lab up" xp_lab_up
# (--allow-bind: the client's --bind addresses, 198.18.1.10-25, are not its control connection's)
xp_check "server" start_server --allow-bind 198.18.1.0/24
rxp0=$(srv_if rx_packets); rxb0=$(srv_if rx_bytes); seg0=$(srv_segs)
xp_check "client -P 4 -t 3" eval 'client -c "$XP_SERVER4" -P 4 -t 3 -J >"$J"'
rxp=$(($(srv_if rx_packets) - rxp0)); rxb=$(($(srv_if rx_bytes) - rxb0)); segs=$(($(srv_segs) - seg0))
xp_check "socket engine, stream test" expect_eq test "$(jqv .start.engine)/$(jqv .start.test)" socket/stream
pay=$(sock payload_bytes)
# The payload on the wire by the server veth's counters: its bytes less 52
# header bytes per frame (IPv4 20, TCP 20 + 12 of timestamps; a veth counts
# from the IP header, the Ethernet header already pulled; a GSO packet's
# length has its headers once, so this holds per GSO packet too). Measured: the
# two agree to a few hundred bytes (the control connection's payload, SYN
# options); the tolerance is 0.1 % + 10 kB.
wire=$((rxb - 52 * rxp))
echo "payload $pay bytes, server read $(sock server_bytes_received), XDP data_bytes $(xdp data_bytes), XDP FINs $(xdp tcp_fin);" \
	"server veth: $rxp frames, $rxb bytes -> $wire payload bytes"
xp_check "over 100 MB sent" expect_gt payload_bytes "$pay" 100000000
xp_check "server read every byte the client wrote" expect_eq server_bytes_received "$(sock server_bytes_received)" "$pay"
xp_check "XDP data_bytes == the server veth's payload bytes +- 0.1 %" \
	expect_near data_bytes "$(xdp data_bytes)" "$wire" $((wire / 1000 + 10000))
xp_check "the server veth's payload bytes == the client's payload +- 1 % (retransmissions)" \
	expect_near "veth payload" "$wire" "$pay" $((pay / 100))
# Socket tests are counted by the TC program, a GSO packet as its segments:
# against the kernel's segment count (the control connection within 1 %).
xp_check "counted frames == the server kernel's IP segments +- 1 % (control connection)" \
	expect_near pkts "$(xdp pkts)" "$segs" $((segs / 100))
xp_check "4 connections, none lost" eval '[[ $(sock established)/$(sock server_accepted)/$(sock failed)/$(sock reset) == 4/4/0/0 ]] ||
	{ echo "established/accepted/failed/reset: $(sock established)/$(sock server_accepted)/$(sock failed)/$(sock reset)"; false; }'
xp_check "XDP saw 4 SYNs" expect_eq tcp_syn "$(xdp tcp_syn)" 4
xp_pass

# ---------------------------------------------------------------------------
xp_case connect_rate_vs_kernel
pas0=$(nstat_of server TcpPassiveOpens); act0=$(nstat_of client TcpActiveOpens)
ovf0=$(nstat_of server TcpExtListenOverflows); emb0=$(nstat_of server TcpExtEmbryonicRsts)
syr0=$(nstat_of client TcpExtTCPSynRetrans)
xp_check "client -P 64 -x -t 3" eval 'client -c "$XP_SERVER4" -P 64 -x -p 63000:63010 -t 3 -J >"$J"'
pas1=$(nstat_of server TcpPassiveOpens); act1=$(nstat_of client TcpActiveOpens)
ovf1=$(nstat_of server TcpExtListenOverflows); emb1=$(nstat_of server TcpExtEmbryonicRsts)
syr1=$(nstat_of client TcpExtTCPSynRetrans)
# SYNs the client's kernel sent: one per active open, plus retransmissions,
# less the control connection's (port 5301, not a test port).
syns=$((act1 - act0 + syr1 - syr0 - 1))
est=$(sock established); acc=$(sock server_accepted); ovf=$((ovf1 - ovf0)); emb=$((emb1 - emb0))
echo "established $est, accepted $acc, failed $(sock failed), timed_out $(sock timed_out), in flight $(sock in_flight_at_end)," \
	"listen overflows $(sock server_listen_overflows) (xdpperf) $ovf (nstat), embryonic resets $(sock server_embryonic_resets) (xdpperf) $emb (nstat)," \
	"TcpPassiveOpens +$((pas1 - pas0)) (server), TcpActiveOpens +$((act1 - act0)) (client), XDP SYN $(xdp tcp_syn)"
xp_check "connect test" expect_eq test "$(jqv .start.test)" connect
xp_check "over 10000 connections" expect_gt established "$est" 10000
# Issue 14: the two sides' counts agree or say why not. A handshake the
# server's full accept queue dropped is established for the client but never
# accepted: the kernel counts it as ListenOverflows, and so does xdpperf. So
# is one whose RST overtook its ACK (the client closes at once; on veth the two
# leave from different CPUs): the server's kernel resets it in SYN_RECV,
# EmbryonicRsts.
xp_check "xdpperf's server listen overflows == nstat's TcpExtListenOverflows" \
	expect_near listen_overflows "$(sock server_listen_overflows)" "$ovf" 2
xp_check "xdpperf's server embryonic resets == nstat's TcpExtEmbryonicRsts" \
	expect_near embryonic_resets "$(sock server_embryonic_resets)" "$emb" 2
xp_check "established == accepted + listen overflows + embryonic resets (nstat) +- 64" \
	expect_near established "$est" "$((acc + ovf + emb))" 64
# The control connection is one more passive/active open on each side.
xp_check "server kernel TcpPassiveOpens delta == accepted +- 64" expect_near "TcpPassiveOpens delta" "$((pas1 - pas0))" "$acc" 64
xp_check "client kernel TcpActiveOpens delta == attempts +- 64" expect_near "TcpActiveOpens delta" \
	"$((act1 - act0))" "$((est + $(sock failed) + $(sock timed_out) + $(sock in_flight_at_end)))" 64
xp_check "XDP SYNs == SYNs the client kernel sent (TcpActiveOpens + TCPSynRetrans) +- 0.1 %" \
	expect_near tcp_syn "$(xdp tcp_syn)" "$syns" $((syns / 1000 + 2))
xp_check "no errors" expect_eq "failed+reset+timed_out" "$(($(sock failed) + $(sock reset) + $(sock timed_out)))" 0
xp_pass

# ---------------------------------------------------------------------------
xp_case ipv6_connect
act0=$(nstat_of client TcpActiveOpens); syr0=$(nstat_of client TcpExtTCPSynRetrans)
ip40=$(nstat_of server IpInReceives); ip60=$(nstat_of server Ip6InReceives)
xp_check "client IPv6 -P 16 -x -t 2" eval 'client -c "$XP_SERVER6" -P 16 -x -t 2 -J >"$J"'
act1=$(nstat_of client TcpActiveOpens); syr1=$(nstat_of client TcpExtTCPSynRetrans)
ip41=$(nstat_of server IpInReceives); ip61=$(nstat_of server Ip6InReceives)
syns=$((act1 - act0 + syr1 - syr0 - 1)); ip6=$((ip61 - ip60))
echo "XDP: $(xdp pkts) frames, $(xdp ipv6_pkts) IPv6, $(xdp ipv4_pkts) IPv4, $(xdp tcp_syn) SYNs;" \
	"server kernel: +$((ip41 - ip40)) IPv4, +$ip6 IPv6 packets; client kernel SYNs $syns"
xp_check "IPv6" expect_eq ip_version "$(jqv .start.ip_version)" 6
xp_check "over 1000 connections" expect_gt established "$(sock established)" 1000
xp_check "XDP SYNs == SYNs the client kernel sent +- 0.1 %" expect_near tcp_syn "$(xdp tcp_syn)" "$syns" $((syns / 1000 + 2))
# Both family counters filled as they should be (a counter never written
# would pass a check for 0 alone), and the server's kernel saw no IPv4 at all.
xp_check "every XDP frame counted as IPv6" eval 'expect_gt pkts "$(xdp pkts)" 1000 && expect_eq ipv6_pkts "$(xdp ipv6_pkts)" "$(xdp pkts)" && expect_eq ipv4_pkts "$(xdp ipv4_pkts)" 0'
xp_check "the server kernel received no IPv4 (nstat IpInReceives)" expect_eq "IpInReceives delta" "$((ip41 - ip40))" 0
# The count-and-pass program passes every frame on: the kernel's IPv6 count
# is XDP's plus the control connection and neighbour discovery (<= 1 % + 50).
xp_check "server kernel Ip6InReceives == XDP IPv6 frames + control (<= 1 % + 50 more)" \
	eval 'expect_ge Ip6InReceives "$ip6" "$(xdp ipv6_pkts)" && expect_near Ip6InReceives "$ip6" "$(xdp ipv6_pkts)" $(($(xdp ipv6_pkts) / 100 + 50))'
xp_pass

# ---------------------------------------------------------------------------
xp_case bind_range
PC=$XP_TMP/syn.pcap
xp_check "capture 320 SYNs on the router" eval 'xp_run_bg router timeout 15 tcpdump -n -i xpr0 -c 320 -w "$PC" -U \
	"tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn and dst portrange 63000-63015"; CAP=$XP_BG_PID'
xp_check "tcpdump listening" wait_log "$XP_BG_LOG" "listening on"
xp_check "client --bind $XP_CLIENT4_RANGE -P 64 -x -t 2" \
	eval 'client -c "$XP_SERVER4" --bind "$XP_CLIENT4_RANGE" -P 64 -x -t 2 -J >"$J"'
xp_check "capture done" eval 'wait $CAP 2>/dev/null; [[ -s $PC ]]'
srcs() { tshark -r "$PC" -T fields -e ip.src 2>/dev/null | sort -u; }
xp_check "320 SYNs captured" expect_eq SYNs "$(tshark -r "$PC" -T fields -e ip.src 2>/dev/null | wc -l)" 320
xp_check "16 distinct source addresses" expect_eq "distinct sources" "$(srcs | wc -l)" 16
xp_check "all from 198.18.1.10-25" expect_eq sources "$(srcs | sort -t. -k4n | tr '\n' ' ')" \
	"$(for i in $(seq 10 25); do printf '198.18.1.%s ' "$i"; done)"
xp_check "connections made" expect_gt established "$(sock established)" 1000
xp_pass

# ---------------------------------------------------------------------------
xp_case compare_two_columns
rxp0=$(srv_if rx_packets); seg0=$(srv_segs); tin0=$(nstat_of server TcpInSegs)
xp_check "client -P 4 --compare -t 2 -J" eval 'client -c "$XP_SERVER4" -P 4 --compare -t 2 -J >"$J"'
rxp=$(($(srv_if rx_packets) - rxp0)); segs=$(($(srv_segs) - seg0)); tin=$(($(nstat_of server TcpInSegs) - tin0))
xp_check "both runs in the document" expect_eq engines "$(jqv '.socket.start.engine + "/" + .xsk.start.engine')" socket/xsk
xp_check "6 figures or more" expect_ge figures "$(jqv '.compare | length')" 6
xp_check "every figure: socket, xsk, ratio > 0" eval '
	bad=$(jq -r ".compare | to_entries[] | select([.value.socket, .value.xsk, .value.ratio] | map(type == \"number\" and . > 0) | all | not) | .key" "$J")
	[[ -z $bad ]] || { echo "figures without positive socket/xsk/ratio: $bad"; jq .compare "$J"; false; }'
# The frames both figures are made of, against the kernel's counts over both
# runs (the control connections' frames within 1 % + 100): the socket run's
# segments as the server's IP layer counted them (the TC counter counts a GSO
# packet as its segments), the xsk run's frames as what the veth received
# beyond the TCP packets that reached the stack (XDP drops them before it).
frames_want=$((segs + rxp - tin))
both=$(jqv '.socket.end.sum.received.packets + .xsk.end.sum.received.packets')
echo "veth rx_packets +$rxp, IP segments +$segs, TcpInSegs +$tin -> $frames_want"
xp_check "socket + xsk received frames == IP segments + (veth rx_packets - TcpInSegs) +- 1 %" \
	expect_near "received frames" "$both" "$frames_want" $((frames_want / 100 + 100))
xp_check "the frames/s figures are those frames over each run's time" eval '
	[[ $(jq "[(.compare.received_packets_per_second.socket - .socket.end.sum.received.packets_per_second),
		(.compare.received_packets_per_second.xsk - .xsk.end.sum.received.packets_per_second)] | map(fabs) | max < 1e-3" "$J") == true ]] ||
		{ jq .compare.received_packets_per_second "$J"; false; }'
xp_check "ratio == xsk / socket" eval '
	[[ $(jq "[.compare[] | (.ratio - .xsk / .socket) | fabs] | max < 1e-6" "$J") == true ]] || { jq .compare "$J"; false; }'
xp_check "text mode prints the side-by-side table" eval '
	client -c "$XP_SERVER4" -P 4 --compare -t 1 >"$XP_TMP/cmp.txt" && grep -q "xsk/socket" "$XP_TMP/cmp.txt" ||
		{ cat "$XP_TMP/cmp.txt"; false; }'
xp_pass

# ---------------------------------------------------------------------------
xp_case faults
xp_on_exit 'xp_exec router nft delete table inet xptest 2>/dev/null'
xp_check "router drops SYNs to port 63005" eval 'xp_exec router nft -f - <<-EOF
	table inet xptest {
		chain dropsyn {
			type filter hook forward priority -10; policy accept;
			tcp dport 63005 tcp flags & (syn | ack) == syn counter drop
		}
	}
	EOF'
# -t 4: a connect times out after 3 s, so the connects must start within the
# test's first second (a busy host may start 16 event loops late).
xp_check "-x -p 63005 -t 4 ends within 9 s" eval '
	s=$(date +%s%N); client -c "$XP_SERVER4" -P 16 -x -p 63005 -t 4 -J >"$J" 2>"$XP_TMP/d.err"; rc=$?; e=$(( ($(date +%s%N) - s) / 1000000 ))
	echo "exit $rc after $e ms"; (( e <= 9000 )) && (( rc == 1 ))'
xp_check "one-line reason: nothing could be established" eval '[[ $(wc -l <"$XP_TMP/d.err") == 1 ]] && grep -q "no connection could be established" "$XP_TMP/d.err"'
xp_check "nothing established" expect_eq established "$(sock established)" 0
xp_check "timed out reported" expect_gt timed_out "$(sock timed_out)" 0
xp_check "the router dropped the SYNs" eval '[[ $(xp_exec router nft list table inet xptest) =~ packets\ ([0-9]+) ]] && (( BASH_REMATCH[1] > 0 ))'
xp_check "rule removed" xp_exec router nft delete table inet xptest

xp_check "kill -9 the server during -P 16 -x -t 4" eval '
	n0=$(tests_started)
	xp_exec client "$BIN" -c "$XP_SERVER4" -P 16 -x -t 4 >"$XP_TMP/k.out" 2>"$XP_TMP/k.err" &
	A=$!; s=$(date +%s%N); wait_test_started $n0
	{ kill -9 $SRV_PID; wait $A; rc=$?; wait $SRV_PID; } 2>/dev/null; e=$(( ($(date +%s%N) - s) / 1000000 ))
	echo "exit $rc after $e ms: $(cat "$XP_TMP/k.err")"
	(( rc == 1 && e <= 9000 ))'
xp_check "one-line message about the server" eval '[[ $(wc -l <"$XP_TMP/k.err") == 1 ]] && grep -q "^xdpperf: .*server" "$XP_TMP/k.err"'
xp_check "server again" start_server
xp_check "-P 0: usage error" expect_msg 2 "-P" -c "$XP_SERVER4" -P 0 -t 1
xp_check "-x -k: usage error" expect_msg 2 "-k" -c "$XP_SERVER4" -x -k -t 1
xp_check "-P 5000000: open files" expect_msg 1 "open files" -c "$XP_SERVER4" -P 5000000 -t 1
xp_check "server still serves" eval 'client -c "$XP_SERVER4" -P 2 -x -t 1 -J >"$J" && (( $(sock established) > 0 ))'
xp_pass

# ---------------------------------------------------------------------------
xp_case fireperf_invocations_verbatim
xp_check "stop the server" stop_server
xp_check "fireperf-style server: xdpperf -s -P 10000 -p 63000:63010" start_server -P 10000 -p 63000:63010
xp_check "standing listeners on 63000 and 63010" eval 'xp_wait_port server 63000 2 && xp_wait_port server 63010 2'
for p in 1 1000 10000; do
	xp_check "xdpperf -c ADDR -P $p -x -p 63000:63010 -t 2" \
		eval 'client -c "$XP_SERVER4" -P '$p' -x -p 63000:63010 -t 2 -J >"$J" 2>"$XP_TMP/fp.err" || { cat "$XP_TMP/fp.err"; false; }'
	echo "-P $p: established $(sock established), accepted $(sock server_accepted), failed $(sock failed), reset $(sock reset), timed_out $(sock timed_out)"
	xp_check "-P $p: established > 0" expect_gt established "$(sock established)" 0
	xp_check "-P $p: no failures" expect_eq "failed+reset+timed_out" "$(($(sock failed) + $(sock reset) + $(sock timed_out)))" 0
	# (No accepted == established check here: with standing listeners the
	# connections still in the accept queues when the test stops are
	# established for the client but not yet accepted by the server.)
	xp_check "-P $p: the server accepted connections" expect_gt accepted "$(sock server_accepted)" 0
done
xp_pass

# ---------------------------------------------------------------------------
xp_case hold_through_firewall
N=5000
CS=$XP_TMP/hold.jsonl
xp_check "lab up --firewall" xp_lab_up --firewall
xp_check "server" start_server
xp_check "client -P $N -k -t 6 in the background" eval '
	xp_run_bg client "$BIN" -c "$XP_SERVER4" -P $N -k -t 6 --json-stream; HOLD=$XP_BG_PID; CS=$XP_BG_LOG'
# Until an interval reports all $N open (a condition; the deadline is the run).
all_open() { [[ $(jq -r 'select(.event == "interval") | .data.sockets.open' "$CS" 2>/dev/null | tail -n 1) == "$N" ]]; }
xp_check "client reports $N open" xp_wait 5 "an interval with $N open" all_open
# What the client said last and what the firewall holds, at the same moment.
open_c=$(jq -r 'select(.event == "interval") | .data.sockets.open' "$CS" 2>/dev/null | tail -n 1)
ct_all=$(xp_exec router conntrack -C)
ct_est=$(xp_exec router conntrack -L -p tcp --state ESTABLISHED 2>/dev/null | wc -l)
echo "held: client open ${open_c:-?}, conntrack -C $ct_all, ESTABLISHED tcp $ct_est"
xp_check "client reported intervals" eval '[[ $open_c =~ ^[0-9]+$ ]]'
xp_check "conntrack -C >= $N" expect_ge "conntrack -C" "$ct_all" "$N"
xp_check "conntrack ESTABLISHED >= $N" expect_ge "ESTABLISHED entries" "$ct_est" "$N"
# Held connections plus the control connection and the odd straggler.
xp_check "conntrack ESTABLISHED == client open (+ control)" expect_near "ESTABLISHED - client open" "$((ct_est - open_c))" 1 5
xp_check "client finished" eval 'wait $HOLD'
xp_check "end report" eval 'jq -c "select(.event == \"end\") | {end: .data}" "$CS" >"$J" && [[ -s $J ]]'
xp_check "$N open at most" expect_eq open "$(sock open)" "$N"
xp_check "$N established" expect_eq established "$(sock established)" "$N"
xp_check "0 errors" expect_eq "failed+reset+timed_out" "$(($(sock failed) + $(sock reset) + $(sock timed_out)))" 0
xp_check "server held $N" expect_eq server_open "$(sock server_open)" "$N"
xp_check "hold test" expect_eq test "$(jq -r 'select(.event == "start") | .data.test' "$CS")" hold
xp_pass
