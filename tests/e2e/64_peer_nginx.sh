#!/usr/bin/env bash
# --peer kernel against a TCP server with no xdpperf on it (issue 12, point 5):
# nginx in the lab's server namespace, on the test's ports, with a config in
# this test's temp dir; no control channel, so the figures are the client's own
# counters, checked against the server namespace's nstat TcpPassiveOpens.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
conn() { jq -r ".end.sum.connections.$1" "$J"; }
nstat_abs() { xp_exec "$1" nstat -asz "$2" | awk -v k="$2" '$1 == k {print $2}'; }

xp_case peer_kernel_against_nginx
xp_check "nginx installed (scripts/deps.sh)" command -v nginx
xp_check "lab up (routed)" xp_lab_up
xp_check "nginx config" eval 'mkdir -p "$XP_TMP/nginx/logs" && cat >"$XP_TMP/nginx/nginx.conf" <<-CONF
	daemon off;
	worker_processes 1;
	pid $XP_TMP/nginx/nginx.pid;
	error_log $XP_TMP/nginx/logs/error.log;
	events { worker_connections 8192; }
	http {
		access_log off;
		server { listen $XP_SERVER4:63000 backlog=4096; listen $XP_SERVER4:63001 backlog=4096; return 204; }
	}
	CONF'
xp_check "nginx in the server namespace" eval '
	xp_run_bg server nginx -p "$XP_TMP/nginx" -c "$XP_TMP/nginx/nginx.conf" && xp_wait_port server 63001 5'
xp_check "no xdpperf server there" eval '! xp_exec server ss -ltn | grep -q ":5301 "'
xp_check "nstat before" eval 'P0=$(nstat_abs server TcpPassiveOpens)'
xp_check "-x --peer kernel at 2000 SYN/s for 2 s" eval '
	client -c "$XP_SERVER4" --engine xdp -x --peer kernel -p 63000:63001 --cps 2000 -t 2 -J >"$J"'
# After the last handshake is done: no connection half open on the server.
xp_check "nstat after" eval 'xp_wait 5 "no SYN-RECV left on the server" eval "[[ -z \$(xp_exec server ss -Htn state syn-recv) ]]"
	P1=$(nstat_abs server TcpPassiveOpens)'
est=$(conn established)
xp_check "reported as the client's own counters" expect_eq client_only "$(jqv .start.client_only)" true
xp_check "about 4000 completed" expect_near established "$est" 4000 200
xp_check "TcpPassiveOpens == completed" expect_eq TcpPassiveOpens "$((P1 - P0))" "$est"
xp_check "text says there is no xdpperf on the server" eval '
	out=$(client -c "$XP_SERVER4" --engine xdp -x --peer kernel -p 63000:63001 --cps 1000 -t 1)
	grep -q "Server has no xdpperf (no control channel)" <<<"$out" && grep -q "no server counters" <<<"$out"'
xp_check "without --peer kernel: the refused control connection is still an error" eval '
	out=$(client -c "$XP_SERVER4" --engine xdp -x -t 1 2>&1 >/dev/null); rc=$?; echo "$out"
	(( rc == 1 )) && [[ $out == *"is '"'"'xdpperf -s'"'"' running there?"* ]]'
xp_check "nothing attached on the client afterwards" eval '! xp_exec client ip -o link show "$XP_CLIENT_DEV" | grep -q " xdp"'
xp_pass
