/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Constants of the wire formats and kernel interfaces the BPF programs in
 * bpf/ use that vmlinux.h does not carry (it has the kernel's types and
 * enums, not its #defines): EtherTypes, IPv4 and TCP header bits and sizes,
 * checksum field offsets, TC verdicts. One place, so the parsers, the reply
 * builder and the generator read and write the same bits.
 *
 * Include after vmlinux.h.
 */
#ifndef XDPPERF_CONSTS_H
#define XDPPERF_CONSTS_H

/* EtherTypes (host order). */
#ifndef ETH_P_IP
#define ETH_P_IP      0x0800
#endif
#ifndef ETH_P_IPV6
#define ETH_P_IPV6    0x86DD
#endif
#ifndef ETH_P_8021Q
#define ETH_P_8021Q   0x8100
#endif
#ifndef ETH_P_8021AD
#define ETH_P_8021AD  0x88A8
#endif
#ifndef ETH_P_ARP
#define ETH_P_ARP     0x0806
#endif

#define XP_ETH_ALEN   6

/* IPv4 frag_off field (host order masks). */
#define XP_IP_MF      0x2000
#define XP_IP_OFFSET  0x1FFF
#define XP_IPV4_DF    0x4000

/* TCP flag bits of header byte 13 (vmlinux.h's TCP_FLAG_* are 32-bit
 * network-order word masks, hence our own names). */
#define XP_TCPF_FIN   0x01
#define XP_TCPF_SYN   0x02
#define XP_TCPF_RST   0x04
#define XP_TCPF_PSH   0x08
#define XP_TCPF_ACK   0x10
#define XP_TCPF_URG   0x20

/* TCP header without options. */
#define XP_TCP_HLEN   20u

/* Offsets of the checksum field in the TCP and UDP headers. */
#define XP_TCP_CHECK_OFF 16
#define XP_UDP_CHECK_OFF 6

/* TC program verdicts (<linux/pkt_cls.h>). */
#define XP_TC_ACT_OK   0
#define XP_TC_ACT_SHOT 2

#endif /* XDPPERF_CONSTS_H */
