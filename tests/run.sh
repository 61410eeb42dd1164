#!/usr/bin/env bash
# xdpperf test runner (`make check` calls it after building).
#
#   tests/run.sh [-v] [PATTERN]
#
# Runs, in this order:
#   1. build/tests/test_*       cmocka unit tests (tests/unit: no root needed)
#   2. build/asan/tests/test_*  the same under ASan and UBSan (`make sanitize`)
#   3. build/tests/bpf_test_*   BPF_PROG_RUN tests (tests/bpf, cmocka as well)
#   4. build/tests/root_test_*  cmocka tests that need root: namespaces,
#                               veths, AF_XDP (tests/root); build/asan/tests/
#                               root_test_* the ones built under ASan too
#   5. build/fuzz/fuzz_*        libFuzzer harnesses (tests/fuzz, `make
#                               sanitize`), XP_FUZZ_SECONDS (15) each, from
#                               the seeds in tests/fuzz/corpus/NAME
#   6. tests/e2e/*.sh           end-to-end scripts using tests/e2e/lib.sh
# PATTERN (a substring or glob) keeps only items whose path matches it, e.g.
# `tests/run.sh 00_lab`, `tests/run.sh bpf_`, `tests/run.sh root_`,
# `tests/run.sh 'test_*addr*'`.
# -v prints every item's full output (default: only for failures).
#
# Counting: a cmocka binary contributes the counts of its
# "[  PASSED  ] N test(s)." / "[  FAILED  ] N test(s)" / "[  SKIPPED ] N test(s)"
# summary lines; one that exits non-zero without a failure summary (crash,
# group setup error) adds one failure; one that exits 77 with nothing run
# (no root, a tool missing) FAILS too: scripts/deps.sh installs every tool
# and make check runs as root, so a skip there would hide untested code.
# Only a case that finds a kernel feature missing may SKIP: its output (a
# cmocka case's) or its message (an e2e case's) names it with the words
# "kernel lacks" (not just "kernel", which any case's figures may print),
# and the last line lists every skip with that reason; a skip that names
# none FAILS. A fuzzer counts as one test: passed if it ran
# its time without a crash, leak, sanitizer report or broken promise (the
# input that broke it is kept in build/fuzz/crashes/). An e2e script contributes its RESULT lines (see tests/e2e/lib.sh);
# a non-zero exit without a FAIL line, or a timeout, adds one failure. An e2e
# script that fails runs once more (XP_E2E_RETRY=0: not): its cases pass only
# if they all pass the second time, and then the summary lists every case that
# failed its first run, with the reason, under "Passed only when run again"
# (the first run's output is printed too): the e2e scripts time real traffic
# on a shared 2-core host, and a check that fails once is reported, not hidden.
# The last line is always "N passed, N failed[, N skipped (NAMES)]". Exit status is
# non-zero if anything failed or nothing ran. A run with e2e scripts tears the lab down.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
ROOT=$PWD
TIMEOUT=${XP_TEST_TIMEOUT:-300}
VERBOSE=0
PATTERN=""

while (($#)); do
	case $1 in
	-v | --verbose) VERBOSE=1 ;;
	-h | --help) awk 'NR > 1 && !/^#/ {exit} NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option '$1' (usage: tests/run.sh [-v] [PATTERN])" >&2; exit 2 ;;
	*)
		[[ -z $PATTERN ]] || { echo "run.sh: only one PATTERN allowed" >&2; exit 2; }
		PATTERN=$1
		;;
	esac
	shift
done

NPASS=0 NFAIL=0 NSKIP=0 NITEMS=0
FAILED_NAMES=()
TMP=$(mktemp -d /tmp/xdpperf-tests.XXXXXX)

# Only a run that started end-to-end scripts owns the lab: a unit-test run
# leaves a lab someone else is using alone.
e2e_started=0
lab_down() {
	if ((e2e_started)) && [[ $(id -u) -eq 0 && -f $ROOT/scripts/lab.sh ]]; then
		# --force: the run owns the lab; whatever a script left behind goes with it.
		XP_LAB_QUIET=1 bash "$ROOT/scripts/lab.sh" down --force >/dev/null 2>&1
	fi
}
cleanup() { lab_down; rm -rf "$TMP"; }
trap cleanup EXIT
trap on_signal INT TERM

matches() { [[ -z $PATTERN || $1 == *$PATTERN* ]]; }

# Output lines, xdp-tools style: name left, verdict right.
line() { # VERDICT NAME [DETAIL]
	printf '    %-62s %s\n' "$2" "$1"
	[[ -n ${3:-} ]] && printf '        %s\n' "$3"
	return 0
}
pass() { NPASS=$((NPASS + 1)); line PASS "$@"; }
# The summary's list names each failure with the start of its reason: a CI log
# that keeps only its last lines still says what failed and why.
fail() {
	NFAIL=$((NFAIL + 1))
	local why=${2:-}
	((${#why} <= 300)) || why="${why:0:300}..."
	FAILED_NAMES+=("$1${why:+: $why}")
	line FAIL "$@"
}
SKIPPED_NAMES=()
skip() { NSKIP=$((NSKIP + 1)); SKIPPED_NAMES+=("$1"); line SKIP "$@"; }

dump_log() { # LOG FORCE
	if ((VERBOSE)) || [[ ${2:-0} == 1 ]]; then
		echo "        ---- output ----"
		tail -n "${XP_LOG_LINES:-60}" "$1" | sed 's/^/        | /'
	fi
}

# run_logged LOG CMD...: CMD under `timeout` (exit 124 when it expires; KILL
# 15 s after TERM), all output to LOG; a death by signal is noted in LOG.
#
# CMD runs in the background so that Ctrl-C/TERM reach us at once (timeout
# puts the item in its own process group, out of reach of the terminal's
# SIGINT): the handler forwards TERM to timeout, which passes it to the whole
# item (so e2e scripts still clean up), KILLing it 15 s later if need be.
CHILD=""
INTERRUPTED=0
on_signal() {
	INTERRUPTED=1
	echo "run.sh: interrupted, stopping the current test" >&2
	if [[ -n $CHILD ]]; then kill -TERM "$CHILD" 2>/dev/null; fi
}
run_logged() {
	local log=$1 rc
	shift
	timeout -k 15 "$TIMEOUT" "$@" >"$log" 2>&1 </dev/null &
	CHILD=$!
	# `wait` returns early when a trapped signal arrives: wait again until the
	# item is really gone. (2>/dev/null: no "Killed" job notice on our tty.)
	while :; do
		wait "$CHILD" 2>/dev/null
		rc=$?
		kill -0 "$CHILD" 2>/dev/null || break
	done
	CHILD=""
	if ((rc > 128)); then echo "(terminated by signal $((rc - 128)))" >>"$log"; fi
	return "$rc"
}

# Run one cmocka binary and add its per-case results to the totals.
run_cmocka() { # PATH [NAME]
	local bin=$1 name log rc=0 p=0 f=0 s=0 pc=0 fc=0 sc=0 summary=0 listing=0 running="" l n figs="" why="" badskip=0
	name=${2:-$(basename "$bin")}
	log=$TMP/$name.log
	# Line-buffer stdout so cmocka's stdout (per case) and stderr (summaries)
	# stay in order in the log.
	CMOCKA_MESSAGE_OUTPUT=STDOUT run_logged "$log" stdbuf -oL -eL "$bin" || rc=$?
	local lastmsg=""
	while IFS= read -r l; do
		case $l in
		"[==========]"*) listing=0 ;;
		"[ RUN      ] "*) listing=0 lastmsg="" why="" running=${l#"[ RUN      ] "} ;;
		"[  ERROR   ] "* | "[   LINE   ] "*) lastmsg=${l#*] --- } ;;
		"[       OK ] "*)
			line PASS "$name: ${l#"[       OK ] "}"
			# A case's "figures: ..." lines (what it ran, e.g. a fuzzer's counts) under its verdict.
			[[ -n $figs ]] && printf '%s' "$figs"
			figs="" pc=$((pc + 1)) running=""
			;;
		"figures: "*) figs+=$(printf '        %s' "${l#figures: }")$'\n' ;;
		"[  PASSED  ] "*)
			n=${l#"[  PASSED  ] "}; n=${n%% *}
			[[ $n =~ ^[0-9]+$ ]] && p=$((p + n)) summary=1
			;;
		"[  FAILED  ] "*" test(s)"*)
			n=${l#"[  FAILED  ] "}; n=${n%% *}
			[[ $n =~ ^[0-9]+$ ]] && f=$((f + n)) summary=1
			listing=1
			;;
		"[  SKIPPED ] "*" test(s)"*)
			n=${l#"[  SKIPPED ] "}; n=${n%% *}
			[[ $n =~ ^[0-9]+$ ]] && s=$((s + n)) summary=1
			listing=1
			;;
		"[  FAILED  ] "*)
			if ((!listing)); then
				FAILED_NAMES+=("$name: ${l#"[  FAILED  ] "}")
				line FAIL "$name: ${l#"[  FAILED  ] "}" "$lastmsg"
				fc=$((fc + 1)) running=""
			fi
			;;
		"[  SKIPPED ] "*)
			((listing)) && continue
			# A skip must say which kernel feature is missing (a line of the
			# case's output with "kernel lacks" in it); any other skip is a failure.
			if [[ -n $why ]]; then
				line SKIP "$name: ${l#"[  SKIPPED ] "}" "$why"
				SKIPPED_NAMES+=("$name: ${l#"[  SKIPPED ] "} ($why)")
				sc=$((sc + 1))
			else
				FAILED_NAMES+=("$name: ${l#"[  SKIPPED ] "}")
				line FAIL "$name: ${l#"[  SKIPPED ] "}" "skipped without naming a missing kernel feature"
				fc=$((fc + 1)) badskip=$((badskip + 1))
			fi
			running=""
			;;
		*"kernel lacks"*) [[ -n $running ]] && why=$l ;;
		esac
	done <"$log"
	# The summary lines are authoritative; without any (the binary died
	# before printing them) fall back to the per-case lines seen so far.
	((summary)) || p=$pc f=$fc s=$sc
	# cmocka's summary counted a skip that named no kernel feature as skipped: it failed.
	((summary && badskip)) && s=$((s - badskip)) f=$((f + badskip))
	NPASS=$((NPASS + p)) NFAIL=$((NFAIL + f)) NSKIP=$((NSKIP + s))

	if ((rc == 124)); then
		fail "$name" "timed out after ${TIMEOUT}s${running:+ in case $running}"
	elif ((rc == 77 && p + f + s == 0)); then
		fail "$name" "could not run: $(tail -n 1 "$log")"
	elif ((rc != 0 && (f == 0 || !summary))); then
		fail "$name" "exited with status $rc${running:+ during case $running}$( ((summary)) || echo ' before its cmocka summary')"
	elif ((rc == 0 && p + f + s == 0)); then
		pass "$name"   # no cmocka summary: count the binary itself
	fi
	if ((rc != 0)); then dump_log "$log" 1; else dump_log "$log"; fi
}

# Sanitizer reports are fatal and name the code (UBSan's too: -fno-sanitize-recover).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:print_summary=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

# Run one libFuzzer harness for XP_FUZZ_SECONDS from its seeds; new inputs go
# to a scratch corpus (build/fuzz/corpus/NAME with XP_FUZZ_KEEP=1, as
# `make fuzz` sets), an input that breaks it to build/fuzz/crashes/.
run_fuzzer() { # PATH
	local bin=$1 name base log rc=0 secs=${XP_FUZZ_SECONDS:-15} work seeds args=() opts=() runs new crash
	name=$(basename "$bin")
	base=${name#fuzz_}
	log=$TMP/$name.log
	seeds=tests/fuzz/corpus/$base
	if ((${XP_FUZZ_KEEP:-0})); then work=build/fuzz/corpus/$base; else work=$TMP/corpus-$base; fi
	mkdir -p "$work" build/fuzz/crashes
	[[ -f tests/fuzz/$base.dict ]] && args+=("-dict=tests/fuzz/$base.dict")
	[[ -f tests/fuzz/$base.options ]] && read -r -a opts <"tests/fuzz/$base.options" && args+=("${opts[@]}")
	local before
	before=$(find "$work" -type f | wc -l)
	run_logged "$log" "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="build/fuzz/crashes/$base-" "${args[@]}" "$work" "$seeds" || rc=$?
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	new=$(($(find "$work" -type f | wc -l) - before))
	local detail
	detail="${runs:-?} runs in ${secs} s, corpus $(find "$seeds" -type f | wc -l) seeds + $(find "$work" -type f | wc -l) found ($new new)"
	if ((rc == 0)) && [[ -n $runs ]]; then
		pass "$name" "$detail, nothing found"
		dump_log "$log"
	else
		crash=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
		fail "$name" "exit $rc after $detail: $(grep -m1 -E 'broken promise|ERROR: |runtime error|SUMMARY' "$log")${crash:+; input in $crash}"
		dump_log "$log" 1
	fi
}

# The verdicts of one e2e run, a line each: "PASS|FAIL|SKIP<TAB>case<TAB>message".
# Its cases arrive as RESULT lines in RES; RC is the script's exit status.
e2e_verdicts() { # NAME RES RC
	local name=$1 res=$2 rc=$3 tag st rest cname msg nres=0 nfail=0
	while read -r tag st rest; do
		[[ $tag == RESULT ]] || continue
		nres=$((nres + 1))
		# "RESULT FAIL case: message" -> cname=case msg=message
		cname=${rest%%: *} msg=""
		[[ $rest == *": "* ]] && msg=${rest#*: }
		# A case named after the script itself (e.g. lib.sh's root check).
		if [[ $cname == "$name" ]]; then cname=$name; else cname="$name: $cname"; fi
		case $st in
		PASS) printf 'PASS\t%s\t\n' "$cname" ;;
		FAIL) nfail=$((nfail + 1)); printf 'FAIL\t%s\t%s\n' "$cname" "$msg" ;;
		SKIP)
			# Only a missing kernel feature may skip, and the message names it.
			if [[ $msg == *"kernel lacks"* ]]; then
				printf 'SKIP\t%s\t%s\n' "$cname ($msg)" "$msg"
			else
				nfail=$((nfail + 1))
				printf 'FAIL\t%s\t%s\n' "$cname" "skipped without naming a missing kernel feature: $msg"
			fi
			;;
		*) nfail=$((nfail + 1)); printf 'FAIL\t%s\t%s\n' "$name" "bad result line: $tag $st $rest" ;;
		esac
	done <"$res"
	if ((rc == 124)); then
		printf 'FAIL\t%s\t%s\n' "$name" "timed out after ${TIMEOUT}s"
	elif ((rc != 0 && nfail == 0)); then
		printf 'FAIL\t%s\t%s\n' "$name" "exited with status $rc"
	elif ((rc == 0 && nres == 0)); then
		printf 'PASS\t%s\t\n' "$name"
	fi
}

# An e2e script that fails runs once more (XP_E2E_RETRY=0: never). Its
# cases count as passed only if the second run passes them all, and then the
# summary names each case that failed the first time, with its reason, and
# the first run's output is in the log: a flaky check is reported, not hidden.
E2E_RETRY=${XP_E2E_RETRY:-1}
FLAKY_NAMES=()

# Run one e2e script; its cases arrive as RESULT lines in $XP_RESULTS.
run_e2e() { # PATH
	local script=$1 name log res rc=0 v c m first
	name=$(basename "$script" .sh)
	log=$TMP/e2e-$name.log
	res=$TMP/e2e-$name.results
	: >"$res"
	XP_RESULTS=$res run_logged "$log" bash "$script" || rc=$?
	e2e_verdicts "$name" "$res" "$rc" >"$res.v"
	if grep -q '^FAIL' "$res.v" && ((E2E_RETRY && !INTERRUPTED)); then
		first=$(grep '^FAIL' "$res.v")
		printf '    %-62s %s\n' "$name (first run)" "FAILED: run once more"
		while IFS=$'\t' read -r v c m; do printf '        %s: %s\n' "$c" "$m"; done <<<"$first"
		dump_log "$log" 1
		lab_down
		rc=0
		: >"$res.2"
		XP_RESULTS=$res.2 run_logged "$log.2" bash "$script" || rc=$?
		log=$log.2
		e2e_verdicts "$name" "$res.2" "$rc" >"$res.v"
		if ! grep -q '^FAIL' "$res.v"; then
			while IFS=$'\t' read -r v c m; do FLAKY_NAMES+=("$c: ${m:0:300}"); done <<<"$first"
		fi
	fi
	local nfail=0
	while IFS=$'\t' read -r v c m; do
		case $v in
		PASS) pass "$c" ;;
		SKIP) skip "$c" "$m" ;;
		FAIL) nfail=$((nfail + 1)); fail "$c" "$m" ;;
		esac
	done <"$res.v"
	if ((nfail)); then dump_log "$log" 1; else dump_log "$log"; fi
	# Every e2e script must leave the lab down; enforce it between scripts.
	lab_down
}

collect() { # GLOB... -> matching regular executable/existing files, sorted
	local f
	for f in "$@"; do
		[[ -f $f ]] || continue
		[[ $f == tests/e2e/lib.sh ]] && continue   # a library, not a test
		matches "$f" || continue
		echo "$f"
	done
}

# A binary whose source is gone (a renamed or removed test, still in build/)
# does not run.
built() { # SRCDIR PREFIX -> build/tests/PREFIX* that come from SRCDIR/*.c
	local b
	for b in $(collect "build/tests/$2"test_*); do
		[[ -f $1/${b#build/tests/"$2"}.c ]] && echo "$b"
	done
}
mapfile -t UNIT < <(built tests/unit "")
# build/asan/tests/test_X from tests/unit/test_X.c (like built(), another tree)
mapfile -t ASANT < <(for b in $(collect build/asan/tests/test_*); do
	[[ -f tests/unit/${b#build/asan/tests/}.c ]] && echo "$b"; done)
mapfile -t FUZZ < <(for b in $(collect build/fuzz/fuzz_*); do
	[[ -f tests/fuzz/${b#build/fuzz/}.c ]] && echo "$b"; done)
mapfile -t BPFT < <(built tests/bpf bpf_)
mapfile -t ROOTT < <(built tests/root root_)
# build/asan/tests/root_test_X from tests/root/test_X.c: root tests under ASan and UBSan
mapfile -t ASANR < <(for b in $(collect build/asan/tests/root_test_*); do
	[[ -f tests/root/${b#build/asan/tests/root_}.c ]] && echo "$b"; done)
mapfile -t E2E < <(collect tests/e2e/*.sh)
section() { echo "Running $1"; }

# Where make check's time goes (its budget is 45 min): each item's wall time,
# the slowest listed after the summary's failures. µs from EPOCHREALTIME.
TIMES=()
timed() { # KIND NAME CMD...: run CMD, note its time under KIND and NAME
	local kind=$1 name=$2 t0=${EPOCHREALTIME/./}
	shift 2
	"$@"
	TIMES+=("$(((${EPOCHREALTIME/./} - t0) / 1000))"$'\t'"$kind"$'\t'"$name")
}

if ((${#UNIT[@]})); then
	section "unit tests (build/tests/test_*)"
	for t in "${UNIT[@]}"; do
		((INTERRUPTED)) && break
		if [[ -x $t ]]; then NITEMS=$((NITEMS + 1)); timed unit "${t##*/}" run_cmocka "$t"; fi
	done
fi
if ((${#ASANT[@]})); then
	section "unit tests under ASan and UBSan (build/asan/tests/test_*)"
	for t in "${ASANT[@]}"; do
		((INTERRUPTED)) && break
		if [[ -x $t ]]; then NITEMS=$((NITEMS + 1)); timed asan "${t##*/}" run_cmocka "$t" "asan:${t##*/}"; fi
	done
fi
if ((${#BPFT[@]})); then
	section "BPF_PROG_RUN tests (build/tests/bpf_test_*)"
	for t in "${BPFT[@]}"; do
		((INTERRUPTED)) && break
		if [[ -x $t ]]; then NITEMS=$((NITEMS + 1)); timed bpf "${t##*/}" run_cmocka "$t"; fi
	done
fi
if ((${#ROOTT[@]} + ${#ASANR[@]})); then
	section "root tests: namespaces, veths, AF_XDP (build/tests/root_test_*, build/asan/tests/root_test_*)"
	for t in "${ROOTT[@]}"; do
		((INTERRUPTED)) && break
		if [[ -x $t ]]; then NITEMS=$((NITEMS + 1)); timed root "${t##*/}" run_cmocka "$t"; fi
	done
	for t in "${ASANR[@]}"; do
		((INTERRUPTED)) && break
		if [[ -x $t ]]; then NITEMS=$((NITEMS + 1)); timed root "asan:${t##*/}" run_cmocka "$t" "asan:${t##*/}"; fi
	done
fi
if ((${#FUZZ[@]})); then
	section "libFuzzer harnesses (build/fuzz/fuzz_*, ${XP_FUZZ_SECONDS:-15} s each)"
	for t in "${FUZZ[@]}"; do
		((INTERRUPTED)) && break
		if [[ -x $t ]]; then NITEMS=$((NITEMS + 1)); timed fuzz "${t##*/}" run_fuzzer "$t"; fi
	done
fi
# Each e2e script has a number of its own: it fixes the order they run in and
# is how logs, commits and the docs name one. Two that share a number fail.
if ((${#E2E[@]})); then
	declare -A E2E_NUM=()
	for t in tests/e2e/[0-9]*.sh; do
		n=${t##*/} n=${n%%_*}
		if [[ -n ${E2E_NUM[$n]:-} ]]; then
			fail "e2e numbering" "${E2E_NUM[$n]} and $t share the number $n: give one a number no other script has"
		else
			E2E_NUM[$n]=$t
		fi
	done
fi
for t in "${E2E[@]}"; do
	((INTERRUPTED)) && break
	if ((!e2e_started)); then
		section "end-to-end tests (tests/e2e/*.sh)"
		e2e_started=1
	fi
	NITEMS=$((NITEMS + 1))
	timed e2e "$(basename "$t" .sh)" run_e2e "$t"
done

# Tear the lab down before the summary so nothing prints after it.
lab_down
if ((INTERRUPTED)); then
	NFAIL=$((NFAIL + 1)) FAILED_NAMES+=("(interrupted: remaining tests not run)")
fi
if ((NITEMS == 0)); then
	echo "run.sh: no tests found${PATTERN:+ matching '$PATTERN'} (build/tests missing? run 'make')"
fi
if ((${#FLAKY_NAMES[@]})); then
	echo "Passed only when run again (each failed its first run; the reason, and that run's output above):"
	for n in "${FLAKY_NAMES[@]}"; do echo "    $n"; done
fi
if ((NFAIL)); then
	echo "Failed:"
	for n in "${FAILED_NAMES[@]}"; do echo "    $n"; done
fi
if ((${#TIMES[@]} > 1)); then
	# Per kind, then the ten slowest items: what to shorten when the budget is near.
	printf '%s\n' "${TIMES[@]}" | awk -F'\t' '{ t[$2] += $1; all += $1 }
		END { printf "Time: %d s in all:", all / 1000; for (k in t) printf " %s %d s", k, t[k] / 1000; print "" }'
	printf '%s\n' "${TIMES[@]}" | sort -t$'\t' -k1,1nr | head -n 10 |
		awk -F'\t' '{ printf "    %6.1f s  %s %s\n", $1 / 1000, $2, $3 }'
fi
summary="$NPASS passed, $NFAIL failed"
if ((NSKIP)); then
	names=$(printf '%s; ' "${SKIPPED_NAMES[@]}")
	summary+=", $NSKIP skipped (kernel lacks a feature: ${names%; })"
fi
echo "$summary"
# Success needs no failure and at least one test that actually passed.
((NFAIL == 0 && NPASS > 0))
