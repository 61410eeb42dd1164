# shellcheck shell=bash
# Sourced by scripts/bench.sh; the trafgen section.
#
# trafgen: the trafgen settings tried for its best one-core rate; the xsk and
#         live sections that follow in the same run use the one with the best
#         median and no failed run (trafgen_pick_best). Run alone, those
#         sections use the default below.

trafgen_cfg() { # FILE static|dinc
	local i
	if [[ $2 == dinc ]]; then
		cat >"$1" <<-CFG
		{
		  eth(da=$XP_CLIENT_GW_MAC, sa=$XP_CLIENT_MAC, type=0x0800),
		  ipv4(saddr=$XP_CLIENT4, daddr=$XP_SERVER4, ttl=64, df),
		  tcp(sp=dinc(10000, 59999), dp=dinc(63000, 63015), seq=1, aseq=1, ack, psh, win=65535),
		  fill(0x00, 6)
		}
		CFG
		return
	fi
	for ((i = 0; i < 64; i++)); do
		cat <<-CFG
		{
		  eth(da=$XP_CLIENT_GW_MAC, sa=$XP_CLIENT_MAC, type=0x0800),
		  ipv4(saddr=$XP_CLIENT4, daddr=$XP_SERVER4, ttl=64, df),
		  tcp(sp=$((10000 + i)), dp=$((63000 + i % 16)), seq=1, aseq=1, ack, psh, win=65535),
		  fill(0x00, 6)
		}
		CFG
	done >"$1"
}
TRAFGEN_OPTS=(-Q)   # the default; bench_trafgen replaces it with the best it measured
TRAFGEN_CFG=static
# trafgen's socket send buffer: the 4 MiB trafgen sets for itself
# (net.core.wmem_default, SMEM_SUG_DEF in netsniff-ng's sock.c) where it can;
# in a namespace it cannot, and scripts/bench/sndbuf.c sets it on its socket
# (why: that file's top). Empty: the namespace's default (the host's
# net.core.wmem_default), which bench_trafgen also runs to show what it does.
TRAFGEN_SNDBUF=4194304
# The preload library, built once per bench run (cc, as the build needs).
sndbuf_lib() {
	[[ -f $TMP/sndbuf.so ]] && return 0
	cc -O2 -Wall -shared -fPIC -o "$TMP/sndbuf.so" scripts/bench/sndbuf.c -ldl 2>"$TMP/sndbuf.err" ||
		die "cc scripts/bench/sndbuf.c (trafgen's send buffer)" "$TMP/sndbuf.err"
}
# trafgen -P CPUS [TRAFGEN OPTIONS...] for $T seconds, while an idle xdpperf
# --engine none test keeps the server's XDP program on the receiving veth.
# Any failure of trafgen stops the bench with trafgen's own error (in
# bench_trafgen, which runs it in a subshell: that run counts as failed).
run_trafgen() { # CPUS [OPTIONS...]
	local cpus=$1
	shift
	trafgen_cfg "$TMP/t.$TRAFGEN_CFG.cfg" "$TRAFGEN_CFG"   # this lab's addresses and MACs
	rm -f "$TMP/tg.txt" "$TMP/tg.err"   # no earlier run's error read as this one's
	local pre=()
	if [[ -n $TRAFGEN_SNDBUF ]]; then
		sndbuf_lib
		pre=(env LD_PRELOAD="$TMP/sndbuf.so" XP_SNDBUF="$TRAFGEN_SNDBUF")
	fi
	local n0
	n0=$(tests_begun)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 4)) --engine none -J >"$TMP/n.json" 2>"$TMP/n.err" &
	local cnt=$!
	BG+=("$cnt")
	wait_receiver "$n0" "$cnt" "xdpperf --engine none (the receiver for trafgen)" "$TMP/n.err"
	local rc=0
	ip netns exec "$XP_CLIENT_NS" "${pre[@]}" timeout -s INT "$T" trafgen -o "$XP_CLIENT_DEV" -i "$TMP/t.$TRAFGEN_CFG.cfg" \
		-P "$cpus" "$@" >"$TMP/tg.txt" 2>&1 || rc=$?
	# The lines neither trafgen's figure nor its error: the namespace refusing
	# trafgen's sysctl change (the preload does it instead), the preload's own.
	grep -v -e "Cannot set system socket memory" -e "^xp-sndbuf: " "$TMP/tg.txt" >"$TMP/tg.err"
	if ((rc != 0 && rc != 124)); then
		kill -INT "$cnt" 2>/dev/null; wait "$cnt" 2>/dev/null
		local buf="the namespace's default send buffer"
		[[ -n $TRAFGEN_SNDBUF ]] && buf="send buffer $TRAFGEN_SNDBUF B"
		die "trafgen -P $cpus $* (exit $rc, $buf)" "$TMP/tg.err"
	fi
	wait "$cnt" || die "xdpperf --engine none (the receiver for trafgen)" "$TMP/n.err"
	# Each of trafgen's -P processes opened its socket with the buffer asked for.
	if [[ -n $TRAFGEN_SNDBUF ]]; then
		local bad
		bad=$(grep -c "^xp-sndbuf: .*failed" "$TMP/tg.txt" || true)
		((bad == 0 && $(grep -c "^xp-sndbuf: fd [0-9]* sndbuf " "$TMP/tg.txt") >= cpus)) ||
			die "trafgen -P $cpus $* (its socket's send buffer was not set)" "$TMP/tg.txt"
	fi
	tr -d '\r' <"$TMP/tg.txt" | awk '/packets outgoing/ {s += $1} END {exit !(s > 0)}' ||
		die "trafgen -P $cpus $* (no packets outgoing)" "$TMP/tg.txt"
}

bench_trafgen() {
	echo "== trafgen settings for one core (-P 1), direct, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets"
	lab_up direct
	start_server
	# static:nsbuf is static -Q without the preload (sndbuf.c): trafgen's
	# socket with the namespace's default send buffer, which is how the
	# bench ran it before; its failed runs are what the preload is for.
	local specs=("dinc -Q" "static -Q" "static:nsbuf -Q" "static -Q -S 1MiB" "static -Q -S 64MiB" "static -Q -q" \
		"static -Q -H" "static -Q -t 0") r i k order fig sb
	for ((r = 1; r <= ROUNDS; r++)); do
		order=("${!specs[@]}")
		((r % 2)) || order=($(printf "%s\n" "${order[@]}" | tac))
		local figs=()
		for k in "${order[@]}"; do
			read -r cfg opts <<<"${specs[$k]}"
			sb=$TRAFGEN_SNDBUF
			[[ $cfg == *:nsbuf ]] && { cfg=${cfg%:nsbuf}; sb=""; }
			local why="" ok=1
			rx_sampler_start "$TMP/rx.smp"
			# shellcheck disable=SC2086
			(TRAFGEN_CFG=$cfg TRAFGEN_SNDBUF=$sb run_trafgen 1 $opts) 2>"$TMP/tgtry.err" || ok=0
			rx_sampler_stop
			if ((!ok)); then
				why=$(grep -m1 -i "failed" "$TMP/tg.err" 2>/dev/null || tail -n 1 "$TMP/tgtry.err")
			elif ! fig=$(steady "$TMP/rx.smp"); then
				why="the server veth's rx_packets did not rise for 1 s ($(wc -l <"$TMP/rx.smp") samples)"
			fi
			if [[ -z $why ]]; then
				echo "${fig%% *}" >>"$TMP/tg.$k"
			else
				echo "${specs[$k]}: $why" >>"$TMP/tg.failed"
				fig=failed
			fi
			figs[$k]=${fig%% *}
		done
		printf "  round %d:" "$r"
		for k in "${!specs[@]}"; do
			if [[ ${figs[$k]} == failed ]]; then printf " %13s" failed; else printf " %s" "$(fmt "${figs[$k]}")"; fi
		done
		echo
	done
	stop_server
	printf "  %-30s %-44s %s\n" "frames, options" "min / median / max" "failed runs"
	for i in "${!specs[@]}"; do
		local n=0 line="-"
		[[ -s $TMP/tg.$i ]] && line=$(mmm_line tg "$i")
		[[ -s $TMP/tg.failed ]] && n=$(grep -c "^${specs[$i]}:" "$TMP/tg.failed" || true)
		printf "  %-30s %-44s %s\n" "${specs[$i]/ / -P 1 }" "$line" "$n of $ROUNDS"
	done
	[[ -s $TMP/tg.failed ]] && sed 's/^/  failed: /' "$TMP/tg.failed" | sort | uniq -c
	echo "  (dinc: one frame whose ports trafgen rewrites for every frame; static: 64 prebuilt frames;"
	echo "   every run with trafgen's socket send buffer set to the $TRAFGEN_SNDBUF B trafgen sets for itself outside a"
	echo "   namespace (scripts/bench/sndbuf.c), except static:nsbuf: the namespace's read-only default,"
	echo "   net.core.wmem_default = $(ip netns exec "$XP_CLIENT_NS" cat /proc/sys/net/core/wmem_default) B, where trafgen's TX ring flush can get EAGAIN;"
	echo "   -S: TX ring size (default: trafgen's own); -q: through the qdisc instead of bypassing it;"
	echo "   -H: high priority; -t 0: no gap. trafgen's -b is a rate limit, not a batch size.)"
	trafgen_pick_best "${specs[@]}"
	echo "  the sections after this one run trafgen as: $TRAFGEN_CFG frames, ${TRAFGEN_OPTS[*]} (the best median above"
	echo "  with no failed run; static:nsbuf is not a candidate: it is the buffer whose flushes can fail)"
	echo
}
# trafgen_pick_best SPEC...: TRAFGEN_CFG and TRAFGEN_OPTS from the spec with
# the highest median in $TMP/tg.INDEX and no failed run in $TMP/tg.failed,
# so that xdpperf meets trafgen's best settings of this run, not a choice
# made once on another day (the 20:50 run's fixed choice, static -Q, had the
# lowest median of the eight). Stops the bench if no spec qualifies.
trafgen_pick_best() {
	local i best="" bmed=0 med
	for ((i = 1; i <= $#; i++)); do
		local spec=${!i}
		[[ $spec == *:nsbuf* ]] && continue
		[[ -s $TMP/tg.$((i - 1)) ]] || continue
		[[ -s $TMP/tg.failed ]] && grep -q "^$spec:" "$TMP/tg.failed" && continue
		med=$(fig_of tg $((i - 1)) med)
		if [[ -z $best ]] || (($(echo "$med > $bmed" | bc -l))); then best=$spec bmed=$med; fi
	done
	[[ -n $best ]] || { echo "bench: no trafgen setting ran in every round without failing" >&2; exit 1; }
	local opts
	read -r TRAFGEN_CFG opts <<<"$best"
	read -r -a TRAFGEN_OPTS <<<"$opts"
}
