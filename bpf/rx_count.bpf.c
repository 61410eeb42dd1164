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
 * gstats accounting: every frame bumps XP_G_SEEN, then exactly one of
 * "counted in a slot", XP_G_PASSED or XP_G_MALFORMED, so
 * SEEN == sum(slot pkts) + PASSED + MALFORMED.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "xdpperf.h"
#include "parsing.h"

/* Destination port (host order) -> slot index + 1, 0 = not a test port.
 * An array indexed by port is one bounds check and a load; no hashing. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_NUM_PORTS);
	__type(key, __u32);
	__type(value, __u32);
} port_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, XP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_slot_cfg);
} slot_cfg SEC(".maps");

/* Per-CPU so the hot path needs no atomics; userspace sums the CPUs. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_MAX_SLOTS);
	__type(key, __u32);
	__type(value, struct xp_counters);
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, XP_G_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} gstats SEC(".maps");

/* TCP port of the xdpperf control connection (host order), 0 = none. Set
 * before load; frames to or from it must reach the stack whatever
 * port_slot says, or a test could cut its own control channel. */
const volatile __u16 ctrl_port = 0;

static __always_inline void gstat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&gstats, &idx);

	if (v)
		*v += 1;
}

SEC("xdp")
int xdp_rx_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct hdr_cursor c = { .pos = data };
	struct xp_slot_cfg *cfg;
	struct xp_counters *cnt;
	struct iphdr *iph;
	struct ipv6hdr *ip6h;
	struct tcphdr *th;
	struct udphdr *uh;
	__u32 l4_len, payload, port, slot, proto_bit, *slotp;
	__u16 h_proto, dport;
	__u8 l4proto, flags = 0;
	int is_v6;

	gstat_inc(XP_G_SEEN);

	if (parse_ethhdr(&c, data_end, &h_proto) < 0)
		goto malformed;

	if (h_proto == bpf_htons(ETH_P_IP)) {
		if (parse_iphdr(&c, data_end, &iph, &l4_len) < 0)
			goto malformed;
		/* Later fragments carry no L4 header; their bytes would be
		 * misread as ports. The first fragment is counted. */
		if (ipv4_is_later_fragment(iph))
			goto pass;
		l4proto = iph->protocol;
		is_v6 = 0;
	} else if (h_proto == bpf_htons(ETH_P_IPV6)) {
		if (parse_ipv6hdr(&c, data_end, &ip6h, &l4_len) < 0)
			goto malformed;
		l4proto = ip6h->nexthdr;
		is_v6 = 1;
	} else {
		goto pass; /* ARP, LLDP, 3+ VLAN tags, ... */
	}

	if (l4proto == IPPROTO_TCP) {
		if (parse_tcphdr(&c, data_end, l4_len, &th, &payload) < 0)
			goto malformed;
		if (ctrl_port && (th->source == bpf_htons(ctrl_port) ||
				  th->dest == bpf_htons(ctrl_port)))
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
	cnt = bpf_map_lookup_elem(&counters, &slot);
	if (!cnt)
		goto pass;

	cnt->pkts++;
	cnt->bytes += data_end - data;
	if (is_v6)
		cnt->ipv6_pkts++;
	else
		cnt->ipv4_pkts++;

	if (proto_bit == XP_PROTO_UDP) {
		cnt->udp_pkts++;
	} else {
		if (flags & XP_TCPF_SYN) {
			if (flags & XP_TCPF_ACK)
				cnt->tcp_synack++;
			else
				cnt->tcp_syn++;
		}
		if (flags & XP_TCPF_FIN)
			cnt->tcp_fin++;
		if (flags & XP_TCPF_RST)
			cnt->tcp_rst++;
		/* PSH/URG/ECN bits do not stop a segment being a pure ACK. */
		if ((flags & (XP_TCPF_ACK | XP_TCPF_SYN | XP_TCPF_FIN | XP_TCPF_RST)) ==
		    XP_TCPF_ACK && payload == 0)
			cnt->tcp_ack_only++;
	}

	if (payload) {
		cnt->data_pkts++;
		cnt->data_bytes += payload;
	}

	return (cfg->flags & XP_SLOT_PASS) ? XDP_PASS : XDP_DROP;

pass:
	gstat_inc(XP_G_PASSED);
	return XDP_PASS;
malformed:
	gstat_inc(XP_G_MALFORMED);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
