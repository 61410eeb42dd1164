/*
 * meascost: what the server program's stamp accounting (bpf/server_meas.h)
 * costs per frame, timed by the kernel's BPF_PROG_RUN (its duration is the
 * mean run time of the program, measured in the kernel around the runs).
 * For scripts/bench.sh and the issue 10 report; no pass/fail. Built by
 * make (build/tests/tools/meascost):
 *
 *   build/tests/tools/meascost [-n N]
 *
 * The frame: 64-byte IPv4/TCP (60 bytes without FCS; the stamp in the IPv4
 * ID and the 6 payload bytes), from the slot's client, to a slot on lo set
 * up through the real loader. Prints one line per case, key=value:
 *   case=off         the slot's ival 0: counted, no accounting
 *   case=on          ival != 0, no shared clock: stream state and bins
 *   case=on_oneway   XP_MEAS_ONEWAY as well: latency into the histogram
 *   case=flow_oneway on_oneway with the stream counted in a flow too
 *                    (issue 26: stream_flow, flow_acct of bpf/measure.h)
 * each twice: mode=repeat (one run of N repeats of one frame; with
 * accounting on, every repeat after the first is a duplicate of it) and
 * mode=single (N runs of one repeat each, each frame the next number of its
 * stream: the in-order path; each run's duration includes the kernel's
 * clock reads around it, the same for every case, so compare cases, not
 * absolute values). ns= is the mean per frame.
 * Exit status: 0, 1 if BPF is unavailable, 2 usage error.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "bpf/lib/stamp.h"
#include "bpf/measure.h"
#include "bpf/server.h"
#include "bpf/server.skel.h"
#include "loader/server_prog.h"
#include "tests/lib/wire.h"

#define PORT 63500

static size_t frame(uint8_t *buf, size_t cap, uint32_t seq, uint64_t ts)
{
	struct wf w = { .l4 = IPPROTO_TCP, .sport = 40000, .dport = PORT, .flags = W_ACK | W_PSH, .payload = 6 };
	size_t len;

	w.dmac[0] = 2; w.dmac[5] = 2;
	w.smac[0] = 2; w.smac[5] = 1;
	w_ip4(w.saddr, 198, 18, 235, 1);
	w_ip4(w.daddr, 198, 18, 235, 2);
	len = w_build(&w, buf, cap);
	/* The stamp: stream 0, seq, ts (lib/stamp.h: bytes 0-1 in the ID). */
	uint8_t st[8] = { 0, (uint8_t)(seq >> 16), (uint8_t)(seq >> 8), (uint8_t)seq,
			  (uint8_t)(ts >> 24), (uint8_t)(ts >> 16), (uint8_t)(ts >> 8), (uint8_t)ts };
	memcpy(buf + 14 + 4, st, 2);
	memcpy(buf + 14 + 20 + 20, st + 2, 6);
	return len;
}

static uint64_t now_ticks(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return ((uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec) >> 2;
}

static int run(int fd, const uint8_t *buf, size_t len, unsigned repeat, double *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = buf, .data_size_in = (__u32)len, .repeat = repeat);

	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	*ns = o.duration; /* mean per repeat, ns */
	return o.retval == XDP_DROP ? 0 : -EPROTO;
}

/* A figure of a program that did not account what it should would time the wrong thing: the slot's
 * meas_stats must say `want` frames were stamped and accounted (0 with accounting off). */
static int accounted(struct server_prog *rp, int slot, uint64_t want)
{
	struct xp_meas_stats st;
	int r = server_prog_read_meas_stats(rp, slot, &st);

	if (r)
		return r;
	if (st.stamped != want) {
		fprintf(stderr, "meascost: the program accounted %llu of %llu frames\n", (unsigned long long)st.stamped,
			(unsigned long long)want);
		return -EPROTO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned n = 200000;
	int opt;

	while ((opt = getopt(argc, argv, "n:")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0)
			n = (unsigned)atoi(optarg);
		else {
			fprintf(stderr, "usage: meascost [-n FRAMES]\n");
			return 2;
		}
	}
	struct server_prog *rp;
	char err[256];
	struct xp_addr cli;
	if (server_prog_open(&rp, 0, false, err, sizeof(err))) {
		fprintf(stderr, "meascost: %s\n", err);
		return 1;
	}
	xp_addr_parse("198.18.235.1", &cli);
	int slot = server_prog_slot_alloc(rp, PORT, PORT, XP_PROTO_TCP, 0, XP_CLOSE_NONE, (int)if_nametoindex("lo"),
					  &cli, NULL, 0, err, sizeof(err));
	if (slot < 0) {
		fprintf(stderr, "meascost: %s\n", err);
		server_prog_close(rp);
		return 1;
	}
	int fd = bpf_program__fd(server_prog_skel(rp)->progs.xdp_server);
	static const struct { const char *name; uint64_t ival; uint32_t flags; int flow; } cases[] = {
		{ "off", 0, 0, 0 }, { "on", 250000000ull, 0, 0 }, { "on_oneway", 250000000ull, XP_MEAS_ONEWAY, 0 },
		{ "flow_oneway", 250000000ull, XP_MEAS_ONEWAY, 1 },
	};
	/* flow_oneway: stream 0 (the frames') counts into flow entry 0 too. */
	static __u32 stream_entry[XP_STAMP_MAX_STREAMS] = { 1 };
	uint8_t buf[128];
	int rc = 0;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]) && !rc; c++) {
		/* An interval long enough for the whole run: the bins' resets
		 * are once per interval, not per frame. */
		struct xp_slot_meas m = { .t0 = now_ticks(), .ival = cases[c].ival * 100, .flags = cases[c].flags };
		double ns, sum = 0;
		size_t len;

		if ((rc = server_prog_meas_start_flows(rp, slot, &m, cases[c].flow ? stream_entry : NULL)))
			break;
		len = frame(buf, sizeof(buf), 0, now_ticks());
		if ((rc = run(fd, buf, len, n, &ns)) || (rc = accounted(rp, slot, m.ival ? n : 0)))
			break;
		printf("case=%s mode=repeat frames=%u ns=%.1f\n", cases[c].name, n, ns);
		if ((rc = server_prog_meas_start_flows(rp, slot, &m, cases[c].flow ? stream_entry : NULL)))
			break;
		for (unsigned k = 0; k < n && !rc; k++) {
			len = frame(buf, sizeof(buf), k, now_ticks() - 2500);
			rc = run(fd, buf, len, 1, &ns);
			sum += ns;
		}
		if (!rc)
			rc = accounted(rp, slot, m.ival ? n : 0);
		if (!rc)
			printf("case=%s mode=single frames=%u ns=%.1f\n", cases[c].name, n, sum / n);
	}
	if (rc)
		fprintf(stderr, "meascost: %s\n", strerror(-rc));
	server_prog_close(rp);
	return rc ? 1 : 0;
}
