#!/usr/bin/env bash
# xdpperf network-namespace lab.
#
#   lab.sh up [--direct|--switch] [--queues N] [--firewall] [--force]
#                                                    build (or rebuild) the lab
#   lab.sh qos RATE [EF_SHARE] | qos off             shape the router's egress to the server
#   lab.sh vlans                                     the switch's frames per VLAN id (JSON)
#   lab.sh routes N | routes off                     N /29 routes on the router to the server
#   lab.sh down [--force]                            remove it (no-op if absent)
#   lab.sh status                                    show namespaces/ifaces/state
#   lab.sh env                                       print XP_* shell assignments
#   lab.sh exec NS CMD...                            run CMD inside NS
#   lab.sh ping NS ADDR                              one ICMP echo (no iputils needed)
#
# Topology (routed, the default):
#
#   xp-client [xpc0] <--veth--> [xpr0] xp-router [xpr1] <--veth--> [xps0] xp-server
#   198.18.1.2/24                198.18.1.1/24    198.19.1.1/24      198.19.1.2/24
#   2001:2:0:1::2/64             2001:2:0:1::1/64 2001:2:0:2::1/64   2001:2:0:2::2/64
#
# Direct (--direct): xp-client [xpc0] <--veth--> [xps0] xp-server,
#   client 198.18.1.2/24 + 2001:2:0:1::2/64, server 198.18.1.1/24 + 2001:2:0:1::1/64.
#
# Switch (--switch, issue 26): the direct addresses, with xp-router in the
#   middle as a plain bridge (xpbr0 over xpr0 and xpr1). It forwards 802.1Q
#   and 802.1ad (QinQ) tagged frames untouched (this kernel has neither
#   802.1Q devices nor bridge VLAN filtering), and nftables' bridge family
#   counts them in table bridge xpsw: set vids (802.1Q frames by VID) and set
#   svids (802.1ad frames by the outer VID), dynamic sets with a counter per
#   element; `lab.sh vlans` prints them. docs/flows.md says more.
#
# qos RATE [EF_SHARE] (routed topology): an htb qdisc on the router's egress
#   to the server (xpr1) at RATE (e.g. 100mbit): class 1:10 for DSCP 46 (EF)
#   at EF_SHARE percent of RATE (default 20) with priority, class 1:20 the
#   rest, each a pfifo of 100 packets; an nftables rule (table inet xpqos)
#   puts DSCP 46 into 1:10 by skb priority. `qos off` removes both. Where an
#   overload goes on veth: docs/flows.md.
#
# routes N | off (routed topology, issue 26's route table): N /29 routes
#   (1..4096) on the router, 198.18.128.0/29, 198.18.128.8/29, ... inside
#   198.18.128.0/17, each via the server (198.19.1.2 on xpr1), added in one
#   `ip -batch` run; any earlier ones in 198.18.128.0/17 are flushed first.
#   /29s, not /24s: the benchmark range 198.18.0.0/15 holds only 512 /24s,
#   and 1250 /29s hold 10 000 addresses. The server owns none of these
#   addresses: its XDP program counts frames sent to them only by the test's
#   stamp and tag. `routes off` removes them, as `down` does with the router.
#
# The client also owns 198.18.1.10-198.18.1.25 and 2001:2:0:1::10-2001:2:0:1::1f
# (extra source addresses). MACs are fixed: xpc0 02:58:50:00:00:01, xpr0 ..:02,
# xpr1 ..:03, xps0 ..:04. Only benchmark ranges (RFC 2544 198.18.0.0/15,
# RFC 5180 2001:2::/48) are used. Namespaces are prefixed xp-; `down` deletes
# only xp-client, xp-router and xp-server (and kills processes still inside
# them so the namespaces and their veths really go away). `up` on a lab that
# exists, and `down`, refuse while an xdpperf process runs inside it (someone's
# server or test would die silently): stop it, or add --force to kill it.
#
# State lives in /run/xdpperf-lab/state (removed by `down`).
# Environment: XP_LAB_WAIT=SECS (how long `up` waits for client->server ping,
# default 5), XP_LAB_QUIET=1 (no progress messages on stderr).
# Exit codes: 0 ok, 1 runtime failure / not root, 2 bad arguments.
set -euo pipefail

PROG=lab.sh
# Namespaces and veths are made and removed by the tests' helper (netns_add,
# netns_pair, netns_addr, netns_gro, netns_del).
# shellcheck source=tests/lib/netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/../tests/lib/netns.sh"
STATE_DIR=/run/xdpperf-lab
STATE_FILE=$STATE_DIR/state

NS_CLIENT=xp-client
NS_ROUTER=xp-router
NS_SERVER=xp-server
ALL_NS=("$NS_CLIENT" "$NS_ROUTER" "$NS_SERVER")

DEV_CLIENT=xpc0
DEV_RIN=xpr0     # router, client-facing
DEV_ROUT=xpr1    # router, server-facing
DEV_SERVER=xps0
DEV_BRIDGE=xpbr0 # router, --switch

MAC_CLIENT=02:58:50:00:00:01
MAC_RIN=02:58:50:00:00:02
MAC_ROUT=02:58:50:00:00:03
MAC_SERVER=02:58:50:00:00:04

CT_MAX_WANTED=1048576
WAIT_SECS=${XP_LAB_WAIT:-5}

usage() {
	cat <<EOF
usage: $PROG up [--direct|--switch] [--queues N] [--firewall [--ct-close SECS]] [--force]
       $PROG down [--force] | status | env | vlans
       $PROG qos RATE [EF_SHARE] | qos off
       $PROG routes N | routes off   (N /29 routes in 198.18.128.0/17 on the router, N 1..4096)
       $PROG exec NS CMD...      (NS: client|router|server or xp-client|xp-router|xp-server)
       $PROG ping NS ADDR
EOF
}

die()     { echo "$PROG: $*" >&2; exit 1; }
bad_arg() { echo "$PROG: $* (try '$PROG help')" >&2; exit 2; }
log()     { [[ -n ${XP_LAB_QUIET:-} ]] || echo "$PROG: $*" >&2; }

need_root() { [[ $(id -u) -eq 0 ]] || die "must be run as root"; }

ns_exists() { [[ -e /run/netns/$1 ]]; }

# client|router|server|xp-* -> namespace name
ns_resolve() {
	case "$1" in
	client | "$NS_CLIENT") echo "$NS_CLIENT" ;;
	router | "$NS_ROUTER") echo "$NS_ROUTER" ;;
	server | "$NS_SERVER") echo "$NS_SERVER" ;;
	*) return 1 ;;
	esac
}

nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

# Serialize up/down between concurrent callers. The lock is on this script
# file itself, so nothing is left behind. Only taken for mutating commands.
take_lock() {
	exec 9<"${BASH_SOURCE[0]}"
	flock -w 120 9 || die "timed out waiting for another lab.sh up/down"
}
drop_lock() { exec 9<&-; }

# ---------------------------------------------------------------- ping ----
# One echo request/reply, 1 s timeout. Uses iputils ping when installed,
# otherwise a raw-socket python3 fallback (Debian 12 minimal has no ping).
PY=$(command -v /usr/bin/python3 || command -v python3 || true)
ping_once() { # NS ADDR [TIMEOUT_S]
	local ns=$1 addr=$2 tmo=${3:-1}
	if command -v ping >/dev/null 2>&1; then
		nsx "$ns" ping -n -q -c 1 -W 1 "$addr" >/dev/null 2>&1
		return
	fi
	[[ -n $PY ]] || die "neither ping nor python3 available"
	nsx "$ns" "$PY" - "$addr" "$tmo" <<'PYEOF'
import os, select, socket, struct, sys, time
addr = sys.argv[1]
v6 = ':' in addr
ident = os.getpid() & 0xffff
if v6:
    s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6)
    req, rep = 128, 129
else:
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    req, rep = 8, 0
payload = b'xdpperf-lab-ping'
hdr = struct.pack('!BBHHH', req, 0, 0, ident, 1)
if not v6:  # the kernel fills in the ICMPv6 checksum, not the ICMPv4 one
    data = hdr + payload
    c = sum(struct.unpack('!%dH' % (len(data) // 2), data))
    c = (c >> 16) + (c & 0xffff); c += c >> 16
    hdr = struct.pack('!BBHHH', req, 0, ~c & 0xffff, ident, 1)
s.sendto(hdr + payload, (addr, 0))
deadline = time.time() + float(sys.argv[2])
while True:
    left = deadline - time.time()
    if left <= 0 or not select.select([s], [], [], left)[0]:
        sys.exit(1)
    pkt, src = s.recvfrom(2048)
    if not v6:
        pkt = pkt[(pkt[0] & 0x0f) * 4:]
    if len(pkt) >= 8:
        t, _, _, i, _ = struct.unpack('!BBHHH', pkt[:8])
        if t == rep and i == ident:
            sys.exit(0)
PYEOF
}

# ---------------------------------------------------------------- down ----
# xdpperf processes inside the lab's namespaces (worker processes are named
# xp-cli-wN / xp-srv-wN): one "PID NS: COMMAND LINE" line each.
lab_xdpperf_procs() {
	local ns pid comm
	for ns in "${ALL_NS[@]}"; do
		ns_exists "$ns" || continue
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
			case $comm in xdpperf | xp-cli-w* | xp-srv-w*) ;; *) continue ;; esac
			echo "$pid $ns: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | sed 's/ $//')"
		done
	done
}

# Tearing the lab down kills what runs inside: not an xdpperf someone started, unless --force.
refuse_if_running() { # COMMAND
	((FORCE)) && return 0
	local procs n first
	procs=$(lab_xdpperf_procs)
	[[ -n $procs ]] || return 0
	n=$(wc -l <<<"$procs")
	first=$(head -n 1 <<<"$procs")
	((n == 1)) || first+="; and $((n - 1)) more"
	die "$1 would kill xdpperf running in the lab (pid $first): stop it first, or run '$PROG $1 --force'"
}

do_down() {
	local ns found=0
	for ns in "${ALL_NS[@]}"; do
		ns_exists "$ns" || continue
		found=1
		# Kills what still runs inside, so the namespace and its veths really go.
		netns_del --kill "$ns"
	done
	rm -rf "$STATE_DIR"
	if ((found)); then log "lab removed"; fi
}

# ------------------------------------------------------------------ up ----
# Before the veths exist so they inherit it: no DAD (addresses, link-local
# included, are usable at once) and no router solicitations.
setup_ns() { netns_add "$1"; }

make_veth() { # NS_A DEV_A MAC_A NS_B DEV_B MAC_B QUEUES (1: the kernel's default)
	local q=-
	(($7 > 1)) && q=$7
	netns_pair --mac-a "$3" --mac-b "$6" "$1" "$2" "$4" "$5" "$q"
}

add_addrs() { netns_addr "$1" "$2" "$3" "$4"; } # NS DEV V4/LEN V6/LEN

# Put the client's extra addresses in the next hop's neighbour table now.
# Stateless XDP connection tests never retransmit a SYN whose SYN-ACK the
# router dropped while it was still resolving a new client address.
prime_client_extras() {
	command -v ping >/dev/null 2>&1 || return 0
	local i
	for i in $(seq 0 15); do
		nsx "$NS_CLIENT" ping -n -q -c 1 -W 1 -I "198.18.1.$((10 + i))" 198.18.1.1 >/dev/null 2>&1 &
		nsx "$NS_CLIENT" ping -n -q -c 1 -W 1 -I "2001:2:0:1::$(printf '%x' $((16 + i)))" 2001:2:0:1::1 \
			>/dev/null 2>&1 &
	done
	wait
}

add_client_extras() {
	# 198.18.1.10-25 and 2001:2:0:1::10-::1f (hex). The IPv6 ones are
	# deprecated (preferred_lft 0): bindable, but never picked as the default
	# source, so unbound sockets keep using 2001:2:0:1::2.
	local i cmds=""
	for i in $(seq 0 15); do
		cmds+="addr add 198.18.1.$((10 + i))/24 dev $DEV_CLIENT"$'\n'
		cmds+="addr add 2001:2:0:1::$(printf '%x' $((16 + i)))/64 dev $DEV_CLIENT nodad preferred_lft 0"$'\n'
	done
	ip -n "$NS_CLIENT" -batch - <<<"$cmds"
}

gro_on() { # NS DEV
	netns_gro "$1" "$2" 2>/dev/null || die "ethtool -K $2 gro on failed in $1"
}

FW_RULES="
table inet xpfw {
	chain forward {
		type filter hook forward priority filter; policy drop;
		ct state established,related accept
		ct state invalid drop
		iifname \"$DEV_RIN\" oifname \"$DEV_ROUT\" ct state new accept
		meta l4proto { icmp, ipv6-icmp } accept
	}
}"

setup_firewall() {
	nsx "$NS_ROUTER" nft -f - <<<"$FW_RULES" || die "loading nftables ruleset xpfw failed"
	# nf_conntrack_max is per-netns writable on some kernels only; on this one it
	# is read-only inside a netns and the host (init_net) value applies.
	# (sysctl -w exits 0 even when the write fails, so read the value back.)
	local cur
	# --ct-close: how long a reset connection's entry stays (the kernel's
	# default is 10 s). At 10 s a table of 262144 entries holds 26 k resets a
	# second: a connection-rate test then measures the table, not the rate.
	if [[ -n $CT_CLOSE ]]; then
		nsx "$NS_ROUTER" sh -c "echo $CT_CLOSE > /proc/sys/net/netfilter/nf_conntrack_tcp_timeout_close" ||
			die "cannot set nf_conntrack_tcp_timeout_close in $NS_ROUTER"
	fi
	nsx "$NS_ROUTER" sh -c "echo $CT_MAX_WANTED > /proc/sys/net/netfilter/nf_conntrack_max" 2>/dev/null || true
	cur=$(nsx "$NS_ROUTER" cat /proc/sys/net/netfilter/nf_conntrack_max 2>/dev/null || echo 0)
	if ((cur >= CT_MAX_WANTED)); then
		CT_MAX_NOTE="raised to $cur in $NS_ROUTER"
	else
		CT_MAX_NOTE="read-only in netns, host value $cur applies; raise it on the host if needed"
		log "note: nf_conntrack_max is read-only inside $NS_ROUTER; using host value $cur"
	fi
}

# The switch (--switch): xp-router bridges xpr0 and xpr1, client and server on
# one segment (the direct topology's addresses). STP off and no forwarding
# delay, so the ports forward at once; no VLAN filtering (this kernel has
# none): tagged frames cross untouched, counted per VLAN id by nftables.
SW_RULES="
table bridge xpsw {
	set vids { typeof vlan id; flags dynamic; counter; size 4096; }
	set svids { typeof vlan id; flags dynamic; counter; size 4096; }
	chain forward {
		type filter hook forward priority filter; policy accept;
		ether type 8021ad update @svids { vlan id }
		update @vids { vlan id }
	}
}"

setup_switch() {
	setup_ns "$NS_CLIENT"
	setup_ns "$NS_ROUTER"
	setup_ns "$NS_SERVER"
	make_veth "$NS_CLIENT" "$DEV_CLIENT" "$MAC_CLIENT" "$NS_ROUTER" "$DEV_RIN" "$MAC_RIN" "$QUEUES"
	make_veth "$NS_ROUTER" "$DEV_ROUT" "$MAC_ROUT" "$NS_SERVER" "$DEV_SERVER" "$MAC_SERVER" "$QUEUES"
	ip -n "$NS_ROUTER" link add "$DEV_BRIDGE" type bridge stp_state 0 forward_delay 0
	ip -n "$NS_ROUTER" link set "$DEV_RIN" master "$DEV_BRIDGE"
	ip -n "$NS_ROUTER" link set "$DEV_ROUT" master "$DEV_BRIDGE"
	ip -n "$NS_ROUTER" link set "$DEV_BRIDGE" up
	nsx "$NS_ROUTER" nft -f - <<<"$SW_RULES" || die "loading nftables table bridge xpsw failed"
	add_addrs "$NS_CLIENT" "$DEV_CLIENT" 198.18.1.2/24 2001:2:0:1::2/64
	add_addrs "$NS_SERVER" "$DEV_SERVER" 198.18.1.1/24 2001:2:0:1::1/64
	gro_on "$NS_ROUTER" "$DEV_RIN"
	gro_on "$NS_ROUTER" "$DEV_ROUT"
	SERVER4=198.18.1.1 SERVER6=2001:2:0:1::1
	R_NS=$NS_ROUTER R_IN=$DEV_RIN R_OUT=$DEV_ROUT
	C_GW_MAC=$MAC_SERVER S_GW_MAC=$MAC_CLIENT
}

# The switch's counters, {"vids": {"VID": {"packets": N, "bytes": N}, ...},
# "svids": {...}}, from nft's JSON (never its text).
do_vlans() {
	ns_exists "$NS_ROUTER" || die "namespace $NS_ROUTER does not exist; run '$PROG up --switch'"
	nsx "$NS_ROUTER" nft -j list table bridge xpsw 2>/dev/null | "$PY" -c '
import json, sys
out = {"vids": {}, "svids": {}}
for o in json.load(sys.stdin)["nftables"]:
    s = o.get("set")
    if not s or s["name"] not in out:
        continue
    for e in s.get("elem", []):
        e = e["elem"]
        out[s["name"]][str(e["val"])] = {"packets": e["counter"]["packets"], "bytes": e["counter"]["bytes"]}
print(json.dumps(out, sort_keys=True))
' || die "no switch here (table bridge xpsw): run '$PROG up --switch'"
}

# qos RATE [EF_SHARE] | off: htb on the router's egress to the server. DSCP
# 46 goes to class 1:10 by skb->priority (nftables sets it; htb takes a
# priority that names one of its leaf classes), the rest to the default
# 1:20. Each class a short pfifo, so an overload is dropped in its class
# queue, where `tc -s class show` counts it.
QOS_LIMIT=100
do_qos() {
	local rate=$1 share=${2:-20} ns=$NS_ROUTER dev=$DEV_ROUT num unit ef
	[[ -r $STATE_FILE ]] || die "lab is not up (no $STATE_FILE); run '$PROG up'"
	grep -q '^XP_MODE=routed$' "$STATE_FILE" ||
		die "qos needs the routed topology (its router forwards by DSCP); run '$PROG up'"
	if [[ $rate != off ]]; then
		[[ $rate =~ ^[0-9]+(kbit|mbit|gbit)$ ]] || bad_arg "qos: RATE like 100mbit (kbit, mbit or gbit), got '$rate'"
		[[ $share =~ ^[0-9]+$ ]] && ((share >= 1 && share <= 90)) ||
			bad_arg "qos: EF_SHARE is a percentage 1..90, got '$share'"
	fi
	tc -n "$ns" qdisc del dev "$dev" root 2>/dev/null || true
	nsx "$ns" nft delete table inet xpqos 2>/dev/null || true
	if [[ $rate == off ]]; then
		log "qos off"
		return 0
	fi
	num=${rate%%[a-z]*} unit=${rate##*[0-9]}
	ef=$((num * share / 100))
	((ef >= 1)) || bad_arg "qos: $share % of $rate is below 1 $unit"
	tc -n "$ns" qdisc add dev "$dev" root handle 1: htb default 20
	tc -n "$ns" class add dev "$dev" parent 1: classid 1:1 htb rate "$rate" ceil "$rate" quantum 1514
	tc -n "$ns" class add dev "$dev" parent 1:1 classid 1:10 htb rate "$ef$unit" ceil "$rate" prio 0 quantum 1514
	tc -n "$ns" class add dev "$dev" parent 1:1 classid 1:20 htb rate "$((num - ef))$unit" ceil "$rate" prio 1 quantum 1514
	tc -n "$ns" qdisc add dev "$dev" parent 1:10 handle 10: pfifo limit "$QOS_LIMIT"
	tc -n "$ns" qdisc add dev "$dev" parent 1:20 handle 20: pfifo limit "$QOS_LIMIT"
	nsx "$ns" nft -f - <<<"
table inet xpqos {
	chain post {
		type filter hook postrouting priority filter; policy accept;
		oifname \"$dev\" ip dscp ef meta priority set 1:10
		oifname \"$dev\" ip6 dscp ef meta priority set 1:10
	}
}" || die "loading nftables table inet xpqos failed"
	log "qos on $dev: htb $rate, EF (DSCP 46) class 1:10 at $ef$unit first, the rest 1:20"
}

# routes N | off: N /29 routes in 198.18.128.0/17 toward the server (see
# the top). One `ip -batch` process adds them all: 4096 separate `ip route
# add` runs would take seconds. `ip route flush root` removes every route
# inside the prefix and nothing else.
ROUTES_ROOT=198.18.128.0/17
ROUTES_MAX=4096
do_routes() {
	local n=$1 i a cmds=""
	[[ -r $STATE_FILE ]] || die "lab is not up (no $STATE_FILE); run '$PROG up'"
	grep -q '^XP_MODE=routed$' "$STATE_FILE" ||
		die "routes needs the routed topology (its router forwards them); run '$PROG up'"
	ip -n "$NS_ROUTER" route flush root "$ROUTES_ROOT" || die "flushing routes in $ROUTES_ROOT failed"
	if [[ $n == off ]]; then
		log "routes off"
		return 0
	fi
	for ((i = 0; i < n; i++)); do
		a=$((i * 8))
		cmds+="route add 198.18.$((128 + a / 256)).$((a % 256))/29 via 198.19.1.2 dev $DEV_ROUT"$'\n'
	done
	ip -n "$NS_ROUTER" -batch - <<<"$cmds" || die "adding $n routes failed"
	log "routes: $n /29s from 198.18.128.0 via 198.19.1.2 ($((n * 8)) addresses)"
}

wait_ping() { # NS ADDR
	local ns=$1 addr=$2 t0=$SECONDS
	# IPv6 on a fresh veth answers ND only after linkwatch reports carrier
	# (up to ~1 s), so retry with short per-attempt timeouts.
	while ! ping_once "$ns" "$addr" 0.3; do
		if ((SECONDS - t0 >= WAIT_SECS)); then
			return 1
		fi
		sleep 0.1
	done
}

write_state() {
	mkdir -p "$STATE_DIR"
	cat >"$STATE_FILE.tmp" <<EOF
XP_MODE=$MODE
XP_CLIENT_NS=$NS_CLIENT
XP_SERVER_NS=$NS_SERVER
XP_ROUTER_NS=$R_NS
XP_CLIENT_DEV=$DEV_CLIENT
XP_SERVER_DEV=$DEV_SERVER
XP_ROUTER_CLIENT_DEV=$R_IN
XP_ROUTER_SERVER_DEV=$R_OUT
XP_CLIENT4=198.18.1.2
XP_SERVER4=$SERVER4
XP_CLIENT6=2001:2:0:1::2
XP_SERVER6=$SERVER6
XP_CLIENT4_RANGE=198.18.1.10-198.18.1.25
XP_CLIENT6_RANGE=2001:2:0:1::10-2001:2:0:1::1f
XP_CLIENT_MAC=$MAC_CLIENT
XP_CLIENT_GW_MAC=$C_GW_MAC
XP_SERVER_MAC=$MAC_SERVER
XP_SERVER_GW_MAC=$S_GW_MAC
XP_QUEUES=$QUEUES
XP_FIREWALL=$FIREWALL
XP_CT_MAX_NOTE='$CT_MAX_NOTE'
EOF
	mv "$STATE_FILE.tmp" "$STATE_FILE"
}

do_up() {
	CT_MAX_NOTE=""
	do_down
	# Any failure from here on removes the half-built lab.
	trap 'rc=$?; if ((rc)); then XP_LAB_QUIET=1 do_down; echo "$PROG: up failed, lab removed" >&2; fi' EXIT

	if [[ $MODE == switch ]]; then
		setup_switch
	elif [[ $MODE == direct ]]; then
		setup_ns "$NS_CLIENT"
		setup_ns "$NS_SERVER"
		make_veth "$NS_CLIENT" "$DEV_CLIENT" "$MAC_CLIENT" "$NS_SERVER" "$DEV_SERVER" "$MAC_SERVER" "$QUEUES"
		add_addrs "$NS_CLIENT" "$DEV_CLIENT" 198.18.1.2/24 2001:2:0:1::2/64
		add_addrs "$NS_SERVER" "$DEV_SERVER" 198.18.1.1/24 2001:2:0:1::1/64
		SERVER4=198.18.1.1 SERVER6=2001:2:0:1::1
		R_NS="" R_IN="" R_OUT=""
		C_GW_MAC=$MAC_SERVER S_GW_MAC=$MAC_CLIENT
	else
		setup_ns "$NS_CLIENT"
		setup_ns "$NS_ROUTER"
		setup_ns "$NS_SERVER"
		make_veth "$NS_CLIENT" "$DEV_CLIENT" "$MAC_CLIENT" "$NS_ROUTER" "$DEV_RIN" "$MAC_RIN" "$QUEUES"
		make_veth "$NS_ROUTER" "$DEV_ROUT" "$MAC_ROUT" "$NS_SERVER" "$DEV_SERVER" "$MAC_SERVER" "$QUEUES"
		nsx "$NS_ROUTER" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1
		add_addrs "$NS_CLIENT" "$DEV_CLIENT" 198.18.1.2/24 2001:2:0:1::2/64
		add_addrs "$NS_ROUTER" "$DEV_RIN" 198.18.1.1/24 2001:2:0:1::1/64
		add_addrs "$NS_ROUTER" "$DEV_ROUT" 198.19.1.1/24 2001:2:0:2::1/64
		add_addrs "$NS_SERVER" "$DEV_SERVER" 198.19.1.2/24 2001:2:0:2::2/64
		ip -n "$NS_CLIENT" route add default via 198.18.1.1
		ip -n "$NS_CLIENT" -6 route add default via 2001:2:0:1::1
		ip -n "$NS_SERVER" route add default via 198.19.1.1
		ip -n "$NS_SERVER" -6 route add default via 2001:2:0:2::1
		gro_on "$NS_ROUTER" "$DEV_RIN"
		gro_on "$NS_ROUTER" "$DEV_ROUT"
		SERVER4=198.19.1.2 SERVER6=2001:2:0:2::2
		R_NS=$NS_ROUTER R_IN=$DEV_RIN R_OUT=$DEV_ROUT
		C_GW_MAC=$MAC_RIN S_GW_MAC=$MAC_ROUT
		if ((FIREWALL)); then setup_firewall; fi
	fi
	# GRO on every veth (client too: the router may XDP-redirect replies back
	# into xpc0), so frames XDP_TX'd/redirected into them are not dropped when
	# no XDP program is attached on the receiving side.
	gro_on "$NS_SERVER" "$DEV_SERVER"
	gro_on "$NS_CLIENT" "$DEV_CLIENT"
	add_client_extras

	# Reachability; this also resolves every neighbour on the path.
	wait_ping "$NS_CLIENT" "$SERVER4" ||
		die "client cannot ping server $SERVER4 (IPv4) within ${WAIT_SECS}s"
	wait_ping "$NS_CLIENT" "$SERVER6" ||
		die "client cannot ping server $SERVER6 (IPv6) within ${WAIT_SECS}s"

	prime_client_extras

	write_state
	trap - EXIT
	log "lab up: mode=$MODE queues=$QUEUES firewall=$( ((FIREWALL)) && echo on || echo off)"
}

# -------------------------------------------------------------- status ----
count_queues() { # NS DEV KIND(rx|tx)
	nsx "$1" sh -c "ls -d /sys/class/net/$2/queues/$3-* 2>/dev/null | wc -l"
}

do_status() {
	local ns dev any=0
	for ns in "${ALL_NS[@]}"; do ns_exists "$ns" && any=1; done
	if ((!any)); then
		echo "lab: down (no xp-* namespaces)"
		return 0
	fi
	if [[ -r $STATE_FILE ]]; then
		# shellcheck disable=SC1090
		. "$STATE_FILE"
		echo "lab: up, mode=$XP_MODE queues=$XP_QUEUES firewall=$( ((XP_FIREWALL)) && echo on || echo off)"
	else
		echo "lab: namespaces present but no state file ($STATE_FILE); run '$PROG up' again"
	fi
	for ns in "${ALL_NS[@]}"; do
		ns_exists "$ns" || continue
		echo "namespace $ns:"
		for dev in $(ip -n "$ns" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1); do
			[[ $dev == lo ]] && continue
			local st mac a4 a6 gro
			st=$(ip -n "$ns" -o link show dev "$dev" | grep -o 'state [A-Z]*' | cut -d' ' -f2)
			mac=$(ip -n "$ns" -o link show dev "$dev" | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2)
			a4=$(ip -n "$ns" -o -4 addr show dev "$dev" | awk '{print $4}' | wc -l)
			a6=$(ip -n "$ns" -o -6 addr show dev "$dev" scope global | awk '{print $4}' | wc -l)
			gro=$(nsx "$ns" ethtool -k "$dev" 2>/dev/null | awk '/^generic-receive-offload:/{print $2}')
			echo "  $dev state=$st mac=$mac rxq=$(count_queues "$ns" "$dev" rx) txq=$(count_queues "$ns" "$dev" tx) gro=${gro:-?}"
			echo "    inet  $(ip -n "$ns" -o -4 addr show dev "$dev" | awk '{print $4}' | head -1)$( ((a4 > 1)) && echo " (+$((a4 - 1)) more)")"
			echo "    inet6 $(ip -n "$ns" -o -6 addr show dev "$dev" scope global | awk '{print $4}' | tail -1)$( ((a6 > 1)) && echo " (+$((a6 - 1)) more)")"
		done
		if [[ $ns == "$NS_ROUTER" ]]; then
			echo "  forwarding: ipv4=$(nsx "$ns" sysctl -n net.ipv4.ip_forward) ipv6=$(nsx "$ns" sysctl -n net.ipv6.conf.all.forwarding)"
			if nsx "$ns" nft list table inet xpfw >/dev/null 2>&1; then
				echo "  firewall: on (nft table inet xpfw)"
			else
				echo "  firewall: off"
			fi
			echo "  conntrack: count=$(nsx "$ns" conntrack -C 2>/dev/null || echo '?')" \
				"max=$(nsx "$ns" sysctl -n net.netfilter.nf_conntrack_max 2>/dev/null || echo '?')" \
				"close_timeout=$(nsx "$ns" sysctl -n net.netfilter.nf_conntrack_tcp_timeout_close 2>/dev/null || echo '?')s" \
				"${XP_CT_MAX_NOTE:+($XP_CT_MAX_NOTE)}"
		fi
	done
}

do_env() {
	[[ -r $STATE_FILE ]] || die "lab is not up (no $STATE_FILE); run '$PROG up'"
	if ! ns_exists "$NS_CLIENT" || ! ns_exists "$NS_SERVER"; then
		die "lab state file exists but namespaces are missing; run '$PROG up'"
	fi
	grep '^XP_' "$STATE_FILE" | grep -v '^XP_CT_MAX_NOTE='
}

set_queues() {
	if [[ $1 =~ ^[0-9]{1,3}$ ]] && ((10#$1 >= 1 && 10#$1 <= 64)); then
		QUEUES=$((10#$1))
	else
		bad_arg "--queues must be an integer 1..64, got '$1'"
	fi
}

# ---------------------------------------------------------------- main ----
(($# >= 1)) || bad_arg "missing command (up|down|status|env|exec|ping)"
cmd=$1
shift
case "$cmd" in
up)
	MODE=routed QUEUES=1 FIREWALL=0 FORCE=0 CT_CLOSE=
	while (($#)); do
		case "$1" in
		--direct) MODE=direct ;;
		--switch) MODE=switch ;;
		--force) FORCE=1 ;;
		--firewall) FIREWALL=1 ;;
		--ct-close)
			(($# >= 2)) || bad_arg "--ct-close needs a number of seconds"
			[[ $2 =~ ^[0-9]+$ ]] && (($2 >= 1 && $2 <= 3600)) || bad_arg "--ct-close '$2': give whole seconds, 1 to 3600"
			CT_CLOSE=$2
			shift
			;;
		--queues)
			(($# >= 2)) || bad_arg "--queues needs a value"
			set_queues "$2"
			shift
			;;
		--queues=*) set_queues "${1#--queues=}" ;;
		*) bad_arg "up: unknown argument '$1'" ;;
		esac
		shift
	done
	[[ -n $CT_CLOSE && $FIREWALL == 0 ]] && bad_arg "--ct-close is a setting of the firewall: add --firewall"
	[[ $MODE != routed && $FIREWALL == 1 ]] &&
		bad_arg "--firewall needs the routed topology (it lives in $NS_ROUTER); drop --$MODE"
	need_root
	take_lock
	refuse_if_running up
	do_up
	;;
qos)
	(($# >= 1 && $# <= 2)) || bad_arg "qos needs RATE [EF_SHARE], or off"
	need_root
	take_lock
	do_qos "$@"
	;;
routes)
	(($# == 1)) || bad_arg "routes needs N (1..$ROUTES_MAX), or off"
	n=$1
	if [[ $n != off ]]; then
		[[ $n =~ ^[0-9]{1,4}$ ]] && ((10#$n >= 1 && 10#$n <= ROUTES_MAX)) ||
			bad_arg "routes: N is a number of /29 routes, 1..$ROUTES_MAX, or off; got '$n'"
		n=$((10#$n))
	fi
	need_root
	take_lock
	do_routes "$n"
	;;
vlans)
	(($# == 0)) || bad_arg "vlans: unexpected argument '$1'"
	need_root
	do_vlans
	;;
down | status | env)
	FORCE=0
	[[ $cmd == down && ${1:-} == --force ]] && FORCE=1 && shift
	(($# == 0)) || bad_arg "$cmd: unexpected argument '$1'"
	need_root
	case "$cmd" in
	down) take_lock; refuse_if_running down; do_down ;;
	status) do_status ;;
	env) do_env ;;
	esac
	;;
exec)
	(($# >= 2)) || bad_arg "exec needs NS and a command"
	ns=$(ns_resolve "$1") || bad_arg "exec: unknown namespace '$1' (client|router|server)"
	shift
	need_root
	ns_exists "$ns" || die "namespace $ns does not exist; run '$PROG up'"
	exec ip netns exec "$ns" "$@"
	;;
ping)
	(($# == 2)) || bad_arg "ping needs NS and ADDR"
	ns=$(ns_resolve "$1") || bad_arg "ping: unknown namespace '$1' (client|router|server)"
	need_root
	ns_exists "$ns" || die "namespace $ns does not exist; run '$PROG up'"
	ping_once "$ns" "$2"
	;;
help | -h | --help) usage ;;
*) bad_arg "unknown command '$cmd'" ;;
esac
