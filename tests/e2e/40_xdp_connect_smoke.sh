#!/usr/bin/env bash
# Smoke test of the XDP connection engine on a real veth pair: the server's
# XDP program (bpf/server.bpf.c, one XP_SLOT_RESPOND slot on ports
# 63000:63015) answers raw SYNs with SYN cookies and the client's
# (bpf/xdp_connect.bpf.c) completes the handshakes, both with XDP_TX, so
# every connection runs SYN -> SYN-ACK -> ACK -> RST (or, in FIN mode,
# SYN -> SYN-ACK -> ACK|FIN -> FIN-ACK -> ACK) with no socket anywhere:
#
#   xpcx-a                                   xpcx-b
#   xpcxa0 198.18.210.1/24  ---- veth ---- xpcxb0 198.18.210.2/24
#          2001:2:0:210::1/64                     2001:2:0:210::2/64
#   xdp_connect (XDP)                        xdp_server, RESPOND slot (XDP)
#
# tests/tools/xdpconn.c (build/tests/tools/xdpconn, built by make) attaches
# both programs, sends N SYNs from xpcxa0 with an AF_PACKET socket and prints
# both programs' counters.
#
# Then the same through a router with a stateful nftables firewall (as the
# lab's --firewall: forward policy drop, established accepted, invalid
# dropped, new only from the client side), to check that connection tracking
# sees complete, valid connections (every entry CLOSE after RST closes,
# TIME_WAIT after FIN closes, nothing invalid):
#
#   xpcx-a xpcxa1 198.18.211.1 -- xpcxr0 [xpcx-r] xpcxr1 -- xpcxb1 198.18.212.2 xpcx-b
#                                198.18.211.254  198.18.212.254
#
# The router's veths have GRO and no XDP program, like the lab's, so both
# programs run with their reply-redirect knob (xdpconn --redirect): XDP_TX
# into such a veth stalls (see xp_reply_verdict in bpf/lib/tcp_reply.h).

# This script does not use the shared lab: leave it as it is on exit.
# shellcheck disable=SC2034 # read by lib.sh
XP_KEEP_LAB=1
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

NSA=xpcx-a
NSB=xpcx-b
NSR=xpcx-r
XDPCONN=$XP_ROOT/build/tests/tools/xdpconn   # built by make

setup_ns() {
	xp_netns_add "$NSA" "$NSB" &&
		netns_pair "$NSA" xpcxa0 "$NSB" xpcxb0 &&
		netns_addr "$NSA" xpcxa0 198.18.210.1/24 2001:2:0:210::1/64 &&
		netns_addr "$NSB" xpcxb0 198.18.210.2/24 2001:2:0:210::2/64 || return
	local t0=$SECONDS
	until [[ $(ip netns exec "$NSA" cat /sys/class/net/xpcxa0/operstate) == up &&
		$(ip netns exec "$NSB" cat /sys/class/net/xpcxb0/operstate) == up ]]; do
		((SECONDS - t0 > 10)) && { echo "veth not up after 10 s"; return 1; }
		sleep 0.05
	done
}

FW_RULES='
table inet xpcxfw {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		ct state invalid counter drop
		iifname "xpcxr0" oifname "xpcxr1" ct state new accept
		meta l4proto { icmp, ipv6-icmp } accept
	}
}'

setup_router() {
	xp_netns_add "$NSR" &&
		netns_pair "$NSA" xpcxa1 "$NSR" xpcxr0 &&
		netns_pair "$NSB" xpcxb1 "$NSR" xpcxr1 &&
		netns_addr "$NSA" xpcxa1 198.18.211.1/24 &&
		netns_addr "$NSR" xpcxr0 198.18.211.254/24 &&
		netns_addr "$NSR" xpcxr1 198.18.212.254/24 &&
		netns_addr "$NSB" xpcxb1 198.18.212.2/24 || return
	netns_gro "$NSR" xpcxr0 xpcxr1 &&
		ip netns exec "$NSR" sysctl -qw net.ipv4.ip_forward=1 &&
		ip -n "$NSA" route add 198.18.212.0/24 via 198.18.211.254 &&
		ip -n "$NSB" route add 198.18.211.0/24 via 198.18.212.254 &&
		ip netns exec "$NSR" nft -f - <<<"$FW_RULES" || return
	# Resolves the neighbours on the way (the router would queue, then drop,
	# SYNs while it resolves the server's MAC).
	local t0=$SECONDS
	until ip netns exec "$NSA" ping -c 1 -W 1 198.18.212.2 >/dev/null 2>&1; do
		((SECONDS - t0 > 10)) && { echo "no ping through the router after 10 s"; return 1; }
		sleep 0.1
	done
	RMAC=$(ip netns exec "$NSR" cat /sys/class/net/xpcxr0/address)
	echo "router MAC towards the client: $RMAC"
}
# Connection tracking states in the router, "N STATE" per line.
ct_states() { ip netns exec "$NSR" conntrack -L -p tcp 2>/dev/null | awk '{print $4}' | sort | uniq -c | awk '{print $1, $2}'; }
ct_invalid_drops() {
	ip netns exec "$NSR" nft list table inet xpcxfw | awk '/ct state invalid counter/ {print $6}'
}

OUT=""
# conn ARGS...: run xdpconn on the direct pair (from the root namespace: it
# enters both itself); rconn: the same through the router.
conn() {
	OUT=$("$XDPCONN" --server "$NSB:xpcxb0" --client "$NSA:xpcxa0" "$@" 2>&1)
	local rc=$?
	printf '%s\n' "$OUT"
	return $rc
}
rconn() {
	OUT=$("$XDPCONN" --server "$NSB:xpcxb1" --client "$NSA:xpcxa1" --next-hop-mac "$RMAC" \
		--redirect --src 198.18.211.1 --dst 198.18.212.2 "$@" 2>&1)
	local rc=$?
	printf '%s\n' "$OUT"
	return $rc
}
# val SIDE KEY: KEY's value on OUT's line starting with SIDE.
val() { printf '%s\n' "$OUT" | sed -n "s/^$1 .*\b$2=\([^ ]*\).*/\1/p" | head -n 1; }
# want SIDE KEY VALUE
want() { expect_eq "$1 $2" "$(val "$1" "$2")" "$3"; }
no_xdp_left() {
	! ip -n "$NSA" -o link show xpcxa0 | grep -qE ' xdp(generic|drv)? ' &&
		! ip -n "$NSB" -o link show xpcxb0 | grep -qE ' xdp(generic|drv)? '
}

# ---------------------------------------------------------------------------
xp_case xdpconn_built
xp_check "build/tests/tools/xdpconn is built (make all)" test -x "$XDPCONN"
xp_pass

xp_case setup_namespaces
xp_check "xpcx-a / xpcx-b with a veth pair" setup_ns
xp_pass

# ---------------------------------------------------------------------------
N=2000
xp_case rst_handshakes_v4
xp_check "xdpconn: $N SYNs, RST close, IPv4" conn -n $N --mode rst --src 198.18.210.1 --dst 198.18.210.2
xp_check "both programs native" eval 'want server xdp_mode native && want client xdp_mode native'
xp_check "server: $N SYNs answered" want server synack_sent $N
xp_check "client: $N SYN-ACKs answered (acks_sent)" want client acks_sent $N
xp_check "server: conn_established == $N" want server conn_established $N
xp_check "server: $N RSTs sent" want server rst_sent $N
xp_check "client: $N RSTs seen" want client rst_seen $N
xp_check "no invalid cookies" want server cookie_invalid 0
xp_check "no FIN traffic" eval 'want server fin_answered 0 && want client fins_sent 0'
xp_check "programs detached when xdpconn exits" no_xdp_left
xp_pass

# ---------------------------------------------------------------------------
N6=1000
xp_case fin_handshakes_v6
xp_check "xdpconn: $N6 SYNs, FIN close, IPv6" conn -n $N6 --mode fin --src 2001:2:0:210::1 --dst 2001:2:0:210::2
xp_check "client: $N6 ACK|FINs sent" eval "want client acks_sent $N6 && want client fins_sent $N6"
xp_check "server: conn_established == $N6" want server conn_established $N6
xp_check "server: $N6 FIN-ACKs" want server fin_answered $N6
xp_check "client: $N6 final ACKs" want client finack_answered $N6
xp_check "server: final ACKs are not forgeries" want server cookie_invalid 0
xp_check "server: no RSTs in FIN mode" want server rst_sent 0
xp_check "programs detached when xdpconn exits" no_xdp_left
xp_pass

# ---------------------------------------------------------------------------
NR=5000
xp_case routed_through_conntrack_firewall
xp_check "router xpcx-r with a stateful firewall" setup_router
xp_check "xdpconn: $NR SYNs through the router, RST close" rconn -n $NR --mode rst --wait-ms 5000
xp_check "server: conn_established == $NR" want server conn_established $NR
xp_check "client: acks_sent == $NR, rst_seen == $NR" eval "want client acks_sent $NR && want client rst_seen $NR"
xp_check "conntrack: $NR connections, all CLOSE" expect_eq "states" "$(ct_states)" "$NR CLOSE"
xp_check "firewall dropped nothing as invalid" expect_eq "invalid drops" "$(ct_invalid_drops)" 0
xp_check "flush conntrack" ip netns exec "$NSR" conntrack -F
xp_check "xdpconn: $NR SYNs through the router, FIN close" rconn -n $NR --mode fin --wait-ms 5000
xp_check "server: conn_established == fin_answered == $NR" eval "want server conn_established $NR && want server fin_answered $NR"
xp_check "client: finack_answered == $NR" want client finack_answered $NR
xp_check "conntrack: $NR connections, all TIME_WAIT" expect_eq "states" "$(ct_states)" "$NR TIME_WAIT"
xp_check "firewall dropped nothing as invalid" expect_eq "invalid drops" "$(ct_invalid_drops)" 0
xp_pass
