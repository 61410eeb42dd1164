#!/usr/bin/env bash
# Issue 26, flows from the live engine (XDP live frames, bpf/live_flows.h)
# across the lab's switch (scripts/lab.sh up --switch): tests/tools/flowlive
# drives the live engine's own ops with four flows (untagged; untagged DSCP
# 46; 802.1Q VID 100; QinQ S-VID 10 / C-VID 200), each N frames with its
# source port counting over 4 values, paced; tests/tools/flowlab serve runs
# the server's XDP program counting each flow by its stamp's stream. What the
# engine says it sent per flow (read_flows) is held against counters xdpperf
# did not write: the bridge's nftables counters per VLAN id, the router's
# egress interface counter, and a capture on the router's port to the
# server (tshark: frames per flow by source port, every port of each flow's
# pattern); and against the server program's per-flow counts (all received,
# in order, timed).
. "$(dirname "$0")/lib.sh"

FLOWLIVE=$XP_ROOT/build/tests/tools/flowlive
FLOWLAB=$XP_ROOT/build/tests/tools/flowlab
PORT=7104
N=2000
SIZE=128
PPS=40000
NF=4

stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
field() { # LOG KEY FIELD
	awk -v k="$2" -v f="$3=" '$1 == k { for (i = 2; i <= NF; i++) if (index($i, f) == 1) print substr($i, length(f) + 1) }' "$1"
}

xp_case live_flows_up
xp_check "lab up --switch" xp_lab_up --switch
xp_check "tools built" test -x "$FLOWLIVE" -a -x "$FLOWLAB"
xp_check "ping v4 across the bridge" xp_ping client "$XP_SERVER4"
xp_pass

xp_case live_flows_counted
CAP=$XP_TMP/flows.pcap
# No filter: the bridge keeps the outer tag in the skb's metadata, tshark reads the tags either way.
xp_capture_bg router tcpdump -i xpr1 -n -s 96 -w "$CAP"
CAP_PID=$XP_BG_PID CAP_LOG=$XP_BG_LOG
xp_run_bg server "$FLOWLAB" serve "$XP_SERVER_DEV" "$PORT" "$XP_CLIENT4" "$NF" 60
SERVE_PID=$XP_BG_PID SERVE_LOG=$XP_BG_LOG
xp_check "server program ready" xp_wait_log "$SERVE_LOG" '^ready' 1 20
TX0=$(stat_of router xpr1 tx_packets)
SEND_LOG=$XP_TMP/flowlive.log
xp_check "live engine sends $NF flows x $N" eval 'xp_exec client "$FLOWLIVE" "$XP_CLIENT_DEV" "$XP_SERVER_MAC" \
	"$XP_CLIENT4" "$XP_SERVER4" "$PORT" "$N" "$SIZE" "$PPS" u u/46 q:100 ad:10:200 >"$SEND_LOG"'
cat "$SEND_LOG"
sleep 0.5
TX1=$(stat_of router xpr1 tx_packets)
xp_check "stop the server program" kill -TERM "$SERVE_PID"
xp_check "server program's figures" xp_wait_log "$SERVE_LOG" "^flow=$((NF - 1)) " 1 10
xp_check "stop the capture" kill -INT "$CAP_PID"
xp_check "capture written" xp_wait_log "$CAP_LOG" "packets captured" 1 10
cat "$SERVE_LOG"
V=$(bash "$XP_LAB" vlans)
echo "bridge: $V; router xpr1 tx $((TX1 - TX0))"
TOTAL=0
for f in $(seq 0 $((NF - 1))); do
	xp_check "flow $f: the engine sent $N" expect_eq "flow$f" "$(field "$SEND_LOG" "flow=$f" sent)" "$N"
	xp_check "flow $f: $N x $((SIZE - 4)) bytes" expect_eq "flow$f" "$(field "$SEND_LOG" "flow=$f" bytes)" $((N * (SIZE - 4)))
	TOTAL=$((TOTAL + $(field "$SEND_LOG" "flow=$f" sent)))
	xp_check "flow $f: server frames = sent" expect_eq "flow$f" "$(field "$SERVE_LOG" "flow=$f" frames)" "$N"
	xp_check "flow $f: recv = expected, in order" expect_eq "flow$f" \
		"$(field "$SERVE_LOG" "flow=$f" recv)/$(field "$SERVE_LOG" "flow=$f" expected)/$(field "$SERVE_LOG" "flow=$f" dup)/$(field "$SERVE_LOG" "flow=$f" reordered)" "$N/$N/0/0"
	xp_check "flow $f: timed" expect_eq "flow$f" "$(field "$SERVE_LOG" "flow=$f" lat_n)" "$N"
done
xp_check "engine total = sum of flows" expect_eq total "$(awk '$1 == "total" { sub("pkts=", "", $2); print $2 }' "$SEND_LOG")" "$TOTAL"
# The bridge: VID 100 (802.1Q) and S-VID 10 (QinQ) each one flow's frames.
xp_check "bridge: VID 100 = flow 2" expect_eq vid100 "$(jq '.vids["100"].packets' <<<"$V")" "$(field "$SEND_LOG" flow=2 sent)"
xp_check "bridge: S-VID 10 = flow 3" expect_eq svid10 "$(jq '.svids["10"].packets' <<<"$V")" "$(field "$SEND_LOG" flow=3 sent)"
# The router's port to the server sent them all (and at most a few ARP/ND frames more).
xp_check "router egress counter" expect_near xpr1 "$((TX1 - TX0))" "$TOTAL" 10
# The capture: per flow (source ports 40000 + 100 f .. + 3), each port N / 4 times.
PORTS=$(tshark -r "$CAP" -Y "udp.dstport == $PORT" -T fields -e udp.srcport 2>/dev/null | sort -n | uniq -c | awk '{ printf "%s:%s ", $2, $1 }')
echo "capture: $PORTS"
WANT=""
for f in $(seq 0 $((NF - 1))); do for p in 0 1 2 3; do WANT+="$((40000 + 100 * f + p)):$((N / 4)) "; done; done
xp_check "capture: every flow's ports, N/4 each" expect_eq capture "$PORTS" "$WANT"
xp_pass
