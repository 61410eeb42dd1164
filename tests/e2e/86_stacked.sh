#!/usr/bin/env bash
# End-to-end tests of the engine check on stacked devices: with the route out
# of an upper device (a macvlan on the client's veth, a bridge with the veth
# as its port, a VXLAN tunnel over it) XDP live frames are dropped by the
# kernel (those drivers have no ndo_xdp_xmit), so `auto` must pick AF_XDP and
# every frame must arrive, counted against the server veth's own rx_packets;
# an explicit --engine live (or --syn-engine live) is refused with the reason,
# and the XDP connection engine's SYNs come from AF_XDP there.
# (VLAN devices, ipvlan and bonds are not in this kernel.)
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
NC=xp-stk-c NS=xp-stk-s
SRV4=198.18.60.1
P=$XP_TMP/probe.json
pq() { jq -r "$1" "$P"; }
client() { xp_exec "$NC" "$BIN" "$@"; }
srv_rx() { xp_exec "$NS" cat "/sys/class/net/$SDEV/statistics/rx_packets"; }

# stacked KIND: the two namespaces, a veth c0 (client) -- s0 (server), and the
# client's address on the upper device KIND makes (UDEV); the server's on s0
# (SDEV), or for VXLAN on its own end of the tunnel.
stacked() {
	xp_netns_add "$NC" "$NS" && netns_pair "$NC" c0 "$NS" s0 || return
	SDEV=s0
	case $1 in
	macvlan)
		UDEV=mv0
		ip -n "$NC" link add mv0 link c0 type macvlan mode bridge && ip -n "$NC" link set mv0 up &&
			netns_addr "$NC" mv0 198.18.60.2/24 && netns_addr "$NS" s0 "$SRV4/24"
		;;
	bridge)
		UDEV=br0
		ip -n "$NC" link add br0 type bridge && ip -n "$NC" link set c0 master br0 &&
			ip -n "$NC" link set br0 up && netns_addr "$NC" br0 198.18.60.2/24 && netns_addr "$NS" s0 "$SRV4/24"
		;;
	vxlan)
		UDEV=vx0 SDEV=vx0
		netns_addr "$NC" c0 198.18.61.2/24 && netns_addr "$NS" s0 198.18.61.1/24 &&
			ip -n "$NC" link add vx0 type vxlan id 42 local 198.18.61.2 remote 198.18.61.1 dstport 4789 &&
			ip -n "$NS" link add vx0 type vxlan id 42 local 198.18.61.1 remote 198.18.61.2 dstport 4789 &&
			ip -n "$NC" link set vx0 up && ip -n "$NS" link set vx0 up &&
			netns_addr "$NC" vx0 198.18.60.2/24 && netns_addr "$NS" vx0 "$SRV4/24"
		;;
	esac || return
	ip netns exec "$NC" ping -c 1 -W 2 "$SRV4" >/dev/null
}
# The route's device, as the kernel says (JSON, not ip's text).
route_dev() { ip -n "$NC" -j route get "$SRV4" | jq -r '.[0].dev'; }

# auto_gets_through KIND: probe, then a default-engine run; every frame counted.
auto_gets_through() {
	xp_check "lab: $1 on the client's link" stacked "$1"
	xp_check "the route leaves by $UDEV" expect_eq dev "$(route_dev)" "$UDEV"
	xp_check "server" start_server_in "$NS"
	xp_check "probe $UDEV" eval 'client --probe --dev "$UDEV" -J >"$P"'
	xp_check "probe: live frames out no, auto picks xsk" expect_eq probe \
		"$(pq '[.interfaces[0].checks.live_frames.supported, .interfaces[0].auto_engine] | map(tostring) | join(",")')" "false,xsk"
	local rx0 rx
	rx0=$(srv_rx)
	xp_check "default run (engine auto), 2 s at 10 kpps" eval 'client -c "$SRV4" -t 2 -b 10kpps -J >"$J"'
	rx=$(($(srv_rx) - rx0))
	local sent recv
	sent=$(jqv .end.sum.sent.packets) recv=$(jqv .end.sum.received.packets)
	echo "    figures ($1): engine $(jqv .start.engine) on $(jqv .start.dev), sent $sent, server received $recv, server $SDEV rx_packets +$rx"
	xp_check "auto ran xsk on $UDEV" expect_eq engine "$(jqv .start.engine)/$(jqv .start.dev)" "xsk/$UDEV"
	# (The rate is not what is checked here, only that frames went and all arrived: a loaded host sends fewer.)
	xp_check "at least 10000 sent" eval '(( sent >= 10000 ))'
	xp_check "received == sent" expect_eq received "$recv" "$sent"
	# The veth's count is the test's frames plus the control connection's (a few dozen).
	xp_check "server $SDEV rx_packets == received + control frames (0..100)" \
		eval '(( rx >= recv )) && expect_near rx_packets "$rx" "$recv" 100'
}

# ---------------------------------------------------------------------------
xp_case macvlan_auto_gets_every_frame_through
auto_gets_through macvlan
xp_pass

# ---------------------------------------------------------------------------
xp_case macvlan_explicit_live_refused
n0=$(tests_started)
rx0=$(srv_rx)
xp_check "--engine live exits 1" eval 'expect_rc 1 client -c "$SRV4" --engine live -t 1 -b 10kpps 2>"$XP_TMP/err" >"$XP_TMP/out"'
cat "$XP_TMP/err"
xp_check "one line on stderr" expect_eq lines "$(wc -l <"$XP_TMP/err")" 1
xp_check "it names the device, its driver, why, and the way out" \
	grep -q "^xdpperf: mv0 (macvlan) does not transmit XDP frames (no ndo-xmit in xdp-features): live frames would be dropped; use --engine xsk$" "$XP_TMP/err"
xp_check "no test was asked of the server" expect_eq tests "$(tests_started)" "$n0"
xp_check "-J: the same reason as the error document" eval 'expect_rc 1 client -c "$SRV4" --engine live -t 1 -J >"$J" 2>/dev/null'
xp_check "JSON error" eval 'jqv .error | grep -q "mv0 (macvlan) does not transmit XDP frames"'
# The XDP connection engine's SYNs: the same check, its own option named.
xp_check "-x --syn-engine live exits 1" eval 'expect_rc 1 client -c "$SRV4" -x --syn-engine live -t 1 2>"$XP_TMP/err" >/dev/null'
cat "$XP_TMP/err"
xp_check "it says --syn-engine xsk" grep -q "live frames would be dropped; use --syn-engine xsk$" "$XP_TMP/err"
rx=$(($(srv_rx) - rx0))
echo "    figures: server s0 rx_packets +$rx over the refused runs (control connections only)"
xp_check "no test frames reached the server" eval '(( rx < 100 ))'
xp_pass

# ---------------------------------------------------------------------------
# The XDP connection engine on the macvlan: its SYN sender is auto's choice too
# (AF_XDP), its client program answers on mv0. (GRO on c0: the server's
# XDP_TX'd SYN-ACKs enter the client's veth, which drops them without it.)
xp_case macvlan_xdp_connect_auto_syn_sender
xp_check "GRO on the client's veth" netns_gro "$NC" c0
xp_check "-x --cps 2000, 2 s" eval 'client -c "$SRV4" -x --cps 2000 -t 2 -J >"$J"'
syn=$(jqv .end.sum.connections.syn_sent) est=$(jqv .end.sum.connections.established)
echo "    figures: SYN sender $(jqv .start.engine_mode) on $(jqv .start.dev), SYNs $syn, established (server XDP) $est"
xp_check "SYNs from AF_XDP (copy) on mv0" expect_eq syn_engine "$(jqv .start.engine_mode)/$(jqv .start.dev)" copy/mv0
xp_check "at least 2000 SYNs" eval '(( syn >= 2000 ))'
xp_check "every handshake completed" expect_eq established "$est" "$syn"
xp_pass
xp__kill_bg
netns_del --kill "$NC" "$NS"

# ---------------------------------------------------------------------------
xp_case bridge_port_auto_gets_every_frame_through
auto_gets_through bridge
xp_check "--engine live refused" eval 'expect_rc 1 client -c "$SRV4" --engine live -t 1 2>"$XP_TMP/err" >/dev/null'
xp_check "it names br0 (bridge)" grep -q "br0 (bridge) does not transmit XDP frames" "$XP_TMP/err"
xp_pass
xp__kill_bg
netns_del --kill "$NC" "$NS"

# ---------------------------------------------------------------------------
xp_case vxlan_auto_gets_every_frame_through
auto_gets_through vxlan
xp_check "--engine live refused" eval 'expect_rc 1 client -c "$SRV4" --engine live -t 1 2>"$XP_TMP/err" >/dev/null'
xp_check "it names vx0 (vxlan)" grep -q "vx0 (vxlan) does not transmit XDP frames" "$XP_TMP/err"
xp_pass
