#!/usr/bin/env bash
# Two clients at once against one server, neither with -p (issue 30 point 6):
# the server hands each a free range before it opens its engine (the first
# the default 63000:63015, the second the next free one), both tests run
# side by side and each counts exactly what its client sent, which is also
# what the router's nft counter for that range forwarded. Then: an explicit
# -p on a range a running test holds is refused as before ("pick another -p
# range"); with --test-ports leaving room for two ranges only, a third
# client without -p is refused with a message that names -p.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
nft_pk() { xp_exec router nft -j list counter inet xpt92 "$1" | jq '.nftables[] | .counter? // empty | .packets'; }
# Two UDP streams of SECS at 20 kpps, started together, each -J into $XP_TMP/c{1,2}.json.
two_clients() { # SECS [ARGS]
	local secs=$1
	shift
	client -c "$XP_SERVER4" -u -b 20kpps -t "$secs" -J "$@" >"$XP_TMP/c1.json" 2>"$XP_TMP/c1.err" &
	local p1=$!
	client -c "$XP_SERVER4" -u -b 20kpps -t "$secs" -J "$@" >"$XP_TMP/c2.json" 2>"$XP_TMP/c2.err" &
	local p2=$!
	wait $p1 || { echo "client 1 failed:"; cat "$XP_TMP/c1.err"; wait $p2; return 1; }
	wait $p2 || { echo "client 2 failed:"; cat "$XP_TMP/c2.err"; return 1; }
}
j1() { jq -r "$1" "$XP_TMP/c1.json"; }
j2() { jq -r "$1" "$XP_TMP/c2.json"; }

xp_case two_clients_lab
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
xp_check "nft in the router: a counter per range" xp_exec router nft -f - <<EOF2
table inet xpt92 {
	counter r0 { }
	counter r1 { }
	chain fwd92 {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 udp dport 63000-63015 counter name "r0"
		ip daddr 198.19.1.2 udp dport 63016-63031 counter name "r1"
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt92 2>/dev/null"
xp_pass

xp_case two_clients_at_once_without_p
xp_check "two UDP streams at once, no -p" two_clients 3
xp_check "the server handed out two ranges" xp_wait_log "$SRV_LOG" '^\[[^]]*\] ports [0-9]+:[0-9]+ handed out' 2 5
grep -E 'handed out|stream test' "$SRV_LOG" | sed 's/^/    /'
R1="$(j1 .start.port_lo):$(j1 .start.port_hi)" R2="$(j2 .start.port_lo):$(j2 .start.port_hi)"
echo "    client 1: ports $R1, client 2: ports $R2"
xp_check "the ranges differ: 63000:63015 and 63016:63031" eval '
	expect_eq ranges "$(printf "%s\n" "$R1" "$R2" | sort | paste -sd" ")" "63000:63015 63016:63031"'
xp_check "both tests ran at the same time (the server began both before either was done)" eval '
	expect_eq "server log order" "$(grep -oE "stream test|test done" "$SRV_LOG" | head -4 | paste -sd,)" \
		"stream test,stream test,test done,test done"'
for n in 1 2; do
	xp_check "client $n: the server received exactly what it sent" eval '
		s=$(j'$n' .end.sum.sent.packets) r=$(j'$n' .end.sum.received.packets)
		((s > 50000)) && expect_eq "received ($n)" "$r" "$s"'
done
xp_check "the router forwarded exactly each client's frames to its range" eval '
	for n in 1 2; do
		lo=$(j$n .start.port_lo); s=$(j$n .end.sum.sent.packets)
		if [[ $lo == 63000 ]]; then c=r0; else c=r1; fi
		expect_eq "router counter $c (client $n)" "$(nft_pk $c)" "$s" || return 1
	done'
xp_pass

xp_case explicit_p_unchanged
# A long test holds 63000:63015; an explicit -p on it is refused as ever, one without -p gets another range.
client -c "$XP_SERVER4" -u -b 10kpps -t 6 -p 63000:63015 -J >"$XP_TMP/long.json" 2>"$XP_TMP/long.err" &
LONG=$!
N0=$(tests_started)
xp_check "a test with -p 63000:63015 runs" wait_test_started "$N0"
xp_check "another -p 63000:63015 at the same time: refused, as without the server's ranges" eval '
	out=$(client -c "$XP_SERVER4" -u -b 10kpps -t 1 -p 63000:63015 2>&1); rc=$?
	((rc == 1)) && grep -q "overlap 63000:63015 of a test already running; pick another -p range" <<<"$out" ||
		{ echo "rc $rc: $out"; false; }'
xp_check "without -p at the same time: another range, all frames counted" eval '
	client -c "$XP_SERVER4" -u -b 10kpps -t 1 -J >"$J" && expect_eq lo "$(jqv .start.port_lo)" 63016 &&
	expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"'
xp_check "the -p test ended well" wait "$LONG"
xp_pass

xp_case no_free_range_names_p
xp_check "server with --test-ports 63000:63031 (room for two ranges of 16)" eval '
	kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; xdp_gone server xps0 && start_server --test-ports 63000:63031'
client -c "$XP_SERVER4" -u -b 10kpps -t 6 -J >"$XP_TMP/a.json" 2>"$XP_TMP/a.err" &
A=$!
N0=$(tests_started)
xp_check "first test without -p runs" wait_test_started "$N0"
client -c "$XP_SERVER4" -u -b 10kpps -t 6 -J >"$XP_TMP/b.json" 2>"$XP_TMP/b.err" &
B=$!
xp_check "second test without -p runs" wait_test_started "$((N0 + 1))"
xp_check "a third without -p: refused, the message names -p" eval '
	out=$(client -c "$XP_SERVER4" -u -b 10kpps -t 1 2>&1); rc=$?
	((rc == 1)) && grep -q "no free range of 16 ports on this server.*give -p LO:HI" <<<"$out" ||
		{ echo "rc $rc: $out"; false; }'
xp_check "the two tests ended well" eval 'wait "$A" && wait "$B"'
xp_pass
