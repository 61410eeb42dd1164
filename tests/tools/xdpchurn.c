/*
 * xdpchurn: keeps the kernel's XDP dispatcher changing, as another process
 * on the machine does when it attaches and detaches XDP programs or
 * test-runs one that is attached nowhere (BPF unit tests, fuzzers): every
 * BPF_PROG_RUN of an XDP program with repeat > 1 adds the program to the
 * dispatcher for the call and removes it afterwards, each change under the
 * dispatcher's mutex and through an RCU grace period. The live engine's
 * calls take that mutex too (issue 11): tests/e2e/52_rate_contention.sh
 * runs it beside a paced live-frames test.
 *
 *   build/tests/tools/xdpchurn [-t SECS] [-g GAP_MS] [-r REPEAT]
 *
 * Loads a two-instruction XDP program (return XDP_PASS), then for SECS
 * seconds (default 3) runs it with BPF_PROG_RUN on a 64-byte zero frame,
 * REPEAT times per call (default 2; 1 leaves the dispatcher alone: the
 * control case), sleeping GAP_MS milliseconds (default 0) between calls.
 * Prints "calls=N seconds=S ms_per_call=X max_ms=Y". Exit: 0 ok, 1 the
 * kernel refused, 2 usage.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	double secs = 3, gap_ms = 0;
	int repeat = 2, c;
	while ((c = getopt(argc, argv, "t:g:r:")) != -1) {
		char *end = NULL;
		switch (c) {
		case 't': secs = strtod(optarg, &end); break;
		case 'g': gap_ms = strtod(optarg, &end); break;
		case 'r': repeat = (int)strtol(optarg, &end, 10); break;
		default: end = NULL; optarg = NULL; break;
		}
		if (!optarg || !end || *end || secs <= 0 || secs > 600 || gap_ms < 0 || repeat < 1) {
			fprintf(stderr, "usage: xdpchurn [-t SECS (0-600)] [-g GAP_MS] [-r REPEAT (>= 1)]\n");
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: xdpchurn [-t SECS (0-600)] [-g GAP_MS] [-r REPEAT (>= 1)]\n");
		return 2;
	}
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "xdpchurn", "GPL", insns, 2, NULL);
	if (fd < 0) {
		fprintf(stderr, "xdpchurn: cannot load an XDP program: %s (run as root)\n", strerror(errno));
		return 1;
	}
	unsigned char frame[64] = { 0 };
	double t0 = now(), end = t0 + secs, max = 0;
	long calls = 0;
	struct timespec gap = { .tv_sec = (time_t)(gap_ms / 1e3), .tv_nsec = (long)(gap_ms * 1e6) % 1000000000L };
	while (now() < end) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = frame, .data_size_in = sizeof(frame),
			    .repeat = (__u32)repeat);
		double a = now();
		if (bpf_prog_test_run_opts(fd, &o)) {
			fprintf(stderr, "xdpchurn: BPF_PROG_RUN: %s\n", strerror(errno));
			return 1;
		}
		double d = now() - a;
		if (d > max)
			max = d;
		calls++;
		if (gap_ms > 0)
			nanosleep(&gap, NULL);
	}
	double t = now() - t0;
	printf("calls=%ld seconds=%.2f ms_per_call=%.3f max_ms=%.2f\n", calls, t, calls ? 1e3 * t / calls : 0,
	       max * 1e3);
	close(fd);
	return 0;
}
