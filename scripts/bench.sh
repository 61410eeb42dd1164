#!/usr/bin/env bash
# Benchmarks (not tests): side-by-side figures from one run on this machine.
#
#   scripts/bench.sh [-t SECS] [xsk|live|flows|socket|fireperf|xconn|trafgen|stamp|metrics|otg|all]   (default all)
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
# Each section lives in scripts/bench/SECTION.sh (its own description at its
# top); scripts/bench/lib.sh holds what they share.
#
# A run that finishes writes its output, as printed, to
# docs/benchmarks/YYYY-MM-DD-HHMM-WHAT.md (scripts/bench/paste.py; the method
# is docs/benchmarks.md); BENCH_DOC=FILE writes it there, BENCH_DOC= not at all.
set -euo pipefail
cd "$(dirname "$0")/.."

T=5
while getopts "t:" o; do
	case $o in
	t) T=$OPTARG ;;
	*) echo "usage: $0 [-t SECS] [xsk|live|flows|socket|fireperf|xconn|trafgen|stamp|metrics|otg|all]" >&2; exit 2 ;;
	esac
done
ARGS=("$@")
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

ROUNDS=${BENCH_ROUNDS:-3}
case $WHAT in
xsk | socket | fireperf | live | flows | xconn | trafgen | stamp | metrics | otg | all) ;;
*) echo "bench: unknown benchmark '$WHAT' (xsk, live, flows, socket, fireperf, xconn, trafgen, stamp, metrics, otg or all)" >&2; exit 2 ;;
esac

for f in scripts/bench/lib.sh scripts/bench/{trafgen,xsk,live,flows,socket,fireperf,xconn,stamp,metrics,otg}.sh; do
	# shellcheck source=/dev/null
	. "$f"
done
# trafgen's send-buffer preload (scripts/bench/sndbuf.c), built before any run.
case $WHAT in trafgen | xsk | live | all) sndbuf_lib ;; esac

# The run as its page in docs/benchmarks/ shows it (one run's output, as
# printed, stdout and stderr): what ran, when, on what; then every section;
# then every target it checked. tee keeps it on the terminal too.
DOC=${BENCH_DOC-docs/benchmarks/$(date -u +%Y-%m-%d-%H%M)-$WHAT.md}
if [[ -n $DOC ]]; then
	exec 3>&1 4>&2 > >(tee "$TMP/run.txt") 2>&1
	TEE=$!
fi
: >"$TMP/targets.txt"
T0=$SECONDS
echo "\$ scripts/bench.sh ${ARGS[*]}"
echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine: $(nproc) CPUs ($(lscpu | sed -n 's/^Model name: *//p' | head -1)), $(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)," \
	"kernel $(uname -r), load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; xdpperf $("$BIN" --version 2>/dev/null | head -1 | awk '{print $NF}')"
echo "settings: $T s per run, BENCH_ROUNDS=$ROUNDS"
echo
footer() {
	local met notmet
	met=$(grep -c ': met$' "$TMP/targets.txt" || true)
	notmet=$(grep -c ': NOT met$' "$TMP/targets.txt" || true)
	echo "== Targets: $met met, $notmet not met"
	cat "$TMP/targets.txt"
	echo
	echo "took $(((SECONDS - T0) / 60)) min $(((SECONDS - T0) % 60)) s; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
}

case $WHAT in
xsk) bench_xsk ;;
socket) bench_socket ;;
fireperf) bench_fireperf ;;
live) bench_live ;;
flows) bench_flows ;;
xconn) bench_xconn ;;
trafgen) bench_trafgen ;;
stamp) bench_stamp ;;
metrics) bench_metrics ;;
otg) bench_otg ;;
all) bench_trafgen; bench_xsk; bench_live; bench_flows; bench_socket; bench_fireperf; bench_xconn; bench_stamp; bench_metrics; bench_otg ;;
*) echo "bench: unknown benchmark '$WHAT' (xsk, live, flows, socket, fireperf, xconn, trafgen, stamp, metrics, otg or all)" >&2; exit 2 ;;
esac
footer
# Only a run that got here (every section finished) is written: a failed one
# stopped with its error above.
if [[ -n $DOC ]]; then
	exec 1>&3 2>&4 3>&- 4>&-
	wait "$TEE"
	mkdir -p "$(dirname "$DOC")"
	python3 scripts/bench/paste.py "$TMP/run.txt" "$DOC"
	echo "bench: the run is in $DOC (link it from docs/benchmarks.md when it replaces the one there)" >&2
fi
