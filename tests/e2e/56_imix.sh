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
# Both frame engines (live, xsk), UDP and TCP (64-byte TCP frames carry the
# stamp in the IPv4 ID), one queue each so that one thread's pattern
# is what the capture sees. 57_imix_rfc2544.sh runs the RFC 2544 suite on a mix.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# nft_get NAME: "packets bytes" of the router's counter NAME (tframes or ctrl)
nft_get() { # [FAMILY TABLE] NAME
	local fam=inet tab=xpt56
	(($# == 3)) && { fam=$1 tab=$2; shift 2; }
	xp_exec router nft -j list counter "$fam" "$tab" "$1" | jq -r '.nftables[] | .counter? // empty | "\(.packets) \(.bytes)"'
}
PATTERN="60 566 60 60 566 60 1514 60 566 60 566 60"

xp_case imix_lab
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "nft counters in the router: test frames and control segments" xp_exec router nft -f - <<'EOF2'
table inet xpt56 {
	counter tframes { }
	counter ctrl { }
	counter own { }
	chain count {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 meta l4proto { tcp, udp } th dport 63000-63015 counter name tframes
		ip daddr 198.19.1.2 tcp dport 5301 counter name ctrl
	}
	chain own_out {
		type filter hook output priority 0; policy accept;
		oifname "xpr1" counter name own
	}
}
table arp xpt56a {
	counter own { }
	chain own_out {
		type filter hook output priority 0; policy accept;
		oifname "xpr1" counter name own
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt56 2>/dev/null; ip netns exec xp-router nft delete table arp xpt56a 2>/dev/null"
xp_pass

for RUN in live/udp xsk/udp live/tcp xsk/tcp; do
	ENGINE=${RUN%/*} PROTO=${RUN#*/} UFLAG=; [[ $PROTO == udp ]] && UFLAG=-u
	xp_case "imix_${ENGINE}_${PROTO}_counts_sizes_order_and_stamps"
	PC=$XP_TMP/imix-$ENGINE-$PROTO.pcap
	xp_check "capture on the router's server-facing veth" xp_capture_bg router tcpdump -i xpr1 -Q out -s 1600 \
		-w "$PC" -B 32768 -nn dst host 198.19.1.2 and dst portrange 63000-63015
	CAP_PID=$XP_BG_PID CAP_LOG=$XP_BG_LOG
	xp_exec router nft reset counters table inet xpt56 >/dev/null
	xp_exec router nft reset counters table arp xpt56a >/dev/null
	p0=$(stat_of server xps0 rx_packets) b0=$(stat_of server xps0 rx_bytes)
	xp_check "$UFLAG -l imix -b 20kpps -t 2 --queues 1 --engine $ENGINE" eval '
		client -c "$XP_SERVER4" $UFLAG -l imix -b 20kpps -t 2 --queues 1 --engine $ENGINE -J >"$J"'
	sleep 0.5
	p1=$(stat_of server xps0 rx_packets) b1=$(stat_of server xps0 rx_bytes)
	read -r up ub < <(nft_get tframes)
	read -r cp cb < <(nft_get ctrl)
	read -r op ob < <(nft_get own)
	read -r ap ab < <(nft_get arp xpt56a own)
	sent=$(jqv .end.sum.sent.packets) sbytes=$(jqv .end.sum.sent.bytes)
	recv=$(jqv .end.sum.received.packets) rbytes=$(jqv .end.sum.received.bytes)
	echo "    $ENGINE $PROTO: sent $sent frames $sbytes bytes; server $recv / $rbytes; router nft test frames $up / $ub (+14/frame $((ub + 14 * up))), ctrl $cp / $cb, router's own $op IP + $ap ARP; xps0 rx $((p1 - p0)) / $((b1 - b0))"
	xp_check "the report names the mix" expect_eq frame_mix "$(jqv .start.frame_mix)" "imix (64:7,570:4,1518:1)"
	xp_check "about 40000 sent (20 kpps x 2 s) (or said short)" expect_near_or_said_short sent "$sent" 40000 2000 "$J"
	xp_check "received == sent, bytes too" eval '[[ $recv == "$sent" && $rbytes == "$sbytes" ]] ||
		{ echo "sent $sent/$sbytes, received $recv/$rbytes"; false; }'
	# Every size carries the stamp (64-byte TCP: in the IPv4 ID): the measurement core saw each frame once.
	xp_check "stamps: every frame stamped, received once, none lost, duplicated or reordered" eval '
		jq -e ".start.stamps.stamped and .end.sum.measurement.sent == .end.sum.sent.packets and
			.end.sum.measurement.received == .end.sum.received.packets and .end.sum.measurement.lost == 0 and
			.end.sum.measurement.duplicates == 0 and .end.sum.measurement.reordered == 0" "$J" >/dev/null ||
		jq .end.sum.measurement "$J"'
	xp_check "router's nft: frames == sent, IP bytes + 14 per frame == sent bytes" eval '
		[[ $up == "$sent" && $((ub + 14 * up)) == "$sbytes" ]]'
	# The server veth also takes what the router sends it itself (ARP, neighbour discovery, MLD reports
	# in the first seconds after the lab is up: not forwarded, so not in nft's forward counters; counted
	# by the router's output hooks, IP and ARP).
	xp_check "server veth rx_packets == test frames + control segments + the router's own" eval '
		d=$((p1 - p0)) lo=$((up + cp + op + ap)); ((d == lo)) ||
		{ echo "rx_packets $d, nft forward $((up + cp)) + router own $op IP, $ap ARP"; false; }'
	# veth counts an XDP frame's bytes after its Ethernet header is pulled: IP bytes, as nft does (the
	# packets the server's stack takes, control segments and the router's own, may count their 14 header
	# bytes too; nft's arp family counts an ARP packet with its Ethernet header, 42 bytes, up to 60 padded).
	xp_check "server veth rx_bytes == test + control + the router's own bytes (+ at most 14 per packet the stack takes)" eval '
		d=$((b1 - b0)) lo=$((ub + cb + ob + ab)) extra=$((14 * (cp + op + ap) + 18 * ap)); ((d >= lo && d <= lo + extra)) ||
		{ echo "rx_bytes $d, nft bytes $lo + up to $extra"; false; }'
	xp_check "the capture ended with no frame dropped" eval '
		sleep 1; kill -INT $CAP_PID; wait $CAP_PID 2>/dev/null; cat "$CAP_LOG"
		grep -q "^0 packets dropped by kernel" "$CAP_LOG"'
	# One tshark pass: frame.len is the length on the wire without FCS.
	F=$XP_TMP/fields-$ENGINE-$PROTO.txt
	xp_check "tshark reads the capture" eval 'tshark -r "$PC" -o $PROTO.check_checksum:TRUE -o ip.check_checksum:TRUE \
		-T fields -e frame.len -e ip.checksum.status -e $PROTO.checksum.status >"$F" 2>/dev/null'
	xp_check "tshark: as many frames as sent" expect_eq frames "$(wc -l <"$F")" "$sent"
	xp_check "tshark frame-length histogram: 7:4:1 of 60/566/1514 (within one pattern)" eval '
		cut -f1 "$F" | sort -n | uniq -c | tee "$XP_TMP/hist-$ENGINE-$PROTO.txt" |
		awk -v n="$sent" "
			{ c[\$2] = \$1; k++ }
			END {
				p = int(n / 12); if (k != 3) exit 1
				if (c[60] < 7 * p || c[60] > 7 * p + 7) exit 1
				if (c[566] < 4 * p || c[566] > 4 * p + 4) exit 1
				if (c[1514] < p || c[1514] > p + 1) exit 1
			}" || { cat "$XP_TMP/hist-$ENGINE-$PROTO.txt"; false; }
		'
	sed "s/^/    $ENGINE $PROTO frame.len histogram: /" "$XP_TMP/hist-$ENGINE-$PROTO.txt"
	xp_check "tshark: the frames follow the interleaved 12-frame pattern, in order" eval '
		cut -f1 "$F" | awk -v pat="$PATTERN" "
			BEGIN { np = split(pat, want, \" \") }
			{ if (\$1 != want[(NR - 1) % np + 1]) { print \"frame \" NR \": \" \$1 \" bytes, the pattern says \" want[(NR - 1) % np + 1]; bad = 1; exit } }
			END { exit bad }"'
	xp_check "tshark: every IPv4 header and $PROTO checksum good" eval '
		[[ $(cut -f2,3 "$F" | sort -u) == "1	1" ]] || { cut -f2,3 "$F" | sort | uniq -c; false; }'
	xp_pass
done

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
