#!/usr/bin/env bash
# Install every Debian package that building, the demo and the tests need.
# A no-op (no apt-get call at all) when everything is already present.
set -euo pipefail

PKGS=(
  # build
  make gcc clang llvm pkg-config bpftool
  libbpf-dev libxdp-dev libelf-dev zlib1g-dev libjson-c-dev libmnl-dev libcap-dev libcmocka-dev libssl-dev
  # the --metrics endpoint's HTTP server (user/report/metrics_http.c)
  libmicrohttpd-dev
  # the sanitizer builds and fuzzers of `make check` and `make fuzz`: clang's
  # ASan, UBSan and libFuzzer runtimes (the clang package only recommends them)
  libclang-rt-dev
  # the man page's check (groff -man -ww, man -l), bash completion, the .deb (dpkg-buildpackage)
  groff-base man-db bash-completion debhelper dpkg-dev fakeroot
  # lab, tests, benchmarks
  iproute2 iputils-ping python3 ethtool nftables conntrack tcpdump tshark netsniff-ng iperf3 jq procps
  gnuplot-nox bc
  # capsh: tests/e2e/91_caps.sh decodes /proc/PID/status capability sets with it
  libcap2-bin
  # a TCP server with no xdpperf on it, for --peer kernel without a control channel (started in a test's namespace)
  nginx-light
  # tests/otg/otg_check.py: every OTG API body against the models' schemas (tests/otg/make_schema.py reads the YAML)
  python3-jsonschema python3-yaml curl
  # tests/e2e/98_metrics.sh: a real Prometheus scrapes --metrics (promtool checks its text)
  prometheus
  # scripts/image.sh and tests/e2e/99_container.sh: the container image from Debian packages, and running it
  mmdebstrap podman runc
  # podman kube play (99_container) builds its pod's infra image around catatonit
  catatonit
)

missing=()
for p in "${PKGS[@]}"; do
  st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$st" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "deps.sh: missing packages: ${missing[*]}; run as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi

echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer for it.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -qq
# Packages with a daemon (nginx) must not start it on the host: the tests start theirs in namespaces.
# policy-rc.d says so to invoke-rc.d; ours only while we install, someone else's is left alone.
own_policy=
if [[ ! -e /usr/sbin/policy-rc.d ]]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own_policy=1
fi
rc=0
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || rc=$?
[[ -z $own_policy ]] || rm -f /usr/sbin/policy-rc.d
exit $rc
