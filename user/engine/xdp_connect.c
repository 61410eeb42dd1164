/*
 * The XDP connection engine ("xdp", -x / -k): handshakes completed in XDP on
 * both ends. It composes two parts:
 *   - a SYN sender, the live or the xsk engine in SYN mode (cfg->kind
 *     XP_TEST_CONNECT / XP_TEST_HOLD): every frame is the SYN of the next
 *     connection, numbered by engine/tuples.h;
 *   - the client's XDP program (bpf/xdp_connect.bpf.c, loader/xdp_connect_prog.c),
 *     which answers each SYN-ACK with the ACK (or ACK|FIN, ACK|PSH|FIN with
 *     data) that completes the handshake.
 *   - the window (engine/window.h, bpf/window.h): -P slots that both
 *     see, so that at most -P handshakes are in flight (-x) or held (-k);
 *     its keeper retransmits unanswered SYNs (and --fin's FINs), gives
 *     them up after --syn-retries, sends -k's keepalives and resets the
 *     held connections at the end.
 * The server answers with SYN cookies in its XDP program, or with
 * --peer kernel with its TCP stack. Its figures are handshakes.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/open.h"
#include "engine/window.h"
#include "loader/xdp_connect_prog.h"
#include "util/time.h"

struct xp_engine {
	const struct xp_engine_ops *syn_ops; /* the SYN sender */
	struct xp_engine *syn;
	struct xdp_connect_prog *prog;
	struct xp_window *win;               /* -P's window and its keeper */
	struct xp_engine_cfg *syn_cfg;       /* the SYN sender's: the test's, with the window's maps */
	unsigned syn_retries;
	const char *prog_mode;               /* how the client program is attached */
	double cps;                          /* --cps, for the report */
	bool peer_kernel;
	/* -k: a watcher notes when the client program had completed all cfg->parallel handshakes */
	unsigned parallel;
	pthread_t watcher;
	bool watching;
	volatile bool stop;
	double t0;
	volatile double all_open_s;          /* written once by the watcher */
};

#define WATCH_PERIOD_S 2e-3 /* the time to open all is known to within this */

/* How the client program ends each connection. */
static uint32_t prog_mode_of(const struct xp_engine_cfg *cfg)
{
	if (cfg->kind == XP_TEST_HOLD)
		return XP_CC_MODE_KEEPALIVE;
	if (cfg->hs.data_len)
		return XP_CC_MODE_DATA;
	/* --peer kernel: ACK|FIN completes the handshake and closes (the stack answers the FIN). */
	return cfg->hs.fin || cfg->hs.peer_kernel ? XP_CC_MODE_FIN : XP_CC_MODE_RST;
}

static void watch_stop(struct xp_engine *e)
{
	e->stop = true;
	if (e->watching)
		pthread_join(e->watcher, NULL);
	e->watching = false;
}

static void xdpc_destroy(struct xp_engine *e)
{
	if (!e)
		return;
	watch_stop(e);
	if (e->syn)
		e->syn_ops->destroy(e->syn);
	xdp_connect_prog_close(e->prog);
	xp_window_close(e->win); /* after both users of its maps */
	free(e->syn_cfg);
	free(e);
}

/* What sends the SYNs (--syn-engine): live frames or AF_XDP; auto tries them in this order. */
static const struct xp_engine_ops *const syn_senders[] = { &xp_engine_live, &xp_engine_xsk };

static int open_syn_sender(const struct xp_engine_cfg *cfg, const struct xp_engine_ops **ops, struct xp_engine **out,
			   char *err, size_t errlen)
{
	size_t first = 0, n = sizeof(syn_senders) / sizeof(syn_senders[0]);

	if (cfg->hs.syn_sender == XP_ENGINE_LIVE || cfg->hs.syn_sender == XP_ENGINE_XSK) {
		first = cfg->hs.syn_sender == XP_ENGINE_LIVE ? 0 : 1;
		n = 1;
	} else if (cfg->hs.syn_sender != XP_ENGINE_AUTO) {
		*out = NULL;
		snprintf(err, errlen, "the SYNs are sent by live or xsk, not --syn-engine %s",
			 xp_engine_name(cfg->hs.syn_sender));
		return -EINVAL;
	}
	return xp_engine_open_first(syn_senders + first, n, cfg, ops, out, err, errlen,
				    cfg->debug ? xp_engine_passed_debug : NULL, NULL);
}

static int xdpc_create(const struct xp_engine_cfg *cfg, struct xp_engine **out, char *err, size_t errlen)
{
	struct xp_engine *e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->cps = cfg->pps;
	e->peer_kernel = cfg->hs.peer_kernel;
	e->parallel = cfg->kind == XP_TEST_HOLD ? cfg->parallel : 0;
	e->syn_retries = cfg->hs.syn_retries;
	e->syn_cfg = malloc(sizeof(*e->syn_cfg));
	if (!e->syn_cfg) {
		xdpc_destroy(e);
		return -ENOMEM;
	}
	*e->syn_cfg = *cfg;
	int r = xp_window_open(cfg, prog_mode_of(cfg), &e->win, &e->syn_cfg->hs.win, err, errlen);
	if (r) {
		xdpc_destroy(e);
		return r;
	}
	/* SYNs: live frames unless told otherwise (auto falls back to xsk
	 * where they do not work), -x and -k alike: the window keeps what
	 * the resets at the end of -k need. */
	r = open_syn_sender(e->syn_cfg, &e->syn_ops, &e->syn, err, errlen);
	if (r) {
		xdpc_destroy(e);
		return r;
	}
	struct xdp_connect_prog_cfg pc = {
		.ifindex = cfg->ifindex,
		.family = cfg->server.family,
		.cport_lo = cfg->sport_lo, .cport_hi = cfg->sport_hi,
		.dport_lo = cfg->dport_lo, .dport_hi = cfg->dport_hi,
		.ctrl_port = cfg->hs.ctrl_port,
		.mode = prog_mode_of(cfg),
		.data_len = cfg->hs.data_len,
		.reply_redirect = true,
		.xdp_mode = cfg->hs.xdp_mode,
		.win_size = e->syn_cfg->hs.win.size,
		.win_shift = e->syn_cfg->hs.win.shift,
		.win_slots_fd = e->syn_cfg->hs.win.slots_fd,
		.win_free_fd = e->syn_cfg->hs.win.free_fd,
		.win_ctl_fd = e->syn_cfg->hs.win.ctl_fd,
	};
	r = xdp_connect_prog_open(&pc, &e->prog, &e->prog_mode, err, errlen);
	if (r) {
		xdpc_destroy(e);
		return r;
	}
	*out = e;
	return 0;
}

/* Hold tests: poll the client program's ACK count until every connection is open. */
static void *watch_main(void *arg)
{
	struct xp_engine *e = arg;
	while (!e->stop) {
		struct xp_cc_counters cc = { 0 };
		xdp_connect_prog_read(e->prog, &cc);
		if (cc.acks_sent >= e->parallel) {
			e->all_open_s = xp_now() - e->t0;
			break;
		}
		xp_sleep(WATCH_PERIOD_S);
	}
	return NULL;
}

static int xdpc_start(struct xp_engine *e, char *err, size_t errlen)
{
	e->t0 = xp_now();
	int r = xp_window_start(e->win, err, errlen);
	if (r)
		return r;
	r = e->syn_ops->start(e->syn, err, errlen);
	if (!r && e->parallel && !pthread_create(&e->watcher, NULL, watch_main, e))
		e->watching = true;
	return r;
}

static void xdpc_read(struct xp_engine *e, struct xp_engine_stats *st)
{
	e->syn_ops->read(e->syn, st);
	struct xp_cc_counters cc = { 0 };
	xdp_connect_prog_read(e->prog, &cc);
	st->hs.synack_seen = cc.synack_seen;
	st->hs.acks_sent = cc.acks_sent;
#if defined(XP_MUTATE) && XP_MUTATE == 4
	st->hs.acks_sent += st->hs.acks_sent > 0; /* scripts/mutate.sh: one handshake too many */
#endif
	st->hs.fins_sent = cc.fins_sent;
	st->hs.rst_seen = cc.rst_seen;
	st->hs.finack_answered = cc.finack_answered;
	st->hs.unanswered = cc.unanswered;
	struct xp_win_stats ws;
	xp_window_read(e->win, &ws);
	st->hs.window = e->syn_cfg->hs.win.size;
	st->hs.syn_retries = e->syn_retries;
	st->hs.syn_retx = ws.syn_retx;
	st->hs.fin_retx = ws.fin_retx;
	st->hs.keepalives = ws.keepalives;
	st->hs.fail_timeout = ws.fail_timeout;
	st->hs.fail_reset = ws.fail_reset;
	st->hs.fail_unreach = ws.fail_unreach;
	st->hs.fin_timeout = ws.fin_timeout;
	st->hs.synack_dup = ws.synack_dup;
	st->hs.stale_rst = ws.stale;
	st->hs.in_flight = ws.in_flight;
	st->hs.send_errors = ws.send_errors;
	/* -k: the keeper's resets at the end (or the AF_XDP engine's without a window). */
	st->hs.rst_closed = ws.rst_closed + st->tx.rst_sent;
	st->hold.all_open_s = e->all_open_s;
	/* The window's count at its last scan: established and neither reset nor given up. */
	st->hold.open = ws.open;
}

static void xdpc_stop(struct xp_engine *e)
{
	watch_stop(e);
	e->syn_ops->stop(e->syn);
	xp_window_halt(e->win); /* nothing sent again from here on */
	xp_sleep(0.2); /* the last handshakes' replies are still on their way */
	xp_window_finish(e->win); /* the final counts; -k: the resets */
}

/* The server answers the handshakes: its XDP program, or with --peer kernel its listeners. */
static void xdpc_ask_server(const struct xp_engine_cfg *cfg, struct xp_test *t)
{
	t->parallel = cfg->parallel;
	t->respond = !cfg->hs.peer_kernel;
	t->listen = cfg->hs.peer_kernel;
	t->pass = cfg->hs.peer_kernel;
	t->close_mode = prog_mode_of(cfg) == XP_CC_MODE_RST && cfg->kind == XP_TEST_CONNECT ? XP_CLOSE_RST
											       : XP_CLOSE_NONE;
}

static void xdpc_describe(struct xp_engine *e, struct xp_report_info *i)
{
	i->peer_kernel = e->peer_kernel;
	i->target_cps = e->cps;
	i->client_xdp_mode = e->prog_mode;
	i->window = e->syn_cfg->hs.win.size;
	i->syn_retries = e->syn_retries;
	i->keepalive_s = e->syn_cfg->hs.keepalive_s;
}

static const char *xdpc_verdict(const struct xp_engine_cfg *cfg, const struct xp_period *total, char *buf,
				size_t len)
{
	if (xp_period_established(total) || !total->hs.syn_sent)
		return NULL;
	snprintf(buf, len, "no handshake completed (%llu SYNs sent, %llu SYN-ACKs seen): is something dropping them?",
		 (unsigned long long)total->hs.syn_sent, (unsigned long long)total->hs.synack_seen);
	return buf;
}

const struct xp_engine_ops xp_engine_xdp = {
	.name = "xdp",
	.title = "the XDP connection engine",
	.tmpl = XP_TMPL_SYN,
	.nexthop = true,
	.figures = XP_FIGS_HANDSHAKES,
	.kinds = XP_TEST_BIT(XP_TEST_CONNECT) | XP_TEST_BIT(XP_TEST_HOLD),
	/* Its SYNs are frames of its own (bursts with --cps, Ethernet headers, ports,
	 * queues) answered by its own XDP program: handshakes it counts one by one. */
	.caps = XP_CAP_BIT(XP_CAP_BURST) | XP_CAP_BIT(XP_CAP_ETH) | XP_CAP_BIT(XP_CAP_DEV) |
		XP_CAP_BIT(XP_CAP_XDP_MODE) | XP_CAP_BIT(XP_CAP_SPORTS) | XP_CAP_BIT(XP_CAP_QUEUES) |
		XP_CAP_BIT(XP_CAP_LOSS) | XP_CAP_BIT(XP_CAP_STALL) | XP_CAP_BIT(XP_CAP_RATE_CHECK) |
		XP_CAP_BIT(XP_CAP_CONNS) | XP_CAP_BIT(XP_CAP_BIND) | XP_CAP_BIT(XP_CAP_COMPARE) |
		XP_CAP_BIT(XP_CAP_CPS) | XP_CAP_BIT(XP_CAP_HANDSHAKES) | XP_CAP_BIT(XP_CAP_SYN_RETRIES) |
		XP_CAP_BIT(XP_CAP_KEEPALIVES) | XP_CAP_BIT(XP_CAP_SEARCH),
	.lacks = { [XP_CAP_RATE] = "it paces its SYNs with --cps N", [XP_CAP_FRAME_SIZE] = "its SYNs have their own size",
		   [XP_CAP_STAMPS] = "its SYNs carry no stamp", [XP_CAP_UDP] = "it tests TCP only",
		   [XP_CAP_LATENCY] = "its SYNs carry no stamp",
		   [XP_CAP_THREADS] = "its sending threads are --queues",
		   [XP_CAP_RFC2544] = "the suite sends streams of frames: --engine live or xsk",
		   [XP_CAP_FLOWS] = "it sends connections' SYNs, not flows (--engine live or xsk)" },
	.ask_server = xdpc_ask_server,
	XP_ENGINE_LIFECYCLE(xdpc),
	.describe = xdpc_describe,
	.verdict = xdpc_verdict,
	/* The SYNs of connection tests carry no stamp (each one opens a new
	 * connection: there is no stream to number). */
	.sent_in = NULL,
};
