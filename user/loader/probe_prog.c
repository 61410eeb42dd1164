/*
 * Two instructions, r0 = XDP_DROP; exit: enough to ask the kernel whether it
 * loads an XDP program (with or without multi-buffer support) and whether
 * BPF_PROG_RUN runs it in live-frames mode on a device. Dropped frames are
 * recycled by the kernel: nothing reaches any wire.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <string.h>

#include "loader/probe_prog.h"

int xp_probe_prog_load(unsigned prog_flags, char *err, size_t errlen)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o, .prog_flags = prog_flags);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xp_probe", "GPL", insns, sizeof(insns) / sizeof(insns[0]), &o);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot load a BPF program: %s%s", strerror(e),
			 e == EPERM ? " (run as root or with CAP_BPF)" : "");
		return -e;
	}
	return fd;
}

int xp_probe_live_run(int prog_fd, int ifindex)
{
	unsigned char frame[64] = { 0 }; /* at least an Ethernet header; contents do not matter */
	struct xdp_md md = { .data = 0, .data_end = sizeof(frame), .ingress_ifindex = (__u32)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = frame, .data_size_in = sizeof(frame), .ctx_in = &md,
		    .ctx_size_in = sizeof(md), .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES);
	return bpf_prog_test_run_opts(prog_fd, &t) ? -errno : 0;
}
