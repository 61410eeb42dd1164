/*
 * Issue 27's agents that send on the controller's request: the NTP-style
 * clock offset (proto/send_msg.c: xp_clock_offset, xp_clock_best), several
 * senders' figures merged (otg/merge.c: counts summed, latency histograms
 * merged bucket by bucket, percentiles from the merged histogram), and the
 * send op's readers (xp_send_req_from_json on the agent, xp_send_res_from_json
 * on the controller) refusing bad input, each with a one-line message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "meas/latency.h"
#include "otg/ctl_internal.h"
#include "proto/send_msg.h"
#include "bpf/lib/stamp.h"

/* ---- the clock offset ------------------------------------------------------ */

static void test_offset_symmetric(void **state)
{
	(void)state;
	/* The agent's clock runs 5 ms ahead; 100 us each way; it holds the request 20 us. */
	int64_t off = 5000000, t0 = 1000000000;
	struct xp_clock_sample s = { t0, t0 + 100000 + off, t0 + 120000 + off, t0 + 220000 };
	int64_t o, r;
	xp_clock_offset(&s, &o, &r);
	assert_int_equal(o, off);
	assert_int_equal(r, 200000); /* the round trip without the agent's 20 us */
}

static void test_offset_asymmetric_and_negative(void **state)
{
	(void)state;
	/* The agent 3 ms behind; 100 us out, 300 us back: the offset errs by half the asymmetry (-100 us). */
	int64_t off = -3000000, t0 = 7000000000;
	struct xp_clock_sample s = { t0, t0 + 100000 + off, t0 + 100000 + off, t0 + 400000 };
	int64_t o, r;
	xp_clock_offset(&s, &o, &r);
	assert_int_equal(o, off - 100000);
	assert_int_equal(r, 400000);
	/* Clocks decades apart (realtime against 0): no overflow. */
	struct xp_clock_sample far = { INT64_MAX / 2, 10, 20, INT64_MAX / 2 + 40 };
	xp_clock_offset(&far, &o, &r);
	assert_true(o < 0);
	assert_int_equal(r, 30);
}

static void test_offset_best_is_smallest_rtt(void **state)
{
	(void)state;
	int64_t off = 250000, t0 = 1000;
	/* Three exchanges: the middle one queued least (its round trip 50 us) and is exact; the others are skewed. */
	struct xp_clock_sample s[3] = {
		{ t0, t0 + 900000 + off, t0 + 900000 + off, t0 + 1000000 },
		{ t0, t0 + 25000 + off, t0 + 25000 + off, t0 + 50000 },
		{ t0, t0 + 10000 + off, t0 + 10000 + off, t0 + 700000 },
	};
	int64_t o, r;
	assert_int_equal(xp_clock_best(s, 3, &o, &r), 1);
	assert_int_equal(o, off);
	assert_int_equal(r, 50000);
	assert_int_equal(xp_clock_best(s, 0, &o, &r), -1);
}

/* ---- the merge ------------------------------------------------------------- */

static void flow_with(struct xp_flow_result *f, uint64_t tx, unsigned bucket, uint32_t n, uint64_t lat_ticks)
{
	memset(f, 0, sizeof(*f));
	f->tx_frames = tx;
	f->tx_bytes = tx * 128;
	f->rx_known = true;
	f->rx.frames = f->rx.recv = n;
	f->rx.bytes = (uint64_t)n * 128;
	f->rx.lat_n = n;
	f->rx.lat_sum = (uint64_t)n * lat_ticks;
	f->rx.lat_nmin = ~lat_ticks;
	f->rx.lat_max = lat_ticks;
	f->rx.hist[bucket] = n;
}

static void test_merge_buckets(void **state)
{
	(void)state;
	struct xp_flow_result a, b, all;
	/* Sender 1: 900 frames fast (bucket 10), sender 2: 100 frames slow (bucket 60). */
	flow_with(&a, 1000, 10, 900, 40);
	flow_with(&b, 100, 60, 100, 5000);
	memset(&all, 0, sizeof(all));
	otg_flow_merge(&all, &a);
	otg_flow_merge(&all, &b);
	assert_true(all.rx_known);
	assert_int_equal(all.tx_frames, 1100);
	assert_int_equal(all.tx_bytes, 1100 * 128);
	assert_int_equal(all.rx.recv, 1000);
	assert_int_equal(all.rx.lat_n, 1000);
	assert_int_equal(all.rx.hist[10], 900);
	assert_int_equal(all.rx.hist[60], 100);
	assert_int_equal(all.rx.lat_max, 5000);
	assert_int_equal(~all.rx.lat_nmin, 40); /* the smaller of the two minimums */
	/* Percentiles of the merged histogram: the 50th is sender 1's bucket, the 95th sender 2's. */
	struct xp_lat_hist h, ha, hb;
	xp_flow_acct_hist(&all.rx, &h);
	xp_flow_acct_hist(&a.rx, &ha);
	xp_flow_acct_hist(&b.rx, &hb);
	assert_int_equal(h.n, 1000);
	double p50 = xp_lat_quantile_ns(&h, 0.5), p95 = xp_lat_quantile_ns(&h, 0.95);
	assert_true(p50 == xp_lat_bucket_hi_ns(((10 + 1) << XP_FLOW_LAT_SHIFT) - 1));
	assert_true(p95 == xp_lat_quantile_ns(&hb, 0.5));
	assert_true(p50 < p95);
	/* Never the average of each sender's percentile, which would lie between the two. */
	double avg = (xp_lat_quantile_ns(&ha, 0.5) + xp_lat_quantile_ns(&hb, 0.5)) / 2;
	assert_true(p50 < avg);
	/* The merged mean is the frames' mean, weighted: (900*40 + 100*5000) / 1000 ticks. */
	assert_true(fabs(xp_lat_mean_ns(&h) - (900.0 * 40 + 100.0 * 5000) / 1000 * XP_STAMP_TICK_NS) < 1e-6);
}

static void test_merge_unknown_rx(void **state)
{
	(void)state;
	struct xp_flow_result a, none, all;
	flow_with(&a, 10, 5, 10, 20);
	memset(&none, 0, sizeof(none));
	none.tx_frames = 7; /* sent, not counted by a receiver (no stamps) */
	memset(&all, 0, sizeof(all));
	otg_flow_merge(&all, &none);
	assert_false(all.rx_known);
	assert_int_equal(all.tx_frames, 7);
	otg_flow_merge(&all, &a);
	assert_true(all.rx_known);
	assert_int_equal(all.tx_frames, 17);
	assert_int_equal(all.rx.recv, 10);
	assert_int_equal(~all.rx.lat_nmin, 20);
	/* An untimed receiver's figures keep the timed one's minimum (lat_nmin 0 is "none"). */
	struct xp_flow_result untimed = a;
	untimed.rx.lat_n = 0;
	untimed.rx.lat_nmin = 0;
	untimed.rx.hist[5] = 0;
	otg_flow_merge(&all, &untimed);
	assert_int_equal(~all.rx.lat_nmin, 20);
	assert_int_equal(all.rx.recv, 20);
}

/* ---- the send request's reader ---------------------------------------------- */

static struct xp_spec *good_spec(void)
{
	struct xp_spec *s = malloc(sizeof(*s));
	xp_spec_default(s);
	snprintf(s->host, sizeof(s->host), "198.19.1.2");
	s->duration = 2;
	s->traffic[0].udp = true;
	return s;
}

/* The request of good_spec, then edit(o) applied; the reader's verdict. */
static int read_req(void (*edit)(struct json_object *o, struct xp_spec *s), char *err, size_t len, uint64_t *start)
{
	struct xp_spec *s = good_spec(), *out = malloc(sizeof(*out));
	struct json_object *o;
	if (edit)
		edit(NULL, s);
	o = xp_send_req_to_json(s, 123456789);
	if (edit)
		edit(o, s);
	err[0] = '\0';
	int rc = xp_send_req_from_json(o, out, start, err, len);
	if (!rc) {
		assert_string_equal(out->host, s->host);
		assert_true(out->duration == s->duration);
		assert_string_equal(out->auth_key, "");
	}
	json_object_put(o);
	free(s);
	free(out);
	return rc;
}

static void ed_none(struct json_object *o, struct xp_spec *s) { (void)o; (void)s; }
static void ed_unknown(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_add(o, "target", json_object_new_string("203.0.113.1"));
}
static void ed_no_spec(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_del(o, "spec");
}
static void ed_name(struct json_object *o, struct xp_spec *s)
{
	if (!o)
		snprintf(s->host, sizeof(s->host), "victim.example");
}
static void ed_neg_start(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_add(o, "start_ns", json_object_new_int64(-5));
}
static void ed_str_start(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_add(o, "start_ns", json_object_new_string("soon"));
}
static void ed_no_start(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_del(o, "start_ns");
}
static void ed_netns(struct json_object *o, struct xp_spec *s)
{
	if (o)
		json_object_object_add(json_object_object_get(o, "spec"), "device_netns", json_object_new_string("init"));
	else
		(void)s;
}
static void ed_keyfile(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_add(json_object_object_get(o, "spec"), "auth_key", json_object_new_string("/etc/shadow"));
}
static void ed_bad_spec(struct json_object *o, struct xp_spec *s)
{
	(void)s;
	if (o)
		json_object_object_add(json_object_object_get(o, "spec"), "control_port", json_object_new_int(70000));
}
static void ed_many_flows(struct json_object *o, struct xp_spec *s)
{
	if (o)
		return;
	s->ntraffic = XP_SEND_MAX_FLOWS + 1;
	for (unsigned i = 1; i < s->ntraffic; i++)
		s->traffic[i] = s->traffic[0];
}

static void test_send_req_reader(void **state)
{
	(void)state;
	char err[512];
	uint64_t start;
	assert_int_equal(read_req(ed_none, err, sizeof(err), &start), 0);
	assert_int_equal(start, 123456789);
	/* A key file named by the controller is dropped: the agent answers with its own. */
	assert_int_equal(read_req(ed_keyfile, err, sizeof(err), &start), 0);
	static const struct {
		void (*edit)(struct json_object *, struct xp_spec *);
		const char *want;
	} bad[] = {
		{ ed_unknown, "unknown member target" },
		{ ed_no_spec, "spec missing" },
		{ ed_name, "victim.example is not an IPv4 or IPv6 address" },
		{ ed_neg_start, "start_ns: negative" },
		{ ed_str_start, "start_ns: not an integer" },
		{ ed_no_start, "start_ns: missing" },
		{ ed_netns, "spec.device_netns: not taken from a controller" },
		{ ed_bad_spec, "control_port" },
		{ ed_many_flows, "more than 64 flows" },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(read_req(bad[i].edit, err, sizeof(err), &start), -1);
		if (!strstr(err, bad[i].want) || strchr(err, '\n'))
			fail_msg("case %u: wanted \"%s\", got \"%s\"", i, bad[i].want, err);
		assert_non_null(strstr(err, "send request: "));
	}
	/* Not an object at all, or nothing. */
	struct xp_spec *out = malloc(sizeof(*out));
	struct json_object *arr = json_object_new_array();
	assert_int_equal(xp_send_req_from_json(arr, out, &start, err, sizeof(err)), -1);
	assert_int_equal(xp_send_req_from_json(NULL, out, &start, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a JSON object"));
	json_object_put(arr);
	free(out);
}

/* ---- the figures' reader ------------------------------------------------------ */

static void test_send_res_round_trip_and_refusals(void **state)
{
	(void)state;
	struct xp_send_res *r = calloc(1, sizeof(*r)), *back = calloc(1, sizeof(*back));
	char err[256];
	r->started_ns = 1796591683534209500ull;
	r->total.tx_pkts = 1000;
	r->total.rx.pkts = 999;
	r->total.t1 = 1.5;
	r->nflows = 2;
	r->rx_known = true;
	flow_with(&r->flows[0], 600, 12, 600, 50);
	flow_with(&r->flows[1], 400, 40, 399, 900);
	snprintf(r->flows[0].name, sizeof(r->flows[0].name), "f1");
	struct json_object *o = xp_send_res_to_json(r);
	assert_int_equal(xp_send_res_from_json(o, back, err, sizeof(err)), 0);
	assert_int_equal(back->started_ns, r->started_ns);
	assert_int_equal(back->nflows, 2);
	assert_string_equal(back->flows[0].name, "f1");
	assert_int_equal(back->flows[1].tx_frames, 400);
	assert_true(back->flows[1].rx_known);
	assert_int_equal(back->flows[1].rx.recv, 399);
	assert_int_equal(back->flows[1].rx.hist[40], 399);
	assert_int_equal(~back->flows[0].rx.lat_nmin, 50);
	/* Hostile agents: an unknown member, a negative count, a bad rc, flows_rx of another length. */
	json_object_object_add(o, "extra", json_object_new_int(1));
	assert_int_equal(xp_send_res_from_json(o, back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown member extra"));
	json_object_object_del(o, "extra");
	json_object_object_add(json_object_object_get(o, "total"), "tx_frames", json_object_new_int(-1));
	assert_int_equal(xp_send_res_from_json(o, back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "tx_frames: negative"));
	json_object_object_add(json_object_object_get(o, "total"), "tx_frames", json_object_new_int(1));
	json_object_object_add(o, "rc", json_object_new_int(300));
	assert_int_equal(xp_send_res_from_json(o, back, err, sizeof(err)), -1);
	json_object_object_add(o, "rc", json_object_new_int(0));
	json_object_array_del_idx(json_object_object_get(o, "flows_tx"), 1, 1);
	assert_int_equal(xp_send_res_from_json(o, back, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "flows_rx"));
	json_object_put(o);
	free(r);
	free(back);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offset_symmetric),
		cmocka_unit_test(test_offset_asymmetric_and_negative),
		cmocka_unit_test(test_offset_best_is_smallest_rtt),
		cmocka_unit_test(test_merge_buckets),
		cmocka_unit_test(test_merge_unknown_rx),
		cmocka_unit_test(test_send_req_reader),
		cmocka_unit_test(test_send_res_round_trip_and_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
