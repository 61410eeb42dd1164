#!/usr/bin/env bash
# A seccomp profile for xdpperf's container: podman's default one
# (/usr/share/containers/seccomp.json, containers-common) with bpf() and
# perf_event_open() allowed to a container that holds CAP_BPF, instead of
# only to one with CAP_SYS_ADMIN (the default's rule). Nothing else changes,
# and the kernel still checks the capabilities themselves; never
# seccomp=unconfined or --privileged.
#
#   deploy/podman/seccomp-bpf.sh OUT.json [DEFAULT.json]
#   podman run --security-opt seccomp=OUT.json --cap-add BPF,PERFMON,NET_ADMIN,NET_RAW,IPC_LOCK ...
set -euo pipefail
(($# >= 1)) || { echo "usage: seccomp-bpf.sh OUT.json [DEFAULT.json]" >&2; exit 2; }
src=${2:-/usr/share/containers/seccomp.json}
[[ -r $src ]] || { echo "seccomp-bpf.sh: no default profile at $src (containers-common)" >&2; exit 1; }
jq '.syscalls |= (map(.names -= ["bpf", "perf_event_open"]) | map(select(.names | length > 0)))
    | .syscalls += [{"names": ["bpf", "perf_event_open"], "action": "SCMP_ACT_ALLOW",
                     "includes": {"caps": ["CAP_BPF"]}, "excludes": {}}]' "$src" >"$1"
