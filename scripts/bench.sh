#!/usr/bin/env bash
# Benchmarks (not tests): side-by-side figures from one run on this machine.
#
#   scripts/bench.sh [-t SECS] [xsk]
#
# xsk: xdpperf's AF_XDP engine vs trafgen (netsniff-ng) with the same 64-byte
#      TCP frames, direct and routed, 1 and 2 queues. Both are measured by the
#      same yardstick: the server's XDP counters (received) and the sender's
#      own count (sent). Targets: xdpperf >= 1.0x trafgen with one queue, and
#      2 queues >= 1.8x one queue on the direct pair.
set -euo pipefail
cd "$(dirname "$0")/.."

T=5
while getopts "t:" o; do
	case $o in
	t) T=$OPTARG ;;
	*) echo "usage: $0 [-t SECS] [xsk]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
WHAT=${1:-all}

LAB=scripts/lab.sh
BIN=$PWD/xdpperf
TMP=$(mktemp -d /tmp/xdpperf-bench.XXXXXX)
SRV=""
cleanup() {
	[[ -n $SRV ]] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	bash "$LAB" down >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[[ $(id -u) -eq 0 ]] || { echo "bench: run as root" >&2; exit 1; }
[[ -x $BIN ]] || { echo "bench: build first (make)" >&2; exit 1; }

start_server() {
	ip netns exec "$XP_SERVER_NS" "$BIN" -s >"$TMP/server.log" 2>&1 &
	SRV=$!
	for _ in $(seq 50); do
		ip netns exec "$XP_SERVER_NS" bash -c "exec 3<>/dev/tcp/127.0.0.1/5301" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "bench: server did not start" >&2
	exit 1
}
stop_server() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null || true; SRV=""; }

# Median of the full intervals' received pps in an xdpperf -J document, skipping
# the first and last interval (generator start-up and shutdown).
median_rx() {
	jq '[.intervals[1:-1][] | .received.packets_per_second] | sort | if length == 0 then 0 else .[(length/2|floor)] end' "$1"
}

# xdpperf AF_XDP engine: prints "sent_pps received_pps"
run_xsk() { # QUEUES
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t "$T" --queues "$1" -J >"$TMP/x.json"
	jq -r '"\(.end.sum.sent.packets_per_second) \(.end.sum.received.packets_per_second)"' "$TMP/x.json"
}

# trafgen with the same frame: 64 bytes on the wire, TCP ACK|PSH, 6 payload bytes,
# ports spread like xdpperf's. Prints "sent_pps received_pps".
run_trafgen() { # CPUS
	cat >"$TMP/t.cfg" <<-CFG
	{
	  eth(da=$XP_CLIENT_GW_MAC, sa=$XP_CLIENT_MAC, type=0x0800),
	  ipv4(saddr=$XP_CLIENT4, daddr=$XP_SERVER4, ttl=64, df),
	  tcp(sp=dinc(10000, 59999), dp=dinc(63000, 63015), seq=1, aseq=1, ack, psh, win=65535),
	  fill(0x00, 6)
	}
	CFG
	# xdpperf's receive-only engine has the server count while trafgen sends.
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 2)) --engine none -J >"$TMP/n.json" &
	local cnt=$!
	sleep 1
	ip netns exec "$XP_CLIENT_NS" timeout -s INT "$T" trafgen -o "$XP_CLIENT_DEV" -i "$TMP/t.cfg" \
		-P "$1" -Q >"$TMP/tg.txt" 2>&1 || true
	wait "$cnt"
	local sent
	sent=$(tr -d '\r' <"$TMP/tg.txt" | awk '/packets outgoing/ {s += $1} END {print s + 0}')
	echo "$(echo "$sent / $T" | bc -l) $(median_rx "$TMP/n.json")"
}

fmt() { printf "%8.3f Mpps" "$(echo "$1 / 1000000" | bc -l)"; }
ratio() { printf "%5.2fx" "$(echo "$1 / $2" | bc -l)"; }

bench_xsk() {
	echo "== AF_XDP engine vs trafgen, 64-byte TCP frames, ${T} s per run"
	printf "%-8s %-7s %-22s %-22s %s\n" topology queues "xdpperf sent/recv" "trafgen sent/recv" "xdpperf/trafgen (recv)"
	declare -gA R
	for topo in direct routed; do
		if [[ $topo == direct ]]; then bash "$LAB" up --direct --queues 2 >/dev/null
		else bash "$LAB" up --queues 2 >/dev/null; fi
		eval "$(bash "$LAB" env)"
		start_server
		for q in 1 2; do
			read -r xs xr < <(run_xsk "$q")
			read -r ts tr < <(run_trafgen "$q")
			R[$topo,$q,x]=$xr
			R[$topo,$q,t]=$tr
			printf "%-8s %-7s %s/%s %s/%s   %s\n" "$topo" "$q" "$(fmt "$xs")" "$(fmt "$xr")" \
				"$(fmt "$ts")" "$(fmt "$tr")" "$(ratio "$xr" "$tr")"
		done
		stop_server
	done
	echo
	echo "xdpperf vs trafgen, 1 queue, direct:  $(ratio "${R[direct,1,x]}" "${R[direct,1,t]}")  (target >= 1.0x)"
	echo "xdpperf vs trafgen, 1 queue, routed:  $(ratio "${R[routed,1,x]}" "${R[routed,1,t]}")"
	echo "xdpperf 2 queues vs 1 queue, direct:  $(ratio "${R[direct,2,x]}" "${R[direct,1,x]}")  (target >= 1.8x)"
	echo
}

case $WHAT in
xsk | all) bench_xsk ;;
*) echo "bench: unknown benchmark '$WHAT' (xsk)" >&2; exit 2 ;;
esac
