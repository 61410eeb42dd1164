/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * TCP options (RFC 9293, 7323, 2018) for the XDP programs that answer TCP
 * segments (server.bpf.c, xdp_connect.bpf.c through tcp_reply.h): reading the
 * MSS, window scale, SACK-permitted and timestamp options of a received
 * segment, and the option words of a reply in the layouts Linux's
 * tcp_options_write() produces.
 *
 * Apart from tcp_reply.h because it is a job of its own: the walk over a
 * segment's options is shaped by what the verifier can follow (bpf_loop,
 * see below), and which options a reply carries is its caller's choice
 * (the server's SYN-ACK answers what the SYN offered), not the reply
 * builder's.
 *
 * Include after vmlinux.h, bpf_helpers.h and bpf_endian.h.
 */
#ifndef XDPPERF_TCP_OPTIONS_H
#define XDPPERF_TCP_OPTIONS_H

/* Option kinds and lengths. */
#define XP_TCPOPT_EOL        0
#define XP_TCPOPT_NOP        1
#define XP_TCPOPT_MSS        2
#define XP_TCPOPT_WSCALE     3
#define XP_TCPOPT_SACK_PERM  4
#define XP_TCPOPT_TIMESTAMP  8
#define XP_TCPOLEN_MSS       4
#define XP_TCPOLEN_WSCALE    3
#define XP_TCPOLEN_SACK_PERM 2
#define XP_TCPOLEN_TIMESTAMP 10
/* NOP, NOP, timestamps: the block a non-SYN segment carries (what
 * xp_reply_put_ts() in tcp_reply.h adds). */
#define XP_TCPOLEN_TS_BLOCK  12

#define XP_TCP_MAX_OPT_LEN   40u
/* Option-walk steps: 40 bytes of options hold at most 20 two-byte options;
 * long NOP runs (which nobody sends) would end the walk early and the
 * options after them would just not be seen. */
#define XP_TCP_MAX_OPTS      20

/*
 * The option walk runs under bpf_loop(): a plain loop over options makes the
 * verifier follow every sequence of option kinds and lengths (it gave up at
 * 1M instructions), while a bpf_loop callback is verified once. The options
 * are first copied to the stack, so the callback needs no packet pointers.
 */
struct xp_opt_walk {
	__u8 b[XP_TCP_MAX_OPT_LEN + 16]; /* reads reach off + 9 with off < 40 */
	__u32 off;
	__u32 len;      /* option bytes */
	__u32 tsval;
	__u32 tsecr;
	__u16 mss;
	__u8 ws;
	__u8 seen;      /* XP_OPT_SEEN_* */
};
#define XP_OPT_SEEN_MSS  0x1
#define XP_OPT_SEEN_WS   0x2
#define XP_OPT_SEEN_SACK 0x4
#define XP_OPT_SEEN_TS   0x8

/* One option per call: 0 = go on, 1 = stop (end, EOL or malformed: what was
 * seen before stays valid). */
static long xp_opt_step(__u64 idx, void *arg)
{
	struct xp_opt_walk *w = arg;
	__u32 off = w->off, len;
	__u8 kind, *p;

	if (off >= w->len || off >= XP_TCP_MAX_OPT_LEN)
		return 1;
	p = &w->b[off];
	kind = p[0];
	if (kind == XP_TCPOPT_EOL)
		return 1;
	if (kind == XP_TCPOPT_NOP) {
		w->off = off + 1;
		return 0;
	}
	len = p[1];
	if (len < 2 || off + len > w->len)
		return 1;
	if (kind == XP_TCPOPT_MSS && len == XP_TCPOLEN_MSS) {
		w->mss = ((__u16)p[2] << 8) | p[3];
		w->seen |= XP_OPT_SEEN_MSS;
	} else if (kind == XP_TCPOPT_WSCALE && len == XP_TCPOLEN_WSCALE) {
		w->ws = p[2];
		w->seen |= XP_OPT_SEEN_WS;
	} else if (kind == XP_TCPOPT_SACK_PERM && len == XP_TCPOLEN_SACK_PERM) {
		w->seen |= XP_OPT_SEEN_SACK;
	} else if (kind == XP_TCPOPT_TIMESTAMP && len == XP_TCPOLEN_TIMESTAMP) {
		w->tsval = ((__u32)p[2] << 24) | ((__u32)p[3] << 16) |
			   ((__u32)p[4] << 8) | p[5];
		w->tsecr = ((__u32)p[6] << 24) | ((__u32)p[7] << 16) |
			   ((__u32)p[8] << 8) | p[9];
		w->seen |= XP_OPT_SEEN_TS;
	}
	w->off = off + len;
	return 0;
}

/* Walk the optlen (<= 40) option bytes after the 20-byte TCP header th:
 * *w gets MSS, window scale, SACK-permitted and timestamps (w->seen says
 * which were there). */
static __always_inline void xp_tcp_opts_read(struct tcphdr *th, void *data_end, __u32 optlen,
					     struct xp_opt_walk *w)
{
	__u32 i;

	__builtin_memset(w, 0, sizeof(*w));
	if (optlen > XP_TCP_MAX_OPT_LEN)
		optlen = XP_TCP_MAX_OPT_LEN;
	w->len = optlen;
	/* Options are whole words (data offset counts words). */
#pragma unroll
	for (i = 0; i < XP_TCP_MAX_OPT_LEN / 4; i++) {
		__u32 *src = (__u32 *)(th + 1) + i;

		if (i * 4 < optlen && (void *)(src + 1) <= data_end)
			((__u32 *)w->b)[i] = *src;
	}
	bpf_loop(XP_TCP_MAX_OPTS, xp_opt_step, w, 0);
}

/* Option words, in the layouts Linux's tcp_options_write() produces. */
static __always_inline __u32 xp_opt_mss(__u16 mss)
{
	return bpf_htonl((XP_TCPOPT_MSS << 24) | (XP_TCPOLEN_MSS << 16) | mss);
}

static __always_inline __u32 xp_opt_ts_head(int with_sack_perm)
{
	/* SACK-permitted rides in the two bytes timestamps need as padding. */
	return with_sack_perm ?
		bpf_htonl((XP_TCPOPT_SACK_PERM << 24) | (XP_TCPOLEN_SACK_PERM << 16) |
			  (XP_TCPOPT_TIMESTAMP << 8) | XP_TCPOLEN_TIMESTAMP) :
		bpf_htonl((XP_TCPOPT_NOP << 24) | (XP_TCPOPT_NOP << 16) |
			  (XP_TCPOPT_TIMESTAMP << 8) | XP_TCPOLEN_TIMESTAMP);
}

static __always_inline __u32 xp_opt_wscale(__u8 ws)
{
	return bpf_htonl((XP_TCPOPT_NOP << 24) | (XP_TCPOPT_WSCALE << 16) |
			 (XP_TCPOLEN_WSCALE << 8) | ws);
}

static __always_inline __u32 xp_opt_sack_perm(void)
{
	return bpf_htonl((XP_TCPOPT_NOP << 24) | (XP_TCPOPT_NOP << 16) |
			 (XP_TCPOPT_SACK_PERM << 8) | XP_TCPOLEN_SACK_PERM);
}

#endif /* XDPPERF_TCP_OPTIONS_H */
