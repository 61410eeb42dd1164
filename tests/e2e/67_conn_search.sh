#!/usr/bin/env bash
# End-to-end tests of the connection searches (issue 12 points 4 and 7):
# through the lab's --firewall router, each search finds a limit placed in
# the router on purpose, and every trial starts from a drained table:
#   - rate: nft "ct state new limit rate over 5000/second" drops SYNs above
#     5000 connections/s; the search finds it within 5 %;
#   - capacity: nft "ct count over 3000" refuses connections past 3000 open;
#     the search finds it within 1 %;
#   - teardown: nft limits FINs to 3000/s; the search finds it within 5 %, and
#     the router's own count of FINs equals the FINs of every trial and probe.
# The router's live conntrack entries are counted by conntrack -L in the
# background and must be near 0 (<= 64 + the count before the search) when
# each trial starts (not conntrack -C: it counts expired entries until the
# kernel's garbage collector removes them). The router's timeouts of closing
# connections (CLOSE, TIME_WAIT, FIN_WAIT, CLOSE_WAIT, LAST_ACK) are 1 s for
# the test (per namespace, restored at the end) so that the table drains in a
# second: a connection whose FIN the router dropped would otherwise stay in
# FIN_WAIT for 120 s, and the search would rightly wait for it.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
rules() { xp_exec router nft delete table inet xpsearch 2>/dev/null; xp_exec router nft -f -; }
nft_count() { xp_exec router nft -j list table inet xpsearch | jq "[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | .[$1]"; }
between() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' || { echo "$1: $2 not in [$3, $4]"; return 1; }; }
# Sample the router's live conntrack entries (conntrack -L) every 0.1 s into $SAMPLES: "epoch count".
# The time is read after the dump has ended (a dump of thousands of entries takes tens of ms): a sample
# stamped before a trial's start was taken wholly before it.
SAMPLES=$(mktemp); xp_on_exit rm -f "$SAMPLES"
sampler_start() {
	: >"$SAMPLES"
	( while :; do c=$(xp_exec router conntrack -L 2>/dev/null | wc -l); echo "$(date +%s.%N) $c"; sleep 0.1; done ) >>"$SAMPLES" &
	SAMPLER=$!; xp_on_exit "kill $SAMPLER 2>/dev/null"
}
sampler_stop() { kill "$SAMPLER" 2>/dev/null; wait "$SAMPLER" 2>/dev/null; true; }
# Every trial (not probe) of $J: the sampled count just before its start <= baseline + 64.
trials_start_drained() {
	local base=$1 bad=0 n=0 ts c
	while read -r ts; do
		c=$(awk -v t="$ts" '$1 <= t { c = $2 } END { print c + 0 }' "$SAMPLES")
		n=$((n + 1))
		((c <= base + 64)) || { echo "trial starting at $ts: router conntrack count $c (baseline $base)"; bad=1; }
	done < <(jq -r '.trials[] | select(.kind != "probe") | .wall_start' "$J")
	echo "$n trials checked against conntrack -L"
	((n > 0 && !bad))
}

xp_case rate_search_finds_router_limit
xp_check "lab up with the firewall" xp_lab_up --firewall
xp_check "server" start_server
xp_check "router's timeouts of closing connections 1 s" eval 'ct_save && xp_on_exit ct_restore && ct_short'
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router limits new connections to 5000/s" eval 'rules <<-NFT
	table inet xpsearch {
		chain xps {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags & (syn | ack) == syn counter
			tcp dport 63000-63015 ct state new limit rate over 5000/second burst 100 packets counter drop
		}
	}
	NFT'
BASE=$(xp_exec router conntrack -L 2>/dev/null | wc -l)
sampler_start
xp_check "-x --search from 1000 to 10000/s, 2-s trials" eval '
	client -c "$XP_SERVER4" -x --search --search-floor 1000 --search-ceiling 10000 --search-trial 2 \
		--device-netns "$(xp_ns router)" -J >"$J" 2>"$J.err"; rc=$?; cat "$J.err"; ((rc == 0))'
sampler_stop
found=$(jq -r .result.rate_cps "$J")
echo "rate found $found/s; router dropped $(nft_count 1) SYNs over the search; $(jq '[.trials[] | select(.kind != "probe")] | length' "$J") trials"
xp_check "found within 5 % of the router's 5000/s" between rate "$found" 4750 5250
xp_check "every trial and probe in -J with its counts" eval '
	jq -e "(.trials | length) as \$n | \$n > 0 and ([.trials[] | select(.started > 0 and (.failed | type) == \"number\")] | length) == \$n" "$J" >/dev/null'
xp_check "SYNs the router saw = first SYNs of every trial and probe (nft counter)" \
	expect_eq syns "$(nft_count 0)" "$(jq '[.trials[].started] | add' "$J")"
xp_check "SYNs the router dropped = failed connections of every trial and probe (nft counter)" \
	expect_eq dropped "$(nft_count 1)" "$(jq '[.trials[].failed] | add' "$J")"
xp_check "each trial started with the router's table drained (conntrack -L)" trials_start_drained "$BASE"
xp_check "a line per trial on stderr" eval '(( $(grep -c "^\[ *[0-9]*\] trial" "$J.err") == $(jq "[.trials[] | select(.kind == \"trial\")] | length" "$J") ))'
xp_check "rules removed" xp_exec router nft delete table inet xpsearch
xp_pass

xp_case capacity_search_finds_table_limit
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router refuses new connections past 3000 open" eval 'rules <<-NFT
	table inet xpsearch {
		chain xps {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 ct state new ct count over 3000 counter drop
		}
	}
	NFT'
BASE=$(xp_exec router conntrack -L 2>/dev/null | wc -l)
sampler_start
xp_check "-k -P 5000 --search at 10000/s" eval '
	client -c "$XP_SERVER4" -k -P 5000 --cps 10000 --search --search-trial 2 --device-netns "$(xp_ns router)" \
		-J >"$J" 2>"$J.err"; rc=$?; cat "$J.err"; ((rc == 0))'
sampler_stop
cap=$(jq -r .result.capacity "$J")
echo "capacity found $cap; router refused $(nft_count 0) SYNs"
xp_check "found within 1 % of the router's 3000" between capacity "$cap" 2970 3030
xp_check "the first trial was refused past the limit: refused = asked - held (nft counter)" eval '
	t=$(jq "[.trials[] | select(.kind == \"trial\")][0]" "$J")
	expect_eq refused_first "$(jq .failed <<<"$t")" "$(( $(jq .want <<<"$t") - $(jq .held <<<"$t") ))" &&
	(( $(nft_count 0) >= $(jq .failed <<<"$t") ))'
xp_check "SYNs the router refused = failed connections of every trial (nft counter)" \
	expect_eq refused "$(nft_count 0)" "$(jq '[.trials[].failed] | add' "$J")"
xp_check "each trial started with the router's table drained (conntrack -L)" trials_start_drained "$BASE"
xp_check "rules removed" xp_exec router nft delete table inet xpsearch
xp_pass

xp_case teardown_search_counts_fins
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router counts the client's FINs, limits them to 3000/s" eval 'rules <<-NFT
	table inet xpsearch {
		chain xps {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags & fin == fin counter
			tcp dport 63000-63015 tcp flags & fin == fin limit rate over 3000/second burst 100 packets counter drop
		}
	}
	NFT'
BASE=$(xp_exec router conntrack -L 2>/dev/null | wc -l)
sampler_start
xp_check "-x --fin --search from 500 to 6000/s, 2-s trials" eval '
	client -c "$XP_SERVER4" -x --fin --search --search-floor 500 --search-ceiling 6000 --search-trial 2 \
		--device-netns "$(xp_ns router)" -J >"$J" 2>"$J.err"; rc=$?; cat "$J.err"; ((rc == 0))'
sampler_stop
found=$(jq -r .result.rate_cps "$J")
echo "teardown rate found $found/s; router FINs $(nft_count 0), dropped $(nft_count 1)"
xp_check "found within 5 % of the router's 3000/s" between teardown "$found" 2850 3150
xp_check "the router's FINs = the FINs of every trial and probe (nft counter)" \
	expect_eq fins "$(nft_count 0)" "$(jq '[.trials[].fins_sent] | add' "$J")"
xp_check "FINs the router dropped = failed closes (nft counter)" \
	expect_eq dropped "$(nft_count 1)" "$(jq '[.trials[].failed] | add' "$J")"
xp_check "each trial started with the router's table drained (conntrack -L)" trials_start_drained "$BASE"
xp_check "rules removed" xp_exec router nft delete table inet xpsearch
xp_check "timeouts restored" eval 'ct_restore; [[ $(xp_exec router cat $CT/nf_conntrack_tcp_timeout_fin_wait) == "${TMO0[fin_wait]}" ]]'
xp_pass
