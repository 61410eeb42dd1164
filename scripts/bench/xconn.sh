# shellcheck shell=bash
# Sourced by scripts/bench.sh; the xconn section.
#
# xconn:  connections/s of -x, the XDP connection engine vs the socket engine
#         (-P 64, closing with a reset), direct and through the --firewall
#         router. Through the firewall the yardstick is netfilter's: an nft
#         counter in the router of the client's handshake-completing ACKs that
#         conntrack classed as an established connection's original direction
#         (one per connection for both engines). On the direct pair nothing
#         between the ends counts connections: the yardstick is the server
#         veth's rx_packets divided by the client->server frames of one
#         connection (socket with reset: SYN, ACK, RST = 3; XDP engine: SYN,
#         ACK = 2), beside each engine's own count as a check.
#         Targets: >= 20x direct, >= 3x through the firewall.

cpu_busy_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

# The firewall's own count of completed handshakes: an nft counter in the
# router, in a table of the bench's own after the lab's filter (so only what
# the firewall accepted), of the client's pure ACKs that conntrack classed as
# an established connection's original direction: the handshake's third
# packet. Both engines (-x, reset close) send exactly one per connection.
fw_counter_add() {
	ip netns exec "$XP_ROUTER_NS" nft -f - <<-EOF
	table inet xpbench {
		counter handshakes { packets 0 bytes 0 }
		chain forward_count {
			type filter hook forward priority 10; policy accept;
			ct direction original ct state established tcp flags & (syn | ack | fin | rst) == ack counter name handshakes
		}
	}
	EOF
}
fw_handshakes() {
	ip netns exec "$XP_ROUTER_NS" nft -j list counter inet xpbench handshakes |
		jq -e '.nftables[] | select(.counter) | .counter.packets'
}

# run_conn ENGINE: one -x run; prints "yardstick_cps own_cps conntrack_entries".
run_conn() {
	local eng=$1 par=() a b own per ct=-
	# The socket engine keeps 64 connects in flight (-P 64); the XDP engine keeps none (it refuses -P).
	[[ $eng == socket ]] && par=(-P 64)
	if [[ -n $XP_ROUTER_NS ]]; then
		ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1 || true
		a=$(fw_handshakes)
	else
		a=$(srv_rx_packets)
	fi
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -x "${par[@]}" -t "$T" --engine "$eng" -J >"$TMP/c.json" 2>"$TMP/c.err" ||
		{ jq -r '.error // empty' "$TMP/c.json" >>"$TMP/c.err" 2>/dev/null; die "xdpperf -x --engine $eng" "$TMP/c.err"; }
	if [[ -n $XP_ROUTER_NS ]]; then
		b=$(fw_handshakes)
		per=1
		ct=$(ip netns exec "$XP_ROUTER_NS" conntrack -C)
	else
		b=$(srv_rx_packets)
		# client->server frames per connection: socket SYN, ACK, RST; XDP engine SYN, ACK (the server resets)
		if [[ $eng == socket ]]; then per=3; else per=2; fi
	fi
	if [[ $eng == socket ]]; then own=$(jq -e '.end.sum.sockets.established' "$TMP/c.json")
	else own=$(jq -e '.end.sum.connections.established' "$TMP/c.json"); fi || die "xdpperf -x --engine $eng (no count)" "$TMP/c.json"
	((b > a)) || die "xdpperf -x --engine $eng (the yardstick did not move: $a -> $b)" "$TMP/c.err"
	echo "$(echo "($b - $a) / $per / $T" | bc -l) $(echo "$own / $T" | bc -l) $ct"
}

bench_xconn() {
	echo "== Connections/s, -x: XDP connection engine vs socket engine (-P 64), ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: firewall: the router's nft count of handshake-completing ACKs of connections conntrack"
	echo "   tracks; direct: the server veth's rx_packets / client->server frames per connection (socket 3, xdp 2)"
	local path r k first second fig own ct max b0 t0 b1 t1 busy
	max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
	for path in direct firewall; do
		lab_up "$path"
		[[ $path == firewall ]] && fw_counter_add
		start_server
		printf "%-9s %-6s %-16s %-16s %s\n" "$path" round "socket" "xdp" "(own counts: socket / xdp; machine CPU busy in the xdp run; conntrack entries after it)"
		: >"$TMP/xc.$path.0"; : >"$TMP/xc.$path.1"
		for ((r = 1; r <= ROUNDS; r++)); do
			if ((r % 2)); then first=socket second=xdp; else first=xdp second=socket; fi
			declare -A F O E
			for k in $first $second; do
				[[ $k == xdp ]] && read -r b0 t0 < <(cpu_busy_ticks)
				read -r fig own ct < <(run_conn "$k")
				[[ -n $fig ]] || exit 1
				[[ $k == xdp ]] && read -r b1 t1 < <(cpu_busy_ticks)
				F[$k]=$fig O[$k]=$own E[$k]=$ct
			done
			busy=$(echo "100 * ($b1 - $b0) / ($t1 - $t0)" | bc -l)
			echo "${F[socket]}" >>"$TMP/xc.$path.0"
			echo "${F[xdp]}" >>"$TMP/xc.$path.1"
			local full=""
			[[ ${E[xdp]} != - ]] && ((max > 0 && E[xdp] * 100 >= max * 95)) &&
				full=" - the table filled up (max $max; CLOSEd entries linger 10 s): the firewall's limit"
			printf "%-9s %-6s %-16s %-16s (%s / %s; %.0f %%; %s%s)\n" "" "$r" "$(fmt_cps "${F[socket]}")" "$(fmt_cps "${F[xdp]}")" \
				"$(fmt_cps "${O[socket]}" | tr -s ' ')" "$(fmt_cps "${O[xdp]}" | tr -s ' ')" "$busy" "${E[xdp]}" "$full"
		done
		stop_server
	done
	echo
	printf "%-9s %-40s %-40s\n" path "socket min / median / max" "xdp min / median / max"
	for path in direct firewall; do
		printf "%-9s %-40s %-40s\n" "$path" \
			"$(fmt_cps "$(fig_of "xc.$path" 0 min)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 0 med)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 0 max)" | tr -s ' ')" \
			"$(fmt_cps "$(fig_of "xc.$path" 1 min)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 1 med)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 1 max)" | tr -s ' ')"
	done
	echo
	cmp_line "xdp vs socket, direct:" xc.direct 1 0 ">= 20x"
	cmp_line "xdp vs socket, firewall:" xc.firewall 1 0 ">= 3x"
	echo "(on veth the router forwards in the sender's softirq context: the router's limit shows as the"
	echo " whole machine's CPU being busy, not as one router core)"
	echo
}
