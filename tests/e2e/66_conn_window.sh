#!/usr/bin/env bash
# End-to-end tests of the XDP connection engine's window (issue 12, points
# 1-3): -P as the number of handshakes in flight, SYNs sent again after 1 s
# (doubling) through a router that drops a known share of SYN-ACKs, failures
# counted by cause, -k holding exactly -P through that loss, and keepalives
# that keep a firewall's entries past a short established timeout. Every
# figure is checked against the router's own counters (nft rule counters,
# conntrack).
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
conn() { jq -r ".end.sum.connections.$1" "$J"; }
ct_state() { xp_exec router conntrack -L -p tcp --state "$1" 2>/dev/null | wc -l; }
# The packets counted by rule number $1 (0-based, in order) of table inet xptest: the router's own counter.
nft_count() { xp_exec router nft -j list table inet xptest | jq "[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | .[$1]"; }
between() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' || { echo "$1: $2 not in [$3, $4]"; return 1; }; }
rules() { xp_exec router nft delete table inet xptest 2>/dev/null; xp_exec router nft -f -; }
CT_EST=/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_established
# The router's ICMP rate limit back as it was (per namespace too).
icmp_rl_restore() {
	[[ -z ${RL0:-} ]] || xp_exec router sysctl -qw net.ipv4.icmp_ratelimit="$RL0" net.ipv4.icmp_msgs_per_sec="$MPS0" \
		net.ipv4.icmp_msgs_burst="$MB0" 2>/dev/null || true
}
# The router's established timeout back as it was (it is per namespace: the lab's teardown ends it too).
ct_est_restore() { [[ -z ${CT_EST0:-} ]] || xp_exec router sh -c "echo $CT_EST0 > $CT_EST" 2>/dev/null || true; }

# ---------------------------------------------------------------------------
# Every SYN-ACK dropped: the window alone decides how many SYNs go out. -P 100
# and no retransmission: 100 SYNs, then nothing until they time out 1 s later.
xp_case window_caps_syns_in_flight
xp_check "lab up with the firewall" xp_lab_up --firewall
# (--allow-bind: the client's --bind addresses, 198.18.1.10-25, are not its control connection's)
xp_check "server" start_server --allow-bind 198.18.1.0/24
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router counts the SYNs, drops every SYN-ACK" eval 'rules <<-NFT
	table inet xptest {
		chain xpc {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags & (syn | ack) == syn counter
			tcp sport 63000-63015 tcp flags & (syn | ack) == syn | ack counter drop
		}
	}
	NFT'
xp_check "-x -P 100 --syn-retries 0 for 3 s, the router's count half a second in" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" --engine xdp -x -P 100 --syn-retries 0 -t 3 -J >"$J" 2>/dev/null &
	# (sleep: the sampling moment is the subject, between the first 100 SYNs and their 1 s timeout)
	A=$!; wait_test_started $n0; sleep 0.5; EARLY=$(nft_count 0); wait $A; true'
xp_check "exactly 100 SYNs out in the first half second (router nft counter)" expect_eq early "$EARLY" 100
sent=$(conn syn_sent)
xp_check "the client counted what the router saw" expect_eq syn_sent "$sent" "$(nft_count 0)"
# 100 at 0 s, 1 s, 2 s (each freed by its timeout 1 s later), 3 s at most: 300..400.
xp_check "each slot reused once a second" between syn_sent "$sent" 290 400
xp_check "failures: timed out, by the client's count" eval '
	expect_eq "timed out + in flight" "$(($(conn failed_timeout) + $(conn in_flight_at_end)))" "$sent" &&
	expect_eq established "$(conn established)" 0 && expect_eq retransmitted "$(conn syn_retransmitted)" 0'
xp_check "rules removed" xp_exec router nft delete table inet xptest
xp_pass

# ---------------------------------------------------------------------------
# 30 % of the SYN-ACKs dropped: each dropped one is made up by one SYN sent
# again (or is still waiting when the test ends), and the router's drop
# counter says how many that must be.
xp_case connect_retransmits_through_loss
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router drops 30 % of the SYN-ACKs" eval 'rules <<-NFT
	table inet xptest {
		chain xpc {
			type filter hook forward priority -10; policy accept;
			tcp sport 63000-63015 tcp flags & (syn | ack) == syn | ack numgen random mod 100 < 30 counter drop
		}
	}
	NFT'
xp_check "-x at 5000 SYN/s, -P 4000, for 4 s" eval 'client -c "$XP_SERVER4" --engine xdp -x --cps 5000 -P 4000 -t 4 -J >"$J"'
sent=$(conn syn_sent) est=$(conn established) retx=$(conn syn_retransmitted) wait_end=$(conn in_flight_at_end)
dropped=$(nft_count 0)
echo "sent $sent established $est retransmitted $retx waiting $wait_end dropped $dropped"
xp_check "about 20000 connections started" between syn_sent "$sent" 19000 20100
xp_check "dropped SYN-ACKs = SYNs sent again + still waiting (router nft counter)" \
	expect_near dropped "$dropped" "$((retx + wait_end))" "$((dropped / 200 + 3))"
xp_check "every connection completed or still waiting" expect_near "established + waiting" "$((est + wait_end))" "$sent" 3
xp_check "none given up, none reset" eval 'expect_eq timeout "$(conn failed_timeout)" 0 && expect_eq reset "$(conn failed_reset)" 0'
xp_check "rules removed" xp_exec router nft delete table inet xptest
xp_pass

# ---------------------------------------------------------------------------
# Resets and ICMP unreachables are failures of their own, counted by cause:
# the router refuses 20 % of the SYNs with a TCP reset and 10 % of the rest
# with ICMP host unreachable.
xp_case failures_counted_by_cause
xp_check "flush conntrack" xp_exec router conntrack -F
# The router's ICMP rate limit (1 a second per peer) would withhold most of them.
xp_check "router: no ICMP rate limit" eval '
	MPS0=$(xp_exec router sysctl -n net.ipv4.icmp_msgs_per_sec); MB0=$(xp_exec router sysctl -n net.ipv4.icmp_msgs_burst)
	RL0=$(xp_exec router sysctl -n net.ipv4.icmp_ratelimit); xp_on_exit icmp_rl_restore
	xp_exec router sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_msgs_per_sec=100000 net.ipv4.icmp_msgs_burst=100000'
xp_check "router resets 20 % of the SYNs, rejects 10 % of the rest as unreachable" eval 'rules <<-NFT
	table inet xptest {
		chain xpc {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags & (syn | ack) == syn numgen random mod 100 < 20 counter reject with tcp reset
			tcp dport 63000-63015 tcp flags & (syn | ack) == syn numgen random mod 100 < 10 counter reject with icmp type host-unreachable
		}
	}
	NFT'
xp_check "-x at 5000 SYN/s for 2 s" eval 'client -c "$XP_SERVER4" --engine xdp -x --cps 5000 -P 1000 -t 2 -J >"$J"'
echo "sent $(conn syn_sent) established $(conn established) reset $(conn failed_reset) unreachable $(conn failed_unreachable); router: $(nft_count 0) reset, $(nft_count 1) unreachable"
xp_check "failed by reset = the router's resets (nft counter)" expect_eq failed_reset "$(conn failed_reset)" "$(nft_count 0)"
xp_check "failed as unreachable = the router's ICMP rejects (nft counter)" \
	expect_eq failed_unreachable "$(conn failed_unreachable)" "$(nft_count 1)"
xp_check "about 20 % and 8 %" eval 'between reset "$(conn failed_reset)" 1600 2400 && between unreach "$(conn failed_unreachable)" 560 1040'
xp_check "the rest completed (or was still waiting at the end)" expect_eq "established + reset + unreachable + waiting" \
	"$(($(conn established) + $(conn failed_reset) + $(conn failed_unreachable) + $(conn in_flight_at_end)))" "$(conn syn_sent)"
xp_check "no SYN sent again (a reset or an unreachable is final)" expect_eq retransmitted "$(conn syn_retransmitted)" 0
xp_check "the text names the causes" eval '
	out=$(client -c "$XP_SERVER4" --engine xdp -x --cps 5000 -P 1000 -t 1); grep "^Failed" <<<"$out"
	[[ $(grep "^Failed" <<<"$out") == *" reset, "[1-9]*" ICMP unreachable"* ]]'
xp_check "rules removed" xp_exec router nft delete table inet xptest
xp_check "ICMP rate limit restored" eval 'icmp_rl_restore; [[ $(xp_exec router sysctl -n net.ipv4.icmp_ratelimit) == "$RL0" ]]'
xp_pass

# ---------------------------------------------------------------------------
# -k -P 50000 through a router that drops 10 % of the SYN-ACKs: the lost ones
# are sent again (1 s, 3 s, 7 s after the first), so all 50000 are held, or
# the report says exactly how many were not and why; the firewall's
# conntrack table agrees with what the client says it holds.
xp_case hold_exact_under_synack_loss
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router drops 10 % of the SYN-ACKs" eval 'rules <<-NFT
	table inet xptest {
		chain xpc {
			type filter hook forward priority -10; policy accept;
			tcp sport 63000-63015 tcp flags & (syn | ack) == syn | ack numgen random mod 100 < 10 counter drop
		}
	}
	NFT'
xp_check "-k -P 50000 for 10 s, conntrack sampled at 9 s" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" --engine xdp -k -P 50000 -t 10 --bind "$XP_CLIENT4_RANGE" -J >"$J" &
	# (sleep: the sampling moment is the subject, after the last retransmission at 7 s, before the end at 10 s)
	A=$!; wait_test_started $n0; sleep 9; HELD_CT=$(ct_state ESTABLISHED); wait $A'
held=$(jqv .end.hold.open_at_end)
echo "held $held, conntrack ESTABLISHED $HELD_CT, dropped $(nft_count 0), retransmitted $(conn syn_retransmitted)"
xp_check "held + timed out + reset + still waiting = 50000, exactly" expect_eq accounted \
	"$((held + $(conn failed_timeout) + $(conn failed_reset) + $(conn in_flight_at_end)))" 50000
# 10 % loss four times over (the SYN and 3 retransmissions by 9 s): 50000 x 1e-4 = 5 expected short.
xp_check "at most 30 not held" between held "$held" 49970 50000
xp_check "conntrack ESTABLISHED = held + the control connection" expect_eq ESTABLISHED "$HELD_CT" "$((held + 1))"
xp_check "some SYN-ACKs were dropped, and made up" eval '(( $(nft_count 0) >= 4000 )) &&
	expect_near retransmitted "$(conn syn_retransmitted)" "$(nft_count 0)" "$(conn in_flight_at_end)"'
xp_check "all reset at the end" eval 'ct_gone() { (( $(ct_state ESTABLISHED) <= 1 )); }; xp_wait 5 "ESTABLISHED down to 1" ct_gone'
xp_check "rules removed" xp_exec router nft delete table inet xptest
xp_pass

# ---------------------------------------------------------------------------
# The same window with the AF_XDP SYN sender: it takes a slot per SYN in
# userspace; the keeper resets what it holds at the end.
xp_case hold_with_xsk_sender
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "-k -P 3000 --syn-engine xsk for 2 s, conntrack sampled at 1.5 s" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" --engine xdp -k -P 3000 --syn-engine xsk -t 2 -J >"$J" &
	# Sampled once 3001 are in the table, or when the client is done (then it says how many were).
	A=$!; wait_test_started $n0
	until (( $(ct_state ESTABLISHED) >= 3001 )) || ! kill -0 $A 2>/dev/null; do sleep 0.05; done
	XSK_CT=$(ct_state ESTABLISHED); wait $A'
xp_check "SYNs from AF_XDP" eval '[[ $(jqv .start.engine_mode) == copy || $(jqv .start.engine_mode) == zerocopy ]]'
xp_check "exactly 3000 SYNs, all held" eval 'expect_eq syn_sent "$(conn syn_sent)" 3000 && expect_eq held "$(jqv .end.hold.open_at_end)" 3000'
xp_check "conntrack ESTABLISHED = 3000 + the control connection" expect_eq ESTABLISHED "$XSK_CT" 3001
xp_check "3000 reset at the end, all CLOSE in conntrack" eval '
	expect_eq reset "$(conn held_reset_at_end)" 3000 && expect_near CLOSE "$(ct_state CLOSE)" 3000 1'
xp_pass

# ---------------------------------------------------------------------------
# A firewall that forgets established connections idle for 4 s: keepalives
# every second keep all 2000 held connections in its table; without them
# they are gone. The router counts the keepalives (pure ACKs to the test ports),
# and the server counts each by its cookie, none as an invalid one.
xp_case keepalive_keeps_firewall_entries
xp_check "router's established timeout 4 s" eval '
	CT_EST0=$(xp_exec router cat $CT_EST); xp_on_exit ct_est_restore
	xp_exec router sh -c "echo 4 > $CT_EST"; [[ $(xp_exec router cat $CT_EST) == 4 ]]'
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router counts pure ACKs to the test ports" eval 'rules <<-NFT
	table inet xptest {
		chain xpc {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags == ack counter
		}
	}
	NFT'
xp_check "-k -P 2000 --keepalive-interval 1 for 10 s, conntrack sampled at 8 s" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" --engine xdp -k -P 2000 --keepalive-interval 1 -t 10 -J >"$J" &
	# (sleep: waits out the 4 s established timeout on purpose: the table at 8 s is the subject)
	A=$!; wait_test_started $n0; sleep 8; KA_CT=$(ct_state ESTABLISHED); wait $A'
ka=$(conn keepalives_sent)
echo "conntrack ESTABLISHED at 8 s: $KA_CT; keepalives $ka; router pure ACKs $(nft_count 0)"
xp_check "every held connection still in the table at 8 s" expect_eq ESTABLISHED "$KA_CT" 2001
xp_check "about 10 keepalives per connection" between keepalives "$ka" 16000 22000
xp_check "the router saw the handshake ACKs and every keepalive (nft counter)" expect_eq "pure ACKs" "$(nft_count 0)" "$((2000 + ka))"
# The server counts a keepalive by its cookie (seq one below the handshake's):
# the router's pure ACKs less the handshakes the server completed.
echo "server: $(conn server_keepalives) keepalives, $(conn server_cookie_invalid) invalid cookies, $(conn established) established"
xp_check "the server's keepalives = the router's pure ACKs - the handshake ACKs (nft counter)" \
	expect_eq server_keepalives "$(conn server_keepalives)" "$(($(nft_count 0) - $(conn established)))"
xp_check "no keepalive counted as an invalid cookie" expect_eq cookie_invalid "$(conn server_cookie_invalid)" 0
# The server's keepalive search is bounded (a budget of MACs per CPU): a hold's own keepalives stay well within it.
xp_check "every keepalive checked, none over the server's search budget" \
	expect_eq keepalive_unchecked "$(conn server_keepalive_unchecked)" 0
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "without keepalives: gone from the table by 8 s" eval '
	n0=$(tests_started)
	client -c "$XP_SERVER4" --engine xdp -k -P 2000 -t 10 -J >"$J" &
	# (sleep: the 4 s timeout waited out on purpose, as above)
	A=$!; wait_test_started $n0; sleep 8; NOKA_CT=$(ct_state ESTABLISHED); wait $A
	echo "conntrack ESTABLISHED at 8 s without keepalives: $NOKA_CT"; (( NOKA_CT <= 1 ))'
xp_check "no keepalive sent, none counted by the server" eval '
	expect_eq keepalives "$(conn keepalives_sent)" 0 && expect_eq server_keepalives "$(conn server_keepalives)" 0'
xp_check "rules removed" xp_exec router nft delete table inet xptest
xp_check "established timeout restored" eval 'ct_est_restore; [[ $(xp_exec router cat $CT_EST) == "$CT_EST0" ]]'
xp_pass
