# shellcheck shell=bash
# Sourced by scripts/bench.sh; the stamp section.
#
# stamp:  the cost of the stamp (bpf/lib/stamp.h) and its send-interval bins:
#         maximum pps of the live engine (and, beside it, the AF_XDP engine)
#         with stamps on vs the same build with them off (ival 0), 64-byte
#         IPv4/TCP frames (stamp in the IPv4 ID + payload), one thread,
#         direct pair, driven by build/tests/tools/stampgen. Yardstick: the
#         server veth's rx_packets; $BENCH_ROUNDS rounds of on/off/off/on
#         (order swapped each round), min/median/max per side and of the
#         rounds' ratios. Target: on >= 0.9x off (median of the rounds).

STAMPGEN=build/tests/tools/stampgen   # built by make (tests/tools/stampgen.c)
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
	echo "live, stamps on vs off:  $(printf "%5.2fx" "${ST[3,med]}") median of the rounds [$(printf "%.2fx - %.2fx" "${ST[3,min]}" "${ST[3,max]}")]; medians per side $(ratio "${ST[1,med]}" "${ST[2,med]}")  $(target "live, stamps on vs off (median of the rounds)" "${ST[3,med]}" ">=" 0.9 x)"
	echo "xsk, stamps on vs off:   $(printf "%5.2fx" "${ST[6,med]}") median of the rounds [$(printf "%.2fx - %.2fx" "${ST[6,min]}" "${ST[6,max]}")]; medians per side $(ratio "${ST[4,med]}" "${ST[5,med]}")"
	echo
}
