#!/usr/bin/env bash
# End-to-end tests of xdpperf's stream test with the AF_XDP engine in the lab:
# exact counts through the router cross-checked with the kernel's own
# counters, well-formed frames on the wire, IPv6, UDP, several clients at
# once, interruption, the server dying, and bad input.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN

# The AF_XDP engine by name: live frames have their own tests (50_live.sh).
client() { xp_exec client "$BIN" --engine xsk "$@"; }
# sysfs counter of a device in a namespace
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
# XDP drops the kernel counted on the server's veth (all queues)
xdp_drops() { xp_exec server ethtool -S "$XP_SERVER_DEV" | awk '/xdp_drops:/{s+=$2} END{print s+0}'; }
no_xdp_on() { ! xp_exec "$1" ip -o link show "$2" | grep -qE ' xdp(generic|drv)? '; }

# ---------------------------------------------------------------------------
xp_case routed_exact_counts_v4
xp_check "lab up" xp_lab_up
xp_check "server" start_server
d0=$(xdp_drops); f0=$(stat_of router xpr1 tx_packets)
xp_check "client run 3 s at 50 kpps" eval 'client -c "$XP_SERVER4" -t 3 -b 50kpps --queues 1 -J >"$J"'
d1=$(xdp_drops); f1=$(stat_of router xpr1 tx_packets)
sent=$(jqv .end.sum.sent.packets); recv=$(jqv .end.sum.received.packets)
xp_check "received == sent" expect_eq "received" "$recv" "$sent"
xp_check "sent about 150000 (50 kpps x 3 s)" expect_near sent "$sent" 150000 3000
xp_check "server XDP drops (ethtool) == received" expect_eq "xdp_drops delta" "$((d1 - d0))" "$recv"
# The router also forwarded the control connection's few segments.
xp_check "router forwarded == sent (+ control traffic)" expect_near "router tx" "$((f1 - f0))" "$sent" 100
xp_check "per-interval rate within 2 % of 50 kpps" \
	eval '[[ $(jq "[.intervals[] | select(.seconds > 0.9) | .sent.packets_per_second | (. - 50000) | fabs] | max < 1000" "$J") == true ]]'
xp_check "loss 0" expect_eq loss "$(jqv .end.sum.lost_packets)" 0
xp_check "L1 bits = (64+20)*8 per frame" \
	eval '[[ $(jq ".end.sum.sent | (.bits_per_second_l1 / .packets_per_second) | round" "$J") == 672 ]]'
xp_check "engine reported" expect_eq engine "$(jqv .start.engine)/$(jqv .start.server_xdp_mode)" "xsk/native"
xp_pass

# ---------------------------------------------------------------------------
xp_case frames_well_formed_on_the_wire
PC=$XP_TMP/cap.pcap
xp_check "start capture on the router" eval 'xp_capture_bg router timeout 10 tcpdump -i xpr0 -c 200 -w "$PC" -U "tcp and dst portrange 63000-63015"; CAP=$XP_BG_PID'
xp_check "client run" eval 'client -c "$XP_SERVER4" -t 1 -b 2kpps --queues 1 -l 100 >/dev/null'
xp_check "capture done" eval 'wait $CAP 2>/dev/null; [[ -s $PC ]]'
fields() { tshark -r "$PC" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE -T fields \
	-e frame.len -e ip.checksum.status -e tcp.checksum.status -e tcp.dstport -e tcp.len -E separator=' ' 2>/dev/null; }
xp_check "200 frames captured" expect_eq frames "$(fields | wc -l)" 200
xp_check "all 96-byte frames (100 - FCS)" expect_eq "distinct lengths" "$(fields | awk '{print $1}' | sort -u)" 96
xp_check "IP checksums good" expect_eq "ip checksum status" "$(fields | awk '{print $2}' | sort -u)" 1
xp_check "TCP checksums good" expect_eq "tcp checksum status" "$(fields | awk '{print $3}' | sort -u)" 1
xp_check "TCP payload 42 bytes" expect_eq "tcp.len" "$(fields | awk '{print $5}' | sort -u)" 42
xp_check "16 destination ports used" expect_eq "distinct dports" "$(fields | awk '{print $4}' | sort -u | wc -l)" 16
xp_pass

# ---------------------------------------------------------------------------
xp_case routed_ipv6_and_capture
PC6=$XP_TMP/cap6.pcap
xp_check "start capture" eval 'xp_capture_bg router timeout 10 tcpdump -i xpr0 -c 50 -w "$PC6" -U "ip6 and tcp and dst portrange 63000-63015"; CAP=$XP_BG_PID'
xp_check "client run IPv6, 78-byte frames, 20 kpps" eval 'client -c "$XP_SERVER6" -t 2 -l 78 -b 20kpps --queues 1 -J >"$J"'
xp_check "capture done" eval 'wait $CAP 2>/dev/null; [[ -s $PC6 ]]'
xp_check "received == sent" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
xp_check "about 40000 sent (or said short)" expect_near_or_said_short sent "$(jqv .end.sum.sent.packets)" 40000 1000 "$J"
xp_check "counted as IPv6 by XDP" expect_eq ipv6 "$(jqv .end.sum.received.counters.ipv6_pkts)" "$(jqv .end.sum.sent.packets)"
xp_check "TCP checksums good (IPv6)" expect_eq status "$(tshark -r "$PC6" -o tcp.check_checksum:TRUE -T fields -e tcp.checksum.status 2>/dev/null | sort -u)" 1
xp_pass

# ---------------------------------------------------------------------------
xp_case udp_stream
# Not 0 == 0: the count is fixed by the rate and checked against the router's
# and the server veth's own counters.
d0=$(xdp_drops); f0=$(stat_of router xpr1 tx_packets)
xp_check "client UDP" eval 'client -c "$XP_SERVER4" -t 2 -u -b 20kpps --queues 1 -J >"$J"'
d1=$(xdp_drops); f1=$(stat_of router xpr1 tx_packets)
xp_check "received == sent" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
# Within 5 %: the count is the point here (checked exactly against the
# router and the server below); the rate's accuracy to 2 % is the bench's
# (scripts/bench.sh rate control). A fresh-clone CI run once sent 38926:
# 54 ms of a 2-s run lost to start-up or a forgiven stall.
xp_check "about 40000 sent (20 kpps x 2 s) (or said short)" expect_near_or_said_short sent "$(jqv .end.sum.sent.packets)" 40000 2000 "$J"
xp_check "counted as UDP" expect_eq udp "$(jqv .end.sum.received.counters.udp_pkts)" "$(jqv .end.sum.sent.packets)"
xp_check "server XDP drops (ethtool) == received" expect_eq "xdp_drops delta" "$((d1 - d0))" "$(jqv .end.sum.received.packets)"
xp_check "router forwarded == sent (+ control traffic)" expect_near "router tx" "$((f1 - f0))" "$(jqv .end.sum.sent.packets)" 100
xp_pass

# ---------------------------------------------------------------------------
xp_case two_clients_at_once_own_counters
# Two AF_XDP clients on one interface need a queue each: a 2-queue lab.
xp_check "lab up with 2 queues" xp_lab_up --queues 2
xp_check "server" start_server
xp_check "two clients on separate port ranges and queues" eval '
	client -c "$XP_SERVER4" -t 2 -b 10kpps --queues 1 -p 63000:63007 -J >"$XP_TMP/a.json" &
	A=$!
	client -c "$XP_SERVER4" -t 2 -b 30kpps --queues 1 --first-queue 1 -p 63100:63107 -J >"$XP_TMP/b.json"
	wait $A'
for f in a b; do
	xp_check "client $f: received == sent" expect_eq "$f received" \
		"$(jq .end.sum.received.packets "$XP_TMP/$f.json")" "$(jq .end.sum.sent.packets "$XP_TMP/$f.json")"
done
xp_check "client a about 20000 (or said short)" expect_near_or_said_short a \
	"$(jq .end.sum.received.packets "$XP_TMP/a.json")" 20000 1000 "$XP_TMP/a.json"
xp_check "client b about 60000 (or said short)" expect_near_or_said_short b \
	"$(jq .end.sum.received.packets "$XP_TMP/b.json")" 60000 2000 "$XP_TMP/b.json"
xp_check "overlapping ranges refused" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" -t 3 -b 1kpps --queues 1 -p 63000:63007 >/dev/null &
	A=$!; wait_test_started $n0
	out=$(client -c "$XP_SERVER4" -t 1 --first-queue 1 -p 63005:63010 2>&1); rc=$?
	wait $A
	[[ $rc == 1 && $out == *overlap* ]] || { echo "rc=$rc out=$out"; false; }'
xp_pass

# ---------------------------------------------------------------------------
xp_case xdp_attach_failure_is_reported
# A second server on another control port finds the interface taken by the
# first one's bpf_link: its attach fails and the client is told why.
xp_check "second server" eval 'xp_run_bg server "$BIN" -s --control-port 5302; S2=$XP_BG_PID; xp_wait_port server 5302 5'
xp_check "attach refused while the first server's test holds the interface" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" -t 3 -b 1kpps --queues 1 >/dev/null &
	A=$!; wait_test_started $n0
	out=$(client -c "$XP_SERVER4" --control-port 5302 -t 1 -p 63100:63107 --first-queue 1 2>&1); rc=$?
	wait $A
	[[ $rc == 1 && $out == *"cannot attach XDP"* && $(wc -l <<<"$out") == 1 ]] || { echo "rc=$rc out=$out"; false; }'
xp_check "second server still serves once the interface is free" eval '
	xdp_gone server xps0 && client -c "$XP_SERVER4" --control-port 5302 -t 1 -b 1kpps --queues 1 -J >"$J"'
xp_check "and counted" expect_near received "$(jqv .end.sum.received.packets)" 1000 100
xp_check "stop second server" eval 'kill $S2; wait $S2 2>/dev/null; true'
xp_pass

# ---------------------------------------------------------------------------
xp_case control_and_ping_work_during_test
xp_check "ping server during a test" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" -t 2 -b 100kpps --queues 1 >/dev/null &
	A=$!; wait_test_started $n0
	xp_ping client "$XP_SERVER4"; r=$?
	wait $A; (( r == 0 ))'
xp_pass

# ---------------------------------------------------------------------------
xp_case sigint_prints_summary_so_far
fwd_above() { (($(stat_of router xpr1 tx_packets) >= $1)); }
xp_check "SIGINT once a 10 s test has carried 5000 frames" eval '
	n0=$(tests_started); f0=$(stat_of router xpr1 tx_packets)
	# ip netns exec execs xdpperf, so $! is xdpperf itself.
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t 10 -b 10kpps --queues 1 >"$XP_TMP/int.txt" 2>&1 &
	A=$!; wait_test_started $n0 && xp_wait 8 "5000 frames through the router" fwd_above $((f0 + 5000))
	kill -INT $A
	s=$SECONDS; wait $A; rc=$?
	(( SECONDS - s <= 2 )) && (( rc == 1 ))'
xp_check "summary printed" grep -q '^Interrupted' "$XP_TMP/int.txt"
xp_check "summary has counts" grep -qE '^Received +[0-9]+ frames' "$XP_TMP/int.txt"
xp_pass

# ---------------------------------------------------------------------------
xp_case server_killed_mid_test_detaches
xp_check "XDP attached while a test runs" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" -t 10 -b 10kpps --queues 1 >"$XP_TMP/k.txt" 2>&1 &
	A=$!; wait_test_started $n0
	xp_exec server ip -o link show "$XP_SERVER_DEV" | grep -q " xdp"'
xp_check "kill -9 the server" eval 'kill -9 $SRV_PID; s=$SECONDS; wait $A; rc=$?; (( rc == 1 && SECONDS - s <= 5 ))'
# (Not just "server": the report header names the server too.)
xp_check "client says the server went away" grep -qE "the server (closed the control connection|stopped answering)" "$XP_TMP/k.txt"
xp_check "no XDP program left on the server's interface" no_xdp_on server "$XP_SERVER_DEV"
xp_pass

# ---------------------------------------------------------------------------
xp_case server_sigterm_detaches
xp_check "server" start_server
xp_check "test running" eval 'n0=$(tests_started); client -c "$XP_SERVER4" -t 5 -b 5kpps --queues 1 >/dev/null 2>&1 & A=$!; wait_test_started $n0'
xp_check "SIGTERM server" eval 'kill -TERM $SRV_PID; wait $SRV_PID; wait $A; true'
xp_check "no XDP left" no_xdp_on server "$XP_SERVER_DEV"
xp_check "server said it stopped" grep -q "stopped" "$SRV_LOG"
xp_pass

# ---------------------------------------------------------------------------
xp_case bad_input
xp_check "server" start_server
expect_msg() { # RC PATTERN ARGS...: exit status and a one-line message matching PATTERN
	local want=$1 pat=$2 out rc=0
	shift 2
	out=$(xp_exec client "$BIN" "$@" 2>&1) || rc=$?
	((rc == want)) || { echo "xdpperf $*: exit $rc, want $want: $out"; return 1; }
	[[ $(wc -l <<<"$out") -eq 1 && $out == xdpperf:*$pat* ]] || { echo "xdpperf $*: message '$out'"; return 1; }
}
xp_check "no role" expect_msg 2 "-s" -t 1
xp_check "unknown option" expect_msg 2 "unknown option" -c "$XP_SERVER4" --frobnicate
xp_check "bad address" expect_msg 2 "resolve" -c 999.1.1.1
xp_check "reversed ports" expect_msg 2 "reversed" -c "$XP_SERVER4" -p 63010:63000
xp_check "port 0" expect_msg 2 "port" -c "$XP_SERVER4" -p 0:10
xp_check "port 70000" expect_msg 2 "port" -c "$XP_SERVER4" -p 70000
xp_check "frame 63" expect_msg 2 "64" -c "$XP_SERVER4" -l 63
xp_check "frame above MTU" expect_msg 2 "MTU" -c "$XP_SERVER4" -l 1600
xp_check "IPv6 64-byte frame too small" expect_msg 2 "78" -c "$XP_SERVER6" -l 64
xp_check "bad rate" expect_msg 2 "rate" -c "$XP_SERVER4" -b 10x
xp_check "too many queues" expect_msg 2 "queue" -c "$XP_SERVER4" --queues 4
xp_check "first queue beyond the interface" expect_msg 2 "queue" -c "$XP_SERVER4" --first-queue 2
xp_check "missing interface" expect_msg 1 "does not exist" -c "$XP_SERVER4" -D nosuch0
# Issue 14 changed this message: it names the cause (no answer, or unreachable) instead of "cannot reach ... (is 'xdpperf -s' running there?)".
xp_check "no server there" eval 'out=$(xp_exec client "$BIN" -c 198.19.1.99 -t 1 2>&1); rc=$?; echo "exit $rc: $out"
	(( rc == 1 )) && [[ $(wc -l <<<"$out") == 1 ]] && grep -qE "^xdpperf: (the control connection to 198.19.1.99 .* timed out, and it does not answer ping|198.19.1.99 .*is unreachable)" <<<"$out"'
xp_check "server port range clash with control port" expect_msg 2 "control port" -c "$XP_SERVER4" -p 5300:5302
xp_check "unprivileged" eval 'out=$(xp_exec client setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN" -c "$XP_SERVER4" -t 1 2>&1); rc=$?; [[ $rc == 1 && $out == *root* ]] || { echo "rc=$rc $out"; false; }'
xp_check "server: missing interface" eval 'out=$(xp_exec server "$BIN" -s -D nosuch0 --control-port 5399 2>&1); [[ $? == 1 && $out == *"does not exist"* ]]'
xp_check "server: client-only option" eval 'out=$(xp_exec server "$BIN" -s -l 100 2>&1); [[ $? == 2 && $out == *"client option"* ]]'
xp_check "nothing attached after bad input" no_xdp_on client "$XP_CLIENT_DEV"
xp_pass
