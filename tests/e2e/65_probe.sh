#!/usr/bin/env bash
# End-to-end tests of --probe on the lab's veths, each answer checked against
# what the engines and the kernel then do: auto's pick against the engine a
# default run reports, "live frames out" yes against the router's own
# counters, and no (a peer without GRO) against frames that never arrive,
# "AF_XDP zero-copy" no against the mode the kernel gave the engine's socket,
# "native XDP" against the attach mode ip link shows. Bad input
# and an unprivileged probe too.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
P=$XP_TMP/probe.json
pq() { jq -r "$1" "$P"; }

# ---------------------------------------------------------------------------
xp_case probe_lab_client_veth
xp_check "lab up" xp_lab_up
xp_check "probe xpc0 as JSON" eval 'client --probe --dev xpc0 -J >"$P"'
xp_check "one interface, xpc0, driver veth" expect_eq iface "$(pq '.interfaces | length') $(pq '.interfaces[0].name') $(pq '.interfaces[0].driver')" "1 xpc0 veth"
xp_check "kernel: BTF, privileges, live frames" expect_eq kernel \
	"$(pq '[.kernel.checks.btf, .kernel.checks.privileges, .kernel.checks.live_frames] | map(.supported) | join(",")')" "true,true,true"
xp_check "every check has a reason" expect_eq "empty reasons" \
	"$(pq '[.kernel.checks[], .interfaces[0].checks[] | select(.reason == "")] | length')" 0
xp_check "native XDP yes, live frames out yes, AF_XDP zero-copy no" expect_eq answers \
	"$(pq '.interfaces[0].checks | [.native_xdp, .live_frames, .xsk_zerocopy] | map(.supported) | join(",")')" "true,true,false"
xp_check "auto picks live" expect_eq auto "$(pq '.interfaces[0].auto_engine')" live
# The text report says the same as the JSON.
xp_check "text report" eval 'client --probe --dev xpc0 >"$XP_TMP/probe.txt"'
xp_check "text: auto line" eval 'grep -Eq "^  engine auto picks +live " "$XP_TMP/probe.txt"'
xp_check "text: zero-copy line" eval 'grep -Eq "^  AF_XDP zero-copy +no +veth has no xsk-zerocopy" "$XP_TMP/probe.txt"'
# Without --dev: every interface that is up but loopback; in the client namespace, xpc0.
xp_check "probe without --dev" eval 'client --probe -J >"$P"'
xp_check "interfaces: xpc0 only" expect_eq names "$(pq '[.interfaces[].name] | join(",")')" xpc0
xp_pass

# ---------------------------------------------------------------------------
xp_case probe_answers_match_the_engines
xp_check "probe the server's xps0" eval 'xp_exec server "$BIN" --probe --dev xps0 -J >"$P"'
xp_check "xps0: native XDP yes" expect_eq native "$(pq '.interfaces[0].checks.native_xdp.supported')" true
xp_check "server, native XDP" start_server --xdp-mode native
xp_check "probe xpc0 again" eval 'client --probe --dev xpc0 -J >"$P"'
AUTO=$(pq '.interfaces[0].auto_engine')
f0=$(stat_of router xpr0 rx_packets)
xp_check "default run (engine auto), 2 s at 20 kpps" eval 'client -c "$XP_SERVER4" -t 2 -b 20kpps --queues 1 -J >"$J"'
f1=$(stat_of router xpr0 rx_packets)
sent=$(jqv .end.sum.sent.packets)
echo "    figures: engine $(jqv .start.engine), sent $sent, server received $(jqv .end.sum.received.packets), router xpr0 rx_packets +$((f1 - f0))"
xp_check "the engine that ran is the probe's auto pick" expect_eq engine "$(jqv .start.engine)" "$AUTO"
xp_check "server attached natively, as the probe said it could" expect_eq mode "$(jqv .start.server_xdp_mode)" native
xp_check "live frames left xpc0: the router received them (sysfs)" expect_near "router xpr0 rx" "$((f1 - f0))" "$sent" 100
xp_check "about 40000 sent (or said short)" expect_near_or_said_short sent "$sent" 40000 1000 "$J"
xp_check "received == sent" expect_eq received "$(jqv .end.sum.received.packets)" "$sent"
# AF_XDP: the probe said copy mode. The engine asks the kernel for a zero-copy
# bind first and reports copy only when the kernel refused it. (ss --xdp would
# be the independent view, but this kernel has no xsk_diag: it lists nothing.)
xp_check "xsk run" eval 'client -c "$XP_SERVER4" --engine xsk -t 1 -b 10kpps --queues 1 -J >"$J"'
xp_check "the kernel gave the socket copy mode, as the probe said" expect_eq mode "$(jqv .start.engine_mode)" copy
xp_pass

# ---------------------------------------------------------------------------
# A veth transmits XDP frames only while its peer has an XDP program or GRO:
# with GRO off on the router's side, the probe must say live frames would be
# dropped, and they are, while AF_XDP still gets through.
xp_case probe_live_frames_out_no_without_peer_gro
xp_check "GRO off on the router's xpr0" xp_exec router ethtool -K xpr0 gro off
xp_check "probe xpc0" eval 'client --probe --dev xpc0 -J >"$P"'
xp_check "live frames out: no" expect_eq live "$(pq '.interfaces[0].checks.live_frames.supported')" false
xp_check "the reason names ndo-xmit and the peer's GRO" eval 'pq ".interfaces[0].checks.live_frames.reason" | grep -q "ndo-xmit.*GRO"'
xp_check "auto still opens live, and the probe warns" eval 'pq ".interfaces[0].auto_reason" | grep -q "dropped here, use --engine xsk"'
f0=$(stat_of router xpr0 rx_packets)
client -c "$XP_SERVER4" --engine live -t 1 -b 10kpps --queues 1 -J >"$J" 2>"$XP_TMP/live.err" || true
f1=$(stat_of router xpr0 rx_packets)
echo "    figures: live without peer GRO: sent $(jqv .end.sum.sent.packets), server received $(jqv .end.sum.received.packets), router xpr0 rx_packets +$((f1 - f0))"
xp_check "live engine says it sent frames" eval '(( $(jqv .end.sum.sent.packets) > 5000 ))'
xp_check "the router received none of them (sysfs; control traffic only)" eval '(( f1 - f0 < 100 )) || { echo "router rx $((f1 - f0))"; false; }'
xp_check "the server counted none" expect_eq received "$(jqv .end.sum.received.packets)" 0
f0=$(stat_of router xpr0 rx_packets)
xp_check "xsk run" eval 'client -c "$XP_SERVER4" --engine xsk -t 1 -b 10kpps --queues 1 -J >"$J"'
f1=$(stat_of router xpr0 rx_packets)
echo "    figures: xsk without peer GRO: sent $(jqv .end.sum.sent.packets), server received $(jqv .end.sum.received.packets), router xpr0 rx_packets +$((f1 - f0))"
xp_check "xsk frames reach the router (sysfs)" expect_near "router xpr0 rx" "$((f1 - f0))" "$(jqv .end.sum.sent.packets)" 100
xp_check "and the server" expect_eq received "$(jqv .end.sum.received.packets)" "$(jqv .end.sum.sent.packets)"
xp_check "GRO back on" xp_exec router ethtool -K xpr0 gro on
xp_check "probe: live frames out yes again" eval 'client --probe --dev xpc0 -J >"$P"; [[ $(pq ".interfaces[0].checks.live_frames.supported") == true ]]'
xp_pass

# ---------------------------------------------------------------------------
xp_case probe_bad_input_and_no_privileges
xp_check "no such interface: exit 1, one line" eval 'client --probe --dev xpnope0 >"$XP_TMP/o" 2>"$XP_TMP/e"; rc=$?; ((rc == 1)) && [[ $(wc -l <"$XP_TMP/e") == 1 ]] && grep -q "no interface xpnope0" "$XP_TMP/e"'
xp_check "a test option: exit 2" expect_rc 2 client --probe -t 3
xp_check "with -c: exit 2" expect_rc 2 client --probe -c 198.19.1.2
UNPRIV=$XP_TMP/xdpperf
xp_check "copy the binary where nobody may run it" eval 'install -m 0755 "$BIN" "$UNPRIV"; chmod 0755 "$XP_TMP"'
xp_check "probe as nobody" eval 'xp_exec client setpriv --reuid=65534 --regid=65534 --clear-groups "$UNPRIV" --probe --dev xpc0 -J >"$P"'
xp_check "privileges no, auto none, live frames unknown" expect_eq unpriv \
	"$(pq '[.kernel.checks.privileges.supported, .interfaces[0].auto_engine, .kernel.checks.live_frames.supported] | map(tostring) | join(",")')" "false,none,null"
xp_pass
