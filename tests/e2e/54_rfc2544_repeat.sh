#!/usr/bin/env bash
# Issue 11 point 4, repeatability: the same RFC 2544 throughput test (64
# bytes, 1-s trials, the top of the search given by --line-rate 100M so no
# calibration trial) five times against the lab's router with a known
# forwarding limit (an nftables limit of 100000 frames/s, burst 1000
# packets, as in 53_rfc2544). The five throughputs may spread by at most 2 %
# of their mean, each is within 2 % of the limit, and nft's own counter
# dropped frames in every run (the search found the limit, not the sender's).
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
LIMIT=100000
RUNS=5
client() { xp_exec client "$BIN" "$@"; }
nft_drops() {
	xp_exec router nft -j list table inet xpt11r |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0'
}

xp_case rfc2544_throughput_repeats_within_2_percent
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "nft limit $LIMIT/s in the router" xp_exec router nft -f - <<EOF2
table inet xpt11r {
	chain limiter {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 limit rate over $LIMIT/second burst 1000 packets counter drop
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt11r 2>/dev/null"
NDRS=()
for i in $(seq $RUNS); do
	xp_check "run $i: --rfc2544 --sizes 64 --tests throughput --trial 1 --line-rate 100M; nft dropped frames" eval '
		d0=$(nft_drops)
		client -c "$XP_SERVER4" --engine live --rfc2544 --sizes 64 --tests throughput --trial 1 --line-rate 100M \
			-J >"$XP_TMP/run$i.json" 2>"$XP_TMP/progress$i.txt" || { tail -3 "$XP_TMP/progress$i.txt"; false; }
		d1=$(nft_drops); (( d1 > d0 )) || { echo "nft dropped nothing in run $i"; false; }
		NDRS+=("$(jq ".sizes[0].throughput.ndr_frames_per_second" "$XP_TMP/run$i.json")")'
done
xp_check "the $RUNS throughputs spread by at most 2 % of their mean, each within 2 % of $LIMIT" eval '
	printf "%s\n" "${NDRS[@]}" | awk -v lim=$LIMIT -v runs=$RUNS "
		{ v[NR] = \$1; s += \$1; if (NR == 1 || \$1 < lo) lo = \$1; if (NR == 1 || \$1 > hi) hi = \$1 }
		END { m = s / NR; sp = (hi - lo) / m * 100
		      printf \"throughputs:\"; for (i = 1; i <= NR; i++) printf \" %d\", v[i]
		      printf \"; mean %.0f, spread %.2f %% of it\n\", m, sp
		      bad = NR != runs || sp > 2
		      for (i = 1; i <= NR; i++) { d = (v[i] - lim) / lim * 100; if (d < -2 || d > 2) bad = 1 }
		      exit bad }" || {
		for i in $(seq $RUNS); do echo "run $i:"; grep -E "throughput|again" "$XP_TMP/progress$i.txt"; done; false; }'
xp_pass
