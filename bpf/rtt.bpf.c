// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The client's round-trip program (bpf/rtt.h says what and why): attached
 * to the client's interface for a stream test in round-trip mode only.
 *
 * It is also what the veth rule needs (frames XDP_TX'd into a veth are
 * dropped unless the peer has an XDP program): on a direct pair the
 * server's reflected frames arrive here.
 *
 * Everything that is not a reflected frame of the test passes untouched:
 * ARP, the control connection, other hosts' traffic, fragments, malformed
 * frames.
 */
/* vmlinux.h has a typedef named config (zstd's): renamed on the way in, as
 * in server.bpf.c; the name is our rodata variable's. */
#define config xp_vmlinux_config
#include "vmlinux.h"
#undef config
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "server.h"
#include "rtt.h"
#include "lib/parsing.h"
#include "lib/stamp.h"
#include "measure.h"

/* One test: one slot (key 0) of the measurement maps. */
#define XP_MEAS_SLOTS 1
#define XP_MEAS_FLOW_ENTRIES XP_STAMP_MAX_STREAMS /* its one test's flows */
#include "meas_maps.h"
#include "server_meas.h"
#include "lib/mutate.h"

const volatile struct xp_rtt_config config = {};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_RTT_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} rtt_stats SEC(".maps");

/* rtt_stats[idx] += 1, then verdict. A macro for the counter's own mutation
 * name (lib/mutate.h: -DXP_MUT_rtt_seen breaks only XP_RTT_SEEN). */
#define stat_inc(idx, name, verdict)                                         \
	({                                                                   \
		__u32 _k = (idx);                                            \
		__u64 *_v = bpf_map_lookup_elem(&rtt_stats, &_k);            \
		if (_v)                                                      \
			XP_ADD_AS(name, *_v, 1);                             \
		(verdict);                                                   \
	})

/* (src, dst) are the server's test address and ours. */
static __always_inline int xp_rtt_addrs(const __u32 *src, const __u32 *dst, int is_v6)
{
	if (!is_v6)
		return src[0] == config.server[0] && dst[0] == config.client[0];
	return src[0] == config.server[0] && src[1] == config.server[1] && src[2] == config.server[2] &&
	       src[3] == config.server[3] && dst[0] == config.client[0] && dst[1] == config.client[1] &&
	       dst[2] == config.client[2] && dst[3] == config.client[3];
}

SEC("xdp")
int xdp_rtt(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data };
	struct xp_slot_meas *meas;
	struct iphdr *iph;
	struct ipv6hdr *ip6h;
	struct tcphdr *th;
	struct udphdr *uh;
	__u32 l4_len, payload, slot = 0, src[4] = {}, dst[4] = {};
	__u16 h_proto, sport, ip_id = 0;
	__u64 stamp = 0;
	__u8 l4proto;
	int is_v6;

	stat_inc(XP_RTT_SEEN, rtt_seen, 0);
	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		goto pass;
	if (h_proto == bpf_htons(ETH_P_IP)) {
		if (config.family != XP_FAMILY_V4 || parse_iphdr(&c, data_end, &iph, &l4_len) < 0 ||
		    ipv4_is_fragment(iph))
			goto pass;
		l4proto = iph->protocol;
		src[0] = iph->saddr;
		dst[0] = iph->daddr;
		ip_id = iph->id; /* a 64-byte frame's stamp begins here (lib/stamp.h) */
		is_v6 = 0;
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		if (config.family != XP_FAMILY_V6 || parse_ipv6hdr(&c, data_end, &ip6h, &l4_len) < 0)
			goto pass;
		l4proto = ip6h->nexthdr;
		__builtin_memcpy(src, &ip6h->saddr, sizeof(src));
		__builtin_memcpy(dst, &ip6h->daddr, sizeof(dst));
		is_v6 = 1;
	} else {
		goto pass;
	}
	if (!xp_rtt_addrs(src, dst, is_v6))
		goto pass;
	if (l4proto == IPPROTO_TCP && (config.protos & XP_PROTO_TCP)) {
		if (parse_tcphdr(&c, data_end, l4_len, &th, &payload) < 0)
			goto pass;
		sport = bpf_ntohs(th->source);
	} else if (l4proto == IPPROTO_UDP && (config.protos & XP_PROTO_UDP)) {
		if (parse_udphdr(&c, data_end, l4_len, &uh, &payload) < 0)
			goto pass;
		sport = bpf_ntohs(uh->source);
	} else {
		goto pass;
	}
	if (sport < config.port_lo || sport > config.port_hi)
		goto pass;

	/* A frame of the test from the server: timed only if it carries a
	 * stamp (the server reflects only those) and a test is started. */
	meas = bpf_map_lookup_elem(&slot_meas, &slot);
	if (!meas || !meas->ival || xp_stamp_read(c.pos, data_end, payload, is_v6, ip_id, &stamp))
		return stat_inc(XP_RTT_NOSTAMP, rtt_nostamp, XDP_PASS);
	xp_measure(slot, stamp, 1, (__u32)(data_end - data));
	return stat_inc(XP_RTT_TIMED, rtt_timed, XDP_DROP);

pass:
	return stat_inc(XP_RTT_PASSED, rtt_passed, XDP_PASS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
