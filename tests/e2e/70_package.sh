#!/usr/bin/env bash
# End-to-end tests of installing xdpperf like a Debian tool: `make install
# DESTDIR=` gives a tree that runs where it is (binary, man page, completion,
# xdpperf-lab) and `make uninstall` removes it; the .deb builds with
# dpkg-buildpackage (in a copy, outside the tree), and the binary unpacked
# from it runs --version and a short lab test, with the unpacked lab script,
# its counts checked against the router's own counters.
. "$(dirname "$0")/lib.sh"

# The version the tree's binary must report: git's, or the VERSION file's outside git.
want_version() {
	git -C "$XP_ROOT" describe --always --dirty 2>/dev/null || cat "$XP_ROOT/VERSION"
}
stat_of() { xp_exec "$1" cat "/sys/class/net/$2/statistics/$3"; }

# ---------------------------------------------------------------------------
xp_case make_install_runnable_tree
I=$XP_TMP/inst
PFX=/usr/local
xp_check "make install DESTDIR PREFIX" make -s -C "$XP_ROOT" install DESTDIR="$I" PREFIX="$PFX"
xp_check "files in place" eval 'for f in bin/xdpperf bin/xdpperf-lab share/man/man1/xdpperf.1 share/bash-completion/completions/xdpperf share/xdpperf/scripts/lab.sh; do [[ -f $I$PFX/$f ]] || { echo "missing $PFX/$f"; exit 1; }; done'
xp_check "installed --version is the tree's" expect_eq version "$("$I$PFX/bin/xdpperf" --version | head -n 1)" "xdpperf $(want_version)"
xp_check "--version names libbpf and libxdp" eval '"$I$PFX/bin/xdpperf" --version | grep -q "^libbpf " && "$I$PFX/bin/xdpperf" --version | grep -q "^libxdp "'
xp_check "man -l shows the installed page without warnings" eval 'out=$(MANWIDTH=80 man --warnings -l "$I$PFX/share/man/man1/xdpperf.1" 2>&1 >/dev/null); [[ -z $out ]] || { echo "$out"; false; }'
xp_check "the page has the options and exit statuses" eval 'MANWIDTH=80 man -l "$I$PFX/share/man/man1/xdpperf.1" 2>/dev/null | grep -q "EXIT STATUS" && MANWIDTH=80 man -l "$I$PFX/share/man/man1/xdpperf.1" 2>/dev/null | grep -q -- "--probe"'
xp_check "installed completion completes --engine" expect_eq completion \
	"$(bash --norc -c 'source "$0"; COMP_WORDS=(xdpperf --engine l); COMP_CWORD=2; _xdpperf; echo "${COMPREPLY[*]}"' "$I$PFX/share/bash-completion/completions/xdpperf")" live
xp_check "xdpperf-lab runs from the tree" eval '"$I$PFX/bin/xdpperf-lab" help | grep -q "usage: lab.sh up"'
xp_check "make uninstall leaves no file" eval 'make -s -C "$XP_ROOT" uninstall DESTDIR="$I" PREFIX="$PFX" && left=$(find "$I" -type f) && [[ -z $left ]] || { echo "left: $left"; false; }'
xp_pass

# ---------------------------------------------------------------------------
xp_case deb_builds
D=$XP_TMP/deb
xp_check "changelog version == VERSION" expect_eq version "$(cd "$XP_ROOT" && dpkg-parsechangelog -S Version)" "$(cat "$XP_ROOT/VERSION")"
t0=$SECONDS
xp_check "dpkg-buildpackage -us -uc -b (in a copy)" eval 'DEB=$(bash "$XP_ROOT/scripts/build-deb.sh" "$D") && [[ -f $DEB ]]'
echo "    figures: .deb built in $((SECONDS - t0)) s: $(basename "${DEB:-none}")"
xp_check "the tree stays clean (no debian/ build output)" eval 'st=$(git -C "$XP_ROOT" status --porcelain --ignored -- debian 2>/dev/null); [[ -z $st ]] || { echo "$st"; false; }'
xp_check "Depends from shlibs (libbpf, libxdp)" eval 'dpkg-deb -f "$DEB" Depends | grep -q "libbpf1" && dpkg-deb -f "$DEB" Depends | grep -q "libxdp1"'
xp_check "the lab's tools as Recommends" eval 'dpkg-deb -f "$DEB" Recommends | grep -q "iproute2"'
R=$XP_TMP/root
xp_check "unpack into a temporary root" dpkg-deb -x "$DEB" "$R"
xp_check "unpacked files" eval 'for f in usr/bin/xdpperf usr/bin/xdpperf-lab usr/share/man/man1/xdpperf.1.gz usr/share/bash-completion/completions/xdpperf usr/share/xdpperf/scripts/lab.sh; do [[ -f $R/$f ]] || { echo "missing /$f"; exit 1; }; done'
xp_check "man -l shows the packaged page" eval 'MANWIDTH=80 man -l "$R/usr/share/man/man1/xdpperf.1.gz" 2>/dev/null | grep -q "XDPPERF(1)"'
xp_pass

# ---------------------------------------------------------------------------
xp_case deb_binary_version
PB=$R/usr/bin/xdpperf
xp_check "packaged --version is the tree's" expect_eq version "$("$PB" --version | head -n 1)" "xdpperf $(want_version)"
xp_check "it is not the tree's binary" eval '! cmp -s "$PB" "$XP_BIN"'
xp_pass

# ---------------------------------------------------------------------------
xp_case deb_binary_lab_test
# The packaged lab script brings the lab up, the packaged binary runs both ends.
XP_LAB=$R/usr/bin/xdpperf-lab
xp_check "lab up with the packaged xdpperf-lab" xp_lab_up
XP_BIN=$PB
xp_check "packaged server" start_server
f0=$(stat_of router xpr1 tx_packets)
xp_check "packaged client, 2 s at 20 kpps" eval 'xp_exec client "$PB" -c "$XP_SERVER4" -t 2 -b 20kpps --queues 1 -J >"$J"'
f1=$(stat_of router xpr1 tx_packets)
sent=$(jqv .end.sum.sent.packets)
echo "    figures: packaged binary: engine $(jqv .start.engine), sent $sent, received $(jqv .end.sum.received.packets), router xpr1 tx_packets +$((f1 - f0))"
xp_check "about 40000 sent (or said short)" expect_near_or_said_short sent "$sent" 40000 1000 "$J"
xp_check "received == sent" expect_eq received "$(jqv .end.sum.received.packets)" "$sent"
xp_check "router forwarded them (sysfs, + control traffic)" expect_near "router xpr1 tx" "$((f1 - f0))" "$sent" 100
xp_check "the server ran from the package" eval 'grep -q "" "$SRV_LOG"; [[ $(readlink -f /proc/$SRV_PID/exe) == "$(readlink -f "$PB")" ]]'
xp_pass
