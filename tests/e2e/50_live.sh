#!/usr/bin/env bash
# End-to-end tests of the XDP live-frames engine and of rate control: exact
# counts, per-interval accuracy of -b for live and xsk, bursts, auto engine
# selection, and that every engine puts the same frames on the wire.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN

client() { xp_exec client "$BIN" "$@"; }
# worst deviation (in %) of any full interval's received rate from TARGET pps
worst_dev() {
	jq --argjson t "$1" '[.intervals[] | select(.seconds > 0.9) | ((.received.packets_per_second - $t) / $t * 100) | fabs] | max' "$J"
}
within() { # WHAT VALUE LIMIT (floats)
	awk -v v="$2" -v l="$3" 'BEGIN { exit !(v <= l) }' || { echo "$1: $2 > $3"; return 1; }
}

# ---------------------------------------------------------------------------
xp_case live_exact_counts_direct
xp_check "lab up (direct, 2 queues)" xp_lab_up --direct --queues 2
xp_check "server" start_server
xp_check "live run 3 s at 100 kpps" eval 'client -c "$XP_SERVER4" --engine live -t 3 -b 100kpps -J >"$J"'
xp_check "engine is live" expect_eq engine "$(jqv .start.engine)/$(jqv .start.engine_mode)" live/live
xp_check "received == sent" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
xp_check "about 300000 sent" expect_near sent "$(jqv .end.sum.sent.packets)" 300000 6000
xp_pass

# ---------------------------------------------------------------------------
xp_case auto_engine_picks_live
xp_check "default engine run" eval 'client -c "$XP_SERVER4" -t 1 -b 10kpps -J >"$J"'
xp_check "auto chose live on this kernel" expect_eq engine "$(jqv .start.engine)" live
xp_pass

# ---------------------------------------------------------------------------
# Rate control: every full 1-second interval within 2 % of the target, as the
# server's XDP program counts it.
for spec in "live 10000 10kpps" "live 1000000 1Mpps" "xsk 100000 100kpps" "xsk 10000 10kpps"; do
	read -r eng target rate <<<"$spec"
	xp_case "rate_${eng}_${rate}_within_2_percent"
	xp_check "run" eval 'client -c "$XP_SERVER4" --engine $eng -t 4 -b $rate --queues 1 -J >"$J"'
	xp_check "worst interval within 2 %" within "worst deviation %" "$(worst_dev "$target")" 2
	xp_check "no loss" expect_eq lost "$(jqv .end.sum.lost_packets)" 0
	xp_pass
done

# ---------------------------------------------------------------------------
for eng in live xsk; do
	xp_case "${eng}_bursts_keep_the_average"
	xp_check "1000-frame bursts at 100 kpps" eval 'client -c "$XP_SERVER4" --engine $eng -t 3 -b 100kpps --burst 1000 --queues 1 -J >"$J"'
	xp_check "worst interval within 2 %" within "worst deviation %" "$(worst_dev 100000)" 2
	xp_pass
done

# ---------------------------------------------------------------------------
xp_case every_engine_same_frames
# Routed, so a capture on the router's ingress sees what each engine sent.
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
fields() { # PCAP: one line per frame of everything but the per-frame fields
	tshark -r "$1" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -T fields -E separator=' ' \
		-e frame.len -e eth.src -e eth.dst -e ip.src -e ip.dst -e ip.ttl -e ip.flags.df -e ip.len \
		-e tcp.flags -e tcp.window_size_value -e tcp.len -e ip.checksum.status -e tcp.checksum.status 2>/dev/null
}
for eng in live xsk; do
	xp_check "capture $eng" eval '
		xp_capture_bg router timeout 10 tcpdump -i xpr0 -c 64 -w "$XP_TMP/$eng.pcap" -U "tcp and dst portrange 63000-63015"
		CAP=$XP_BG_PID
		client -c "$XP_SERVER4" --engine $eng -t 1 -b 2kpps --queues 1 -l 128 -p 63000:63003 --cport 20000:20001 >/dev/null
		wait $CAP 2>/dev/null; [[ -s $XP_TMP/$eng.pcap ]]'
done
xp_check "same headers, sizes and valid checksums" eval '
	diff <(fields "$XP_TMP/live.pcap" | sort -u) <(fields "$XP_TMP/xsk.pcap" | sort -u)'
xp_check "checksums good" eval '[[ $(fields "$XP_TMP/live.pcap" | awk "{print \$12 \$13}" | sort -u) == 11 ]]'
ports() { tshark -r "$1" -T fields -e tcp.srcport -e tcp.dstport 2>/dev/null | sort -u; }
xp_check "same flows (8 = 2 source x 4 destination ports)" eval '
	diff <(ports "$XP_TMP/live.pcap") <(ports "$XP_TMP/xsk.pcap") && [[ $(ports "$XP_TMP/live.pcap" | wc -l) == 8 ]]'
# Only the live engine varies TCP sequence numbers per flow and stamps the payload.
xp_check "live stamps its payload (XPTS)" eval '
	tshark -r "$XP_TMP/live.pcap" -T fields -e tcp.payload 2>/dev/null | head -1 | grep -q "^58505453"'
xp_pass
