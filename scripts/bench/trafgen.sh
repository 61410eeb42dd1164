# shellcheck shell=bash
# Sourced by scripts/bench.sh; the trafgen section.
#
# trafgen: the trafgen settings tried for its best one-core rate (the xsk and
#         live sections use the best: a static list of 64 frames, -P 1).

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
TRAFGEN_OPTS=(-Q)   # the best one-core settings found (see bench_trafgen)
TRAFGEN_CFG=static
# The tests the server has begun ("[peer] KIND test (" lines in its log).
tests_begun() { grep -cE '^\[[^]]*\] [a-z]+ test \(' "$TMP/server.log" || true; }
# trafgen -P CPUS [TRAFGEN OPTIONS...] for $T seconds, while an idle xdpperf
# --engine none test keeps the server's XDP program on the receiving veth.
run_trafgen() { # CPUS [OPTIONS...]
	local cpus=$1
	shift
	trafgen_cfg "$TMP/t.$TRAFGEN_CFG.cfg" "$TRAFGEN_CFG"   # this lab's addresses and MACs
	local n0
	n0=$(tests_begun)
	ip netns exec "$XP_CLIENT_NS" "$BIN" -c "$XP_SERVER4" -t $((T + 4)) --engine none -J >"$TMP/n.json" 2>"$TMP/n.err" &
	local cnt=$!
	BG+=("$cnt")
	# Until the server has begun this test and its XDP program is on the veth.
	local t0=$SECONDS
	until (($(tests_begun) > n0)) &&
		ip netns exec "$XP_SERVER_NS" ip -o link show "$XP_SERVER_DEV" | grep -qE " xdp(generic|drv)? "; do
		kill -0 "$cnt" 2>/dev/null || die "xdpperf --engine none (the receiver for trafgen)" "$TMP/n.err"
		((SECONDS - t0 < 4)) || die "xdpperf --engine none (no test with XDP on $XP_SERVER_DEV after 4 s)" "$TMP/n.err"
		sleep 0.05
	done
	local rc=0
	ip netns exec "$XP_CLIENT_NS" timeout -s INT "$T" trafgen -o "$XP_CLIENT_DEV" -i "$TMP/t.$TRAFGEN_CFG.cfg" \
		-P "$cpus" "$@" >"$TMP/tg.txt" 2>&1 || rc=$?
	# trafgen 0.6.8 gives up when the kernel answers its TX ring flush with
	# EAGAIN (the veth's queue is full; the qdisc bypass has no queue to wait
	# in): bench_trafgen counts how often. Status 75 lets measure_rx run it
	# again once (said on stderr), so trafgen's figure is not lost to its own
	# error handling; a second failure stops the bench.
	if ((rc == 1)) && grep -q "Flushing TX_RING failed: Resource temporarily" "$TMP/tg.txt"; then
		kill -INT "$cnt" 2>/dev/null; wait "$cnt" 2>/dev/null
		return 75
	fi
	if ((rc != 0 && rc != 124)); then
		kill -INT "$cnt" 2>/dev/null; wait "$cnt" 2>/dev/null
		grep -v "Cannot set system socket memory" "$TMP/tg.txt" >"$TMP/tg.err"
		die "trafgen -P $cpus $* (exit $rc)" "$TMP/tg.err"
	fi
	wait "$cnt" || die "xdpperf --engine none (the receiver for trafgen)" "$TMP/n.err"
	tr -d '\r' <"$TMP/tg.txt" | awk '/packets outgoing/ {s += $1} END {exit !(s > 0)}' ||
		die "trafgen -P $cpus $* (no packets outgoing)" "$TMP/tg.txt"
}

bench_trafgen() {
	echo "== trafgen settings for one core (-P 1), direct, ${T} s per run, $ROUNDS alternating rounds"
	echo "   yardstick: the server veth's rx_packets"
	lab_up direct
	start_server
	local specs=("dinc -Q" "static -Q" "static -Q -S 1MiB" "static -Q -S 64MiB" "static -Q -q" \
		"static -Q -H" "static -Q -t 0") r i k order fig
	for ((r = 1; r <= ROUNDS; r++)); do
		order=("${!specs[@]}")
		((r % 2)) || order=($(printf "%s\n" "${order[@]}" | tac))
		local figs=()
		for k in "${order[@]}"; do
			read -r cfg opts <<<"${specs[$k]}"
			rx_sampler_start "$TMP/rx.smp"
			# shellcheck disable=SC2086
			if (TRAFGEN_CFG=$cfg run_trafgen 1 $opts) 2>"$TMP/tgtry.err" && fig=$(steady "$TMP/rx.smp"); then
				echo "${fig%% *}" >>"$TMP/tg.$k"
			else
				echo "${specs[$k]}: $(grep -m1 -i "failed" "$TMP/tg.txt" || tail -n 1 "$TMP/tgtry.err")" >>"$TMP/tg.failed"
				fig=failed
			fi
			rx_sampler_stop
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
	echo "   -S: TX ring size (default: trafgen's own); -q: through the qdisc instead of bypassing it;"
	echo "   -H: high priority; -t 0: no gap. trafgen's -b is a rate limit, not a batch size.)"
	echo
}
