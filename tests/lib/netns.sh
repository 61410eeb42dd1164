# shellcheck shell=bash
# The tests' one helper for network namespaces and veth pairs, for shell and
# C alike.
#
#   bash tests/lib/netns.sh CMD ARGS...    as a command (the C tests run it
#                                           through tests/lib/netns_helper.c)
#   . tests/lib/netns.sh; netns_CMD ARGS... as a library (tests/e2e/lib.sh,
#                                           scripts/lab.sh)
#
# Commands (each is also a function netns_CMD):
#   add [--no-ipv6] NS...
#       New namespaces (one left over under the same name is deleted first),
#       each with lo up, no IPv6 DAD (addresses, link-local included, usable at
#       once) and no router solicitations: set before any veth exists, so the
#       veths inherit it. --no-ipv6: IPv6 off instead, so that nothing but
#       what the test sends crosses its veths.
#   pair [--mac-a MAC] [--mac-b MAC] NS_A DEV_A NS_B DEV_B [QUEUES [PEER_QUEUES]]
#       A veth pair, DEV_A in NS_A and DEV_B in NS_B (NS_B may be NS_A), both
#       ends up. QUEUES (DEV_A's): N (N rx and N tx queues), RX,TX, or - (the
#       kernel's default, also when omitted); PEER_QUEUES (DEV_B's) defaults
#       to QUEUES.
#   addr NS DEV ADDR/LEN...
#       Add addresses to DEV (IPv6 ones without DAD).
#   gro NS DEV...
#       GRO on: a veth drops frames XDP_TX'd or redirected into it unless its
#       peer has an XDP program attached or GRO on.
#   del [--kill] NS...
#       Delete namespaces (absent ones are ignored). --kill: first TERM, then
#       KILL, whatever still runs inside, so that they and their veths really
#       go away at once.
# NS "-" is the caller's own namespace (e.g. one made with unshare(2)): `add -`
# only applies the settings, `pair - A - B` makes the pair there.
#
# Status: 0 ok, 1 a step failed (ip's or ethtool's message on stderr), 2 bad
# arguments. Sourcing defines the functions only (no shell options change).

NETNS_DIR=/var/run/netns   # where `ip netns` keeps its names

_netns_usage() { echo "netns.sh: usage: $*" >&2; return 2; }

# ip, or any command, in NS ("-": right here).
_netns_ip() {
	local ns=$1
	shift
	if [[ $ns == - ]]; then ip "$@"; else ip -n "$ns" "$@"; fi
}
_netns_exec() {
	local ns=$1
	shift
	if [[ $ns == - ]]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

# QUEUES spec -> _NETNS_Q, the `ip link add` words for it.
_netns_queues() {
	_NETNS_Q=()
	case $1 in
	-) ;;
	*,*)
		[[ ${1%%,*} =~ ^[0-9]+$ && ${1#*,} =~ ^[0-9]+$ ]] || _netns_usage "queues: N, RX,TX or -, not '$1'" || return
		_NETNS_Q=(numrxqueues "${1%%,*}" numtxqueues "${1#*,}")
		;;
	*)
		[[ $1 =~ ^[0-9]+$ ]] || _netns_usage "queues: N, RX,TX or -, not '$1'" || return
		_NETNS_Q=(numtxqueues "$1" numrxqueues "$1")
		;;
	esac
}

netns_add() {
	local noip6=0 ns
	if [[ ${1:-} == --no-ipv6 ]]; then
		noip6=1
		shift
	fi
	(($#)) || _netns_usage "add [--no-ipv6] NS..." || return
	for ns in "$@"; do
		if [[ $ns != - ]]; then
			if [[ -e $NETNS_DIR/$ns ]]; then ip netns del "$ns" || return 1; fi
			ip netns add "$ns" || return 1
		fi
		_netns_ip "$ns" link set lo up || return 1
		if ((noip6)); then
			_netns_exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
				net.ipv6.conf.default.disable_ipv6=1 || return 1
		else
			_netns_exec "$ns" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
				net.ipv6.conf.default.router_solicitations=0 net.ipv6.conf.all.router_solicitations=0 ||
				return 1
		fi
	done
}

netns_pair() {
	local mac_a=() mac_b=() q_a q_b peer_ns=()
	while [[ ${1:-} == --mac-[ab] ]]; do
		(($# >= 2)) || _netns_usage "pair: $1 needs a MAC" || return
		if [[ $1 == --mac-a ]]; then mac_a=(address "$2"); else mac_b=(address "$2"); fi
		shift 2
	done
	(($# >= 4 && $# <= 6)) ||
		_netns_usage "pair [--mac-a MAC] [--mac-b MAC] NS_A DEV_A NS_B DEV_B [QUEUES [PEER_QUEUES]]" || return
	local nsa=$1 deva=$2 nsb=$3 devb=$4
	_netns_queues "${5:--}" || return
	q_a=("${_NETNS_Q[@]}")
	_netns_queues "${6:-${5:--}}" || return
	q_b=("${_NETNS_Q[@]}")
	if [[ $nsb != "$nsa" ]]; then
		[[ $nsb != - ]] || _netns_usage "pair: NS_B '-' needs NS_A '-' too" || return
		peer_ns=(netns "$nsb")
	fi
	_netns_ip "$nsa" link add name "$deva" "${mac_a[@]}" "${q_a[@]}" type veth \
		peer name "$devb" "${mac_b[@]}" "${q_b[@]}" "${peer_ns[@]}" || return 1
	_netns_ip "$nsa" link set "$deva" up && _netns_ip "$nsb" link set "$devb" up || return 1
}

netns_addr() {
	(($# >= 3)) || _netns_usage "addr NS DEV ADDR/LEN..." || return
	local ns=$1 dev=$2 a
	shift 2
	for a in "$@"; do
		if [[ $a == *:* ]]; then
			_netns_ip "$ns" -6 addr add "$a" dev "$dev" nodad || return 1
		else
			_netns_ip "$ns" addr add "$a" dev "$dev" || return 1
		fi
	done
}

netns_gro() {
	(($# >= 2)) || _netns_usage "gro NS DEV..." || return
	local ns=$1 dev
	shift
	for dev in "$@"; do
		_netns_exec "$ns" ethtool -K "$dev" gro on >/dev/null || return 1
	done
}

# TERM, then (after up to 1 s) KILL, what still runs inside NS.
_netns_kill_procs() {
	local ns=$1 pids
	pids=$(ip netns pids "$ns" 2>/dev/null || true)
	[[ -n $pids ]] || return 0
	# shellcheck disable=SC2086
	kill $pids 2>/dev/null || true
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		[[ -n $pids ]] || return 0
		sleep 0.1
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

netns_del() {
	local kill=0 ns rc=0
	if [[ ${1:-} == --kill ]]; then
		kill=1
		shift
	fi
	for ns in "$@"; do
		[[ -e $NETNS_DIR/$ns ]] || continue
		if ((kill)); then _netns_kill_procs "$ns"; fi
		ip netns del "$ns" 2>/dev/null || ip netns del "$ns" || rc=1
	done
	return "$rc"
}

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
	case ${1:-} in
	add | pair | addr | gro | del)
		cmd=$1
		shift
		"netns_$cmd" "$@"
		exit
		;;
	-h | --help | help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) _netns_usage "netns.sh add|pair|addr|gro|del ARGS... (netns.sh help)"; exit 2 ;;
	esac
fi
