#!/usr/bin/env bash
# --rfc2544 --bidir (RFC 2544 section 14): each trial both ways at once, the
# server's side sending B->A while the client sends A->B. The lab's router
# gets a known forwarding limit in ONE direction only: an nftables limit of
# 100000 frames/s (burst 1000 packets) on B->A (to the client, 198.18.1.2),
# none on A->B. Each direction has its own search: B->A's must find its
# limit within 2 %, A->B's its own rate (its top, or as far as its sender
# goes beside B->A), never "at least" the other's; each
# direction's counts must be the router's own per-direction nft counters
# (A->B sent; B->A sent, and lost = the limiter's drops). Then the text
# table (A->B, B->A and both rows) and --plot's summary; then that nothing
# is left behind: no XDP program on the client's veth, no process of ours
# in the client's namespace, no reverse sender in the server's, also when
# the client is killed mid-trial. Last, --auth-key on both ends (the reverse
# request and the client's own server authenticated like a start request),
# and a wrong key on the server: refused, nothing left attached.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
LIMIT=100000
client() { xp_exec client "$BIN" "$@"; }
nft_pk() { xp_exec router nft -j list counter inet xpt58 "$1" | jq '.nftables[] | .counter? // empty | .packets'; }
within_pct() { # WHAT GOT WANT PCT
	awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = (g - w) / w * 100; if (d < 0) d = -d; exit !(d <= p) }' ||
		{ echo "$1: $2 is not within $4 % of $3"; return 1; }
}
# Processes in a namespace besides the server we started.
others_in() { # NS
	local p out=()
	for p in $(ip netns pids "$(xp_ns "$1")"); do [[ $p == "${SRV_PID:-}" ]] || out+=("$p:$(cat /proc/$p/comm 2>/dev/null)"); done
	echo "${out[*]}"
}
no_xdp_on_client() { ! xp_exec client ip link show xpc0 | grep -q " xdp"; }

xp_case bidir_lab
xp_check "lab up (routed)" xp_lab_up
xp_check "server" start_server
# Per-direction counters before the limiter; the limiter on B->A only. UDP only: the control connections are TCP.
xp_check "nft in the router: a counter each way, a limit of $LIMIT/s on B->A only" xp_exec router nft -f - <<EOF2
table inet xpt58 {
	counter ab { }
	counter ba { }
	counter badrop { }
	chain pass58 {
		type filter hook forward priority 0; policy accept;
		ip daddr 198.19.1.2 meta l4proto udp counter name "ab"
		ip daddr 198.18.1.2 meta l4proto udp counter name "ba"
		ip daddr 198.18.1.2 meta l4proto udp limit rate over $LIMIT/second burst 1000 packets counter name "badrop" drop
	}
}
EOF2
xp_on_exit "ip netns exec xp-router nft delete table inet xpt58 2>/dev/null"
xp_pass

xp_case bidir_finds_the_limited_direction
xp_check "--rfc2544 --bidir --sizes 64 --tests throughput,latency --trial 1 --latency-trials 1" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --bidir --sizes 64 --tests throughput,latency --trial 1 \
		--latency-trials 1 -J >"$J" 2>"$XP_TMP/progress.txt" || { tail -5 "$XP_TMP/progress.txt"; false; }'
sed "s/^/    /" "$XP_TMP/progress.txt"
AB=$(nft_pk ab) BA=$(nft_pk ba) DROP=$(nft_pk badrop)
echo "    router: A->B $AB frames, B->A $BA frames, B->A limiter dropped $DROP"
xp_check "-J says bidirectional, and every trial has both directions" eval '
	jq -e ".settings.bidirectional and all(.trials[]; .b_to_a.sent > 0 and .combined.sent == .sent + .b_to_a.sent)" "$J" >/dev/null'
xp_check "the lower direction NDR (the top-level one) is within 2 % of the B->A limit" eval '
	within_pct NDR "$(jq ".sizes[0].throughput.ndr_frames_per_second" "$J")" $LIMIT 2'
xp_check "B->A's own NDR is within 2 % of its limit, and says the device" eval '
	within_pct "B->A" "$(jq ".sizes[0].throughput.b_to_a.ndr_frames_per_second" "$J")" $LIMIT 2 &&
	jq -e ".sizes[0].throughput.b_to_a.passed_at_top == false and
		(.sizes[0].throughput.b_to_a.limited_by | test(\"the device\"))" "$J" >/dev/null'
# A->B has no limit in the router: its own search takes it to its own top (the sender's maximum with both
# sending), or, when it falls short there on this 2-core host, to the highest rate it reaches on target.
# Either way it is its own figure now, never "at least" the other direction's.
xp_check "A->B was searched to its own rate: far above B->A's limit, no \"at least\", and its own trials" eval '
	jq -e ".sizes[0] as \$z | \$z.throughput.a_to_b as \$a | \$a.ndr_frames_per_second > $LIMIT * 1.5 and
		(\$a.limited_by | test(\"at least\") | not) and \$a.trials >= 1 and
		(\$a.passed_at_top == (\$a.ndr_frames_per_second == \$a.max_frames_per_second))" \
		"$J" >/dev/null || { jq -c ".sizes[0] | {max_frames_per_second, throughput}" "$J"; false; }'
echo "    A->B: $(jq -c ".sizes[0].throughput.a_to_b | {ndr_frames_per_second, max_frames_per_second, limited_by, trials}" "$J")"
echo "    B->A: $(jq -c ".sizes[0].throughput.b_to_a | {ndr_frames_per_second, max_frames_per_second, limited_by, trials}" "$J")"
xp_check "each trial offered each direction its own search's rate: some trials asked different rates each way" eval '
	jq -e "[.trials[] | select(.test == \"throughput\" and .target_frames_per_second != .b_to_a.target_frames_per_second)] |
		length > 0" "$J" >/dev/null'
xp_check "the combined throughput is the two directions' NDRs summed" eval '
	jq -e ".sizes[0].throughput | .combined_ndr_frames_per_second == .a_to_b.ndr_frames_per_second + .b_to_a.ndr_frames_per_second" \
		"$J" >/dev/null'
xp_check "no B->A rate well above the limit passed; those lost B->A frames" eval '
	jq -e "[.trials[] | select(.test == \"throughput\" and .b_to_a.target_frames_per_second > $LIMIT * 1.02)] as \$up |
		(\$up | length) > 0 and all(\$up[]; .b_to_a.verdict != \"pass\") and any(\$up[]; .b_to_a.verdict == \"loss\")" \
		"$J" >/dev/null ||
	{ jq -c ".trials[] | {test, target_frames_per_second, verdict, verdict_a_to_b, b: .b_to_a.verdict, bt: .b_to_a.target_frames_per_second}" "$J"; false; }'
xp_check "A->B: the frames all trials sent are the router's A->B counter" eval '
	s=$(jq "[.trials[].sent] | add" "$J"); [[ $s == "$AB" ]] || { echo "trials sent $s, router A->B $AB"; false; }'
xp_check "B->A: the frames all trials sent are the router's B->A counter" eval '
	s=$(jq "[.trials[].b_to_a.sent] | add" "$J"); [[ $s == "$BA" ]] || { echo "trials sent $s, router B->A $BA"; false; }'
xp_check "B->A: the frames lost are the router limiter's drops" eval '
	l=$(jq "[.trials[].b_to_a | .sent - .received] | add" "$J")
	[[ $l == "$DROP" ]] || { echo "B->A lost $l, the limiter dropped $DROP"; false; }'
xp_check "A->B: nothing lost that the router did not see arrive (received = its counter, no drop rule on A->B)" eval '
	r=$(jq "[.trials[].received] | add" "$J"); [[ $r == "$AB" ]] || { echo "A->B received $r, router counted $AB"; false; }'
xp_check "latency measured in each direction at the throughput rate" eval '
	jq -e ".sizes[0].latency | .measured and .frames_timed > 0 and .b_to_a.measured and .b_to_a.frames_timed > 0" "$J" >/dev/null ||
	{ jq -c ".sizes[0].latency | del(.all_frames) | .b_to_a |= del(.all_frames)" "$J"; false; }'
xp_check "a progress line per trial, each with its B->A line" eval '
	n=$(jq ".trials | length" "$J"); a=$(grep -c "^\[" "$XP_TMP/progress.txt"); b=$(grep -c " B->A " "$XP_TMP/progress.txt")
	[[ $a == "$n" && $b == "$n" ]] || { echo "$n trials, $a progress lines, $b B->A lines"; false; }'
xp_check "nothing left: no XDP on the client veth, no process of ours in the client namespace" eval '
	no_xdp_on_client && [[ -z $(others_in client) ]] || { echo "left: $(others_in client)"; false; }'
xp_check "no reverse sender left in the server namespace" eval '[[ -z $(others_in server) ]] || { echo "left: $(others_in server)"; false; }'
xp_pass

xp_case bidir_text_table_and_plots
# The top of the search at 200 Mbit/s (297619 frames/s at 64 bytes) is one both senders reach at once:
# A->B passes there, and its row says no limit below the line rate. --confirm-loss 1 (the default): on a
# shared 2-core host one trial's senders can fall short at any rate; a repeat sorts that out.
xp_check "--bidir --line-rate 200M: the table has A->B, B->A and both rows; --plot says bidirectional" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --bidir --sizes 64 --tests throughput --trial 1 --line-rate 200M \
		--plot "$XP_TMP/plots" >"$XP_TMP/rfc.txt" 2>"$XP_TMP/rfc-progress.txt" || { tail -5 "$XP_TMP/rfc-progress.txt"; false; }
	grep -q "bidirectional (RFC 2544 section 14)" "$XP_TMP/rfc.txt" &&
	grep -Eq "^ +64 +A->B +297619 .*none below the line rate" "$XP_TMP/rfc.txt" &&
	grep -Eq "^ +64 +B->A +[0-9]+ .*the device in this direction" "$XP_TMP/rfc.txt" &&
	grep -Eq "^ +64 +both +[0-9]+ .*the two NDRs summed" "$XP_TMP/rfc.txt" &&
	head -1 "$XP_TMP/plots/summary.md" | grep -q "bidirectional" &&
	[[ -s $XP_TMP/plots/throughput.svg && -s $XP_TMP/plots/throughput.png ]] &&
	grep -q "both directions combined" "$XP_TMP/plots/plots.gp" || { cat "$XP_TMP/rfc.txt"; false; }'
sed "s/^/    /" "$XP_TMP/rfc-progress.txt"
sed -n "/^Throughput/,/^\$/p" "$XP_TMP/rfc.txt" | sed "s/^/    /"
xp_check "the both row is the A->B and B->A rows summed" eval '
	read -r a b c < <(awk "\$1 == 64 && \$2 == \"A->B\" { a = \$3 } \$1 == 64 && \$2 == \"B->A\" { b = \$3 }
		\$1 == 64 && \$2 == \"both\" { c = \$3 } END { print a, b, c }" "$XP_TMP/rfc.txt")
	[[ -n $c && $c == $((a + b)) ]] || { echo "A->B $a, B->A $b, both $c"; false; }'
xp_pass

xp_case bidir_client_killed_mid_trial
xp_check "a --bidir run, killed with SIGKILL during its first trial" eval '
	before=$(grep -c "reverse trial (" "$SRV_LOG")
	xp_run_bg client "$BIN" -c "$XP_SERVER4" -u --engine live --rfc2544 --bidir --sizes 64 --tests throughput --trial 4 \
		--line-rate 100M --confirm-loss 0
	K=$XP_BG_PID
	for _ in $(seq 100); do (( $(grep -c "reverse trial (" "$SRV_LOG") > before )) && break; sleep 0.1; done
	(( $(grep -c "reverse trial (" "$SRV_LOG") > before )) || { echo "no reverse trial started"; false; }
	sleep 1; kill -KILL "$K"; wait "$K" 2>/dev/null || true'
xp_check "our server on the client side went with it, and took its XDP program along" eval '
	for _ in $(seq 50); do [[ -z $(others_in client) ]] && break; sleep 0.1; done
	[[ -z $(others_in client) ]] && no_xdp_on_client || { echo "left: $(others_in client)"; xp_exec client ip link show xpc0; false; }'
xp_check "the server stopped the reverse sender within the trial length + its margin" eval '
	for _ in $(seq 240); do [[ -z $(others_in server) ]] && break; sleep 0.1; done
	[[ -z $(others_in server) ]] || { echo "left: $(others_in server)"; false; }
	grep -E "went away mid-trial|reverse trial failed" "$SRV_LOG" | tail -1 | grep -q . || { tail -5 "$SRV_LOG"; false; }'
tail -3 "$SRV_LOG" | sed "s/^/    /"
xp_pass

xp_case bidir_refusals
xp_check "--bidir without --rfc2544: one line, exit 2" eval '
	out=$(client -c "$XP_SERVER4" --bidir 2>&1); rc=$?
	[[ $rc == 2 && $(wc -l <<<"$out") == 1 ]] && grep -q "add --rfc2544" <<<"$out" || { echo "rc $rc: $out"; false; }'
xp_pass

# --auth-key on both ends: the reverse request and the client's own server use the same challenge/MAC
# exchange as a start request. Then a wrong key on the server: refused in one line, exit 1, and nothing
# left attached in either namespace (bpftool net and ip link as before the run).
xp_case bidir_auth_key
KEY=$XP_TMP/key OTHER=$XP_TMP/other
(umask 077; head -c 32 /dev/urandom | base64 >"$KEY"; head -c 32 /dev/urandom | base64 >"$OTHER")
restart_server() { kill "$SRV_PID"; wait "$SRV_PID" 2>/dev/null; start_server "$@"; }
attached() { xp_exec "$1" bpftool net 2>&1; xp_exec "$1" ip link show; }
xp_check "the server restarted with --auth-key" restart_server --auth-key "$KEY"
xp_check "--bidir --auth-key, the same key on both ends: it runs, B->A included" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --bidir --auth-key "$KEY" --sizes 64 --tests throughput --trial 0.5 \
		--line-rate 50M --confirm-loss 0 -J >"$J" 2>"$XP_TMP/auth-progress.txt" || { tail -3 "$XP_TMP/auth-progress.txt"; false; }
	jq -e "(.trials | length) > 0 and all(.trials[]; .b_to_a.sent > 0 and .b_to_a.received > 0) and
		.sizes[0].throughput.b_to_a.ndr_frames_per_second > 0" "$J" >/dev/null || { jq -c .sizes "$J"; false; }'
xp_check "the server ran its reverse trials authenticated and refused nothing" eval '
	grep -q "reverse trial (" "$SRV_LOG" && ! grep -q "refused" "$SRV_LOG" || { cat "$SRV_LOG"; false; }'
xp_check "the server restarted with another key" restart_server --auth-key "$OTHER"
C0=$(attached client) S0=$(attached server)
xp_check "a wrong key on the server: refused in one line, exit 1" eval '
	client -c "$XP_SERVER4" -u --engine live --rfc2544 --bidir --auth-key "$KEY" --sizes 64 --tests throughput --trial 0.5 \
		--line-rate 50M >/dev/null 2>"$XP_TMP/wrong.txt"; rc=$?
	err=$(grep -v "^RFC 2544: " "$XP_TMP/wrong.txt")
	echo "    rc $rc: $err"
	[[ $rc == 1 && $(wc -l <<<"$err") == 1 && $err == *"authentication failed"* ]]'
xp_check "nothing left: no process of ours in the client namespace, none but the server in the server one" eval '
	for _ in $(seq 50); do [[ -z $(others_in client) && -z $(others_in server) ]] && break; sleep 0.1; done
	[[ -z $(others_in client) && -z $(others_in server) ]] || { echo "left: $(others_in client) / $(others_in server)"; false; }'
xp_check "nothing left attached: bpftool net and ip link in both namespaces as before the run" eval '
	[[ $(attached client) == "$C0" && $(attached server) == "$S0" ]] && no_xdp_on_client ||
	{ echo "client before: $C0"; echo "after: $(attached client)"; echo "server before: $S0"; echo "after: $(attached server)"; false; }'
xp_pass
