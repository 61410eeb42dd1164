#!/usr/bin/env bash
# The xdpperf command lines a document gives, one per line, for the tests that
# keep docs and behaviour together (tests/unit/test_docs.c parses every one,
# tests/e2e/85_docs.sh runs the client and server ones in the lab):
#
#   ok<TAB>ARGS                  a command that should run (ARGS: after "xdpperf")
#   usage<TAB>ARGS<TAB>MESSAGE   "$ xdpperf ARGS" followed by the line "xdpperf: MESSAGE"
#
# Commands are in code blocks (Markdown fences, roff .EX/.EE), after a prompt ("client# ", "server# ", "# ", "$ ") or
# as "lab.sh exec NS ./xdpperf", and in prose as `xdpperf ...` spans. Only lines
# with a role (-s, -c, --probe, --otg, --config) count: benchmark output quotes "xdpperf -P 4" too.
#   tests/tools/doc_commands.sh README.md
#   tests/tools/doc_commands.sh docs/rfc2544.md
#   tests/tools/doc_commands.sh man/xdpperf.1
set -euo pipefail
awk '
function has_role(a) { return a ~ /(^| )-(s|c)( |$)/ || a ~ /(^| )--(help|version|probe|otg|config)( |$)/ }
function clean(a) {
	sub(/[ \t]+#.*$/, "", a)   # a trailing comment
	sub(/[ \t][ \t]+\(.*\)$/, "", a) # a trailing note, as "   (in the client namespace)"
	sub(/[ \t]*&[ \t]*$/, "", a) # run in the background
	sub(/[ \t]*>[ \t]*[^ ]+$/, "", a) # output redirected to a file
	sub(/[ \t]+$/, "", a)
	return a
}
function flush() { if (pending != "") print "ok\t" pending; pending = "" }
{ gsub(/\\-/, "-") }                     # roff: \- is a minus
/^```/ || /^\.E[XE]$/ { flush(); fence = !fence; next } # Markdown fences, roff .EX/.EE
fence {
	if (pending != "" && $0 ~ /^xdpperf: /) { print "usage\t" pending "\t" substr($0, 10); pending = ""; next }
	flush()
	if (match($0, /^(\$ |# |client# |server# |.*exec (client|server) (\.\/)?)xdpperf( |$)/)) {
		args = clean(substr($0, RLENGTH + 1))
		if (!has_role(args)) next
		if ($0 ~ /^\$ /) pending = args; else print "ok\t" args
	}
	next
}
{
	line = $0
	while (match(line, /`xdpperf [^`]*`/)) {
		args = substr(line, RSTART + 9, RLENGTH - 10)
		if (has_role(args)) print "ok\t" args
		line = substr(line, RSTART + RLENGTH)
	}
}
END { flush() }
' "$1"
