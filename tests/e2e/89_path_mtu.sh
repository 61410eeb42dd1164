#!/usr/bin/env bash
# End-to-end tests of the ICMP errors a path sends back during a frame test:
# MTU 9000 from the client to the router, 1500 behind it. 3000-byte frames
# (DF set) cannot pass: the router answers each with "fragmentation needed"
# (IPv6: "packet too big") naming MTU 1500. The client's count must equal
# the router's own counter of errors sent (nstat: IcmpOutDestUnreachs,
# Icmp6OutPktTooBigs), name the path MTU and the hop, be the summary's first
# line, and fail the run. A router that rejects the test's frames
# (nftables) gives "host unreachable", counted against its nft counter; a
# test that fits the path has no such line and passes.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
NC=xp-mtu-c NR=xp-mtu-r NS=xp-mtu-s
SRV4=198.18.71.2 SRV6=2001:2:0:71::2
client() { xp_exec "$NC" "$BIN" "$@"; }
# The router's counter, as the kernel keeps it (nstat: absolute, no history written).
router_stat() { ip netns exec "$NR" nstat -asz "$1" | awk -v k="$1" '$1 == k { print $2 }'; }
# The summary's first line: the one after the separator.
first_line() { awk '/^- - - - /{ getline; print; exit }' "$1"; }

xp_case lab_mtu_9000_then_1500
xp_check "routed lab" xp_routed_lab --v6 2001:2:0:70 2001:2:0:71 "$NC" "$NR" "$NS" 198.18.70 198.18.71
xp_check "MTU 9000 client -> router" eval 'ip -n "$NC" link set c0 mtu 9000 && ip -n "$NR" link set r0 mtu 9000'
# Every error the router makes is sent (the check compares counts; frag-needed is not rate-limited anyway).
xp_check "router: no ICMP rate limit" ip netns exec "$NR" sysctl -qw net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
xp_check "server" start_server_in "$NS"
xp_pass

# ---------------------------------------------------------------------------
xp_case v4_fragmentation_needed_counted_and_named
d0=$(router_stat IcmpOutDestUnreachs)
xp_check "-u -l 3000 exits 1" eval 'expect_rc 1 client -c "$SRV4" -u -l 3000 -t 2 -b 10kpps -J >"$J" 2>"$XP_TMP/err"'
d=$(($(router_stat IcmpOutDestUnreachs) - d0))
cat "$XP_TMP/err"
echo "    figures: sent $(jqv .end.sum.sent.packets), received $(jqv .end.sum.received.packets), client ICMP count $(jqv .end.icmp_errors.count), router IcmpOutDestUnreachs +$d"
xp_check "nothing arrived" expect_eq received "$(jqv .end.sum.received.packets)" 0
xp_check "the router refused them" eval '(( d > 1000 ))'
xp_check "client's ICMP count == router's IcmpOutDestUnreachs delta" expect_eq count "$(jqv .end.icmp_errors.count)" "$d"
xp_check "all fragmentation needed" expect_eq kind "$(jqv .end.icmp_errors.by_kind.fragmentation_needed)" "$d"
xp_check "path MTU 1500, largest frame 1518" expect_eq mtu "$(jqv '"\(.end.icmp_errors.path_mtu) \(.end.icmp_errors.max_frame_size)"')" "1500 1518"
xp_check "the hop: the router's 198.18.70.1, type 3 code 4, MTU 1500" expect_eq hop \
	"$(jqv '.end.icmp_errors.hops[] | "\(.from) \(.type) \(.code) \(.mtu) \(.count)"')" "198.18.70.1 3 4 1500 $d"
xp_check "stderr says why it failed" grep -q "^xdpperf: lost 100.0000 % of the frames; ICMP errors: $d came back" "$XP_TMP/err"
# The text summary: the ICMP line first.
xp_check "text run exits 1" eval 'expect_rc 1 client -c "$SRV4" -u -l 3000 -t 1 -b 10kpps >"$XP_TMP/out" 2>/dev/null'
first_line "$XP_TMP/out"
xp_check "the summary's first line is the ICMP errors, naming hop and MTU" eval \
	'first_line "$XP_TMP/out" | grep -Eq "^ICMP errors: [0-9]+ came back from the path for the test.s frames: [0-9]+ fragmentation needed from 198.18.70.1 \(next-hop MTU 1500\): the path MTU is 1500, frames above -l 1518 do not pass$"'
xp_pass

# ---------------------------------------------------------------------------
xp_case v6_packet_too_big_counted_and_named
p0=$(router_stat Icmp6OutPktTooBigs)
xp_check "-u -l 3000 to IPv6 exits 1" eval 'expect_rc 1 client -c "$SRV6" -u -l 3000 -t 2 -b 10kpps -J >"$J" 2>/dev/null'
p=$(($(router_stat Icmp6OutPktTooBigs) - p0))
echo "    figures: sent $(jqv .end.sum.sent.packets), client ICMP count $(jqv .end.icmp_errors.count), router Icmp6OutPktTooBigs +$p"
xp_check "the router refused them" eval '(( p > 1000 ))'
xp_check "client's ICMP count == router's Icmp6OutPktTooBigs delta" expect_eq count "$(jqv .end.icmp_errors.count)" "$p"
xp_check "path MTU 1500, from the router's 2001:2:0:70::1" expect_eq hop \
	"$(jqv '.end.icmp_errors.hops[] | "\(.from) \(.name) \(.mtu)"')" "2001:2:0:70::1 packet too big 1500"
xp_pass

# ---------------------------------------------------------------------------
xp_case fits_the_path_no_icmp_line
xp_check "-u -l 1518 exits 0" eval 'client -c "$SRV4" -u -l 1518 -t 1 -b 10kpps >"$XP_TMP/out"'
xp_check "no ICMP line" eval '! grep -q "^ICMP errors" "$XP_TMP/out"'
xp_check "-J: icmp_errors.count 0" eval 'client -c "$SRV4" -u -l 1518 -t 1 -b 10kpps -J >"$J" && [[ $(jqv .end.icmp_errors.count) == 0 ]]'
xp_check "every frame arrived" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
xp_pass

# ---------------------------------------------------------------------------
xp_case v4_unreachable_from_a_rejecting_router
xp_on_exit "ip netns exec $NR nft delete table inet xp_mtu 2>/dev/null"
xp_check "router rejects the test's UDP frames" ip netns exec "$NR" nft -f - <<'EOF'
table inet xp_mtu {
	chain forward {
		type filter hook forward priority 0;
		udp dport 63000-63015 counter reject with icmp type host-unreachable
	}
}
EOF
d0=$(router_stat IcmpOutDestUnreachs)
xp_check "-u -l 1000 exits 1" eval 'expect_rc 1 client -c "$SRV4" -u -l 1000 -t 2 -b 5kpps -J >"$J" 2>/dev/null'
d=$(($(router_stat IcmpOutDestUnreachs) - d0))
rej=$(nft_counted "$NR" xp_mtu)
echo "    figures: sent $(jqv .end.sum.sent.packets), client ICMP count $(jqv .end.icmp_errors.count), router nft rejects $rej, IcmpOutDestUnreachs +$d"
xp_check "the router rejected every frame (nft counter == sent)" expect_eq rejected "$rej" "$(jqv .end.sum.sent.packets)"
xp_check "client's ICMP count == router's IcmpOutDestUnreachs delta" expect_eq count "$(jqv .end.icmp_errors.count)" "$d"
xp_check "named: host unreachable from 198.18.70.1, no MTU" expect_eq hop \
	"$(jqv '.end.icmp_errors.hops[] | "\(.from) \(.name) \(.mtu)"')" "198.18.70.1 destination unreachable (host unreachable) null"
xp_check "no path MTU" expect_eq mtu "$(jqv .end.icmp_errors.path_mtu)" null
xp_pass
