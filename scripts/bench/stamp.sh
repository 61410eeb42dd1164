# shellcheck shell=bash
# Sourced by scripts/bench.sh; the stamp section: what the stamps and the
# server's per-frame accounting cost (issue 10 point 9). Three views:
#
#  1. end to end (the target): xdpperf's own maximum, one thread, 64-byte
#     IPv4/TCP frames (stamp in the IPv4 ID + payload), direct pair, with
#     stamps (the default) vs --no-stamps (no stamp, and the server's XDP
#     program only counts), live and xsk engines; $BENCH_ROUNDS alternating
#     rounds. Yardstick: the server veth's rx_packets. On veth the server's
#     XDP program runs on the sending CPU, so this is the sender's and the
#     receiver's cost together. Target: with >= 0.9x without (median).
#  2. the sender's own cost: build/tests/tools/stampgen (the generator with
#     stamps on vs off; the server counts and accounts nothing in both), what
#     a sender on its own host would lose.
#  3. the receiver's own cost: build/tests/tools/meascost, the server
#     program's mean run time per frame by BPF_PROG_RUN, accounting off vs on
#     (min of 5 runs; it checks the program accounted every frame).

STAMPGEN=build/tests/tools/stampgen   # built by make (tests/tools/stampgen.c)
MEASCOST=build/tests/tools/meascost   # built by make (tests/tools/meascost.c)
srv_rx_packets() { ip netns exec "$XP_SERVER_NS" cat "/sys/class/net/$XP_SERVER_DEV/statistics/rx_packets"; }

# One stampgen run (ENGINE on|off) with the server counting (an --engine none
# test keeps its XDP program on the veth, which frames sent by XDP need);
# prints the server veth's received pps over the run.
stamp_run() { # ENGINE on|off
	local n0 cnt a b out sent secs stamped
	n0=$(tests_begun)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 3)) --engine none -J >"$TMP/sn.json" 2>&1 &
	cnt=$!
	wait_receiver "$n0" "$cnt" "xdpperf --engine none (counting for stampgen)" "$TMP/sn.json"
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
	[[ -x $MEASCOST ]] || { echo "bench: build first (make): $MEASCOST is missing" >&2; exit 1; }
	echo "== Cost of the stamps, end to end: xdpperf's one-thread maximum, 64-byte IPv4/TCP frames, direct pair,"
	echo "   ${T} s per run, $ROUNDS alternating rounds; with stamps (default) vs --no-stamps; yardstick: the server"
	echo "   veth's rx_packets (on veth the server's XDP program runs on the sending CPU: both ends' cost)"
	bash "$LAB" up --direct --queues 2 >/dev/null
	eval "$(bash "$LAB" env)"
	start_server
	echo "live stamped | live --no-stamps | xsk stamped | xsk --no-stamps"
	rounds stamp.e2e "$ROUNDS" "run_engine live 1" "run_engine live 1 --no-stamps" "run_engine xsk 1" \
		"run_engine xsk 1 --no-stamps"
	printf "%-16s %-44s %-44s\n" "" "stamped min / median / max" "--no-stamps min / median / max"
	printf "%-16s %-44s %-44s\n" live "$(mmm_line stamp.e2e 0)" "$(mmm_line stamp.e2e 1)"
	printf "%-16s %-44s %-44s\n" xsk "$(mmm_line stamp.e2e 2)" "$(mmm_line stamp.e2e 3)"
	cmp_line "live, stamps vs --no-stamps, end to end:" stamp.e2e 0 1 0.9
	cmp_line "xsk, stamps vs --no-stamps, end to end:" stamp.e2e 2 3
	echo

	echo "== The sender's own cost: stampgen (the generator, stamps on vs off; the server only counts in both),"
	echo "   one thread, direct pair, ${T} s per run, $ROUNDS rounds of on/off/off/on (order swapped each round)"
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
	echo "live, the sender's own cost: $(printf "%5.2fx" "${ST[3,med]}") median of the rounds [$(printf "%.2fx - %.2fx" "${ST[3,min]}" "${ST[3,max]}")]"
	echo "xsk, the sender's own cost:  $(printf "%5.2fx" "${ST[6,med]}") median of the rounds [$(printf "%.2fx - %.2fx" "${ST[6,min]}" "${ST[6,max]}")]"
	echo

	echo "== The receiver's own cost: the server program's mean run time per 64-byte frame (BPF_PROG_RUN, $MEASCOST,"
	echo "   min of 5 runs); single: each frame the next of its stream, one run each (the run's own overhead, the same"
	echo "   in every case, included); repeat: one frame repeated (a duplicate after the first)"
	local mc
	mc=$(for _ in 1 2 3 4 5; do "$MEASCOST" -n 200000 || exit 1; done) || { echo "bench: meascost failed" >&2; exit 1; }
	awk '{split($1,a,"=");split($2,b,"=");split($4,c,"="); k=b[2]" "a[2]; if(!(k in m)||c[2]<m[k])m[k]=c[2]}
	     END{printf "%-8s %10s %10s %12s %18s\n", "mode", "off", "on", "on_oneway", "accounting (oneway)";
	         for (md in x) ; split("single repeat", ms, " ");
	         for (i = 1; i <= 2; i++) { md = ms[i];
	           printf "%-8s %7.1f ns %7.1f ns %9.1f ns %15.1f ns\n", md, m[md" off"], m[md" on"], m[md" on_oneway"], m[md" on_oneway"] - m[md" off"] } }' <<<"$mc"
	echo
}
