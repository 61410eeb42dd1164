/*
 * The server's part of the measurement core (bpf/measure.h): a frame test's
 * stamp settings go to its XDP slot before the first frame; a sample that
 * asks for a final interval closes it and gets its bins summed over CPUs;
 * the end has the per-stream figures. Loss is the client's to compute: it
 * knows what it stamped into each interval.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/metrics.h"
#include "server/state.h"
#include "bpf/lib/stamp.h"
#include "frame/flow_key.h"
#include "frame/flow_streams.h"
#include "proto/flow_figs.h"
#include "util/random.h"

/* Frame tests only: a socket test's segments are the kernel's, with no stamp. */
static bool wants_stamps(const struct xp_test *t)
{
	return t->stamp.ival && t->frame_size && t->kind == XP_TEST_STREAM && !t->pass && !t->listen && !t->respond;
}

bool srv_meas_wants_hwts(const struct xp_test *t)
{
	return wants_stamps(t) && t->stamp.hwts;
}

void srv_meas_prepare(struct server *s, const struct xp_test *t)
{
	/* Only an interface's first attach chooses its program: one already
	 * attached keeps what it has, and srv_meas_start says which it is. */
	server_prog_set_hwts(s->rp, srv_meas_wants_hwts(t));
}

void srv_meas_flow_map(unsigned base, unsigned nflows, unsigned threads, __u32 *stream_entry)
{
	unsigned ns = xp_flow_nstreams(nflows, threads);
	for (unsigned st = 0; st < ns && st < XP_STAMP_MAX_STREAMS; st++)
		stream_entry[st] = base + xp_flow_of_stream(st, nflows, threads) + 1;
}

/*
 * The test's flows without stamps (start request's "flows.keys"): their keys
 * into the program's flow_key, each counting into the flow's entry, and the
 * slot's key fields. At most XP_KEY_MAX_PER_FLOW keys a flow; a key given
 * twice, or no room left in the map (XP_FLOW_ENTRIES for all tests), is a
 * refusal. 0 or -1 with err set.
 */
static int flow_keys(struct server *s, struct srv_client *c, char *err, size_t errlen)
{
	const struct xp_test *t = &c->test;
	if (!t->flows.key_mask)
		return 0;
	unsigned per[XP_FLOW_MAX_STREAMS] = { 0 };
	struct xp_flow_key *k = calloc(t->flows.nkeys, sizeof(*k));
	__u32 *e = calloc(t->flows.nkeys, sizeof(*e));
	int r = -ENOMEM;
	if (!k || !e)
		goto out;
	for (unsigned i = 0; i < t->flows.nkeys; i++) {
		const struct xp_test_key *q = &t->flows.keys[i];
		if (q->flow >= c->nflows || ++per[q->flow] > XP_KEY_MAX_PER_FLOW) {
			snprintf(err, errlen, "flow %u has more than %u keys: the server counts a flow without stamps by "
				 "at most %u", q->flow + 1, XP_KEY_MAX_PER_FLOW, XP_KEY_MAX_PER_FLOW);
			free(k);
			free(e);
			return -1;
		}
		k[i] = (struct xp_flow_key){ .vid = { q->vid[0], q->vid[1] }, .dscp = q->dscp, .sport = q->sport,
					     .dport = q->dport, .src = htonl(q->src) };
		e[i] = c->flow_base + q->flow;
	}
	c->keyed = true; /* whatever went in goes out at the end */
	c->key_slot = c->slot;
	r = server_prog_flow_keys(s->rp, c->slot, t->flows.key_mask, k, e, t->flows.nkeys);
out:
	free(k);
	free(e);
	if (r == -EEXIST)
		snprintf(err, errlen, "two flows without stamps have the same key: the server cannot tell them apart");
	else if (r == -E2BIG || r == -ENOSPC)
		snprintf(err, errlen, "the server counts flows without stamps by %u keys at most for tests together, and "
			 "has too few free for %u: send fewer or wait for other tests to end", XP_FLOW_ENTRIES,
			 t->flows.nkeys);
	else if (r)
		snprintf(err, errlen, "the server's XDP program cannot count flows without stamps: %s", strerror(-r));
	return r ? -1 : 0;
}

void srv_meas_flows_free(struct server *s, struct srv_client *c)
{
	if (c->keyed)
		server_prog_flow_keys_clear(s->rp, c->key_slot);
	c->keyed = false;
	if (c->nflows)
		xp_flow_pool_free(&s->flows, c->flow_base, c->nflows);
	c->nflows = 0;
	c->flow_base = 0;
}

int srv_meas_start(struct server *s, struct srv_client *c, char *err, size_t errlen)
{
	const struct xp_test *t = &c->test;
	char bid[40];
	const char *why = NULL;
	c->meas = false;
	c->meas_oneway = false;
	if (!wants_stamps(t)) {
		snprintf(c->meas_why, sizeof(c->meas_why), "%s", t->stamp.ival ? "not a frame test" : "not asked for");
		return 0;
	}
	bool nic = t->stamp.hwts && server_prog_hwts_on(s->rp, c->ifindex, &why);
	if (t->stamp.hwts && t->stamp.hwts_only && !nic) {
		/* --rx-timestamp hw: the user asked for the NIC's time or no run. */
		snprintf(err, errlen, "no NIC receive timestamps on this interface: %s (the client's --rx-timestamp auto "
			 "falls back to the server's kernel clock)", why ? why : "the XDP program there cannot read them");
		return -1;
	}
	xp_boot_id(bid, sizeof(bid));
	/* One kernel, one CLOCK_MONOTONIC: the same boot id is the same host (a
	 * namespace lab included). Otherwise only the user can say the clocks
	 * agree (--clock tai on PTP-synchronised hosts). */
	bool same_host = bid[0] && !strcmp(bid, t->stamp.boot_id);
	/* The test's tag key: a frame not addressed to this host is the
	 * test's only with a tag made with it (bpf/lib/stamp.h). A secret,
	 * so from getrandom without the weak fallback; never 0, 0 (none). */
	do {
		if (xp_random_fill(c->meas_key, sizeof(c->meas_key), false)) {
			snprintf(err, errlen, "cannot get random bytes for the stamps' key: %s", strerror(errno));
			return -1;
		}
	} while (!(c->meas_key[0] | c->meas_key[1]));
	struct xp_slot_meas m = {
		.key = { c->meas_key[0], c->meas_key[1] },
		.t0 = t->stamp.t0,
		.ival = t->stamp.ival,
		.flags = (same_host || t->stamp.oneway ? XP_MEAS_ONEWAY : 0) | (t->stamp.tai ? XP_MEAS_TAI : 0) |
			 (t->stamp.hwts ? XP_MEAS_HWTS : 0) | (t->stamp.hwts && t->stamp.hwts_only ? XP_MEAS_HWTS_ONLY : 0),
	};
	int r;
	if (t->flows.nflows) {
		/* Per-flow counting: the test's own run of entries, its streams mapped to them. */
		__u32 stream_entry[XP_STAMP_MAX_STREAMS] = { 0 };
		int base = xp_flow_pool_alloc(&s->flows, t->flows.nflows);
		if (base < 0) {
			snprintf(err, errlen, "the server counts %u flows at most for tests together and has %u free "
				 "(%u in one run): send fewer flows or wait for other tests to end",
				 XP_FLOW_POOL_SIZE, xp_flow_pool_nfree(&s->flows), xp_flow_pool_largest(&s->flows));
			return -1;
		}
		c->flow_base = (unsigned)base;
		c->nflows = t->flows.nflows;
		srv_meas_flow_map(c->flow_base, t->flows.nflows, t->flows.threads, stream_entry);
		r = server_prog_meas_start_flows(s->rp, c->slot, &m, stream_entry);
		if (r) {
			/* Per-flow figures were asked for: none is not a smaller answer, it is a refusal. */
			srv_meas_flows_free(s, c);
			snprintf(err, errlen, "the server's XDP program cannot count per flow: %s", strerror(-r));
			return -1;
		}
		if (flow_keys(s, c, err, errlen)) {
			srv_meas_flows_free(s, c);
			return -1;
		}
	} else {
		r = server_prog_meas_start(s->rp, c->slot, &m);
	}
	if (r) {
		snprintf(c->meas_why, sizeof(c->meas_why), "the server's XDP program cannot read stamps: %s", strerror(-r));
		return 0;
	}
	c->meas = true;
	c->meas_oneway = m.flags & XP_MEAS_ONEWAY;
	c->meas_why[0] = '\0';
	return 0;
}

void srv_meas_started_json(struct server *s, struct srv_client *c, struct json_object *o)
{
	char bid[40];
	xp_boot_id(bid, sizeof(bid));
	struct json_object *p = json_object_new_object();
	json_object_object_add(p, "read", json_object_new_boolean(c->meas));
	if (c->meas) {
		json_object_object_add(p, "oneway", json_object_new_boolean(c->meas_oneway));
		json_object_object_add(p, "reflect", json_object_new_boolean(c->test.stamp.reflect));
		json_object_object_add(p, "key", xp_stamp_key_to_json(c->meas_key));
		/* Which clock times a frame's arrival (the report says it). */
		const struct xp_test_stamp *st = &c->test.stamp;
		const char *why = NULL, *kernel = st->tai ? "CLOCK_TAI (bpf_ktime_get_tai_ns)"
							   : "CLOCK_MONOTONIC (bpf_ktime_get_ns)";
		char clock[96], note[200];
		bool nic = st->hwts && server_prog_hwts_on(s->rp, c->ifindex, &why);
		note[0] = '\0';
		if (nic && st->hwts_only) {
			snprintf(clock, sizeof(clock), "NIC hardware clock (bpf_xdp_metadata_rx_timestamp)");
			snprintf(note, sizeof(note), "the NIC's time or none: a frame the driver gives no time for is counted, "
				 "not timed");
		} else if (nic) {
			snprintf(clock, sizeof(clock), "NIC hardware clock (bpf_xdp_metadata_rx_timestamp), else %s", kernel);
			snprintf(note, sizeof(note), "per frame: the NIC's time where the driver gives one, else the kernel's "
				 "clock at XDP (the end says how many of each)");
		} else {
			snprintf(clock, sizeof(clock), "%s", kernel);
			if (st->hwts)
				snprintf(note, sizeof(note), "NIC timestamps asked for, not available: %s; falling back to "
					 "the kernel's clock at XDP", why ? why : "?");
		}
		json_object_object_add(p, "rx_clock", json_object_new_string(clock));
		json_object_object_add(p, "rx_timestamp", json_object_new_string(nic && st->hwts_only ? "hw"
										  : nic ? "auto" : "sw"));
		if (note[0])
			json_object_object_add(p, "rx_note", json_object_new_string(note));
	} else
		json_object_object_add(p, "why", json_object_new_string(c->meas_why));
	json_object_object_add(o, "stamps", p);
	json_object_object_add(o, "boot_id", json_object_new_string(bid));
}

/* The streams' jitter as of now (RFC 3550, a running estimate). */
static void jitter_now(struct server *s, struct srv_client *c, struct xp_final_ival *f)
{
	struct xp_stream_figs *st = calloc(XP_STAMP_MAX_STREAMS, sizeof(*st));
	f->streams = 0;
	if (!st)
		return;
	int n = server_prog_read_streams(s->rp, c->slot, st, XP_STAMP_MAX_STREAMS);
	if (n > 0) {
		struct xp_stream_sum sum;
		xp_stream_figs_sum(st, (unsigned)n, &sum);
		f->streams = sum.streams;
		f->jitter_mean_ns = sum.jitter_mean_ns;
		f->jitter_max_ns = sum.jitter_max_ns;
	}
	free(st);
}

int srv_meas_final(struct server *s, struct srv_client *c, struct json_object *m, struct json_object *o, char *err,
		   size_t errlen)
{
	struct json_object *v;
	if (!m || !json_object_object_get_ex(m, "final", &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0 ||
	    json_object_get_uint64(v) > (uint64_t)1 << 40) {
		snprintf(err, errlen, "field 'final' must be an interval number");
		return -1;
	}
	if (!c->meas) {
		snprintf(err, errlen, "this test's stamps are not read (%s): no interval to give", c->meas_why);
		return -1;
	}
	uint64_t i = json_object_get_uint64(v);
	struct xp_final_ival *f = calloc(1, sizeof(*f));
	int r = -ENOMEM;
	if (!f)
		goto out;
	f->index = i;
	/* From now on, frames of intervals up to i arrive late (counted as such). */
	r = server_prog_meas_close(s->rp, c->slot, i + 1);
	if (r)
		goto out;
	xp_lat_init(&f->lat);
	/* 0 with nothing added: nothing of i arrived (all lost). -ENOENT: some
	 * CPU reused its bin for a later interval before we were asked. */
	r = server_prog_read_ibin(s->rp, c->slot, i, &f->lat);
	if (r == -ENOENT) {
		f->unknown = true;
		xp_lat_init(&f->lat);
	} else if (r) {
		goto out;
	}
	xp_metrics_server_lat(c->test_id, &f->lat);
	jitter_now(s, c, f);
	json_object_object_add(o, "interval", xp_final_to_json(f));
	if (c->test.stamp.hwts) {
		/* The running count of what the NIC timed, for the client's report. */
		struct xp_meas_stats ms;
		if (!server_prog_read_meas_stats(s->rp, c->slot, &ms)) {
			struct json_object *x = json_object_new_object();
			json_object_object_add(x, "stamped", json_object_new_int64((int64_t)ms.stamped));
			json_object_object_add(x, "nic", json_object_new_int64((int64_t)ms.hw_timed));
			json_object_object_add(o, "rx_timed", x);
		}
	}
	r = 0;
out:
	if (r)
		snprintf(err, errlen, "cannot read interval %llu of the test: %s", (unsigned long long)i, strerror(-r));
	free(f);
	return r ? -1 : 0;
}

/* The test's flows' cumulative figures, in flow order: 0, or -1 (none read). */
static int read_flows(struct server *s, struct srv_client *c, struct xp_flow_acct *f)
{
	for (unsigned i = 0; i < c->nflows; i++) {
		if (server_prog_read_flow(s->rp, c->flow_base + i, &f[i]))
			return -1;
		/* Read while frames arrive: a CPU's entry may be copied between two
		 * of its counts' increments (frames before recv, recv before lat_n),
		 * so a count is at most the one it is a part of. */
		if (f[i].recv > f[i].frames)
			f[i].recv = f[i].frames;
		if (f[i].lat_n > f[i].recv)
			f[i].lat_n = f[i].recv;
	}
	return 0;
}

int srv_meas_flows_sample(struct server *s, struct srv_client *c, struct json_object *m, struct json_object *o,
			  char *err, size_t errlen)
{
	struct json_object *v;
	if (!m || !json_object_object_get_ex(m, "flows", &v) || json_object_is_type(v, json_type_null))
		return 0;
	if (!json_object_is_type(v, json_type_boolean)) {
		snprintf(err, errlen, "field 'flows' must be true or false");
		return -1;
	}
	if (!json_object_get_boolean(v) || !c->nflows || !c->meas)
		return 0; /* no "flows": the client knows none of this interval (never a zero figure) */
	struct xp_flow_acct *f = calloc(c->nflows, sizeof(*f));
	if (!f || read_flows(s, c, f)) {
		free(f);
		return 0;
	}
	json_object_object_add(o, "flows", xp_flow_acct_to_compact(f, c->nflows));
	free(f);
	return 0;
}

void srv_meas_streams_json(struct server *s, struct srv_client *c, struct json_object *o)
{
	if (!c->meas)
		return;
	struct xp_stream_figs *st = calloc(XP_STAMP_MAX_STREAMS, sizeof(*st));
	if (!st)
		return;
	int n = server_prog_read_streams(s->rp, c->slot, st, XP_STAMP_MAX_STREAMS);
	if (n >= 0)
		json_object_object_add(o, "streams", xp_streams_to_json(st, (unsigned)n));
	free(st);
	if (!c->nflows)
		return;
	/* A test with flows: each flow's cumulative figures, in flow order. */
	struct xp_flow_acct *f = calloc(c->nflows, sizeof(*f));
	if (!f)
		return;
	if (read_flows(s, c, f)) {
		free(f);
		return; /* no "flows": the client says it has none (never a zero figure) */
	}
	json_object_object_add(o, "flows", xp_flow_acct_to_json(f, c->nflows));
	free(f);
}
