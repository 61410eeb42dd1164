#!/usr/bin/env bash
# Mutation check: does the suite notice a count that is off by one?
#
#   scripts/mutate.sh [MUTATION...]     (default: every mutation)
#   make mutate
#
# Engine mutations (-DXP_MUTATE=N, given through CC so the Makefile's own
# CFLAGS stay, see the #if blocks in the engines) make one engine report one
# frame/connection more than it sent:
#   1  AF_XDP engine: tx.pkts + 1      -> build/tests/root_test_xsk_connect and
#                                         root_test_xsk_stream
#   2  live engine:   tx.pkts + 1      -> build/tests/bpf_test_live_send
#   3  socket engine: conn_ok + 1      -> build/tests/test_socket_engine
#   4  XDP connection engine: the client's handshakes completed (acks_sent)
#      + 1                             -> tests/e2e/60_xdp_connect.sh (the
#      lab: under MUTATE_LOCK if set, else the caller must hold the lock)
# BPF counter mutations (-DXP_MUT_<name>, given through CLANG; see
# bpf/lib/mutate.h) make one counter count one frame too many: every
# XP_INC(p, name), XP_INC_AS(name, ...), XP_ADD_AS(name, ...) and
# XP_ATOMIC_INC(p, name) in bpf/:
# the server's and the client's XDP programs (server.bpf.c, xdp_connect.bpf.c:
# their tests are every BPF_PROG_RUN test, build/tests/bpf_test_*), the TC
# counter (server_tc.bpf.c, tc_*: build/tests/root_test_server_tc), the
# measurement accounting (server_meas.h, stream_*, ibin_*, meas_*, which
# the server's and the round-trip programs share) and the round-trip
# program's own counts (rtt.bpf.c, rtt_*): bpf_test_measure and bpf_test_rtt;
# the live generator's per-interval sent count (live.bpf.c,
# gen_ibin_sent: every BPF test, bpf_test_live_stream the one that checks it).
# the client's window counters (xdp_connect.bpf.c: freed, stale, synack_dup,
# fin_dup, fail_reset, fail_unreach) and the generator's taken count with
# XP_ATOMIC_INC, shared by the CPUs. Not mutated: hw_timed (veth gives no
# hardware timestamps, so no test here can count it).
# A MUTATION is 1-4, a counter's name (tcp_syn, rst_seen, tc_pkts,
# ibin_late, ...), or "engines" / "bpf" for each group.
# A copy of the committed tree (git archive HEAD, so the worktree and its
# build/ are untouched) is built once; each mutation rebuilds only what the
# flag changes. A mutation is CAUGHT when its tests fail.
# (Unit, BPF and root tests only: end-to-end tests hold the shared lab.)
# MUTATE_LOCK=/tmp/xdpperf-e2e.lock scripts/mutate.sh: see LOCK below.
# Exit status 0 if every mutation was caught, 1 if one was missed, 2 usage.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
declare -A TEST=([1]=root_test_xsk_ [2]=bpf_test_live_send [3]=test_socket_engine [4]=60_xdp_connect)
declare -A WHAT=([1]="AF_XDP engine tx.pkts + 1" [2]="live engine tx.pkts + 1" [3]="socket engine conn_ok + 1"
	[4]="XDP connection engine acks_sent + 1")
# Every mutation name in bpf/ (mutate.h itself only defines the macros), and
# the files that use it.
BPF_SRC=$(ls bpf/*.c bpf/*.h | grep -v mutate.h)
# shellcheck disable=SC2086
# (Lines that end in a backslash are macro bodies, whose name is a parameter;
# rtt.bpf.c's stat_inc(IDX, name, verdict) is XP_ADD_AS on rtt_stats[IDX].)
# server.bpf.c's gstat_inc(name, IDX) is XP_ADD_AS on gstats[IDX].)
mapfile -t BPF_FIELDS < <(grep -hE 'XP_(ATOMIC_)?INC\(|XP_(INC|ADD)_AS\(|stat_inc\(' $BPF_SRC | grep -v '\\$' |
	grep -oE 'XP_(ATOMIC_)?INC\([a-z_>-]+, [a-z_0-9]+\)|XP_(INC|ADD)_AS\([a-z_0-9]+,|[^g]stat_inc\([A-Z_]+, [a-z_0-9]+,|gstat_inc\([a-z_0-9]+,' |
	sed -E 's/XP_(ATOMIC_)?INC\([^,]+, (.*)\)/\2/; s/XP_(INC|ADD)_AS\(([^,]+),/\2/; s/^.stat_inc\([^,]+, ([^,]+),/\1/; s/gstat_inc\(([^,]+),/\1/' | sort -u)
# shellcheck disable=SC2086
prog_of() {
	grep -lE "XP_(ATOMIC_)?INC\([a-z_>-]+, $1\)|XP_(INC|ADD)_AS\($1,|stat_inc\([A-Z_]+, $1,|gstat_inc\($1," $BPF_SRC | xargs -n1 basename | paste -sd+
}
# The tests that check a counter (a run.sh PATTERN, see above).
tests_of() {
	case $1 in
	tc_*) echo root_test_server_tc ;;
	stream_* | ibin_* | meas_* | rtt_*) echo 'bpf_test_[mr][et]*' ;;
	*) echo bpf_ ;;
	esac
}

MUTS=()
for a in "${@:-engines bpf}"; do
	for m in $a; do
		case $m in
		engines) MUTS+=(1 2 3 4) ;;
		bpf) MUTS+=("${BPF_FIELDS[@]}") ;;
		1 | 2 | 3 | 4) MUTS+=("$m") ;;
		*)
			printf '%s\n' "${BPF_FIELDS[@]}" | grep -qx "$m" ||
				{ echo "mutate: unknown mutation '$m' (1, 2, 3, 4, engines, bpf or a counter: ${BPF_FIELDS[*]})" >&2; exit 2; }
			MUTS+=("$m")
			;;
		esac
	done
done

# Engine mutations first: they copy the unmutated base tree.
mapfile -t MUTS < <(printf '%s
' "${MUTS[@]}" | awk '/^[0-9]+$/ {print; next} {b[++n] = $0} END {for (i = 1; i <= n; i++) print b[i]}')
TMP=$(mktemp -d /tmp/xdpperf-mutate.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
missed=0 caught=0
# MUTATE_LOCK=FILE: each test that sends traffic over veths or makes
# namespaces (root_*, bpf_test_live_send's live frames, e2e scripts) runs
# under flock FILE (the shared e2e lock, /tmp/xdpperf-e2e.lock), one test
# binary at a time; the builds and the pure BPF_PROG_RUN and unit tests run
# outside it, so a whole run (about an hour) never holds the lock for long.
# Unset (the default, and CI): no lock. Do not set it when the whole run is
# already under that lock: flock would wait for itself.
LOCK=${MUTATE_LOCK:-}
# needs_lock DIR NAME: does tests/run.sh NAME in DIR run a test that needs
# the lock? run.sh runs every test whose path holds NAME, not only the one so
# named (bpf_test_live_ runs bpf_test_live_send too): any of them counts.
needs_lock() {
	local b
	for b in "$1"/build/tests/*"$2"* "$1"/tests/e2e/*"$2"*; do
		[[ -e $b && ${b##*/} == @(root_*|*.sh|bpf_test_live_send) ]] && return 0
	done
	return 1
}
# run_test DIR NAME: tests/run.sh NAME in DIR (under LOCK where NAME needs it); its last line.
run_test() {
	if [[ -n $LOCK ]] && needs_lock "$1" "$2"; then
		(cd "$1" && flock "$LOCK" bash tests/run.sh "$2" 2>&1 | tail -n 1)
	else
		(cd "$1" && bash tests/run.sh "$2" 2>&1 | tail -n 1)
	fi
}
# verdict NAME WHAT TESTS DIR: the test binaries that match TESTS (a run.sh
# PATTERN), one at a time, in order; a mutation is caught by the first one
# that fails (the rest are not run), missed if all pass.
verdict() {
	local out bins b by="" last=""
	mapfile -t bins < <(cd "$4" && for b in build/tests/* tests/e2e/*.sh; do
		[[ -f $b && ${b##*/} == *$3* ]] && [[ -x $b || $b == *.sh ]] && echo "${b##*/}"; done | order_tests)
	((${#bins[@]})) || { echo "mutate: no test binary matches '$3' in $4/build/tests" >&2; exit 1; }
	for b in "${bins[@]}"; do
		out=$(run_test "$4" "$b")
		last=$out
		if [[ $out != *" 0 failed"* ]]; then
			by=$b
			break
		fi
	done
	if [[ -z $by ]]; then
		echo "mutation $1 ($2): MISSED by ${bins[*]} (each: $last)"
		missed=$((missed + 1))
	else
		echo "mutation $1 ($2): caught by $by ($last)"
		caught=$((caught + 1))
	fi
}
# The tests most likely to catch a counter first (the server's and the
# client's own program tests), then the others in name order.
order_tests() {
	sort | awk '/server_prog|handshake/ {print; next} {rest[++n] = $0} END {for (i = 1; i <= n; i++) print rest[i]}'
}

# The tree for the BPF mutations, built once without a flag; first, every
# test the selected mutations use must pass on it (else a "caught" would
# mean nothing).
BASE=$TMP/bpf
mkdir -p "$BASE" && git archive HEAD | tar -x -C "$BASE"
cp -r vmlinux.h "$BASE/" 2>/dev/null
make -C "$BASE" -j2 XP_VERSION=mutant all >"$BASE.build.log" 2>&1 ||
	{ echo "mutate: build failed: $(tail -n 3 "$BASE.build.log")" >&2; exit 1; }
declare -A BASELINE=()
for m in "${MUTS[@]}"; do
	if [[ -n ${TEST[$m]:-} ]]; then BASELINE[${TEST[$m]}]=1; else BASELINE[$(tests_of "$m")]=1; fi
done
for t in "${!BASELINE[@]}"; do
	# MUTATE_NO_BASELINE=1: not again (a rerun of single mutations on a tree whose tests were just seen to pass)
	[[ -n ${MUTATE_NO_BASELINE:-} ]] && { echo "baseline (no mutation): $t: not run (MUTATE_NO_BASELINE)"; continue; }
	# (a pattern of several binaries: each, so that only those that need it take the lock)
	out="" nb=0
	while read -r b; do
		o=$(run_test "$BASE" "$b")
		nb=$((nb + 1))
		[[ $o == *" 0 failed"* ]] || { out="$b: $o"; break; }
	done < <(cd "$BASE" && for b in build/tests/* tests/e2e/*.sh; do
		# shellcheck disable=SC2053 # $t is a run.sh pattern (a glob)
		[[ -f $b && ${b##*/} == *$t* ]] && [[ -x $b || $b == *.sh ]] && echo "${b##*/}"; done)
	[[ -z $out ]] || { echo "mutate: without a mutation, $t already fails ($out): fix that first" >&2; exit 1; }
	echo "baseline (no mutation): $t: $nb test binaries, each 0 failed"
done
# The unmutated BPF objects, to put back after each BPF mutation.
mkdir -p "$TMP/bpf0" && cp "$BASE"/build/bpf/*.bpf.o "$BASE"/build/bpf/*.skel.h "$TMP/bpf0/"
declare -A ENGINE_SRC=([1]=xsk [2]=live [3]=socket [4]=xdp_connect)
# The BPF programs (build/bpf/NAME.bpf.o) a counter is compiled into: the
# .bpf.c files that use it or include the header that does, and a .bpf.c
# that includes one of those (server_hwts.bpf.c is server.bpf.c again).
skels_of() {
	local f s out=() more=()
	for f in $(prog_of "$1" | tr + ' '); do
		for s in bpf/*.bpf.c; do
			{ [[ ${s##*/} == "$f" ]] || grep -qF "#include \"$f\"" "$s"; } && out+=("$(basename "$s" .bpf.c)")
		done
	done
	for f in "${out[@]}"; do
		for s in bpf/*.bpf.c; do grep -qF "#include \"$f.bpf.c\"" "$s" && more+=("$(basename "$s" .bpf.c)"); done
	done
	printf '%s\n' "${out[@]}" "${more[@]}" | sort -u
}
PREV=()   # the programs the last BPF mutation changed
for m in "${MUTS[@]}"; do
	if [[ -n ${TEST[$m]:-} ]]; then
		# A copy of the built, unmutated tree (engine mutations run before
		# any BPF one): only the engine's object is compiled again, with the flag.
		d=$TMP/m$m
		cp -a "$BASE" "$d"
		rm -f "$d/build/user/engine/${ENGINE_SRC[$m]}.o"
		if ! make -C "$d" -j2 CC="gcc -DXP_MUTATE=$m" XP_VERSION=mutant all >"$d.build.log" 2>&1; then
			echo "mutate: build with -DXP_MUTATE=$m failed: $(tail -n 3 "$d.build.log")" >&2
			exit 1
		fi
		verdict "$m" "${WHAT[$m]}" "${TEST[$m]}" "$d"
		rm -rf "$d"
		continue
	fi
	# Only the programs the counter is in are built with the flag; the last
	# mutation's get their unmutated objects back; the objects that embed a
	# skeleton are compiled again, the other objects are marked up to date.
	mapfile -t SK < <(skels_of "$m")
	((${#SK[@]})) || { echo "mutate: no BPF program uses counter $m" >&2; exit 1; }
	for k in "${PREV[@]}"; do cp "$TMP/bpf0/$k.bpf.o" "$TMP/bpf0/$k.skel.h" "$BASE/build/bpf/"; done
	for k in "${SK[@]}"; do rm -f "$BASE/build/bpf/$k.bpf.o" "$BASE/build/bpf/$k.skel.h"; done
	if ! make -C "$BASE" -j2 CLANG="clang -DXP_MUT_$m" XP_VERSION=mutant \
		$(printf "build/bpf/%s.skel.h " "${SK[@]}") >"$BASE.m.log" 2>&1; then
		echo "mutate: BPF build with -DXP_MUT_$m failed: $(tail -n 3 "$BASE.m.log")" >&2
		exit 1
	fi
	PREV=("${SK[@]}")
	for o in $(cd "$BASE" && grep -l 'skel\.h' user/*/*.c | sed -E 's|user/(.*)\.c|build/user/\1.o|'); do rm -f "$BASE/$o"; done
	find "$BASE/build/user" -name '*.o' -exec touch {} +
	if ! make -C "$BASE" -j2 XP_VERSION=mutant all >>"$BASE.m.log" 2>&1; then
		echo "mutate: build with -DXP_MUT_$m failed: $(tail -n 3 "$BASE.m.log")" >&2
		exit 1
	fi
	verdict "$m" "$(prog_of "$m") counter $m + 1 ($(echo "${SK[@]}" | tr ' ' +) rebuilt)" "$(tests_of "$m")" "$BASE"
done
echo "$caught caught, $missed missed"
((missed == 0))
