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
#         Every run starts from a drained lab (xconn_drained: detected, not
#         assumed); each XDP run's line shows counters xdpperf does not keep
#         (the router's conntrack count and refusals, the veths' tx_dropped).

cpu_busy_ticks() { awk '/^cpu / {print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }

# The firewall's own count of completed handshakes: an nft counter in the
# router, in a table of the bench's own after the lab's filter (so only what
# the firewall accepted), of the client's pure ACKs that conntrack classed as
# an established connection's original direction: the handshake's third
# packet. Both engines (-x, reset close) send exactly one per connection.
# Only to the test's ports (xdpperf's defaults, 63000-63015): the control
# connection's pure ACKs are not handshakes (counted, they read as 100.003 %
# of the SYNs completed).
fw_counter_add() {
	ip netns exec "$XP_ROUTER_NS" nft -f - <<-EOF
	table inet xpbench {
		counter handshakes { packets 0 bytes 0 }
		chain forward_count {
			type filter hook forward priority 10; policy accept;
			tcp dport 63000-63015 ct direction original ct state established tcp flags & (syn | ack | fin | rst) == ack counter name handshakes
		}
	}
	EOF
}
fw_handshakes() {
	ip netns exec "$XP_ROUTER_NS" nft -j list counter inet xpbench handshakes |
		jq -e '.nftables[] | select(.counter) | .counter.packets'
}

XCONN_RUNS=${BENCH_XCONN_RUNS:-5}
# Seconds per run: the bench's -t (5). Runs of 10 s were tried
# (2026-12-05, one bench run at 5 s, two at 10 s): the XDP engine's spread
# over 5 runs was direct 11.8 % at 5 s against 27.8 % (a run disturbed by another job) and
# 30.9 % at 10 s, firewall 9.9 % at 5 s against 4.3 % and 6.7 % at 10 s.
# Within one run the per-second rate varies about 5 %; what spreads the runs
# is whole runs 20-35 % slower than the others, which a longer run does not
# average out.
XCONN_T=${BENCH_XCONN_T:-$T}
# The CPU's own speed around each XDP run (cpuspeed, 1 s before and 1 s after
# on the run's CPU): the spread the machine itself brings to the runs.
CPUSPEED=build/tests/tools/cpuspeed   # built by make (tests/tools/cpuspeed.c)
cpu_speed() { taskset -c "$XCONN_CPU" "$CPUSPEED" -t 1 | sed -E 's/.*mloops_per_s=([0-9.]+).*/\1/'; }
XCONN_P=1000
# The XDP engine's runs: the client and the server process on this one CPU
# (taskset; the engine pins its sender to the first CPU it may use). On veth
# a NAPI runs on the CPU that scheduled it, and everything of an XDP run
# (the sender, both veths' NAPI, both XDP programs) is then one CPU's work
# in the sender's context. Unpinned, a frame the server process or the
# client's keeper sent from the other CPU (control messages, retransmitted
# SYNs) now and then moved a veth's NAPI there, where it competed with
# whatever else ran on that CPU, and the sender overflowed the veth's
# 256-frame ring: measured (/work/notes/s7/fw.md) veth drops (xpc0
# tx_dropped, 542-4619 per 4-s run) in 18 of 35 unpinned runs, in 3 of 5
# with only the client pinned, in none of 13 with both pinned; each dropped
# SYN holds its slot for the 1-s retransmission timeout. The socket engine's
# runs stay unpinned (its kernel work spreads over the CPUs), so pinning
# takes nothing from it.
XCONN_CPU=${BENCH_XCONN_CPU:-0}
# The firewall keeps a reset connection's conntrack entry this long
# (nf_conntrack_tcp_timeout_close; the kernel's default is 10 s). The host's
# table (262144 entries, read-only in a netns) then holds entries / (timeout +
# the GC's lag) connections a second. Measured (/work/notes/s6/fw.md): at 10 s
# the XDP engine filled it in every run (52.4 kconn/s, 262144 / 5 s); at 1 s
# an entry still lived ~2.2 s under load (conntrack -C plateaued at 225-234 k
# at 106 kconn/s; conntrack's GC worker is starved while the sender's softirqs
# hold the CPUs, and reaps ~175 k in the 0.6 s after the run), so the table
# held ~120 kconn/s and filled in 3 of the 5 XDP runs of the whole bench run
# (conntrack -S drop/early_drop counted the refused SYNs); at 0 (a reset
# connection is forgotten as soon as it is reaped) the count stays at
# 120-135 k at 170-200 kconn/s, and nothing is dropped. Both engines close
# with a reset, so the setting is the same for both. lab.sh takes 1-3600
# (--ct-close); 0 is written here, into the router's namespace, and read back.
XCONN_CT_CLOSE=${BENCH_CT_CLOSE:-0}
# A run starts when the router's table holds no more than this (conntrack -F,
# then conntrack -C polled: the flush is asynchronous for entries in use).
XCONN_DRAINED=100

# The lab of a path: the direct pair with one queue (one flow, one core: the
# engines' own limits), or the firewall (one queue, as the lab's default).
xconn_lab_up() {
	local got
	case $1 in
	direct) bash "$LAB" up --direct --queues 1 >/dev/null ;;
	firewall)
		bash "$LAB" up --firewall --ct-close "$((XCONN_CT_CLOSE > 0 ? XCONN_CT_CLOSE : 1))" --queues 1 >/dev/null
		eval "$(bash "$LAB" env)"
		ip netns exec "$XP_ROUTER_NS" sh -c "echo $XCONN_CT_CLOSE >/proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close"
		got=$(ip netns exec "$XP_ROUTER_NS" cat /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close)
		if [[ $got != "$XCONN_CT_CLOSE" ]]; then
			echo "bench: cannot set the router's nf_conntrack_tcp_timeout_close to $XCONN_CT_CLOSE (reads ${got:-nothing})" >&2
			exit 1
		fi
		;;
	esac
	eval "$(bash "$LAB" env)"
}

# Counters no part of xdpperf keeps: conntrack's refusals in the router
# (conntrack -S drop + early_drop, summed over the CPUs: a full table) and
# the veths' tx_dropped (a full ring on the way) over every device of the lab.
ct_refused() {
	ip netns exec "$XP_ROUTER_NS" conntrack -S | tr -s ' \t' '\n' |
		awk -F= '$1 == "drop" || $1 == "early_drop" {s += $2} END {print s + 0}'
}
veth_dropped() {
	local ns dev n=0 v
	for ns in "$XP_CLIENT_NS" "$XP_ROUTER_NS" "$XP_SERVER_NS"; do
		[[ -n $ns ]] || continue
		for dev in $(ip netns exec "$ns" ls /sys/class/net); do
			[[ $dev == lo ]] && continue
			v=$(ip netns exec "$ns" cat "/sys/class/net/$dev/statistics/tx_dropped") && n=$((n + v))
		done
	done
	echo "$n"
}

# xconn_drained: wait (at most 10 s) until the last run has left nothing
# behind: the server veth's rx_packets still for 0.2 s (nothing of the last
# run in flight) and, through the firewall, the router's table flushed to no
# more than XCONN_DRAINED entries. Prints what it saw ("ct N" or "-"); fails
# the bench when the deadline passes.
xconn_drained() {
	local t0=$SECONDS p0 p1 ct=-
	[[ -n $XP_ROUTER_NS ]] && ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1
	while :; do
		p0=$(srv_rx_packets)
		sleep 0.2
		p1=$(srv_rx_packets)
		[[ -n $XP_ROUTER_NS ]] && ct=$(ip netns exec "$XP_ROUTER_NS" conntrack -C)
		((p0 == p1)) && [[ $ct == - || $ct -le $XCONN_DRAINED ]] && break
		((SECONDS - t0 < 10)) || { echo "bench: not drained after 10 s (server rx_packets $p0 -> $p1, conntrack $ct)" >&2; exit 1; }
		[[ -n $XP_ROUTER_NS ]] && ip netns exec "$XP_ROUTER_NS" conntrack -F >/dev/null 2>&1
	done
	echo "$ct"
}

# run_conn ENGINE: one -x -P 1000 run from a drained lab; prints "yardstick_cps
# own_cps conntrack_entries syn_sent yardstick_conns conntrack_at_start
# conntrack_refused veth_dropped".
run_conn() {
	local eng=$1 a b own per ct=- syn ct0 r0=0 r1=0 v0 v1
	ct0=$(xconn_drained) || exit 1
	v0=$(veth_dropped)
	if [[ -n $XP_ROUTER_NS ]]; then
		r0=$(ct_refused)
		a=$(fw_handshakes)
	else
		a=$(srv_rx_packets)
	fi
	local pin=() smask
	if [[ $eng == xdp ]]; then
		pin=(taskset -c -- "$XCONN_CPU")
		smask=$(taskset -p "$SRV" | awk '{print $NF}')
		taskset -a -p -c "$XCONN_CPU" "$SRV" >/dev/null || die "taskset -p -c $XCONN_CPU (the server)" /dev/null
	fi
	ip netns exec "$XP_CLIENT_NS" "${pin[@]}" "$BIN" -c "$XP_SERVER4" -x -P "$XCONN_P" -t "$XCONN_T" --engine "$eng" -J >"$TMP/c.json" 2>"$TMP/c.err" ||
		{ jq -r '.error // empty' "$TMP/c.json" >>"$TMP/c.err" 2>/dev/null; die "xdpperf -x --engine $eng" "$TMP/c.err"; }
	[[ -n ${smask:-} ]] && { taskset -a -p "$smask" "$SRV" >/dev/null || die "taskset -p $smask (the server back)" /dev/null; }
	if [[ -n $XP_ROUTER_NS ]]; then
		b=$(fw_handshakes)
		per=1
		ct=$(ip netns exec "$XP_ROUTER_NS" conntrack -C)
		r1=$(ct_refused)
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
	v1=$(veth_dropped)
	echo "$(echo "($b - $a) / $per / $XCONN_T" | bc -l) $(echo "$own / $XCONN_T" | bc -l) $ct $syn $(echo "($b - $a) / $per" | bc) $ct0 $((r1 - r0)) $((v1 - v0))"
}

# spread NAME INDEX: (max - min) / median in percent.
spread() { echo "100 * ($(fig_of "$1" "$2" max) - $(fig_of "$1" "$2" min)) / $(fig_of "$1" "$2" med)" | bc -l; }

bench_xconn() {
	[[ -x $CPUSPEED ]] || { echo "bench: build first (make): $CPUSPEED is missing" >&2; exit 1; }
	echo "== Connections/s, -x -P $XCONN_P: XDP connection engine vs socket engine, ${XCONN_T} s per run, $XCONN_RUNS alternating runs each"
	echo "   yardstick: firewall: the router's nft count of handshake-completing ACKs of connections conntrack"
	echo "   tracks; direct (one queue): the server veth's rx_packets / client->server frames per connection (socket 3, xdp 2)"
	echo "   firewall: one queue, the router's nf_conntrack_tcp_timeout_close $XCONN_CT_CLOSE s (reset connections leave conntrack after that and the GC's lag; the kernel's default is 10)"
	echo "   every run starts drained (detected: the server veth quiet for 0.2 s; firewall: conntrack -F, then conntrack -C <= $XCONN_DRAINED)"
	echo "   xdp runs: the client and the server process pinned to CPU $XCONN_CPU (taskset; the veths' NAPI stays on the sender's CPU); socket runs unpinned"
	echo "   cpu: CPU $XCONN_CPU's own speed around each xdp run (a fixed loop, $CPUSPEED, 1 s before and 1 s after; M loops/s)"
	local path r k first second fig own ct syn conns ct0 refused vdrop max b0 t0 b1 t1 busy sp0 sp1 sp
	max=$(cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
	for path in direct firewall; do
		xconn_lab_up "$path"
		[[ $path == firewall ]] && fw_counter_add
		start_server
		printf "%-9s %-4s %-16s %-16s %s\n" "$path" run "socket" "xdp" "(own counts: socket / xdp; xdp SYNs completed by the yardstick; machine CPU busy in the xdp run; the xdp CPU's speed before -> after; xdp run: conntrack entries at its start -> after it, SYNs conntrack refused (-S drop + early_drop), veth tx_dropped; load average)"
		: >"$TMP/xc.$path.0"; : >"$TMP/xc.$path.1"; : >"$TMP/xc.$path.share"; : >"$TMP/xc.$path.cpu"
		for ((r = 1; r <= XCONN_RUNS; r++)); do
			if ((r % 2)); then first=socket second=xdp; else first=xdp second=socket; fi
			declare -A F O E S C E0 RF VD
			for k in $first $second; do
				[[ $k == xdp ]] && { sp0=$(cpu_speed); read -r b0 t0 < <(cpu_busy_ticks); }
				read -r fig own ct syn conns ct0 refused vdrop < <(run_conn "$k")
				[[ -n $fig ]] || exit 1
				[[ $k == xdp ]] && { read -r b1 t1 < <(cpu_busy_ticks); sp1=$(cpu_speed); }
				F[$k]=$fig O[$k]=$own E[$k]=$ct S[$k]=$syn C[$k]=$conns E0[$k]=$ct0 RF[$k]=$refused VD[$k]=$vdrop
			done
			busy=$(echo "100 * ($b1 - $b0) / ($t1 - $t0)" | bc -l)
			sp=$(echo "($sp0 + $sp1) / 2" | bc -l)
			echo "$sp" >>"$TMP/xc.$path.cpu"
			echo "${F[socket]}" >>"$TMP/xc.$path.0"
			echo "${F[xdp]}" >>"$TMP/xc.$path.1"
			local share
			share=$(echo "100 * ${C[xdp]} / ${S[xdp]}" | bc -l)
			echo "$share" >>"$TMP/xc.$path.share"
			local full=""
			[[ ${E[xdp]} != - ]] && ((RF[xdp] > 0 || (max > 0 && E[xdp] * 100 >= max * 95))) &&
				full=" - the table filled up (max $max; conntrack refused ${RF[xdp]} SYNs; CLOSEd entries linger $XCONN_CT_CLOSE s + the GC's lag): the firewall's limit"
			printf "%-9s %-4s %-16s %-16s (%s / %s; %.3f %% of %s SYNs; %.0f %%; cpu %.3f -> %.3f; ct %s -> %s, refused %s; veth drops %s; load %s%s)\n" "" "$r" "$(fmt_cps "${F[socket]}")" "$(fmt_cps "${F[xdp]}")" \
				"$(fmt_cps "${O[socket]}" | tr -s ' ')" "$(fmt_cps "${O[xdp]}" | tr -s ' ')" "$share" "${S[xdp]}" "$busy" "$sp0" "$sp1" \
				"${E0[xdp]}" "${E[xdp]}" "${RF[xdp]}" "${VD[xdp]}" "$(cut -d' ' -f1 /proc/loadavg)" "$full"
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
	echo "(targets: the xdp engine's spread <= 5 %; xdp SYNs completed >= 99.9 % in every run; the socket"
	echo " engine's spread is shown, with no target: its connections are the kernel's TCP stack's)"
	echo
	cmp_line "xdp vs socket, direct (one queue):" xc.direct 1 0 25
	# "In every run": the lowest xdp run against the highest socket run,
	# stricter than any pairing of runs.
	echo "xdp vs socket, direct, lowest xdp run / highest socket run: $(ratio "$(fig_of xc.direct 1 min)" "$(fig_of xc.direct 0 max)") $(target "xdp vs socket, direct, every run (lowest / highest)" "$(echo "$(fig_of xc.direct 1 min) / $(fig_of xc.direct 0 max)" | bc -l)" ">=" 25 x)"
	cmp_line "xdp vs socket, firewall:" xc.firewall 1 0 3
	for path in direct firewall; do
		echo "$path: xdp spread $(printf "%.2f %%" "$(spread "xc.$path" 1)") $(target "xdp spread, $path" "$(spread "xc.$path" 1)" "<=" 5 " %"); socket spread $(printf "%.2f %%" "$(spread "xc.$path" 0)") (no target)"
		echo "$path: the xdp CPU's own speed over the same runs: $(printf "%.3f / %.3f / %.3f" "$(fig_of "xc.$path" cpu min)" "$(fig_of "xc.$path" cpu med)" "$(fig_of "xc.$path" cpu max)") M loops/s, spread $(printf "%.2f %%" "$(spread "xc.$path" cpu)") (the machine's, not xdpperf's)"
		echo "$path: $(target "xdp SYNs completed, lowest run, $path" "$(fig_of "xc.$path" share min)" ">=" 99.9 " %")"
	done
	echo "(on veth the router forwards in the sender's softirq context: the router's limit shows as the"
	echo " whole machine's CPU being busy, not as one router core)"
	echo
}
