#!/usr/bin/env bash
# The output's form does not change when the code is reorganised (issue 25):
# the text and -J output of a stream test, a -x test, a connection search and
# a quick RFC 2544 run, with every measured figure masked (tests/golden/mask.py),
# are the files in tests/golden/ that were written before the change.
# XP_GOLDEN_WRITE=1 writes them anew instead of comparing (only for a change of
# the output that is meant; say so in the commit). XP_GOLDEN_RAW=DIR keeps the
# unmasked outputs there.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
GOLD=$XP_ROOT/tests/golden
MASK=$GOLD/mask.py
client() { xp_exec client "$BIN" "$@"; }
# golden NAME MODE CMD...: run CMD (its stdout), mask it as MODE (text|json), compare with NAME.MODE.
golden() {
	local name=$1 mode=$2 out rc=0
	shift 2
	out=$XP_TMP/$name.$mode
	"$@" >"$out.raw" 2>"$out.err" || rc=$?
	((rc == 0)) || { echo "exit $rc"; tail -5 "$out.err"; return 1; }
	[[ -z ${XP_GOLDEN_RAW:-} ]] || cp "$out.raw" "$XP_GOLDEN_RAW/$name.$mode"
	python3 "$MASK" "$mode" <"$out.raw" >"$out" || return 1
	if [[ ${XP_GOLDEN_WRITE:-0} == 1 ]]; then
		cp "$out" "$GOLD/$name.$mode"
		return 0
	fi
	diff -u "$GOLD/$name.$mode" "$out" || { echo "(unmasked: $out.raw)"; return 1; }
}

STREAM=(-c 198.19.1.2 --engine xsk -t 2 -b 5kpps --queues 1)
CONNECT=(-c 198.19.1.2 -P 16 -x -t 2)
SEARCH=(-c 198.19.1.2 -x --search --search-floor 1000 --search-ceiling 3000 --search-trial 2 --search-settle 0)
RFC=(-c 198.19.1.2 --engine live --rfc2544 --sizes 64 --tests throughput --trial 1 --line-rate 100M --confirm-loss 0)

xp_case golden_outputs
xp_check "lab up" xp_lab_up
xp_check "lab's server address" expect_eq XP_SERVER4 "$XP_SERVER4" 198.19.1.2
xp_check "server" start_server
xp_check "stream test, text" golden stream text client "${STREAM[@]}"
xp_check "stream test, -J" golden stream json client "${STREAM[@]}" -J
xp_check "-x test, text" golden connect text client "${CONNECT[@]}"
xp_check "-x test, -J" golden connect json client "${CONNECT[@]}" -J
xp_check "--search, text" golden search text client "${SEARCH[@]}"
xp_check "--search, -J" golden search json client "${SEARCH[@]}" -J
xp_check "--rfc2544 quick, text" golden rfc2544 text client "${RFC[@]}"
xp_check "--rfc2544 quick, -J" golden rfc2544 json client "${RFC[@]}" -J
xp_pass
