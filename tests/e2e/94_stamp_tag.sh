#!/usr/bin/env bash
# Issue 28: a frame not addressed to the server is a test's only with the
# test's stamp and its right tag (bpf/lib/stamp.h, docs/stamps.md). In a
# direct pair of its own (xpt28t-c -- xpt28t-s, removed at exit) the client
# sends its test frames to another station's MAC (--dst-mac): the server's
# veth still hands them to its XDP program (a veth delivers every frame),
# but they are not addressed to this host. So they count only by the tag,
# which the client writes under the key of the server's start reply:
#  - with room for the tag (IPv4 UDP 64, TCP 128; live and xsk engines) every
#    frame is counted, and the server's veth dropped exactly those (ethtool
#    xdp_drops, a counter xdpperf does not write);
#  - 64-byte IPv4/TCP frames have no room for it: none is counted, none is
#    dropped by XDP, and all reached the server's veth (its rx_packets) and
#    went on to its stack;
#  - the same 64-byte TCP frames sent to the server's own MAC are counted as
#    before: a frame addressed to this host needs no tag.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
NC=xpt28t-c NS=xpt28t-s
S4=198.18.31.1 C4=198.18.31.2
OTHER_MAC=02:00:00:00:28:77
J=$XP_TMP/run.json

lab() {
	xp_netns_add "$NC" "$NS" && netns_pair "$NC" c0 "$NS" s0 &&
		netns_addr "$NC" c0 "$C4/24" && netns_addr "$NS" s0 "$S4/24" &&
		ip netns exec "$NC" ping -c 1 -W 2 "$S4" >/dev/null
}
xdp_drops() { ip netns exec "$NS" ethtool -S s0 | awk '/xdp_drops:/{s+=$2} END{print s+0}'; }
rx_packets() { ip -n "$NS" -j -s link show s0 | jq '.[0].stats64.rx.packets'; }
# run ARGS...: a 2-s test at 10 kpps from the client, -J into $J; its exit status
run() { ip netns exec "$NC" timeout 60 "$BIN" -c "$S4" -t 2 -b 10kpps -J "$@" >"$J"; }

# tagged ENGINE PROTO LEN: frames to another MAC, counted by their tag alone
tagged() {
	local d0 d1 sent recv
	d0=$(xdp_drops)
	run --engine "$1" $([[ $2 == udp ]] && echo -u) -l "$3" --dst-mac "$OTHER_MAC" || return 1
	d1=$(xdp_drops)
	sent=$(jqv .end.sum.sent.packets) recv=$(jqv .end.sum.received.packets)
	echo "figures: $1 $2 -l $3 to another MAC: sent $sent, the server counted $recv, its veth's XDP dropped" \
		"$((d1 - d0)) (ethtool xdp_drops)"
	((sent > 10000)) && expect_eq "received (by the tag)" "$recv" "$sent" &&
		expect_eq "xdp_drops delta" "$((d1 - d0))" "$recv"
}

# ---------------------------------------------------------------------------
xp_case tagged_frames_to_another_mac_counted
xp_check "lab up (direct pair)" lab
xp_check "server" eval 'start_server_in "$NS" || { cat "$SRV_LOG"; false; }'
xp_check "live engine, IPv4 UDP 64 bytes (stamp + tag in the payload)" tagged live udp 64
xp_check "xsk engine, IPv4 TCP 128 bytes" tagged xsk tcp 128
xp_check "xsk engine, IPv4 UDP 64 bytes" tagged xsk udp 64
xp_pass

xp_case untagged_frames_to_another_mac_pass
d0=$(xdp_drops) r0=$(rx_packets)
# 64-byte IPv4/TCP: the stamp fills the IPv4 ID and the 6 payload bytes, no
# room for a tag. The client may say the run went wrong (nothing arrived).
run --engine xsk -l 64 --dst-mac "$OTHER_MAC"
d1=$(xdp_drops) r1=$(rx_packets)
sent=$(jqv .end.sum.sent.packets) recv=$(jqv .end.sum.received.packets)
echo "figures: xsk tcp -l 64 to another MAC: sent $sent, counted $recv, xdp_drops +$((d1 - d0)), s0 rx_packets" \
	"+$((r1 - r0))"
xp_check "frames sent" eval '((sent > 10000))'
xp_check "none counted" expect_eq received "$recv" 0
xp_check "none dropped by XDP" expect_eq "xdp_drops delta" "$((d1 - d0))" 0
xp_check "all reached the server's veth (rx_packets)" eval '((r1 - r0 >= sent))'
xp_pass

xp_case untagged_frames_to_us_counted
d0=$(xdp_drops)
xp_check "xsk engine, IPv4 TCP 64 bytes to the server's MAC" run --engine xsk -l 64
d1=$(xdp_drops)
sent=$(jqv .end.sum.sent.packets) recv=$(jqv .end.sum.received.packets)
echo "figures: xsk tcp -l 64 to the server: sent $sent, counted $recv, xdp_drops +$((d1 - d0))"
xp_check "frames sent" eval '((sent > 10000))'
xp_check "all counted (no tag needed)" expect_eq received "$recv" "$sent"
xp_check "xdp_drops delta == counted" expect_eq "xdp_drops delta" "$((d1 - d0))" "$recv"
xp_pass
