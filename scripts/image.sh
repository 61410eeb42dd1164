#!/usr/bin/env bash
# The container image, from Debian's packages only (no base image from any
# registry): mmdebstrap makes a minimal Debian rootfs (the "essential"
# variant: no apt, no shell extras) with xdpperf's own .deb (`make deb`) and
# what it depends on, and podman imports it as an OCI image.
#
#   scripts/image.sh [--deb FILE] [--name NAME] [--suite SUITE] [--out DIR] [--tools]
#
#   --deb FILE    the package to install (default: scripts/build-deb.sh builds one into build/)
#   --name NAME   the image's name (default localhost/xdpperf:VERSION, VERSION the package's)
#   --suite SUITE Debian's suite (default bookworm, the one this tree builds on)
#   --out DIR     where the rootfs tarball, the package list and the summary go (default build/image)
#   --tools       also the .deb's recommended tools (iproute2, ethtool, nftables, conntrack, iputils-ping):
#                 an image that sets up its own addresses (deploy/containerlab/)
#
# Writes DIR/rootfs.tar, DIR/packages.txt (every package in the image, with
# its version) and DIR/summary.txt (the image's name, size and package count),
# and prints the summary. Needs root (mmdebstrap's root mode, podman) and
# Debian's mirrors (the host's apt sources are used). docs/container.md says
# how to run the image: never --privileged, only the capabilities it needs.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEB= NAME= SUITE=bookworm OUT=$ROOT/build/image TOOLS=
while (($#)); do
	case $1 in
	--deb) DEB=${2:?--deb needs a file}; shift 2 ;;
	--name) NAME=${2:?--name needs a name}; shift 2 ;;
	--suite) SUITE=${2:?--suite needs a suite}; shift 2 ;;
	--out) OUT=${2:?--out needs a directory}; shift 2 ;;
	--tools) TOOLS=,iproute2,ethtool,nftables,conntrack,iputils-ping; shift ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "image.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for t in mmdebstrap podman dpkg-deb; do
	command -v "$t" >/dev/null || { echo "image.sh: $t is missing: run scripts/deps.sh" >&2; exit 1; }
done
[[ $(id -u) -eq 0 ]] || { echo "image.sh: run it as root (mmdebstrap's root mode, podman)" >&2; exit 1; }
if [[ -z $DEB ]]; then
	DEB=$(bash "$ROOT/scripts/build-deb.sh" "$ROOT/build")
fi
[[ -f $DEB ]] || { echo "image.sh: no package at '$DEB'" >&2; exit 2; }
VERSION=$(dpkg-deb -f "$DEB" Version)
NAME=${NAME:-localhost/xdpperf:$VERSION}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

WORK=$(mktemp -d /tmp/xdpperf-image.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
cp "$DEB" "$WORK/"
deb=$WORK/$(basename "$DEB")

# --include takes the local .deb; apt pulls in its Depends (not its Recommends: the lab's tools).
# The hook mounts the .deb's directory inside the chroot, where apt's dpkg reads it.
# Man pages, docs (but their copyright files) and translations are left out.
t0=$SECONDS
mmdebstrap --variant=essential --include="$deb$TOOLS" \
	--hook-dir=/usr/share/mmdebstrap/hooks/file-mirror-automount \
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook='chroot "$1" dpkg-query -W -f="\${Package} \${Version}\n" >"$1/.packages"' \
	--customize-hook="copy-out /.packages $WORK" \
	--customize-hook='rm -f "$1/.packages"' \
	"$SUITE" "$WORK/rootfs.tar" >"$WORK/mmdebstrap.log" 2>&1 || {
	echo "image.sh: mmdebstrap failed; its last lines:" >&2
	tail -n 20 "$WORK/mmdebstrap.log" >&2
	exit 1
}
grep -q '^xdpperf ' "$WORK/.packages" || { echo "image.sh: xdpperf is not in the rootfs" >&2; exit 1; }
mv "$WORK/rootfs.tar" "$OUT/rootfs.tar"
sort "$WORK/.packages" >"$OUT/packages.txt"

# The image: xdpperf is the entry point, so `podman run IMAGE -s` is a server.
podman rmi -f "$NAME" >/dev/null 2>&1 || true
podman import --quiet \
	--change 'ENV=PATH=/usr/sbin:/usr/bin:/sbin:/bin' \
	--change 'ENTRYPOINT=["/usr/bin/xdpperf"]' \
	--change 'CMD=["--help"]' \
	--change "LABEL=org.opencontainers.image.title=xdpperf" \
	--change "LABEL=org.opencontainers.image.version=$VERSION" \
	"$OUT/rootfs.tar" "$NAME" >/dev/null
size=$(podman image inspect --format '{{.Size}}' "$NAME")
{
	echo "image $NAME"
	echo "size $size bytes ($((size / 1000000)) MB), rootfs tarball $(stat -c %s "$OUT/rootfs.tar") bytes"
	echo "packages $(wc -l <"$OUT/packages.txt") (list: $OUT/packages.txt)"
	echo "built in $((SECONDS - t0)) s from Debian $SUITE"
} | tee "$OUT/summary.txt"
