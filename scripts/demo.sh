#!/usr/bin/env bash
# `make demo`: bring up the netns lab (client -> router -> server), start an
# xdpperf server in the server namespace, run the main tests from the client
# namespace through the router, print the results, and tear everything down.
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=scripts/lab.sh
BIN=$PWD/xdpperf
SRV_PID=""
cleanup() {
	[[ -n $SRV_PID ]] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	bash "$LAB" down >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

[[ -x $BIN ]] || { echo "demo: build first (make)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "demo: run as root (it creates network namespaces)" >&2; exit 1; }

echo "== Lab: client -> router -> server (network namespaces, veth pairs, 2 queues)"
bash "$LAB" up --queues 2 >/dev/null
eval "$(bash "$LAB" env)"
bash "$LAB" status
echo

start_server() {
	ip netns exec "$XP_SERVER_NS" "$BIN" -s >>/tmp/xdpperf-demo-server.log 2>&1 &
	SRV_PID=$!
	for _ in $(seq 50); do
		ip netns exec "$XP_SERVER_NS" bash -c "exec 3<>/dev/tcp/127.0.0.1/5301" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "demo: the server did not start: $(tail -n 3 /tmp/xdpperf-demo-server.log)" >&2
	exit 1
}
: >/tmp/xdpperf-demo-server.log
start_server

run() {
	echo "== $1"
	shift
	echo "\$ ip netns exec $XP_CLIENT_NS xdpperf $*"
	ip netns exec "$XP_CLIENT_NS" "$BIN" "$@"
	echo
}

run "64-byte TCP frames at an exact 100 kpps through the router (expect 0 loss)" \
	-c "$XP_SERVER4" -t 3 -b 100kpps --queues 1
# Where the frames stop, by the interfaces' own counters (read in their namespaces).
ifstat() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
router_counts() {
	echo "$(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_CLIENT_DEV" rx_packets) $(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_CLIENT_DEV" rx_dropped)" \
		"$(ifstat "$XP_ROUTER_NS" "$XP_ROUTER_SERVER_DEV" tx_packets) $(ifstat "$XP_SERVER_NS" "$XP_SERVER_DEV" rx_packets)"
}
read -r a_in a_drop a_out a_srv < <(router_counts)
run "64-byte TCP frames as fast as XDP live frames send them, 2 threads" -c "$XP_SERVER4" -t 3
read -r b_in b_drop b_out b_srv < <(router_counts)
echo "interface counters during that run: router in $((b_in - a_in)) (dropped on arrival $((b_drop - a_drop))," \
	"$XP_ROUTER_CLIENT_DEV), router out $((b_out - a_out)) ($XP_ROUTER_SERVER_DEV), server in $((b_srv - a_srv)) ($XP_SERVER_DEV)"
# Frames that reached the router and did not leave it (its own few, ARP and
# neighbour discovery, are in this count too). Only a loss above 1 % there is
# called the router's limit.
reached=$((b_in - a_in + b_drop - a_drop)) left=$((b_out - a_out))
if ((reached > 0 && (reached - left) * 100 > reached)); then
	echo "-> the router passed on $left of the $reached frames that reached it: in this run it is the limit"
else
	echo "-> the router passed on $left of the $reached frames that reached it: less than 1 % kept back, so its" \
		"drops are not what limited this run (on veth it forwards on the sender's CPU: see the run's own diagnosis)"
fi
echo
run "The same from AF_XDP sockets" -c "$XP_SERVER4" -t 3 --engine xsk
run "1518-byte TCP frames, as fast as possible" -c "$XP_SERVER4" -t 3 -l 1518
run "IPv6: 78-byte frames (the IPv6/TCP minimum) at 200 kpps" -c "$XP_SERVER6" -t 3 -l 78 -b 200kpps
run "UDP, 64-byte frames, JSON stream output (one object per line)" \
	-c "$XP_SERVER4" -t 2 -u -b 50kpps --json-stream
run "Connections per second through the router: kernel sockets (fireperf's -x) vs the XDP connection engine" \
	-c "$XP_SERVER4" -x -P 64 -t 3 --compare
# The conntrack-table test needs a router that tracks connections: the lab again with --firewall.
kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null || true
SRV_PID=""
bash "$LAB" up --firewall --queues 2 >/dev/null
eval "$(bash "$LAB" env)"
start_server
ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1 || true
run "Hold 20000 connections with the XDP connection engine through the firewall (lab.sh up --firewall): a conntrack-table test, reset at the end" \
	-c "$XP_SERVER4" --engine xdp -k -P 20000 -t 3 --bind "$XP_CLIENT4_RANGE"
echo "the firewall's conntrack table after the test: $(ip netns exec "$XP_ROUTER_NS" conntrack -C) entries" \
	"($(ip netns exec "$XP_ROUTER_NS" conntrack -L -p tcp --state CLOSE 2>/dev/null | wc -l) in CLOSE: the held connections, reset at the end)"
echo

echo "== Server log"
cat /tmp/xdpperf-demo-server.log
