#!/usr/bin/env bash
# Issue 26, VLAN trunks on the lab's switch (scripts/lab.sh up --switch): four
# flows built by user/frame's builder (tests/tools/flowlab send: 802.1Q VID
# 100 and 200; QinQ 802.1ad S-VID 10 / C-VID 100 and S-VID 20 / C-VID 300)
# cross the router namespace's plain bridge, counted there per VLAN id by
# nftables' bridge family (counters xdpperf did not write), and the server's
# XDP program (the real loader, tests/tools/flowlab serve) counts each flow
# from its stamp's stream. Each flow's count at the server equals the
# bridge's counter for its VLAN id, and what was sent.
. "$(dirname "$0")/lib.sh"

FLOWLAB=$XP_ROOT/build/tests/tools/flowlab
PORT=7100
N=1000
SIZE=128

# A counter for QinQ frames of S-VID $1 and C-VID $2 (the dynamic sets count
# the outer tag only), and its packets from nft's JSON.
inner_rule_add() { # SVID CVID
	xp_exec router nft add rule bridge xpsw forward ether type 8021ad vlan id "$1" vlan type 8021q \
		vlan id "$2" counter comment "\"qinq $1/$2\""
}
inner_count() { # SVID CVID
	xp_exec router nft -j list chain bridge xpsw forward |
		jq --arg c "qinq $1/$2" '[.nftables[] | .rule? // empty | select(.comment == $c) | .expr[] | .counter? // empty | .packets] | add // 0'
}
vlans_json() { bash "$XP_LAB" vlans; }
flow_field() { # FLOW FIELD (from the serve log)
	awk -v f="flow=$1" -v k="$2=" '$1 == f { for (i = 2; i <= NF; i++) if (index($i, k) == 1) print substr($i, length(k) + 1) }' "$SERVE_LOG"
}

# ---------------------------------------------------------------------------
xp_case switch_up
xp_check "lab up --switch" xp_lab_up --switch
xp_check "XP_MODE" expect_eq XP_MODE "${XP_MODE:-}" switch
xp_check "bridge has both ports" expect_eq ports \
	"$(xp_exec router ip -j link show master xpbr0 | jq -r '[.[].ifname] | sort | join(" ")')" "xpr0 xpr1"
xp_check "ping v4 across the bridge" xp_ping client "$XP_SERVER4"
xp_check "ping v6 across the bridge" xp_ping client "$XP_SERVER6"
xp_check "up --switch --firewall refused" expect_rc 2 bash "$XP_LAB" up --switch --firewall
xp_check "qos on the switch refused" expect_rc 1 bash "$XP_LAB" qos 10mbit
xp_pass

# ---------------------------------------------------------------------------
xp_case vlan_flows_counted
xp_check "QinQ inner counters" eval 'inner_rule_add 10 100 && inner_rule_add 20 300'
xp_run_bg server "$FLOWLAB" serve "$XP_SERVER_DEV" "$PORT" "$XP_CLIENT4" 4 60
SERVE_PID=$XP_BG_PID SERVE_LOG=$XP_BG_LOG
xp_check "server program ready" xp_wait_log "$SERVE_LOG" '^ready' 1 20
xp_check "send 4 flows x $N" xp_exec client "$FLOWLAB" send "$XP_CLIENT_DEV" "$XP_SERVER_MAC" "$XP_CLIENT4" \
	"$XP_SERVER4" "$PORT" "$N" "$SIZE" q:100 q:200/46 ad:10:100 ad:20:300
sleep 0.5
xp_check "stop the server program" kill -TERM "$SERVE_PID"
xp_check "server program's figures" xp_wait_log "$SERVE_LOG" '^flow=3 ' 1 10
cat "$SERVE_LOG"
V=$(vlans_json)
echo "bridge: $V; inner 10/100 $(inner_count 10 100), 20/300 $(inner_count 20 300)"
# The bridge counted every frame of each flow under its VLAN id: outer tag
# for QinQ (svids), the one tag for 802.1Q (vids), the inner by its rule.
xp_check "bridge: VID 100" expect_eq vid100 "$(jq '.vids["100"].packets' <<<"$V")" "$N"
xp_check "bridge: VID 200" expect_eq vid200 "$(jq '.vids["200"].packets' <<<"$V")" "$N"
xp_check "bridge: S-VID 10" expect_eq svid10 "$(jq '.svids["10"].packets' <<<"$V")" "$N"
xp_check "bridge: S-VID 20" expect_eq svid20 "$(jq '.svids["20"].packets' <<<"$V")" "$N"
xp_check "bridge: 10/100 inner" expect_eq inner10 "$(inner_count 10 100)" "$N"
xp_check "bridge: 20/300 inner" expect_eq inner20 "$(inner_count 20 300)" "$N"
xp_check "bridge: no other 802.1Q VID" expect_eq vids "$(jq -r '.vids | keys | join(",")' <<<"$V")" "100,200"
# The server's program counted each flow as the bridge did, none lost,
# duplicated or reordered.
xp_check "flow 0 = VID 100" expect_eq flow0 "$(flow_field 0 frames)" "$(jq '.vids["100"].packets' <<<"$V")"
xp_check "flow 1 = VID 200" expect_eq flow1 "$(flow_field 1 frames)" "$(jq '.vids["200"].packets' <<<"$V")"
xp_check "flow 2 = S-VID 10" expect_eq flow2 "$(flow_field 2 frames)" "$(jq '.svids["10"].packets' <<<"$V")"
xp_check "flow 3 = S-VID 20" expect_eq flow3 "$(flow_field 3 frames)" "$(jq '.svids["20"].packets' <<<"$V")"
for f in 0 1 2 3; do
	xp_check "flow $f: recv = expected = $N" expect_eq "flow$f" "$(flow_field $f recv)/$(flow_field $f expected)" "$N/$N"
	xp_check "flow $f: no dup, no reordering" expect_eq "flow$f" "$(flow_field $f dup)/$(flow_field $f reordered)" "0/0"
	xp_check "flow $f: timed" expect_eq "flow$f" "$(flow_field $f lat_n)" "$N"
done
xp_check "slot: all 4 flows" expect_eq slot "$(awk '$1 == "slot" { sub("pkts=", "", $2); print $2 }' "$SERVE_LOG")" $((4 * N))
xp_pass
