#!/usr/bin/env bash
# Issue 26, the server counting per flow for a real test: xdpperf's AF_XDP
# engine sends two flows from a flow file (VLAN 100 and VLAN 200; then QinQ
# with --vlan 10,100) across the lab's switch (scripts/lab.sh up --switch:
# a plain bridge in the router namespace that counts frames per VLAN id with
# nftables, counters xdpperf did not write). The server's XDP program counts
# each flow from its stamp's stream into its own entries; the client's -J
# lists every flow. Each flow's frames at the server equal the bridge's
# counter for its VLAN id and the engine's sent count; the text report has
# the per-flow table, and a test without flows has no "flows" at all.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
J=$XP_TMP/out.json
FLOWS=$XP_TMP/flows.json
N=3000

client() { xp_exec client "$BIN" --engine xsk --queues 1 "$@"; }
vlans_json() { bash "$XP_LAB" vlans; }
flow() { jq -r --arg n "$1" ".end.flows[] | select(.name == \$n) | $2" "$J"; }
# A flow's figure K summed over the intervals.
ival_sum() { jq -r --arg n "$1" "[.intervals[].flows[] | select(.name == \$n) | .$2] | add" "$J"; }
# The server veth's received frames (the kernel's count), and the IP packets its stack took
# (every segment of a GRO packet: IpExtIn*Pkts; IPv6: neighbour discovery and the like).
srv_rx() { xp_exec server cat "/sys/class/net/$XP_SERVER_DEV/statistics/rx_packets"; }
srv_ip() {
	local ip lo
	ip=$(xp_exec server nstat -asz IpExtInNoECTPkts IpExtInECT1Pkts IpExtInECT0Pkts IpExtInCEPkts Ip6InReceives |
		awk '$1 !~ /^#/ {s += $2} END {printf "%.0f\n", s}')
	lo=$(xp_exec server cat /sys/class/net/lo/statistics/rx_packets) # the namespace's own, not xps0's
	echo $((ip - lo))
}

# Two flows, one VLAN each, a fixed frame count each (the bridge's counters then equal it).
cat >"$FLOWS" <<JSON
{
  "ports": [{"name": "p1", "location": "xpc0"}],
  "flows": [
    {"name": "v100", "tx_rx": {"choice": "port", "port": {"tx_name": "p1"}},
     "packet": [{"choice": "ethernet", "ethernet": {}},
                {"choice": "vlan", "vlan": {"id": {"choice": "value", "value": 100}}},
                {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}],
     "size": {"choice": "fixed", "fixed": 128},
     "rate": {"choice": "pps", "pps": 5000},
     "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": $N}},
     "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}},
    {"name": "v200", "tx_rx": {"choice": "port", "port": {"tx_name": "p1"}},
     "packet": [{"choice": "ethernet", "ethernet": {}},
                {"choice": "vlan", "vlan": {"id": {"choice": "value", "value": 200}}},
                {"choice": "ipv4", "ipv4": {}}, {"choice": "udp", "udp": {}}],
     "size": {"choice": "fixed", "fixed": 128},
     "rate": {"choice": "pps", "pps": 5000},
     "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": $N}},
     "metrics": {"enable": true, "loss": true, "latency": {"enable": true}}}
  ]
}
JSON

# ---------------------------------------------------------------------------
xp_case vlan_flows_counted_per_flow
xp_check "lab up --switch" xp_lab_up --switch
xp_check "server" start_server
rx0=$(srv_rx) ip0=$(srv_ip)
xp_check "client: 2 flows from a flow file, -J" eval 'client -c "$XP_SERVER4" -t 2 --flows "$FLOWS" -J >"$J"'
sleep 1 # the control connection's last segments (its close) in both counts
rx1=$(srv_rx) ip1=$(srv_ip)
V=$(vlans_json)
echo "bridge: $V"
jq -c '.end.flows' "$J"
xp_check "-J lists both flows" expect_eq flows "$(jq -r '[.end.flows[].name] | join(",")' "$J")" "v100,v200"
for f in v100:100 v200:200; do
	n=${f%%:*} vid=${f##*:}
	xp_check "$n: sent $N" expect_eq "$n sent" "$(flow "$n" .frames_tx)" "$N"
	xp_check "$n: server counted = bridge VID $vid" expect_eq "$n" "$(flow "$n" .frames_rx_all)" \
		"$(jq ".vids[\"$vid\"].packets" <<<"$V")"
	xp_check "$n: received = sent" expect_eq "$n" "$(flow "$n" .frames_rx)" "$(flow "$n" .frames_tx)"
	xp_check "$n: loss 0" expect_eq "$n loss" "$(flow "$n" .loss)" 0
	xp_check "$n: timed" eval '[[ $(flow "$n" ".latency.timed") -gt 0 && $(flow "$n" ".latency.p99_ns >= .latency.p50_ns") == true ]]'
done
xp_check "the flows' sum = the summary's received" expect_eq sum \
	"$(jq '[.end.flows[].frames_rx] | add' "$J")" "$(jq '.end.sum.received.packets' "$J")"
# Per interval: every interval lists every flow; a flow's intervals sum to its end figures.
jq -c '[.intervals[] | [.flows[] | {name, frames_tx, frames_rx, loss}]]' "$J"
xp_check "every interval has both flows" expect_eq ivals \
	"$(jq '[.intervals[] | (.flows | map(.name) | join(","))] | unique | join(";")' -r "$J")" "v100,v200"
for n in v100 v200; do
	for k in frames_tx bytes_tx frames_rx frames_rx_all bytes_rx; do
		xp_check "$n: intervals' $k sum to the end's" expect_eq "$n $k" \
			"$(ival_sum "$n" "$k")" "$(flow "$n" ".$k")"
	done
done
# Against the server veth's own count: its rx_packets are the flows' frames (the XDP program takes
# them) plus what went on to the stack (the control connection: the kernel's IP counters). ARP is in
# rx_packets only, and the stack's own neighbour discovery (looped back multicast) in its IP counters
# only: up to 2 frames either way.
flows_all=$(jq '[.intervals[].flows[].frames_rx_all] | add' "$J")
rest=$(((rx1 - rx0) - (ip1 - ip0)))
echo "server xps0 rx_packets +$((rx1 - rx0)), of them to the stack +$((ip1 - ip0)); flows' frames by interval $flows_all"
xp_check "flows' frames by interval = the veth's rx less the stack's (ARP, ND aside)" \
	eval '((rest - flows_all >= -2 && rest - flows_all <= 2))'
xp_pass

# ---------------------------------------------------------------------------
xp_case qinq_flow_counted
# --vlan 10,100: one flow, outer 802.1ad S-VID 10, inner 802.1Q C-VID 100.
V0=$(vlans_json)
xp_check "client --vlan 10,100" eval 'client -c "$XP_SERVER4" -t 2 -b 4kpps --vlan 10,100 -J >"$J"'
V=$(vlans_json)
jq -c '.end.flows' "$J"
s0=$(jq '.svids["10"].packets // 0' <<<"$V0") s1=$(jq '.svids["10"].packets // 0' <<<"$V")
xp_check "one flow" expect_eq n "$(jq '.end.flows | length' "$J")" 1
xp_check "server counted = bridge S-VID 10" expect_eq qinq "$(jq '.end.flows[0].frames_rx_all' "$J")" "$((s1 - s0))"
xp_check "received = sent" expect_eq qinq "$(jq '.end.flows[0].frames_rx' "$J")" "$(jq '.end.flows[0].frames_tx' "$J")"
xp_check "sent about 8000" expect_near sent "$(jq '.end.flows[0].frames_tx' "$J")" 8000 400
xp_pass

# ---------------------------------------------------------------------------
xp_case text_table_and_no_flows
xp_check "text report has the per-flow table" eval 'client -c "$XP_SERVER4" -t 1 --flows "$FLOWS" --flow-top 1 >"$XP_TMP/t.txt"'
cat "$XP_TMP/t.txt"
xp_check "table header" grep -q '^Flows: 2, most loss first' "$XP_TMP/t.txt"
xp_check "one row and the rest" grep -qF '(1 other) ' "$XP_TMP/t.txt"
xp_check "a test without flows: no flows in -J" eval 'client -c "$XP_SERVER4" -t 1 -b 1kpps -J >"$J"'
xp_check "no .end.flows" expect_eq flows "$(jq '.end | has("flows")' "$J")" false
xp_pass

# ---------------------------------------------------------------------------
xp_case metrics_per_flow
# The client's --metrics endpoint during a test with flows: a series per flow, labelled by its name
# (from the first interval line on, which waits 1 s for late frames: scraped at 2.6 s of 4).
xp_check "client --flows --metrics, scraped mid-test" eval '
	xp_run_bg client sh -c "sleep 2.6; curl -sf http://127.0.0.1:9466/metrics"; CL=$XP_BG_PID; CL_LOG=$XP_BG_LOG
	client -c "$XP_SERVER4" -t 4 --flows "$FLOWS" --metrics 127.0.0.1:9466 >/dev/null; rc=$?
	wait "$CL"; ((rc == 0))'
grep '^xdpperf_flow_' "$CL_LOG"
xp_check "promtool check metrics accepts it" eval 'promtool check metrics <"$CL_LOG"'
for n in v100 v200; do
	xp_check "$n: sent and received series" eval "grep -q '^xdpperf_flow_frames_sent_total{.*flow=\"$n\"} [1-9]' \"\$CL_LOG\" &&
		grep -q '^xdpperf_flow_frames_received_total{.*flow=\"$n\"} [1-9]' \"\$CL_LOG\""
done
xp_pass
