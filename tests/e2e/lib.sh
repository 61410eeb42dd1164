# shellcheck shell=bash
# Helpers for xdpperf end-to-end tests. Source it first thing:
#
#   #!/usr/bin/env bash
#   . "$(dirname "$0")/lib.sh"
#   xp_case routed_ping                 # start a case (name: no spaces)
#   xp_check "lab up" xp_lab_up         # run a step; on failure the case FAILs
#   xp_check "ping v4" xp_ping client "$XP_SERVER4"
#   xp_pass                             # PASS unless a step already failed it
#
# Result protocol (what tests/run.sh tallies): every finished case produces
# exactly one line
#       RESULT PASS <name>
#       RESULT FAIL <name>: <message>
#       RESULT SKIP <name>: <message>
# printed on stdout and, when $XP_RESULTS is set (run.sh sets it), appended to
# that file, which is what run.sh reads. A case still open when the script
# exits is a FAIL. The script exits 1 if any case failed, else 0. A script
# that is not run as root records one FAIL and exits 1 (make check runs as
# root). xp_skip is only for a kernel feature that is missing, and its
# message names it with the words "kernel lacks" (tests/run.sh fails any other skip).
#
# Semantics:
#   xp_case NAME       start a case (an open previous case FAILs: not concluded)
#   xp_pass            close the open case as PASS; no-op if it already failed
#   xp_fail MSG        close the open case as FAIL (no open case: FAIL <script>)
#   xp_skip MSG        close the open case as SKIP
#   xp_check MSG CMD.. run CMD in this shell (so variables it sets persist),
#                      output captured; if it fails the case FAILs with MSG and
#                      the tail of the output. No-op once the case is closed,
#                      so a case is a straight line of xp_checks. Always
#                      returns 0 (safe under set -e); test with xp_open.
#   xp_open            true while the current case is open (nothing failed)
#   xp_lab_up ARGS     end this script's background processes (the lab's rebuild
#                      would), scripts/lab.sh up ARGS, then import `lab.sh env` (XP_*)
#   xp_lab_down        the same, then scripts/lab.sh down
#   xp_exec NS CMD..   run CMD in NS (client|router|server or a full ns name)
#   xp_ping NS ADDR    one ICMP echo from NS (works without iputils-ping)
#   xp_wait_port NS PORT [SECS]  wait (default 5 s) for a TCP listener on PORT
#   xp_run_bg NS CMD.. start CMD in NS in the background; its pid is left in
#                      XP_BG_PID and its output in the file $XP_BG_LOG. All
#                      background pids are killed when the script exits.
#   xp_on_exit CMD     add CMD to the exit cleanup (do not set your own EXIT
#                      trap: it would replace lib.sh's).
#   xp_netns_add [--no-ipv6] NS...  private namespaces for a script that does
#                      not use the lab: netns_add, and netns_del at exit.
#   xp_routed_lab [--v6 C6 S6] [--gro IFS] NC NR NS C4 S4  a routed lab of the
#                      script's own (client -> router -> server; see below)
#   netns_pair, netns_addr, netns_gro, netns_del: tests/lib/netns.sh, the
#                      helper shared with the C tests and scripts/lab.sh.
# At exit: registered cleanups, background pids killed, `lab.sh down` (unless
# XP_KEEP_LAB=1, for debugging), results summary.

XP_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
XP_LAB=$XP_ROOT/scripts/lab.sh
XP_BIN=$XP_ROOT/xdpperf   # the tool under test (built by make)
export XP_ROOT XP_LAB XP_BIN
# shellcheck source=tests/lib/netns.sh
. "$XP_ROOT/tests/lib/netns.sh"
# shellcheck source=tests/lib/server.sh
. "$XP_ROOT/tests/lib/server.sh"
XP_SCRIPT=$(basename "$0" .sh)
XP_TMP=$(mktemp -d "/tmp/xp-e2e-$XP_SCRIPT.XXXXXX")

XP_MAIN_PID=$BASHPID
# The script's real stdout/stderr: the exit trap may fire inside a redirected
# xp_check step and must still report to the right place.
exec {XP_OUT}>&1 {XP_ERR}>&2
XP_CASE=""        # name of the open case ("" = none open)
XP_NPASS=0 XP_NFAIL=0 XP_NSKIP=0
XP_BG_PIDS=()
XP_EXIT_CMDS=()
XP_BG_N=0

xp__result() { # STATUS NAME [MSG]
	local line="RESULT $1 $2"
	local msg=${3:-}
	msg=${msg%$'\n'}
	[[ -n $msg ]] && line+=": ${msg//$'\n'/; }"
	echo "$line"
	if [[ -n ${XP_RESULTS:-} ]]; then echo "$line" >>"$XP_RESULTS"; fi
	case $1 in
	PASS) XP_NPASS=$((XP_NPASS + 1)) ;;
	FAIL) XP_NFAIL=$((XP_NFAIL + 1)) ;;
	SKIP) XP_NSKIP=$((XP_NSKIP + 1)) ;;
	esac
}

xp_case() {
	[[ -n $XP_CASE ]] && xp_fail "case ended without xp_pass/xp_fail/xp_skip"
	XP_CASE=${1// /_}
	echo "--- case $XP_CASE"
}
xp_open() { [[ -n $XP_CASE ]]; }
xp_pass() {
	[[ -n $XP_CASE ]] || return 0
	xp__result PASS "$XP_CASE"
	XP_CASE=""
}
xp_fail() {
	xp__result FAIL "${XP_CASE:-$XP_SCRIPT}" "${1:-failed}"
	XP_CASE=""
	return 0
}
xp_skip() {
	xp__result SKIP "${XP_CASE:-$XP_SCRIPT}" "${1:-skipped}"
	XP_CASE=""
}

xp_check() { # MSG CMD...
	[[ -n $XP_CASE ]] || return 0
	# Odd local names: CMD runs in this shell and may set its own out/rc/msg.
	local _xpc_msg=$1 _xpc_rc=0 _xpc_out=$XP_TMP/check.out
	shift
	"$@" >"$_xpc_out" 2>&1 || _xpc_rc=$?
	sed 's/^/    | /' "$_xpc_out"
	if ((_xpc_rc)); then
		local _xpc_tl
		_xpc_tl=$(tail -n 3 "$_xpc_out")
		xp_fail "$_xpc_msg (exit $_xpc_rc)${_xpc_tl:+: $_xpc_tl}"
	fi
	return 0
}

xp_ns() { # client|router|server|NAME -> namespace
	case $1 in
	client) echo "${XP_CLIENT_NS:-xp-client}" ;;
	router) echo "${XP_ROUTER_NS:-xp-router}" ;;
	server) echo "${XP_SERVER_NS:-xp-server}" ;;
	*) echo "$1" ;;
	esac
}
xp_exec() { local ns; ns=$(xp_ns "$1"); shift; ip netns exec "$ns" "$@"; }
xp_ping() { bash "$XP_LAB" ping "$(xp_ns "$1")" "$2"; }

xp_lab_up() {
	local envs
	# Rebuilding the lab ends what runs in it: this script's own background
	# processes first, explicitly; lab.sh refuses if anyone else's xdpperf
	# still runs there.
	xp__kill_bg
	bash "$XP_LAB" up "$@" || return
	envs=$(bash "$XP_LAB" env) || return
	set -a
	eval "$envs"
	set +a
}
xp_lab_down() { xp__kill_bg; bash "$XP_LAB" down; }

xp_wait_port() { # NS PORT [SECS]
	local ns t0=$SECONDS
	ns=$(xp_ns "$1")
	while [[ -z $(ip netns exec "$ns" ss -Hltn "sport = :$2" 2>/dev/null) ]]; do
		if ((SECONDS - t0 >= ${3:-5})); then
			echo "no TCP listener on port $2 in $ns after ${3:-5}s" >&2
			return 1
		fi
		sleep 0.05
	done
}

# xp_wait SECS WHAT CMD...: poll CMD (every 50 ms) until it succeeds. SECS is
# a deadline for a hang, never the synchronisation itself: on expiry it says
# WHAT did not happen and fails.
xp_wait() {
	local secs=$1 what=$2 t0=$SECONDS
	shift 2
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS - t0 >= secs)); then
			echo "$what: not after ${secs}s" >&2
			return 1
		fi
		sleep 0.05
	done
}
xp__log_has() { local n; n=$(grep -cE -- "$2" "$1" 2>/dev/null); ((${n:-0} >= $3)); }
# xp_wait_log FILE ERE [N] [SECS]: until FILE holds N (1) lines matching ERE.
xp_wait_log() { xp_wait "${4:-10}" "${3:-1} line(s) matching '$2' in $(basename "$1")" xp__log_has "$1" "$2" "${3:-1}"; }
# xp_capture_bg NS CMD...: a capture (tcpdump) in the background, returned
# once it says it is listening, so nothing sent afterwards is missed.
xp_capture_bg() {
	xp_run_bg "$@"
	xp_wait_log "$XP_BG_LOG" "listening on" 1 10
}

xp_run_bg() { # NS CMD...
	local ns
	ns=$(xp_ns "$1")
	shift
	XP_BG_N=$((XP_BG_N + 1))
	XP_BG_LOG=$XP_TMP/bg$XP_BG_N.log
	# The subshell drops lib.sh's traps, then execs `ip netns exec`, which
	# execs CMD: $! is CMD's own pid.
	(
		trap - EXIT INT TERM
		exec ip netns exec "$ns" "$@" >"$XP_BG_LOG" 2>&1
	) &
	XP_BG_PID=$!
	XP_BG_PIDS+=("$XP_BG_PID")
}

xp_on_exit() { XP_EXIT_CMDS+=("$*"); }

xp_netns_add() { # [--no-ipv6] NS...
	local a names=()
	for a in "$@"; do [[ $a == --* ]] || names+=("$a"); done
	# Registered first: a half-made set goes as well.
	xp_on_exit netns_del "${names[@]}"
	netns_add "$@"
}

# xp_routed_lab [--v6 CNET6 SNET6] [--gro "IF..."] NC NR NS CNET SNET: a routed
# lab of the script's own (NC -> NR -> NS, removed at exit), for a script
# that does not use the shared one:
#   NC c0 CNET.2/24 -- r0 CNET.1/24 NR r1 SNET.1/24 -- s0 SNET.2/24 NS
# CNET and SNET are three octets (198.18.10); with --v6 also CNET6::2/64 on
# c0, CNET6::1 on r0, SNET6::1 on r1 and SNET6::2 on s0 (CNET6: four groups,
# 2001:2:0:10). The router forwards, the ends route through it, GRO is on on
# the router's IFs (default r0: frames an XDP program transmits into a veth
# need GRO or XDP on the receiving end), and a ping from NC to the server's
# addresses has come back.
xp_routed_lab() {
	local c6="" s6="" gro=(r0)
	while [[ ${1:-} == --* ]]; do
		case $1 in
		--v6) c6=$2 s6=$3; shift 3 ;;
		--gro) read -ra gro <<<"$2"; shift 2 ;;
		*) echo "xp_routed_lab: unknown option $1" >&2; return 2 ;;
		esac
	done
	local nc=$1 nr=$2 ns=$3 c4=$4 s4=$5
	local fwd=(net.ipv4.ip_forward=1) ac=("$c4.2/24") ar0=("$c4.1/24") ar1=("$s4.1/24") as=("$s4.2/24")
	if [[ -n $c6 ]]; then
		fwd+=(net.ipv6.conf.all.forwarding=1)
		ac+=("$c6::2/64") ar0+=("$c6::1/64") ar1+=("$s6::1/64") as+=("$s6::2/64")
	fi
	xp_netns_add "$nc" "$nr" "$ns" &&
		netns_pair "$nc" c0 "$nr" r0 && netns_pair "$nr" r1 "$ns" s0 &&
		ip netns exec "$nr" sysctl -qw "${fwd[@]}" &&
		netns_addr "$nc" c0 "${ac[@]}" && netns_addr "$nr" r0 "${ar0[@]}" &&
		netns_addr "$nr" r1 "${ar1[@]}" && netns_addr "$ns" s0 "${as[@]}" &&
		ip -n "$nc" route add default via "$c4.1" && { [[ -z $c6 ]] || ip -n "$nc" -6 route add default via "$c6::1"; } &&
		ip -n "$ns" route add default via "$s4.1" && { [[ -z $c6 ]] || ip -n "$ns" -6 route add default via "$s6::1"; } &&
		netns_gro "$nr" "${gro[@]}" &&
		ip netns exec "$nc" ping -c 1 -W 2 "$s4.2" >/dev/null &&
		{ [[ -z $c6 ]] || ip netns exec "$nc" ping -c 1 -W 2 "$s6::2" >/dev/null; }
}

xp__kill_bg() {
	local p live
	((${#XP_BG_PIDS[@]})) || return 0
	kill "${XP_BG_PIDS[@]}" 2>/dev/null
	for _ in $(seq 20); do
		live=0
		for p in "${XP_BG_PIDS[@]}"; do kill -0 "$p" 2>/dev/null && live=1; done
		((live)) || break
		sleep 0.05
	done
	kill -KILL "${XP_BG_PIDS[@]}" 2>/dev/null
	wait "${XP_BG_PIDS[@]}" 2>/dev/null
	XP_BG_PIDS=()
}

xp__exit() {
	local rc=$? c
	# Only the script's own shell concludes; a subshell that inherited the
	# trap just exits.
	[[ $BASHPID == "$XP_MAIN_PID" ]] || exit "$rc"
	exec 1>&"$XP_OUT" 2>&"$XP_ERR"
	trap - EXIT
	set +e
	[[ -n $XP_CASE ]] && xp_fail "script exited (status $rc) before the case concluded"
	((rc && XP_NPASS + XP_NFAIL + XP_NSKIP == 0)) && xp_fail "script exited with status $rc"
	for c in "${XP_EXIT_CMDS[@]}"; do eval "$c"; done
	xp__kill_bg
	# --force: the script's own processes are gone; anything left is its leftovers.
	if [[ -z ${XP_KEEP_LAB:-} ]]; then XP_LAB_QUIET=1 bash "$XP_LAB" down --force >/dev/null 2>&1; fi
	rm -rf "$XP_TMP"
	echo "--- $XP_SCRIPT: $XP_NPASS passed, $XP_NFAIL failed, $XP_NSKIP skipped"
	((XP_NFAIL)) && exit 1
	exit 0
}
trap xp__exit EXIT
trap 'exit 130' INT TERM

# Not a skip: make check runs as root (CI does), and a suite that passes
# without running its end-to-end tests would hide everything they test.
if [[ $(id -u) -ne 0 ]]; then
	xp_fail "needs root (network namespaces): run the tests as root"
	exit 1
fi

# expect_rc WANT CMD...: CMD must exit with status WANT.
expect_rc() {
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	((rc == want)) || { echo "'$*' exited $rc, want $want"; return 1; }
}
# expect_eq WHAT GOT WANT
expect_eq() { [[ $2 == "$3" ]] || { echo "$1: got '$2', want '$3'"; return 1; }; }
# expect_near WHAT GOT WANT TOLERANCE: |GOT - WANT| <= TOLERANCE (integers)
expect_near() {
	local d=$(($2 - $3))
	((d < 0)) && d=$((-d))
	((d <= $4)) || { echo "$1: got $2, want $3 +- $4"; return 1; }
}

# expect_near_or_said_short WHAT GOT WANT TOLERANCE JSON: a paced sender's count
# near WANT, or short of it with the client saying so in JSON's
# .end.offered_load (short_of_target, held_back_by, why): a stall of the shared
# 2-vCPU host that the pacer forgives rather than catch up in a burst is the
# run going wrong, which the tool must report, not the tool being wrong. A
# silent shortfall, or one below half of WANT, still fails.
expect_near_or_said_short() {
	expect_near "$1" "$2" "$3" "$4" >/dev/null && return 0
	local short why
	short=$(jq -r '.end.offered_load.short_of_target // false' "$5")
	why=$(jq -r '.end.offered_load.why // ""' "$5")
	if [[ $short == true && -n $why ]] && (($2 * 2 >= $3)); then
		echo "note: $1 $2 of $3 +- $4; the client said so: $why"
		return 0
	fi
	echo "$1: got $2, want $3 +- $4 ($( [[ $short == true ]] && echo "short by more than half" ||
		echo "the client did not say it fell short")): $(jq -c .end.offered_load "$5")"
	return 1
}

# xp_mono_to_real: CLOCK_REALTIME - CLOCK_MONOTONIC in ns, to put a capture's time (pcap: realtime) on
# the stamps' clock: the realtime read between two monotonic reads, the tightest of 2000 triples. Two
# reads in a row put it off by the call's 0.2-2 us (a fresh process's first clock read is slow), a
# latency figure's whole size here (55_rfc2544_latency, 82_measure).
xp_mono_to_real() {
	python3 -c 'import time
g, R, M = time.clock_gettime_ns, time.CLOCK_REALTIME, time.CLOCK_MONOTONIC
best = None
for _ in range(2000):
    m1 = g(M); r = g(R); m2 = g(M)
    if best is None or m2 - m1 < best[0]:
        best = (m2 - m1, r - (m1 + m2) // 2)
print(best[1])'
}

# xdpperf helpers shared by the test scripts.
# start_server [ARGS]: `xdpperf -s ARGS` in the server namespace; SRV_PID, SRV_LOG; waits until it
# listens on its control port (tests/lib/server.sh, the one server start of the tests, bench and demo).
start_server() { start_server_in server "$@"; }
# start_server_in NS [ARGS]: the same in namespace NS (a script's own lab, xp_routed_lab). The server
# is one of the script's background processes (stopped at exit) whether or not it started.
start_server_in() {
	local ns rc=0
	ns=$(xp_ns "$1")
	shift
	XP_BG_N=$((XP_BG_N + 1))
	XP_BG_LOG=$XP_TMP/bg$XP_BG_N.log
	: >"$XP_BG_LOG"
	xp_server_start "$ns" "$XP_BIN" "$XP_BG_LOG" "$@" || rc=$?
	XP_BG_PID=$XP_SERVER_PID
	XP_BG_PIDS+=("$XP_BG_PID")
	SRV_PID=$XP_BG_PID
	SRV_LOG=$XP_BG_LOG
	return "$rc"
}
# nft_counted NS TABLE: the packets of every counter in nft table inet TABLE of NS, summed.
nft_counted() {
	ip netns exec "$1" nft -j list table inet "$2" |
		jq '[.nftables[] | .rule? // empty | .expr[] | .counter? // empty | .packets] | add // 0'
}
# tests_started: how many tests the server has begun ("[peer] KIND test (" in SRV_LOG)
tests_started() { local n; n=$(grep -cE '^\[[^]]*\] (stream|connect|hold) test \(' "$SRV_LOG" 2>/dev/null); echo "${n:-0}"; }
# wait_test_started N0: until the server has begun test N0+1 (N0 from tests_started before the client started)
wait_test_started() { xp_wait_log "$SRV_LOG" '^\[[^]]*\] (stream|connect|hold) test \(' $(($1 + 1)) "${2:-10}"; }
# The router's TCP timeouts of closing connections (per namespace): ct_save keeps them, ct_short sets
# them to 1 s (a connection search's table then drains in seconds), ct_restore puts them back.
CT=/proc/sys/net/netfilter
CT_TMO=(close time_wait fin_wait close_wait last_ack)
declare -A TMO0
ct_save() { local k; for k in "${CT_TMO[@]}"; do TMO0[$k]=$(xp_exec router cat "$CT/nf_conntrack_tcp_timeout_$k"); done; }
ct_short() { local k; for k in "${CT_TMO[@]}"; do xp_exec router sh -c "echo 1 > $CT/nf_conntrack_tcp_timeout_$k"; done; }
ct_restore() {
	local k
	for k in "${CT_TMO[@]}"; do
		[[ -z ${TMO0[$k]:-} ]] || xp_exec router sh -c "echo ${TMO0[$k]} > $CT/nf_conntrack_tcp_timeout_$k" 2>/dev/null || true
	done
}
# xdp_gone NS DEV [SECS]: wait until DEV in NS has no XDP program (ip -j link); a server keeps its
# program on an interface for 5 s after its last test (user/server/churn.c), so the next server's
# attach there waits that out. Fails after SECS (default 8).
xdp_gone() {
	local ns end
	ns=$(xp_ns "$1")
	end=$((SECONDS + ${3:-8}))
	while ip -n "$ns" -j link show dev "$2" | jq -e '.[0].xdp != null' >/dev/null; do
		((SECONDS < end)) || { echo "XDP still on $2 in $ns after ${3:-8} s"; return 1; }
		sleep 0.1
	done
}
# jqv EXPR: evaluate EXPR on the test's last JSON document, $J
J=$XP_TMP/out.json
jqv() { jq -r "$1" "$J"; }
