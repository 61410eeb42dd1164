#!/usr/bin/env bash
# Mixed frame sizes (-l imix, --sizes imix) in the routed lab, checked
# against counters and a capture xdpperf did not write:
#  - nftables counters in the router (xpt56: the test's UDP frames and the
#    control connection apart; nft counts IP bytes, + 14 per frame is the
#    Ethernet frame without FCS);
#  - the server veth's rx_packets / rx_bytes (test frames + control segments,
#    exactly);
#  - a capture on the router's server-facing veth, read by tshark: the
#    frame-length histogram is 7:4:1 of 60/566/1514 bytes (64/570/1518 with
#    FCS) and the frames come in IMIX's interleaved 12-frame order.
# Both frame engines (live, xsk), one queue each so that one thread's pattern
# is what the capture sees; then an RFC 2544 quick run with --sizes imix.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# nft_get NAME: "packets bytes" of the router's counter NAME (tframes or ctrl)
nft_get() {
	xp_exec router nft -j list counter inet xpt56 "$1" | jq -r '.nftables[] | .counter? // empty | "\(.packets) \(.bytes)"'
}
PATTERN="60 566 60 60 566 60 1514 60 566 60 566 60"

xp_case imix_lab
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "nft counters in the router: test frames and control segments" xp_exec router nft -f - <<'EOF2'
table inet xpt56 {
	counter tframes { }
	counter ctrl { }
	chain count {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 udp dport 63000-63015 counter name tframes
		ip daddr 198.19.1.2 tcp dport 5301 counter name ctrl
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt56 2>/dev/null"
xp_pass

for ENGINE in live xsk; do
	xp_case "imix_${ENGINE}_counts_sizes_and_order"
	PC=$XP_TMP/imix-$ENGINE.pcap
	xp_check "capture on the router's server-facing veth" xp_capture_bg router tcpdump -i xpr1 -Q out -s 1600 \
		-w "$PC" -B 32768 -nn udp and dst host 198.19.1.2
	CAP_PID=$XP_BG_PID CAP_LOG=$XP_BG_LOG
	xp_exec router nft reset counters table inet xpt56 >/dev/null
	p0=$(stat_of server xps0 rx_packets) b0=$(stat_of server xps0 rx_bytes)
	xp_check "-u -l imix -b 20kpps -t 2 --queues 1 --engine $ENGINE" eval '
		client -c "$XP_SERVER4" -u -l imix -b 20kpps -t 2 --queues 1 --engine $ENGINE -J >"$J"'
	sleep 0.5
	p1=$(stat_of server xps0 rx_packets) b1=$(stat_of server xps0 rx_bytes)
	read -r up ub < <(nft_get tframes)
	read -r cp cb < <(nft_get ctrl)
	sent=$(jqv .end.sum.sent.packets) sbytes=$(jqv .end.sum.sent.bytes)
	recv=$(jqv .end.sum.received.packets) rbytes=$(jqv .end.sum.received.bytes)
	echo "    $ENGINE: sent $sent frames $sbytes bytes; server $recv / $rbytes; router nft udp $up / $ub (+14/frame $((ub + 14 * up))), ctrl $cp / $cb; xps0 rx $((p1 - p0)) / $((b1 - b0))"
	xp_check "the report names the mix" expect_eq frame_mix "$(jqv .start.frame_mix)" "imix (64:7,570:4,1518:1)"
	xp_check "about 40000 sent (20 kpps x 2 s)" expect_near sent "$sent" 40000 2000
	xp_check "received == sent, bytes too" eval '[[ $recv == "$sent" && $rbytes == "$sbytes" ]] ||
		{ echo "sent $sent/$sbytes, received $recv/$rbytes"; false; }'
	xp_check "router's nft: frames == sent, IP bytes + 14 per frame == sent bytes" eval '
		[[ $up == "$sent" && $((ub + 14 * up)) == "$sbytes" ]]'
	# The server veth also takes what the router sends it itself (ARP, neighbour probes: not forwarded,
	# so not in nft's forward counters): at most a few packets of at most 64 bytes each.
	xp_check "server veth rx_packets == test frames + control segments (+ at most 4 of the router's own)" eval '
		d=$((p1 - p0)) lo=$((up + cp)); ((d >= lo && d <= lo + 4)) || { echo "rx_packets $d, nft $lo"; false; }'
	# veth counts an XDP frame's bytes after its Ethernet header is pulled: IP bytes, as nft does (the
	# control segments the server's stack takes may count their 14 header bytes too).
	xp_check "server veth rx_bytes == test + control IP bytes (+ at most 14 per control segment, 64 per other)" eval '
		d=$((b1 - b0)) lo=$((ub + cb)) extra=$((p1 - p0 - up - cp)); ((d >= lo && d <= lo + 14 * cp + 64 * extra)) ||
		{ echo "rx_bytes $d, nft IP bytes $lo + up to $((14 * cp + 64 * extra))"; false; }'
	xp_check "the capture ended with no frame dropped" eval '
		sleep 1; kill -INT $CAP_PID; wait $CAP_PID 2>/dev/null; cat "$CAP_LOG"
		grep -q "^0 packets dropped by kernel" "$CAP_LOG"'
	# One tshark pass: frame.len is the length on the wire without FCS.
	F=$XP_TMP/fields-$ENGINE.txt
	xp_check "tshark reads the capture" eval 'tshark -r "$PC" -o udp.check_checksum:TRUE -o ip.check_checksum:TRUE \
		-T fields -e frame.len -e ip.checksum.status -e udp.checksum.status >"$F" 2>/dev/null'
	xp_check "tshark: as many frames as sent" expect_eq frames "$(wc -l <"$F")" "$sent"
	xp_check "tshark frame-length histogram: 7:4:1 of 60/566/1514 (within one pattern)" eval '
		cut -f1 "$F" | sort -n | uniq -c | tee "$XP_TMP/hist-$ENGINE.txt" |
		awk -v n="$sent" "
			{ c[\$2] = \$1; k++ }
			END {
				p = int(n / 12); if (k != 3) exit 1
				if (c[60] < 7 * p || c[60] > 7 * p + 7) exit 1
				if (c[566] < 4 * p || c[566] > 4 * p + 4) exit 1
				if (c[1514] < p || c[1514] > p + 1) exit 1
			}" || { cat "$XP_TMP/hist-$ENGINE.txt"; false; }
		'
	sed "s/^/    $ENGINE frame.len histogram: /" "$XP_TMP/hist-$ENGINE.txt"
	xp_check "tshark: the frames follow the interleaved 12-frame pattern, in order" eval '
		cut -f1 "$F" | awk -v pat="$PATTERN" "
			BEGIN { np = split(pat, want, \" \") }
			{ if (\$1 != want[(NR - 1) % np + 1]) { print \"frame \" NR \": \" \$1 \" bytes, the pattern says \" want[(NR - 1) % np + 1]; bad = 1; exit } }
			END { exit bad }"'
	xp_check "tshark: every IPv4 header and UDP checksum good" eval '
		[[ $(cut -f2,3 "$F" | sort -u) == "1	1" ]] || { cut -f2,3 "$F" | sort | uniq -c; false; }'
	xp_pass
done

xp_case rfc2544_quick_imix
xp_exec router nft reset counters table inet xpt56 >/dev/null
xp_check "--rfc2544 --sizes imix --tests throughput,latency --trial 1 --latency-trials 1" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --sizes imix --tests throughput,latency --trial 1 \
		--latency-trials 1 --confirm-loss 0 -J >"$J" 2>"$XP_TMP/rfc-progress.txt" || { tail -5 "$XP_TMP/rfc-progress.txt"; false; }'
read -r up ub < <(nft_get tframes)
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
xp_check "the text table's rows say imix" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --sizes imix --tests throughput --trial 0.5 --line-rate 1G \
		--confirm-loss 0 2>/dev/null | tee "$XP_TMP/rfc.txt" | grep -A2 "^Throughput (RFC 2544 26.1)" | grep -Eq "^  imix +[0-9]+ " &&
	grep -q "imix: the frame mix 64:7,570:4,1518:1 (size:weight), interleaved frame by frame in a 12-frame pattern; mean 353.83 bytes" "$XP_TMP/rfc.txt" ||
	{ cat "$XP_TMP/rfc.txt"; false; }'
sed -n "/^Throughput/,/^\$/p" "$XP_TMP/rfc.txt" | sed "s/^/    /"
xp_pass

xp_case imix_refusals
xp_check "-l 64:7 (one size): usage error, one line" eval '
	out=$(client -c "$XP_SERVER4" -l 64:7 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"two sizes or more"* ]] && (( $(wc -l <<<"$out") == 1 ))'
xp_check "-l imix with -x (connection test): usage error, one line" eval '
	out=$(client -c "$XP_SERVER4" -x -l imix -t 1 2>&1); rc=$?; echo "$out"
	((rc == 2)) && (( $(wc -l <<<"$out") == 1 ))'
xp_check "-6 TCP imix (64 bytes too small): usage error, one line" eval '
	out=$(client -c "$XP_SERVER6" -l imix -t 1 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"too small"* ]] && (( $(wc -l <<<"$out") == 1 ))'
xp_pass
