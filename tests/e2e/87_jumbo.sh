#!/usr/bin/env bash
# End-to-end tests of jumbo frames (issue 30, point 1) on a direct pair at MTU
# 9000: the AF_XDP engine sends 9018-byte frames (multi-buffer AF_XDP) and
# the server's XDP counts every one; the count is held against the server
# veth's own rx_packets, less what the XDP program passed up (an nftables
# netdev ingress counter on xps0 sees exactly those: the control connection,
# ND/ARP). The live engine sends up to the kernel's live-frame limit
# (-l 3412) and is refused by name above it, where auto takes xsk. An RFC
# 2544 run over 64, 1518 and 9018 finishes all three sizes. The CLI names
# the bound a size misses. The server's XDP program takes the 9000-byte MTU
# in native mode (multi-buffer XDP, BPF_F_XDP_HAS_FRAGS; a program without
# it is refused natively above 3518 on veth and fell back to skb mode): the
# client's report and the kernel (ip -j link: xdp.mode 1, XDP_ATTACHED_DRV)
# say so.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
srv_rx() { xp_exec server cat /sys/class/net/xps0/statistics/rx_packets; }
# What the server's XDP program let through to the stack (not test frames).
passed() { xp_exec server nft -j list counter netdev xpjumbo passed | jq '.nftables[] | select(.counter) | .counter.packets'; }
# The XDP attach mode on xps0 as the kernel has it (1: native, 2: skb; the
# program stays 5 s after a test).
kernel_mode() { xp_exec server ip -j link show xps0 | jq -r '.[0].xdp.mode // "none"'; }
# check_exact RX0 PASSED0: the server counted every frame sent, and the veth's
# rx_packets grew by exactly that plus what XDP passed up.
check_exact() {
	local rx=$(($(srv_rx) - $1)) up=$(($(passed) - $2)) sent recv
	sent=$(jqv .end.sum.sent.packets) recv=$(jqv .end.sum.received.packets)
	echo "sent $sent, server XDP counted $recv, xps0 rx_packets +$rx, passed up by XDP +$up"
	expect_eq "received == sent" "$recv" "$sent" &&
		expect_eq "xps0 rx_packets - passed up == received" "$((rx - up))" "$recv" &&
		{ ((sent > 0)) || { echo "nothing sent"; return 1; }; }
}

jumbo_lab() {
	xp_lab_up --direct || return 1
	xp_exec client ip link set xpc0 mtu 9000 && xp_exec server ip link set xps0 mtu 9000 || return 1
	xp_exec server nft -f - <<'EOF'
table netdev xpjumbo {
	counter passed { }
	chain in { type filter hook ingress device "xps0" priority 0; counter name "passed"; }
}
EOF
}

# ---------------------------------------------------------------------------
xp_case xsk_9018_byte_frames_counted_exactly
xp_check "lab up (direct, MTU 9000)" jumbo_lab
xp_check "server" start_server
for spec in "tcp 9018" "udp 9018" "tcp 4100" "udp 8210"; do
	read -r proto len <<<"$spec"
	u=""
	[[ $proto == udp ]] && u=-u
	rx0=$(srv_rx) p0=$(passed)
	xp_check "xsk $proto -l $len at 20 kpps, 2 s" eval 'client -c "$XP_SERVER4" $u --engine xsk -l $len -b 20kpps -t 2 -J >"$J"'
	xp_check "frame size $len" expect_eq size "$(jqv .start.frame_size)" "$len"
	xp_check "$proto -l $len: every frame counted, as xps0 counted them" check_exact "$rx0" "$p0"
	xp_check "$proto -l $len: the server counted in native mode (its report)" \
		expect_eq mode "$(jqv .start.server_xdp_mode)" native
	xp_check "$proto -l $len: native mode on xps0 (ip -j link: xdp.mode 1)" expect_eq "kernel mode" "$(kernel_mode)" 1
done
xp_pass

# ---------------------------------------------------------------------------
xp_case xsk_9018_ipv6_and_a_jumbo_mix
rx0=$(srv_rx) p0=$(passed)
xp_check "IPv6 -l 9018" eval 'client -c "$XP_SERVER6" --engine xsk -l 9018 -b 10kpps -t 2 -J >"$J"'
xp_check "IPv6: every frame counted" check_exact "$rx0" "$p0"
rx0=$(srv_rx) p0=$(passed)
xp_check "mix 64:4,1518:2,9018:1" eval 'client -c "$XP_SERVER4" --engine xsk -l 64:4,1518:2,9018:1 -b 20kpps -t 2 -J >"$J"'
xp_check "mix: every frame counted" check_exact "$rx0" "$p0"
xp_check "mix: no loss" expect_eq lost "$(jqv .end.sum.lost_packets)" 0
xp_pass

# ---------------------------------------------------------------------------
xp_case auto_takes_xsk_above_the_live_limit
rx0=$(srv_rx) p0=$(passed)
xp_check "default engine, -l 9018" eval 'client -c "$XP_SERVER4" -l 9018 -b 10kpps -t 2 -J >"$J"'
xp_check "auto chose xsk" expect_eq engine "$(jqv .start.engine)" xsk
xp_check "auto -l 9018: every frame counted" check_exact "$rx0" "$p0"
rx0=$(srv_rx) p0=$(passed)
xp_check "live at its limit, -l 3412" eval 'client -c "$XP_SERVER4" --engine live -l 3412 -b 10kpps -t 2 -J >"$J"'
xp_check "engine live" expect_eq engine "$(jqv .start.engine)" live
xp_check "live -l 3412: every frame counted" check_exact "$rx0" "$p0"
xp_check "live -l 3413 refused by name" eval '
	rc=0; client -c "$XP_SERVER4" --engine live -l 3413 -b 10kpps -t 1 >"$XP_TMP/o" 2>&1 || rc=$?
	cat "$XP_TMP/o"; ((rc != 0)) && grep -q "at most -l 3412" "$XP_TMP/o" && grep -q -- "--engine xsk" "$XP_TMP/o"'
xp_pass

# ---------------------------------------------------------------------------
xp_case rfc2544_64_1518_9018
xp_check "--rfc2544 --sizes 64,1518,9018 (throughput, 1-s trials)" eval '
	client -c "$XP_SERVER4" --rfc2544 --sizes 64,1518,9018 --tests throughput --trial 1 -J >"$J"'
xp_check "three sizes with a throughput" expect_eq sizes \
	"$(jq -r '[.sizes[] | select(.throughput.ndr_frames_per_second > 0) | .frame_bytes | tostring] | join(",")' "$J")" "64,1518,9018"
xp_pass

xp_check "--engine live over 1518,9018: stops at 9018, keeps 1518" eval '
	rc=0; client -c "$XP_SERVER4" --engine live --rfc2544 --sizes 1518,9018 --tests throughput --trial 1 -J >"$J" || rc=$?
	jq -c "{error, failed_size, ndr: [.sizes[] | .throughput.ndr_frames_per_second]}" "$J"
	((rc == 1)) && [[ $(jqv .failed_size) == 9018 ]] && jqv .error | grep -q "at most -l 3412" &&
		jq -e ".sizes[0].frame_bytes == 1518 and .sizes[0].throughput.ndr_frames_per_second > 0" "$J" >/dev/null'
xp_pass

# ---------------------------------------------------------------------------
xp_case frame_size_bounds_named
xp_check "-l 63: Ethernet's minimum" eval '
	rc=0; client -c "$XP_SERVER4" -l 63 -t 1 >"$XP_TMP/o" 2>&1 || rc=$?; cat "$XP_TMP/o"
	((rc == 2)) && grep -q "below Ethernet'"'"'s minimum of 64" "$XP_TMP/o"'
xp_check "-l 9019: the largest jumbo frame" eval '
	rc=0; client -c "$XP_SERVER4" -l 9019 -t 1 >"$XP_TMP/o" 2>&1 || rc=$?; cat "$XP_TMP/o"
	((rc == 2)) && grep -q "above 9018" "$XP_TMP/o"'
xp_check "MTU back to 1500: -l 9018 names the MTU" eval '
	xp_exec client ip link set xpc0 mtu 1500
	rc=0; client -c "$XP_SERVER4" -l 9018 -t 1 >"$XP_TMP/o" 2>&1 || rc=$?; cat "$XP_TMP/o"
	((rc == 2)) && grep -q "exceeds the MTU 1500 of xpc0 (maximum -l 1518)" "$XP_TMP/o"'
xp_pass
