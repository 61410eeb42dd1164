#!/usr/bin/env bash
# The RFC 2544 suite's quick profile (short trials, 64 and 1518 bytes,
# throughput and latency) against a router with a known forwarding limit: an
# nftables limit of 100000 frames/s (burst 1000 packets) on the router's
# forward hook drops everything above it. The throughput found must be
# within 2 % of the limit at both sizes, no trial above it may pass, and the
# frames the trials say arrived must be on the server veth's own rx counter.
# The latency trials (26.2) at the throughput rate give every figure, per
# trial and as their mean (55_rfc2544_latency.sh checks them against the
# router's own capture). The text tables and plots run with --line-rate 1G
# at 1518 bytes (81 kframes/s, below the limit: few trials).
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
LIMIT=100000
client() { xp_exec client "$BIN" "$@"; }
rx_packets() { xp_exec server cat /sys/class/net/xps0/statistics/rx_packets; }
within_pct() { # WHAT GOT WANT PCT
	awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = (g - w) / w * 100; if (d < 0) d = -d; exit !(d <= p) }' ||
		{ echo "$1: $2 is not within $4 % of $3"; return 1; }
}

xp_case rfc2544_quick_finds_a_known_limit
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "nft limit $LIMIT/s in the router" xp_exec router nft -f - <<EOF2
table inet xpt11 {
	chain limiter {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 limit rate over $LIMIT/second burst 1000 packets counter drop
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt11 2>/dev/null"
xp_check "--rfc2544 --sizes 64,1518 --tests throughput,latency --trial 1 --latency-trials 2" eval '
	R0=$(rx_packets)
	client -c "$XP_SERVER4" --engine live --rfc2544 --sizes 64,1518 --tests throughput,latency --trial 1 \
		--latency-trials 2 -J >"$J" 2>"$XP_TMP/progress.txt"
	R1=$(rx_packets)'
xp_check "it announced the trials first" eval 'head -1 "$XP_TMP/progress.txt" | grep -q "^RFC 2544: 2 frame sizes, about"'
xp_check "a progress line per trial" eval '
	lines=$(grep -c "^\[" "$XP_TMP/progress.txt"); n=$(jq ".trials | length" "$J")
	[[ $lines == "$n" ]] || { echo "$lines progress lines, $n trials"; tail -5 "$XP_TMP/progress.txt"; false; }'
for len in 64 1518; do
	# On failure the size's trial lines: which trial below the limit lost frames, and after what.
	xp_check "$len bytes: throughput within 2 % of $LIMIT" eval '
		within_pct "NDR at $len" "$(jq ".sizes[] | select(.frame_bytes == $len) | .throughput.ndr_frames_per_second" "$J")" \
			$LIMIT 2 || { grep -E " $len B |again" "$XP_TMP/progress.txt"; false; }'
	xp_check "$len bytes: not sender-limited" expect_eq sender_limited \
		"$(jq ".sizes[] | select(.frame_bytes == $len) | .throughput.sender_limited" "$J")" false
done
# --confirm-loss 1 (the default): each repeat names a failed trial before it at the same size and rate,
# and the table's counts are the trials'.
xp_check "repeats run a failed trial's rate again, and the sizes count them" eval '
	jq -e "
		.trials as \$t |
		all(.trials | to_entries[] | select(.value.repeat_of != null);
			.value.repeat_of <= .key and
			\$t[.value.repeat_of - 1].verdict != \"pass\" and
			\$t[.value.repeat_of - 1].target_frames_per_second == .value.target_frames_per_second and
			\$t[.value.repeat_of - 1].frame_bytes == .value.frame_bytes) and
		([.trials[] | select(.repeat_of != null)] | length) == ([.sizes[].throughput.repeats] | add) and
		.settings.confirm_loss == 1" "$J" >/dev/null ||
	{ jq -c ".trials[] | {frame_bytes, target_frames_per_second, verdict, repeat_of}" "$J"; false; }'
# A paced trial makes a stall up at most 1 % above its rate, at most 5 ms of frames (or two 100-us
# units) back to back (engine/pacer.h): 500 at 100 kframes/s, half the router's 1000-packet allowance.
xp_check "no paced trial caught up more than 5 ms of frames at once" eval '
	jq -e "all(.trials[] | select(.test != \"calibrate\"); .largest_catchup_frames <=
		([.target_frames_per_second * 0.005, 2 * ((.target_frames_per_second * 0.0001 + 0.5) | floor)] | max) + 1)" \
		"$J" >/dev/null || { jq -c ".trials[] | {test, target_frames_per_second, largest_catchup_frames}" "$J"; false; }'
xp_check "no trial well above the limit passed" eval '
	[[ $(jq "[.trials[] | select(.test == \"throughput\" and .verdict == \"pass\" and .target_frames_per_second > $LIMIT * 1.02)] | length" "$J") == 0 ]]'
xp_check "the trials above the limit lost frames (nft dropped them)" eval '
	[[ $(jq "[.trials[] | select(.test == \"throughput\" and .verdict == \"loss\")] | length" "$J") -gt 0 ]] &&
	xp_exec router nft list table inet xpt11 | grep -Eq "counter packets [1-9]"'
for len in 64 1518; do
	xp_check "$len bytes: 2 latency trials at the throughput rate, each with its figures, and their mean" eval '
		jq -e --argjson len $len "
			(.sizes[] | select(.frame_bytes == \$len)) as \$z |
			[.trials[] | select(.frame_bytes == \$len and .test == \"latency\")] as \$t |
			(\$t | length) == 2 and \$z.latency.measured and \$z.latency.trials == 2 and
			all(\$t[]; .target_frames_per_second == \$z.latency.rate_frames_per_second and
				.latency.frames_timed == .received and
				.latency.min_us > 0 and .latency.min_us <= .latency.p50_us and
				.latency.p50_us <= .latency.p99_us and .latency.p99_us <= .latency.p99_9_us and
				.latency.p99_9_us <= .latency.max_us * 1.02) and
			((\$t | map(.latency.p99_us) | add / 2) - \$z.latency.p99_us | fabs) < 0.001 and
			\$z.latency.frames_timed == (\$t | map(.received) | add) and
			(\$z.latency.all_frames.buckets | length) > 0" "$J" >/dev/null ||
		{ jq ".sizes[] | select(.frame_bytes == $len) | .latency | del(.all_frames)" "$J"; false; }'
done
xp_check "received per the trials <= the server veth's rx_packets" eval '
	got=$(jq "[.trials[].received] | add" "$J"); (( got <= R1 - R0 )) || { echo "trials $got, rx $((R1 - R0))"; false; }'
xp_pass

xp_case rfc2544_text_tables_and_plots
xp_check "text tables and --plot" eval '
	client -c "$XP_SERVER4" --engine live --rfc2544 --sizes 1518 --tests throughput,latency,loss --trial 1 \
		--latency-trials 1 --line-rate 1G --plot "$XP_TMP/plots" >"$XP_TMP/out.txt" 2>/dev/null'
xp_check "throughput table" grep -q "^Throughput (RFC 2544 26.1)" "$XP_TMP/out.txt"
xp_check "frame loss table" grep -q "^Frame loss rate (RFC 2544 26.3)" "$XP_TMP/out.txt"
xp_check "latency table" grep -q "^Latency (RFC 2544 26.2)" "$XP_TMP/out.txt"
xp_check "plots in SVG and PNG" eval 'for p in throughput loss latency latency_dist; do [[ -s $XP_TMP/plots/$p.svg && -s $XP_TMP/plots/$p.png ]] || exit 1; done'
xp_check "PNG is a PNG" eval 'head -c 8 "$XP_TMP/plots/throughput.png" | od -An -tx1 | grep -q "89 50 4e 47"'
xp_check "summary.md shows the plots" eval 'for p in throughput loss latency latency_dist; do
	grep -q "($p.svg)" "$XP_TMP/plots/summary.md" || exit 1; done'
xp_pass

xp_case rfc2544_refusals
xp_check "a suite setting without --rfc2544" expect_rc 2 client -c "$XP_SERVER4" --sizes 64
xp_check "-b with --rfc2544" expect_rc 2 client -c "$XP_SERVER4" --rfc2544 -b 1Mpps
# Issue 11's mixes now run (56_imix.sh); what stays refused is a malformed one.
xp_check "imix twice" expect_rc 2 client -c "$XP_SERVER4" --rfc2544 --sizes imix,imix
xp_check "a weighted mix with a bad weight: refused, one line that names it" eval '
	out=$(client -c "$XP_SERVER4" --rfc2544 --sizes 64:7,570:x,1518:1 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"weight"*"is not a whole number"* ]] && (( $(wc -l <<<"$out") == 1 ))'
# --bidir now runs (58_bidir.sh); what stays refused is --bidir outside the suite.
xp_check "--bidir without --rfc2544: refused, one line that says to add it" eval '
	out=$(client -c "$XP_SERVER4" --bidir 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"--bidir"*"--rfc2544"* ]] && (( $(wc -l <<<"$out") == 1 ))'
xp_pass
