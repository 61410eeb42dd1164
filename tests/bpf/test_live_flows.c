// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 26, the live engine's flows: bpf/live.bpf.c's flows path
 * (bpf/live_flows.h) loaded by the engine's own loader (xp_gen_load,
 * xp_gen_flows_init of user/engine/live_flows.c) and run with plain
 * BPF_PROG_RUN, handed the longest frame + 1 bytes of garbage each run as
 * the live engine hands them in. Needs root.
 *
 * Every output frame is checked against an independent view:
 *  - its flow is the schedule's (engine/flow_sched.h: frame k of the thread
 *    is of flow sched.flow[k % len]): flows come out interleaved by rate;
 *  - tests/lib/wire.h parses it (lengths consistent, IPv4 header and L4
 *    checksums verify from the RFCs, the stamp included);
 *  - every byte but the stamp's and the checksums equals frame_build_hdr of
 *    xp_flow_pat_at(flow, n) for the flow's frame number n, a TCP data
 *    flow's sequence number advanced by the payload of its frames before n (thread t of T
 *    sends frames t, t + T, ...): each field's pattern, the size's;
 *  - the stamp: stream f * T + t (frame/flow_streams.h), seq counting
 *    0, 1, 2... per stream, a send time inside the run, the tag under the
 *    test's key where the frame has room;
 *  - the per-flow counts (xp_gen_read_flows) equal the frames and bytes
 *    that came out, flow by flow.
 * And: 256 flows each with its own port; a flow with a fixed frame count
 * stops at it (its later turns send nothing) and the thread's run count
 * says when all are done; a pattern too long to hold refused in one line.
 */
#include "tests/bpf/live_fixture.h"
#include "engine/flow_sched.h"
#include "engine/live_flows.h"
#include "frame/flow_pat.h"
#include "frame/flow_streams.h"
#include "tests/lib/wire.h"

static const uint64_t KEY[2] = { 0x0123456789abcdefull, 0xfedcba9876543210ull };

static struct xp_engine_flow flows[XP_FLOW_MAX_STREAMS];
static struct xp_flow_sched sched[2];
static uint64_t runs[2];

/* The engine config of nflows flows (the one-stream fields unused). */
static struct xp_engine_cfg flows_cfg(unsigned nflows, unsigned threads)
{
	struct xp_engine_cfg c;

	memset(&c, 0, sizeof(c));
	c.kind = XP_TEST_STREAM;
	c.frames.queues = threads;
	c.frames.flows = flows;
	c.frames.nflows = nflows;
	c.frames.tmpl.payload_fill = 0x5a;
	c.frames.stamp.ival = 1000;
	c.frames.stamp.key[0] = KEY[0];
	c.frames.stamp.key[1] = KEY[1];
	return c;
}

static struct xp_flow_hdr v4_udp(uint16_t sport)
{
	struct xp_flow_hdr h = { .src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 },
				 .l4_proto = IPPROTO_UDP, .sport = sport, .dport = 5201, .ttl = 64 };

	h.src.family = h.dst.family = AF_INET;
	inet_pton(AF_INET, "198.18.1.2", &h.src.v4);
	inet_pton(AF_INET, "198.19.1.2", &h.dst.v4);
	return h;
}

static struct xp_flow_hdr v6_tcp(void)
{
	struct xp_flow_hdr h = { .src_mac = { 2, 0, 0, 0, 0, 1 }, .dst_mac = { 2, 0, 0, 0, 0, 2 },
				 .l4_proto = IPPROTO_TCP, .sport = 40000, .dport = 80, .tcp_flags = W_ACK | W_PSH,
				 .seq = 1000, .ack = 1, .ttl = 33 };

	h.src.family = h.dst.family = AF_INET6;
	inet_pton(AF_INET6, "2001:2:0:1::2", &h.src.v6);
	inet_pton(AF_INET6, "2001:2:0:2::2", &h.dst.v6);
	return h;
}

static struct xp_pattern incr(uint8_t width, xp_u128 start, xp_u128 step, uint32_t count)
{
	struct xp_pattern p = xp_pattern_fixed(width, start);

	p.kind = XP_PAT_INCREMENT;
	p.step = step;
	p.count = count;
	return p;
}

/* Load cfg for thread tid of T (every CPU is that thread: the test is pinned). */
static struct live_bpf *load(const struct xp_engine_cfg *c, unsigned T, unsigned tid, struct frame_layout *lay)
{
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	struct live_bpf *skel = NULL;
	char err[256];
	int ncpus = libbpf_num_possible_cpus();
	unsigned *cpu_tid = calloc((size_t)ncpus, sizeof(*cpu_tid));

	assert_non_null(cpu_tid);
	if (xp_gen_load(c, T, &skel, tmpl, lay, err, sizeof(err)))
		fail_msg("xp_gen_load: %s", err);
	for (int i = 0; i < ncpus; i++)
		cpu_tid[i] = tid;
	assert_int_equal(xp_gen_init_state(skel, cpu_tid, (unsigned)ncpus), 0);
	if (xp_gen_flows_init(skel, c, T, cpu_tid, (unsigned)ncpus, sched, runs, err, sizeof(err)))
		fail_msg("xp_gen_flows_init: %s", err);
	free(cpu_tid);
	xp_gen_set_meas(skel, now_ticks(false), 1000);
	return skel;
}

/* One run; the verdict, the frame into out and its length into *len. */
static unsigned run(struct live_bpf *skel, unsigned tid, uint32_t in_len, unsigned salt, uint8_t *out, uint32_t *len)
{
	static uint8_t in[XP_GEN_MAX_LEN];

	for (uint32_t b = 0; b < in_len; b++)
		in[b] = (uint8_t)(salt * 31 + b * 7); /* whatever a recycled buffer holds */
	xp_gen_new_call(skel, tid);
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = in, .data_size_in = in_len, .data_out = out,
		    .data_size_out = XP_GEN_MAX_LEN, .repeat = 1);
	if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xdp_live), &o))
		fail_msg("BPF_PROG_RUN: %s", strerror(errno));
	*len = o.data_size_out;
	return o.retval;
}

static size_t size_of(const struct xp_engine_flow *fl, uint64_t n)
{
	if (fl->size_pat_set)
		return (size_t)xp_pattern_at(&fl->size_pat, n);
	return fl->frame_size;
}

/*
 * Frame out (len bytes) is frame n of flow f, stamped by thread t of T with
 * seq: parse it, compare it with the builder's, check the stamp.
 */
static void check_frame(const uint8_t *out, uint32_t len, unsigned f, uint64_t n, unsigned t, unsigned T,
			unsigned nflows, uint64_t seq, uint64_t before, uint64_t after)
{
	static uint8_t want[XP_GEN_MAX_LEN];
	const struct xp_engine_flow *fl = &flows[f];
	struct xp_flow_hdr h;
	struct frame_layout lay;
	size_t size = size_of(fl, n);

	xp_flow_pat_at(&fl->hdr, n, &h);
	assert_int_equal(frame_layout_hdr(&h, size, false, &lay, NULL), 0);
	if (h.l4_proto == IPPROTO_TCP && !(h.tcp_flags & 0x02)) {
		/* A TCP data flow is one stream: frame n starts after the payload of the flow's frames before it. */
		for (uint64_t j = 0; j < n; j++) {
			struct xp_flow_hdr hj;
			struct frame_layout lj;
			xp_flow_pat_at(&fl->hdr, j, &hj);
			assert_int_equal(frame_layout_hdr(&hj, size_of(fl, j), false, &lj, NULL), 0);
			h.seq += lj.payload_len;
		}
	}
	assert_int_equal(frame_build_hdr(&h, size, false, 0x5a, want, sizeof(want), NULL), len);

	struct wp w = w_parse(out, len);
	if (!w.ok || !w.ip_csum_ok || !w.l4_csum_ok)
		fail_msg("flow %u frame %llu: parse ok %d, IP checksum ok %d, L4 checksum ok %d", f,
			 (unsigned long long)n, w.ok, w.ip_csum_ok, w.l4_csum_ok);
	assert_int_equal(w.sport, h.sport);
	assert_int_equal(w.dport, h.dport);
	assert_int_equal(w.nvlan, h.nvlan);
	if (h.l4_proto == IPPROTO_TCP)
		assert_int_equal(w.seq, h.seq);

	/* The stamp (and tag), then everything else byte for byte. */
	int place = xp_stamp_place_of(h.src.family == AF_INET6, lay.payload_len);
	assert_int_equal(place, XP_STAMP_AT_PAYLOAD); /* these cases leave room in the payload */
	const uint8_t *pl = out + lay.payload_off;
	uint64_t v = (uint64_t)w_get32(pl) << 32 | w_get32(pl + 4);
	unsigned stream = xp_flow_stream_of(f, t, nflows, T);
	if ((v >> 56) != stream || xp_stamp_seq24(v) != (seq & XP_STAMP_SEQ_MASK))
		fail_msg("flow %u frame %llu: stamp stream %u seq %u, expected %u, %llu", f, (unsigned long long)n,
			 (unsigned)(v >> 56), xp_stamp_seq24(v), stream, (unsigned long long)seq);
	uint64_t ts = xp_stamp_ts_extend(before, (uint32_t)v);
	assert_true(ts >= before && ts <= after);
	size_t sb = XP_STAMP_BYTES;
	if (xp_stamp_tagged(place, lay.payload_len)) {
		assert_int_equal(w_get32(pl + 8), xp_stamp_tag(KEY[0], KEY[1], v));
		sb += XP_STAMP_TAG_BYTES;
	}
	memcpy(want + lay.payload_off, pl, sb);
	size_t ck = lay.l4_off + (lay.l4_proto == IPPROTO_TCP ? 16 : 6);
	memcpy(want + ck, out + ck, 2); /* verified by the parser */
	for (size_t b = 0; b < len; b++)
		if (want[b] != out[b])
			fail_msg("flow %u frame %llu (%u bytes): byte %zu is 0x%02x, expected 0x%02x", f,
				 (unsigned long long)n, len, b, out[b], want[b]);
}

/*
 * nframes runs of thread t of T over nflows flows: each frame checked
 * (check_frame), flows as the schedule orders them, and the counts.
 */
static void run_case(unsigned nflows, unsigned T, unsigned t, unsigned nframes)
{
	struct xp_engine_cfg c = flows_cfg(nflows, T);
	struct frame_layout lay;
	struct live_bpf *skel = load(&c, T, t, &lay);
	static uint8_t out[XP_GEN_MAX_LEN];
	static uint64_t sent[XP_FLOW_MAX_STREAMS], bytes[XP_FLOW_MAX_STREAMS];
	static uint64_t got_p[XP_FLOW_MAX_STREAMS], got_b[XP_FLOW_MAX_STREAMS];
	const struct xp_flow_sched *s = &sched[t];
	bool every = nflows * T <= XP_FLOW_MAX_STREAMS;

	memset(sent, 0, sizeof(sent));
	memset(bytes, 0, sizeof(bytes));
	assert_true(s->len > 0);
	for (unsigned k = 0; k < nframes; k++) {
		unsigned f = s->flow[k % s->len];
		uint32_t len;
		uint64_t before = now_ticks(false);
		unsigned rv = run(skel, t, xp_gen_in_len(skel, &lay), k, out, &len);
		uint64_t after = now_ticks(false);

		assert_int_equal(rv, XDP_TX);
		/* Thread t's i-th frame of f is the flow's frame i * T + t (every thread sends it), else i. */
		uint64_t n = every ? sent[f] * T + t : sent[f];
		check_frame(out, len, f, n, t, T, nflows, sent[f], before, after);
		sent[f]++;
		bytes[f] += len;
	}
	xp_gen_read_flows(skel, got_p, got_b, nflows);
	uint64_t total = 0;
	for (unsigned f = 0; f < nflows; f++) {
		assert_int_equal(got_p[f], sent[f]);
		assert_int_equal(got_b[f], bytes[f]);
		total += sent[f];
	}
	assert_int_equal(xp_gen_sent(skel), total);
	live_bpf__destroy(skel);
}

/*
 * Two flows at 1:3: A IPv4/UDP, 802.1Q VID 100 + 10 * n (5 values), source
 * ports counting down, 64 bytes; B IPv6/TCP, QinQ, DSCP from a list, its
 * destination address counting up over 3, sizes from 100 up by 50 over 4
 * (the longer ones beyond the block, from the fill bytes).
 */
static void two_flows(void)
{
	struct xp_flow_hdr a = v4_udp(10000), b = v6_tcp();

	memset(flows, 0, sizeof(flows));
	a.nvlan = 1;
	a.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = 100 };
	xp_flow_pat_init(&flows[0].hdr, &a);
	flows[0].hdr.f[XP_FF_VLAN0_VID] = incr(12, 100, 10, 5);
	flows[0].hdr.f[XP_FF_SPORT] = incr(16, 10000, 1, 7);
	flows[0].hdr.f[XP_FF_SPORT].kind = XP_PAT_DECREMENT;
	flows[0].frame_size = 64;
	flows[0].pps = 1000;
	flows[0].stamps = true;

	b.nvlan = 2;
	b.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021AD, .vid = 10 };
	b.vlan[1] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = 300, .pcp = 5 };
	xp_flow_pat_init(&flows[1].hdr, &b);
	struct xp_pattern *d = &flows[1].hdr.f[XP_FF_DSCP];
	d->kind = XP_PAT_VALUES;
	d->nvalues = 3;
	d->values[0] = 46;
	d->values[1] = 0;
	d->values[2] = 10;
	xp_u128 dst = xp_u128_from_bytes((const uint8_t *)&b.dst.v6, 16);
	flows[1].hdr.f[XP_FF_DST] = incr(128, dst, 1, 3);
	flows[1].size_pat_set = true;
	flows[1].size_pat = incr(16, 100, 50, 4);
	flows[1].pps = 3000;
	flows[1].stamps = true;
	const char *err = NULL;
	assert_int_equal(xp_flow_pat_check(&flows[0].hdr, &err), 0);
	assert_int_equal(xp_flow_pat_check(&flows[1].hdr, &err), 0);
}

static void test_two_flows_interleaved(void **state)
{
	(void)state;
	two_flows();
	run_case(2, 1, 0, 200); /* sizes vary: every frame trimmed from the longest + 1 */
	/* Interleaved by rate, not grouped: B A B B, over and over (smooth WRR). */
	assert_int_equal(sched[0].len, 4);
	assert_int_equal(sched[0].count[0], 1);
	assert_int_equal(sched[0].count[1], 3);
	for (unsigned k = 1; k < sched[0].len; k++)
		assert_false(sched[0].flow[k] == 0 && sched[0].flow[k - 1] == 0);
}

/* Thread 1 of 2: streams f * 2 + 1, the flows' frames 1, 3, 5... */
static void test_two_flows_thread1(void **state)
{
	(void)state;
	two_flows();
	run_case(2, 2, 1, 120);
}

/* A TCP data flow whose headers and size never change (a period of 1 frame) beside an IPv4/UDP one, sent by
 * thread 1 of 2: each of its frames is the flow's frame 2i + 1, so its sequence number moves on by 2
 * segments' payload a frame (seq_step), none of it from a wrap of the pattern position. */
static void test_tcp_seq_short_period(void **state)
{
	(void)state;
	memset(flows, 0, sizeof(flows));
	struct xp_flow_hdr a = v6_tcp(), u = v4_udp(40000);
	a.seq = 0xfffffff0u; /* it wraps at 2^32 as a stream's does */
	xp_flow_pat_init(&flows[0].hdr, &a);
	flows[0].frame_size = 200;
	flows[0].stamps = true;
	xp_flow_pat_init(&flows[1].hdr, &u);
	flows[1].frame_size = 128;
	flows[1].stamps = true;
	run_case(2, 2, 1, 40);
}

/* 256 flows, IPv4/UDP, each its own source port (and every 16th a VLAN). */
static void test_256_flows(void **state)
{
	(void)state;
	memset(flows, 0, sizeof(flows));
	for (unsigned f = 0; f < XP_FLOW_MAX_STREAMS; f++) {
		struct xp_flow_hdr h = v4_udp((uint16_t)(20000 + f));
		if (f % 16 == 0) {
			h.nvlan = 1;
			h.vlan[0] = (struct xp_vlan_tag){ .tpid = XP_TPID_8021Q, .vid = (uint16_t)(1 + f) };
		}
		xp_flow_pat_init(&flows[f].hdr, &h);
		flows[f].frame_size = 64 + (f % 3) * 64;
		flows[f].stamps = true;
	}
	run_case(XP_FLOW_MAX_STREAMS, 1, 0, 3 * XP_FLOW_MAX_STREAMS);
	assert_int_equal(sched[0].len, XP_FLOW_MAX_STREAMS);
}

/* A flow of 5 frames beside an endless one: after its 5th frame its turns
 * send nothing (XDP_DROP, not counted); with both fixed the thread's run
 * count ends at the last one's last frame. */
static void test_fixed_frames(void **state)
{
	(void)state;
	memset(flows, 0, sizeof(flows));
	for (unsigned f = 0; f < 2; f++) {
		struct xp_flow_hdr h = v4_udp((uint16_t)(30000 + f));
		xp_flow_pat_init(&flows[f].hdr, &h);
		flows[f].frame_size = 128;
		flows[f].stamps = true;
	}
	flows[0].frames = 5;
	struct xp_engine_cfg c = flows_cfg(2, 1);
	struct frame_layout lay;
	struct live_bpf *skel = load(&c, 1, 0, &lay);
	static uint8_t out[XP_GEN_MAX_LEN];
	uint64_t p[2], b[2];
	unsigned drops = 0;

	assert_int_equal(runs[0], UINT64_MAX); /* flow 1 has no end */
	/* One length for all: handed in exactly, nothing trimmed. */
	assert_int_equal(skel->rodata->config.flow_len, 124);
	assert_int_equal(xp_gen_in_len(skel, &lay), 124);
	for (unsigned k = 0; k < 20; k++) {
		uint32_t len;
		unsigned rv = run(skel, 0, xp_gen_in_len(skel, &lay), k, out, &len);
		unsigned f = sched[0].flow[k % sched[0].len];
		assert_int_equal(rv, f == 0 && k >= 10 ? XDP_DROP : XDP_TX);
		drops += rv == XDP_DROP;
	}
	assert_int_equal(drops, 5);
	xp_gen_read_flows(skel, p, b, 2);
	assert_int_equal(p[0], 5);
	assert_int_equal(p[1], 10);
	assert_int_equal(b[0], 5 * 124);
	assert_int_equal(xp_gen_sent(skel), 15);
	live_bpf__destroy(skel);

	/* Both fixed, 5 and 8 over 2 threads: thread 0 sends 3 and 4 of them,
	 * thread 1 2 and 4; thread 0's last is flow 1's 4th, at run 8. */
	flows[1].frames = 8;
	c = flows_cfg(2, 2);
	skel = load(&c, 2, 0, &lay);
	assert_int_equal(runs[0], 8);
	assert_int_equal(runs[1], 8);
	live_bpf__destroy(skel);
	flows[0].frames = 1;
	c = flows_cfg(2, 2);
	skel = load(&c, 2, 0, &lay);
	assert_int_equal(runs[1], 8); /* thread 1 sends none of flow 0 */
	assert_int_equal(runs[0], 8);
	live_bpf__destroy(skel);
}

/* What the live engine cannot hold: one line, nothing loaded. */
static void test_refused(void **state)
{
	static uint8_t tmpl[XP_GEN_MAX_LEN];
	struct live_bpf *skel = NULL;
	struct frame_layout lay;
	char err[256] = "";

	(void)state;
	memset(flows, 0, sizeof(flows));
	struct xp_flow_hdr h = v4_udp(1000);
	xp_flow_pat_init(&flows[0].hdr, &h);
	flows[0].frame_size = 64;
	flows[0].stamps = true;
	/* 7 x 10007 values before the headers repeat: more than 65536. */
	flows[0].hdr.f[XP_FF_SPORT] = incr(16, 1000, 1, 7);
	flows[0].hdr.f[XP_FF_DPORT] = incr(16, 1000, 1, 10007);
	struct xp_engine_cfg c = flows_cfg(1, 1);
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "flow 1: its headers and sizes repeat only after more than 65536"));
	assert_null(strchr(err, '\n'));
	/* Too large for a live frame. */
	flows[0].hdr.f[XP_FF_DPORT] = xp_pattern_fixed(16, 5201);
	flows[0].frame_size = 3500;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_null(skel);
	assert_non_null(strstr(err, "--engine xsk"));
	/* IPv6/TCP at 78 bytes has no room for the stamp. */
	struct xp_flow_hdr v6 = v6_tcp();
	xp_flow_pat_init(&flows[0].hdr, &v6);
	flows[0].frame_size = 78;
	assert_int_not_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	assert_non_null(strstr(err, "carry no stamp"));
	/* ... which is fine without stamps. */
	flows[0].stamps = false;
	assert_int_equal(xp_gen_load(&c, 1, &skel, tmpl, &lay, err, sizeof(err)), 0);
	live_bpf__destroy(skel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_flows_interleaved),
		cmocka_unit_test(test_two_flows_thread1),
		cmocka_unit_test(test_tcp_seq_short_period),
		cmocka_unit_test(test_256_flows),
		cmocka_unit_test(test_fixed_frames),
		cmocka_unit_test(test_refused),
	};

	if (gen_test_init("test_live_flows", "loads BPF programs"))
		return 1;
	return cmocka_run_group_tests_name("live_flows", tests, NULL, NULL);
}
