#!/usr/bin/env bash
# Benchmarks (not tests): side-by-side figures from one run on this machine.
#
#   scripts/bench.sh [-t SECS] [xsk|live|socket|xconn|stamp|all]      (default all)
#
# stamp:  the cost of the stamp (bpf/lib/stamp.h) and its send-interval bins:
#         maximum pps of the live engine (and, beside it, the AF_XDP engine)
#         with stamps on vs the same build with them off (ival 0), 64-byte
#         IPv4/TCP frames (stamp in the IPv4 ID + payload), one thread,
#         direct pair, driven by build/tests/tools/stampgen. Yardstick: the
#         server veth's rx_packets; $BENCH_ROUNDS rounds of on/off/off/on
#         (order swapped each round), min/median/max per side and of the
#         rounds' ratios. Target: on >= 0.9x off (median of the rounds).
#
# xconn:  connections/s of -x -P 64, the XDP connection engine vs the socket
#         engine, direct and through the --firewall router; machine CPU and
#         conntrack entries created per second during the XDP run.
#         Targets: >= 20x direct, >= 3x through the firewall.
# live:   the XDP live-frames engine vs the AF_XDP engine vs trafgen, 64-byte
#         frames, one thread each, direct and routed; live with 2 threads; and
#         rate control: the worst 1-second interval at 10 kpps, 100 kpps,
#         1 Mpps and 50 % of the live maximum. Targets: live >= 6x trafgen
#         direct, >= 2.5x routed; every interval within 2 % of the target.
# xsk:    xdpperf's AF_XDP engine vs trafgen (netsniff-ng) with the same 64-byte
#         TCP frames, direct and routed, 1 and 2 queues. Both are measured by the
#         same yardstick: the server's XDP counters (received) and the sender's
#         own count (sent). Targets: xdpperf >= 1.0x trafgen with one queue, and
#         2 queues >= 1.8x one queue on the direct pair.
# socket: xdpperf's socket engine (fireperf's flags) on the routed lab, each
#         figure next to what a plain tool does on the same path:
#         stream -P 4 payload bit/s vs iperf3 -P 4 (target >= 0.95x);
#         -x -P 64 connections/s vs tests/tools/connloop -P 64, a blocking
#         socket/connect/close loop per thread, closing with a reset and
#         pinned like xdpperf (-R -a; target >= 1.0x) and, beside it, with a
#         plain close; and memory
#         per held connection (-k -P $BENCH_HOLD, default 20000): RSS of every
#         xdpperf process on each side (workers included) and the kernel's
#         Slab growth, per connection. iperf3 (3.12, single-threaded) runs
#         one client/server pair per core, pinned (-A), the 4 streams split
#         between them. Every figure comes from one yardstick neither tool
#         wrote (server veth rx_bytes, nstat TcpPassiveOpens); the runs
#         alternate $BENCH_ROUNDS times (default 3, order swapped each round)
#         with min/median/max per side. Nothing of xdpperf is on a
#         baseline's path; iperf3 is shown a second time with xdpperf's XDP
#         observer attached, the path xdpperf's own stream test takes. A
#         failed run stops the bench with its error.
set -euo pipefail
cd "$(dirname "$0")/.."

T=5
while getopts "t:" o; do
	case $o in
	t) T=$OPTARG ;;
	*) echo "usage: $0 [-t SECS] [xsk|socket|all]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
WHAT=${1:-all}

LAB=scripts/lab.sh
BIN=$PWD/xdpperf
TMP=$(mktemp -d /tmp/xdpperf-bench.XXXXXX)
SRV=""
BG=()   # other background pids (iperf3 server, clients), stopped on exit
cleanup() {
	[[ -n $SRV ]] && kill "$SRV" 2>/dev/null && wait "$SRV" 2>/dev/null
	((${#BG[@]})) && kill "${BG[@]}" 2>/dev/null && wait "${BG[@]}" 2>/dev/null
	bash "$LAB" down >/dev/null 2>&1 || true
	rm -rf "$TMP"
}
trap cleanup EXIT INT TERM
[[ $(id -u) -eq 0 ]] || { echo "bench: run as root" >&2; exit 1; }
[[ -x $BIN ]] || { echo "bench: build first (make)" >&2; exit 1; }

start_server() { # [SERVER OPTIONS...]
	ip netns exec "$XP_SERVER_NS" "$BIN" -s "$@" >"$TMP/server.log" 2>&1 &
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

# An xdpperf frame engine: prints "sent_pps received_pps"
run_engine() { # ENGINE QUEUES [OPTIONS...]
	local eng=$1 q=$2
	shift 2
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t "$T" --engine "$eng" --queues "$q" "$@" -J >"$TMP/x.json"
	jq -r '"\(.end.sum.sent.packets_per_second) \(.end.sum.received.packets_per_second)"' "$TMP/x.json"
}
run_xsk() { run_engine xsk "$1"; }

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
		-P "$1" -Q >"$TMP/tg.txt" 2>&1 || { local rc=$?; ((rc == 124)) || die "trafgen (exit $rc)" "$TMP/tg.txt"; }
	wait "$cnt" || die "xdpperf --engine none (counting for trafgen)" "$TMP/n.json"
	local sent
	sent=$(tr -d '\r' <"$TMP/tg.txt" | awk '/packets outgoing/ {s += $1} END {print s + 0}')
	((sent > 0)) || die "trafgen (no packets outgoing)" "$TMP/tg.txt"
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

# ---------------------------------------------------------------- socket ----
HOLD_N=${BENCH_HOLD:-20000}
ROUNDS=${BENCH_ROUNDS:-3}
CONNLOOP=build/tests/tools/connloop   # built by make (tests/tools/connloop.c)

wait_listen() { # NS PORT
	for _ in $(seq 50); do
		[[ -n $(ip netns exec "$1" ss -Hltn "sport = :$2") ]] && return 0
		sleep 0.1
	done
	echo "bench: nothing listens on port $2 in $1" >&2
	exit 1
}

# An idle one-connection xdpperf test (port 64000) in the background keeps the
# server's count-and-pass XDP program attached: used only for the "with
# xdpperf's observer" column, never for a baseline's own figure.
PIN=""
xdp_on() {
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -P 1 -k -p 64000 -t 600 >"$TMP/pin.log" 2>&1 &
	PIN=$!
	BG+=("$PIN")
	for _ in $(seq 50); do
		ip netns exec "$XP_SERVER_NS" ip -o link show "$XP_SERVER_DEV" | grep -q " xdp" && return 0
		sleep 0.1
	done
	echo "bench: the server's XDP program did not attach: $(cat "$TMP/pin.log")" >&2
	exit 1
}
xdp_off() { kill -INT "$PIN" 2>/dev/null; wait "$PIN" 2>/dev/null || true; PIN=""; }
no_xdp() { # a baseline must find nothing of xdpperf on the server's interface
	if ip netns exec "$XP_SERVER_NS" ip -o link show "$XP_SERVER_DEV" | grep -qE " xdp(generic|drv)? "; then
		echo "bench: an XDP program is attached to $XP_SERVER_DEV before a baseline run" >&2
		exit 1
	fi
}
# die WHAT FILE: a failed run stops the bench with its own error, never a 0.
die() { echo "bench: $1 failed: $(tail -n 3 "$2" 2>/dev/null | tr '\n' ' ')" >&2; exit 1; }

# The one yardstick for every socket figure, written by neither tool: the
# server veth's rx_bytes (bit/s on the wire into the server, headers
# included) and the server namespace's TcpPassiveOpens (nstat: connections
# the server's kernel completed), each over the run's -t seconds.
srv_rx_bytes() { ip netns exec "$XP_SERVER_NS" cat "/sys/class/net/$XP_SERVER_DEV/statistics/rx_bytes"; }
srv_opens() { ip netns exec "$XP_SERVER_NS" nstat -asz TcpPassiveOpens | awk '/TcpPassiveOpens/ {print $2}'; }
# measure KIND CMD...: run CMD, print the yardstick's rate over $T seconds
measure() {
	local kind=$1 a b
	shift
	if [[ $kind == bps ]]; then a=$(srv_rx_bytes); else a=$(srv_opens); fi
	"$@"
	if [[ $kind == bps ]]; then b=$(srv_rx_bytes); echo "($b - $a) * 8 / $T" | bc -l
	else b=$(srv_opens); echo "($b - $a) / $T" | bc -l; fi
}

run_sock_stream() {
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -P 4 -t "$T" -J >"$TMP/ss.json" 2>"$TMP/ss.err" ||
		die "xdpperf -P 4" "$TMP/ss.err"
}
# iperf3 3.12 runs -P in one thread: a user who wants the cores runs one
# iperf3 pair per core (-A pins it), the 4 streams split between them.
run_iperf3() {
	local n i pids=() srvs=()
	n=$(nproc)
	((n > 4)) && n=4
	for ((i = 0; i < n; i++)); do
		ip netns exec "$XP_SERVER_NS" iperf3 -s -1 -p $((5201 + i)) -A "$i" >"$TMP/iperf3-s$i.log" 2>&1 &
		srvs+=($!)
		BG+=($!)
	done
	for ((i = 0; i < n; i++)); do wait_listen "$XP_SERVER_NS" $((5201 + i)); done
	for ((i = 0; i < n; i++)); do
		ip netns exec "$XP_CLIENT_NS" iperf3 -c "$XP_SERVER4" -p $((5201 + i)) -A "$i" -P $((4 / n)) -t "$T" \
			-J >"$TMP/i$i.json" 2>"$TMP/i$i.err" &
		pids+=($!)
	done
	for ((i = 0; i < n; i++)); do
		if ! wait "${pids[$i]}"; then
			jq -r '.error // empty' "$TMP/i$i.json" >>"$TMP/i$i.err" 2>/dev/null
			kill "${srvs[@]}" 2>/dev/null
			die "iperf3 -p $((5201 + i))" "$TMP/i$i.err"
		fi
	done
	for p in "${srvs[@]}"; do wait "$p" 2>/dev/null || true; done
}
run_sock_connect() {
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -P 64 -x -t "$T" -J >"$TMP/sx.json" 2>"$TMP/sx.err" ||
		die "xdpperf -x -P 64" "$TMP/sx.err"
}
# connloop closing like xdpperf (-R: SO_LINGER 0 reset) and pinned like it (-a)
run_connloop() {
	ip netns exec "$XP_CLIENT_NS" "$CONNLOOP" "$@" -P 64 -t "$T" "$XP_SERVER4" >"$TMP/cl.txt" 2>"$TMP/cl.err" ||
		die "connloop $*" "$TMP/cl.err"
	# Some failed connects in a run that worked are the loop's own behaviour
	# (reported, not hidden); a run with none established exits 1 above.
	[[ -s $TMP/cl.err ]] && echo "note: connloop $*: $(cat "$TMP/cl.err")" >&2
	return 0
}

# min/median/max of numbers (one per line on stdin) as "min median max"
mmm() { sort -g | awk '{v[NR] = $1} END {print v[1], v[int((NR + 1) / 2)], v[NR]}'; }

# Memory: a process tree's summed VmRSS (kB); the kernel's Slab (kB).
tree_pids() { # PID: it and all its descendants
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree_pids "$c"; done
}
tree_rss() { # PID -> "kB processes"
	local p v s=0 n=0
	for p in $(tree_pids "$1"); do
		v=$(awk '/^VmRSS:/ {print $2}' /proc/"$p"/status 2>/dev/null) || continue
		[[ -n $v ]] || continue
		s=$((s + v)) n=$((n + 1))
	done
	echo "$s $n"
}
slab_kb() { awk '/^Slab:/ {print $2}' /proc/meminfo; }
# Wait until a --json-stream client's last interval shows WANT open on both
# sides (or it ends); prints the open count reached.
wait_open() { # JSONL PID WANT SECS
	local t0=$SECONDS o=0
	while kill -0 "$2" 2>/dev/null && ((SECONDS - t0 < $4)); do
		o=$(jq -r 'select(.event == "interval") | .data.sockets | [.open, .server_open] | min' "$1" 2>/dev/null | tail -n 1)
		o=${o:-0}
		((o >= $3)) && break
		sleep 0.2
	done
	echo "$o"
}

mib() { printf "%9.1f MiB" "$(echo "$1 / 1024" | bc -l)"; }
per_conn() { printf "%7.0f B" "$(echo "$1 * 1024 / $2" | bc -l)"; }
fmt_bps() { printf "%8.2f Gbit/s" "$(echo "$1 / 1000000000" | bc -l)"; }
fmt_cps() { printf "%8.2f kconn/s" "$(echo "$1 / 1000" | bc -l)"; }
max() { if (($(echo "$1 > $2" | bc -l))); then echo "$1"; else echo "$2"; fi; }

bench_hold() {
	local n=$HOLD_N ht=$((T + 5 + HOLD_N / 10000))
	bash "$LAB" up >/dev/null
	eval "$(bash "$LAB" env)"
	start_server
	sleep 0.5
	local slab0 srv0 srvn0 cli0 clin0
	slab0=$(slab_kb)
	read -r srv0 srvn0 < <(tree_rss "$SRV")
	# The client before: the same hold test with one connection.
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -P 1 -k -t 2 --json-stream >"$TMP/h1.jsonl" 2>&1 &
	local c1=$!
	BG+=("$c1")
	wait_open "$TMP/h1.jsonl" "$c1" 1 5 >/dev/null
	read -r cli0 clin0 < <(tree_rss "$c1")
	wait "$c1" || true

	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -P "$n" -k -t "$ht" --json-stream \
		>"$TMP/hold.jsonl" 2>"$TMP/hold.err" &
	local hp=$!
	BG+=("$hp")
	local open
	open=$(wait_open "$TMP/hold.jsonl" "$hp" "$n" "$ht")
	sleep 0.5
	local slab1 srv1 srvn1 cli1 clin1
	slab1=$(slab_kb)
	read -r srv1 srvn1 < <(tree_rss "$SRV")
	read -r cli1 clin1 < <(tree_rss "$hp")
	wait "$hp" || echo "bench: hold client: $(cat "$TMP/hold.err")" >&2
	stop_server
	if ((open < n)); then
		echo "note: only $open of $n connections were open at once; figures are per open connection"
		((open > 0)) || { echo "bench: no connection held" >&2; return 0; }
		n=$open
	fi

	echo "== Memory per held connection: -k -P $n, routed (RSS = sum of VmRSS over the xdpperf processes)"
	printf "%-20s %13s %13s %11s\n" "" before holding "per conn"
	printf "%-20s %s %s   %s  (%s -> %s processes)\n" "client userspace" "$(mib "$cli0")" "$(mib "$cli1")" \
		"$(per_conn $((cli1 - cli0)) "$n")" "$clin0" "$clin1"
	printf "%-20s %s %s   %s  (%s -> %s processes)\n" "server userspace" "$(mib "$srv0")" "$(mib "$srv1")" \
		"$(per_conn $((srv1 - srv0)) "$n")" "$srvn0" "$srvn1"
	printf "%-20s %s %s   %s  (Slab in /proc/meminfo, client + server sockets)\n" "kernel, both sides" \
		"$(mib "$slab0")" "$(mib "$slab1")" "$(per_conn $((slab1 - slab0)) "$n")"
	echo
}

bench_socket() {
	[[ -x $CONNLOOP ]] || { echo "bench: build first (make): $CONNLOOP is missing" >&2; exit 1; }
	echo "== Socket engine vs plain socket tools, routed, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick for every figure: the server veth's rx_bytes (bit/s on the wire) and the server's"
	echo "   TcpPassiveOpens (nstat), neither written by the tools; baselines run with no XDP anywhere"
	printf "%-6s %-17s %-17s %-17s | %-15s %-15s %-15s\n" round "xdpperf -P 4" "iperf3 4 streams" "iperf3+observer" \
		"xdpperf -x" "connloop -R -a" "connloop plain"
	local r
	: >"$TMP/r.txt"
	for ((r = 1; r <= ROUNDS; r++)); do
		# A fresh lab each round: connloop's plain close leaves TIME_WAIT behind.
		bash "$LAB" up >/dev/null
		eval "$(bash "$LAB" env)"
		local xs is io xc cr cp
		# Standing listeners (fireperf style): xdpperf's runs and connloop
		# connect to them. Between tests they are plain epoll listeners with
		# no XDP attached (no_xdp checks), so they are the baseline's server too.
		start_server -P 64 -p 63000:63015
		baselines() {
			no_xdp; is=$(measure bps run_iperf3)
			no_xdp; cr=$(measure cps run_connloop -R -a)
			no_xdp; cp=$(measure cps run_connloop)
		}
		# The baselines first on odd rounds, xdpperf first on even ones.
		# (if, not &&: errexit must stop the bench inside baselines)
		if ((r % 2)); then baselines; fi
		xs=$(measure bps run_sock_stream)
		xc=$(measure cps run_sock_connect)
		if ! ((r % 2)); then baselines; fi
		# The observer column: iperf3 again with xdpperf's count-and-pass XDP
		# program on the server's interface, as xdpperf's socket tests run.
		xdp_on; io=$(measure bps run_iperf3); xdp_off
		stop_server
		echo "$xs $is $io $xc $cr $cp" >>"$TMP/r.txt"
		printf "%-6s %-17s %-17s %-17s | %-15s %-15s %-15s\n" "$r" "$(fmt_bps "$xs")" "$(fmt_bps "$is")" "$(fmt_bps "$io")" \
			"$(fmt_cps "$xc")" "$(fmt_cps "$cr")" "$(fmt_cps "$cp")"
	done
	local col name k
	declare -gA S
	for k in 1 2 3 4 5 6; do
		read -r S[$k,min] S[$k,med] S[$k,max] < <(awk -v k=$k '{print $k}' "$TMP/r.txt" | mmm)
	done
	for col in min med max; do
		printf "%-6s %-17s %-17s %-17s | %-15s %-15s %-15s\n" "$col" "$(fmt_bps "${S[1,$col]}")" "$(fmt_bps "${S[2,$col]}")" \
			"$(fmt_bps "${S[3,$col]}")" "$(fmt_cps "${S[4,$col]}")" "$(fmt_cps "${S[5,$col]}")" "$(fmt_cps "${S[6,$col]}")"
	done
	echo
	bench_hold
	echo "ratios of the medians (min-max of the per-side ranges in brackets: worst/best pairing):"
	echo "xdpperf vs iperf3, stream 4 streams (wire bit/s):          $(ratio "${S[1,med]}" "${S[2,med]}")  [$(ratio "${S[1,min]}" "${S[2,max]}") - $(ratio "${S[1,max]}" "${S[2,min]}")]  (target >= 0.95x)"
	echo "xdpperf vs iperf3 with xdpperf's XDP observer on its path: $(ratio "${S[1,med]}" "${S[3,med]}")"
	echo "xdpperf vs connloop -R -a, -x -P 64 (TcpPassiveOpens/s):   $(ratio "${S[4,med]}" "${S[5,med]}")  [$(ratio "${S[4,min]}" "${S[5,max]}") - $(ratio "${S[4,max]}" "${S[5,min]}")]  (target >= 1.0x)"
	echo "xdpperf vs connloop with a plain close (TIME_WAIT):         $(ratio "${S[4,med]}" "${S[6,med]}")"
	echo
}

# ------------------------------------------------------------------ live ----
# Worst deviation (%) of a full 1-second interval's received rate from TARGET in the last -J run.
worst_dev() {
	jq --argjson t "$1" '[.intervals[] | select(.seconds > 0.9) | ((.received.packets_per_second - $t) / $t * 100) | fabs] | max' "$TMP/x.json"
}

bench_live() {
	echo "== Live frames vs AF_XDP vs trafgen, 64-byte TCP frames, one thread/queue, ${T} s per run"
	printf "%-8s %-24s %-24s %-24s %s\n" topology "live sent/recv" "xsk sent/recv" "trafgen sent/recv" "live/trafgen (recv)"
	declare -gA L
	for topo in direct routed; do
		if [[ $topo == direct ]]; then bash "$LAB" up --direct --queues 2 >/dev/null
		else bash "$LAB" up --queues 2 >/dev/null; fi
		eval "$(bash "$LAB" env)"
		start_server
		read -r ls lr < <(run_engine live 1)
		read -r xs xr < <(run_engine xsk 1)
		read -r ts tr < <(run_trafgen 1)
		L[$topo,live]=$lr
		L[$topo,xsk]=$xr
		L[$topo,tg]=$tr
		printf "%-8s %s/%s %s/%s %s/%s  %s\n" "$topo" "$(fmt "$ls")" "$(fmt "$lr")" "$(fmt "$xs")" "$(fmt "$xr")" \
			"$(fmt "$ts")" "$(fmt "$tr")" "$(ratio "$lr" "$tr")"
		if [[ $topo == direct ]]; then
			read -r _ L[direct,live2] < <(run_engine live 2)
			echo "direct   live with 2 threads on 2 queues: $(fmt "${L[direct,live2]}")"
			echo
			echo "== Rate control, direct, live engine (and xsk where it reaches): worst 1-second interval"
			printf "%-14s %-12s %-12s\n" target live xsk
			local half
			half=$(printf "%.0f" "$(echo "${L[direct,live]} / 2" | bc -l)")
			for target in 10000 100000 1000000 "$half"; do
				run_engine live 1 -b "${target}pps" >/dev/null
				local dl dx="-"
				dl=$(worst_dev "$target")
				if (($(echo "$target < ${L[direct,xsk]} * 0.9" | bc -l))); then
					run_engine xsk 1 -b "${target}pps" >/dev/null
					dx=$(printf "%.3f %%" "$(worst_dev "$target")")
				fi
				printf "%-14s %-12s %-12s\n" "$(fmt "$target")" "$(printf "%.3f %%" "$dl")" "$dx"
			done
			echo "(target: within 2 %; $half pps is 50 % of the live engine's one-thread maximum)"
			echo
		fi
		stop_server
	done
	echo "live vs trafgen, direct:            $(ratio "${L[direct,live]}" "${L[direct,tg]}")  (target >= 6x)"
	echo "live vs trafgen, routed:            $(ratio "${L[routed,live]}" "${L[routed,tg]}")  (target >= 2.5x)"
	echo "live vs xsk, direct / routed:       $(ratio "${L[direct,live]}" "${L[direct,xsk]}") / $(ratio "${L[routed,live]}" "${L[routed,xsk]}")"
	echo "live 2 threads vs 1 thread, direct: $(ratio "${L[direct,live2]}" "${L[direct,live]}")"
	echo
}

# ----------------------------------------------------------------- stamp ----
STAMPGEN=build/tests/tools/stampgen   # built by make (tests/tools/stampgen.c)
srv_rx_packets() { ip netns exec "$XP_SERVER_NS" cat "/sys/class/net/$XP_SERVER_DEV/statistics/rx_packets"; }

# One stampgen run (ENGINE on|off) with the server counting (an --engine none
# test keeps its XDP program on the veth, which frames sent by XDP need);
# prints the server veth's received pps over the run.
stamp_run() { # ENGINE on|off
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 3)) --engine none -J >"$TMP/sn.json" 2>&1 &
	local cnt=$! a b out sent secs stamped
	sleep 1
	a=$(srv_rx_packets)
	out=$(ip netns exec "$XP_CLIENT_NS" "$STAMPGEN" -e "$1" -i "$XP_CLIENT_DEV" -s "$XP_CLIENT_MAC" \
		-d "$XP_CLIENT_GW_MAC" -S "$XP_CLIENT4" -D "$XP_SERVER4" -l 64 -t "$T" "$2" 2>"$TMP/sg.err") ||
		die "stampgen -e $1 $2" "$TMP/sg.err"
	b=$(srv_rx_packets)
	wait "$cnt" || die "xdpperf --engine none (counting for stampgen)" "$TMP/sn.json"
	read -r sent secs stamped < <(sed -E 's/sent=([0-9]+) seconds=([0-9.]+) pps=[0-9.]+ stamped=([0-9]+)/\1 \2 \3/' <<<"$out")
	# The stamps really were on (every frame in the bins) or off (none).
	if [[ $2 == on && $stamped != "$sent" ]] || [[ $2 == off && $stamped != 0 ]]; then
		echo "bench: stampgen -e $1 $2: $stamped of $sent frames in the send-interval bins" >&2
		exit 1
	fi
	echo "($b - $a) / $secs" | bc -l
}

# One round of an engine: ABBA (on off off on, or off on on off on even
# rounds), so that a change in the machine's load during the round weighs on
# both sides alike; prints "on off" (each the mean of its two runs).
stamp_round() { # ENGINE ROUND
	local a b c d
	if (($2 % 2)); then
		a=$(stamp_run "$1" on); b=$(stamp_run "$1" off); c=$(stamp_run "$1" off); d=$(stamp_run "$1" on)
		echo "($a + $d) / 2" | bc -l; echo "($b + $c) / 2" | bc -l
	else
		a=$(stamp_run "$1" off); b=$(stamp_run "$1" on); c=$(stamp_run "$1" on); d=$(stamp_run "$1" off)
		echo "($b + $c) / 2" | bc -l; echo "($a + $d) / 2" | bc -l
	fi
}

bench_stamp() {
	[[ -x $STAMPGEN ]] || { echo "bench: build first (make): $STAMPGEN is missing" >&2; exit 1; }
	echo "== Cost of the stamp: 64-byte IPv4/TCP frames (stamp in the IPv4 ID + 6 payload bytes), one thread,"
	echo "   direct pair, ${T} s per run, $ROUNDS rounds of on/off/off/on (order swapped each round);"
	echo "   yardstick: the server veth's rx_packets"
	bash "$LAB" up --direct --queues 2 >/dev/null
	eval "$(bash "$LAB" env)"
	start_server
	printf "%-6s %-14s %-14s %-7s | %-14s %-14s %-7s\n" round "live stamped" "live off" ratio "xsk stamped" "xsk off" ratio
	local r lon loff xon xoff
	: >"$TMP/st.txt"
	for ((r = 1; r <= ROUNDS; r++)); do
		{ read -r lon; read -r loff; } < <(stamp_round live "$r")
		{ read -r xon; read -r xoff; } < <(stamp_round xsk "$r")
		echo "$lon $loff $(echo "$lon / $loff" | bc -l) $xon $xoff $(echo "$xon / $xoff" | bc -l)" >>"$TMP/st.txt"
		printf "%-6s %s %s %s | %s %s %s\n" "$r" "$(fmt "$lon")" "$(fmt "$loff")" "$(ratio "$lon" "$loff")" \
			"$(fmt "$xon")" "$(fmt "$xoff")" "$(ratio "$xon" "$xoff")"
	done
	stop_server
	local col k
	declare -gA ST
	for k in 1 2 3 4 5 6; do
		read -r ST[$k,min] ST[$k,med] ST[$k,max] < <(awk -v k=$k '{print $k}' "$TMP/st.txt" | mmm)
	done
	for col in min med max; do
		printf "%-6s %s %s %5.2fx  | %s %s %5.2fx\n" "$col" "$(fmt "${ST[1,$col]}")" "$(fmt "${ST[2,$col]}")" "${ST[3,$col]}" \
			"$(fmt "${ST[4,$col]}")" "$(fmt "${ST[5,$col]}")" "${ST[6,$col]}"
	done
	echo "(ratio rows: min/median/max of the rounds' own ratios, each round's sides measured side by side)"
	echo
	echo "live, stamps on vs off:  $(printf "%5.2fx" "${ST[3,med]}") median of the rounds [$(printf "%.2fx - %.2fx" "${ST[3,min]}" "${ST[3,max]}")]; medians per side $(ratio "${ST[1,med]}" "${ST[2,med]}")  (target >= 0.9x)"
	echo "xsk, stamps on vs off:   $(printf "%5.2fx" "${ST[6,med]}") median of the rounds [$(printf "%.2fx - %.2fx" "${ST[6,min]}" "${ST[6,max]}")]; medians per side $(ratio "${ST[4,med]}" "${ST[5,med]}")"
	echo
}

# ----------------------------------------------------------------- xconn ----
cpu_busy_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

# connections/s of one -x run: socket engine (client's count) or XDP engine (server's count)
xconn_rate() { # ENGINE [OPTIONS...]
	local eng=$1 par=()
	shift
	# -P 64: connects in flight for the socket engine; the XDP engine keeps none (xdpperf refuses -P there).
	[[ $eng == socket ]] && par=(-P 64)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -x "${par[@]}" -t "$T" --engine "$eng" "$@" -J >"$TMP/c.json" 2>"$TMP/c.err" ||
		die "xdpperf -x --engine $eng" "$TMP/c.err"
	if [[ $eng == socket ]]; then jq -e '.end.sum.sockets.connections_per_second' "$TMP/c.json"
	else jq -e '.end.sum.connections.connections_per_second' "$TMP/c.json"; fi || die "xdpperf -x --engine $eng (no figure)" "$TMP/c.json"
}

bench_xconn() {
	echo "== Connections/s, -x -P 64: XDP connection engine vs socket engine, ${T} s per run"
	printf "%-10s %-18s %-18s %-8s %s\n" path socket xdp ratio "machine CPU busy during the xdp run / conntrack entries per s"
	declare -gA C
	for path in direct firewall; do
		if [[ $path == direct ]]; then bash "$LAB" up --direct --queues 2 >/dev/null
		else bash "$LAB" up --firewall --queues 2 >/dev/null; fi
		eval "$(bash "$LAB" env)"
		start_server
		[[ -n $XP_ROUTER_NS ]] && ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1
		C[$path,s]=$(xconn_rate socket)
		[[ -n $XP_ROUTER_NS ]] && ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1
		local c0 c1 b0 t0 b1 t1 extra="-"
		read -r b0 t0 < <(cpu_busy_ticks)
		c0=$([[ -n $XP_ROUTER_NS ]] && ip netns exec "$XP_ROUTER_NS" conntrack -C || echo 0)
		C[$path,x]=$(xconn_rate xdp)
		c1=$([[ -n $XP_ROUTER_NS ]] && ip netns exec "$XP_ROUTER_NS" conntrack -C || echo 0)
		read -r b1 t1 < <(cpu_busy_ticks)
		local busy
		busy=$(echo "100 * ($b1 - $b0) / ($t1 - $t0)" | bc -l)
		if [[ -n $XP_ROUTER_NS ]]; then
			local max full=""
			max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
			((max > 0 && c1 * 100 >= max * 95)) && full=", the table filled up: CLOSEd entries linger 10 s"
			extra=$(printf "%.0f %% / %.1f k entries/s (table max %s%s)" "$busy" "$(echo "($c1 - $c0) / $T / 1000" | bc -l)" \
				"$max" "$full")
		else
			extra=$(printf "%.0f %%" "$busy")
		fi
		printf "%-10s %-18s %-18s %-8s %s\n" "$path" "$(fmt_cps "${C[$path,s]}")" "$(fmt_cps "${C[$path,x]}")" \
			"$(ratio "${C[$path,x]}" "${C[$path,s]}")" "$extra"
		stop_server
	done
	echo
	echo "xdp vs socket, direct:   $(ratio "${C[direct,x]}" "${C[direct,s]}")  (target >= 20x)"
	echo "xdp vs socket, firewall: $(ratio "${C[firewall,x]}" "${C[firewall,s]}")  (target >= 3x)"
	echo "(on veth the router forwards in the sender's softirq context: the router's limit shows as the"
	echo " whole machine's CPU being busy, not as one router core)"
	echo
}

case $WHAT in
xsk) bench_xsk ;;
socket) bench_socket ;;
live) bench_live ;;
xconn) bench_xconn ;;
stamp) bench_stamp ;;
all) bench_xsk; bench_live; bench_socket; bench_xconn; bench_stamp ;;
*) echo "bench: unknown benchmark '$WHAT' (xsk, live, socket, xconn, stamp or all)" >&2; exit 2 ;;
esac
