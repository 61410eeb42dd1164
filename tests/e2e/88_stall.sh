#!/usr/bin/env bash
# End-to-end tests of stalls (issue 30, point 4): a device that stops taking
# new connections mid-test (the router's nft quota on new SYNs runs out, as a
# full connection table would refuse them: nf_conntrack_max itself is global
# and read-only inside a namespace) stalls the XDP connection engine. The
# summary's first line says so, with the device's reason from
# --device-netns, -J has it, and --max-loss (or --stall) makes the exit
# status say it. A frame stream whose path stops forwarding while it sends
# stalls the same way; a clean run reports no stall.
. "$(dirname "$0")/lib.sh"

BIN=$XP_BIN
client() { xp_exec client "$BIN" "$@"; }
quota_drops() { xp_exec router nft -j list table inet xpstall | jq '[.nftables[] | .rule? | select(.) | .expr[] | .counter? | select(.) | .packets] | add'; }
# The line after the summary's separator.
first_line() { awk '/^- - - - -/ { getline; print; exit }' "$1"; }

# ---------------------------------------------------------------------------
xp_case connection_engine_stall_first_and_exit
xp_check "lab up with the firewall" xp_lab_up --firewall
xp_check "server" start_server
xp_check "flush conntrack" xp_exec router conntrack -F
# New SYNs (not SYN-ACKs) pass until 30000 of them (74-byte frames, 60 bytes at the IP layer: 1800000
# bytes) went through; every one after that is dropped and counted: about 3 s into a 10 k/s test.
xp_check "router: new SYNs stop after a quota" eval 'xp_exec router nft -f - <<-NFT
	table inet xpstall {
		chain stallq {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags & (syn | ack) == syn quota over 1800000 bytes counter drop
		}
	}
	NFT'
xp_check "-x at 10k/s for 6 s with --max-loss 50" eval '
	rc=0; client -c "$XP_SERVER4" --engine xdp -x --cps 10000 -P 1000 -t 6 --max-loss 50 \
		--device-netns "$(xp_ns router)" >"$XP_TMP/x.txt" 2>&1 || rc=$?
	cat "$XP_TMP/x.txt"; expect_eq "exit status" "$rc" 3'
xp_check "the router dropped SYNs" eval '(( $(quota_drops) > 1000 ))'
xp_check "first line: the stall, with the device's reason" eval '
	l=$(first_line "$XP_TMP/x.txt"); echo "$l"
	[[ $l == "WARNING: stalled at "*"connections completed fell to "*"; likely "*"conntrack"* ]]'
xp_check "stderr: stalled, more than --max-loss" eval 'grep -q "xdpperf: the test stalled at" "$XP_TMP/x.txt"'
xp_check "reset the quota" eval 'xp_exec router nft delete table inet xpstall && xp_exec router conntrack -F'
xp_check "the same in -J, without --max-loss: reported, exit 0" eval '
	xp_exec router nft -f - <<-NFT
	table inet xpstall {
		chain stallq {
			type filter hook forward priority -10; policy accept;
			tcp dport 63000-63015 tcp flags & (syn | ack) == syn quota over 1800000 bytes counter drop
		}
	}
	NFT
	client -c "$XP_SERVER4" --engine xdp -x --cps 10000 -P 1000 -t 6 -J >"$J"'
xp_check "-J: stall from about 3 s, near 0/s" eval '
	jq -c .end.stall "$J"; jq -e ".end.stall.from_seconds >= 2 and .end.stall.from_seconds <= 4 and
		.end.stall.connections_per_second < 1000 and .end.stall.running_peak_per_second > 8000" "$J" >/dev/null'
xp_check "remove the quota" eval 'xp_exec router nft delete table inet xpstall && xp_exec router conntrack -F'
xp_check "a clean run: no stall, exit 0 with --stall 10" eval '
	client -c "$XP_SERVER4" --engine xdp -x --cps 10000 -P 1000 -t 3 --stall 10 -J >"$J" && jq -e ".end.stall == null" "$J" >/dev/null'
xp_pass

# ---------------------------------------------------------------------------
xp_case frame_stream_stall_while_sending
# UDP frames of 64 bytes (46 at the IP layer) pass until 2000000 bytes, about 2 s at 20 kpps.
xp_check "router: the test's UDP stops after a quota" eval 'xp_exec router nft -f - <<-NFT
	table inet xpstall {
		chain stallq {
			type filter hook forward priority -10; policy accept;
			udp dport 63000-63015 quota over 2000000 bytes counter drop
		}
	}
	NFT'
xp_check "-u at 20 kpps for 5 s with --stall 10" eval '
	rc=0; client -c "$XP_SERVER4" -u -b 20kpps -t 5 --stall 10 >"$XP_TMP/u.txt" 2>&1 || rc=$?
	cat "$XP_TMP/u.txt"; expect_eq "exit status" "$rc" 3'
xp_check "first line: frames received fell while sending went on" eval '
	l=$(first_line "$XP_TMP/u.txt"); echo "$l"
	[[ $l == "WARNING: stalled at "*"frames received while sending went on fell to "* ]]'
xp_check "remove the quota" xp_exec router nft delete table inet xpstall
xp_pass
