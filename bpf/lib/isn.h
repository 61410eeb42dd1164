/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Initial sequence number of connection k of the XDP connection engine,
 * shared by its two SYN senders: the AF_XDP engine (user/engine/tuples.h) and the
 * live-frames generator (bpf/live.bpf.c), so that both number connections
 * alike and the tests check one against the other. Needs only __u32/__u64
 * (vmlinux.h on the BPF side, <linux/types.h> in userspace).
 *
 * splitmix64's finaliser over seed + (k + 1) * golden ratio, low 32 bits:
 * cheap (two multiplies), and looks random to a middlebox that checks
 * sequence number spread. k is the unwrapped connection number, so a tuple
 * that comes round again gets another ISN.
 */
#ifndef XDPPERF_ISN_H
#define XDPPERF_ISN_H

#ifndef __bpf__
#include <linux/types.h>
#endif

static inline __u32 xp_conn_isn(__u64 seed, __u64 k)
{
	__u64 z = seed + (k + 1) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (__u32)(z ^ (z >> 31));
}

#endif /* XDPPERF_ISN_H */
