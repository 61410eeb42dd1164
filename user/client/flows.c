/*
 * A test's flows for the engines (issue 26): each stream of the spec becomes
 * a struct xp_engine_flow with complete headers. The fields the spec left to
 * the path (hdr_auto; a stream without headers of its own takes them all)
 * come from what the client resolved for one stream:
 *   DST_MAC  --dst-mac of the stream, else the next hop's MAC
 *   SRC_MAC  the sending interface's MAC
 *   SRC      the source address of the route to the server
 *   DST      the server's address (-c)
 *   SPORT    the first port of the stream's --cport range
 *   DPORT    the first port of the stream's -p range (given), else of the
 *            range the server granted the test
 * A flow's ports are one pair (not spread over the ranges as one stream's
 * frames are): its frames are one 5-tuple unless its own patterns vary them.
 * Sizes left unset are the smallest that carries the stamp (as -l's default).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/session.h"
#include "engine/flow_sched.h"
#include "engine/flow_table.h"
#include "proto/flow_figs.h"

bool xp_client_has_flows(const struct xp_spec *sp)
{
	if (sp->ntraffic > 1)
		return true;
	for (unsigned i = 0; i < sp->ntraffic; i++)
		if (sp->traffic[i].has_hdr)
			return true;
	return false;
}

/* How a message names stream i. */
static const char *flow_name(const struct xp_spec *sp, unsigned i, char *buf, size_t len)
{
	if (sp->traffic[i].name[0])
		snprintf(buf, len, "flow %u (%s)", i + 1, sp->traffic[i].name);
	else
		snprintf(buf, len, "flow %u", i + 1);
	return buf;
}

/* Stream st's headers with the fields the path gives filled in (see the top). */
static void resolve_hdr(const struct client *c, const struct xp_stream *st, struct xp_flow_pat *fp)
{
	const struct xp_spec *sp = c->spec;
	unsigned aut = st->has_hdr ? st->hdr_auto : ~0u;
	struct xp_flow_hdr b;
	if (st->has_hdr) {
		*fp = st->hdr;
		b = fp->base;
	} else {
		memset(&b, 0, sizeof(b));
		b.l4_proto = st->udp ? IPPROTO_UDP : IPPROTO_TCP;
	}
	if (aut & XP_HDR_AUTO_DST_MAC)
		memcpy(b.dst_mac, st->dst_mac_set ? st->dst_mac : c->nh_mac, 6);
	if (aut & XP_HDR_AUTO_SRC_MAC)
		memcpy(b.src_mac, c->link.mac, 6);
	if (aut & XP_HDR_AUTO_SRC)
		b.src = c->local;
	if (aut & XP_HDR_AUTO_DST)
		b.dst = c->server;
	if (aut & XP_HDR_AUTO_SPORT)
		b.sport = st->cport_lo;
	if (aut & XP_HDR_AUTO_DPORT)
		b.dport = st->port_set ? st->port_lo : sp->traffic[0].port_lo;
	/* A TCP flow's segments are data segments as one stream's (frame_build's template). */
	if (b.l4_proto == IPPROTO_TCP && !b.tcp_flags) {
		b.tcp_flags = 0x18; /* ACK|PSH */
		b.seq = b.seq ? b.seq : 1;
		b.ack = b.ack ? b.ack : 1;
	}
	struct xp_flow_pat auto_pat;
	xp_flow_pat_init(&auto_pat, &b);
	if (!st->has_hdr) {
		*fp = auto_pat;
		return;
	}
	fp->base = b;
	/* The auto fields are fixed values: their patterns follow the base. */
	static const struct { unsigned bit; enum xp_flow_field ff; } map[] = {
		{ XP_HDR_AUTO_DST_MAC, XP_FF_DST_MAC }, { XP_HDR_AUTO_SRC_MAC, XP_FF_SRC_MAC },
		{ XP_HDR_AUTO_SRC, XP_FF_SRC }, { XP_HDR_AUTO_DST, XP_FF_DST },
		{ XP_HDR_AUTO_SPORT, XP_FF_SPORT }, { XP_HDR_AUTO_DPORT, XP_FF_DPORT },
	};
	for (unsigned k = 0; k < sizeof(map) / sizeof(map[0]); k++)
		if (aut & map[k].bit)
			fp->f[map[k].ff] = auto_pat.f[map[k].ff];
	/* An address pattern of the other family than an auto base: the check names it. */
}

/* Does a frame of h's headers with payload_len payload bytes carry the stamp (and its tag, if tag)? */
static bool has_stamp(const struct xp_flow_hdr *h, unsigned payload_len, bool tag)
{
	enum xp_stamp_place p = xp_stamp_place_of(h->src.family == AF_INET6, payload_len);
	return p != XP_STAMP_NONE && (!tag || xp_stamp_tagged(p, payload_len));
}

/* The smallest frame of h's headers that carries a stamp (stamps; with its
 * tag if tag), or the smallest valid one. */
static unsigned min_size(const struct xp_flow_hdr *h, bool stamps, bool tag)
{
	struct frame_layout lay;
	size_t hl = xp_flow_hdr_len(h);
	for (size_t n = hl + 4 > 64 ? hl + 4 : 64; n < hl + 4 + 64; n++) {
		if (frame_layout_hdr(h, n, false, &lay, NULL))
			continue;
		if (!stamps || has_stamp(h, lay.payload_len, tag))
			return (unsigned)n;
	}
	return 64;
}

/* Are all frames of fp sent to the server's address (-c), the one address
 * the client knows the server owns? Only those can be counted without a
 * stamp (the server takes an unstamped frame only when it is addressed to it). */
static bool to_server(const struct client *c, const struct xp_flow_pat *fp)
{
	struct xp_flow_hdr h;
	if (xp_pattern_period(&fp->f[XP_FF_DST]) != 1)
		return false;
	xp_flow_pat_at(fp, 0, &h);
	return xp_addr_eq(&h.dst, &c->server);
}

/*
 * The flows without stamps (issue 26): those sent to the server are counted
 * by the headers they declare unique (frame/flow_key.h chooses the fields;
 * two that cannot be told apart are refused), the others not at all (said
 * per flow and on the summary's first line). A test with such flows needs
 * its stamped flows' frames to carry the stamp's tag: the server tells a
 * stamped frame from an unstamped one by it. Exit status or 0.
 */
static int choose_keys(struct client *c, const struct xp_spec *sp)
{
	unsigned n = sp->ntraffic;
	const struct xp_flow_pat **fps = calloc(n, sizeof(*fps));
	bool *pick = calloc(n, sizeof(*pick));
	char (*names)[96] = calloc(n, sizeof(*names));
	const char **np = calloc(n, sizeof(*np));
	c->keys = malloc(sizeof(*c->keys));
	if (!fps || !pick || !names || !np || !c->keys) {
		free(fps), free(pick), free(names), free(np);
		return xp_client_fail(c, 1, "out of memory for %u flows' keys", n);
	}
	for (unsigned i = 0; i < n; i++) {
		fps[i] = &c->flows[i].hdr;
		if (sp->traffic[i].name[0])
			snprintf(names[i], sizeof(names[i]), "%s", sp->traffic[i].name);
		else
			snprintf(names[i], sizeof(names[i]), "flow %u", i + 1);
		np[i] = names[i];
		/* --no-stamps: no flow has figures of the server's (as without flows). */
		if (c->flows[i].stamps || sp->no_stamps)
			continue;
		pick[i] = to_server(c, &c->flows[i].hdr);
		c->flow_res[i].keyed = pick[i];
		c->flow_res[i].uncountable = !pick[i];
	}
	char err[512];
	int rc = xp_key_choose(fps, pick, np, n, c->keys, err, sizeof(err)) ? xp_client_fail(c, 2, "--flows: %s", err) : 0;
	/* The stamped flows' frames carry the tag: checked at every size. */
	for (unsigned i = 0; !rc && c->keys->mask && i < n; i++) {
		const struct xp_engine_flow *f = &c->flows[i];
		uint64_t period = f->size_pat_set ? xp_pattern_period(&f->size_pat) : f->mix.n ? f->mix.plen : 1;
		if (!f->stamps)
			continue;
		for (uint64_t k = 0; k < period && k < XP_FLOW_TABLE_MAX && !rc; k++) {
			struct frame_layout lay;
			unsigned size = xp_flow_size_at(f, k);
			if (!frame_layout_hdr(&f->hdr.base, size, false, &lay, NULL) &&
			    !has_stamp(&f->hdr.base, lay.payload_len, true))
				rc = xp_client_fail(c, 2, "--flows: flow \"%s\": its %u-byte frames have no room for the "
						    "stamp's tag, which tells its frames from those of the flows without "
						    "stamps: give it sizes from %u up", names[i], size,
						    min_size(&f->hdr.base, true, true));
		}
	}
	free(fps), free(pick), free(names), free(np);
	return rc;
}

/* Every size flow f can take, checked against its headers and the MTU; its mean. Exit status or 0. */
static int check_sizes(struct client *c, const struct xp_engine_flow *f, unsigned i, const char *name, double *mean)
{
	const struct xp_stream *st = &c->spec->traffic[i];
	/* Where the size came from: a flow file's size field, or -l (the one-flow shortcuts). */
	char field[48];
	if (st->has_hdr && st->name[0])
		snprintf(field, sizeof(field), "its size, flows[%u].size in the flow file", i);
	else
		snprintf(field, sizeof(field), "-l");
	struct frame_layout lay;
	const char *err = NULL;
	unsigned max = c->link.mtu + 18;
	uint64_t period = f->size_pat_set ? xp_pattern_period(&f->size_pat) : f->mix.n ? f->mix.plen : 1;
	if (period > XP_FLOW_TABLE_MAX)
		period = XP_FLOW_TABLE_MAX; /* the engine refuses longer; the mean of a sample is enough here */
	double sum = 0;
	for (uint64_t n = 0; n < period; n++) {
		unsigned s = xp_flow_size_at(f, n);
		if (s > max)
			return xp_client_fail(c, 2, "%s: frame size %u (%s) exceeds the MTU %u of %s (maximum %u)", name, s,
					      field, c->link.mtu, c->link.name, max);
		if (frame_layout_hdr(&f->hdr.base, s, false, &lay, &err))
			return xp_client_fail(c, 2, "%s: %s", name, err);
		sum += s;
	}
	*mean = sum / (double)period;
	return 0;
}

int xp_client_flows(struct client *c, struct xp_spec *sp)
{
	struct xp_engine_cfg *ec = &c->ec;
	char name[96];
	if (!xp_client_has_flows(sp))
		return 0;
	if (!c->ops->read_flows || c->ops->tmpl != XP_TMPL_DATA || ec->kind != XP_TEST_STREAM)
		return xp_client_fail(c, 2, "--flows: the %s engine sends one stream; use --engine xsk or live",
				      c->ops->name);
	c->flows = calloc(sp->ntraffic, sizeof(*c->flows));
	c->flow_res = calloc(sp->ntraffic, sizeof(*c->flow_res));
	for (unsigned i = 0; c->flow_res && i < sp->ntraffic; i++)
		snprintf(c->flow_res[i].name, sizeof(c->flow_res[i].name), "%s", sp->traffic[i].name);
	if (!c->flows || !c->flow_res)
		return xp_client_fail(c, 1, "out of memory for %u flows", sp->ntraffic);
	double total = 0;
	unsigned paced = 0;
	uint64_t frames = 0;
	/* Flows without stamps beside stamped ones: the stamped flows' sizes carry the tag too (choose_keys). */
	bool tag = false;
	for (unsigned i = 0; i < sp->ntraffic && !sp->no_stamps; i++)
		tag |= sp->traffic[i].no_stamps;
	for (unsigned i = 0; i < sp->ntraffic; i++) {
		const struct xp_stream *st = &sp->traffic[i];
		struct xp_engine_flow *f = &c->flows[i];
		const char *err = NULL;
		flow_name(sp, i, name, sizeof(name));
		resolve_hdr(c, st, &f->hdr);
		if (xp_flow_pat_check(&f->hdr, &err))
			return xp_client_fail(c, 2, "%s: %s", name, err);
		f->stamps = !st->no_stamps && !sp->no_stamps;
		f->mix = st->mix;
		f->size_pat_set = st->size_pat_set;
		f->size_pat = st->size_pat;
		if (i == 0 && !st->has_hdr && st->frame_size)
			f->frame_size = st->frame_size; /* the client's template size (-l or its default) */
		else if (st->frame_size_set)
			f->frame_size = st->frame_size ? st->frame_size : c->link.mtu + 18;
		else
			f->frame_size = min_size(&f->hdr.base, f->stamps, tag);
		double mean = 0;
		int rc = check_sizes(c, f, i, name, &mean);
		if (rc)
			return rc;
		f->pps = st->rate.unit != XP_RATE_NONE ? xp_rate_to_pps(&st->rate, mean) : 0;
		f->frames = st->frames;
		total += f->pps;
		paced += f->pps > 0;
		uint64_t p = xp_flow_period(f, XP_FLOW_TABLE_MAX);
		frames += p;
		if (c->ops->flow_frames_max && frames > c->ops->flow_frames_max)
			return xp_client_fail(c, 2, "%s: the flows' headers and sizes repeat after more than %llu frames in "
					      "all (each flow's patterns' counts multiplied), more than the %s engine holds: "
					      "shorten a pattern", name, (unsigned long long)c->ops->flow_frames_max,
					      c->ops->name);
	}
	if (paced && paced < sp->ntraffic)
		return xp_client_fail(c, 2, "--flows: give every flow a rate, or none (as fast as possible)");
	int krc = choose_keys(c, sp);
	if (krc)
		return krc;
	/* The engine's threads can each interleave their flows (a cheap check of the rates' shares). */
	struct xp_flow_sched *s = malloc(sizeof(*s));
	if (!s)
		return xp_client_fail(c, 1, "out of memory");
	char err[200];
	unsigned T = ec->frames.queues ? ec->frames.queues : 1;
	for (unsigned t = 0; t < T; t++) {
		if (xp_flow_sched_build(c->flows, sp->ntraffic, t, T, s, err, sizeof(err))) {
			free(s);
			return xp_client_fail(c, 2, "--flows: %s", err);
		}
	}
	free(s);
	ec->frames.flows = c->flows;
	ec->frames.nflows = sp->ntraffic;
	ec->pps = total;
	return 0;
}

/* The engine's per-flow counts now: frames into tx[0..n-1], bytes into tx[n..2n-1]. */
static void read_tx(struct client *c, unsigned n, uint64_t *tx)
{
	memset(tx, 0, 2 * n * sizeof(*tx));
	c->ops->read_flows(c->eng, tx, tx + n, n);
}

/* Flow i's figures since the last interval sample: tx (the engine's, now)
 * and, when the server sent them, flow_cur; then they become the last. */
static void take_ival(struct client *c, unsigned i, unsigned n, const uint64_t *tx, struct xp_flow_ival *f)
{
	snprintf(f->name, sizeof(f->name), "%s", c->flow_res ? c->flow_res[i].name : "");
	f->tx_frames = tx[i] - c->flow_tx_prev[i];
	f->tx_bytes = tx[n + i] - c->flow_tx_prev[n + i];
	c->flow_tx_prev[i] = tx[i];
	c->flow_tx_prev[n + i] = tx[n + i];
	f->keyed = c->flow_res && c->flow_res[i].keyed;
	f->rx_known = c->flow_prev_ok && c->flow_cur_ok && !(c->flow_res && c->flow_res[i].uncountable);
	if (f->rx_known)
		xp_flow_acct_delta(&c->flow_cur[i], &c->flow_prev[i], &f->rx);
}

/* The state the intervals' differences start from: every count 0 (the server's entries start at 0). */
static int ival_state(struct client *c, unsigned n)
{
	if (c->flow_tx_prev)
		return 0;
	c->flow_tx_prev = calloc(2 * (size_t)n, sizeof(*c->flow_tx_prev));
	if (c->req.flows.nflows == n) {
		c->flow_prev = calloc(n, sizeof(*c->flow_prev));
		c->flow_cur = calloc(n, sizeof(*c->flow_cur));
		c->flow_prev_ok = c->flow_prev && c->flow_cur;
	}
	return c->flow_tx_prev ? 0 : -ENOMEM;
}

int xp_client_flows_sample(struct client *c, struct snap *now, struct xp_flow_ival **out)
{
	unsigned n = c->ec.frames.nflows;
	*out = NULL;
	if (!n || !c->ops->read_flows)
		return xp_client_server_sample(c, "sample", now, NULL);
	uint64_t *a = calloc(4 * (size_t)n, sizeof(*a)), *b = a + 2 * (size_t)n;
	struct xp_flow_ival *f = calloc(n, sizeof(*f));
	if (!a || !f || ival_state(c, n)) {
		free(a);
		free(f);
		return -ENOMEM;
	}
	/* As the totals (client.c's sample): the engine's count midway between
	 * a reading before the server's and one after, the same moment as its. */
	read_tx(c, n, a);
	c->flow_ask = c->flow_cur != NULL;
	int e = xp_client_server_sample(c, "sample", now, NULL);
	c->flow_ask = false;
	if (e) {
		free(a);
		free(f);
		return e;
	}
	read_tx(c, n, b);
	for (unsigned i = 0; i < n; i++)
		xp_midpoint(a[i], a[n + i], b[i], b[n + i], &a[i], &a[n + i]);
	for (unsigned i = 0; i < n; i++)
		take_ival(c, i, n, a, &f[i]);
	if (c->flow_cur_ok) {
		struct xp_flow_acct *t = c->flow_prev;
		c->flow_prev = c->flow_cur;
		c->flow_cur = t;
	}
	c->flow_prev_ok = c->flow_prev_ok && c->flow_cur_ok;
	free(a);
	*out = f;
	return 0;
}

int xp_client_flows_last(struct client *c, struct xp_flow_ival *last)
{
	unsigned n = c->ec.frames.nflows;
	if (!n || !last || !c->flow_tx_prev)
		return 0;
	struct xp_flow_ival *f = calloc(n, sizeof(*f));
	uint64_t *tx = calloc(2 * (size_t)n, sizeof(*tx));
	struct snap s = c->last;
	int e = f && tx ? 0 : -ENOMEM;
	if (!e) {
		c->flow_ask = c->flow_cur != NULL;
		e = xp_client_server_sample(c, "sample", &s, NULL);
		c->flow_ask = false;
	}
	if (!e) {
		read_tx(c, n, tx); /* the engine stopped: its final count */
		for (unsigned i = 0; i < n; i++) {
			take_ival(c, i, n, tx, &f[i]);
			last[i].tx_frames += f[i].tx_frames;
			last[i].tx_bytes += f[i].tx_bytes;
			last[i].rx_known = last[i].rx_known && f[i].rx_known;
			if (last[i].rx_known)
				xp_flow_acct_add(&last[i].rx, &f[i].rx);
		}
		if (c->flow_cur_ok) {
			struct xp_flow_acct *t = c->flow_prev;
			c->flow_prev = c->flow_cur;
			c->flow_cur = t;
		}
	}
	free(f);
	free(tx);
	return e;
}

void xp_client_flows_free(struct client *c)
{
	free(c->keys);
	c->keys = NULL;
	free(c->flow_prev);
	free(c->flow_cur);
	free(c->flow_tx_prev);
	c->flow_prev = c->flow_cur = NULL;
	c->flow_tx_prev = NULL;
}
