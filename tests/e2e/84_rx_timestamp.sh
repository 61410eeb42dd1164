#!/usr/bin/env bash
# Issue 10 item 5, --rx-timestamp, on a direct veth pair of its own (xpt10h-c
# <-> xpt10h-s, removed at exit). veth has the XDP RX-timestamp kfunc but no
# hardware clock: the server's device-bound program attaches (native mode)
# and the driver gives a time for no frame. So:
#   auto: the run falls back to the server's kernel clock and says so; every
#         frame timed by it, none by the NIC (-J rx_timed), the server's count
#         of accounted frames against the server veth's rx_packets;
#   hw:   every frame counted, none timed, and the run fails (exit 1) saying
#         why; with the server in skb mode (no device-bound program there)
#         the server refuses hw at the start, and auto falls back saying why;
#   sw (the default): the clock named in text, -J and --json-stream;
#   usage: hw without --clock tai, or with --rtt: exit 2.
# Nothing stays attached to the server's veth after a run.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
NC=xpt10h-c NS=xpt10h-s
S4=198.18.14.2
J=$XP_TMP/run.json

lab() {
	xp_netns_add "$NC" "$NS" &&
		netns_pair "$NC" c0 "$NS" s0 &&
		netns_addr "$NC" c0 198.18.14.1/24 && netns_addr "$NS" s0 "$S4/24" &&
		ip netns exec "$NC" ping -c 1 -W 2 "$S4" >/dev/null
}
SRV_PID=
server() { # [server options]
	if [[ -n $SRV_PID ]]; then
		kill "$SRV_PID" 2>/dev/null
		wait "$SRV_PID" 2>/dev/null
	fi
	xp_run_bg "$NS" "$BIN" -s "$@"
	SRV_PID=$XP_BG_PID SRV_LOG=$XP_BG_LOG
	for _ in $(seq 50); do
		[[ -n $(ip netns exec "$NS" ss -Hltn "sport = :5301") ]] && return 0
		sleep 0.1
	done
	cat "$SRV_LOG"
	return 1
}
client() { ip netns exec "$NC" timeout 60 "$BIN" -c "$S4" "$@"; }
rx_packets() { ip netns exec "$NS" cat /sys/class/net/s0/statistics/rx_packets; }
nothing_attached() { # the server keeps its program 5 s after the last test (tests in a row attach once)
	for _ in $(seq 80); do
		[[ -z $(ip -n "$NS" -d link show s0 | grep -o 'prog/xdp') ]] && return 0
		sleep 0.1
	done
	echo "XDP left on s0"
	return 1
}

auto_run() {
	local a b acc
	a=$(rx_packets)
	client -u -l 128 -b 10kpps -t 2 --clock tai --rx-timestamp auto -J >"$J" || { cat "$J"; return 1; }
	b=$(rx_packets)
	acc=$(jq '.end.sum.measurement.rx_timed.accounted' "$J")
	echo "auto on veth: rx_clock '$(jq -r .start.stamps.rx_clock "$J")'; accounted $acc, by the NIC" \
		"$(jq .end.sum.measurement.rx_timed.nic "$J"), by the kernel $(jq .end.sum.measurement.rx_timed.kernel_clock "$J");" \
		"timed $(jq .end.sum.measurement.latency.timed "$J"); server veth rx_packets +$((b - a))"
	jq -e '(.start.stamps.rx_clock | test("^NIC hardware clock .*, else CLOCK_TAI")) and
		(.start.stamps.rx_note | test("NIC.s time where the driver gives one")) and
		.end.sum.measurement.rx_timed.mode == "auto" and .end.sum.measurement.rx_timed.nic == 0 and
		.end.sum.measurement.rx_timed.kernel_clock == .end.sum.measurement.rx_timed.accounted and
		.end.sum.measurement.latency.timed == .end.sum.measurement.received and
		.end.sum.measurement.received == .end.sum.measurement.sent' "$J" >/dev/null ||
		{ echo "auto: figures not as expected"; return 1; }
	# The server's count against the kernel's: every accounted frame crossed s0
	# (the rest of rx_packets is the control connection's few segments).
	((acc >= 19000 && acc <= b - a && b - a <= acc + 200)) ||
		{ echo "accounted $acc against rx_packets +$((b - a))"; return 1; }
	nothing_attached
}

xp_case rxts_lab
xp_check "private lab xpt10h-*" lab
xp_check "server (native XDP)" server
xp_pass

xp_case rxts_auto_falls_back_on_veth
xp_check "auto: kernel clock, said, counts against rx_packets" auto_run
xp_pass

xp_case rxts_auto_text_says_the_fallback
xp_check "text report" eval '
	out=$(client -u -l 128 -b 5kpps -t 1 --clock tai --rx-timestamp auto 2>&1); rc=$?; echo "$out"
	((rc == 0)) && [[ $out == *"Arrivals timed by the server'"'"'s NIC hardware clock"* &&
		$out == *"Receive timestamps: per frame"* &&
		$out == *"Rx clock  the NIC timed 0 of "*"timed by the server'"'"'s kernel clock instead"* ]]'
xp_pass

xp_case rxts_hw_veth_counts_but_fails
xp_check "hw on veth: counted, not timed, exit 1" eval '
	out=$(client -u -l 128 -b 5kpps -t 1 --clock tai --rx-timestamp hw -J 2>&1 >"$J"); rc=$?; echo "$out"
	jq -c "{rx_clock: .start.stamps.rx_clock, rx_timed: .end.sum.measurement.rx_timed, received: .end.sum.measurement.received, timed: .end.sum.measurement.latency.timed}" "$J"
	((rc == 1)) && [[ $out == *"--rx-timestamp hw: the server'"'"'s NIC gave a receive time to none of the"* ]] &&
		jq -e ".end.sum.measurement.rx_timed.nic == 0 and .end.sum.measurement.rx_timed.untimed > 4000 and
			.end.sum.measurement.received == .end.sum.measurement.sent and
			(.end.sum.measurement.latency.timed // 0) == 0" "$J" >/dev/null' &&
	nothing_attached
xp_pass

xp_case rxts_sw_names_the_clock
xp_check "sw: the clock in text, -J and --json-stream" eval '
	out=$(client -u -l 128 -b 5kpps -t 1 2>&1); echo "$out" | grep -E "^(Arrivals|Receive)"
	[[ $out == *"Arrivals timed by the server'"'"'s CLOCK_MONOTONIC (bpf_ktime_get_ns)"* && $out != *"Receive timestamps"* ]] &&
	client -u -l 128 -b 5kpps -t 1 -J >"$J" && jq -e ".start.stamps.rx_clock == \"CLOCK_MONOTONIC (bpf_ktime_get_ns)\" and
		(.end.sum.measurement | has(\"rx_timed\") | not)" "$J" >/dev/null &&
	client -u -l 128 -b 5kpps -t 1 --json-stream | head -1 | jq -e ".data.stamps.rx_clock == \"CLOCK_MONOTONIC (bpf_ktime_get_ns)\"" >/dev/null'
xp_pass

xp_case rxts_skb_mode_refuses_hw_and_auto_says_why
# Live frames into a veth whose XDP is generic need GRO there (the kernel notes).
xp_check "GRO on s0" netns_gro "$NS" s0
xp_check "server in skb mode" server --xdp-mode skb
xp_check "hw refused at the start: exit 1" eval '
	out=$(client -u -l 128 -b 5kpps -t 1 --clock tai --rx-timestamp hw 2>&1); rc=$?; echo "$out"
	((rc == 1)) && [[ $out == *"server refused the test: no NIC receive timestamps on this interface: the kernel would not attach the device-bound program in skb mode"* ]]'
xp_check "nothing attached after the refusal" nothing_attached
xp_check "auto falls back, saying why" eval '
	client -u -l 128 -b 5kpps -t 1 --clock tai --rx-timestamp auto -J >"$J" || { cat "$J"; false; } &&
	jq -c "{rx_clock: .start.stamps.rx_clock, rx_note: .start.stamps.rx_note, rx_timed: .end.sum.measurement.rx_timed}" "$J" &&
	jq -e "(.start.stamps.rx_clock == \"CLOCK_TAI (bpf_ktime_get_tai_ns)\") and
		(.start.stamps.rx_note | test(\"not available: the kernel would not attach the device-bound program in skb mode.*falling back\")) and
		.end.sum.measurement.received > 4000 and .end.sum.measurement.rx_timed.nic == 0 and
		.end.sum.measurement.rx_timed.kernel_clock == .end.sum.measurement.received and
		.end.sum.measurement.latency.timed == .end.sum.measurement.received" "$J" >/dev/null'
xp_pass

xp_case rxts_usage
xp_check "hw without --clock tai: exit 2" eval '
	out=$(client -u -l 128 -t 1 --rx-timestamp hw 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"--clock tai"* ]] && (($(wc -l <<<"$out") == 1))'
xp_check "with --rtt: exit 2" eval '
	out=$(client -u -l 128 -t 1 --clock tai --rtt --rx-timestamp auto 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"--rtt"* ]]'
xp_check "with the socket engine: exit 2" eval '
	out=$(client --engine socket -t 1 --rx-timestamp auto 2>&1); rc=$?; echo "$out"
	((rc == 2)) && [[ $out == *"--rx-timestamp"* ]]'
xp_pass
