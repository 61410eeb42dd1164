#!/usr/bin/env bash
# Benchmarks (not tests): side-by-side figures from one run on this machine.
#
#   scripts/bench.sh [-t SECS] [xsk|live|socket|xconn|trafgen|stamp|all]   (default all)
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
# Every frame figure (xsk, live) is the server veth's rx_packets
# (/sys/class/net/DEV/statistics), sampled every 0.1 s while a tool runs:
# neither tool writes it. Each tool's rate is taken over the same window, the
# samples where the counter rose faster than 10 % of the run's peak, 0.5 s
# trimmed at each end (start-up, shutdown), so xdpperf and its baseline are
# compared on the same kind of interval. Each comparison runs $BENCH_ROUNDS
# rounds (default 3), the order reversed every other round, and shows
# min/median/max per side; ratios are of the medians, with the worst and best
# pairing of the ranges. A run that fails stops the bench with its error.
# The server's XDP program is attached for every run (trafgen's too, through an
# idle --engine none test), so every tool meets the same receiver.
#
# xconn:  connections/s of -x, the XDP connection engine vs the socket engine
#         (-P 64, closing with a reset), direct and through the --firewall
#         router. Through the firewall the yardstick is netfilter's: an nft
#         counter in the router of the client's handshake-completing ACKs that
#         conntrack classed as an established connection's original direction
#         (one per connection for both engines). On the direct pair nothing
#         between the ends counts connections: the yardstick is the server
#         veth's rx_packets divided by the client->server frames of one
#         connection (socket with reset: SYN, ACK, RST = 3; XDP engine: SYN,
#         ACK = 2), beside each engine's own count as a check.
#         Targets: >= 20x direct, >= 3x through the firewall.
# live:   the XDP live-frames engine vs the AF_XDP engine vs trafgen, 64-byte
#         frames, one thread each, direct and routed; live with 2 threads; and
#         rate control: the worst 1-second window of the server veth's
#         rx_packets at 10 kpps, 100 kpps, 1 Mpps and 50 % of the live
#         maximum. Targets: live >= 6x trafgen direct, >= 2.5x routed; every
#         window within 2 % of the target.
# xsk:    xdpperf's AF_XDP engine vs trafgen (netsniff-ng) with the same 64-byte
#         TCP frames, direct and routed, 1 and 2 queues (trafgen -P 2).
#         Targets: xdpperf >= 1.0x trafgen with one queue, and 2 queues >= 1.8x
#         one queue on the direct pair.
# trafgen: the trafgen settings tried for its best one-core rate (the xsk and
#         live sections use the best: a static list of 64 frames, -P 1).
# socket: xdpperf's socket engine (fireperf's flags) on the routed lab, each
#         figure next to what a plain tool does on the same path:
#         stream -P 4 bit/s vs iperf3 -P 4 ALONE, nothing of xdpperf attached
#         (target >= 0.95x), both as a user runs it (one process) and one
#         iperf3 pair per core (see below); iperf3 again beside each of
#         xdpperf's counting programs: TC (how xdpperf's socket tests count)
#         and XDP (how frame tests count; a frame test beside a socket test
#         puts it on the path);
#         -x -P 64 connections/s vs tests/tools/connloop -P 64, a blocking
#         socket/connect/close loop per thread, closing with a reset and
#         pinned like xdpperf (-R -a; target >= 1.0x) and, beside it, with a
#         plain close; and memory
#         per held connection (-k -P $BENCH_HOLD, default 20000): RSS of every
#         xdpperf process on each side (workers included) and the kernel's
#         Slab growth, per connection. iperf3 3.12 runs -P in one thread:
#         "iperf3 -P 4" is one process, "iperf3 per core" one client/server
#         pair per core, pinned (-A), the 4 streams split between them. Every
#         figure comes from one yardstick neither tool wrote (server veth
#         rx_bytes, nstat TcpPassiveOpens); the runs alternate $BENCH_ROUNDS
#         times (default 3, order swapped each round) with min/median/max per
#         side. Nothing of xdpperf is on a baseline's path (checked: no XDP,
#         no TC filter, no tcx program on the server veth). A failed run stops the
#         bench with its error.
set -euo pipefail
cd "$(dirname "$0")/.."

T=5
while getopts "t:" o; do
	case $o in
	t) T=$OPTARG ;;
	*) echo "usage: $0 [-t SECS] [xsk|live|socket|xconn|trafgen|stamp|all]" >&2; exit 2 ;;
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
	[[ -n ${BENCH_KEEP:-} ]] && echo "bench: kept $TMP" >&2 || rm -rf "$TMP"
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

# ---------------------------------------------------------------- frames ----
# The yardstick of every frame figure: the server veth's rx_packets, read by a
# sampler in the server namespace every 0.1 s ("EPOCHREALTIME count" lines).
# (The sleep paces the sampling; nothing waits on it.)
SMP=""
rx_sampler_start() { # FILE
	ip netns exec "$XP_SERVER_NS" bash -c 'f=/sys/class/net/$1/statistics/rx_packets
		while :; do read -r v <"$f"; echo "$EPOCHREALTIME $v"; sleep 0.1; done' sampler "$XP_SERVER_DEV" >"$1" &
	SMP=$!
	BG+=("$SMP")
}
rx_sampler_stop() { kill "$SMP" 2>/dev/null; wait "$SMP" 2>/dev/null || true; SMP=""; }

# steady SAMPLES [TARGET]: the tool's window in the samples: from the first to
# the last 0.1-s step faster than 10 % of the fastest, 0.5 s trimmed at each
# end. Prints "pps seconds" (frames/s over the window), or with TARGET
# "pps seconds worst_dev_%" where the worst deviation is that of the window's
# full consecutive 1-second spans. Exits 1 (no output) if the window is
# shorter than 1 s.
steady() {
	awk -v target="${2:-0}" '
	{ t[NR] = $1; v[NR] = $2 }
	END {
		for (i = 2; i <= NR; i++) { r = (v[i] - v[i-1]) / (t[i] - t[i-1]); if (r > peak) peak = r }
		if (peak <= 0) exit 1
		for (i = 2; i <= NR; i++) {
			r = (v[i] - v[i-1]) / (t[i] - t[i-1])
			if (r > peak / 10) { if (!s) s = i - 1; e = i }
		}
		for (lo = s; lo < e && t[lo] < t[s] + 0.5; lo++) ;
		for (hi = e; hi > lo && t[hi] > t[e] - 0.5; hi--) ;
		if (t[hi] - t[lo] < 1) exit 1
		line = sprintf("%.1f %.2f", (v[hi] - v[lo]) / (t[hi] - t[lo]), t[hi] - t[lo])
		if (target > 0) {
			worst = 0
			for (a = lo; ; a = b) {
				for (b = a; b <= hi && t[b] < t[a] + 1; b++) ;
				if (b > hi) break
				d = ((v[b] - v[a]) / (t[b] - t[a]) - target) / target * 100
				if (d < 0) d = -d
				if (d > worst) worst = d
			}
			line = line sprintf(" %.3f", worst)
		}
		print line
	}' "$1"
}
# measure_rx OUT [TARGET] -- CMD...: run CMD with the sampler on; the
# yardstick's "pps seconds [worst_dev]" goes to the variable named OUT.
measure_rx() {
	local -n out=$1
	local target=0
	[[ $2 != -- ]] && { target=$2; shift; }
	shift 2
	local rc=0
	rx_sampler_start "$TMP/rx.smp"
	"$@" || rc=$?
	rx_sampler_stop
	if ((rc == 75)); then # a tool's transient refusal (see run_trafgen): once more
		echo "note: $*: $(grep -m1 -i "failed" "$TMP/tg.txt" 2>/dev/null), run again" >&2
		rc=0
		rx_sampler_start "$TMP/rx.smp"
		"$@" || rc=$?
		rx_sampler_stop
	fi
	((rc == 0)) || { echo "bench: $* failed (status $rc)" >&2; exit 1; }
	out=$(steady "$TMP/rx.smp" "$target") ||
		{ echo "bench: $*: the server veth's rx_packets did not rise for 1 s ($(wc -l <"$TMP/rx.smp") samples)" >&2; exit 1; }
}

# An xdpperf frame engine run (the figure comes from measure_rx).
run_engine() { # ENGINE QUEUES [OPTIONS...]
	local eng=$1 q=$2
	shift 2
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t "$T" --engine "$eng" --queues "$q" "$@" -J \
		>"$TMP/x.json" 2>"$TMP/x.err" || { jq -r '.error // empty' "$TMP/x.json" >>"$TMP/x.err" 2>/dev/null
		die "xdpperf --engine $eng --queues $q $*" "$TMP/x.err"; }
}

# trafgen's frames: the same 64 bytes on the wire as xdpperf's (TCP ACK|PSH,
# 6 payload bytes), 64 flows. A static list (trafgen builds each frame and its
# checksums once) sends faster than dinc() port counters, which rewrite every
# frame: see the trafgen section.
trafgen_cfg() { # FILE static|dinc
	local i
	if [[ $2 == dinc ]]; then
		cat >"$1" <<-CFG
		{
		  eth(da=$XP_CLIENT_GW_MAC, sa=$XP_CLIENT_MAC, type=0x0800),
		  ipv4(saddr=$XP_CLIENT4, daddr=$XP_SERVER4, ttl=64, df),
		  tcp(sp=dinc(10000, 59999), dp=dinc(63000, 63015), seq=1, aseq=1, ack, psh, win=65535),
		  fill(0x00, 6)
		}
		CFG
		return
	fi
	for ((i = 0; i < 64; i++)); do
		cat <<-CFG
		{
		  eth(da=$XP_CLIENT_GW_MAC, sa=$XP_CLIENT_MAC, type=0x0800),
		  ipv4(saddr=$XP_CLIENT4, daddr=$XP_SERVER4, ttl=64, df),
		  tcp(sp=$((10000 + i)), dp=$((63000 + i % 16)), seq=1, aseq=1, ack, psh, win=65535),
		  fill(0x00, 6)
		}
		CFG
	done >"$1"
}
TRAFGEN_OPTS=(-Q)   # the best one-core settings found (see bench_trafgen)
TRAFGEN_CFG=static
# The tests the server has begun ("[peer] KIND test (" lines in its log).
tests_begun() { grep -cE '^\[[^]]*\] [a-z]+ test \(' "$TMP/server.log" || true; }
# trafgen -P CPUS [TRAFGEN OPTIONS...] for $T seconds, while an idle xdpperf
# --engine none test keeps the server's XDP program on the receiving veth.
run_trafgen() { # CPUS [OPTIONS...]
	local cpus=$1
	shift
	trafgen_cfg "$TMP/t.$TRAFGEN_CFG.cfg" "$TRAFGEN_CFG"   # this lab's addresses and MACs
	local n0
	n0=$(tests_begun)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 4)) --engine none -J >"$TMP/n.json" 2>"$TMP/n.err" &
	local cnt=$!
	BG+=("$cnt")
	# Until the server has begun this test and its XDP program is on the veth.
	local t0=$SECONDS
	until (($(tests_begun) > n0)) &&
		ip netns exec "$XP_SERVER_NS" ip -o link show "$XP_SERVER_DEV" | grep -qE " xdp(generic|drv)? "; do
		kill -0 "$cnt" 2>/dev/null || die "xdpperf --engine none (the receiver for trafgen)" "$TMP/n.err"
		((SECONDS - t0 < 4)) || die "xdpperf --engine none (no test with XDP on $XP_SERVER_DEV after 4 s)" "$TMP/n.err"
		sleep 0.05
	done
	local rc=0
	ip netns exec "$XP_CLIENT_NS" timeout -s INT "$T" trafgen -o "$XP_CLIENT_DEV" -i "$TMP/t.$TRAFGEN_CFG.cfg" \
		-P "$cpus" "$@" >"$TMP/tg.txt" 2>&1 || rc=$?
	# trafgen 0.6.8 gives up when the kernel answers its TX ring flush with
	# EAGAIN (the veth's queue is full; the qdisc bypass has no queue to wait
	# in): bench_trafgen counts how often. Status 75 lets measure_rx run it
	# again once (said on stderr), so trafgen's figure is not lost to its own
	# error handling; a second failure stops the bench.
	if ((rc == 1)) && grep -q "Flushing TX_RING failed: Resource temporarily" "$TMP/tg.txt"; then
		kill -INT "$cnt" 2>/dev/null; wait "$cnt" 2>/dev/null
		return 75
	fi
	if ((rc != 0 && rc != 124)); then
		kill -INT "$cnt" 2>/dev/null; wait "$cnt" 2>/dev/null
		grep -v "Cannot set system socket memory" "$TMP/tg.txt" >"$TMP/tg.err"
		die "trafgen -P $cpus $* (exit $rc)" "$TMP/tg.err"
	fi
	wait "$cnt" || die "xdpperf --engine none (the receiver for trafgen)" "$TMP/n.err"
	tr -d '\r' <"$TMP/tg.txt" | awk '/packets outgoing/ {s += $1} END {exit !(s > 0)}' ||
		die "trafgen -P $cpus $* (no packets outgoing)" "$TMP/tg.txt"
}

fmt() { printf "%8.3f Mpps" "$(echo "$1 / 1000000" | bc -l)"; }
ratio() { printf "%5.2fx" "$(echo "$1 / $2" | bc -l)"; }

# rounds NAME ROUNDS SIDE...: runs "SIDE" (a command line, word-split; its
# figure is measure_rx's pps) once per round, in the given order on odd
# rounds and reversed on even ones; prints a line per round and leaves the
# rates in $TMP/NAME.SIDE_INDEX (one per round).
rounds() {
	local name=$1 nr=$2 r i k fig
	shift 2
	local sides=("$@") order
	for ((r = 1; r <= nr; r++)); do
		order=()
		for ((i = 0; i < ${#sides[@]}; i++)); do
			if ((r % 2)); then order+=("$i"); else order=("$i" "${order[@]}"); fi
		done
		local figs=()
		for k in "${order[@]}"; do
			# shellcheck disable=SC2086
			measure_rx fig -- ${sides[$k]}
			figs[$k]=${fig%% *}
			echo "${figs[$k]}" >>"$TMP/$name.$k"
		done
		printf "  round %d:" "$r"
		for ((i = 0; i < ${#sides[@]}; i++)); do printf " %s" "$(fmt "${figs[$i]}")"; done
		echo
	done
}
# fig_of NAME INDEX min|med|max
fig_of() { mmm <"$TMP/$1.$2" | awk -v w="$3" '{print (w == "min" ? $1 : w == "med" ? $2 : $3)}'; }
mmm_line() { # NAME INDEX: "min / median / max" formatted
	printf "%s / %s / %s" "$(fmt "$(fig_of "$1" "$2" min)")" "$(fmt "$(fig_of "$1" "$2" med)")" "$(fmt "$(fig_of "$1" "$2" max)")"
}
# cmp_line LABEL NAME A B TARGET: the ratio of A's and B's medians, [worst - best pairing]
cmp_line() {
	printf "%-44s %s  [%s - %s]%s\n" "$1" "$(ratio "$(fig_of "$2" "$3" med)" "$(fig_of "$2" "$4" med)")" \
		"$(ratio "$(fig_of "$2" "$3" min)" "$(fig_of "$2" "$4" max)")" "$(ratio "$(fig_of "$2" "$3" max)" "$(fig_of "$2" "$4" min)")" \
		"${5:+  (target $5)}"
}

lab_up() { # direct|routed|firewall
	case $1 in
	direct) bash "$LAB" up --direct --queues 2 >/dev/null ;;
	routed) bash "$LAB" up --queues 2 >/dev/null ;;
	firewall) bash "$LAB" up --firewall --queues 2 >/dev/null ;;
	esac
	eval "$(bash "$LAB" env)"
}

bench_xsk() {
	echo "== AF_XDP engine vs trafgen, 64-byte TCP frames, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	local topo q
	for topo in direct routed; do
		lab_up "$topo"
		start_server
		for q in 1 2; do
			echo "$topo, $q queue(s): xdpperf --engine xsk --queues $q | trafgen -P $q"
			rounds "xsk.$topo.$q" "$ROUNDS" "run_engine xsk $q" "run_trafgen $q ${TRAFGEN_OPTS[*]}"
		done
		stop_server
	done
	echo
	printf "%-8s %-7s %-44s %-44s\n" topology queues "xdpperf min / median / max" "trafgen min / median / max"
	for topo in direct routed; do
		for q in 1 2; do
			printf "%-8s %-7s %-44s %-44s\n" "$topo" "$q" "$(mmm_line "xsk.$topo.$q" 0)" "$(mmm_line "xsk.$topo.$q" 1)"
		done
	done
	echo
	cmp_line "xdpperf vs trafgen, 1 queue, direct:" xsk.direct.1 0 1 ">= 1.0x"
	cmp_line "xdpperf vs trafgen, 1 queue, routed:" xsk.routed.1 0 1
	cmp_line "xdpperf vs trafgen, 2 queues, direct:" xsk.direct.2 0 1
	cmp_line "xdpperf vs trafgen, 2 queues, routed:" xsk.routed.2 0 1
	# 2 queues vs 1: rounds of different runs; their medians and ranges.
	cp "$TMP/xsk.direct.2.0" "$TMP/xq.0"
	cp "$TMP/xsk.direct.1.0" "$TMP/xq.1"
	cmp_line "xdpperf 2 queues vs 1 queue, direct:" xq 0 1 ">= 1.8x"
	echo
}

# trafgen's settings for one core on the direct pair, in alternating rounds
# like every comparison: the xsk and live sections use the best of these
# (TRAFGEN_CFG, TRAFGEN_OPTS above). A run trafgen itself ends with an error
# is counted as failed here (and stops the bench in the other sections).
bench_trafgen() {
	echo "== trafgen settings for one core (-P 1), direct, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets"
	lab_up direct
	start_server
	local specs=("dinc -Q" "static -Q" "static -Q -S 1MiB" "static -Q -S 64MiB" "static -Q -q" \
		"static -Q -H" "static -Q -t 0") r i k order fig
	for ((r = 1; r <= ROUNDS; r++)); do
		order=("${!specs[@]}")
		((r % 2)) || order=($(printf "%s\n" "${order[@]}" | tac))
		local figs=()
		for k in "${order[@]}"; do
			read -r cfg opts <<<"${specs[$k]}"
			rx_sampler_start "$TMP/rx.smp"
			# shellcheck disable=SC2086
			if (TRAFGEN_CFG=$cfg run_trafgen 1 $opts) 2>"$TMP/tgtry.err" && fig=$(steady "$TMP/rx.smp"); then
				echo "${fig%% *}" >>"$TMP/tg.$k"
			else
				echo "${specs[$k]}: $(grep -m1 -i "failed" "$TMP/tg.txt" || tail -n 1 "$TMP/tgtry.err")" >>"$TMP/tg.failed"
				fig=failed
			fi
			rx_sampler_stop
			figs[$k]=${fig%% *}
		done
		printf "  round %d:" "$r"
		for k in "${!specs[@]}"; do
			if [[ ${figs[$k]} == failed ]]; then printf " %13s" failed; else printf " %s" "$(fmt "${figs[$k]}")"; fi
		done
		echo
	done
	stop_server
	printf "  %-30s %-44s %s\n" "frames, options" "min / median / max" "failed runs"
	for i in "${!specs[@]}"; do
		local n=0 line="-"
		[[ -s $TMP/tg.$i ]] && line=$(mmm_line tg "$i")
		[[ -s $TMP/tg.failed ]] && n=$(grep -c "^${specs[$i]}:" "$TMP/tg.failed" || true)
		printf "  %-30s %-44s %s\n" "${specs[$i]/ / -P 1 }" "$line" "$n of $ROUNDS"
	done
	[[ -s $TMP/tg.failed ]] && sed 's/^/  failed: /' "$TMP/tg.failed" | sort | uniq -c
	echo "  (dinc: one frame whose ports trafgen rewrites for every frame; static: 64 prebuilt frames;"
	echo "   -S: TX ring size (default: trafgen's own); -q: through the qdisc instead of bypassing it;"
	echo "   -H: high priority; -t 0: no gap. trafgen's -b is a rate limit, not a batch size.)"
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

# Observers, for the "iperf3 + TC" and "iperf3 + XDP" columns only, never for
# a baseline's own figure: an idle xdpperf test in the background keeps one of
# the server's counting programs on its interface while iperf3 runs.
#   tc:  a socket test (-P 1 -k, port 64000): the TC program, which counts
#        xdpperf's socket tests;
#   xdp: a frame test that sends nothing (--engine none, port 64001): the XDP
#        program, which counts frame tests (and counted socket tests before).
PIN=""
obs_on() { # tc|xdp
	local n0 want args
	n0=$(grep -c "counting with" "$TMP/server.log" || true)
	if [[ $1 == tc ]]; then args=(-P 1 -k -p 64000) want="counting with TC"
	else args=(--engine none -p 64001) want="counting with XDP"; fi
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" "${args[@]}" -t 600 >"$TMP/pin.log" 2>&1 &
	PIN=$!
	BG+=("$PIN")
	for _ in $(seq 50); do
		(($(grep -c "counting with" "$TMP/server.log" || true) > n0)) && break
		sleep 0.1
	done
	if ! tail -n 1 "$TMP/server.log" | grep -q "$want"; then
		echo "bench: the server's $1 observer did not attach: $(tail -n 2 "$TMP/server.log") $(cat "$TMP/pin.log")" >&2
		exit 1
	fi
}
obs_off() { kill -INT "$PIN" 2>/dev/null; wait "$PIN" 2>/dev/null || true; PIN=""; sleep 0.2; }
# What is on the server veth's tcx ingress (tests/tools/tcxq, built by make:
# bpftool 7.1 cannot tell which interface a tcx link is on)
TCXQ=build/tests/tools/tcxq
no_xdp() { # a baseline must find nothing of xdpperf on the server's interface: no XDP, no TC
	local what=""
	ip netns exec "$XP_SERVER_NS" ip -o link show "$XP_SERVER_DEV" | grep -qE " xdp(generic|drv)? " && what="an XDP program"
	[[ -n $(ip netns exec "$XP_SERVER_NS" tc filter show dev "$XP_SERVER_DEV" ingress 2>/dev/null) ]] && what="a TC filter"
	[[ -n $(ip netns exec "$XP_SERVER_NS" "$TCXQ" "$XP_SERVER_DEV") ]] && what="a tcx program"
	if [[ -n $what ]]; then
		echo "bench: $what is attached to $XP_SERVER_DEV before a baseline run" >&2
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
# iperf3 -P 4 as a user types it: one process (iperf3 3.12: one thread).
run_iperf3_one() {
	ip netns exec "$XP_SERVER_NS" iperf3 -s -1 -p 5201 >"$TMP/iperf3-s.log" 2>&1 &
	local srv=$!
	BG+=("$srv")
	wait_listen "$XP_SERVER_NS" 5201
	if ! ip netns exec "$XP_CLIENT_NS" iperf3 -c "$XP_SERVER4" -p 5201 -P 4 -t "$T" -J >"$TMP/i.json" 2>"$TMP/i.err"; then
		jq -r '.error // empty' "$TMP/i.json" >>"$TMP/i.err" 2>/dev/null
		kill "$srv" 2>/dev/null
		die "iperf3 -P 4" "$TMP/i.err"
	fi
	wait "$srv" 2>/dev/null || true
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
	[[ -x $CONNLOOP && -x $TCXQ ]] || { echo "bench: build first (make): $CONNLOOP or $TCXQ is missing" >&2; exit 1; }
	echo "== Socket engine vs plain socket tools, routed, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick for every figure: the server veth's rx_bytes (bit/s on the wire) and the server's"
	echo "   TcpPassiveOpens (nstat), neither written by the tools; baselines run with nothing of xdpperf attached"
	printf "%-6s %-17s %-17s %-17s %-17s %-17s | %-15s %-15s %-15s\n" round "xdpperf -P 4" "iperf3 -P 4" \
		"iperf3 per core" "iperf3 + TC" "iperf3 + XDP" "xdpperf -x" "connloop -R -a" "connloop plain"
	local r
	: >"$TMP/r.txt"
	for ((r = 1; r <= ROUNDS; r++)); do
		# A fresh lab each round: connloop's plain close leaves TIME_WAIT behind.
		bash "$LAB" up >/dev/null
		eval "$(bash "$LAB" env)"
		local xs i1 is ot ox xc cr cp
		# Standing listeners (fireperf style): xdpperf's runs and connloop
		# connect to them. Between tests they are plain epoll listeners with
		# no XDP attached (no_xdp checks), so they are the baseline's server too.
		start_server -P 64 -p 63000:63015
		baselines() {
			no_xdp; i1=$(measure bps run_iperf3_one)
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
		# iperf3 beside each of xdpperf's counting programs: what counting costs.
		obs_on tc; ot=$(measure bps run_iperf3_one); obs_off
		obs_on xdp; ox=$(measure bps run_iperf3_one); obs_off
		stop_server
		echo "$xs $i1 $is $ot $ox $xc $cr $cp" >>"$TMP/r.txt"
		printf "%-6s %-17s %-17s %-17s %-17s %-17s | %-15s %-15s %-15s\n" "$r" "$(fmt_bps "$xs")" "$(fmt_bps "$i1")" \
			"$(fmt_bps "$is")" "$(fmt_bps "$ot")" "$(fmt_bps "$ox")" "$(fmt_cps "$xc")" "$(fmt_cps "$cr")" "$(fmt_cps "$cp")"
	done
	local col name k
	declare -gA S
	for k in 1 2 3 4 5 6 7 8; do
		read -r S[$k,min] S[$k,med] S[$k,max] < <(awk -v k=$k '{print $k}' "$TMP/r.txt" | mmm)
	done
	for col in min med max; do
		printf "%-6s %-17s %-17s %-17s %-17s %-17s | %-15s %-15s %-15s\n" "$col" "$(fmt_bps "${S[1,$col]}")" \
			"$(fmt_bps "${S[2,$col]}")" "$(fmt_bps "${S[3,$col]}")" "$(fmt_bps "${S[4,$col]}")" "$(fmt_bps "${S[5,$col]}")" \
			"$(fmt_cps "${S[6,$col]}")" "$(fmt_cps "${S[7,$col]}")" "$(fmt_cps "${S[8,$col]}")"
	done
	# Per round (same moment, same machine load), the ratio that matters most.
	echo "per round, xdpperf / iperf3 -P 4 alone: $(awk '{printf "%.2fx ", $1 / $2}' "$TMP/r.txt")"
	echo
	bench_hold
	echo "ratios of the medians (min-max of the per-side ranges in brackets: worst/best pairing):"
	echo "xdpperf -P 4 vs iperf3 -P 4 alone (one process, wire bit/s):    $(ratio "${S[1,med]}" "${S[2,med]}")  [$(ratio "${S[1,min]}" "${S[2,max]}") - $(ratio "${S[1,max]}" "${S[2,min]}")]  (target >= 0.95x)"
	echo "xdpperf -P 4 vs iperf3 alone, one pair per core (pinned):       $(ratio "${S[1,med]}" "${S[3,med]}")  [$(ratio "${S[1,min]}" "${S[3,max]}") - $(ratio "${S[1,max]}" "${S[3,min]}")]  (target >= 0.95x)"
	echo "iperf3 -P 4 beside xdpperf's TC counter vs alone (its cost):    $(ratio "${S[4,med]}" "${S[2,med]}")"
	echo "iperf3 -P 4 beside xdpperf's XDP counter vs alone (why not XDP): $(ratio "${S[5,med]}" "${S[2,med]}")"
	echo "xdpperf vs connloop -R -a, -x -P 64 (TcpPassiveOpens/s):        $(ratio "${S[6,med]}" "${S[7,med]}")  [$(ratio "${S[6,min]}" "${S[7,max]}") - $(ratio "${S[6,max]}" "${S[7,min]}")]  (target >= 1.0x)"
	echo "xdpperf vs connloop with a plain close (TIME_WAIT):              $(ratio "${S[6,med]}" "${S[8,med]}")"
	echo
}

# ------------------------------------------------------------------ live ----
bench_live() {
	echo "== Live frames vs AF_XDP vs trafgen, 64-byte TCP frames, one thread/queue, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets (frames/s over each run's steady window)"
	local topo
	for topo in direct routed; do
		lab_up "$topo"
		start_server
		if [[ $topo == direct ]]; then
			echo "$topo: live 1 thread | xsk 1 queue | trafgen -P 1 | live 2 threads"
			rounds "live.$topo" "$ROUNDS" "run_engine live 1" "run_engine xsk 1" "run_trafgen 1 ${TRAFGEN_OPTS[*]}" \
				"run_engine live 2"
		else
			echo "$topo: live 1 thread | xsk 1 queue | trafgen -P 1"
			rounds "live.$topo" "$ROUNDS" "run_engine live 1" "run_engine xsk 1" "run_trafgen 1 ${TRAFGEN_OPTS[*]}"
		fi
		if [[ $topo == direct ]]; then rate_control; fi
		stop_server
	done
	echo
	printf "%-8s %-44s %-44s %-44s\n" topology "live min / median / max" "xsk min / median / max" "trafgen min / median / max"
	for topo in direct routed; do
		printf "%-8s %-44s %-44s %-44s\n" "$topo" "$(mmm_line "live.$topo" 0)" "$(mmm_line "live.$topo" 1)" \
			"$(mmm_line "live.$topo" 2)"
	done
	echo "direct   live with 2 threads on 2 queues: $(mmm_line live.direct 3)"
	echo
	cmp_line "live vs trafgen, direct:" live.direct 0 2 ">= 6x"
	cmp_line "live vs trafgen, routed:" live.routed 0 2 ">= 2.5x"
	cmp_line "live vs xsk, direct:" live.direct 0 1
	cmp_line "live vs xsk, routed:" live.routed 0 1
	cmp_line "live 2 threads vs 1 thread, direct:" live.direct 3 0
	echo
	cat "$TMP/rate.txt"
}

# Rate control on the direct pair: the worst full 1-second window of the
# server veth's rx_packets against the target, live and (where it reaches
# the rate) xsk; 50 % of the live engine's median one-thread rate last.
rate_control() {
	local half xmed target fig dl dx
	half=$(printf "%.0f" "$(echo "$(fig_of live.direct 0 med) / 2" | bc -l)")
	xmed=$(fig_of live.direct 1 med)
	{
		echo "== Rate control, direct: the worst 1-second window of the server veth's rx_packets"
		printf "%-14s %-12s %-12s\n" target live xsk
		for target in 10000 100000 1000000 "$half"; do
			measure_rx fig "$target" -- run_engine live 1 -b "${target}pps"
			dl=$(printf "%.3f %%" "${fig##* }")
			dx="-"
			if (($(echo "$target < $xmed * 0.9" | bc -l))); then
				measure_rx fig "$target" -- run_engine xsk 1 -b "${target}pps"
				dx=$(printf "%.3f %%" "${fig##* }")
			fi
			printf "%-14s %-12s %-12s\n" "$(fmt "$target")" "$dl" "$dx"
		done
		echo "(target: within 2 %; $(fmt "$half") is 50 % of the live engine's median one-thread rate;"
		echo " xsk only where the target is below 90 % of its median maximum)"
		echo
	} >"$TMP/rate.txt"
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

# The firewall's own count of completed handshakes: an nft counter in the
# router, in a table of the bench's own after the lab's filter (so only what
# the firewall accepted), of the client's pure ACKs that conntrack classed as
# an established connection's original direction: the handshake's third
# packet. Both engines (-x, reset close) send exactly one per connection.
fw_counter_add() {
	ip netns exec "$XP_ROUTER_NS" nft -f - <<-EOF
	table inet xpbench {
		counter handshakes { packets 0 bytes 0 }
		chain forward_count {
			type filter hook forward priority 10; policy accept;
			ct direction original ct state established tcp flags & (syn | ack | fin | rst) == ack counter name handshakes
		}
	}
	EOF
}
fw_handshakes() {
	ip netns exec "$XP_ROUTER_NS" nft -j list counter inet xpbench handshakes |
		jq -e '.nftables[] | select(.counter) | .counter.packets'
}

# run_conn ENGINE: one -x run; prints "yardstick_cps own_cps conntrack_entries".
run_conn() {
	local eng=$1 par=() a b own per ct=-
	# The socket engine keeps 64 connects in flight (-P 64); the XDP engine keeps none (it refuses -P).
	[[ $eng == socket ]] && par=(-P 64)
	if [[ -n $XP_ROUTER_NS ]]; then
		ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1 || true
		a=$(fw_handshakes)
	else
		a=$(srv_rx_packets)
	fi
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -x "${par[@]}" -t "$T" --engine "$eng" -J >"$TMP/c.json" 2>"$TMP/c.err" ||
		{ jq -r '.error // empty' "$TMP/c.json" >>"$TMP/c.err" 2>/dev/null; die "xdpperf -x --engine $eng" "$TMP/c.err"; }
	if [[ -n $XP_ROUTER_NS ]]; then
		b=$(fw_handshakes)
		per=1
		ct=$(ip netns exec "$XP_ROUTER_NS" conntrack -C)
	else
		b=$(srv_rx_packets)
		# client->server frames per connection: socket SYN, ACK, RST; XDP engine SYN, ACK (the server resets)
		if [[ $eng == socket ]]; then per=3; else per=2; fi
	fi
	if [[ $eng == socket ]]; then own=$(jq -e '.end.sum.sockets.established' "$TMP/c.json")
	else own=$(jq -e '.end.sum.connections.established' "$TMP/c.json"); fi || die "xdpperf -x --engine $eng (no count)" "$TMP/c.json"
	((b > a)) || die "xdpperf -x --engine $eng (the yardstick did not move: $a -> $b)" "$TMP/c.err"
	echo "$(echo "($b - $a) / $per / $T" | bc -l) $(echo "$own / $T" | bc -l) $ct"
}

bench_xconn() {
	echo "== Connections/s, -x: XDP connection engine vs socket engine (-P 64), ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: firewall: the router's nft count of handshake-completing ACKs of connections conntrack"
	echo "   tracks; direct: the server veth's rx_packets / client->server frames per connection (socket 3, xdp 2)"
	local path r k first second fig own ct max b0 t0 b1 t1 busy
	max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
	for path in direct firewall; do
		lab_up "$path"
		[[ $path == firewall ]] && fw_counter_add
		start_server
		printf "%-9s %-6s %-16s %-16s %s\n" "$path" round "socket" "xdp" "(own counts: socket / xdp; machine CPU busy in the xdp run; conntrack entries after it)"
		: >"$TMP/xc.$path.0"; : >"$TMP/xc.$path.1"
		for ((r = 1; r <= ROUNDS; r++)); do
			if ((r % 2)); then first=socket second=xdp; else first=xdp second=socket; fi
			declare -A F O E
			for k in $first $second; do
				[[ $k == xdp ]] && read -r b0 t0 < <(cpu_busy_ticks)
				read -r fig own ct < <(run_conn "$k")
				[[ -n $fig ]] || exit 1
				[[ $k == xdp ]] && read -r b1 t1 < <(cpu_busy_ticks)
				F[$k]=$fig O[$k]=$own E[$k]=$ct
			done
			busy=$(echo "100 * ($b1 - $b0) / ($t1 - $t0)" | bc -l)
			echo "${F[socket]}" >>"$TMP/xc.$path.0"
			echo "${F[xdp]}" >>"$TMP/xc.$path.1"
			local full=""
			[[ ${E[xdp]} != - ]] && ((max > 0 && E[xdp] * 100 >= max * 95)) &&
				full=" - the table filled up (max $max; CLOSEd entries linger 10 s): the firewall's limit"
			printf "%-9s %-6s %-16s %-16s (%s / %s; %.0f %%; %s%s)\n" "" "$r" "$(fmt_cps "${F[socket]}")" "$(fmt_cps "${F[xdp]}")" \
				"$(fmt_cps "${O[socket]}" | tr -s ' ')" "$(fmt_cps "${O[xdp]}" | tr -s ' ')" "$busy" "${E[xdp]}" "$full"
		done
		stop_server
	done
	echo
	printf "%-9s %-40s %-40s\n" path "socket min / median / max" "xdp min / median / max"
	for path in direct firewall; do
		printf "%-9s %-40s %-40s\n" "$path" \
			"$(fmt_cps "$(fig_of "xc.$path" 0 min)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 0 med)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 0 max)" | tr -s ' ')" \
			"$(fmt_cps "$(fig_of "xc.$path" 1 min)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 1 med)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 1 max)" | tr -s ' ')"
	done
	echo
	cmp_line "xdp vs socket, direct:" xc.direct 1 0 ">= 20x"
	cmp_line "xdp vs socket, firewall:" xc.firewall 1 0 ">= 3x"
	echo "(on veth the router forwards in the sender's softirq context: the router's limit shows as the"
	echo " whole machine's CPU being busy, not as one router core)"
	echo
}

case $WHAT in
xsk) bench_xsk ;;
socket) bench_socket ;;
live) bench_live ;;
xconn) bench_xconn ;;
trafgen) bench_trafgen ;;
stamp) bench_stamp ;;
all) bench_trafgen; bench_xsk; bench_live; bench_socket; bench_xconn; bench_stamp ;;
*) echo "bench: unknown benchmark '$WHAT' (xsk, live, socket, xconn, trafgen, stamp or all)" >&2; exit 2 ;;
esac
