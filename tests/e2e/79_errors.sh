#!/usr/bin/env bash
# Issue 14, in the lab: what the user typed is what runs, and errors name the
# real cause. Options that do not go together are refused before anything is
# sent (the server sees no test); a control connection that fails says why:
# no route here, no route on the path, nothing listening, a host down, a host
# that answers ping but whose TCP port a device drops (a firewall, a full
# table), a name that does not resolve (exit 1), something that is not an
# xdpperf server; -J errors are JSON on stdout; --dev and --bind are checked
# before the test.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN

client() { xp_exec client "$BIN" "$@"; }
# expect_err RC PATTERN ARGS...: exit status RC, one line on stderr matching PATTERN (an ERE)
expect_err() {
	local want=$1 pat=$2 out rc=0
	shift 2
	out=$(client "$@" 2>&1 >/dev/null) || rc=$?
	echo "xdpperf $*: exit $rc: $out"
	((rc == want)) || { echo "want exit $want"; return 1; }
	[[ $(grep -c '^xdpperf: ' <<<"$out") -ge 1 ]] || return 1
	grep -v '^xdpperf: warning' <<<"$out" | grep -qE -- "$pat" || { echo "no /$pat/"; return 1; }
	LAST_ERR=$out
}
# expect_cause RC PATTERN ARGS...: the same, and no blaming a server that is not at fault
expect_cause() {
	expect_err "$@" || return
	! grep -q "is 'xdpperf -s' running there" <<<"$LAST_ERR" || { echo "blames the server"; return 1; }
}
xdp_syns() { xp_exec server ethtool -S "$XP_SERVER_DEV" | awk '/xdp_drops:/{s+=$2} END{print s+0}'; }

# ---------------------------------------------------------------------------
xp_case options_refused_before_anything_runs
xp_check "lab up" xp_lab_up
xp_check "server" start_server
d0=$(xdp_syns)
xp_check "-P 4 -b 100M: refused, exit 2" expect_err 2 "-b is for the frame engines.*not the socket engine" \
	-c "$XP_SERVER4" -P 4 -b 100M -t 1
xp_check "-l 200 -P 4" expect_err 2 "-l is for the frame engines" -c "$XP_SERVER4" -l 200 -P 4 -t 1
xp_check "--engine xdp -x -b 1kpps" expect_err 2 "paces its SYNs with --cps" -c "$XP_SERVER4" --engine xdp -x -b 1kpps
xp_check "-u --engine xdp -x" expect_err 2 "TCP only" -c "$XP_SERVER4" -u --engine xdp -x
xp_check "-J --json-stream" expect_err 2 "exclude each other" -c "$XP_SERVER4" -J --json-stream
xp_check "--cps alone: one message, one fix" expect_err 2 "--cps selects the XDP connection engine.*add -x" \
	-c "$XP_SERVER4" --cps 1000
xp_check "--bytes alone: add -x" expect_err 2 "add -x$" -c "$XP_SERVER4" --bytes 1000
xp_check "-i 0 names the interval" expect_err 2 "interval must be greater than 0" -c "$XP_SERVER4" -i 0
xp_check "-s -t 5" eval 'out=$(xp_exec server "$BIN" -s -t 5 --control-port 5399 2>&1); rc=$?
	echo "exit $rc: $out"; (( rc == 2 )) && [[ $out == *"-t is a client option"* ]]'
xp_check "the server saw no test and no frame" eval '! grep -q "test (" "$SRV_LOG" && (( $(xdp_syns) == d0 ))'
xp_check "1G-l2 and 800M-l2 as documented" eval '
	client -c "$XP_SERVER4" -t 1 -b 1G-l2 --queues 1 -J >"$J" &&
	[[ $(jqv .start.target_pps) == $(jq -n "1e9 / (64 * 8)") ]] &&
	client -c "$XP_SERVER4" -t 1 -b 800M-l2 --queues 1 >/dev/null'
xp_check "-t 1.5 is 1.5 s" eval 'out=$(client -c "$XP_SERVER4" -t 1.5 -b 1kpps --queues 1); grep "rate 1.00 kpps, 1.5 s" <<<"$out"'
xp_pass

# ---------------------------------------------------------------------------
xp_case control_connection_errors_name_the_cause
xp_check "stop the server" eval 'kill $SRV_PID; wait $SRV_PID 2>/dev/null; true'
xp_check "nothing listening on 5301" expect_err 1 "refused the control connection on port 5301: nothing listens there" \
	-c "$XP_SERVER4" -t 1
xp_check "a host that is not there" expect_cause 1 "198.19.1.99.* timed out, and it does not answer ping|198.19.1.99.*is unreachable" \
	-c 198.19.1.99 -t 1
xp_check "no route on the path (the router's ICMP)" expect_cause 1 "a router on the path has no route" -c 198.18.200.1 -t 1
xp_check "no route on this host" eval '
	xp_exec client ip route del default && { expect_cause 1 "no route to 198.18.200.1 .* on this host" -c 198.18.200.1 -t 1; r=$?; }
	xp_exec client ip route add default via 198.18.1.1; (( r == 0 ))'
xp_check "a name that does not resolve: runtime error" expect_cause 1 "cannot resolve server 'nosuch.invalid'" -c nosuch.invalid -t 1
xp_check "a malformed address: usage error" expect_err 2 "not a valid IPv4 address" -c 198.19.1 -t 1
# Something else on 5301: an HTTP-ish answer, then one that closes at once.
xp_check "a listener that is not xdpperf" eval '
	xp_run_bg server python3 -c "
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((\"0.0.0.0\", 5301)); s.listen()
for reply in (b\"HTTP/1.0 400 Bad Request\r\n\r\n\", b\"\"):
    c, _ = s.accept(); c.recv(4096)
    if reply: c.send(reply)
    c.close()
"; FAKE=$XP_BG_PID; xp_wait_port server 5301'
xp_check "it answers: not xdpperf's protocol" expect_cause 1 "not xdpperf's control protocol: is that an xdpperf server" \
	-c "$XP_SERVER4" -t 1
xp_check "it closes: says so" expect_cause 1 "closed the control connection without an answer: not an xdpperf server" \
	-c "$XP_SERVER4" -t 1
xp_check "fake gone" eval 'wait $FAKE 2>/dev/null; true'
xp_check "server again" start_server
# A device that drops new connections (as a firewall with a full table does): ping passes, SYNs do not.
xp_on_exit 'xp_exec router nft delete table inet xp80 2>/dev/null'
xp_check "router drops SYNs to 5301" eval 'xp_exec router nft -f - <<-EOF
	table inet xp80 {
		chain forward_xp80 {
			type filter hook forward priority -10; policy accept;
			tcp dport 5301 tcp flags & (syn | ack) == syn counter drop
		}
	}
	EOF'
xp_check "times out but answers ping: the path drops new connections" \
	expect_cause 1 "port 5301 timed out, but it answers ping: something on the path drops new connections" -c "$XP_SERVER4" -t 1
xp_check "and the router did drop the SYNs" eval '[[ $(xp_exec router nft list table inet xp80) =~ packets\ ([0-9]+) ]] && (( BASH_REMATCH[1] > 0 ))'
xp_check "rule removed" xp_exec router nft delete table inet xp80
xp_pass

# ---------------------------------------------------------------------------
xp_case json_errors_on_stdout
xp_check "runtime error with -J: {\"error\": ...} on stdout, exit 1" eval '
	client -c "$XP_SERVER4" --control-port 5399 -t 1 -J >"$J" 2>/dev/null; rc=$?; cat "$J"
	(( rc == 1 )) && [[ $(jqv .error) == *"refused the control connection on port 5399"* ]]'
xp_check "usage error with -J: JSON too, exit 2" eval '
	client -c "$XP_SERVER4" -J -b 10x >"$J" 2>/dev/null; rc=$?; cat "$J"
	(( rc == 2 )) && [[ $(jqv .error) == *"invalid rate unit"* ]]'
xp_check "--json-stream: an error event" eval '
	out=$(client -c "$XP_SERVER4" --control-port 5399 -t 1 --json-stream 2>/dev/null); echo "$out"
	[[ $(jq -r .event <<<"$out") == error && $(jq -r .data <<<"$out") == *refused* ]]'
xp_check "a test that ends early: top-level error in the document" eval '
	n0=$(tests_started); p0=$(xp_exec server cat /sys/class/net/xps0/statistics/rx_packets)
	client -c "$XP_SERVER4" -t 4 -b 1kpps --queues 1 -J >"$J" 2>/dev/null & A=$!
	# Killed once the test runs: started in the server'"'"'s log, 200 of its frames on xps0.
	wait_test_started $n0 && xp_wait 10 "200 frames on xps0" eval "(( \$(xp_exec server cat /sys/class/net/xps0/statistics/rx_packets) > p0 + 200 ))"
	kill $SRV_PID; wait $A; rc=$?; wait $SRV_PID 2>/dev/null
	(( rc == 1 )) && [[ $(jqv .error) == *server* && $(jqv .end.error) == "$(jqv .error)" ]]'
# (--allow-bind: the client's --bind addresses, 198.18.1.10-25, are not its control connection's)
xp_check "server again" start_server --allow-bind 198.18.1.0/24
xp_pass

# ---------------------------------------------------------------------------
xp_case dev_and_bind_checked_before_the_test
xp_check "--dev lo: names both interfaces, refused for Ethernet engines" eval '
	out=$(client -c "$XP_SERVER4" -t 1 -b 1kpps -D lo 2>&1); rc=$?; echo "exit $rc: $out"
	(( rc == 1 )) && [[ $out == *"leaves by $XP_CLIENT_DEV, not lo"* && $out == *"lo has no Ethernet address"* && $out != *ifindex* ]]'
xp_check "--bind beyond the addresses of the client: refused, nothing sent" eval '
	s0=$(xp_exec server nstat -asz TcpPassiveOpens | awk "/TcpPassiveOpens/{print \$2}")
	out=$(client -c "$XP_SERVER4" -t 2 -x -P 4 --bind 198.18.1.10-198.18.1.99 2>&1); rc=$?; echo "exit $rc: $out"
	s1=$(xp_exec server nstat -asz TcpPassiveOpens | awk "/TcpPassiveOpens/{print \$2}")
	# the control connection is the only one the server saw
	(( rc == 1 && s1 - s0 <= 1 )) && [[ $out == *"74 of the 90 addresses are not this host"*"198.18.1.26 .. 198.18.1.99"* ]]'
xp_check "--bind within them works" eval 'client -c "$XP_SERVER4" -t 1 -x -P 4 --bind "$XP_CLIENT4_RANGE" -J >"$J" &&
	(( $(jqv .end.sum.sockets.established) > 0 && $(jqv .end.sum.sockets.failed) == 0 ))'
xp_check "--dev with the socket engine binds its connections" eval '
	client -c "$XP_SERVER4" -t 1 -x -P 2 -D "$XP_CLIENT_DEV" -J >"$J" && (( $(jqv .end.sum.sockets.established) > 0 ))'
xp_pass
