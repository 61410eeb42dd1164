#!/usr/bin/env bash
# End-to-end checks of user/net/route.c and user/net/netdev.c (routes, neighbours,
# next-hop MAC resolution, links, addresses) in two private namespaces:
#
#   xpnl-a                                    xpnl-b
#   xa0 198.18.100.1/24  ---- veth ---- xb0 198.18.100.2/24
#       2001:2:0:100::1/64                  2001:2:0:100::2/64
#       (mtu 1400, 2 rx / 3 tx queues)
#   xa1 (4/4 queues, ethtool -L rx 2 tx 3) ---- xb1
#
#   routes in xpnl-a: 198.19.100.0/24 via 198.18.100.2
#                     2001:2:0:200::/64 via 2001:2:0:100::2
#                     198.19.200.0/24 via 198.18.100.99 (nobody answers)
#                     2001:2:0:201::/64 via 2001:2:0:100::99 (nobody answers)
#
# Uses tests/tools/nltest.c (build/tests/tools/nltest, built by make) and
# prints the lib.sh RESULT lines.

# This script does not use the shared lab: leave it as it is on exit.
# shellcheck disable=SC2034 # read by lib.sh
XP_KEEP_LAB=1
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

NSA=xpnl-a
NSB=xpnl-b
NLTEST=$XP_ROOT/build/tests/tools/nltest   # built by make

cleanup_ns() { netns_del "$NSA" "$NSB"; }

# ---- helpers -------------------------------------------------------------

OUT="" # output of the last nl call
# nl NS ARGS...: run nltest in NS (a|b|root), keep its key=value output in OUT.
nl() {
	local ns=$1
	shift
	case $ns in
	a) OUT=$(ip netns exec "$NSA" "$NLTEST" "$@" 2>&1) ;;
	b) OUT=$(ip netns exec "$NSB" "$NLTEST" "$@" 2>&1) ;;
	root) OUT=$("$NLTEST" "$@" 2>&1) ;;
	esac
	echo "nltest $*:"
	printf '%s\n' "$OUT" | sed 's/^/  /'
	return 0
}
# val KEY: the value of KEY in OUT.
val() { printf '%s\n' "$OUT" | sed -n "s/^$1=//p" | head -n 1; }
# want KEY VALUE: OUT must contain KEY=VALUE.
want() {
	local got
	got=$(val "$1")
	if [[ $got != "$2" ]]; then
		echo "expected $1=$2, got $1=${got:-<none>}"
		return 1
	fi
}
# want_rc_err: OUT's rc must be a negative errno.
want_err() {
	local rc
	rc=$(val rc)
	if ! [[ $rc =~ ^-[0-9]+$ ]]; then
		echo "expected an error rc, got rc=${rc:-<none>}"
		return 1
	fi
}
want_has() { # KEY... VALUE: some KEY-prefixed key (addr0, addr1..) has VALUE
	if ! printf '%s\n' "$OUT" | grep -q "^$1[0-9]*=$2\$"; then
		echo "no $1*=$2 in output"
		return 1
	fi
}
in_range() { # KEY LO HI
	local v
	v=$(val "$1")
	if ! [[ $v =~ ^[0-9]+$ ]] || ((v < $2 || v > $3)); then
		echo "expected $2 <= $1 <= $3, got $1=${v:-<none>}"
		return 1
	fi
}
no_v4_addrs() {
	if printf '%s\n' "$OUT" | grep -q '^addr[0-9]*=[0-9.]*$'; then
		echo "IPv4 address in the list"
		return 1
	fi
}
neigh_flush() { ip -n "$NSA" neigh flush dev xa0; }
count_queues() { # NS DEV rx|tx
	ip netns exec "$1" sh -c "ls -d /sys/class/net/$2/queues/$3-* | wc -l"
}

setup_ns() {
	# netns_add: no DAD anywhere (link-local included), addresses usable at once.
	xp_netns_add "$NSA" "$NSB" || return
	netns_pair "$NSA" xa0 "$NSB" xb0 2,3 - &&
		ip -n "$NSA" link set xa0 mtu 1400 &&
		netns_addr "$NSA" xa0 198.18.100.1/24 2001:2:0:100::1/64 &&
		netns_addr "$NSB" xb0 198.18.100.2/24 2001:2:0:100::2/64 || return
	netns_pair "$NSA" xa1 "$NSB" xb1 4 || return
	ip -n "$NSA" route add 198.19.100.0/24 via 198.18.100.2 &&
		ip -n "$NSA" route add 2001:2:0:200::/64 via 2001:2:0:100::2 &&
		ip -n "$NSA" route add 198.19.200.0/24 via 198.18.100.99 &&
		ip -n "$NSA" route add 2001:2:0:201::/64 via 2001:2:0:100::99 || return
	# Facts to compare with, from sysfs.
	IDX_A0=$(ip netns exec "$NSA" cat /sys/class/net/xa0/ifindex) &&
		IDX_A1=$(ip netns exec "$NSA" cat /sys/class/net/xa1/ifindex) &&
		MAC_A0=$(ip netns exec "$NSA" cat /sys/class/net/xa0/address) &&
		MAC_B0=$(ip netns exec "$NSB" cat /sys/class/net/xb0/address) || return
	echo "xa0 ifindex=$IDX_A0 mac=$MAC_A0; xb0 mac=$MAC_B0"
}

# Wait (bounded) until both ends are operationally up: before the link
# watcher runs, the device drops packets and IPv6 has not joined its
# solicited-node groups, so ND would only succeed on a retransmit.
wait_ready() {
	local t0=$SECONDS d ns dev
	for d in "$NSA xa0" "$NSB xb0" "$NSA xa1" "$NSB xb1"; do
		read -r ns dev <<<"$d"
		until [[ $(ip netns exec "$ns" cat "/sys/class/net/$dev/operstate") == up ]] &&
			[[ -n $(ip -n "$ns" -6 addr show dev "$dev" scope link) ]] &&
			[[ -z $(ip -n "$ns" -6 addr show dev "$dev" tentative) ]]; do
			if ((SECONDS - t0 > 10)); then
				echo "$dev in $ns not ready after 10 s"
				return 1
			fi
			sleep 0.05
		done
	done
}

# ---- cases ----------------------------------------------------------------

xp_case nltest_built
xp_check "build/tests/tools/nltest is built (make all)" test -x "$NLTEST"
xp_pass
[[ -x $NLTEST ]] || exit 1

xp_case setup_namespaces
xp_check "create namespaces and veths" setup_ns
xp_check "links ready" wait_ready
if ! xp_open; then exit 1; fi
xp_pass

xp_case route_v4_onlink
xp_check "route get" nl a route 198.18.100.2
xp_check "rc" want rc 0
xp_check "oif is xa0" want oif "$IDX_A0"
xp_check "no gateway" want gateway -
xp_check "prefsrc" want prefsrc 198.18.100.1
xp_pass

xp_case route_v6_onlink
xp_check "route get" nl a route 2001:2:0:100::2
xp_check "rc" want rc 0
xp_check "oif is xa0" want oif "$IDX_A0"
xp_check "no gateway" want gateway -
xp_check "prefsrc" want prefsrc 2001:2:0:100::1
xp_pass

xp_case route_v4_gateway
xp_check "route get" nl a route 198.19.100.7
xp_check "rc" want rc 0
xp_check "oif is xa0" want oif "$IDX_A0"
xp_check "gateway" want gateway 198.18.100.2
xp_pass

xp_case route_v6_gateway
xp_check "route get" nl a route 2001:2:0:200::7
xp_check "rc" want rc 0
xp_check "oif is xa0" want oif "$IDX_A0"
xp_check "gateway" want gateway 2001:2:0:100::2
xp_pass

xp_case route_unreachable
xp_check "route get v4" nl a route 203.0.113.1
xp_check "v4 is an error" want_err
xp_check "route get v6" nl a route 2001:db8::1
xp_check "v6 is an error" want_err
xp_pass

xp_case source_addr
xp_check "v4 via gateway" nl a src 198.19.100.7
xp_check "v4 src" want src 198.18.100.1
xp_check "v6 via gateway" nl a src 2001:2:0:200::7
xp_check "v6 src" want src 2001:2:0:100::1
xp_check "v4 unreachable" nl a src 203.0.113.1
xp_check "unreachable is an error" want_err
xp_pass

for fam in v4 v6; do
	if [[ $fam == v4 ]]; then
		peer=198.18.100.2 far=198.19.100.7
	else
		peer=2001:2:0:100::2 far=2001:2:0:200::7
	fi

	xp_case "nexthop_${fam}_gateway_unresolved"
	xp_check "flush neighbours" neigh_flush
	xp_check "neighbour absent before" nl a neigh "$IDX_A0" "$peer"
	xp_check "absent -> -ENOENT" want rc -2
	xp_check "next hop" nl a nexthop "$far" 3000
	xp_check "rc" want rc 0
	xp_check "gateway" want gateway "$peer"
	xp_check "oif" want oif "$IDX_A0"
	xp_check "mac is xb0's" want mac "$MAC_B0"
	xp_check "neighbour present after" nl a neigh "$IDX_A0" "$peer"
	xp_check "neigh mac" want mac "$MAC_B0"
	xp_pass

	xp_case "nexthop_${fam}_gateway_resolved"
	xp_check "next hop" nl a nexthop "$far" 3000
	xp_check "rc" want rc 0
	xp_check "mac is xb0's" want mac "$MAC_B0"
	xp_check "fast when already resolved" in_range elapsed_ms 0 500
	xp_pass

	xp_case "nexthop_${fam}_onlink_unresolved"
	xp_check "flush neighbours" neigh_flush
	xp_check "next hop" nl a nexthop "$peer" 3000
	xp_check "rc" want rc 0
	xp_check "no gateway" want gateway -
	xp_check "mac is xb0's" want mac "$MAC_B0"
	xp_pass

	for how in ntf udp; do
		xp_case "neigh_kick_${how}_${fam}"
		xp_check "flush neighbours" neigh_flush
		xp_check "kick and poll" nl a kick "$how" "$IDX_A0" "$peer" 3000
		xp_check "kick rc" want kick_rc 0
		xp_check "rc" want rc 0
		xp_check "mac is xb0's" want mac "$MAC_B0"
		xp_pass
	done
done

xp_case nexthop_unresolvable
xp_check "v4 next hop via a silent gateway" nl a nexthop 198.19.200.7 500
xp_check "-EHOSTUNREACH" want rc -113
xp_check "gateway" want gateway 198.18.100.99
xp_check "waited about the timeout" in_range elapsed_ms 450 2000
xp_check "has a reason" test -n "$(val err)"
xp_check "incomplete entry is not usable" nl a neigh "$IDX_A0" 198.18.100.99
xp_check "-ENOENT" want rc -2
xp_check "v6 next hop via a silent gateway" nl a nexthop 2001:2:0:201::7 500
xp_check "-EHOSTUNREACH" want rc -113
xp_check "waited about the timeout" in_range elapsed_ms 450 2000
xp_pass

xp_case nexthop_no_route
xp_check "next hop" nl a nexthop 203.0.113.1 500
xp_check "error" want_err
xp_check "has a reason" test -n "$(val err)"
xp_check "fails fast" in_range elapsed_ms 0 400
xp_pass

xp_case nexthop_local_address
xp_check "next hop" nl a nexthop 198.18.100.1 500
xp_check "-EHOSTUNREACH" want rc -113
xp_pass

xp_case neigh_permanent
xp_check "add permanent entry" \
	ip -n "$NSA" neigh replace 198.18.100.50 lladdr 02:00:00:00:00:50 nud permanent dev xa0
xp_check "neigh get" nl a neigh "$IDX_A0" 198.18.100.50
xp_check "rc" want rc 0
xp_check "mac" want mac 02:00:00:00:00:50
xp_check "next hop uses it" nl a nexthop 198.18.100.50 100
xp_check "next hop mac" want mac 02:00:00:00:00:50
xp_pass

xp_case link_by_name
xp_check "link xa0" nl a link xa0
xp_check "rc" want rc 0
xp_check "ifindex" want ifindex "$IDX_A0"
xp_check "name" want name xa0
xp_check "mac" want mac "$MAC_A0"
xp_check "mtu" want mtu 1400
xp_check "rx queues" want rx_queues 2
xp_check "tx queues" want tx_queues 3
xp_check "rx queues as sysfs" want rx_queues "$(count_queues "$NSA" xa0 rx)"
xp_check "up" want up 1
xp_check "carrier" want carrier 1
xp_pass

xp_case link_queues_after_ethtool_L
if ! command -v ethtool >/dev/null; then
	xp_fail "ethtool not installed: run scripts/deps.sh"
else
	xp_check "ethtool -L xa1 rx 2 tx 3" ip netns exec "$NSA" ethtool -L xa1 rx 2 tx 3
	xp_check "link xa1" nl a link xa1
	xp_check "rc" want rc 0
	xp_check "rx queues in use" want rx_queues 2
	xp_check "tx queues in use" want tx_queues 3
	xp_check "rx as sysfs" want rx_queues "$(count_queues "$NSA" xa1 rx)"
	xp_check "tx as sysfs" want tx_queues "$(count_queues "$NSA" xa1 tx)"
	xp_pass
fi

xp_case link_by_index
xp_check "linkidx xa0" nl a linkidx "$IDX_A0"
xp_check "name" want name xa0
xp_check "mac" want mac "$MAC_A0"
xp_check "linkidx 1" nl a linkidx 1
xp_check "lo" want name lo
xp_check "lo mtu" want mtu 65536
xp_pass

xp_case link_missing
xp_check "by name" nl a link nosuchdev0
xp_check "-ENODEV" want rc -19
xp_check "by index" nl a linkidx 99999
xp_check "-ENODEV" want rc -19
xp_check "name too long" nl a link abcdefghijklmnopq
xp_check "-ENODEV" want rc -19
xp_check "current netns only (xa0 is not in the root ns)" nl root link xa0
xp_check "-ENODEV" want rc -19
xp_pass

xp_case link_addrs
xp_check "v4" nl a addrs "$IDX_A0" 4
xp_check "count" want count 1
xp_check "addr" want addr0 198.18.100.1
xp_check "v6" nl a addrs "$IDX_A0" 6
xp_check "global" want_has addr 2001:2:0:100::1
xp_check "no v4 in v6 list" no_v4_addrs
xp_check "both" nl a addrs "$IDX_A0" 0
xp_check "v4 present" want_has addr 198.18.100.1
xp_check "v6 present" want_has addr 2001:2:0:100::1
xp_check "no addresses on xa1 (v4)" nl a addrs "$IDX_A1" 4
xp_check "count 0" want count 0
xp_check "missing interface" nl a addrs 99999 0
xp_check "-ENODEV" want rc -19
xp_pass

xp_case ifindex_of_addr
xp_check "v4" nl a ifindex 198.18.100.1
xp_check "xa0" want ifindex "$IDX_A0"
xp_check "v6" nl a ifindex 2001:2:0:100::1
xp_check "xa0" want ifindex "$IDX_A0"
xp_check "peer's address is not local" nl a ifindex 198.18.100.2
xp_check "-EADDRNOTAVAIL" want rc -99
xp_pass

xp_case cleanup
xp_check "delete namespaces" cleanup_ns
xp_check "none left" test -z "$(ip netns list | grep -E '^xpnl-(a|b)( |$)')"
xp_pass
