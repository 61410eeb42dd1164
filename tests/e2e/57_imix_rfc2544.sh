#!/usr/bin/env bash
# The RFC 2544 suite with --sizes imix (the quick profile: short trials,
# throughput and latency) against the lab's router given a known forwarding
# limit, as 53_rfc2544.sh does for single sizes: an nftables limit of 100000
# frames/s (burst 1000 packets) on its forward hook (1-s trials; a rate
# that loses or falls short runs once more, --confirm-loss's default, as a
# user runs it: with one run per rate, trials that fell 5-20 % short of
# their rate in one CI run each lowered the search, which ended at 7516).
# A mix's throughput is in frames/s of all its sizes, so the NDR found must be within 2 % of the
# limit; -J must name the mix (sizes, weights, mean 353.83), its L1/L2 bit/s
# must be the NDR times the mean (+ 20) times 8, the trials' sent frames must
# be the router's own count (an nft counter before the limiter), and latency
# must be measured over the mix. Then the text table's row says imix.
# Then the suite with a flow file as its traffic (issue 26): two flows at 1:3
# (128 and 512 bytes) through the same limit; the search runs on their
# aggregate, each trial keeps their shares, the trials' frames are the
# router's counter and at most the server veth's rx_packets, and each flow has
# its figures per trial and per size (-J) and its row in the text tables.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
LIMIT=100000
client() { xp_exec client "$BIN" "$@"; }
nft_get() {
	xp_exec router nft -j list counter inet xpt57 "$1" | jq -r '.nftables[] | .counter? // empty | "\(.packets) \(.bytes)"'
}
within_pct() { # WHAT GOT WANT PCT
	awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = (g - w) / w * 100; if (d < 0) d = -d; exit !(d <= p) }' ||
		{ echo "$1: $2 is not within $4 % of $3"; return 1; }
}

xp_case imix_rfc2544_lab
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "nft in the router: a counter of the test frames, then a limit of $LIMIT/s" xp_exec router nft -f - <<EOF2
table inet xpt57 {
	counter tframes { }
	chain limiter {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 udp dport 63000-63015 counter name tframes
		ip daddr 198.19.1.2 limit rate over $LIMIT/second burst 1000 packets counter drop
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt57 2>/dev/null"
xp_pass

xp_case imix_rfc2544_quick_finds_the_known_limit
xp_check "--rfc2544 --sizes imix --tests throughput,latency --trial 1 --latency-trials 1" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --sizes imix --tests throughput,latency --trial 1 \
		--latency-trials 1 --plot "$XP_TMP/plots" -J >"$J" 2>"$XP_TMP/rfc-progress.txt" ||
		{ tail -5 "$XP_TMP/rfc-progress.txt"; false; }'
sed "s/^/    /" "$XP_TMP/rfc-progress.txt"
# --plot's summary.md holds the text tables of the same run.
sed -n "/^RFC 2544 against/,/^Latency/p" "$XP_TMP/plots/summary.md" | sed "s/^/    /"
xp_check "--plot: the throughput and latency plots of the mix" eval '
	for p in throughput latency latency_dist; do [[ -s $XP_TMP/plots/$p.svg && -s $XP_TMP/plots/$p.png ]] || exit 1; done'
read -r up ub < <(nft_get tframes)
xp_check "imix: throughput within 2 % of the router's $LIMIT frames/s" eval '
	within_pct "NDR" "$(jq ".sizes[0].throughput.ndr_frames_per_second" "$J")" $LIMIT 2'
xp_check "imix: not sender-limited" expect_eq sender_limited "$(jq ".sizes[0].throughput.sender_limited" "$J")" false
xp_check "-J: the size is imix, with its sizes, weights and mean" eval '
	jq -e ".sizes[0].frame_bytes == \"imix\" and .sizes[0].frame_mix.spec == \"64:7,570:4,1518:1\" and
		(.sizes[0].frame_mix.mean_frame_bytes - 353.8333 | fabs) < 0.001 and .sizes[0].frame_mix.pattern_frames == 12 and
		all(.trials[]; .frame_bytes == \"imix\")" "$J" >/dev/null'
xp_check "-J: L1 and L2 bit/s are NDR x mean (+20) x 8" eval '
	jq -e ".sizes[0].throughput as \$t | \$t.ndr_frames_per_second > 0 and
		((\$t.ndr_l2_bps - \$t.ndr_frames_per_second * 4246 / 12 * 8) | fabs) < 1 and
		((\$t.ndr_l1_bps - \$t.ndr_frames_per_second * (4246 / 12 + 20) * 8) | fabs) < 1" "$J" >/dev/null'
xp_check "every trial's frames went through the router (its nft counter: sent in all trials)" eval '
	s=$(jq "[.trials[].sent] | add" "$J"); [[ $s == "$up" ]] || { echo "trials sent $s, router $up"; false; }'
xp_check "latency measured over the mix" eval 'jq -e ".sizes[0].latency.measured and .sizes[0].latency.frames_timed > 0" "$J" >/dev/null'
xp_check "the text table's row says imix, and the settings line gives the mix" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --sizes imix --tests throughput --trial 0.5 --line-rate 200M \
		--confirm-loss 0 2>/dev/null | tee "$XP_TMP/rfc.txt" | grep -A2 "^Throughput (RFC 2544 26.1)" | grep -Eq "^  imix +[0-9]+ " &&
	grep -q "imix: the frame mix 64:7,570:4,1518:1 (size:weight), interleaved frame by frame in a 12-frame pattern; mean 353.83 bytes" "$XP_TMP/rfc.txt" ||
	{ cat "$XP_TMP/rfc.txt"; false; }'
sed -n "/^Throughput/,/^\$/p" "$XP_TMP/rfc.txt" | sed "s/^/    /"
xp_pass

xp_case flows_rfc2544_aggregate
FLOWS=$XP_TMP/flows.json
cat >"$FLOWS" <<'JSON'
{"flows": [
  {"name": "ef", "packet": [{"choice": "ethernet"}, {"choice": "ipv4"}, {"choice": "udp"}],
   "size": {"choice": "fixed", "fixed": 128}, "rate": {"choice": "pps", "pps": 1000},
   "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}},
  {"name": "be", "packet": [{"choice": "ethernet"}, {"choice": "ipv4"}, {"choice": "udp"}],
   "size": {"choice": "fixed", "fixed": 512}, "rate": {"choice": "pps", "pps": 3000},
   "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}}
]}
JSON
rx_packets() { xp_exec server cat /sys/class/net/xps0/statistics/rx_packets; }
read -r up0 _ < <(nft_get tframes)
R0=$(rx_packets)
# --line-rate 420M: the search's top is 120 413 frames/s of the flows' mean 416 bytes (no calibration trial).
xp_check "--rfc2544 --flows FILE --tests throughput,latency --trial 1 --latency-trials 1 --line-rate 420M" eval '
	client -c "$XP_SERVER4" --engine live --rfc2544 --flows "$FLOWS" --tests throughput,latency --trial 1 \
		--latency-trials 1 --line-rate 420M --plot "$XP_TMP/fplots" -J >"$J" 2>"$XP_TMP/flows-progress.txt" ||
		{ tail -5 "$XP_TMP/flows-progress.txt"; false; }'
R1=$(rx_packets)
read -r up1 _ < <(nft_get tframes)
sed "s/^/    /" "$XP_TMP/flows-progress.txt"
xp_check "it announced one pass of the 2 flows" grep -q "^RFC 2544: 2 flows at their own sizes (one pass)" "$XP_TMP/flows-progress.txt"
xp_check "the aggregate's throughput within 2 % of the router's $LIMIT frames/s" eval '
	within_pct "NDR" "$(jq ".sizes[0].throughput.ndr_frames_per_second" "$J")" $LIMIT 2'
xp_check "-J: one size, the flows, at their mean 416 bytes" eval '
	jq -e "(.sizes | length) == 1 and .sizes[0].frame_bytes == \"flows\" and .sizes[0].mean_frame_bytes == 416 and
		all(.trials[]; .frame_bytes == \"flows\")" "$J" >/dev/null'
xp_check "every trial's frames went through the router (its nft counter: sent in all trials)" eval '
	s=$(jq "[.trials[].sent] | add" "$J"); [[ $s == "$((up1 - up0))" ]] || { echo "trials sent $s, router $((up1 - up0))"; false; }'
xp_check "received per the trials <= the server veth's rx_packets (the rest: control segments, ARP)" eval '
	got=$(jq "[.trials[].received] | add" "$J"); echo "trials received $got, veth rx $((R1 - R0))"
	(( got <= R1 - R0 && R1 - R0 - got < 2000 ))'
xp_check "each trial: both flows, be:ef sent 3:1 (the shares kept), their received the trial's" eval '
	jq -e "all(.trials[]; (.flows | length) == 2 and .flows[0].name == \"ef\" and .flows[1].name == \"be\" and
		((.flows[1].sent / .flows[0].sent) - 3 | fabs) < 0.01 and
		(.flows | map(.received) | add) == .received and (.flows | map(.sent) | add) == .sent)" "$J" >/dev/null ||
	{ jq -c ".trials[] | {target_frames_per_second, sent, received, flows: [.flows[] | {sent, received}]}" "$J"; false; }'
xp_check "each flow: its share, its NDR, its loss above the NDR and its latency" eval '
	jq -e ".sizes[0] as \$z | (\$z.flows | length) == 2 and \$z.flows[0].share == 0.25 and \$z.flows[1].share == 0.75 and
		all(\$z.flows[]; (.ndr_frames_per_second - \$z.throughput.ndr_frames_per_second * .share | fabs) < 1 and
			.above_ndr.loss_percent >= 0 and .above_ndr.target_frames_per_second > \$z.throughput.ndr_frames_per_second and
			.latency.measured and .latency.frames_timed > 0 and .latency.p50_us <= .latency.p99_us)" "$J" >/dev/null ||
	{ jq -c ".sizes[0].flows" "$J"; false; }'
xp_check "the text tables (in the --plot summary.md): a row per flow" eval '
	grep -q "^Flows: each at its share of every trial" "$XP_TMP/fplots/summary.md" &&
	grep -Eq "^ef +25.00 +128.0 +[0-9]+ " "$XP_TMP/fplots/summary.md" && grep -Eq "^be +75.00 +512.0 +[0-9]+ " "$XP_TMP/fplots/summary.md"'
sed -n "/^Flows:/,/^\$/p" "$XP_TMP/fplots/summary.md" | sed "s/^/    /"
xp_pass
