/*
 * Loader of the XDP live-frames generator (bpf/live.bpf.c): configure
 * it for a test (its rodata config), load it, give every CPU its thread
 * index, keep it in the kernel's XDP dispatcher while the engine runs (see
 * xp_gen_hold), and read how many frames it sent. The live engine
 * (engine/live.c) drives it with BPF_PROG_RUN. It stands beside the engine,
 * not in loader/, because it reads the engine's configuration and tuples.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpf/live.h"
#include "bpf/live.skel.h"
#include "engine/engine.h"
#include "engine/tuples.h"
#include "engine/live_prog.h"
#include "engine/live_flows.h"
#include "loader/libbpf_log.h"
#include "loader/percpu.h"
#include "util/random.h"

/* The way out when live frames do not work: the AF_XDP engine, which
 * connection tests (-x) pick with --syn-engine. */
const char *xp_gen_way_out(bool syn)
{
	return syn ? "--syn-engine xsk" : "--engine xsk";
}

int xp_gen_check(const struct xp_engine_cfg *cfg, char *err, size_t errlen)
{
	struct frame_layout lay;
	const char *ferr = NULL;
	/* Mixed sizes hand in one byte more than the largest (live.h). */
	unsigned extra = cfg->frames.mix.n ? 1 : 0;
	/* Flows: their sizes are checked as their blocks are built (xp_gen_load). */
	if (!cfg->frames.nflows && !frame_layout_of(&cfg->frames.tmpl, &lay, &ferr) && lay.len + extra > XP_GEN_LIVE_MAX_LEN) {
		snprintf(err, errlen, "%zu-byte frames are too large for XDP live frames (the kernel takes at most "
			 "-l %u): use %s", cfg->frames.tmpl.frame_size, XP_GEN_LIVE_MAX_LEN + 4 - extra,
			 xp_gen_way_out(cfg->kind != XP_TEST_STREAM));
		return -EMSGSIZE;
	}
	/* -k resets its connections at the end from the window's state (engine/window.h). */
	if (cfg->kind == XP_TEST_HOLD && !cfg->hs.win.size) {
		snprintf(err, errlen, "XDP live frames hold connections only in a window (-k must reset them at "
			 "the end): use --syn-engine xsk");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Mixed sizes (cfg->frames.mix): every size's template built by frame_build
 * (so every length field and checksum is right), end to end in mix_tmpl,
 * and the pattern. With stamps on, every size must have room for one: a
 * mix whose frames are stamped only in part would count loss and latency
 * over some sizes only. 0, or -errno with err set.
 */
static int gen_mix_config(const struct xp_engine_cfg *cfg, struct xp_live_config *ro, char *err, size_t errlen)
{
	const struct xp_mix *m = &cfg->frames.mix;
	__u32 off = 0;

	_Static_assert(XP_MIX_MAX_SIZES <= XP_GEN_MIX_SIZES && XP_MIX_MAX_PATTERN <= XP_GEN_MIX_PATTERN,
		       "the generator holds any mix frame/mix.h allows");
	for (unsigned i = 0; i < m->n; i++) {
		struct frame_spec s = cfg->frames.tmpl;
		struct frame_layout lay;
		const char *ferr = NULL;
		size_t len = 0;

		s.frame_size = m->size[i];
		if (off > XP_GEN_MIX_BYTES - XP_GEN_MAX_LEN || off + s.frame_size > XP_GEN_MIX_BYTES) {
			snprintf(err, errlen, "the frame mix's sizes add up to more than %u bytes, too many for XDP "
				 "live frames: use fewer or smaller sizes", XP_GEN_MIX_BYTES - XP_GEN_MAX_LEN);
			return -E2BIG;
		}
		if (!frame_layout_of(&s, &lay, &ferr))
			len = frame_build(&s, (__u8 *)ro->mix_tmpl + off, XP_GEN_MIX_BYTES - off, &ferr);
		if (!len || len > XP_GEN_MAX_LEN) {
			snprintf(err, errlen, "cannot build the %u-byte frame of the mix: %s", m->size[i],
				 ferr ? ferr : "too large for XDP live frames");
			return -EINVAL;
		}
		__u8 place = cfg->frames.stamp.ival && !(lay.payload_off & 1)
				     ? (__u8)xp_stamp_place_of(s.src.family == AF_INET6, lay.payload_len)
				     : XP_STAMP_NONE;
		if (cfg->frames.stamp.ival && place == XP_STAMP_NONE) {
			snprintf(err, errlen, "%u-byte frames of this mix carry no stamp (no loss or latency for them): "
				 "give sizes from %u up", m->size[i], m->size[i] + XP_STAMP_BYTES);
			return -EINVAL;
		}
		ro->mix[i].off = off;
		ro->mix[i].len = (__u16)len;
		ro->mix[i].stamp = place;
		ro->mix[i].tag = (__u8)xp_stamp_tagged(place, lay.payload_len);
		off += (__u32)((len + 7) & ~(size_t)7);
	}
	memcpy((void *)ro->mix_pattern, m->pattern, m->plen);
	ro->mix_plen = m->plen;
	return 0;
}

static int load_failed(struct live_bpf *skel, libbpf_print_fn_t old, int r, char *err, size_t errlen)
{
	libbpf_set_print(old);
	snprintf(err, errlen, "cannot load the XDP live-frames generator: %s%s%s", strerror(-r),
		 r == -EPERM ? " (run as root or with CAP_BPF and CAP_NET_ADMIN)" : ": use ",
		 r == -EPERM ? "" : xp_gen_way_out(false));
	live_bpf__destroy(skel);
	return r;
}

/*
 * Flows (cfg->frames.nflows; engine/live_flows.h): header blocks instead of
 * a template. tmpl gets the longest frame + 1 bytes of zeroes (what the
 * engine hands in: every run trims it) and lay its length; the other
 * fields of lay are the first flow's.
 */
static int gen_load_flows(const struct xp_engine_cfg *cfg, unsigned nthreads, struct live_bpf **out, __u8 *tmpl,
			  struct frame_layout *lay, char *err, size_t errlen)
{
	struct xp_gen_blk *blks = NULL;
	unsigned nblk = 0;
	uint32_t max_len = 0;

	if (cfg->kind != XP_TEST_STREAM) {
		snprintf(err, errlen, "XDP live frames send flows only in stream tests");
		return -EINVAL;
	}
	libbpf_print_fn_t old = libbpf_set_print(xp_libbpf_print);
	struct live_bpf *skel = live_bpf__open();
	if (!skel) {
		int e = errno;
		libbpf_set_print(old);
		snprintf(err, errlen, "cannot open the XDP live-frames generator: %s: use %s", strerror(e),
			 xp_gen_way_out(false));
		return -e;
	}
	struct xp_live_config *ro = &skel->rodata->config;
	ro->nthreads = nthreads ? nthreads : 1;
	ro->stamp_tai = cfg->frames.stamp.tai;
	ro->tx_ifindex = (__u32)cfg->ifindex;
	ro->sport_lo = ro->sport_hi = ro->dport_lo = ro->dport_hi = 0;
	int r = xp_gen_flows_build(cfg, nthreads, ro, &blks, &nblk, &max_len, err, errlen);
	if (r) {
		libbpf_set_print(old);
		live_bpf__destroy(skel);
		return r;
	}
	/* sent_in's "does it stamp": some flow's frames carry the stamp (the
	 * one-stream path that reads it otherwise never runs with flows). */
	ro->stamp = XP_STAMP_NONE;
	for (unsigned i = 0; i < nblk; i++)
		if (blks[i].stamp)
			ro->stamp = XP_STAMP_AT_PAYLOAD;
	ro->l4_proto = ro->flows[0].l4_proto;
	if (bpf_map__set_max_entries(skel->maps.flow_blk, nblk ? nblk : 1)) {
		r = -errno;
		free(blks);
		return load_failed(skel, old, r, err, errlen);
	}
	r = live_bpf__load(skel);
	if (r) {
		free(blks);
		return load_failed(skel, old, r, err, errlen);
	}
	libbpf_set_print(old);
	r = xp_gen_flows_put(skel, blks, nblk, err, errlen);
	free(blks);
	if (r) {
		live_bpf__destroy(skel);
		return r;
	}
	memset(lay, 0, sizeof(*lay));
	lay->len = (uint16_t)max_len;
	lay->l3_off = ro->flows[0].l3_off;
	lay->l4_off = ro->flows[0].l4_off;
	lay->payload_off = ro->flows[0].payload_off;
	lay->l4_proto = ro->flows[0].l4_proto;
	memset(tmpl, 0, XP_GEN_MAX_LEN);
	*out = skel;
	xp_gen_set_meas(skel, cfg->frames.stamp.t0, cfg->frames.stamp.ival);
	xp_gen_set_key(skel, cfg->frames.stamp.key);
	return 0;
}

int xp_gen_load(const struct xp_engine_cfg *cfg, unsigned nthreads, struct live_bpf **out, __u8 *tmpl,
		struct frame_layout *lay, char *err, size_t errlen)
{
	const char *ferr = NULL;
	size_t len = 0;

	*out = NULL;
	int r = xp_gen_check(cfg, err, errlen);
	if (r)
		return r;
	if (cfg->frames.nflows)
		return gen_load_flows(cfg, nthreads, out, tmpl, lay, err, errlen);
	if (!frame_layout_of(&cfg->frames.tmpl, lay, &ferr)) {
		len = frame_build(&cfg->frames.tmpl, tmpl, XP_GEN_MAX_LEN, &ferr);
	}
	if (!len) {
		snprintf(err, errlen, "cannot build the test frame: %s", ferr ? ferr : "invalid");
		return -EINVAL;
	}
	if (cfg->sport_hi < cfg->sport_lo || cfg->dport_hi < cfg->dport_lo) {
		snprintf(err, errlen, "empty port range %u:%u -> %u:%u", cfg->sport_lo, cfg->sport_hi,
			 cfg->dport_lo, cfg->dport_hi);
		return -EINVAL;
	}

	/* Connection tests: SYNs numbered as the AF_XDP engine numbers them
	 * (engine/tuples.h checks the template, bind[] and ranges alike). */
	struct xp_tuples conn = { 0 };
	uint64_t seed = 0;
	if (cfg->kind != XP_TEST_STREAM) {
		if (cfg->kind != XP_TEST_CONNECT && cfg->kind != XP_TEST_HOLD) {
			snprintf(err, errlen, "XDP live frames do not run %s tests", xp_test_kind_name(cfg->kind));
			return -EINVAL;
		}
		/* A fresh ISN key per run: tuples repeat from one run to the next. */
		seed = xp_random_seed();
		r = xp_tuples_init(&conn, cfg, seed, err, errlen);
		if (r)
			return r;
		if (cfg->nbind > XP_GEN_MAX_BIND) {
			snprintf(err, errlen, "XDP live frames take at most %u source addresses", XP_GEN_MAX_BIND);
			return -EINVAL;
		}
	}

	libbpf_print_fn_t old = libbpf_set_print(xp_libbpf_print);
	struct live_bpf *skel = live_bpf__open();
	if (!skel) {
		int e = errno;
		libbpf_set_print(old);
		snprintf(err, errlen, "cannot open the XDP live-frames generator: %s: use %s", strerror(e),
			 xp_gen_way_out(cfg->kind != XP_TEST_STREAM));
		return -e;
	}
	struct xp_live_config *ro = &skel->rodata->config;
	ro->tmpl_len = (__u32)len;
	memcpy((void *)ro->tmpl, tmpl, len);
	ro->l4_off = lay->l4_off;
	ro->payload_off = lay->payload_off;
	ro->payload_len = lay->payload_len;
	ro->l4_proto = lay->l4_proto;
	/* The stamp (lib/stamp.h) wherever the frame has a place for it, when
	 * the test wants stamps (ival != 0); the payload starts at an even
	 * offset, which the program's checksum update relies on. */
	ro->l3_off = lay->l3_off;
	ro->stamp = cfg->frames.stamp.ival && !(lay->payload_off & 1)
			    ? (__u8)xp_stamp_place_of(cfg->frames.tmpl.src.family == AF_INET6, lay->payload_len)
			    : XP_STAMP_NONE;
	ro->stamp_tag = (__u8)xp_stamp_tagged(ro->stamp, lay->payload_len);
	ro->stamp_tai = cfg->frames.stamp.tai;
	ro->sport_lo = cfg->sport_lo;
	ro->sport_hi = cfg->sport_hi;
	ro->dport_lo = cfg->dport_lo;
	ro->dport_hi = cfg->dport_hi;
	ro->nthreads = nthreads ? nthreads : 1;
	ro->seq0 = cfg->frames.tmpl.seq;
	ro->stream_base = cfg->frames.stamp.stream_base;
	ro->tx_ifindex = (__u32)cfg->ifindex;
	if (cfg->kind == XP_TEST_CONNECT || cfg->kind == XP_TEST_HOLD) {
		ro->syn_mode = 1;
		ro->stamp = XP_STAMP_NONE; /* SYNs are connection tests: no stamp */
		ro->stamp_tag = 0;
		ro->is_v6 = cfg->frames.tmpl.src.family == AF_INET6;
		ro->l3_off = lay->l3_off;
		ro->nbind = cfg->nbind;
		ro->conn_space = conn.space;
		ro->conn_first = conn.first;
		ro->seed = seed;
		for (unsigned i = 0; i < cfg->nbind; i++)
			memcpy((void *)ro->bind_addr[i], cfg->bind[i].family == AF_INET6 ? (const void *)&cfg->bind[i].v6
											     : (const void *)&cfg->bind[i].v4,
			       cfg->bind[i].family == AF_INET6 ? 16 : 4);
	}
	if (ro->syn_mode && cfg->hs.win.size) {
		/* The window (bpf/window.h): the XDP connection engine's maps. */
		ro->win_size = cfg->hs.win.size;
		ro->win_shift = cfg->hs.win.shift;
		if (bpf_map__reuse_fd(skel->maps.win_slots, cfg->hs.win.slots_fd) ||
		    bpf_map__reuse_fd(skel->maps.win_free, cfg->hs.win.free_fd) ||
		    bpf_map__reuse_fd(skel->maps.win_ctl, cfg->hs.win.ctl_fd))
			r = -errno;
	}
	if (!r && cfg->frames.mix.n && cfg->kind == XP_TEST_STREAM) {
		r = gen_mix_config(cfg, ro, err, errlen);
		if (r) {
			libbpf_set_print(old);
			live_bpf__destroy(skel);
			return r;
		}
	}
	if (!r)
		r = live_bpf__load(skel);
	libbpf_set_print(old);
	if (r) {
		snprintf(err, errlen, "cannot load the XDP live-frames generator: %s%s%s", strerror(-r),
			 r == -EPERM ? " (run as root or with CAP_BPF and CAP_NET_ADMIN)" : ": use ",
			 r == -EPERM ? "" : xp_gen_way_out(cfg->kind != XP_TEST_STREAM));
		live_bpf__destroy(skel);
		return r;
	}
	*out = skel;
	xp_gen_set_meas(skel, cfg->frames.stamp.t0, cfg->frames.stamp.ival);
	xp_gen_set_key(skel, cfg->frames.stamp.key);
	return 0;
}

__u32 xp_gen_in_len(const struct live_bpf *skel, const struct frame_layout *lay)
{
	const struct xp_live_config *c = &skel->rodata->config;

	return lay->len + (c->syn_mode || c->mix_plen || (c->nflows && !c->flow_len) ? 1u : 0u);
}

void xp_gen_set_key(struct live_bpf *skel, const uint64_t key[2])
{
	skel->bss->gen_meas.key[0] = key[0];
	skel->bss->gen_meas.key[1] = key[1];
}

void xp_gen_set_meas(struct live_bpf *skel, __u64 t0, __u64 ival)
{
	/* .bss is mmapped: the program sees these stores at once. */
	skel->bss->gen_meas.t0 = t0;
	skel->bss->gen_meas.ival = ival;
}

void xp_gen_new_call(struct live_bpf *skel, unsigned tid)
{
	/* One writer per entry (its thread); the program only reads it. */
	volatile __u64 *c = &skel->bss->gen_call[tid & (XP_GEN_MAX_THREADS - 1)];
	*c = *c + 1;
}

int xp_gen_sent_in(struct live_bpf *skel, __u64 interval, __u64 *sent)
{
	int ncpus = libbpf_num_possible_cpus();
	__u32 key = 0;
	int r = 0;

	*sent = 0;
	if (!skel->rodata->config.stamp || !skel->bss->gen_meas.ival)
		return -EOPNOTSUPP;
	if (ncpus <= 0)
		return -EINVAL;
	struct xp_gen_state *v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map__lookup_elem(skel->maps.gen_state, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0)) {
		r = -errno;
		goto out;
	}
	/* Each CPU is one thread: its bin of the interval, or nothing sent
	 * then (an older tag: the thread had moved on or had not started),
	 * or gone (a newer tag: XP_IBINS intervals later it took the bin). */
	for (int c = 0; c < ncpus; c++) {
		const struct xp_sbin *b = &v[c].sbins[interval % XP_IBINS];

		if (b->tag == interval + 1)
			*sent += b->sent;
		else if (b->tag > interval + 1)
			r = -ENOENT;
	}
out:
	free(v);
	if (r)
		*sent = 0;
	return r;
}

int xp_gen_init_state(struct live_bpf *skel, const unsigned *cpu_tid, unsigned ncpu_tid)
{
	int ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0)
		return -EINVAL;
	struct xp_gen_state *v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (unsigned c = 0; c < (unsigned)ncpus && c < ncpu_tid; c++)
		v[c].tid = cpu_tid[c];
	__u32 key = 0;
	int r = bpf_map__update_elem(skel->maps.gen_state, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0);
	free(v);
	return r;
}

__u64 xp_gen_sent_bytes(struct live_bpf *skel, const struct xp_mix *m)
{
	int ncpus = libbpf_num_possible_cpus();
	__u32 key = 0;
	__u64 sum = 0;

	if (ncpus <= 0)
		return 0;
	struct xp_gen_state *v = calloc((size_t)ncpus, sizeof(*v));
	if (!v)
		return 0;
	/* Each CPU starts the pattern at 0 and moves on with its count. */
	if (!bpf_map__lookup_elem(skel->maps.gen_state, &key, sizeof(key), v, sizeof(*v) * (size_t)ncpus, 0))
		for (int c = 0; c < ncpus; c++)
			sum += xp_mix_bytes(m, v[c].sent);
	free(v);
	return sum;
}

__u64 xp_gen_sent(struct live_bpf *skel)
{
	_Static_assert(offsetof(struct xp_gen_state, sent) == 0, "sent leads xp_gen_state");
	__u32 key = 0;
	__u64 sum = 0; /* stays 0 if the lookup fails */
	xp_percpu_read(skel->maps.gen_state, &key, sizeof(key), sizeof(struct xp_gen_state), &sum, sizeof(sum));
	return sum;
}

struct hold_arg {
	int prog_fd;
	int link_fd, ns_fd, err;
};

static void *hold_main(void *arg)
{
	struct hold_arg *h = arg;
	/* Only this short-lived thread moves to the new namespace. */
	if (unshare(CLONE_NEWNET)) {
		h->err = errno;
		return NULL;
	}
	h->ns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (h->ns_fd < 0) {
		h->err = errno;
		return NULL;
	}
	LIBBPF_OPTS(bpf_link_create_opts, lo, .flags = XDP_FLAGS_SKB_MODE);
	unsigned lo_index = if_nametoindex("lo");
	h->link_fd = bpf_link_create(h->prog_fd, lo_index ? (int)lo_index : 1, BPF_XDP, &lo);
	if (h->link_fd < 0)
		h->err = errno;
	return NULL;
}

int xp_gen_hold(struct live_bpf *skel, int *link_fd, int *ns_fd, char *err, size_t errlen)
{
	struct hold_arg h = { .prog_fd = bpf_program__fd(skel->progs.xdp_live), .link_fd = -1, .ns_fd = -1 };
	pthread_t t;
	int r = pthread_create(&t, NULL, hold_main, &h);
	if (r)
		h.err = r;
	else
		pthread_join(t, NULL);
	if (h.err == EPERM) {
		/* No CAP_SYS_ADMIN (a server's reverse sender keeps none): a user namespace's own network namespace. */
		if (h.ns_fd >= 0)
			close(h.ns_fd);
		h.link_fd = h.ns_fd = -1;
		int e = xp_gen_hold_userns(h.prog_fd, &h.link_fd, &h.ns_fd);
		h.err = e ? (e == EPERM || e == ENOSPC ? EPERM : e) : 0;
	}
	if (h.err) {
		if (h.link_fd >= 0)
			close(h.link_fd);
		if (h.ns_fd >= 0)
			close(h.ns_fd);
		snprintf(err, errlen, "cannot attach the XDP live-frames generator to a private loopback: %s%s%s",
			 strerror(h.err), h.err == EPERM ? " (needs CAP_SYS_ADMIN, or unprivileged user namespaces)" : ": use ",
			 h.err == EPERM ? "" : xp_gen_way_out(skel->rodata->config.syn_mode));
		return -h.err;
	}
	*link_fd = h.link_fd;
	*ns_fd = h.ns_fd;
	return 0;
}

