// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive-side XDP program: counts test traffic per test slot.
 *
 * A frame belongs to a test when it is TCP or UDP over IPv4/IPv6 (optionally
 * behind up to two VLAN tags) and its destination port maps to an active slot
 * that counts that protocol. Such frames are counted in the slot's per-CPU
 * counters and dropped (measure the wire, not the stack) unless the slot asks
 * for XDP_PASS (socket tests). Everything else is passed untouched.
 *
 * A slot is bound to its interface, its client and this host (struct
 * xp_slot_cfg, xp_slot_owns in server_slot.h): a frame to its ports that
 * arrives elsewhere, from another source, or that is not addressed to this
 * host (another destination MAC or an IP address the interface does not
 * hold: a frame we forward, or one DNAT will rewrite after us) is not the
 * test's, and passes uncounted (XP_G_FOREIGN), so nobody else can add to a
 * test's counters or have their traffic dropped, answered or reflected by
 * it, whatever addresses its client named. The one exception: a frame from
 * the client, not addressed to this host, that carries the test's stamp
 * with its right tag (a keyed 32-bit value under the test's secret,
 * lib/stamp.h, xp_tag_ok) is the test's: counted and accounted, but never
 * answered or reflected (that would send from an address not ours).
 * IPv4 fragments pass uncounted too (XP_G_FRAGMENT): a later fragment has
 * no ports, and dropping the first while the rest wait in reassembly helps
 * nobody.
 *
 * A slot with XP_SLOT_RESPOND also answers its TCP frames, statelessly, so
 * connection tests need no sockets and no per-connection state anywhere
 * (see xp_respond below, bpf/lib/syncookie.h and bpf/lib/tcp_reply.h). Its
 * frames are counted exactly as in any slot first. It answers only what a
 * TCP stack would (xp_answer): a unicast frame to this interface's MAC and
 * one of its addresses, from a unicast source, with a valid TCP checksum;
 * the reply goes back to the frame's source. Every frame it does not answer
 * is counted in one noreply_* counter.
 *
 * A slot with XP_SLOT_REFLECT (round-trip mode) sends each stamped frame
 * back to the client after counting and accounting it (xp_reflect_frame,
 * bpf/lib/reflect.h); the client's bpf/rtt.bpf.c times it there.
 *
 * gstats accounting: every frame bumps XP_G_SEEN, then exactly one of
 * "counted in a slot", XP_G_PASSED or XP_G_MALFORMED, so
 * SEEN == sum(slot pkts) + PASSED + MALFORMED.
 */
/* vmlinux.h has a typedef named config (zstd's): rename it on the way in,
 * the name is our rodata variable's (struct xp_server_config). */
#define config xp_vmlinux_config
#include "vmlinux.h"
#undef config
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "server.h"
#include "lib/addr.h"
#include "lib/consts.h"
#include "lib/csum.h"
#include "lib/parsing.h"
#include "lib/syncookie.h"
#include "lib/tcp_reply.h"
#include "lib/mutate.h"
#include "lib/reflect.h"
#include "lib/stamp.h"
#include "measure.h"
#include "server_maps.h"
#include "server_meas.h"

/* Set by the loader before load; see struct xp_server_config. */
const volatile struct xp_server_config config = {};

/* What our SYN-ACKs announce: Linux's values for a 1500-byte MTU and
 * default buffers. The SYN-ACK window is never scaled (RFC 7323); later
 * segments use XP_SRV_WINDOW << XP_SRV_WSCALE = 64256 bytes, as Linux shows
 * after a handshake. */
#define XP_SRV_MSS4       1460
#define XP_SRV_MSS6       1440
#define XP_SRV_WSCALE     7
#define XP_SRV_SYN_WINDOW 65535
#define XP_SRV_WINDOW     502
/* Our TSval clock: ns >> 20, a ~1 ms tick like Linux's. Receivers only echo
 * it; PAWS needs it monotonic, which it is. It is read from the coarse clock
 * (xp_respond): a TSval is no latency stamp, and one kernel tick of lag
 * (4 ms at HZ=250) is harmless where the unit is ~1 ms. */
#define XP_SRV_TS_SHIFT   20

/* gstats[IDX] += 1. The first argument names the counter for its mutation
 * (lib/mutate.h, scripts/mutate.sh: -DXP_MUT_g_seen breaks XP_G_SEEN only). */
#define gstat_inc(name, idx)                                              \
	do {                                                              \
		__u32 gk_ = (idx);                                        \
		__u64 *gv_ = bpf_map_lookup_elem(&gstats, &gk_);          \
		if (gv_)                                                  \
			XP_ADD_AS(name, *gv_, 1);                         \
	} while (0)

/* The keepalive check's state (struct xp_ka_steps, xp_ka_budget in
 * server.h). Only this program uses them; the device-bound copy
 * (server_hwts.bpf.c) shares them with it, as all its maps. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_ka_steps);
} ka_steps SEC(".maps");

/* Per CPU: no atomics, and a flood on one CPU spends that CPU's budget. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xp_ka_budget);
} ka_budget SEC(".maps");

/*
 * A SYN-ACK of the slot carries a cookie of step t: note the step (and the
 * slot's first), which makes it a candidate of later keepalive searches.
 * Plain stores: CPUs that race here write the same step, or (first) steps
 * a few ns apart, which the search's one round of slack covers.
 */
static __always_inline void xp_ka_note(__u32 slot, __u32 t)
{
	struct xp_ka_steps *ks = bpf_map_lookup_elem(&ka_steps, &slot);
	__u32 i = t & (XP_KA_STEPS - 1);

	if (!ks)
		return;
	if (!ks->first)
		ks->first = (1ull << 32) | t;
	if (ks->step[i] != t)
		ks->step[i] = t;
}

/*
 * Keepalives of held connections: a pure ACK with seq = the client's ISN
 * (one below the handshake's ACK) and ack = our cookie + 1. Its cookie is as
 * old as the connection, far past the 8 steps (0.5 s) its 3 time bits name,
 * so the step is searched: the latest step with those bits, then 8 steps
 * earlier each round, in a bpf_loop so the verifier sees the body once; only
 * pure ACKs no other check took get here.
 *
 * The bound (hostile input: a flood of forged pure ACKs lands here):
 *  - rounds: from one round before the slot's first cookie up to now,
 *    oldest first, at most XP_KA_ROUNDS (274 s); a 10 s test walks 20
 *    rounds. A round is two array lookups and a compare (7-11 ns).
 *  - MACs: one per round whose step the slot issued a cookie in
 *    (ka_steps), i.e. at most the test's SYN-ACK steps of the cookie's
 *    3-bit class: a hold test that opened in 1 s has ~2 per class; a
 *    connection test issuing cookies all the time, one per round.
 *  - per CPU, XP_KA_MAC_BUDGET MACs a second (config.ka_mac_budget; a
 *    burst of one second's worth), a round costing a quarter of a MAC
 *    (XP_KA_ROUND_SHIFT): a search that finds the bucket empty stops, and
 *    its ACK is keepalive_unchecked, neither a keepalive nor an invalid
 *    cookie.
 * Worst case per frame: 3 MACs (the xp_cookie_check calls of xp_respond) +
 * min(512, rounds since the slot's first cookie) rounds and as many MACs at
 * most (~26 us, a slot that issued cookies for 274 s, the budget not yet
 * spent). Per second and CPU, whatever arrives: XP_KA_MAC_BUDGET MACs' worth
 * of searching (~26 ms of a core), then ~0.4 us a pure ACK. Measured with
 * BPF_PROG_RUN: a forged pure ACK 0.3 us at a fresh slot, 0.46 us at a 10 s
 * old hold, against 20-28 us for every one before. A forged ACK matches
 * with probability 2^-27 per MAC it gets: ~2 here for a hold, 512 before.
 */
enum { XP_KA_NONE, XP_KA_FOUND, XP_KA_UNCHECKED };

/* The walk's state, on the stack of xp_respond's frame, which with the
 * callback's and xp_siphash24's is at the verifier's 512 bytes: the hash
 * input is built here once (only its last word, the step's, changes), and
 * the callback looks the maps up itself, keyed from here. */
struct xp_ka_walk {
	__u64 m[6];
	__u32 n, slot, cookie, tlo; /* tlo: the oldest candidate step */
	int res;
	__u32 zero; /* ka_budget's key */
};

static __always_inline __u64 xp_ka_cost(void)
{
	return 1000000000ull / (config.ka_mac_budget ? config.ka_mac_budget : XP_KA_MAC_BUDGET);
}

static long xp_ka_step(__u64 i, void *arg)
{
	struct xp_ka_walk *w = arg;
	__u32 t = w->tlo + (__u32)i * (XP_COOKIE_T_MASK + 1);
	struct xp_ka_steps *ks = bpf_map_lookup_elem(&ka_steps, &w->slot);
	struct xp_ka_budget *b = bpf_map_lookup_elem(&ka_budget, &w->zero);
	__u64 tw;

	if (!ks || !b)
		return 1;
	/* Every round costs budget, a MAC more: nothing hostile input can
	 * send makes the search cost more than the budget a second. */
	if (b->credit_ns < xp_ka_cost() >> XP_KA_ROUND_SHIFT) {
		w->res = XP_KA_UNCHECKED;
		return 1;
	}
	b->credit_ns -= xp_ka_cost() >> XP_KA_ROUND_SHIFT;
	if (ks->step[t & (XP_KA_STEPS - 1)] != t)
		return 0; /* no cookie of ours from step t: nothing to check */
	if (b->credit_ns < xp_ka_cost()) {
		w->res = XP_KA_UNCHECKED;
		return 1;
	}
	b->credit_ns -= xp_ka_cost();
	XP_INC_AS(ka_macs, b, macs);
	tw = xp_cookie_msg_t(t, w->cookie & XP_COOKIE_MSS_MASK);
	if (w->n == 6)
		w->m[5] = tw;
	else
		w->m[2] = tw;
	if (xp_cookie_mac_of(config.cookie_key[0], config.cookie_key[1], w->m, w->n) ==
	    w->cookie >> XP_COOKIE_MAC_SHIFT) {
		w->res = XP_KA_FOUND;
		return 1;
	}
	return 0;
}

static __always_inline int xp_is_keepalive(const struct xp_cookie_flow *f, const struct xp_tcp_seg *sg,
					   __u32 slot, __u32 now_t)
{
	struct xp_ka_walk w = { .slot = slot, .cookie = sg->ack - 1 };
	__u32 lo = (w.cookie >> XP_COOKIE_MSS_BITS) & XP_COOKIE_T_MASK, rounds, t0;
	struct xp_ka_steps *ks;
	struct xp_ka_budget *b;
	__s32 since;
	__u64 now, el;

	if (sg->payload)
		return XP_KA_NONE;
	/* Keys from w: every other stack byte of this frame is taken. */
	ks = bpf_map_lookup_elem(&ka_steps, &w.slot);
	b = bpf_map_lookup_elem(&ka_budget, &w.zero);
	if (!ks || !b || !ks->first)
		return XP_KA_NONE; /* the slot never issued a cookie */
	t0 = now_t - ((now_t - lo) & XP_COOKIE_T_MASK);
	/* Steps t0 - 8i down to one round before the first cookie's step. */
	since = (__s32)(t0 - (__u32)ks->first);
	if (since < -(__s32)(XP_COOKIE_T_MASK + 1))
		return XP_KA_NONE;
	rounds = (__u32)(since + XP_COOKIE_T_MASK + 1) / (XP_COOKIE_T_MASK + 1) + 1;
	if (rounds > XP_KA_ROUNDS)
		rounds = XP_KA_ROUNDS;
	/* Oldest first: a held connection's cookie is from when the test
	 * opened it, near its first cookie, so its keepalives are found in
	 * a few rounds however long the test has run. */
	w.tlo = t0 - (rounds - 1) * (XP_COOKIE_T_MASK + 1);
	/* Refill the bucket: credit in ns, at most one second of it. (The
	 * clock read again, not xp_respond's: a value kept across this
	 * would not fit its frame's stack.) */
	now = bpf_ktime_get_ns();
	el = now - b->last_ns;
	b->last_ns = now;
	b->credit_ns = el >= 1000000000ull - b->credit_ns ? 1000000000ull : b->credit_ns + el;
	w.n = xp_cookie_msg(f, sg->seq, t0, w.cookie & XP_COOKIE_MSS_MASK, w.m);
	bpf_loop(rounds, xp_ka_step, &w, 0);
	return w.res;
}

static __always_inline void xp_cookie_flow_of(const struct xp_tcp_seg *sg,
					      struct xp_cookie_flow *f)
{
	__builtin_memcpy(f->saddr, sg->saddr, sizeof(f->saddr));
	__builtin_memcpy(f->daddr, sg->daddr, sizeof(f->daddr));
	f->sport = sg->sport;
	f->dport = sg->dport;
	f->is_v6 = sg->is_v6;
}

/*
 * XP_SLOT_RESPOND: answer a TCP segment of the slot, already counted in cnt.
 * `other` is the verdict for segments we do not answer (the slot's
 * drop/pass). Stateless: everything comes from the segment and the cookie.
 *
 *   RST                         -> other (counted as tcp_rst already)
 *   SYN                         -> SYN-ACK, seq = cookie, ack = seq + 1; MSS,
 *                                  and SACK-perm/TS/WS if the SYN offered them
 *   ACK, valid cookie (ack - 1 the cookie, seq - 1 the client's ISN), with
 *   or without data             -> conn_established; then as below
 *   data without a valid cookie -> cookie_invalid, other: only the segment
 *                                  that completes a handshake may carry data
 *                                  (the client's data mode), as nothing here
 *                                  acknowledges data
 *   ACK|FIN (no data, or data with a valid cookie)
 *                               -> FIN-ACK, seq = ack, ack = seq + len + 1
 *   valid, no FIN               -> RST back (XP_CLOSE_RST) or other
 *                                  (XP_CLOSE_NONE)
 *   ACK of our FIN (ack - 2 and seq - 2 a valid cookie; seq - 2 - len after
 *   a close with len data bytes, see slot_data_len) -> other
 *   keepalive (pure ACK, seq = the client's ISN, ack = cookie + 1, the
 *   cookie up to 274 s old and issued by this slot, xp_is_keepalive)
 *                               -> keepalives, other
 *   pure ACK the keepalive search had no budget left for
 *                               -> keepalive_unchecked, other
 *   other pure ACK              -> cookie_invalid, other
 *
 * Cost: every segment takes at most 3 MACs here (the xp_cookie_check calls),
 * except a pure ACK none of them took: it gets the keepalive search, at most
 * min(512, rounds since the slot's first cookie) more MACs, one per round in
 * whose step the slot issued cookies, and all those searches together at
 * most XP_KA_MAC_BUDGET MACs' worth a second per CPU (xp_is_keepalive).
 * Measured with BPF_PROG_RUN: a forged pure ACK took 20-28 us before this
 * bound (512 MACs), an ACK with data ~0.15 us; now 0.3-0.6 us.
 *
 * Every segment it does not answer is counted in noreply_other (and a
 * reply that does not fit the frame in noreply_room).
 *
 * Limits of being stateless: a FIN without data is answered without
 * validation (a FIN after the data of a real TCP client carries no
 * recoverable cookie, as the client's ISN is unknown); keepalives of
 * connections older than 274 s count as cookie_invalid, and so do those of
 * an earlier test in the slot (the loader clears ka_steps); a client that sends a pure ACK and then, within
 * the cookie lifetime, data or ACK|FIN starting at the same sequence number
 * is counted established twice.
 */
static __always_inline int xp_respond(struct xdp_md *ctx, struct xp_counters *cnt,
				      __u32 slot, __u32 close_mode, struct xp_tcp_seg *sg,
				      int other)
{
	struct xp_tcp_reply r = {};
	struct xp_cookie_flow f;
	__u64 k0 = config.cookie_key[0], k1 = config.cookie_key[1];
	/* The coarse clock (the last tick's time, no clocksource read): `now`
	 * only feeds the cookie's 67 ms step and the ~1 ms TSval, and a tick
	 * of lag is the same for the cookie made and the cookie checked. On
	 * the direct pair at 1.06 M conn/s the fine clock's TSC read here was
	 * 5.5 % of all perf samples (/work/notes/s6/fw.md). Nothing on this
	 * path stamps a latency or an RTT: those (the reflect slots) keep the
	 * fine clock. */
	__u64 now = bpf_ktime_get_coarse_ns();
	__u32 t = xp_cookie_step(now);
	__u8 fl = sg->flags;
	int valid;

	if (fl & XP_TCPF_RST)
		goto quiet;

	xp_cookie_flow_of(sg, &f);

	if ((fl & (XP_TCPF_SYN | XP_TCPF_ACK | XP_TCPF_FIN)) == XP_TCPF_SYN) {
		__u32 mss_idx = xp_cookie_mss_idx(sg->has_mss ? sg->mss : 0, sg->is_v6);

		r.seq = xp_cookie_make(k0, k1, &f, sg->seq, t, mss_idx);
		r.ack = sg->seq + 1;
		r.flags = XP_TCPF_SYN | XP_TCPF_ACK;
		r.window = XP_SRV_SYN_WINDOW;
		/* Linux's order: MSS, [SACK-perm+]TS, WS, lone SACK-perm. Only
		 * what the client offered is answered (RFC 7323, 2018). */
		r.opt[0] = xp_opt_mss(sg->is_v6 ? XP_SRV_MSS6 : XP_SRV_MSS4);
		r.nopt = 1;
		if (sg->has_ts) {
			r.opt[1] = xp_opt_ts_head(sg->has_sack);
			r.opt[2] = bpf_htonl((__u32)(now >> XP_SRV_TS_SHIFT));
			r.opt[3] = bpf_htonl(sg->tsval);
			r.nopt = 4;
		}
		if (sg->has_ws)
			r.opt[r.nopt++] = xp_opt_wscale(XP_SRV_WSCALE);
		if (sg->has_sack && !sg->has_ts)
			r.opt[r.nopt++] = xp_opt_sack_perm();
		if (xp_tcp_reply_send(ctx, sg, &r))
			goto noroom;
		xp_ka_note(slot, t);
		XP_INC(cnt, synack_sent);
		return xp_reply_verdict(ctx, config.reply_redirect);
	}
	if ((fl & (XP_TCPF_SYN | XP_TCPF_ACK)) != XP_TCPF_ACK)
		goto quiet; /* SYN-ACK, or no ACK: not ours to answer */

	/* The handshake-completing segment: seq = client ISN + 1 (where its
	 * data, if any, starts), ack = our ISN (the cookie) + 1. */
	valid = xp_cookie_check(k0, k1, &f, sg->seq - 1, sg->ack - 1, t);
	if (valid)
		XP_INC(cnt, conn_established);
	if (sg->payload) {
		__u32 *dl;

		if (!valid) {
			XP_INC(cnt, cookie_invalid);
			goto quiet;
		}
		dl = bpf_map_lookup_elem(&slot_data_len, &slot);
		if (dl && *dl != sg->payload)
			*dl = sg->payload;
	}

	if (fl & XP_TCPF_FIN) {
		r.seq = sg->ack;
		r.ack = sg->seq + sg->payload + 1;
		r.flags = XP_TCPF_FIN | XP_TCPF_ACK;
		r.window = XP_SRV_WINDOW;
		if (sg->has_ts)
			xp_reply_put_ts(&r, (__u32)(now >> XP_SRV_TS_SHIFT), sg->tsval);
		if (xp_tcp_reply_send(ctx, sg, &r))
			goto noroom;
		XP_INC(cnt, fin_answered);
		return xp_reply_verdict(ctx, config.reply_redirect);
	}
	if (!valid) {
		__u32 *dl;
		int ka;

		/* The client's ACK of our FIN-ACK after a close in the
		 * handshake: its FIN and ours each took one sequence number,
		 * and its data (data mode) len more of its own. */
		if (xp_cookie_check(k0, k1, &f, sg->seq - 2, sg->ack - 2, t))
			goto quiet;
		dl = bpf_map_lookup_elem(&slot_data_len, &slot);
		if (dl && *dl && xp_cookie_check(k0, k1, &f, sg->seq - 2 - *dl, sg->ack - 2, t))
			goto quiet;
		ka = xp_is_keepalive(&f, sg, slot, t);
		if (ka == XP_KA_FOUND)
			XP_INC(cnt, keepalives);
		else if (ka == XP_KA_UNCHECKED)
			XP_INC(cnt, keepalive_unchecked);
		else
			XP_INC(cnt, cookie_invalid);
		goto quiet;
	}
	if (close_mode != XP_CLOSE_RST)
		goto quiet;
	/* RFC 9293 reset generation for a segment with ACK: <SEQ=SEG.ACK><CTL=RST>,
	 * which is exactly the sequence number conntrack expects (td_maxack). */
	r.seq = sg->ack;
	r.flags = XP_TCPF_RST;
	if (xp_tcp_reply_send(ctx, sg, &r))
		goto noroom;
	XP_INC(cnt, rst_sent);
	return xp_reply_verdict(ctx, config.reply_redirect);

quiet:
	XP_INC(cnt, noreply_other);
	return other;
noroom:
	/* bpf_xdp_adjust_tail() refused (no tailroom for the longer options
	 * of a SYN-ACK, say): the frame may be half rewritten, drop it. */
	XP_INC(cnt, noreply_room);
	return XDP_DROP;
}

/* XP_SLOT_REFLECT: send a stamped frame of slot (counted and accounted
 * already) back to its sender, counted in meas_stats as reflected, or drop
 * it (reflect_refused) when lib/reflect.h will not, or when it was not
 * addressed to this host (for_us 0: a tagged frame we would forward). */
static __always_inline int xp_reflect_frame(struct xdp_md *ctx, __u32 slot, void *l3, void *l4, int is_v6,
					    int is_tcp, int for_us)
{
	struct xp_meas_stats *ms = bpf_map_lookup_elem(&meas_stats, &slot);

	if (!for_us || xp_reflect((void *)(long)ctx->data, (void *)(long)ctx->data_end, l3, l4, is_v6, is_tcp)) {
		if (ms)
			XP_INC(ms, reflect_refused);
		return XDP_DROP;
	}
	if (ms)
		XP_INC(ms, reflected);
	return xp_reply_verdict(ctx, config.reply_redirect);
}

/*
 * What a TCP stack would answer at all, whatever the segment says: a unicast
 * frame sent to this interface's MAC and to one of its addresses, from a
 * unicast MAC and a unicast IP address that is not ours. A reply goes to the
 * frame's source (MAC and IP swapped), so this is what keeps a forged frame
 * from making us send from an address that is not ours or to a broadcast,
 * a multicast group or ourselves. The destination half is xp_slot_owns'
 * (xp_for_us, in xp_owns_frame), which every frame of a slot passed before
 * it was counted: the reply's source, that destination, is ours. Here the
 * source half.
 */
static __always_inline int xp_addressed_to_us(void *data, void *data_end, __u32 ifindex,
					      const struct xp_slot_cfg *cfg,
					      const struct xp_tcp_seg *sg)
{
	struct ethhdr *eth = data;
	__u32 family = sg->is_v6 ? XP_FAMILY_V6 : XP_FAMILY_V4;

	if ((void *)(eth + 1) > data_end)
		return 0;
	if (!xp_mac_unicast(eth->h_source))
		return 0;
	if (sg->is_v6 ? !xp_ipv6_unicast(sg->saddr) : !xp_ipv4_unicast(sg->saddr[0]))
		return 0;
	return !xp_is_local(ifindex, family, sg->saddr);
}

/* Where an IP header can start: Ethernet and parse_ethhdr's VLAN tags. */
#define XP_MAX_L3_OFF (sizeof(struct ethhdr) + 4 * XP_VLAN_MAX_DEPTH)

/*
 * xp_slot_owner (server_slot.h: an enum xp_owner) for the frame in ctx,
 * whose IP header (IPv4 or IPv6, is_v6) is l3_off bytes in: its addresses
 * are read here. A function of its own (static, so checked with its
 * caller's types), for the stack: the addresses and the map keys live in
 * this frame, not in xdp_server's, which the responder's call chain fills
 * to the verifier's 512 bytes.
 */
static __noinline int xp_owns_frame(struct xdp_md *ctx, const struct xp_slot_cfg *cfg, __u32 slot,
				    __u64 l3_off, __u32 is_v6)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 src[4] = {}, *dst, family;

	if (l3_off > XP_MAX_L3_OFF || data + sizeof(struct ethhdr) > data_end)
		return 0;
	if (is_v6) {
		struct ipv6hdr *ip6h = data + l3_off;

		if ((void *)(ip6h + 1) > data_end)
			return 0;
		family = XP_FAMILY_V6;
		__builtin_memcpy(src, &ip6h->saddr, sizeof(src));
		dst = (__u32 *)&ip6h->daddr; /* in the frame, read only as family says */
	} else {
		struct iphdr *iph = data + l3_off;

		if ((void *)(iph + 1) > data_end)
			return 0;
		family = XP_FAMILY_V4;
		src[0] = iph->saddr;
		dst = &iph->daddr;
	}
	return xp_slot_owner(cfg, slot, ctx->ingress_ifindex, family, src, ((struct ethhdr *)data)->h_dest, dst);
}

/*
 * The TCP checksum of the l4_len-byte segment at l4_off, with the pseudo-
 * header sum pseudo: 1 if valid. A global function, which the verifier
 * checks once on its own: inlined, its loop was walked again on every path
 * into the responder, past the verifier's limit.
 */
__noinline int xp_tcp_csum_ok(struct xdp_md *ctx, __u32 l4_off, __u32 l4_len, __u64 pseudo)
{
	struct xp_csum_buf *buf;
	__u32 key = 0;

	buf = bpf_map_lookup_elem(&csum_scratch, &key);
	if (!buf)
		return 0;
	return xp_csum_l4_ok(ctx, l4_off, l4_len, pseudo, buf->w);
}

/*
 * XP_SLOT_RESPOND: a TCP frame of the slot (counted already, l4_len bytes
 * of TCP header and payload at th). Answer it if a TCP stack would
 * (xp_respond); otherwise count why not and return `other`.
 */
static __always_inline int xp_answer(struct xdp_md *ctx, struct xp_counters *cnt, __u32 slot,
				     const struct xp_slot_cfg *cfg, void *l3, struct tcphdr *th,
				     int is_v6, __u32 payload, __u32 l4_len, int other)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct xp_tcp_seg sg;

	/* IPv4 options, headers past our offsets: no reply is built for them. */
	if (xp_tcp_seg_read(data, data_end, l3, th, is_v6, payload, &sg)) {
		XP_INC(cnt, noreply_shape);
		return other;
	}
	if (!xp_addressed_to_us(data, data_end, ctx->ingress_ifindex, cfg, &sg)) {
		XP_INC(cnt, noreply_addr);
		return other;
	}
	if (!xp_tcp_csum_ok(ctx, sg.l4_off, l4_len,
			    xp_csum_pseudo(sg.saddr, sg.daddr, sg.is_v6, IPPROTO_TCP, l4_len))) {
		XP_INC(cnt, noreply_csum);
		return other;
	}
	return xp_respond(ctx, cnt, slot, cfg->close_mode, &sg, other);
}

/*
 * Does the frame (payload_len payload bytes at pl) carry the stamp of
 * slot's test with its right tag (lib/stamp.h)? Only for frames from the
 * test's client that are not addressed to this host: those addressed to it
 * need none. A slot that reads no stamps, or has no key, takes none.
 */
static __always_inline int xp_tag_ok(__u32 slot, void *pl, void *data_end, __u32 payload_len, int is_v6)
{
	struct xp_slot_meas *m = bpf_map_lookup_elem(&slot_meas, &slot);
	__u8 *p = pl;
	__u64 s;

	if (!m || !m->ival || !(m->key[0] | m->key[1]))
		return 0;
	if (!xp_stamp_tagged(xp_stamp_place_of(is_v6, payload_len), payload_len))
		return 0;
	if ((void *)(p + XP_STAMP_BYTES + XP_STAMP_TAG_BYTES) > data_end)
		return 0;
	s = __bpf_be64_to_cpu(*(__u64 *)p);
	return bpf_ntohl(*(__u32 *)(p + XP_STAMP_BYTES)) == xp_stamp_tag(m->key[0], m->key[1], s);
}

/*
 * A frame of slot addressed to this host (xp_slot_owner's XP_OWN_YES) that
 * carries no stamp of its test, in a slot with key fields (cfg->key_mask,
 * bpf/measure.h): its flow is the one flow_key names for the fields mask
 * picks from its headers; count it there (frames, bytes, recv), or in the
 * slot's unkeyed when no flow has its key. l3: the IP header's offset
 * (bits 0-7) and is_v6 (bit 8); the tags between Ethernet and IP are read
 * again here, the L4 ports behind IPv4's options. A function of its own,
 * for the stack (the key lives in this frame) and so xdp_server's
 * instructions do not grow on the stamped path. Returns 0.
 */
static __noinline int xp_key_count(struct xdp_md *ctx, __u32 slot, __u32 mask, __u64 l3, __u32 flen)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 l3_off = l3 & 0xff, l4_off;
	struct xp_flow_key k = { .slot = (__u16)slot };
	struct xp_meas_stats *ms;
	struct xp_flow_acct *f;
	__u8 *ip = data + l3_off, *l4;
	__u32 *fe, e;

	if (l3_off > XP_MAX_L3_OFF || l3_off < sizeof(struct ethhdr))
		return 0;
	if (mask & (XP_KEY_VID0 | XP_KEY_VID1)) {
		/* The tags parse_ethhdr walked: (l3_off - 14) / 4 of them. */
		__u8 *t = data + sizeof(struct ethhdr);

		if ((void *)(t + 2 * sizeof(struct vlan_hdr)) > data_end)
			return 0;
		if (mask & XP_KEY_VID0)
			k.vid[0] = l3_off >= sizeof(struct ethhdr) + 4 ? bpf_ntohs(*(__u16 *)t) & 0xfff : XP_KEY_NO_VID;
		if (mask & XP_KEY_VID1)
			k.vid[1] = l3_off >= sizeof(struct ethhdr) + 8 ? bpf_ntohs(*(__u16 *)(t + 4)) & 0xfff
								       : XP_KEY_NO_VID;
	}
	if (l3 >> 8) {
		if ((void *)(ip + sizeof(struct ipv6hdr) + 4) > data_end)
			return 0;
		k.dscp = (__u8)((((ip[0] & 0x0f) << 4) | (ip[1] >> 4)) >> 2);
		k.src = *(__u32 *)(ip + 8) ^ *(__u32 *)(ip + 12) ^ *(__u32 *)(ip + 16) ^ *(__u32 *)(ip + 20);
		l4_off = sizeof(struct ipv6hdr);
	} else {
		if ((void *)(ip + sizeof(struct iphdr)) > data_end)
			return 0;
		k.dscp = ip[1] >> 2;
		k.src = *(__u32 *)(ip + 12);
		l4_off = (ip[0] & 0x0f) * 4;
	}
	l4 = ip + l4_off;
	if ((void *)(l4 + 4) > data_end)
		return 0;
	if (mask & XP_KEY_SPORT)
		k.sport = bpf_ntohs(*(__u16 *)l4);
	if (mask & XP_KEY_DPORT)
		k.dport = bpf_ntohs(*(__u16 *)(l4 + 2));
	if (!(mask & XP_KEY_DSCP))
		k.dscp = 0;
	if (!(mask & XP_KEY_SRC))
		k.src = 0;
	fe = bpf_map_lookup_elem(&flow_key, &k);
	if (fe && *fe) {
		e = *fe - 1;
		f = bpf_map_lookup_elem(&flow_acct, &e);
		if (f) {
			f->frames++;
			f->bytes += flen;
			f->recv++;
		}
		return 0;
	}
	ms = bpf_map_lookup_elem(&meas_stats, &slot);
	if (ms)
		XP_INC(ms, unkeyed);
	return 0;
}

/*
 * The whole frame's length, fragments included. The loader loads this
 * program with BPF_F_XDP_HAS_FRAGS where the kernel takes it
 * (user/loader/server_prog.c), so that native XDP takes a jumbo MTU (a
 * driver refuses a program without frags above what fits one page, ~3.5k
 * on veth): a frame can then arrive in several buffers, data..data_end
 * being only the first. Byte counts and the IP length checks use this;
 * the headers are still read from the first buffer (a driver puts at least
 * them there). A kernel without the helper (before 5.18) has no
 * multi-buffer XDP either: the CO-RE check makes that branch a constant
 * there, and the verifier drops the call.
 */
static __always_inline __u32 xp_frame_len(struct xdp_md *ctx, void *data, void *data_end)
{
	if (bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_xdp_get_buff_len))
		return (__u32)bpf_xdp_get_buff_len(ctx);
	return data_end - data;
}

SEC("xdp")
int xdp_server(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data };
	struct xp_slot_cfg *cfg;
	struct xp_slot_meas *meas;
	struct xp_counters *cnt;
	struct iphdr *iph;
	struct ipv6hdr *ip6h;
	struct tcphdr *th;
	struct udphdr *uh;
	void *l3;
	int other;
	__u32 l4_len, payload, port, slot, proto_bit, *slotp, own, flen;
	__u16 h_proto, dport, ip_id = 0;
	__u8 l4proto, flags = 0;
	int is_v6;

	gstat_inc(g_seen, XP_G_SEEN);
	flen = xp_frame_len(ctx, data, data_end);
	c.frags = flen - (__u32)(data_end - data);

	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		goto malformed;

	if (h_proto == bpf_htons(ETH_P_IP)) {
		if (parse_iphdr(&c, data_end, &iph, &l4_len) < 0)
			goto malformed;
		/* Later fragments carry no L4 header (their bytes would be
		 * misread as ports), and a first one is part of a datagram
		 * whose rest goes to reassembly: neither is counted. */
		if (ipv4_is_fragment(iph)) {
			gstat_inc(g_fragment, XP_G_FRAGMENT);
			goto pass;
		}
		l3 = iph;
		l4proto = iph->protocol;
		is_v6 = 0;
		ip_id = iph->id; /* where a 64-byte frame's stamp begins (lib/stamp.h) */
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ipv6hdr(&c, data_end, &ip6h, &l4_len) < 0)
			goto malformed;
		l3 = ip6h;
		l4proto = ip6h->nexthdr;
		is_v6 = 1;
	} else {
		goto pass; /* ARP, LLDP, 3+ VLAN tags, ... */
	}

	if (l4proto == IPPROTO_TCP) {
		if (parse_tcphdr(&c, data_end, l4_len, &th, &payload) < 0)
			goto malformed;
		if (config.ctrl_port && (th->source == bpf_htons(config.ctrl_port) ||
					 th->dest == bpf_htons(config.ctrl_port)))
			goto pass;
		dport = th->dest;
		flags = tcp_flags(th);
		proto_bit = XP_PROTO_TCP;
	} else if (l4proto == IPPROTO_UDP) {
		if (parse_udphdr(&c, data_end, l4_len, &uh, &payload) < 0)
			goto malformed;
		dport = uh->dest;
		proto_bit = XP_PROTO_UDP;
	} else {
		goto pass; /* ICMP, ICMPv6, IPv6 extension headers, ... */
	}

	port = bpf_ntohs(dport);
	slotp = bpf_map_lookup_elem(&port_slot, &port);
	if (!slotp || !*slotp)
		goto pass;
	slot = *slotp - 1;
	/* A slot index >= XP_MAX_SLOTS (bad userspace value) fails these
	 * lookups and the frame is passed. */
	cfg = bpf_map_lookup_elem(&slot_cfg, &slot);
	if (!cfg || !(cfg->flags & XP_SLOT_ACTIVE) || !(cfg->protos & proto_bit))
		goto pass;
	/* Not the client's: not the test's, passed untouched. Not addressed
	 * to this host (a frame we only forward, whoever sent it): the test's
	 * only with its stamp's tag (lib/stamp.h), else passed untouched. */
	own = xp_owns_frame(ctx, cfg, slot, (__u64)(l3 - data), is_v6);
	if (own == XP_OWN_NOT_US && xp_tag_ok(slot, c.pos, data_end, payload, is_v6))
		own = XP_OWN_TAGGED;
	if (own != XP_OWN_YES && own != XP_OWN_TAGGED) {
		gstat_inc(g_foreign, XP_G_FOREIGN);
		goto pass;
	}
	cnt = bpf_map_lookup_elem(&counters, &slot);
	if (!cnt)
		goto pass;

	XP_INC(cnt, pkts);
	XP_ADD_AS(bytes, cnt->bytes, flen);
	if (is_v6)
		XP_INC(cnt, ipv6_pkts);
	else
		XP_INC(cnt, ipv4_pkts);

	if (proto_bit == XP_PROTO_UDP) {
		XP_INC(cnt, udp_pkts);
	} else {
		if (flags & XP_TCPF_SYN) {
			if (flags & XP_TCPF_ACK)
				XP_INC(cnt, tcp_synack);
			else
				XP_INC(cnt, tcp_syn);
		}
		if (flags & XP_TCPF_FIN)
			XP_INC(cnt, tcp_fin);
		if (flags & XP_TCPF_RST)
			XP_INC(cnt, tcp_rst);
		/* PSH/URG/ECN bits do not stop a segment being a pure ACK. */
		if ((flags & (XP_TCPF_ACK | XP_TCPF_SYN | XP_TCPF_FIN | XP_TCPF_RST)) ==
		    XP_TCPF_ACK && payload == 0)
			XP_INC(cnt, tcp_ack_only);
	}

	if (payload) {
		XP_INC(cnt, data_pkts);
		XP_ADD_AS(data_bytes, cnt->data_bytes, payload);
	}

	/* A test with unstamped flows (cfg->key_mask): a frame addressed to
	 * this host without the test's stamp (no right tag) is counted by its
	 * headers (xp_key_count), never read as a stamp. Every other frame
	 * pays this one branch. A frame not addressed to this host got here
	 * only with its tag (XP_OWN_TAGGED): stamped. */
	if (cfg->key_mask && own == XP_OWN_YES && !xp_tag_ok(slot, c.pos, data_end, payload, is_v6)) {
		xp_key_count(ctx, slot, cfg->key_mask, (__u64)(l3 - data) | (__u64)is_v6 << 8, flen);
		return (cfg->flags & XP_SLOT_PASS) ? XDP_PASS : XDP_DROP;
	}

	/* Stamped tests: sequence, loss, latency (server_meas.h). c.pos is
	 * the L4 payload. */
	meas = bpf_map_lookup_elem(&slot_meas, &slot);
	if (meas && meas->ival) {
		__u64 stamp = 0;
		int has = !xp_stamp_read(c.pos, data_end, payload, is_v6, ip_id, &stamp);

#ifdef XP_SERVER_HWTS
		xp_measure(ctx, slot, stamp, has, flen);
#else
		xp_measure(slot, stamp, has, flen);
#endif
		/* Round trip: the stamped frame goes back to the client, which
		 * times it (lib/reflect.h, bpf/rtt.bpf.c); a tagged frame not
		 * addressed to this host is not: its reflection would leave
		 * from an address that is not ours. */
		if (has && (cfg->flags & XP_SLOT_REFLECT))
			return xp_reflect_frame(ctx, slot, l3, proto_bit == XP_PROTO_TCP ? (void *)th : (void *)uh,
						is_v6, proto_bit == XP_PROTO_TCP, own == XP_OWN_YES);
	}

	other = (cfg->flags & XP_SLOT_PASS) ? XDP_PASS : XDP_DROP;
	if ((cfg->flags & XP_SLOT_RESPOND) && proto_bit == XP_PROTO_TCP) {
		/* A TCP stack answers only what is sent to it. */
		if (own != XP_OWN_YES) {
			XP_INC(cnt, noreply_addr);
			return other;
		}
		/* Replies are built in the first buffer (lib/tcp_reply.h sizes
		 * the frame by it): not from a segment that reaches past it.
		 * (Padding past it is no matter: a grow then fails, noroom.) */
		if (c.frags && (__u64)l4_len > (__u64)(data_end - (void *)th)) {
			XP_INC(cnt, noreply_shape);
			return other;
		}
		return xp_answer(ctx, cnt, slot, cfg, l3, th, is_v6, payload, l4_len, other);
	}
	return other;

pass:
	gstat_inc(g_passed, XP_G_PASSED);
	return XDP_PASS;
malformed:
	gstat_inc(g_malformed, XP_G_MALFORMED);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
