#!/usr/bin/env bash
# Mutation check: does the suite notice a count that is off by one?
#
#   scripts/mutate.sh [N...]        (default: every mutation)
#
# Each mutation is a build flag (-DXP_MUTATE=N, given through CC so the
# Makefile's own CFLAGS stay, see the #if blocks in the
# engines) that makes one engine report one frame/connection more than it
# sent. For each, a copy of the committed tree (git archive HEAD, so the
# worktree and its build/ are untouched) is built with the flag and the tests
# that cover that engine are run; a mutation is CAUGHT when they fail.
#   1  AF_XDP engine: tx.pkts + 1      -> build/tests/root_test_xsk_engine
#   2  live engine:   tx.pkts + 1      -> build/tests/bpf_test_generator
#   3  socket engine: conn_ok + 1      -> build/tests/test_socket_engine
# (Unit, BPF and root tests only: end-to-end tests hold the shared lab.)
# Exit status 0 if every mutation was caught.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
declare -A TEST=([1]=root_test_xsk_engine [2]=bpf_test_generator [3]=test_socket_engine)
declare -A WHAT=([1]="AF_XDP engine tx.pkts + 1" [2]="live engine tx.pkts + 1" [3]="socket engine conn_ok + 1")
MUTS=("$@")
((${#MUTS[@]})) || MUTS=(1 2 3)
TMP=$(mktemp -d /tmp/xdpperf-mutate.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
missed=0
for m in "${MUTS[@]}"; do
	[[ -n ${TEST[$m]:-} ]] || { echo "mutate: unknown mutation '$m' (1, 2 or 3)" >&2; exit 2; }
	d=$TMP/m$m
	mkdir -p "$d" && git archive HEAD | tar -x -C "$d"
	cp -r vmlinux.h "$d/" 2>/dev/null
	if ! make -C "$d" -j2 CC="gcc -DXP_MUTATE=$m" XP_VERSION=mutant >"$d.build.log" 2>&1; then
		echo "mutate: build with -DXP_MUTATE=$m failed: $(tail -n 3 "$d.build.log")" >&2
		exit 1
	fi
	out=$(cd "$d" && bash tests/run.sh "${TEST[$m]}" 2>&1 | tail -n 1)
	if [[ $out == *" 0 failed"* ]]; then
		echo "mutation $m (${WHAT[$m]}): MISSED by ${TEST[$m]} ($out)"
		missed=$((missed + 1))
	else
		echo "mutation $m (${WHAT[$m]}): caught by ${TEST[$m]} ($out)"
	fi
	rm -rf "$d"
done
((missed == 0))
