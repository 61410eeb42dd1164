#!/usr/bin/env bash
# The RFC 2544 suite's latency trials (26.2) against the router's own
# capture (part of the quick profile, beside 53_rfc2544.sh): the lab's
# router with an nftables limit of 20000 frames/s (so a capture on its
# server-facing veth keeps up: tcpdump --time-stamp-precision nano, 0
# dropped), a 64-byte UDP suite with 3 latency trials. Each trial's frames
# received are the frames the router forwarded in it, and its latency
# figures are the capture's within rfc2544_lat_check.py's tolerance.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }

xp_case rfc2544_lab
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_on_exit "ip netns exec xp-router nft delete table inet xpt11 2>/dev/null"
xp_pass

xp_case rfc2544_latency_against_the_routers_capture
CAP_LIMIT=20000
xp_check "nft limit $CAP_LIMIT/s in the router (the capture keeps up)" eval '
	xp_exec router nft delete table inet xpt11 2>/dev/null
	xp_exec router nft -f - <<EOF2
table inet xpt11 {
	chain limiter {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 limit rate over $CAP_LIMIT/second burst 1000 packets counter drop
	}
}
EOF2'
xp_check "capture on the router's server-facing veth" xp_capture_bg router tcpdump -i xpr1 -Q out -s 64 \
	-w "$XP_TMP/lat.pcap" --time-stamp-precision nano -B 32768 -nn udp dst portrange 63000-63015
CAP_PID=$XP_BG_PID CAP_LOG=$XP_BG_LOG
xp_check "-u --sizes 64 --tests latency --latency-trials 3 --trial 1 (top of the search: --line-rate 20M)" eval '
	O1=$(xp_mono_to_real)
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --sizes 64 --tests latency --trial 1 --latency-trials 3 \
		--line-rate 20M -J >"$XP_TMP/lat.json" 2>"$XP_TMP/lat-progress.txt" || { tail -5 "$XP_TMP/lat-progress.txt"; false; }
	O2=$(xp_mono_to_real)'
xp_check "the capture ended with no frame dropped" eval '
	sleep 1.5; kill -INT $CAP_PID; wait $CAP_PID 2>/dev/null; cat "$CAP_LOG"
	grep -q "^0 packets dropped by kernel" "$CAP_LOG"'
xp_check "each trial's frames = the router's; latency = the capture's (rfc2544_lat_check.py)" \
	python3 "$XP_ROOT/tests/e2e/rfc2544_lat_check.py" "$XP_TMP/lat.json" "$XP_TMP/lat.pcap" $(((O1 + O2) / 2))
xp_check "the text table has the latency figures" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --sizes 64 --tests latency --trial 0.5 --latency-trials 1 \
		--line-rate 20M 2>/dev/null | tee "$XP_TMP/lat.txt" | grep -A2 "^Latency (RFC 2544 26.2)" |
		grep -Eq "^ +64 +[0-9]+ +1 +[0-9]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+\$" ||
		{ cat "$XP_TMP/lat.txt"; false; }'
xp_pass

