#!/usr/bin/env bash
# End-to-end test of the connection-rate search's calibration (issue 30,
# point 5) against a device that limits new connections (SYN-flood
# protection): the router's nft limit drops new SYNs above 20000/s. The
# calibration (no --search-ceiling) runs as fast as the sender goes; the
# SYNs the router drops wait out their timeout in the window, and with the
# user's -P that capped the sender near -P a second, so the top, and the
# result, were that (2232/s, "sender-limited"). Now the calibration has no
# SYN retries and a window of its own large enough for a second of drops:
# its top is the sender's, it says how many SYNs the device left unanswered,
# and the search finds the router's limit within 5 %, not sender-limited.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
nft_count() { xp_exec router nft -j list table inet xpcal | jq "[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | .[$1]"; }
between() { awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' || { echo "$1: $2 not in [$3, $4]"; return 1; }; }

xp_case rate_search_calibrates_past_a_syn_limit
xp_check "lab up with the firewall" xp_lab_up --firewall
xp_check "server" start_server
xp_check "router's timeouts of closing connections 1 s" eval 'ct_save && xp_on_exit ct_restore && ct_short'
xp_check "flush conntrack" xp_exec router conntrack -F
xp_check "router limits new connections to 20000/s" eval 'xp_exec router nft -f - <<-NFT
	table inet xpcal {
		chain limitsyn {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 ct state new limit rate over 20000/second burst 1000 packets counter drop
		}
	}
	NFT'
xp_check "-x --search from 1000/s, no ceiling, 2-s trials, 3 % resolution" eval '
	client -c "$XP_SERVER4" -x --search --search-floor 1000 --search-trial 2 --search-resolution 3 \
		--device-netns "$(xp_ns router)" -J >"$J" 2>"$J.err"; rc=$?; cat "$J.err"; ((rc == 0))'
found=$(jq -r .result.rate_cps "$J") top=$(jq -r .search.ceiling_cps "$J")
echo "calibrated top $top/s ($(jq -r .result.calibration_unanswered "$J") SYNs unanswered in it); found $found/s; router dropped $(nft_count 0) SYNs"
xp_check "the calibration's top is well above the limit (the sender's, not the window's)" between top "$top" 40000 100000000
xp_check "the calibration said the device left SYNs unanswered" eval '(( $(jq -r .result.calibration_unanswered "$J") > 0 ))'
xp_check "found within 5 % of the router's 20000/s" between rate "$found" 19000 21000
xp_check "not sender-limited" expect_eq sender_limited "$(jq -r .result.sender_limited "$J")" false
xp_check "rules removed" xp_exec router nft delete table inet xpcal
xp_pass
