# shellcheck shell=bash
# Sourced by scripts/bench.sh; the helpers every section uses: the server,
# the frame yardstick (the server veth's rx_packets, sampled), alternating
# rounds with min/median/max, formatting, the lab.

# shellcheck source=tests/lib/server.sh
. tests/lib/server.sh
# start_server [SERVER OPTIONS...]: the server in the server namespace (SRV), its log
# $TMP/server.log started afresh; returns once it listens (tests/lib/server.sh).
start_server() {
	local rc=0
	: >"$TMP/server.log"
	xp_server_start "$XP_SERVER_NS" "$BIN" "$TMP/server.log" "$@" || rc=$?
	SRV=$XP_SERVER_PID
	((rc == 0)) || { echo "bench: server did not start" >&2; exit 1; }
}
stop_server() { kill "$SRV" 2>/dev/null; wait "$SRV" 2>/dev/null || true; SRV=""; }
# The tests the server has begun ("[peer] KIND test (" lines in its log).
tests_begun() { grep -cE '^\[[^]]*\] [a-z]+ test \(' "$TMP/server.log" || true; }
# wait_receiver N0 PID WHAT ERRFILE: until the server has begun a test more
# than N0 (tests_begun before PID, an idle --engine none client, started)
# and its XDP program is on the server veth; a condition with a 4-s
# deadline, not a sleep. Stops the bench with WHAT and ERRFILE otherwise.
wait_receiver() {
	local t0=$SECONDS
	until (($(tests_begun) > $1)) &&
		ip netns exec "$XP_SERVER_NS" ip -o link show "$XP_SERVER_DEV" | grep -qE " xdp(generic|drv)? "; do
		kill -0 "$2" 2>/dev/null || die "$3" "$4"
		((SECONDS - t0 < 4)) || die "$3 (no test with XDP on $XP_SERVER_DEV after 4 s)" "$4"
		sleep 0.05
	done
}

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
# target LABEL VALUE OP GOAL UNIT: is VALUE OP GOAL (OP >= or <=)? Prints
# "(target OP GOALUNIT: met)" or "... NOT met)" and adds the line to the run's
# list of targets, which bench.sh prints at the end.
target() {
	local v
	if [[ $3 == ">=" ]]; then v=$(echo "$2 >= $4" | bc -l); else v=$(echo "$2 <= $4" | bc -l); fi
	if ((v)); then v=met; else v="NOT met"; fi
	printf "(target %s %s%s: %s)" "$3" "$4" "$5" "$v"
	printf "%-62s %s%s  (target %s %s%s): %s\n" "$1" "$(printf "%.2f" "$2")" "$5" "$3" "$4" "$5" "$v" >>"$TMP/targets.txt"
}
# cmp_line LABEL NAME A B [GOAL]: the ratio of A's and B's medians, [worst -
# best pairing]; GOAL (e.g. 1.8: the median ratio >= 1.8x) is a target.
cmp_line() {
	local med
	med=$(echo "$(fig_of "$2" "$3" med) / $(fig_of "$2" "$4" med)" | bc -l)
	printf "%-44s %s  [%s - %s]%s\n" "$1" "$(ratio "$(fig_of "$2" "$3" med)" "$(fig_of "$2" "$4" med)")" \
		"$(ratio "$(fig_of "$2" "$3" min)" "$(fig_of "$2" "$4" max)")" "$(ratio "$(fig_of "$2" "$3" max)" "$(fig_of "$2" "$4" min)")" \
		"${5:+  $(target "${1%:}" "$med" ">=" "$5" x)}"
}

# pair_stats FILE X Y: "min median max won" of column X / column Y over the
# lines of FILE (one round a line), won the rounds where X >= Y.
pair_stats() {
	local s
	s=$(awk -v x="$2" -v y="$3" '{print $x / $y}' "$1" | mmm)
	echo "$s $(awk -v x="$2" -v y="$3" '$x >= $y {n++} END {print n + 0}' "$1")"
}
# paired_line LABEL NAME A B [GOAL]: the rounds as pairs (rounds() runs the
# sides of a round back to back, order swapped every round): the median of
# the per-round ratios A/B, [worst - best round], and the rounds A won. A
# cost measured on this host (CPU speed moving in plateaus of seconds) is
# read from pairs: two medians taken apart can sit on different plateaus.
# GOAL is a target on the paired median.
paired_line() {
	local pmin pmed pmax won
	paste -d' ' "$TMP/$2.$3" "$TMP/$2.$4" >"$TMP/$2.pairs"
	read -r pmin pmed pmax won < <(pair_stats "$TMP/$2.pairs" 1 2)
	printf "%-44s %s  [%s - %s], ahead in %d of %d rounds%s\n" "$1" "$(ratio "$pmed" 1)" "$(ratio "$pmin" 1)" \
		"$(ratio "$pmax" 1)" "$won" "$(wc -l <"$TMP/$2.pairs")" "${5:+  $(target "${1%:}" "$pmed" ">=" "$5" x)}"
}

# bench_scraper NS URL PERIOD OUT [MATCH]: a /metrics scraper in namespace NS,
# started once for a section (as Prometheus is: already running when a test
# starts; a python3 started per run costs about 0.6 CPU-s here, which was
# once charged to the endpoint). It GETs URL every PERIOD s while the file
# OUT.on exists, and otherwise looks for that file every PERIOD s. Each
# answered GET adds a line to OUT.log; the last body (with MATCH in it, when
# given) is kept in OUT. Its pid: SCRAPER_PID (in BG).
BENCH_SCRAPER='import os, sys, time, urllib.request
url, period, out, match = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4].encode()
while True:
    t = time.monotonic()
    if os.path.exists(out + ".on"):
        try:
            body = urllib.request.urlopen(url, timeout=2).read()
            if match in body:
                open(out, "wb").write(body)
            open(out + ".log", "a").write("%d\n" % len(body))
        except OSError:
            pass
    time.sleep(max(0, period - (time.monotonic() - t)))'
bench_scraper() {
	rm -f "$4" "$4.on" "$4.log"
	ip netns exec "$1" python3 -c "$BENCH_SCRAPER" "$2" "$3" "$4" "${5:-}" >/dev/null 2>&1 &
	SCRAPER_PID=$!
	BG+=("$SCRAPER_PID")
}

lab_up() { # direct|routed|firewall
	case $1 in
	direct) bash "$LAB" up --direct --queues 2 >/dev/null ;;
	routed) bash "$LAB" up --queues 2 >/dev/null ;;
	firewall) bash "$LAB" up --firewall --queues 2 >/dev/null ;;
	esac
	eval "$(bash "$LAB" env)"
}

# die WHAT FILE: a failed run stops the bench with its own error, never a 0.
die() { echo "bench: $1 failed: $(tail -n 3 "$2" 2>/dev/null | tr '\n' ' ')" >&2; exit 1; }

mmm() { sort -g | awk '{v[NR] = $1} END {print v[1], v[int((NR + 1) / 2)], v[NR]}'; }
mib() { printf "%9.1f MiB" "$(echo "$1 / 1024" | bc -l)"; }
per_conn() { printf "%7.0f B" "$(echo "$1 * 1024 / $2" | bc -l)"; }
fmt_bps() { printf "%8.2f Gbit/s" "$(echo "$1 / 1000000000" | bc -l)"; }
fmt_cps() { printf "%8.2f kconn/s" "$(echo "$1 / 1000" | bc -l)"; }
max() { if (($(echo "$1 > $2" | bc -l))); then echo "$1"; else echo "$2"; fi; }
