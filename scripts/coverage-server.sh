#!/usr/bin/env bash
# Line coverage of the server's control path (issue 28 point 10):
# user/server/server.c, session.c, reverse.c, conn.c and children.c, as
# llvm-cov counts it, under
#   1. the control-path fuzzer's inputs (build/cov/fuzz_server_ctrl replays
#      tests/fuzz/corpus/server_ctrl and, if `make fuzz` left one,
#      build/fuzz/corpus/server_ctrl), and
#   2. the hostile-client e2e test (tests/e2e/80_hostile.sh, its quick cases;
#      XP_COV_FULL=1: all of them) with build/cov/xdpperf as the server.
# `make coverage-server` builds both and runs this (root: the e2e test makes
# the lab's namespaces). XP_COV_NO_E2E=1 leaves the e2e test out.
#
# Prints one line per file, "FILE: N of M lines (P %)", then the lines never
# run (llvm-cov show's zero counts) in build/cov/uncovered.txt.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
COV=$ROOT/build/cov
FILES=(user/server/server.c user/server/session.c user/server/reverse.c user/server/conn.c
       user/server/children.c)
PROFDATA=$(command -v llvm-profdata || ls /usr/bin/llvm-profdata-* 2>/dev/null | sort -V | tail -1)
LLVMCOV=$(command -v llvm-cov || ls /usr/bin/llvm-cov-* 2>/dev/null | sort -V | tail -1)
[[ -x $PROFDATA && -x $LLVMCOV ]] || { echo "coverage-server: llvm-profdata and llvm-cov are needed (the llvm package; make deps)" >&2; exit 1; }
for b in "$COV/xdpperf" "$COV/fuzz_server_ctrl"; do
	[[ -x $b ]] || { echo "coverage-server: $b missing: run 'make coverage-server'" >&2; exit 1; }
done

rm -rf "$COV/prof"
mkdir -p "$COV/prof"
# %p: each process its own file (the server, its reverse senders, the fuzzer).
export LLVM_PROFILE_FILE=$COV/prof/%p.profraw

echo "coverage-server: the fuzzer's inputs"
corpora=(tests/fuzz/corpus/server_ctrl)
[[ -d build/fuzz/corpus/server_ctrl ]] && corpora+=(build/fuzz/corpus/server_ctrl)
"$COV/fuzz_server_ctrl" -runs=0 "${corpora[@]}" >"$COV/fuzz.log" 2>&1 ||
	{ echo "coverage-server: the fuzzer failed on its corpus:" >&2; tail -20 "$COV/fuzz.log" >&2; exit 1; }
grep -E '^#[0-9]+[[:space:]]+DONE' "$COV/fuzz.log" | tail -1

rc=0
if ! ((${XP_COV_NO_E2E:-0})); then
	echo "coverage-server: tests/e2e/80_hostile.sh with build/cov/xdpperf as the server"
	quick=1
	((${XP_COV_FULL:-0})) && quick=0
	XP_HOSTILE_SERVER=$COV/xdpperf XP_HOSTILE_QUICK=$quick bash tests/run.sh 80_hostile.sh | tail -3 || rc=1
fi

"$PROFDATA" merge -sparse "$COV"/prof/*.profraw -o "$COV/server.profdata" || exit 1
# (llvm-cov warns of "functions with mismatched data": the fuzzer's stubs of
# the loader and listeners have the real functions' names, not their code.)
objs=("$COV/xdpperf" -object "$COV/fuzz_server_ctrl")
# The summary per file: its line counts (the JSON export's, the same as llvm-cov report's Lines column).
"$LLVMCOV" export -summary-only -instr-profile "$COV/server.profdata" "${objs[@]}" "${FILES[@]}" |
	jq -r --arg root "$ROOT/" '.data[0].files[] | "\(.filename | ltrimstr($root)): \(.summary.lines.covered) of \(.summary.lines.count) lines (\(.summary.lines.percent * 10 | round / 10) %)"'
"$LLVMCOV" show -instr-profile "$COV/server.profdata" "${objs[@]}" "${FILES[@]}" -show-line-counts -use-color=false |
	awk '/^\/.*:$/ {f=$0} /^ *[0-9]+\| *0\|/ {print f, $0}' >"$COV/uncovered.txt"
echo "coverage-server: lines never run in $COV/uncovered.txt ($(wc -l <"$COV/uncovered.txt"))"
exit $rc
