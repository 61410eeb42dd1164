#!/usr/bin/env bash
# The server's XDP responder against a hostile peer on its link (issue 9,
# finding 5), with real frames on a veth pair of this script's own:
#
#   xpsx-c  xpsxc0 198.18.241.1/24 (the client) + 198.18.241.9 (a stranger)
#             <--veth-->  xpsxs0 198.18.241.2/24  xpsx-s (xdpperf -s)
#
# While a client holds 100 connections answered by the server's XDP program
# (-k --engine xdp), build/tests/tools/hostile_frames sends, from the
# client's interface, N frames of each kind a hostile peer would: SYN and
# ACK|FIN from the stranger's address; from the client's address a SYN with
# a bad checksum, to the broadcast MAC and address, to an address that is not
# the server's, from the broadcast MAC; and N good SYNs as the control. A
# capture (tcpdump) on the client's interface, read by tshark, is the
# independent count: what was sent, and every SYN-ACK that came back.
# Expected:
#   - no SYN-ACK and no FIN-ACK to any hostile frame; one to each good SYN;
#   - the stranger's frames passed to the server's TCP stack, which resets
#     them (nstat TcpOutRsts on the server: 2N), not counted in the test;
#   - the client-address frames to the broadcast MAC and address or to an
#     address that is not the server's are not addressed to it: no test's
#     (issue 28), passed to its stack, not counted;
#   - the other client-address frames counted in the test's noreply_*
#     counters, exactly as many as the capture saw sent (csum N, addr N: the
#     broadcast source MAC), and tcp_syn - synack_sent == 2N;
#   - nothing attached to the server's interface afterwards.

# shellcheck disable=SC2034 # read by lib.sh: this script does not use the lab
XP_KEEP_LAB=1
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

NSC=xpsx-c
NSS=xpsx-s
HOSTILE=$XP_ROOT/build/tests/tools/hostile_frames
N=10
PCAP=$XP_TMP/client.pcap

setup_ns() {
	xp_netns_add "$NSC" "$NSS" &&
		netns_pair "$NSC" xpsxc0 "$NSS" xpsxs0 &&
		netns_addr "$NSC" xpsxc0 198.18.241.1/24 198.18.241.9/24 &&
		netns_addr "$NSS" xpsxs0 198.18.241.2/24 || return
	# The client's control connection leaves from 198.18.241.1, not the
	# stranger's address on the same interface.
	ip -n "$NSC" route replace 198.18.241.0/24 dev xpsxc0 src 198.18.241.1 &&
		ip netns exec "$NSC" ping -c 1 -W 2 198.18.241.2 >/dev/null || return
	SMAC=$(ip netns exec "$NSS" cat /sys/class/net/xpsxs0/address)
	echo "server MAC $SMAC"
}

# tshark COUNT of the capture's frames matching a display filter.
count() { tshark -r "$PCAP" -Y "$1" 2>/dev/null | wc -l; }
nstat_abs() { ip netns exec "$NSS" nstat -asz "$1" | awk -v k="$1" '$1 == k {print $2}'; }
counter() { jq -r ".end.sum.received.counters.$1" "$J"; }
xdp_on() { ip -n "$NSS" -o link show xpsxs0 | grep -qE ' xdp(generic|drv)? '; }

xp_case setup
xp_check "hostile_frames is built (make all)" test -x "$HOSTILE"
xp_check "xpsx-c / xpsx-s with a veth pair" setup_ns
xp_check "server" eval 'xp_run_bg "$NSS" "$XP_BIN" -s && xp_wait_port "$NSS" 5301 5'
xp_pass

xp_case hostile_frames_not_answered
# Only the test port's frames: the control connection's ephemeral port (the
# kernel's 32768-60999) can fall in 60000-60699, and its SYN-ACK from port
# 5301 was once counted as an answer to a hostile (or a good) SYN.
xp_check "capture on the client's interface" eval '
	xp_capture_bg "$NSC" tcpdump -i xpsxc0 -U -w "$PCAP" "tcp portrange 60000-60699 and tcp port 63003"; CAP_PID=$XP_BG_PID'
RST0=$(nstat_abs TcpOutRsts)
xp_check "client: -k -P 100 for 5 s, answered by the server's XDP" eval '
	xp_run_bg "$NSC" bash -c "exec \"\$0\" -c 198.18.241.2 --engine xdp -k -P 100 -t 5 -J >\"\$1\"" "$XP_BIN" "$J"
	CLI_PID=$XP_BG_PID; CLI_LOG=$XP_BG_LOG
	xp_wait 10 "the server'"'"'s XDP program on xpsxs0" xdp_on'
xp_check "the test is attached" xdp_on
xp_check "hostile_frames: $N of each kind" ip netns exec "$NSC" "$HOSTILE" --dev xpsxc0 --dst-mac "$SMAC" \
	--client 198.18.241.1 --stranger 198.18.241.9 --server 198.18.241.2 --dport 63003 -n $N
xp_check "client finished" eval '{ wait "$CLI_PID" || { cat "$CLI_LOG"; false; }; } && jq -e .end.sum "$J" >/dev/null'
# tcpdump writes a block of the kernel's ring once it is full or its timeout
# (1 s) passed: stopped before, the last frames are lost. Stopped once the
# file holds every frame sent (7 kinds of N) and the N SYN-ACKs to the good
# SYNs, or after 10 s (the checks below then say what is missing).
cap_holds_all() { (( $(count 'tcp.srcport >= 60000 && tcp.srcport < 60700 && tcp.flags.reset == 0') >= 7 * N &&
	$(count 'tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.dstport >= 60600') >= N )); }
xp_check "capture written" eval 'xp_wait 10 "every frame in the capture" cap_holds_all
	kill -INT "$CAP_PID"; wait "$CAP_PID" 2>/dev/null; test -s "$PCAP"'
RST1=$(nstat_abs TcpOutRsts)
# What the capture saw leave (the independent count of what was sent).
for k in 0 1 2 3 4 5 6; do
	lo=$((60000 + 100 * k))
	xp_check "capture: $N frames of kind $k sent" expect_eq "kind $k" \
		"$(count "tcp.srcport >= $lo && tcp.srcport < $((lo + N)) && tcp.dstport == 63003 && tcp.flags.reset == 0")" $N
done
xp_check "no SYN-ACK to any hostile frame" expect_eq "SYN-ACKs to 60000-60599" \
	"$(count 'tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.dstport >= 60000 && tcp.dstport < 60600')" 0
xp_check "no FIN-ACK to the stranger's ACK|FIN" expect_eq "FIN-ACKs" \
	"$(count 'tcp.flags.fin == 1 && tcp.srcport == 63003')" 0
xp_check "a SYN-ACK to each good SYN (the responder works)" expect_eq "SYN-ACKs to 60600-60699" \
	"$(count 'tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.dstport >= 60600 && tcp.dstport < 60700')" $N
xp_check "the good SYN-ACKs come from the server's address to the client's" expect_eq "their addresses" \
	"$(count 'tcp.flags.syn == 1 && tcp.flags.ack == 1 && tcp.dstport >= 60600 && ip.src == 198.18.241.2 && ip.dst == 198.18.241.1')" $N
xp_check "the stranger's frames reached the server's stack: RSTs (capture)" expect_eq "RSTs to the stranger" \
	"$(count 'tcp.flags.reset == 1 && ip.dst == 198.18.241.9 && tcp.dstport >= 60000 && tcp.dstport < 60200')" $((2 * N))
xp_check "... and its counters (nstat TcpOutRsts)" expect_eq "TcpOutRsts delta" "$((RST1 - RST0))" $((2 * N))
xp_check "bad checksums counted: noreply_csum == the capture's $N" expect_eq noreply_csum "$(counter noreply_csum)" $N
xp_check "from the broadcast MAC counted: noreply_addr == $N" expect_eq noreply_addr "$(counter noreply_addr)" $N
# The SYNs to the broadcast address and to another host's are not the test's:
# not counted at all, so of the client address's SYNs only the bad checksums'
# and the broadcast source MAC's go unanswered.
xp_check "every SYN of the client's address to the server but those answered: tcp_syn - synack_sent == 2 x $N" \
	expect_eq "tcp_syn - synack_sent" "$(($(counter tcp_syn) - $(counter synack_sent)))" $((2 * N))
xp_check "the test's 100 connections established" expect_eq established "$(jq -r .end.sum.connections.established "$J")" 100
# (The server keeps its program 5 s after the last test, so tests in a row attach once.)
xp_check "nothing attached to the server's interface afterwards" eval '
	for _ in $(seq 80); do xdp_on || break; sleep 0.1; done; ! xdp_on'
# The figures, for the log (run.sh -v).
echo "capture: $(count 'tcp.dstport == 63003 && tcp.flags.reset == 0') hostile and good frames sent," \
	"$(count 'tcp.flags.syn == 1 && tcp.flags.ack == 1') SYN-ACKs back, $(count 'tcp.flags.reset == 1 && ip.dst == 198.18.241.9') RSTs to the stranger;" \
	"nstat TcpOutRsts +$((RST1 - RST0)); server counters: $(jq -c '.end.sum.received.counters | {pkts, tcp_syn, synack_sent, noreply_addr, noreply_csum, noreply_shape, noreply_other, conn_established}' "$J")"
xp_pass
