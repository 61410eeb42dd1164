#!/usr/bin/env bash
# `make rfc2544`: the full RFC 2544 suite (all sizes, all tests, RFC trial
# lengths: hours) against the netns lab's router, with the tables on stdout,
# the plots, their data and summary.md in
# build/rfc2544/ (add -J for every trial as JSON). XP_RFC2544_ARGS adds suite options, e.g.
#   XP_RFC2544_ARGS="--trial 10 --b2b-trials 2 --latency-trials 2" make rfc2544
# Uses the lab's fixed namespaces: on a shared machine run it under the e2e
# lock (flock /tmp/xdpperf-e2e.lock make rfc2544).
set -euo pipefail
cd "$(dirname "$0")/.."

LAB=scripts/lab.sh
BIN=$PWD/xdpperf
OUT=$PWD/build/rfc2544
SRV_PID=""
cleanup() {
	[[ -n $SRV_PID ]] && kill "$SRV_PID" 2>/dev/null && wait "$SRV_PID" 2>/dev/null
	bash "$LAB" down >/dev/null 2>&1 || true
}
trap cleanup EXIT INT TERM

[[ -x $BIN ]] || { echo "rfc2544: build first (make)" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "rfc2544: run as root (it creates network namespaces)" >&2; exit 1; }
mkdir -p "$OUT"
bash "$LAB" up >/dev/null
eval "$(bash "$LAB" env)"
ip netns exec "$XP_SERVER_NS" "$BIN" -s >"$OUT/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 50); do
	ip netns exec "$XP_SERVER_NS" bash -c "exec 3<>/dev/tcp/127.0.0.1/5301" 2>/dev/null && break
	sleep 0.1
done
# shellcheck disable=SC2086 # XP_RFC2544_ARGS is a list of options
ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" --rfc2544 --plot "$OUT" ${XP_RFC2544_ARGS:-}
