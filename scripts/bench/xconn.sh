# shellcheck shell=bash
# Sourced by scripts/bench.sh; the xconn section.
#
# xconn:  connections/s of -x -P 1000, the XDP connection engine vs the socket
#         engine (both with 1000 connections in flight, closing with a
#         reset), 5 alternating runs each, on the direct pair with one queue
#         and through the --firewall router. Through the firewall the yardstick is netfilter's: an nft
#         counter in the router of the client's handshake-completing ACKs that
#         conntrack classed as an established connection's original direction
#         (one per connection for both engines). On the direct pair nothing
#         between the ends counts connections: the yardstick is the server
#         veth's rx_packets divided by the client->server frames of one
#         connection (socket with reset: SYN, ACK, RST = 3; XDP engine: SYN,
#         ACK = 2), beside each engine's own count as a check.
#         Per engine the spread over the runs ((max - min) / median, target
#         <= 5 %) and, for the XDP engine, the share of its SYNs completed
#         (the yardstick's connections / its SYNs sent, target >= 99.9 %).
#         Targets: >= 25x direct, >= 3x through the firewall.

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

XCONN_RUNS=${BENCH_XCONN_RUNS:-5}
XCONN_P=1000
# The firewall keeps a reset connection's conntrack entry this long (lab.sh
# --ct-close; the kernel's default is 10 s). At 10 s its 262144 entries hold
# 26 k resets a second, and the XDP engine filled the table within each 5-s
# run (52.4 kconn/s in every run): both engines then measured the table, not
# the connection rate. At 1 s the table holds 262 k a second.
XCONN_CT_CLOSE=${BENCH_CT_CLOSE:-1}

# The lab of a path: the direct pair with one queue (one flow, one core: the engines' own limits), or the firewall.
xconn_lab_up() {
	case $1 in
	direct) bash "$LAB" up --direct --queues 1 >/dev/null ;;
	firewall) bash "$LAB" up --firewall --ct-close "$XCONN_CT_CLOSE" --queues 1 >/dev/null ;;
	esac
	eval "$(bash "$LAB" env)"
}

# run_conn ENGINE: one -x -P 1000 run; prints "yardstick_cps own_cps conntrack_entries syn_sent yardstick_conns".
run_conn() {
	local eng=$1 a b own per ct=- syn
	if [[ -n $XP_ROUTER_NS ]]; then
		ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1 || true
		a=$(fw_handshakes)
	else
		a=$(srv_rx_packets)
	fi
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -x -P "$XCONN_P" -t "$T" --engine "$eng" -J >"$TMP/c.json" 2>"$TMP/c.err" ||
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
	if [[ $eng == socket ]]; then
		own=$(jq -e '.end.sum.sockets.established' "$TMP/c.json")
		syn=$(jq -e '.end.sum.sockets.established + .end.sum.sockets.failed' "$TMP/c.json" 2>/dev/null || echo 0)
	else
		own=$(jq -e '.end.sum.connections.established' "$TMP/c.json")
		syn=$(jq -e '.end.sum.connections.syn_sent' "$TMP/c.json")
	fi || die "xdpperf -x --engine $eng (no count)" "$TMP/c.json"
	((b > a)) || die "xdpperf -x --engine $eng (the yardstick did not move: $a -> $b)" "$TMP/c.err"
	echo "$(echo "($b - $a) / $per / $T" | bc -l) $(echo "$own / $T" | bc -l) $ct $syn $(echo "($b - $a) / $per" | bc)"
}

# spread NAME INDEX: (max - min) / median in percent.
spread() { echo "100 * ($(fig_of "$1" "$2" max) - $(fig_of "$1" "$2" min)) / $(fig_of "$1" "$2" med)" | bc -l; }

bench_xconn() {
	echo "== Connections/s, -x -P $XCONN_P: XDP connection engine vs socket engine, ${T} s per run, $XCONN_RUNS alternating runs each"
	echo "   yardstick: firewall: the router's nft count of handshake-completing ACKs of connections conntrack"
	echo "   tracks; direct (one queue): the server veth's rx_packets / client->server frames per connection (socket 3, xdp 2)"
	echo "   firewall: lab.sh up --firewall --ct-close $XCONN_CT_CLOSE (reset connections leave conntrack after $XCONN_CT_CLOSE s; the kernel's default is 10)"
	local path r k first second fig own ct syn conns max b0 t0 b1 t1 busy
	max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
	for path in direct firewall; do
		xconn_lab_up "$path"
		[[ $path == firewall ]] && fw_counter_add
		start_server
		printf "%-9s %-4s %-16s %-16s %s\n" "$path" run "socket" "xdp" "(own counts: socket / xdp; xdp SYNs completed by the yardstick; machine CPU busy in the xdp run; conntrack entries after it)"
		: >"$TMP/xc.$path.0"; : >"$TMP/xc.$path.1"; : >"$TMP/xc.$path.share"
		for ((r = 1; r <= XCONN_RUNS; r++)); do
			if ((r % 2)); then first=socket second=xdp; else first=xdp second=socket; fi
			declare -A F O E S C
			for k in $first $second; do
				[[ $k == xdp ]] && read -r b0 t0 < <(cpu_busy_ticks)
				read -r fig own ct syn conns < <(run_conn "$k")
				[[ -n $fig ]] || exit 1
				[[ $k == xdp ]] && read -r b1 t1 < <(cpu_busy_ticks)
				F[$k]=$fig O[$k]=$own E[$k]=$ct S[$k]=$syn C[$k]=$conns
			done
			busy=$(echo "100 * ($b1 - $b0) / ($t1 - $t0)" | bc -l)
			echo "${F[socket]}" >>"$TMP/xc.$path.0"
			echo "${F[xdp]}" >>"$TMP/xc.$path.1"
			local share
			share=$(echo "100 * ${C[xdp]} / ${S[xdp]}" | bc -l)
			echo "$share" >>"$TMP/xc.$path.share"
			local full=""
			[[ ${E[xdp]} != - ]] && ((max > 0 && E[xdp] * 100 >= max * 95)) &&
				full=" - the table filled up (max $max; CLOSEd entries linger $XCONN_CT_CLOSE s): the firewall's limit"
			printf "%-9s %-4s %-16s %-16s (%s / %s; %.3f %% of %s SYNs; %.0f %%; %s%s)\n" "" "$r" "$(fmt_cps "${F[socket]}")" "$(fmt_cps "${F[xdp]}")" \
				"$(fmt_cps "${O[socket]}" | tr -s ' ')" "$(fmt_cps "${O[xdp]}" | tr -s ' ')" "$share" "${S[xdp]}" "$busy" "${E[xdp]}" "$full"
		done
		stop_server
	done
	echo
	printf "%-9s %-44s %-44s %s\n" path "socket min / median / max (spread)" "xdp min / median / max (spread)" "xdp SYNs completed, lowest run"
	for path in direct firewall; do
		printf "%-9s %-44s %-44s %s\n" "$path" \
			"$(fmt_cps "$(fig_of "xc.$path" 0 min)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 0 med)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 0 max)" | tr -s ' ') ($(printf "%.1f" "$(spread "xc.$path" 0)") %)" \
			"$(fmt_cps "$(fig_of "xc.$path" 1 min)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 1 med)" | tr -s ' ') / $(fmt_cps "$(fig_of "xc.$path" 1 max)" | tr -s ' ') ($(printf "%.1f" "$(spread "xc.$path" 1)") %)" \
			"$(printf "%.3f %%" "$(fig_of "xc.$path" share min)")"
	done
	echo "(targets: spread <= 5 % per engine; xdp SYNs completed >= 99.9 % in every run)"
	echo
	cmp_line "xdp vs socket, direct (one queue):" xc.direct 1 0 25
	cmp_line "xdp vs socket, firewall:" xc.firewall 1 0 3
	for path in direct firewall; do
		echo "$path: $(target "xdp spread, $path" "$(spread "xc.$path" 1)" "<=" 5 " %") $(target "socket spread, $path" "$(spread "xc.$path" 0)" "<=" 5 " %")"
		echo "$path: $(target "xdp SYNs completed, lowest run, $path" "$(fig_of "xc.$path" share min)" ">=" 99.9 " %")"
	done
	echo "(on veth the router forwards in the sender's softirq context: the router's limit shows as the"
	echo " whole machine's CPU being busy, not as one router core)"
	echo
}
