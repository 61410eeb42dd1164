#!/usr/bin/env bash
# `make demo`: bring up the netns lab (client -> router -> server), start an
# xdpperf server in the server namespace, run the main tests from the client
# namespace through the router, print the results, and tear everything down.
# Every claim the demo itself prints (0 loss at 100 kpps, where frames were
# kept back, how the two connection engines compare, what the firewall held)
# is checked in the same run by counters xdpperf does not write: the
# interfaces' counters, the router's nft counters, conntrack, /proc/stat.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=scripts/lab.sh
BIN=$PWD/xdpperf
SRV_PID=""
OUT=$(mktemp /tmp/xdpperf-demo.XXXXXX)   # each run's output, for the checks after it
cleanup() {
	[[ -n $SRV_PID ]] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	bash "$LAB" down >/dev/null 2>&1 || true
	rm -f "$OUT"
}
trap cleanup EXIT INT TERM

[[ -x $BIN ]] || { echo "demo: build first (make)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "demo: run as root (it creates network namespaces)" >&2; exit 1; }

echo "== Lab: client -> router -> server (network namespaces, veth pairs, 2 queues)"
bash "$LAB" up --queues 2 >/dev/null
eval "$(bash "$LAB" env)"
bash "$LAB" status
echo

# shellcheck source=tests/lib/server.sh
. tests/lib/server.sh
start_server() {
	local rc=0
	# --allow-bind: the -k demo's --bind addresses are not its control connection's
	xp_server_start "$XP_SERVER_NS" "$BIN" /tmp/xdpperf-demo-server.log --allow-bind 198.18.1.0/24 || rc=$?
	SRV_PID=$XP_SERVER_PID
	((rc == 0)) || { echo "demo: the server did not start" >&2; exit 1; }
}
: >/tmp/xdpperf-demo-server.log
start_server

run() {
	echo "== $1"
	shift
	echo "\$ ip netns exec $XP_CLIENT_NS xdpperf $*"
	ip netns exec "$XP_CLIENT_NS" "$BIN" "$@" | tee "$OUT"
	echo
}
# The demo's own lines, wrapped for a terminal.
say() { echo "$*" | fold -s -w 118; }
# A figure of the run's own summary (its text output): own LABEL FIELD,
# e.g. own Sent 2 for "Sent   300120 frames ...".
own() { awk -v l="$1" -v f="$2" '$1 == l && $2 ~ /^[0-9]+$/ {v = $f} END {print v + 0}' "$OUT"; }

# What the demo's claims are checked against: counters neither end of the
# test writes. The interfaces' own counters, read in their namespaces:
ifstat() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# router in (rx_packets, rx_dropped of the router's client-side veth), router
# out (tx_packets, tx_dropped of its server-side veth), server in
# (rx_packets, rx_dropped of the server's veth).
path_counts() {
	echo "$(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_CLIENT_DEV" rx_packets) $(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_CLIENT_DEV" rx_dropped)" \
		"$(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_SERVER_DEV" tx_packets) $(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_SERVER_DEV" tx_dropped)" \
		"$(ifstat "$XP_SERVER_NS" "$XP_SERVER_DEV" rx_packets) $(ifstat "$XP_SERVER_NS" "$XP_SERVER_DEV" rx_dropped)"
}
# And the router's netfilter counters, in a table of the demo's own
# (xpdemo, forward hook), loaded only around the runs it checks: the test's
# frames it forwarded to the server's test ports, and the client's pure ACKs
# to them (the handshakes' third packet, one per connection for both
# connection engines: the socket engine's from the kernel's ephemeral ports,
# set to 60000-65535 below, the XDP engine's from its --cport range,
# 10000-59999 by default).
nft_counters_add() {
	ip netns exec "$XP_ROUTER_NS" nft -f - <<-EOF
	table inet xpdemo {
		counter test_frames { }
		counter acks_socket { }
		counter acks_xdp { }
		chain forward_count {
			type filter hook forward priority 10; policy accept;
			iifname "$XP_ROUTER_CLIENT_DEV" tcp dport 63000-63015 counter name test_frames
			iifname "$XP_ROUTER_CLIENT_DEV" tcp dport 63000-63015 tcp flags & (syn | ack | fin | rst) == ack tcp sport 60000-65535 counter name acks_socket
			iifname "$XP_ROUTER_CLIENT_DEV" tcp dport 63000-63015 tcp flags & (syn | ack | fin | rst) == ack tcp sport 10000-59999 counter name acks_xdp
		}
	}
	EOF
}
nft_counters_del() { ip netns exec "$XP_ROUTER_NS" nft delete table inet xpdemo; }
nft_count() { ip netns exec "$XP_ROUTER_NS" nft -j list counter inet xpdemo "$1" | jq -e '.nftables[] | select(.counter) | .counter.packets'; }
# The machine's CPU time, busy and total, in /proc/stat ticks.
cpu_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }
pct() { awk -v k="$1" -v n="$2" 'BEGIN {printf "%.2f", n ? 100 * k / n : 0}'; }

nft_counters_add
read -r a_in a_drop a_out a_odrop a_srv a_sdrop < <(path_counts)
run "64-byte TCP frames at 100 kpps for 3 s through the router (0 loss expected: checked below by the router's and the server's counters)" \
	-c "$XP_SERVER4" -t 3 -b 100kpps --queues 1
read -r b_in b_drop b_out b_odrop b_srv b_sdrop < <(path_counts)
fwd=$(nft_count test_frames)
nft_counters_del
sent=$(own Sent 2)
dropped=$((b_drop - a_drop + b_odrop - a_odrop + b_sdrop - a_sdrop))
say "counted by the router and the server's interface (not by xdpperf): the router's nft counter: $fwd of the test's frames" \
	"forwarded (100 kpps for 3 s is 300000); dropped by the interfaces on the way: $dropped ($XP_ROUTER_CLIENT_DEV rx_dropped," \
	"$XP_ROUTER_SERVER_DEV tx_dropped, $XP_SERVER_DEV rx_dropped); the server's $XP_SERVER_DEV received $((b_srv - a_srv)) frames" \
	"(the test's and $((b_srv - a_srv - fwd)) of the control connection and neighbour discovery)"
if ((fwd == sent && dropped == 0 && b_srv - a_srv >= fwd)); then
	say "-> measured: 0 lost. All $sent frames xdpperf sent crossed the router, and no interface after it dropped one"
else
	say "-> measured: NOT 0 loss. xdpperf sent $sent, the router forwarded $fwd, the interfaces dropped $dropped"
fi
echo

read -r a_in a_drop a_out a_odrop a_srv a_sdrop < <(path_counts)
read -r c0 t0 < <(cpu_ticks)
run "64-byte TCP frames as fast as XDP live frames send them, 2 threads" -c "$XP_SERVER4" -t 3
read -r c1 t1 < <(cpu_ticks)
read -r b_in b_drop b_out b_odrop b_srv b_sdrop < <(path_counts)
say "interface counters during that run: router in $((b_in - a_in)) (dropped on arrival $((b_drop - a_drop)), $XP_ROUTER_CLIENT_DEV)," \
	"router out $((b_out - a_out)) (dropped on the way out $((b_odrop - a_odrop)), $XP_ROUTER_SERVER_DEV)," \
	"server in $((b_srv - a_srv)) (dropped $((b_sdrop - a_sdrop)), $XP_SERVER_DEV)"
# Frames that reached the router and did not leave it (its own few, ARP and
# neighbour discovery, are in this count too).
reached=$((b_in - a_in + b_drop - a_drop)) left=$((b_out - a_out))
say "-> the router passed on $left of the $reached frames that reached it: $((reached - left)) kept back" \
	"($(pct $((reached - left)) "$reached") %; xdpperf's own count of lost frames: $(own Lost 2))"
say "-> the machine's $(nproc) CPUs were $(pct $((c1 - c0)) $((t1 - t0))) % busy during the run (/proc/stat): on veth the router" \
	"forwards on the sending CPU, so the client's threads and the router share these cores"
echo
run "The same from AF_XDP sockets" -c "$XP_SERVER4" -t 3 --engine xsk
run "1518-byte TCP frames, as fast as possible" -c "$XP_SERVER4" -t 3 -l 1518
run "IPv6: 78-byte frames (the IPv6/TCP minimum) at 200 kpps" -c "$XP_SERVER6" -t 3 -l 78 -b 200kpps
echo "== UDP, 64-byte frames, JSON stream output (one object per line; cut at 160 characters here)"
echo "\$ ip netns exec $XP_CLIENT_NS xdpperf -c $XP_SERVER4 -t 2 -u -b 50kpps --json-stream"
ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t 2 -u -b 50kpps --json-stream | cut -c 1-160
echo

# The socket engine's connections from ports the XDP engine does not use, so
# that the router's counters tell the two apart.
ip netns exec "$XP_CLIENT_NS" sysctl -qw net.ipv4.ip_local_port_range="60000 65535"
nft_counters_add
run "Connections per second through the router: kernel sockets (fireperf's -x) vs the XDP connection engine, 3 s each" \
	-c "$XP_SERVER4" -x -P 64 -t 3 --compare
hs_sock=$(nft_count acks_socket) hs_xdp=$(nft_count acks_xdp)
nft_counters_del
say "counted by the router (not by xdpperf): its nft counters of the client's handshake-completing ACKs, one per connection:" \
	"socket $hs_sock, xdp $hs_xdp in 3 s each: xdp/socket $(awk -v x="$hs_xdp" -v s="$hs_sock" 'BEGIN {printf "%.2fx", s ? x / s : 0}')" \
	"(xdpperf's own counts above: socket $(awk '$1 == "Connections" && $3 == "established" {print $2}' "$OUT") established," \
	"xdp $(awk '$1 == "Connections" && $3 == "completed" {print $2}' "$OUT") completed)"
echo

# The hold test needs a router that tracks connections: the lab again with --firewall.
kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null || true
SRV_PID=""
bash "$LAB" up --firewall --queues 2 >/dev/null
eval "$(bash "$LAB" env)"
start_server
ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1 || true
# The firewall's own count of completed handshakes: pure ACKs of connections
# that conntrack tracks as established (as the bench's xconn section counts).
ip netns exec "$XP_ROUTER_NS" nft -f - <<-EOF
table inet xpdemo {
	counter handshakes { }
	chain forward_count {
		type filter hook forward priority 10; policy accept;
		ct direction original ct state established tcp flags & (syn | ack | fin | rst) == ack counter name handshakes
	}
}
EOF
echo "== Hold 20000 connections with the XDP connection engine through the firewall (lab.sh up --firewall: nftables, conntrack), reset at the end"
echo "\$ ip netns exec $XP_CLIENT_NS xdpperf -c $XP_SERVER4 --engine xdp -k -P 20000 -t 3 --bind $XP_CLIENT4_RANGE"
read -r a_in a_drop a_out a_odrop a_srv a_sdrop < <(path_counts)
ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" --engine xdp -k -P 20000 -t 3 --bind "$XP_CLIENT4_RANGE" >"$OUT" &
cpid=$!
# The firewall's table while the connections are held: its size every 0.2 s
# (sampling, not waiting: the loop ends when the client does), the largest kept.
ct_max=0
while kill -0 "$cpid" 2>/dev/null; do
	n=$(ip netns exec "$XP_ROUTER_NS" conntrack -C)
	((n > ct_max)) && ct_max=$n
	sleep 0.2
done
wait "$cpid" || { cat "$OUT"; echo "demo: the hold test failed" >&2; exit 1; }
cat "$OUT"
read -r b_in b_drop b_out b_odrop b_srv b_sdrop < <(path_counts)
hs_fw=$(nft_count handshakes)
say "counted by the firewall (not by xdpperf): its conntrack table held up to $ct_max entries during the test" \
	"(conntrack -C every 0.2 s; the control connection is one of them), after it $(ip netns exec "$XP_ROUTER_NS" conntrack -C)," \
	"$(ip netns exec "$XP_ROUTER_NS" conntrack -L -p tcp --state CLOSE 2>/dev/null | wc -l) of them CLOSE (reset at the end);" \
	"its nft counter saw $hs_fw handshake ACKs of tracked connections (a connection whose SYN went out again can send two)"
say "where frames were lost: the router forwarded $hs_fw handshake ACKs, the server counted" \
	"$(awk '$1 == "Connections" && $3 == "completed" {print $2}' "$OUT") connections completed; drops by the interfaces:" \
	"$XP_ROUTER_CLIENT_DEV rx_dropped $((b_drop - a_drop)), $XP_ROUTER_SERVER_DEV (towards the server) tx_dropped $((b_odrop - a_odrop))," \
	"$XP_SERVER_DEV rx_dropped $((b_sdrop - a_sdrop))"
echo

echo "== Server log"
cat /tmp/xdpperf-demo-server.log
