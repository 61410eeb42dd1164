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
expect_ge() { (($2 >= $3)) || { echo "$1: got $2, want >= $3"; return 1; }; }
# The yardstick xdpperf does not write: the server veth's rx_packets.
srv_rx() { xp_exec server cat /sys/class/net/xps0/statistics/rx_packets; }
# sampled CMD...: run CMD while the server veth's rx_packets is read every
# 0.1 s ("EPOCHREALTIME count" lines in $SMP). (The sleep paces the samples;
# nothing waits on it.)
SMP=$XP_TMP/rx.smp
sampled() {
	xp_exec server bash -c 'while :; do read -r v </sys/class/net/xps0/statistics/rx_packets; echo "$EPOCHREALTIME $v"; sleep 0.1; done' >"$SMP" &
	local s=$! rc=0
	"$@" || rc=$?
	kill "$s"; wait "$s" 2>/dev/null
	return $rc
}
# if_worst_dev TARGET: the worst deviation (in %) from TARGET pps of the
# samples' full 1-second spans, inside the part where frames arrived (steps
# faster than 10 % of the fastest) with 0.5 s trimmed at each end; fails when
# that part is shorter than 1.5 s.
if_worst_dev() {
	awk -v target="$1" '
	{ t[NR] = $1; v[NR] = $2 }
	END {
		for (i = 2; i <= NR; i++) { r = (v[i] - v[i-1]) / (t[i] - t[i-1]); if (r > peak) peak = r }
		for (i = 2; i <= NR; i++) if ((v[i] - v[i-1]) / (t[i] - t[i-1]) > peak / 10) { if (!s) s = i - 1; e = i }
		for (lo = s; lo < e && t[lo] < t[s] + 0.5; lo++) ;
		for (hi = e; hi > lo && t[hi] > t[e] - 0.5; hi--) ;
		if (peak <= 0 || t[hi] - t[lo] < 1.5) { print "no 1.5 s of frames in the samples"; exit 1 }
		for (a = lo; ; a = b) {
			for (b = a; b <= hi && t[b] < t[a] + 1; b++) ;
			if (b > hi) break
			d = ((v[b] - v[a]) / (t[b] - t[a]) - target) / target * 100
			if (d < 0) d = -d
			if (d > worst) worst = d
			n++
		}
		printf "%.3f\n", worst
	}' "$SMP"
}

# ---------------------------------------------------------------------------
xp_case live_exact_counts_direct
xp_check "lab up (direct, 2 queues)" xp_lab_up --direct --queues 2
xp_check "server" start_server
rx0=$(srv_rx)
xp_check "live run 3 s at 100 kpps" eval 'client -c "$XP_SERVER4" --engine live -t 3 -b 100kpps -J >"$J"'
rx=$(($(srv_rx) - rx0))
echo "sent $(jqv .end.sum.sent.packets), XDP received $(jqv .end.sum.received.packets), server veth rx_packets +$rx"
xp_check "engine is live" expect_eq engine "$(jqv .start.engine)/$(jqv .start.engine_mode)" live/live
xp_check "received == sent" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
# The veth's count is the test's frames plus the control connection's (a few dozen).
xp_check "server veth rx_packets == sent + control frames (0..100)" \
	eval 'expect_ge rx_packets "$rx" "$(jqv .end.sum.sent.packets)" && expect_near rx_packets "$rx" "$(jqv .end.sum.sent.packets)" 100'
# The rate itself is the rate cases' check (one queue, within 2 %). Two sending threads can fall
# behind on this shared 2-vCPU host (measured 96 % in some runs); then the summary must say so.
xp_check "about 300000 by the server veth, or the shortfall said" eval '
	expect_near rx_packets "$rx" 300000 6000 ||
	{ jq -c .end.offered_load "$J"; jq -e ".end.offered_load.short_of_target and .end.offered_load.held_back_by != null" "$J" >/dev/null; }'
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
	rx0=$(srv_rx)
	xp_check "run" sampled eval 'client -c "$XP_SERVER4" --engine $eng -t 4 -b $rate --queues 1 -J >"$J"'
	rx=$(($(srv_rx) - rx0))
	dev=$(if_worst_dev "$target")
	echo "worst interval: $(worst_dev "$target") % (xdpperf), $dev % (server veth rx_packets, 1-s spans)"
	xp_check "worst interval within 2 %" within "worst deviation %" "$(worst_dev "$target")" 2
	xp_check "worst 1-s span of the server veth's rx_packets within 2 %" within "worst deviation %" "$dev" 2
	xp_check "no loss" expect_eq lost "$(jqv .end.sum.lost_packets)" 0
	xp_check "server veth rx_packets == sent + control frames (0..100)" \
		eval 'expect_ge rx_packets "$rx" "$(jqv .end.sum.sent.packets)" && expect_near rx_packets "$rx" "$(jqv .end.sum.sent.packets)" 100'
	xp_pass
done

# ---------------------------------------------------------------------------
for eng in live xsk; do
	xp_case "${eng}_bursts_keep_the_average"
	xp_check "1000-frame bursts at 100 kpps" sampled eval 'client -c "$XP_SERVER4" --engine $eng -t 3 -b 100kpps --burst 1000 --queues 1 -J >"$J"'
	xp_check "worst interval within 2 %" within "worst deviation %" "$(worst_dev 100000)" 2
	xp_check "worst 1-s span of the server veth's rx_packets within 2 %" within "worst deviation %" "$(if_worst_dev 100000)" 2
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
# Both engines stamp every frame (bpf/lib/stamp.h): stream 0 (one thread), seq
# 0, 1, 2... in capture order, send times that advance as the router's capture
# clock does. At 128 bytes the 8 bytes lead the payload; at 64 bytes (IPv4/TCP,
# 6 payload bytes) the first two are the IPv4 ID.
stamps_ok() { # PCAP payload|ipid
	tshark -r "$1" -T fields -E separator=' ' -e frame.time_epoch -e ip.id -e tcp.payload 2>/dev/null |
		python3 -c '
import sys
mode, rows = sys.argv[1], []
for line in sys.stdin:
    f = line.split()
    if len(f) < 3:
        continue
    t, ipid, pl = float(f[0]), int(f[1], 16), f[2].replace(":", "")
    b = bytes.fromhex(pl[:16]) if mode == "payload" else ipid.to_bytes(2, "big") + bytes.fromhex(pl[:12])
    rows.append((t, b[0], int.from_bytes(b[1:4], "big"), int.from_bytes(b[4:8], "big")))
bad = []
if len(rows) < 32:
    bad.append("only %d stamped frames captured" % len(rows))
for (t0, s0, q0, ts0), (t1, s1, q1, ts1) in zip(rows, rows[1:]):
    if s1 != 0 or q1 != (q0 + 1) % (1 << 24) or (ts1 - ts0) % (1 << 32) >= 1 << 31:
        bad.append("stream %d seq %d ts %d after stream %d seq %d ts %d" % (s1, q1, ts1, s0, q0, ts0))
        break
if rows and not bad:
    sent = ((rows[-1][3] - rows[0][3]) % (1 << 32)) * 4e-9
    seen = rows[-1][0] - rows[0][0]
    print("%d frames, seq %d..%d, stamp span %.6f s, capture span %.6f s" % (len(rows), rows[0][2], rows[-1][2], sent, seen))
    if abs(sent - seen) > 0.001 + 0.1 * seen:
        bad.append("send times span %.6f s, the capture %.6f s" % (sent, seen))
print("\n".join(bad))
sys.exit(1 if bad else 0)' "$2"
}
xp_check "live stamps every frame (payload, 128 bytes)" stamps_ok "$XP_TMP/live.pcap" payload
xp_check "xsk stamps every frame (payload, 128 bytes)" stamps_ok "$XP_TMP/xsk.pcap" payload
for eng in live xsk; do
	xp_check "capture $eng, 64 bytes" eval '
		xp_capture_bg router timeout 10 tcpdump -i xpr0 -c 64 -w "$XP_TMP/$eng-64.pcap" -U "tcp and dst portrange 63000-63015"
		CAP=$XP_BG_PID
		client -c "$XP_SERVER4" --engine $eng -t 1 -b 2kpps --queues 1 -l 64 -p 63000:63003 --cport 20000:20001 >/dev/null
		wait $CAP 2>/dev/null; [[ -s $XP_TMP/$eng-64.pcap ]]'
	xp_check "$eng stamps every 64-byte frame (IPv4 ID + payload)" stamps_ok "$XP_TMP/$eng-64.pcap" ipid
done
xp_pass
