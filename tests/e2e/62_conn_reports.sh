#!/usr/bin/env bash
# End-to-end tests of the connection tests' honest reports (issue 12, point 6):
# with a known share of SYN-ACKs dropped in the firewall, the summary's first
# line says how many SYNs went unanswered, where and why, and the count agrees
# with the router's nft rule counter; a clean run says nothing; a control
# connection that times out right after a connection test blames the device.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
conn() { jq -r ".end.sum.connections.$1" "$J"; }
# The packets counted by the xptest table's rule (the router's own counter).
nft_dropped() { xp_exec router nft -j list table inet xptest | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add'; }
between() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' || { echo "$1: $2 not in [$3, $4]"; return 1; }; }

# ---------------------------------------------------------------------------
xp_case synacks_dropped_named_first
xp_check "lab up with the firewall" xp_lab_up --firewall
xp_check "server" start_server
xp_check "flush conntrack" xp_exec router conntrack -F
# 30 % of the server's SYN-ACKs dropped at random on their way back, counted by the rule.
# (No retransmissions, and a window that the unanswered SYNs do not fill: each dropped
# SYN-ACK stays one unanswered SYN. tests/e2e/66_conn_window.sh retransmits through it.)
xp_check "router drops 30 % of the SYN-ACKs" eval 'xp_exec router nft -f - <<-NFT
	table inet xptest {
		chain synack {
			type filter hook forward priority -10; policy accept;
			tcp sport 63000-63015 tcp flags & (syn | ack) == syn | ack numgen random mod 100 < 30 counter drop
		}
	}
	NFT'
xp_check "-x at 10k SYN/s for 2 s, with the router's counters" eval '
	client -c "$XP_SERVER4" --engine xdp -x --cps 10000 -P 10000 --syn-retries 0 -t 2 --device-netns "$(xp_ns router)" -J >"$J"'
sent=$(conn syn_sent) est=$(conn established) dropped=$(nft_dropped)
xp_check "about 30 % unanswered" between unanswered_percent "$(jqv .end.warning.unanswered_percent)" 26 34
xp_check "unanswered = SYNs sent - established" expect_eq unanswered "$(jqv .end.warning.unanswered)" "$((sent - est))"
# Each dropped SYN-ACK is one unanswered SYN (the last ones may still be on the way: 0.2 % slack).
xp_check "agrees with the router's nft counter" expect_near "nft counter" "$dropped" "$((sent - est))" "$((sent / 500 + 2))"
xp_check "cause: device drops" expect_eq cause "$(jqv .end.warning.cause)" device_drops
xp_check "located on the way back" eval '[[ $(jqv .end.warning.text) == *"SYN-ACKs missing at the client"* ]]'
xp_check "with the router's conntrack figures" eval '[[ $(jqv .end.warning.text) == *"conntrack "*" of "*" entries"* ]]'
xp_check "text: the summary's first line is the warning" eval '
	out=$(client -c "$XP_SERVER4" --engine xdp -x --cps 10000 -P 10000 --syn-retries 0 -t 1 --device-netns "$(xp_ns router)")
	first=$(sed -n "/^- - - -/{n;p;q}" <<<"$out"); echo "$first"; [[ $first == "WARNING: "*" % of the SYNs went unanswered"* ]]'
xp_check "rule removed" xp_exec router nft delete table inet xptest
xp_pass

# ---------------------------------------------------------------------------
xp_case clean_run_no_warning
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "-x at 10k SYN/s for 1 s" eval 'client -c "$XP_SERVER4" --engine xdp -x --cps 10000 -t 1 -J >"$J"'
xp_check "every SYN completed" expect_eq established "$(conn established)" "$(conn syn_sent)"
xp_check "no warning" expect_eq warning "$(jqv .end.warning)" null
xp_check "bad --device-netns: one line, exit 1" eval '
	out=$(client -c "$XP_SERVER4" --engine xdp -x -t 1 --device-netns xp-no-such-ns 2>&1 >/dev/null); rc=$?
	echo "rc=$rc: $out"; (( rc == 1 )) && [[ $out == *"cannot open network namespace"* && $(wc -l <<<"$out") == 1 ]]'
xp_pass

# ---------------------------------------------------------------------------
xp_case control_timeout_after_connection_test
# The last case's test just ended; now the device refuses new connections (every SYN to the control port dropped).
xp_check "router drops new control connections" eval 'xp_exec router nft -f - <<-NFT
	table inet xptest {
		chain ctl {
			type filter hook forward priority -10; policy accept;
			tcp dport 5301 tcp flags & (syn | ack) == syn drop
		}
	}
	NFT'
xp_check "control connection times out: the device may be refusing new connections" eval '
	out=$(client -c "$XP_SERVER4" --engine xdp -x -t 1 2>&1 >/dev/null); rc=$?
	echo "rc=$rc: $out"; (( rc == 1 )) && [[ $out == *"timed out"*"may be refusing new connections"* && $(wc -l <<<"$out") == 1 ]]'
xp_check "rule removed" xp_exec router nft delete table inet xptest
xp_check "server still there, control connection works again" eval 'client -c "$XP_SERVER4" --engine xdp -x --cps 1000 -t 1 >/dev/null'
xp_pass
