// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A TC ingress program that does nothing: it returns TC_ACT_UNSPEC for every
 * packet. The socket bench (scripts/bench/socket.sh) attaches it beside
 * iperf3 as the observer's floor: what any program on the interface's
 * ingress hook costs (the hook, the program's call), so that the server's
 * TC counter (bpf/server_tc.bpf.c) is read against it as well as against
 * nothing attached.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	return -1; /* TC_ACT_UNSPEC: as if nothing were attached */
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
