/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address classes for the XDP programs that answer frames (server.bpf.c's
 * responder): which MAC and IP addresses a reply may go to. A reply goes
 * to the frame's source, so a source that is not one host's unicast address
 * would turn one forged frame into a reply to many hosts (broadcast,
 * multicast), to ourselves (loopback, "this host") or to nobody a TCP stack
 * would talk to. Linux drops such sources as martians (ip_route_input_slow,
 * ip6_rcv_core); so do we.
 *
 * Addresses are as on the wire: IPv4 one network-order word, IPv6 four.
 * Include after vmlinux.h and <bpf/bpf_endian.h>.
 */
#ifndef XDPPERF_ADDR_H
#define XDPPERF_ADDR_H

/* An Ethernet address that names one station: the I/G bit (first octet,
 * bit 0) clear. Broadcast and multicast have it set. All-zero is unicast by
 * this rule, which is what loopback's frames carry. */
static __always_inline int xp_mac_unicast(const __u8 *mac)
{
	return !(mac[0] & 1);
}

/* a == b, for two Ethernet addresses (BPF has no memcmp). */
static __always_inline int xp_mac_eq(const __u8 *a, const __u8 *b)
{
	int i, d = 0;

#pragma unroll
	for (i = 0; i < 6; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* IPv4 source of one host: not 0.0.0.0/8 ("this network", RFC 1122
 * 3.2.1.3), 127.0.0.0/8 (loopback), 224.0.0.0/4 (multicast) or 240.0.0.0/4
 * (reserved, which holds 255.255.255.255, the limited broadcast). A
 * directed broadcast (a subnet's last address) cannot be told from its
 * prefix alone: the loader refuses those as client addresses (their route
 * is of type broadcast), and a slot answers only its client's addresses. */
static __always_inline int xp_ipv4_unicast(__u32 a_be)
{
	__u32 top = bpf_ntohl(a_be) >> 24;

	return top != 0 && top != 127 && top < 224;
}

/* IPv6 source of one host: not :: (unspecified), ::1 (loopback),
 * ff00::/8 (multicast, RFC 4291 2.7) or ::ffff:0:0/96 (IPv4-mapped, which
 * never appears on the wire, RFC 4291 2.5.5.2). */
static __always_inline int xp_ipv6_unicast(const __u32 *a)
{
	if ((bpf_ntohl(a[0]) >> 24) == 0xff)
		return 0;
	if (a[0] == 0 && a[1] == 0) {
		if (a[2] == 0 && (a[3] == 0 || a[3] == bpf_htonl(1)))
			return 0;
		if (a[2] == bpf_htonl(0xffff))
			return 0;
	}
	return 1;
}

#endif /* XDPPERF_ADDR_H */
