#!/usr/bin/env bash
# Issue 29 point 2, the container image: scripts/image.sh builds it from
# Debian's packages (mmdebstrap, this tree's .deb; about 3 minutes with the
# .deb's build, and Debian's mirror must be reachable), then the server runs
# in it with the lab's server namespace as its host network (podman
# --network ns:..., the equivalent of `ip netns exec xp-server podman run
# --network host`, which hides the cgroup mounts runc needs), the
# capabilities it keeps and nothing more (no --privileged: podman's own
# seccomp profile with bpf() allowed to CAP_BPF, deploy/podman/seccomp-bpf.sh),
# and the client (the tree's binary) runs in the client namespace: a stream
# and a -x test, counted against the server veth's own XDP counters (ethtool)
# and the router veth's receive count.
# Then deploy/kubernetes/'s agent (its DaemonSet's pod spec, with its
# ConfigMap and Secret) runs under `podman kube play` in the same namespace
# (the Secret's key as a hostPath: podman 4.3 panics on secret volumes;
# hostNetwork: podman entered into the namespace by nsenter --net, which,
# unlike ip netns exec, leaves /sys and its cgroup mounts alone) and serves a test (tests/e2e/kube_pod.py says what is adapted, and why).
# The containers, the pod and the test's image are removed at exit.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
IMG=localhost/xdpperf:e2e-$$
CT=xp-e2e-server-$$
IMGDIR=$XP_TMP/image
export CONTAINERS_CONF=$XP_ROOT/deploy/podman/containers.conf
pod() { podman --runtime runc "$@"; }
client() { xp_exec client "$BIN" "$@"; }
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }
xdp_stat() { xp_exec server ethtool -S "$XP_SERVER_DEV" | awk -v k="$1:" '$1 == k || $1 ~ "_"k"$" {s+=$2} END{print s+0}'; }
KPOD=xdpperf-agent
xp_on_exit 'pod rm -f -t 1 "$CT" >/dev/null 2>&1; pod kube down "$XP_TMP/pod.yaml" >/dev/null 2>&1; pod rmi -f "$IMG" >/dev/null 2>&1'

server_container() {
	bash "$XP_ROOT/deploy/podman/seccomp-bpf.sh" "$XP_TMP/seccomp.json" || return 1
	pod run -d --pull never --name "$CT" --network "ns:/var/run/netns/$(xp_ns server)" \
		--cap-add BPF,PERFMON,NET_ADMIN,NET_RAW,IPC_LOCK --security-opt "seccomp=$XP_TMP/seccomp.json" \
		"$IMG" -s || return 1
	xp_wait 20 "the containerised server listens" eval 'pod logs "$CT" 2>&1 | grep -q "listening on control port"' ||
		{ pod logs "$CT"; return 1; }
	pod logs "$CT" 2>&1
}

# ---------------------------------------------------------------------------
xp_case container_image_builds
xp_check "scripts/image.sh: rootfs from Debian packages, imported as $IMG" eval '
	bash "$XP_ROOT/scripts/image.sh" --out "$IMGDIR" --name "$IMG"'
xp_check "its package list has xdpperf and its runtime libraries, no apt" eval '
	missing=$(for p in xdpperf libbpf1 libxdp1 libjson-c5 libmnl0 libssl3 libmicrohttpd12; do
		grep -q "^$p " "$IMGDIR/packages.txt" || echo "$p"; done)
	[[ -z $missing ]] || { echo "not in the image: $missing"; false; } && ! grep -q "^apt " "$IMGDIR/packages.txt"'
xp_check "the image runs xdpperf --version" eval 'pod run --rm --pull never --network none "$IMG" --version | grep -q "^xdpperf "'
xp_pass

# ---------------------------------------------------------------------------
xp_case container_server_in_lab
xp_check "lab up" xp_lab_up
xp_check "server in a container, the server namespace's network, no --privileged" server_container
xp_check "it dropped to the capabilities it keeps" eval \
	'pod logs "$CT" 2>&1 | grep -q "keeps the capabilities CAP_NET_ADMIN CAP_NET_RAW CAP_IPC_LOCK CAP_PERFMON CAP_BPF and no others"'
d0=$(xdp_stat xdp_drops)
xp_check "stream: 3 s at 20 kpps" eval 'client -c "$XP_SERVER4" -t 3 -b 20kpps -J >"$J"'
d1=$(xdp_stat xdp_drops)
recv=$(jqv .end.sum.received.packets)
xp_check "received == sent" expect_eq received "$recv" "$(jqv .end.sum.sent.packets)"
xp_check "about 60000 sent" expect_near sent "$recv" 60000 3000
xp_check "server veth's XDP drops (ethtool) == received" expect_eq "xdp_drops delta" "$((d1 - d0))" "$recv"
t0=$(stat_of router xpr1 rx_packets)
xp_check "-x: 2 s at 2000 connections/s" eval 'client -c "$XP_SERVER4" -x -t 2 --cps 2000 -J >"$J"'
t1=$(stat_of router xpr1 rx_packets)
est=$(jqv .end.sum.connections.established)
xp_check "connections established, none failed" eval '((est > 3000)) && [[ $(jqv .end.sum.connections.failed_timeout) == 0 ]]'
# What the server's XDP program sent back arrives at the router's veth (plus the control connection's few segments).
back=$(jq '.end.sum.connections | .server_synack_sent + .server_rst_sent' "$J" 2>/dev/null || echo -1)
xp_check "router's veth from the server (rx_packets) == SYN-ACKs + RSTs the server sent (+ control)" expect_near \
	"xpr1 rx_packets delta" "$((t1 - t0))" "$back" 100
xp_check "every SYN-ACK the server sent, the client saw" expect_eq synack_seen \
	"$(jqv .end.sum.connections.synack_seen)" "$(jqv .end.sum.connections.server_synack_sent)"
xp_check "the container's server logged both tests" eval '(( $(pod logs "$CT" 2>&1 | grep -c "test done") == 2 ))'
xp_pass

# ---------------------------------------------------------------------------
xp_case container_kube_play_agent
xp_check "the first server is gone" eval 'pod rm -f -t 2 "$CT" >/dev/null && xdp_gone server "$XP_SERVER_DEV" 10'
xp_check "the agent's pod spec (deploy/kubernetes) for podman kube play" eval '
	mkdir -p "$XP_TMP/seccomp" && bash "$XP_ROOT/deploy/podman/seccomp-bpf.sh" "$XP_TMP/seccomp/xdpperf.json" &&
	mkdir -p "$XP_TMP/auth" && head -c 32 /dev/urandom | od -An -tx1 | tr -d " \n" >"$XP_TMP/auth/auth.key" &&
	chmod 600 "$XP_TMP/auth/auth.key" &&
	python3 "$XP_ROOT/tests/e2e/kube_pod.py" "$XP_ROOT/deploy/kubernetes" "$IMG" "$XP_SERVER4" "$XP_TMP/auth" "$XP_TMP/pod.yaml"'
xp_check "podman kube play runs it in the server namespace" eval '
	# (from the temporary directory: kube play builds an image from ./NAME/Containerfile when ./NAME
	# exists, and the tree'"'"'s ./xdpperf is the binary)
	(cd "$XP_TMP" && nsenter --net="/var/run/netns/$(xp_ns server)" podman --runtime runc kube play \
		--seccomp-profile-root "$XP_TMP/seccomp" "$XP_TMP/pod.yaml")'
xp_check "the agent listens" eval '
	xp_wait 20 "the agent listens" eval "pod logs ${KPOD}-agent 2>&1 | grep -q \"listening on control port\"" ||
		{ pod logs ${KPOD}-agent; false; }'
d0=$(xdp_stat xdp_drops)
xp_check "a test with the Secret's key: 2 s at 10 kpps" eval 'client -c "$XP_SERVER4" --auth-key "$XP_TMP/auth/auth.key" -t 2 -b 10kpps -J >"$J"'
d1=$(xdp_stat xdp_drops)
xp_check "received == sent == the server veth's XDP drops" eval '
	[[ $(jqv .end.sum.received.packets) == $(jqv .end.sum.sent.packets) && $(jqv .end.sum.received.packets) == $((d1 - d0)) ]] &&
	(( $(jqv .end.sum.received.packets) > 15000 ))'
xp_check "without the key: refused" eval '! client -c "$XP_SERVER4" -t 1 >/dev/null 2>&1'
xp_check "its --metrics on the node address (from the ConfigMap's port) has the test" eval '
	xp_exec server curl -sf "http://$XP_SERVER4:9464/metrics" | grep -q "^xdpperf_frames_received_total{test=\"1\",role=\"server\""'
xp_pass
