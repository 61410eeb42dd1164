#!/usr/bin/env bash
# Build the .deb from this tree without touching it:
#
#   scripts/build-deb.sh OUTDIR
#
# copies the tree's files (tracked and new ones, not ignored ones such as
# build/) into a temporary directory, runs `dpkg-buildpackage -us -uc -b`
# there with the version git gives this tree, and moves the .deb into OUTDIR.
# Prints the .deb's path. Exit status 1 if the build fails (its log is kept
# and named), 2 for bad arguments.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
(($# == 1)) || { echo "usage: build-deb.sh OUTDIR" >&2; exit 2; }
mkdir -p "$1"
OUT=$(cd "$1" && pwd)

WORK=$(mktemp -d /tmp/xdpperf-deb.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/xdpperf

if git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
	mkdir -p "$SRC"
	git -C "$ROOT" ls-files -z --cached --others --exclude-standard |
		(cd "$ROOT" && xargs -0 -r sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh) |
		tar -C "$ROOT" --null -T - -cf - | tar -C "$SRC" -xf -
	XP_VERSION=$(git -C "$ROOT" describe --always --dirty)
	export XP_VERSION
else
	# Not a git tree (a tarball): everything but the build output; the version is the package's.
	mkdir -p "$SRC"
	tar -C "$ROOT" --exclude=./build --exclude=./xdpperf -cf - . | tar -C "$SRC" -xf -
fi

LOG=$OUT/xdpperf-deb-build.log
if ! (cd "$SRC" && DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) >"$LOG" 2>&1; then
	echo "build-deb.sh: dpkg-buildpackage failed; its log: $LOG" >&2
	tail -n 20 "$LOG" >&2
	exit 1
fi
deb=$(ls "$WORK"/xdpperf_*.deb)
mv "$WORK"/xdpperf_*.deb "$OUT"/
echo "$OUT/$(basename "$deb")"
