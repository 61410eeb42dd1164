# shellcheck shell=bash
# Sourced by scripts/bench.sh; the fireperf section.
#
# fireperf: the seed's table (issue 31): fireperf's own invocations on the
#           routed lab, the server as fireperf's README starts it
#           (-s -P 10000 -p 63000:63010) and the client's connection test
#           (-x -p 63000:63010) at -P 1, 10, 100, 1000 and 10000, with the
#           socket engine (fireperf's: the kernel's TCP stack) and the XDP
#           connection engine (--engine xdp), one after the other at each -P,
#           in one run. The yardstick is neither engine's: an nft counter in
#           the router of the client's pure ACKs to the test's ports, the
#           handshake-completing ACK, one per connection for both (the socket
#           engine closes with a reset, the XDP engine's server answers in
#           XDP), divided by the run's seconds; each engine's own count
#           (its -J) stands beside it as a check. No target: the table is the
#           figures a fireperf user compares with.

FIREPERF_P=${BENCH_FIREPERF_P:-1 10 100 1000 10000}

fp_acks() {
	ip netns exec "$XP_ROUTER_NS" nft -j list counter inet xpbenchfp acks |
		jq '.nftables[] | .counter? // empty | .packets'
}

# fp_run ENGINE_ARGS...: one -x run; prints "yardstick/s own/s".
fp_run() {
	local a b own
	a=$(fp_acks)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -x -p 63000:63010 "$@" -t "$T" -J \
		>"$TMP/fp.json" 2>"$TMP/fp.err" || die "xdpperf -c -x $*" "$TMP/fp.err"
	b=$(fp_acks)
	own=$(jq '.end.sum.connections.established // .end.sum.sockets.established // 0' "$TMP/fp.json")
	echo "$(echo "($b - $a) / $T" | bc -l) $(echo "$own / $T" | bc -l)"
}

bench_fireperf() {
	bash "$LAB" up >/dev/null
	eval "$(bash "$LAB" env)"
	ip netns exec "$XP_ROUTER_NS" nft -f - <<-NFT || { echo "bench: nft counter in the router failed" >&2; exit 1; }
	table inet xpbenchfp {
		counter acks { }
		chain count_acks {
			type filter hook forward priority 10; policy accept;
			tcp dport 63000-63010 tcp flags & (syn | ack | fin | rst) == ack counter name acks
		}
	}
	NFT
	start_server -P 10000 -p 63000:63010
	echo "== fireperf's table: -x -p 63000:63010 at each -P, socket engine then XDP engine, $T s each (connections/s: router nft count of handshake-completing ACKs; the engine's own count beside it)"
	printf "%-8s %-16s %-16s %-16s %-16s %s\n" "-P" "socket" "(its own)" "xdp" "(its own)" "xdp / socket"
	local p s x s_own x_own
	for p in $FIREPERF_P; do
		read -r s s_own < <(fp_run -P "$p")
		read -r x x_own < <(fp_run --engine xdp -P "$p")
		printf "%-8s %-16s %-16s %-16s %-16s %s\n" "$p" "$(fmt_cps "$s")" "$(fmt_cps "$s_own")" "$(fmt_cps "$x")" \
			"$(fmt_cps "$x_own")" "$(ratio "$x" "$s")"
	done
	stop_server
	ip netns exec "$XP_ROUTER_NS" nft delete table inet xpbenchfp
	echo
}
