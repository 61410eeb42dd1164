#!/usr/bin/env bash
# Docs and behaviour cannot drift: every client command line of the README
# and the man page runs in the lab (routed, as the README's examples assume: server 198.19.1.2,
# 2001:2:0:2::2) and exits 0; every server command line starts and listens.
# tests/tools/doc_commands.sh finds them; tests/unit/test_docs.c parses them
# all and checks the refusals the README quotes. Durations are cut to 1 s
# (-t 1 appended: getopt takes the last), nothing else is changed.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
docs() { for d in README.md man/xdpperf.1; do bash "$XP_ROOT/tests/tools/doc_commands.sh" "$XP_ROOT/$d"; done; }
mapfile -t CLIENTS < <(docs | awk -F'\t' '$1 == "ok" && $2 ~ /(^| )-c / {print $2}' | sort -u)
mapfile -t SERVERS < <(docs | awk -F'\t' '$1 == "ok" && $2 ~ /(^| )-s( |$)/ {print $2}' | sort -u)

xp_case readme_server_command_lines_start
xp_check "lab up" xp_lab_up --queues 2
xp_check "found the README's server lines" eval '(( ${#SERVERS[@]} >= 2 ))'
for args in "${SERVERS[@]}"; do
	# shellcheck disable=SC2086 # the documented words, as a shell splits them
	xp_check "xdpperf $args: starts and listens" eval 'start_server ${args#-s} && kill $SRV_PID && wait $SRV_PID; true'
done
xp_pass

xp_case readme_client_command_lines_run
xp_check "found the README's client lines" eval '(( ${#CLIENTS[@]} >= 12 ))'
xp_check "server" start_server
for args in "${CLIENTS[@]}"; do
	# shellcheck disable=SC2086
	xp_check "xdpperf $args" eval '
		out=$(xp_exec client "$BIN" $args -t 1 2>&1); rc=$?
		echo "$out" | tail -4
		(( rc == 0 )) || { echo "exit $rc"; false; }'
done
xp_pass
