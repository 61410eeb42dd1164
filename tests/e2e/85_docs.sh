#!/usr/bin/env bash
# Docs and behaviour cannot drift: every client command line of the README, of
# every page of docs/ and of the man page runs in the lab (routed, as the examples
# assume: server 198.19.1.2, 2001:2:0:2::2) and exits 0; every server command line
# starts and listens.
# tests/tools/doc_commands.sh finds them; tests/unit/test_docs.c parses them
# all and checks the refusals they quote. Durations are cut to 1 s
# (-t 1 appended: getopt takes the last; not to --rfc2544 --estimate, which
# sends nothing and refuses -t), nothing else is changed.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
# The one file the documented commands name, made here (mode 600 as --auth-key
# demands) and put in place of its documented path; the words are otherwise the docs'.
DOC_KEY=/etc/xdpperf.key
KEY=$XP_TMP/xdpperf.key
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$KEY" && chmod 600 "$KEY"
DOC_FILES=("$XP_ROOT/README.md" "$XP_ROOT"/docs/*.md "$XP_ROOT"/docs/*/*.md "$XP_ROOT/man/xdpperf.1")
docs() {
	for d in "${DOC_FILES[@]}"; do
		[[ -f $d ]] || continue   # an unmatched glob: no page in a subfolder
		bash "$XP_ROOT/tests/tools/doc_commands.sh" "$d"
	done | sed "s#$DOC_KEY#$KEY#g"
}
# A server line must start and listen (and then stops).
server_line() { start_server "$@" || return 1; kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; return 0; }
# A client line runs against the plain server, or one with the same key when it authenticates.
client_line() {
	local srv=$SRV_PID out rc
	if [[ " $* " == *" --auth-key "* ]]; then
		kill "$srv"; wait "$srv" 2>/dev/null
		start_server --auth-key "$KEY" || return 1
	fi
	# The server refuses a socket test on ports whose listeners an earlier
	# test is still closing, and says to try again in a few seconds: do so.
	local tries=0 dur=(-t 1)
	# --rfc2544 --estimate sends nothing and takes no -t (the suite picks its own trial lengths).
	[[ " $* " == *" --rfc2544 "* && " $* " == *" --estimate "* ]] && dur=()
	while :; do
		out=$(xp_exec client "$BIN" "$@" "${dur[@]}" 2>&1); rc=$?
		[[ $rc != 0 && $out == *"still being closed"* ]] && ((tries++ < 15)) || break
		sleep 1
	done
	echo "$out" | tail -4
	if [[ $SRV_PID != "$srv" ]]; then
		kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null
		start_server || return 1
	fi
	(( rc == 0 )) || { echo "exit $rc"; return 1; }
}
mapfile -t CLIENTS < <(docs | awk -F'\t' '$1 == "ok" && $2 ~ /(^| )-c / {print $2}' | sort -u)
mapfile -t SERVERS < <(docs | awk -F'\t' '$1 == "ok" && $2 ~ /(^| )-s( |$)/ {print $2}' | sort -u)

xp_case docs_server_command_lines_start
xp_check "lab up" xp_lab_up --queues 2
xp_check "found the docs' server lines" eval '(( ${#SERVERS[@]} >= 2 ))'
for args in "${SERVERS[@]}"; do
	# shellcheck disable=SC2086 # the documented words, as a shell splits them
	xp_check "xdpperf $args: starts and listens" eval 'server_line ${args#-s}'
done
xp_pass

xp_case docs_client_command_lines_run
xp_check "found the docs' client lines" eval '(( ${#CLIENTS[@]} >= 12 ))'
xp_check "server" start_server
for args in "${CLIENTS[@]}"; do
	# shellcheck disable=SC2086
	xp_check "xdpperf $args" eval 'client_line $args'
done
xp_pass
