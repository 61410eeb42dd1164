#!/usr/bin/env bash
# End-to-end test of scripts/lab.sh itself: argument errors, routed topology
# (reachability, forwarding, addresses, GRO, env), firewall (nftables +
# conntrack, TCP one way only), direct topology with 2 queues, idempotent up,
# and a clean down.
. "$(dirname "$0")/lib.sh"

LAB=$XP_LAB

lab_ns_list() { ip netns list | awk '{print $1}' | grep '^xp-' | sort | tr '\n' ' '; }
rxq() { xp_exec "$1" sh -c "ls -d /sys/class/net/$2/queues/rx-* | wc -l"; }
gro() { xp_exec "$1" ethtool -k "$2" | awk '/^generic-receive-offload:/{print $2}'; }

# ---------------------------------------------------------------------------
xp_case bad_args
xp_check "down before test" bash "$LAB" down
xp_check "up --bogus" expect_rc 2 bash "$LAB" up --bogus
xp_check "up --queues 0" expect_rc 2 bash "$LAB" up --queues 0
xp_check "up --queues (no value)" expect_rc 2 bash "$LAB" up --queues
xp_check "up --direct --firewall" expect_rc 2 bash "$LAB" up --direct --firewall
xp_check "up --ct-close without --firewall" expect_rc 2 bash "$LAB" up --ct-close 1
xp_check "up --firewall --ct-close 0" expect_rc 2 bash "$LAB" up --firewall --ct-close 0
xp_check "up --firewall --ct-close soon" expect_rc 2 bash "$LAB" up --firewall --ct-close soon
xp_check "unknown command" expect_rc 2 bash "$LAB" frobnicate
xp_check "no command" expect_rc 2 bash "$LAB"
xp_check "exec unknown ns" expect_rc 2 bash "$LAB" exec nowhere true
xp_check "env while down" expect_rc 1 bash "$LAB" env
xp_check "no namespace left by bad args" expect_eq "xp-* namespaces" "$(lab_ns_list)" ""
xp_pass

# ---------------------------------------------------------------------------
xp_case routed_up
xp_check "lab up (routed)" xp_lab_up
xp_check "XP_MODE" expect_eq XP_MODE "${XP_MODE:-}" routed
xp_check "namespaces" expect_eq namespaces "$(lab_ns_list)" "xp-client xp-router xp-server "
xp_check "env keys" expect_eq env "${XP_CLIENT_NS:-}/${XP_ROUTER_NS:-}/${XP_SERVER_NS:-}/${XP_CLIENT_DEV:-}/${XP_SERVER_DEV:-}/${XP_CLIENT4:-}/${XP_SERVER4:-}/${XP_CLIENT6:-}/${XP_SERVER6:-}" \
	"xp-client/xp-router/xp-server/xpc0/xps0/198.18.1.2/198.19.1.2/2001:2:0:1::2/2001:2:0:2::2"
xp_pass

xp_case routed_ping
xp_check "ping v4 client->server" xp_ping client "$XP_SERVER4"
xp_check "ping v6 client->server" xp_ping client "$XP_SERVER6"
xp_check "ping v4 server->client" xp_ping server "$XP_CLIENT4"
xp_check "ping v6 server->client" xp_ping server "$XP_CLIENT6"
xp_check "route via router" expect_eq "v4 route" \
	"$(xp_exec client ip -o route get "$XP_SERVER4" | grep -o 'via [^ ]*')" "via 198.18.1.1"
xp_pass

xp_case routed_forwarding
xp_check "ipv4 forwarding" expect_eq ip_forward "$(xp_exec router sysctl -n net.ipv4.ip_forward)" 1
xp_check "ipv6 forwarding" expect_eq ipv6_forwarding "$(xp_exec router sysctl -n net.ipv6.conf.all.forwarding)" 1
xp_check "GRO xpr0" expect_eq "gro xpr0" "$(gro router xpr0)" on
xp_check "GRO xpr1" expect_eq "gro xpr1" "$(gro router xpr1)" on
xp_check "GRO xps0" expect_eq "gro xps0" "$(gro server xps0)" on
xp_pass

xp_case client_addresses
xp_check "17 IPv4 addresses" expect_eq "v4 count" "$(xp_exec client ip -o -4 addr show dev xpc0 | wc -l)" 17
xp_check "17 global IPv6 addresses" expect_eq "v6 count" "$(xp_exec client ip -o -6 addr show dev xpc0 scope global | wc -l)" 17
xp_check "no tentative IPv6" expect_eq tentative "$(xp_exec client ip -o -6 addr show dev xpc0 tentative | wc -l)" 0
xp_check "default v6 source is XP_CLIENT6" expect_eq "v6 src" \
	"$(xp_exec client ip -o -6 route get "$XP_SERVER6" | grep -o 'src [^ ]*')" "src $XP_CLIENT6"
xp_check "bind 198.18.1.25 and 2001:2:0:1::1f" xp_exec client /usr/bin/python3 -c '
import socket
for fam, a in ((socket.AF_INET, "198.18.1.25"), (socket.AF_INET6, "2001:2:0:1::1f")):
    s = socket.socket(fam, socket.SOCK_DGRAM); s.bind((a, 0)); s.close()'
xp_pass

xp_case idempotent_up
xp_check "second up (routed)" xp_lab_up
xp_check "ping v4 after re-up" xp_ping client "$XP_SERVER4"
xp_check "still three namespaces" expect_eq namespaces "$(lab_ns_list)" "xp-client xp-router xp-server "
xp_pass

# ---------------------------------------------------------------------------
xp_case firewall_up
xp_check "lab up --firewall" xp_lab_up --firewall
xp_check "nft table inet xpfw" xp_exec router nft list chain inet xpfw forward
xp_check "policy drop" bash -c "ip netns exec $XP_ROUTER_NS nft list chain inet xpfw forward | grep -q 'policy drop'"
xp_check "conntrack -C numeric" bash -c "[[ \$(ip netns exec $XP_ROUTER_NS conntrack -C) =~ ^[0-9]+\$ ]]"
xp_check "ping v4 through firewall" xp_ping client "$XP_SERVER4"
xp_check "ping v6 through firewall" xp_ping client "$XP_SERVER6"
xp_check "ping v4 server->client through firewall" xp_ping server "$XP_CLIENT4"
xp_check "the kernel's CLOSE timeout (10 s) without --ct-close" expect_eq "close timeout" \
	"$(ip netns exec "$XP_ROUTER_NS" sysctl -n net.netfilter.nf_conntrack_tcp_timeout_close)" 10
xp_pass

xp_case firewall_ct_close
xp_check "lab up --firewall --ct-close 2" xp_lab_up --firewall --ct-close 2
xp_check "the router's CLOSE timeout is 2 s" expect_eq "close timeout" \
	"$(ip netns exec "$XP_ROUTER_NS" sysctl -n net.netfilter.nf_conntrack_tcp_timeout_close)" 2
xp_check "status shows it" bash -c "bash $LAB status | grep -q 'close_timeout=2s'"
xp_check "ping v4 through firewall" xp_ping client "$XP_SERVER4"
xp_pass

xp_case firewall_tcp_forward
if ! command -v iperf3 >/dev/null; then
	xp_fail "iperf3 not installed: run scripts/deps.sh"
else
	xp_run_bg server iperf3 -s -p 5201
	xp_check "iperf3 server listening" xp_wait_port server 5201
	xp_check "iperf3 v4 client->server 1 s" xp_exec client iperf3 -c "$XP_SERVER4" -p 5201 -t 1
	xp_check "iperf3 v6 client->server 1 s" xp_exec client iperf3 -c "$XP_SERVER6" -p 5201 -t 1
	xp_check "conntrack saw the TCP flows" bash -c \
		"(( \$(ip netns exec $XP_ROUTER_NS conntrack -L -p tcp --dport 5201 2>/dev/null | wc -l) >= 2 ))"
	xp_pass
fi

xp_case firewall_blocks_new_from_server
xp_run_bg client /usr/bin/python3 -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 5202)); s.listen(); time.sleep(60)'
xp_check "client listener" xp_wait_port client 5202
# A dropped SYN shows up as a timeout (124), not as "connection refused" (1).
xp_check "server->client TCP is dropped" expect_rc 124 \
	xp_exec server timeout 2 bash -c "exec 3<>/dev/tcp/$XP_CLIENT4/5202"
xp_check "client->client local TCP works (listener sane)" \
	xp_exec client timeout 2 bash -c "exec 3<>/dev/tcp/$XP_CLIENT4/5202"
xp_pass

# ---------------------------------------------------------------------------
xp_case direct_queues
xp_check "lab up --direct --queues 2" xp_lab_up --direct --queues 2
xp_check "XP_MODE" expect_eq XP_MODE "$XP_MODE" direct
xp_check "XP_ROUTER_NS empty" expect_eq XP_ROUTER_NS "$XP_ROUTER_NS" ""
xp_check "server addresses" expect_eq server "$XP_SERVER4 $XP_SERVER6" "198.18.1.1 2001:2:0:1::1"
xp_check "namespaces" expect_eq namespaces "$(lab_ns_list)" "xp-client xp-server "
xp_check "xpc0 has 2 rx queues" expect_eq "xpc0 rxq" "$(rxq client xpc0)" 2
xp_check "xps0 has 2 rx queues" expect_eq "xps0 rxq" "$(rxq server xps0)" 2
xp_check "ping v4" xp_ping client "$XP_SERVER4"
xp_check "ping v6" xp_ping client "$XP_SERVER6"
xp_check "neighbour pre-resolved" bash -c \
	"ip netns exec $XP_CLIENT_NS ip neigh show $XP_SERVER4 | grep -q lladdr"
xp_pass

# ---------------------------------------------------------------------------
# Issue 14: `up` used to kill a server that ran in the lab without a word.
xp_case refuses_to_tear_down_a_running_xdpperf
xp_check "lab up" xp_lab_up
xp_check "an xdpperf server in the lab" eval 'xp_run_bg server "$XP_BIN" -s; SRV=$XP_BG_PID; xp_wait_port server 5301'
xp_check "up refuses: exit 1, one line naming it and --force" eval '
	out=$(bash "$LAB" up 2>&1); rc=$?; echo "exit $rc: $out"
	(( rc == 1 )) && [[ $(wc -l <<<"$out") == 1 && $out == *"up would kill xdpperf running in the lab (pid $SRV xp-server: "*"xdpperf -s)"*"--force"* ]]'
xp_check "down refuses too" eval 'out=$(bash "$LAB" down 2>&1); rc=$?; echo "exit $rc: $out"; (( rc == 1 )) && [[ $out == *"down --force"* ]]'
xp_check "the server still runs and serves" eval '
	kill -0 $SRV && xp_exec client "$XP_BIN" -c "$XP_SERVER4" -t 1 -b 1kpps --queues 1 >/dev/null'
xp_check "the lab is still up" xp_ping client "$XP_SERVER4"
xp_check "down --force ends it and removes the lab" eval '
	bash "$LAB" down --force && { wait $SRV 2>/dev/null; ! kill -0 $SRV 2>/dev/null; } && [[ -z $(lab_ns_list) ]]'
xp_check "with nothing running, up needs no --force" eval 'xp_lab_up && xp_lab_up'
xp_pass

# ---------------------------------------------------------------------------
xp_case down_clean
xp_check "lab down" bash "$LAB" down
xp_check "no xp-* namespace" expect_eq namespaces "$(lab_ns_list)" ""
xp_check "state dir removed" expect_rc 1 test -e /run/xdpperf-lab
xp_check "down again is a no-op" bash "$LAB" down
xp_check "status says down" bash -c "bash '$LAB' status | grep -q '^lab: down'"
xp_pass
